//! `tengen detect`: read one image and print the board it shows — 19 lines of `.`/`X`/`O`/`?`,
//! row 0 nearest the top of the image as seen (EXIF orientation applied), or JSON with corners,
//! per-point confidence and the occlusion flag.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;
use tengen_vision::decode_rgb;
use tengen_vision::{locate, FixedGrid, LocateOptions, ReaderConfig};

/// Arguments of `tengen detect`.
#[derive(clap::Args)]
pub struct DetectArgs {
    /// The image (JPEG or PNG).
    pub image: PathBuf,
    /// Calibration file (TOML, written by `tengen calibrate`): where the board is, instead of
    /// searching.
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

/// Runs `tengen detect`.
pub fn run(args: DetectArgs) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.image).with_context(|| format!("reading {}", args.image.display()))?;
    let frame = decode_rgb(&bytes).with_context(|| format!("decoding {}", args.image.display()))?;
    let image = frame.rgb;
    let geometry = match args.calibration.as_deref().map(crate::calibration_file::load).transpose()? {
        // A calibration is a starting point: its grid is refined to this image's lines.
        Some(calibration) => FixedGrid::Calibration(Box::new(calibration))
            .refined_for(&image)
            .with_context(|| format!("{}: the calibration does not fit this image", args.image.display()))?,
        None => match locate(&image, &LocateOptions::default()) {
            Ok(located) => located.geometry,
            Err(err) => {
                eprintln!("tengen detect: {}: {err}", args.image.display());
                return Ok(ExitCode::from(1));
            }
        },
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
