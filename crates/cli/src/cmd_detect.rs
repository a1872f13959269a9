//! `tengen detect` (not yet built: owned by the helper working on it).

use std::process::ExitCode;

/// Arguments of `tengen detect`.
#[derive(clap::Args)]
pub struct DetectArgs {}

/// Runs `tengen detect`.
pub fn run(_args: DetectArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tengen detect` is not built yet")
}
