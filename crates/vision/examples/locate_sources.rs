//! Board location scored per photo source, against every geometric truth the datasets carry.
//!
//! `locate_sources DIR [--only TEXT] [--clicks | --offset F] [--overlays OUTDIR] [--verbose]`
//!
//! DIR is `../shared/datasets/photos`. Sources: imago t1, t2, t3, gomrade-singles,
//! goban-watcher-dev games 1, 2, 3, roboflow-corners. For every labelled image it locates the
//! board from scratch and reports, per source: found, on the right rows/columns, the worst
//! error and the time. "Right" is judged against:
//! - goban-watcher-dev `.grid.json` `points_px` (all 361 intersections, from human clicks about
//!   0.2 cell off): worst intersection error ≤ 0.5 cell;
//! - roboflow-corners `.corners.json` (4 outer intersections, boxes about 0.1 cell inside the
//!   crossings): worst corner error ≤ 0.5 cell;
//! - frames saved by `tengen eval rendered --stress --save-frames DIR` (give DIR instead), each
//!   with its exact `.truth.json`: worst intersection error ≤ 0.5 cell, one source per bucket;
//! - imago and gomrade carry no geometry: found only (the reading, `tengen eval photos`, shows
//!   whether the grid is right there).
//!
//! With `--clicks`, the goban-watcher-dev `corners_px` (real clicks) are given as corners instead
//! of searching, to measure how given corners are refined ([`refine_corners`]). With
//! `--offset F`, the true outer intersections of goban-watcher-dev and roboflow, each moved F
//! cells in a direction fixed by the photo's name and the corner, are given instead. Given
//! corners add a column: the worst error of the grid they span before refinement.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

use image::{Rgb, RgbImage};
use tengen_rules::BOARD_LINES;
use tengen_vision::decode_rgb;
use tengen_vision::evaluate::{corner_errors_cells, displaced_corners, worst_intersection_error_cells};
use tengen_vision::locate::{refine_corners, Refinement};
use tengen_vision::{locate, GridGeometry, LocateOptions};

#[path = "common/label_files.rs"]
mod label_files;
use label_files::{grid_points, pair, sidecar, walk_images};

/// What a photo's labels say about the grid's geometry.
enum Truth {
    /// All 361 intersections, row-major from the seen top-left.
    Points(Vec<[f64; 2]>, [[f64; 2]; 4]),
    /// The four outer intersections TL, TR, BR, BL.
    Corners([[f64; 2]; 4]),
    /// Only a reading (`.grid.txt`): no geometry.
    None,
}

#[derive(Default)]
struct SourceScore {
    images: usize,
    found: usize,
    right: usize,
    graded: usize,
    worst: Vec<f64>,
    /// Given corners: the worst error of the grid they span, before refinement.
    before: Vec<f64>,
    ms: Vec<f64>,
    /// Per image: the report line and whether it is a failure (not found, or wrong grid).
    lines: Vec<(String, bool)>,
}

fn source_of(rel: &str) -> Option<String> {
    let parts: Vec<&str> = rel.split('/').collect();
    match parts.first().copied()? {
        "imago-tests" => Some(format!("imago {}", parts.get(1)?)),
        "gomrade-singles" => Some("gomrade".into()),
        "goban-watcher-dev" => Some(format!("gw-dev {}", parts.get(1)?)),
        "roboflow-corners" => Some("roboflow".into()),
        // Frames saved by `tengen eval rendered --stress --save-frames`: `<bucket>-<n>.jpg`.
        name if parts.len() == 1 && name.ends_with(".jpg") => Some(format!("rendered {}", name.rsplit_once('-')?.0)),
        _ => None,
    }
}

/// The `corners_px` of a label file: four pixel pairs.
fn corners_px(v: &serde_json::Value) -> Option<[[f64; 2]; 4]> {
    let corners: Vec<[f64; 2]> = v.get("corners_px")?.as_array()?.iter().filter_map(pair).collect();
    corners.try_into().ok()
}

