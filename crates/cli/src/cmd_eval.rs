//! `tengen eval` (not yet built: owned by the helper working on it).

use std::process::ExitCode;

/// Arguments of `tengen eval`.
#[derive(clap::Args)]
pub struct EvalArgs {}

/// Runs `tengen eval`.
pub fn run(_args: EvalArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tengen eval` is not built yet")
}
