//! `tengen score` (not yet built: owned by the helper working on it).

use std::process::ExitCode;

/// Arguments of `tengen score`.
#[derive(clap::Args)]
pub struct ScoreArgs {}

/// Runs `tengen score`.
pub fn run(_args: ScoreArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tengen score` is not built yet")
}