fn truth_of(path: &Path) -> Option<Truth> {
    if let Ok(text) = std::fs::read_to_string(sidecar(path, ".grid.json")) {
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        let points = grid_points(&v)?;
        return Some(Truth::Points(points, corners_px(&v)?));
    }
    if let Ok(text) = std::fs::read_to_string(sidecar(path, ".corners.json")) {
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        return Some(Truth::Corners(corners_px(&v)?));
    }
    if let Ok(text) = std::fs::read_to_string(path.with_extension("truth.json")) {
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        let points: Vec<[f64; 2]> = v.get("intersections")?.as_array()?.iter().filter_map(pair).collect();
        let corners: Vec<[f64; 2]> = v.get("corners")?.as_array()?.iter().filter_map(pair).collect();
        return Some(Truth::Points(points, corners.try_into().ok()?));
    }
    sidecar(path, ".grid.txt").exists().then_some(Truth::None)
}

/// Worst corner error in cells under the best of the 4 cyclic orders.
fn worst_corner(found: &[[f64; 2]; 4], truth: &[[f64; 2]; 4]) -> f64 {
    (0..4)
        .map(|rot| {
            let turned = [found[rot % 4], found[(rot + 1) % 4], found[(rot + 2) % 4], found[(rot + 3) % 4]];
            corner_errors_cells(&turned, truth).into_iter().fold(0.0, f64::max)
        })
        .fold(f64::INFINITY, f64::min)
}

