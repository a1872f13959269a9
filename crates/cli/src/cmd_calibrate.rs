//! `tengen calibrate` (not yet built: owned by the helper working on it).

use std::process::ExitCode;

/// Arguments of `tengen calibrate`.
#[derive(clap::Args)]
pub struct CalibrateArgs {}

/// Runs `tengen calibrate`.
pub fn run(_args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`tengen calibrate` is not built yet")
}
