//! `tengen calibrate IMAGE -o calibration/NAME.toml [--corners x1,y1,...]`: locate the board in
//! one frame (or take the corners a person gives) and write a calibration file (schema in
//! `calibration/README.md`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use tengen_vision::decode_rgb;
use tengen_vision::locate::{refine_or_find_corners, Refinement};
use tengen_vision::Calibration;
use tengen_vision::{locate, LensDistortion, LocateOptions};

/// Arguments of `tengen calibrate`.
#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// A frame from the camera (JPEG or PNG), with the board in view.
    pub image: PathBuf,
    /// Where to write the calibration (TOML).
    #[arg(short, long)]
    pub output: PathBuf,
    /// The outermost intersections as `x1,y1,x2,y2,x3,y3,x4,y4` in pixels, in the order TL, TR,
    /// BR, BL as seen; they replace the search. They may be up to half a cell off: the grid
    /// they span is refined to the board's lines, and how far each corner moved is printed.
    #[arg(long)]
    pub corners: Option<String>,
    /// Known lens distortion coefficient k1 (division model); estimated when absent.
    #[arg(long, allow_hyphen_values = true)]
    pub k1: Option<f64>,
    /// Camera name stored in the file (default: the output file's stem).
    #[arg(long)]
    pub camera_id: Option<String>,
    /// Overwrite an existing output file.
    #[arg(long)]
    pub force: bool,
}

fn parse_corners(text: &str) -> anyhow::Result<[[f64; 2]; 4]> {
    let values: Vec<f64> = text
        .split(',')
        .map(|v| v.trim().parse::<f64>().with_context(|| format!("corner value {v:?} is not a number")))
        .collect::<anyhow::Result<_>>()?;
    if values.len() != 8 {
        bail!("--corners needs 8 numbers (x,y for TL, TR, BR, BL), got {}", values.len());
    }
    Ok([[values[0], values[1]], [values[2], values[3]], [values[4], values[5]], [values[6], values[7]]])
}

/// Runs `tengen calibrate`.
pub fn run(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    if args.output.exists() && !args.force {
        bail!("{} exists; pass --force to overwrite it", args.output.display());
    }
    let corners = args.corners.as_deref().map(parse_corners).transpose()?;
    let bytes = std::fs::read(&args.image).with_context(|| format!("reading {}", args.image.display()))?;
    let frame = decode_rgb(&bytes).with_context(|| format!("decoding {}", args.image.display()))?;
    let (width, height) = frame.rgb.dimensions();
    let lens = args.k1.map(|k1| LensDistortion { k1, ..LensDistortion::none(width, height) });
    let located = match corners {
        Some(corners) => {
            let given = refine_or_find_corners(&frame.rgb, corners, lens).context("the given corners")?;
            match &given.refinement {
                Refinement::Refined { moved_cells: m } => println!(
                    "given corners refined to the lines: moved TL {:.2}, TR {:.2}, BR {:.2}, BL {:.2} cell",
                    m[0], m[1], m[2], m[3]
                ),
                Refinement::Found { moved_cells: m } => println!(
                    "given corners not settled by the lines near them; the board found by the search is the clicked one: moved TL {:.2}, TR {:.2}, BR {:.2}, BL {:.2} cell",
                    m[0], m[1], m[2], m[3]
                ),
                Refinement::Kept { reason } => println!("given corners kept as clicked (not refined: {reason})"),
            }
            given.located
        }
        None => locate(&frame.rgb, &LocateOptions { corners: None, lens, ..LocateOptions::default() })
            .with_context(|| format!("locating the board in {}", args.image.display()))?,
    };
    let camera_id = args
        .camera_id
        .clone()
        .or_else(|| args.output.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "camera".to_string());
    let calibration = Calibration::from_located(&camera_id, [width, height], &located);
    calibration.validate().context("the located board does not make a valid calibration")?;
    let text = calibration.to_toml()?;
    if let Some(parent) = args.output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(&args.output, text).with_context(|| format!("writing {}", args.output.display()))?;
    let q = &located.quality;
    println!(
        "{}: board located ({:?}), {} intersections agree, RMS {:.3} cell, cell {:.1} px, lens k1 {:+.3}",
        args.image.display(),
        q.source,
        q.inlier_intersections,
        q.rms_error_cells,
        q.cell_px,
        located.geometry.lens.k1
    );
    let c = located.geometry.corners();
    println!(
        "corners TL {:.1},{:.1}  TR {:.1},{:.1}  BR {:.1},{:.1}  BL {:.1},{:.1}",
        c[0][0], c[0][1], c[1][0], c[1][1], c[2][0], c[2][1], c[3][0], c[3][1]
    );
    println!("wrote {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_eight_numbers() {
        let c = parse_corners("1,2, 3,4,5,6,7,8.5").ok();
        assert_eq!(c, Some([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.5]]));
        assert!(parse_corners("1,2,3").is_err());
        assert!(parse_corners("1,2,3,4,5,6,7,x").is_err());
    }
}