fn draw_grid(img: &mut RgbImage, geom: &GridGeometry, colour: Rgb<u8>) {
    let (w, h) = img.dimensions();
    let last = (BOARD_LINES - 1) as f64;
    for k in 0..BOARD_LINES {
        let k = k as f64;
        let mut t = 0.0;
        while t <= last {
            for [x, y] in [geom.project(k, t), geom.project(t, k)] {
                if x >= 0.0 && y >= 0.0 && (x as u32) < w && (y as u32) < h {
                    img.put_pixel(x as u32, y as u32, colour);
                }
            }
            t += 0.01;
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first().map(PathBuf::from) else {
        return Err("usage: locate_sources DIR [--only TEXT] [--clicks] [--overlays OUTDIR] [--verbose]".into());
    };
    let flag = |name: &str| args.iter().any(|a| a == name);
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let only = value("--only");
    let overlays = value("--overlays").map(PathBuf::from);
    let clicks = flag("--clicks");
    let offset: Option<f64> = value("--offset").map(|v| v.parse()).transpose()?;
    let verbose = flag("--verbose");
    let mut files = Vec::new();
    walk_images(&dir, &["jpg", "jpeg", "png"], &mut files);
    files.sort();
    let mut sources: BTreeMap<String, SourceScore> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(&dir).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        if rel.ends_with("t2_053.jpg") || rel.ends_with("t2_054.jpg") {
            continue;
        }
        if only.as_ref().is_some_and(|o| !rel.contains(o.as_str())) {
            continue;
        }
        let (Some(source), Some(truth)) = (source_of(&rel), truth_of(&path)) else {
            continue;
        };
        let given = match (&truth, clicks, offset) {
            (Truth::Points(_, clicked), true, _) => Some(*clicked),
            (Truth::Points(points, _), false, Some(f)) => {
                let n = BOARD_LINES;
                Some(displaced_corners(&[points[0], points[n - 1], points[n * n - 1], points[n * (n - 1)]], f, &rel))
            }
            (Truth::Corners(c), false, Some(f)) => Some(displaced_corners(c, f, &rel)),
            _ => None,
        };
        if (clicks || offset.is_some()) && given.is_none() {
            continue;
        }
        let frame = decode_rgb(&std::fs::read(&path)?)?;
        let start = Instant::now();
        let mut note = String::new();
        let result = match given {
            Some(corners) => {
                let g = refine_corners(&tengen_vision::grey(&frame.rgb), corners, None);
                if let Ok(g) = &g {
                    note = match &g.refinement {
                        Refinement::Refined { moved_cells: m } | Refinement::Found { moved_cells: m } => {
                            format!(", moved {:.2} {:.2} {:.2} {:.2}", m[0], m[1], m[2], m[3])
                        }
                        Refinement::Kept { reason } => format!(", kept: {reason}"),
                    };
                }
                g.map(|g| g.located)
            }
            None => locate(&frame.rgb, &LocateOptions::default()),
        };
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let score = sources.entry(source).or_default();
        if let Some(corners) = given {
            if let Ok(g) = tengen_vision::locate::from_corners(
                corners,
                tengen_vision::LensDistortion::none(frame.rgb.width(), frame.rgb.height()),
            ) {
                score.before.push(match &truth {
                    Truth::Points(points, _) => worst_intersection_error_cells(&g.geometry, points),
                    Truth::Corners(c) => worst_corner(&g.geometry.corners(), c),
                    Truth::None => f64::NAN,
                });
            }
        }
        score.images += 1;
        score.ms.push(ms);
        let mut bad = true;
        let line = match &result {
            Ok(l) => {
                score.found += 1;
                let worst = match &truth {
                    Truth::Points(points, _) => Some(worst_intersection_error_cells(&l.geometry, points)),
                    Truth::Corners(c) => Some(worst_corner(&l.geometry.corners(), c)),
                    Truth::None => None,
                };
                bad = worst.is_some_and(|w| w > 0.5);
                if let (true, Truth::Points(points, _)) = (flag("--debug"), &truth) {
                    // Each corner's error in cells under the identity indexing, and the pixel offsets.
                    let n = BOARD_LINES;
                    for (c, r) in [(0, 0), (n - 1, 0), (n - 1, n - 1), (0, n - 1)] {
                        let t = points[r * n + c];
                        let p = l.geometry.project(c as f64, r as f64);
                        println!("  corner ({c},{r}): truth {:.0},{:.0} found {:.0},{:.0}", t[0], t[1], p[0], p[1]);
                    }
                }
                if let Some(w) = worst {
                    score.graded += 1;
                    score.right += usize::from(w <= 0.5);
                    score.worst.push(w);
                }
                let corners = l.geometry.corners();
                format!(
                    "{rel}: found, worst {}, {} inliers, rms {:.3}, extent {:.2}{note}, corners {} ({ms:.0} ms, {} steps)",
                    worst.map_or("–".into(), |w| format!("{w:.2} cell")),
                    l.quality.inlier_intersections,
                    l.quality.rms_error_cells,
                    l.quality.extent_contrast,
                    corners.iter().map(|[x, y]| format!("{x:.0},{y:.0}")).collect::<Vec<_>>().join(" "),
                    l.quality.work_steps,
                )
            }
            Err(e) => format!("{rel}: NOT found: {e} ({ms:.0} ms)"),
        };
        if verbose {
            println!("{line}");
        }
        score.lines.push((line, bad));
        if let Some(out) = &overlays {
            let mut rgb = frame.rgb.clone();
            if let Ok(l) = &result {
                draw_grid(&mut rgb, &l.geometry, Rgb([255, 0, 0]));
            } else {
                // A failure: the first lattice hypotheses before refinement, to see which stage failed.
                let gray = image::DynamicImage::ImageRgb8(frame.rgb.clone()).into_luma8();
                let (hyps, _) = tengen_vision::locate::debug_hypotheses(&gray);
                for (i, h) in hyps.iter().take(2).enumerate() {
                    draw_grid(&mut rgb, h, [Rgb([0, 255, 0]), Rgb([0, 160, 255])][i]);
                }
            }
            std::fs::create_dir_all(out)?;
            rgb.save(out.join(format!("{}.png", rel.replace('/', "_"))))?;
        }
    }
    let pct = |v: &[f64], q: f64| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s.get(((s.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(f64::NAN)
    };
    let given = clicks || offset.is_some();
    if given {
        println!("| source | images | found | right grid (≤0.5 cell) | worst err median / max (cells) | given: worst err median / max | ms median / max |");
        println!("|---|---|---|---|---|---|---|");
    } else {
        println!(
            "| source | images | found | right grid (≤0.5 cell) | worst err median / max (cells) | ms median / max |"
        );
        println!("|---|---|---|---|---|---|");
    }
    for (name, s) in &sources {
        println!(
            "| {name} | {} | {} ({:.1} %) | {} | {:.3} / {:.3} | {}{:.0} / {:.0} |",
            s.images,
            s.found,
            100.0 * s.found as f64 / s.images.max(1) as f64,
            if s.graded > 0 { format!("{} of {}", s.right, s.images) } else { "–".into() },
            pct(&s.worst, 0.5),
            pct(&s.worst, 1.0),
            if given { format!("{:.3} / {:.3} | ", pct(&s.before, 0.5), pct(&s.before, 1.0)) } else { String::new() },
            pct(&s.ms, 0.5),
            pct(&s.ms, 1.0)
        );
    }
    if !verbose {
        for s in sources.values() {
            for (l, _) in s.lines.iter().filter(|l| l.1) {
                println!("{l}");
            }
        }
    }
    Ok(())
}
