//! `tengen sgf` (not yet built: owned by the helper working on it).

use std::process::ExitCode;

/// Arguments of `tengen sgf`.
#[derive(clap::Args)]
pub struct SgfArgs {}

/// Runs `tengen sgf`.
pub fn run(_args: SgfArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tengen sgf` is not built yet")
}
