//! Reading a calibration file (TOML, schema in calibration/README.md) for any command.

use std::path::Path;

use anyhow::Context;
use tengen_vision::Calibration;

/// Reads and checks a calibration file written by `tengen calibrate` (or by hand).
pub fn load(path: &Path) -> anyhow::Result<Calibration> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let calibration =
        Calibration::from_toml(&text).with_context(|| format!("{}: not a calibration", path.display()))?;
    calibration.validate().with_context(|| format!("{}: unusable calibration", path.display()))?;
    Ok(calibration)
}
