//! Development aid: the whole search on labelled photos or saved stress frames, on the search's
//! own grey, on the standard luma, and as `locate` runs it (the search's grey, then the
//! outline and stones' looks on the standard luma where it fails), each grid scored against
//! the truth (worst intersection, cells) with its evidence, work and time.
//!
//! `grey_probe DIR [--only TEXT]`

use std::error::Error;
use std::path::{Path, PathBuf};

use image::{GrayImage, RgbImage};
use tengen_rules::BOARD_LINES;
use tengen_vision::evaluate::worst_intersection_error_cells;
use tengen_vision::locate::{locate_gray, LocateError, LocateOptions, Located};
use tengen_vision::{decode_rgb, locate};

#[path = "common/label_files.rs"]
mod label_files;
use label_files::{grid_points, pair, sidecar, walk_images};

/// The 361 true intersections of a labelled photo or a saved stress frame.
fn truth_of(path: &Path) -> Option<Vec<[f64; 2]>> {
    if let Ok(text) = std::fs::read_to_string(sidecar(path, ".grid.json")) {
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        return grid_points(&v);
    }
    let text = std::fs::read_to_string(path.with_extension("truth.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(v.get("intersections")?.as_array()?.iter().filter_map(pair).collect())
}

/// One way of running the search on a frame.
type Search<'a> = Box<dyn Fn() -> Result<Located, LocateError> + 'a>;

/// The search's own grey, (2R + 2G + B) / 5, as `locate` makes it.
fn search_grey(rgb: &RgbImage) -> GrayImage {
    GrayImage::from_fn(rgb.width(), rgb.height(), |x, y| {
        let [r, g, b] = rgb.get_pixel(x, y).0.map(u32::from);
        image::Luma([((2 * r + 2 * g + b) / 5) as u8])
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(args.first().ok_or("usage: grey_probe DIR [--only TEXT]")?);
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).cloned();
    let mut files = Vec::new();
    walk_images(&dir, &["jpg", "jpeg", "png"], &mut files);
    files.sort();
    for path in files {
        let rel = path.strip_prefix(&dir).unwrap_or(&path).to_string_lossy().to_string();
        if only.as_ref().is_some_and(|o| !rel.contains(o.as_str())) {
            continue;
        }
        let Some(points) = truth_of(&path) else { continue };
        if points.len() != BOARD_LINES * BOARD_LINES {
            continue;
        }
        let frame = decode_rgb(&std::fs::read(&path)?)?;
        let options = LocateOptions::default();
        let runs: [(&str, Search); 3] = [
            ("search grey", Box::new(|| locate_gray(&search_grey(&frame.rgb), &options))),
            ("luma", Box::new(|| locate_gray(&tengen_vision::grey(&frame.rgb), &options))),
            ("locate", Box::new(|| locate(&frame.rgb, &options))),
        ];
        let mut line = rel;
        for (name, run) in runs {
            let started = std::time::Instant::now();
            let outcome = run();
            let ms = started.elapsed().as_millis();
            let said = match outcome {
                Ok(l) => format!(
                    "{:.2} cell ({} agree, RMS {:.3}, {:.1} M steps, {ms} ms)",
                    worst_intersection_error_cells(&l.geometry, &points),
                    l.quality.inlier_intersections,
                    l.quality.rms_error_cells,
                    l.quality.work_steps as f64 / 1e6
                ),
                Err(e) => format!("not found ({e})"),
            };
            line.push_str(&format!(" | {name}: {said}"));
        }
        println!("{line}");
    }
    Ok(())
}
