//! Camera calibration files (TOML): which camera, the image size, where the board's grid is
//! (corners and/or homography), the lens distortion, and colour references for the point
//! classifier. Schema documented in `calibration/README.md`. Text in, text out; no file I/O.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::locate::{from_corners, LocateOptions, Located};
use crate::{GridGeometry, LensDistortion};

/// The schema version this code writes and reads.
pub const CALIBRATION_SCHEMA: u32 = 1;

/// One camera's calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Schema version; must equal [`CALIBRATION_SCHEMA`].
    pub schema: u32,
    /// Name of the camera (or table) this calibration belongs to.
    pub camera_id: String,
    /// Width and height in pixels of the frames it was made on (as seen, EXIF applied).
    pub image_size: [u32; 2],
    /// The outermost intersections TL, TR, BR, BL as seen, in image pixels. When present they
    /// override the board search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corners: Option<[[f64; 2]; 4]>,
    /// Row-major homography from board (col, row, 1) to undistorted pixels. Informative when
    /// `corners` are present (corners win); used alone otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homography: Option<[[f64; 3]; 3]>,
    /// Radial lens distortion (division model, see [`LensDistortion`]).
    pub lens: LensDistortion,
    /// Colour references for the point classifier, filled by whoever measures them.
    #[serde(default, skip_serializing_if = "ColourReferences::is_empty")]
    pub colours: ColourReferences,
    /// How the geometry was obtained and how well it fitted (informative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitRecord>,
}

/// Mean colours (8-bit sRGB) of the classes on this camera, for the classifier. Every field is
/// optional: a missing one means "estimate it from the frame".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColourReferences {
    /// Empty board (wood) near intersections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<[f32; 3]>,
    /// Black stones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black: Option<[f32; 3]>,
    /// White stones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white: Option<[f32; 3]>,
}

impl ColourReferences {
    /// True when no colour is given.
    pub fn is_empty(&self) -> bool {
        self.board.is_none() && self.black.is_none() && self.white.is_none()
    }
}

/// A record of how a calibration was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitRecord {
    /// `searched` (found by `tengen calibrate`) or `given_corners`.
    pub source: String,
    /// Intersections that agreed with the grid.
    pub inlier_intersections: usize,
    /// RMS residual in cells.
    pub rms_error_cells: f64,
}

/// Why a calibration file cannot be used.
#[derive(Debug, Error)]
pub enum CalibrationError {
    /// The text is not valid TOML for this schema (the message says where).
    #[error("calibration is not valid: {0}")]
    Parse(String),
    /// The file was written for a schema this code does not read.
    #[error("calibration schema {found} is not supported (expected {CALIBRATION_SCHEMA})")]
    Schema {
        /// Schema number in the file.
        found: u32,
    },
    /// Values are out of range or inconsistent.
    #[error("calibration is inconsistent: {0}")]
    Invalid(String),
    /// Serialising failed (a value TOML cannot represent).
    #[error("calibration cannot be written: {0}")]
    Write(String),
}

impl Calibration {
    /// A calibration from a located board.
    pub fn from_located(camera_id: &str, image_size: [u32; 2], located: &Located) -> Self {
        let source = match located.quality.source {
            crate::locate::GeometrySource::Searched => "searched",
            crate::locate::GeometrySource::GivenCorners => "given_corners",
        };
        Self {
            schema: CALIBRATION_SCHEMA,
            camera_id: camera_id.to_string(),
            image_size,
            corners: Some(located.geometry.corners()),
            homography: Some(located.geometry.homography),
            lens: located.geometry.lens,
            colours: ColourReferences::default(),
            fit: Some(FitRecord {
                source: source.to_string(),
                inlier_intersections: located.quality.inlier_intersections,
                rms_error_cells: located.quality.rms_error_cells,
            }),
        }
    }

    /// Parses and validates TOML text.
    pub fn from_toml(text: &str) -> Result<Self, CalibrationError> {
        // Check the schema number first so an old or future file gets the right message.
        if let Ok(table) = text.parse::<toml::Table>() {
            if let Some(found) = table.get("schema").and_then(toml::Value::as_integer) {
                if found != i64::from(CALIBRATION_SCHEMA) {
                    return Err(CalibrationError::Schema { found: u32::try_from(found).unwrap_or(u32::MAX) });
                }
            }
        }
        let calibration: Calibration = toml::from_str(text).map_err(|e| CalibrationError::Parse(e.to_string()))?;
        calibration.validate()?;
        Ok(calibration)
    }

    /// Writes TOML text.
    pub fn to_toml(&self) -> Result<String, CalibrationError> {
        // Compact arrays (one corner per line would be 30 lines of brackets); corners rounded to
        // a hundredth of a pixel, which is far below their accuracy.
        let mut rounded = self.clone();
        if let Some(corners) = rounded.corners.as_mut() {
            for v in corners.iter_mut().flatten() {
                *v = (*v * 100.0).round() / 100.0;
            }
        }
        toml::to_string(&rounded).map_err(|e| CalibrationError::Write(e.to_string()))
    }

    /// Checks values: finite numbers, a positive image size, a usable board.
    pub fn validate(&self) -> Result<(), CalibrationError> {
        let invalid = |m: &str| Err(CalibrationError::Invalid(m.to_string()));
        if self.schema != CALIBRATION_SCHEMA {
            return Err(CalibrationError::Schema { found: self.schema });
        }
        if self.image_size[0] == 0 || self.image_size[1] == 0 {
            return invalid("image_size must be positive");
        }
        let lens = &self.lens;
        if !(lens.k1.is_finite()
            && lens.scale.is_finite()
            && lens.scale > 0.0
            && lens.centre.iter().all(|v| v.is_finite()))
        {
            return invalid("lens values must be finite with a positive scale");
        }
        if lens.k1.abs() > 1.0 {
            return invalid("lens k1 must be within ±1");
        }
        if self.corners.is_none() && self.homography.is_none() {
            return invalid("give corners or a homography");
        }
        if let Some(h) = &self.homography {
            if h.iter().flatten().any(|v| !v.is_finite()) {
                return invalid("homography values must be finite");
            }
        }
        self.geometry().map(|_| ())
    }

