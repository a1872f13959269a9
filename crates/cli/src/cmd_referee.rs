//! `tengen referee` (not yet built: owned by the helper working on it).

use std::process::ExitCode;

/// Arguments of `tengen referee`.
#[derive(clap::Args)]
pub struct RefereeArgs {}

/// Runs `tengen referee`.
pub fn run(_args: RefereeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tengen referee` is not built yet")
}
