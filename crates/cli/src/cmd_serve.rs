//! `tengen serve` (not yet built: owned by the helper working on it).

use std::process::ExitCode;

/// Arguments of `tengen serve`.
#[derive(clap::Args)]
pub struct ServeArgs {}

/// Runs `tengen serve`.
pub fn run(_args: ServeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tengen serve` is not built yet")
}
