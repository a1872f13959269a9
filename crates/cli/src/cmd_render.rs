//! `tengen render` (not yet built: owned by the helper working on it).

use std::process::ExitCode;

/// Arguments of `tengen render`.
#[derive(clap::Args)]
pub struct RenderArgs {}

/// Runs `tengen render`.
pub fn run(_args: RenderArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tengen render` is not built yet")
}
