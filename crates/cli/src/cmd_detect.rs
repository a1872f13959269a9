//! `tengen detect`: read one image and print the board it shows — 19 lines of `.`/`X`/`O`/`?`,
//! row 0 nearest the top of the image as seen (EXIF orientation applied), or JSON with corners,
//! per-point confidence and the occlusion flag.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;
use tengen_vision::image_io::decode_rgb;
use tengen_vision::{locate, GridGeometry, LensDistortion, LocateOptions, ReaderConfig};

/// Arguments of `tengen detect`.
#[derive(clap::Args)]
pub struct DetectArgs {
    /// The image (JPEG or PNG).
    pub image: PathBuf,
    /// Calibration file (JSON) with the board's corners or geometry, instead of searching.
    #[arg(long)]
    pub calibration: Option<PathBuf>,
    /// Print JSON: grid, corners, confidence, occluded.
    #[arg(long)]
    pub json: bool,
}

/// What `--json` prints.
#[derive(Serialize)]
struct DetectJson {
    grid: Vec<String>,
    corners: [[f64; 2]; 4],
    confidence: Vec<Vec<f32>>,
    occluded: bool,
}

/// Where the board is, from a calibration file: either a full geometry or corners (+ lens).
pub enum CalibrationHint {
    /// A complete grid geometry.
    Geometry(GridGeometry),
    /// Corners TL, TR, BR, BL in image pixels and an optional lens.
    Corners([[f64; 2]; 4], Option<LensDistortion>),
}

/// Reads a calibration file leniently: a JSON object with `geometry` ({homography, lens}), or
/// `corners` / `corners_px` ([[x, y]; 4]) and optional `lens`, at the top level or under
/// `calibration`.
pub fn read_calibration(path: &Path) -> anyhow::Result<CalibrationHint> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading calibration {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("calibration {} is not valid JSON", path.display()))?;
    let root = value.get("calibration").unwrap_or(&value);
    if let Some(g) = root.get("geometry") {
        let geometry: GridGeometry = serde_json::from_value(g.clone())
            .with_context(|| format!("calibration {}: `geometry` is malformed", path.display()))?;
        return Ok(CalibrationHint::Geometry(geometry));
    }
    if root.get("homography").is_some() {
        if let Ok(geometry) = serde_json::from_value::<GridGeometry>(root.clone()) {
            return Ok(CalibrationHint::Geometry(geometry));
        }
    }
    let corners = root
        .get("corners")
        .or_else(|| root.get("corners_px"))
        .with_context(|| format!("calibration {} has neither `geometry` nor `corners`", path.display()))?;
    let corners: [[f64; 2]; 4] = serde_json::from_value(corners.clone())
        .with_context(|| format!("calibration {}: `corners` must be four [x, y] pairs", path.display()))?;
    let lens = match root.get("lens") {
        Some(l) => Some(
            serde_json::from_value::<LensDistortion>(l.clone())
                .with_context(|| format!("calibration {}: `lens` is malformed", path.display()))?,
        ),
        None => None,
    };
    Ok(CalibrationHint::Corners(corners, lens))
}

/// Runs `tengen detect`.
pub fn run(args: DetectArgs) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.image).with_context(|| format!("reading {}", args.image.display()))?;
    let frame = decode_rgb(&bytes).with_context(|| format!("decoding {}", args.image.display()))?;
    let image = frame.rgb;
    let geometry = match args.calibration.as_deref().map(read_calibration).transpose()? {
        Some(CalibrationHint::Geometry(g)) => g,
        hint => {
            let options = match hint {
                Some(CalibrationHint::Corners(corners, lens)) => LocateOptions { corners: Some(corners), lens },
                _ => LocateOptions::default(),
            };
            match locate(&image, &options) {
                Ok(located) => located.geometry,
                Err(err) => {
                    eprintln!("tengen detect: {}: {err}", args.image.display());
                    return Ok(ExitCode::from(1));
                }
            }
        }
    };
    let reading = tengen_vision::read_board(&image, &geometry, &ReaderConfig::default());
    if args.json {
        let out = DetectJson {
            grid: reading.grid_lines(),
            corners: geometry.corners(),
            confidence: reading.points.iter().map(|row| row.iter().map(|p| round3(p.confidence)).collect()).collect(),
            occluded: reading.occluded,
        };
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!("{}", reading.grid_text());
    }
    Ok(ExitCode::SUCCESS)
}

fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}
