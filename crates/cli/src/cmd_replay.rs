//! `tengen replay` (not yet built: owned by the helper working on it).

use std::process::ExitCode;

/// Arguments of `tengen replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {}

/// Runs `tengen replay`.
pub fn run(_args: ReplayArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tengen replay` is not built yet")
}