    /// The grid geometry for frames of the calibrated size: from the corners when present,
    /// otherwise from the homography.
    pub fn geometry(&self) -> Result<GridGeometry, CalibrationError> {
        if let Some(corners) = self.corners {
            return from_corners(corners, self.lens)
                .map(|l| l.geometry)
                .map_err(|e| CalibrationError::Invalid(e.to_string()));
        }
        match self.homography {
            Some(homography) => {
                let geometry = GridGeometry { homography, lens: self.lens };
                if geometry.matrix().determinant().abs() < 1e-12 {
                    return Err(CalibrationError::Invalid("homography is singular".into()));
                }
                Ok(geometry)
            }
            None => Err(CalibrationError::Invalid("give corners or a homography".into())),
        }
    }

    /// The geometry for frames of `size` from the same camera, scaling pixel coordinates when
    /// the frame size differs from the calibrated one (same field of view, other resolution).
    pub fn geometry_for(&self, size: [u32; 2]) -> Result<GridGeometry, CalibrationError> {
        let geometry = self.geometry()?;
        if size == self.image_size {
            return Ok(geometry);
        }
        let sx = f64::from(size[0]) / f64::from(self.image_size[0]);
        let sy = f64::from(size[1]) / f64::from(self.image_size[1]);
        if (sx / sy - 1.0).abs() > 0.02 {
            return Err(CalibrationError::Invalid(format!(
                "frame {}×{} has another aspect ratio than the calibrated {}×{}",
                size[0], size[1], self.image_size[0], self.image_size[1]
            )));
        }
        let h = nalgebra::Matrix3::new(sx, 0.0, 0.0, 0.0, sy, 0.0, 0.0, 0.0, 1.0) * geometry.matrix();
        let lens = LensDistortion {
            k1: geometry.lens.k1,
            centre: [geometry.lens.centre[0] * sx, geometry.lens.centre[1] * sy],
            scale: geometry.lens.scale * (sx * sy).sqrt(),
        };
        Ok(GridGeometry { homography: crate::locate::refine::to_rows(&h), lens })
    }

    /// Options for [`crate::locate`] that use this calibration: its corners (scaled to the
    /// frame) override the search, and its lens is used instead of estimating one.
    pub fn locate_options(&self, size: [u32; 2]) -> Result<LocateOptions, CalibrationError> {
        let geometry = self.geometry_for(size)?;
        Ok(LocateOptions {
            corners: self.corners.map(|_| geometry.corners()),
            lens: Some(geometry.lens),
            ..LocateOptions::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Calibration {
        Calibration {
            schema: CALIBRATION_SCHEMA,
            camera_id: "table-3".into(),
            image_size: [1920, 1080],
            corners: Some([[400.0, 100.0], [1500.0, 120.0], [1560.0, 1000.0], [350.0, 980.0]]),
            homography: None,
            lens: LensDistortion { k1: -0.05, ..LensDistortion::none(1920, 1080) },
            colours: ColourReferences { black: Some([30.0, 30.0, 35.0]), ..ColourReferences::default() },
            fit: None,
        }
    }

    #[test]
    fn round_trips_through_toml() {
        // Corners are written to 0.01 px; these already are.
        let c = example();
        let text = c.to_toml().unwrap_or_default();
        let back = Calibration::from_toml(&text);
        assert_eq!(back.ok(), Some(c), "{text}");
    }

    #[test]
    fn the_example_file_in_the_repository_parses() {
        let text = include_str!("../../../calibration/example-phone.toml");
        let parsed = Calibration::from_toml(text);
        assert!(parsed.is_ok(), "{parsed:?}");
    }

    #[test]
    fn corners_come_back_from_the_geometry() {
        let c = example();
        let Ok(g) = c.geometry() else { panic!("no geometry") };
        let Some(expected) = c.corners else { panic!("no corners") };
        for (a, b) in g.corners().iter().zip(&expected) {
            assert!((a[0] - b[0]).abs() < 1e-6 && (a[1] - b[1]).abs() < 1e-6, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn scales_to_another_resolution() {
        let c = example();
        let Ok(g) = c.geometry_for([960, 540]) else { panic!("no geometry") };
        let Some(expected) = c.corners else { panic!("no corners") };
        for (a, b) in g.corners().iter().zip(&expected) {
            assert!((a[0] - b[0] / 2.0).abs() < 1e-6 && (a[1] - b[1] / 2.0).abs() < 1e-6, "{a:?} vs {b:?}");
        }
        assert!(c.geometry_for([1000, 1000]).is_err());
    }

    #[test]
    fn rejects_bad_files() {
        assert!(matches!(Calibration::from_toml("not toml ["), Err(CalibrationError::Parse(_))));
        let text = example().to_toml().unwrap_or_default().replace("schema = 1", "schema = 7");
        assert!(matches!(Calibration::from_toml(&text), Err(CalibrationError::Schema { found: 7 })));
        let mut crossed = example();
        crossed.corners = Some([[0.0, 0.0], [100.0, 100.0], [100.0, 0.0], [0.0, 100.0]]);
        assert!(crossed.validate().is_err());
        let mut none = example();
        none.corners = None;
        assert!(none.validate().is_err());
        let unknown = format!("{}\nsurprise = 3\n", example().to_toml().unwrap_or_default());
        assert!(Calibration::from_toml(&unknown).is_err());
    }
}
