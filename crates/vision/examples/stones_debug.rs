//! Development aid: the outline and stones' looks step by step on labelled photos or saved
//! stress frames, each step scored against the truth.
//!
//! `stones_debug DIR [--only TEXT] [--png OUTDIR] [--outlines]`

use std::error::Error;
use std::path::{Path, PathBuf};

use image::{Rgb, RgbImage};
use nalgebra::Vector3;
use tengen_rules::BOARD_LINES;
use tengen_vision::evaluate::worst_intersection_error_cells;
use tengen_vision::{decode_rgb, GridGeometry, LensDistortion};

#[path = "common/label_files.rs"]
mod label_files;
use label_files::{grid_points, pair, sidecar, walk_images};

/// The 361 true intersections and the 19 rows of the position.
fn truth_of(path: &Path) -> Option<(Vec<[f64; 2]>, Vec<String>)> {
    if let Ok(text) = std::fs::read_to_string(sidecar(path, ".grid.json")) {
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        let points = grid_points(&v)?;
        let grid = std::fs::read_to_string(sidecar(path, ".grid.txt")).ok()?;
        return Some((points, grid.lines().map(str::to_string).collect()));
    }
    let text = std::fs::read_to_string(path.with_extension("truth.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let points: Vec<[f64; 2]> = v.get("intersections")?.as_array()?.iter().filter_map(pair).collect();
    let grid = v.get("grid")?.as_array()?.iter().filter_map(|r| r.as_str().map(str::to_string)).collect();
    Some((points, grid))
}

/// Board coordinates of a pixel under a grid (lens ignored beyond undistortion).
fn board_of(g: &GridGeometry, p: [f64; 2]) -> Option<[f64; 2]> {
    let inv = g.matrix().try_inverse()?;
    let u = g.lens.undistort(p);
    let q = inv * Vector3::new(u[0], u[1], 1.0);
    (q.z.abs() > 1e-12).then(|| [q.x / q.z, q.y / q.z])
}

/// Median whole-line shift of `g` against the truth and the worst residual after it, in cells.
fn offset(g: &GridGeometry, points: &[[f64; 2]]) -> String {
    let n = BOARD_LINES;
    let mut d: Vec<[f64; 2]> = Vec::new();
    for r in 0..n {
        for c in 0..n {
            if let Some(q) = board_of(g, points[r * n + c]) {
                d.push([q[0] - c as f64, q[1] - r as f64]);
            }
        }
    }
    let med = |k: usize| {
        let mut v: Vec<f64> = d.iter().map(|x| x[k]).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (mc, mr) = (med(0), med(1));
    let worst = d.iter().map(|x| (x[0] - mc.round()).hypot(x[1] - mr.round())).fold(0.0, f64::max);
    let spread = d.iter().map(|x| (x[0] - mc).hypot(x[1] - mr)).fold(0.0, f64::max);
    format!("median ({mc:+.2}, {mr:+.2}), spread {spread:.2}, worst after whole lines {worst:.2}")
}

fn dot(img: &mut RgbImage, p: [f64; 2], r: i32, colour: Rgb<u8>) {
    let (w, h) = img.dimensions();
    for dy in -r..=r {
        for dx in -r..=r {
            let (x, y) = (p[0] as i32 + dx, p[1] as i32 + dy);
            if x >= 0 && y >= 0 && (x as u32) < w && (y as u32) < h {
                img.put_pixel(x as u32, y as u32, colour);
            }
        }
    }
}

fn draw_grid(img: &mut RgbImage, geom: &GridGeometry, colour: Rgb<u8>) {
    let last = (BOARD_LINES - 1) as f64;
    for k in 0..BOARD_LINES {
        let mut t = 0.0;
        while t <= last {
            for p in [geom.project(k as f64, t), geom.project(t, k as f64)] {
                dot(img, p, 0, colour);
            }
            t += 0.02;
        }
    }
}

/// Direct linear transform through (board, pixel) pairs (development check only).
fn dlt(pairs: &[([f64; 2], [f64; 2])], w: u32, h: u32) -> Option<GridGeometry> {
    if pairs.len() < 8 {
        return None;
    }
    let mut a = nalgebra::DMatrix::<f64>::zeros(2 * pairs.len(), 9);
    for (i, (b, p)) in pairs.iter().enumerate() {
        let (x, y, u, v) = (b[0], b[1], p[0], p[1]);
        let r0 = [x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y, -u];
        let r1 = [0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y, -v];
        for k in 0..9 {
            a[(2 * i, k)] = r0[k];
            a[(2 * i + 1, k)] = r1[k];
        }
    }
    let svd = (a.transpose() * &a).symmetric_eigen();
    let k = svd.eigenvalues.imin();
    let e = svd.eigenvectors.column(k);
    let hm = [[e[0], e[1], e[2]], [e[3], e[4], e[5]], [e[6], e[7], e[8]]];
    Some(GridGeometry { homography: hm, lens: LensDistortion::none(w, h) })
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(args.first().ok_or("usage: stones_debug DIR [--only TEXT] [--png OUTDIR] [--outlines]")?);
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let only = value("--only");
    let png = value("--png").map(PathBuf::from);
    // The stones' centres from their outlines rather than the box's peak.
    let outlines = args.iter().any(|a| a == "--outlines");
    let mut files = Vec::new();
    walk_images(&dir, &["jpg", "jpeg"], &mut files);
    files.sort();
    let n = BOARD_LINES;
    for path in files {
        let rel = path.strip_prefix(&dir).unwrap_or(&path).to_string_lossy().to_string();
        if only.as_ref().is_some_and(|o| !rel.contains(o.as_str())) {
            continue;
        }
        let Some((points, grid)) = truth_of(&path) else { continue };
        if points.len() != n * n {
            continue;
        }
        let frame = decode_rgb(&std::fs::read(&path)?)?;
        let gray = tengen_vision::grey(&frame.rgb);
        let (w, h) = gray.dimensions();
        let truth = GridGeometry::from_corners(
            [points[0], points[n - 1], points[n * n - 1], points[n * (n - 1)]],
            LensDistortion::none(w, h),
        )
        .ok_or("truth corners")?;
        let stone_at = |c: i64, r: i64| {
            (0..n as i64).contains(&c)
                && (0..n as i64).contains(&r)
                && grid.get(r as usize).and_then(|row| row.chars().nth(c as usize)).is_some_and(|ch| ch != '.')
        };
        let stones =
            (0..n as i64).flat_map(|r| (0..n as i64).map(move |c| (c, r))).filter(|&(c, r)| stone_at(c, r)).count();
        let d = tengen_vision::locate::debug_stones(&gray, outlines);
        println!("{rel}: {stones} stones");
        match &d.initial {
            Some(g) => println!("  outline lattice: {}", offset(g, &points)),
            None => println!("  outline: {}", if d.outline.is_some() { "no lattice" } else { "none" }),
        }
        // Disc centres against the truth: on a stone's point, on an empty point, off the board,
        // between points.
        let (mut on_stone, mut on_empty, mut off_board, mut between) = (0, 0, 0, 0);
        let mut tops: Vec<[f64; 2]> = Vec::new();
        let mut oracle: Vec<([f64; 2], [f64; 2])> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for p in &d.centres {
            let Some(q) = board_of(&truth, *p) else { continue };
            let (c, r) = (q[0].round(), q[1].round());
            let res = [q[0] - c, q[1] - r];
            if !(-0.5..=18.5).contains(&q[0]) || !(-0.5..=18.5).contains(&q[1]) {
                off_board += 1;
            } else if res[0].hypot(res[1]) > 0.3 {
                between += 1;
            } else if stone_at(c as i64, r as i64) {
                on_stone += 1;
                seen.insert((c as i64, r as i64));
                oracle.push(([c, r], *p));
                tops.push(res);
            } else {
                on_empty += 1;
            }
        }
        let med = |k: usize| {
            let mut v: Vec<f64> = tops.iter().map(|x| x[k]).collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
        };
        println!(
            "  centres {}: on stones {on_stone} ({} of {stones} stones, top offset ({:+.2}, {:+.2})), on empty {on_empty}, between {between}, off board {off_board}",
            d.centres.len(),
            seen.len(),
            med(0),
            med(1)
        );
        {
            let mut bands: Vec<Vec<[f64; 2]>> = vec![Vec::new(); 9];
            let mut all: Vec<([f64; 2], [f64; 2])> = Vec::new();
            for p in &d.centres {
                let Some(q) = board_of(&truth, *p) else { continue };
                let (c, r) = (q[0].round(), q[1].round());
                if !(0.0..=18.0).contains(&c) || !(0.0..=18.0).contains(&r) || !stone_at(c as i64, r as i64) {
                    continue;
                }
                bands[(c as usize / 7) + 3 * (r as usize / 7)].push([q[0] - c, q[1] - r]);
                all.push(([c, r], *p));
            }
            let med = |v: &Vec<[f64; 2]>, k: usize| {
                let mut x: Vec<f64> = v.iter().map(|a| a[k]).collect();
                x.sort_by(f64::total_cmp);
                x.get(x.len() / 2).copied().unwrap_or(f64::NAN)
            };
            let t: Vec<String> =
                bands.iter().map(|b| format!("{:+.2},{:+.2}({})", med(b, 0), med(b, 1), b.len())).collect();
            println!("  centres on stones by 3x3 region (col band, row band) median offset: {}", t.join(" "));
            if let Some(g) = dlt(&all, w, h) {
                println!(
                    "  homography through all centres nearest a stone: worst {:.2} cell",
                    worst_intersection_error_cells(&g, &points)
                );
            }
        }
        if let Some(g) = dlt(&oracle, w, h) {
            println!(
                "  homography through the on-stone centres alone: worst {:.2} cell",
                worst_intersection_error_cells(&g, &points)
            );
        }
        match &d.lattice {
            Some((g, agreeing)) => {
                println!("  stones' lattice ({} agree): {}", agreeing.len(), offset(g, &points));
                let mut kinds = [0usize; 4];
                for p in agreeing {
                    let Some(q) = board_of(&truth, *p) else { continue };
                    let (c, r) = (q[0].round(), q[1].round());
                    let k = if !(-0.5..=18.5).contains(&q[0]) || !(-0.5..=18.5).contains(&q[1]) {
                        3
                    } else if (q[0] - c).hypot(q[1] - r) > 0.3 {
                        2
                    } else if stone_at(c as i64, r as i64) {
                        0
                    } else {
                        1
                    };
                    kinds[k] += 1;
                }
                // Error (after whole lines) at the corners, the sides' middles and the middle.
                let mut errs = String::new();
                for (c, r) in [(0, 0), (9, 0), (18, 0), (0, 9), (9, 9), (18, 9), (0, 18), (9, 18), (18, 18)] {
                    if let Some(q) = board_of(g, points[r * n + c]) {
                        errs.push_str(&format!(
                            " ({c},{r}):{:+.2},{:+.2}",
                            q[0] - c as f64 - (q[0] - c as f64).round(),
                            q[1] - r as f64 - (q[1] - r as f64).round()
                        ));
                    }
                }
                println!("    errors{errs}");
                println!(
                    "    agreeing: on stones {}, on empty {}, between {}, off board {}",
                    kinds[0], kinds[1], kinds[2], kinds[3]
                );
            }
            None => println!("  stones' lattice: none"),
        }
        match &d.result {
            Some(Ok(g)) => println!("  result: worst {:.2} cell", worst_intersection_error_cells(g, &points)),
            Some(Err(e)) => println!("  result: {e}"),
            None => println!("  result: not run"),
        }
        if let Some(out) = &png {
            let mut rgb = frame.rgb.clone();
            for p in &points {
                dot(&mut rgb, *p, 1, Rgb([0, 255, 0]));
            }
            if let Some(g) = &d.initial {
                draw_grid(&mut rgb, g, Rgb([255, 255, 0]));
            }
            if let Some((g, _)) = &d.lattice {
                draw_grid(&mut rgb, g, Rgb([0, 128, 255]));
            }
            for p in &d.centres {
                dot(&mut rgb, *p, 2, Rgb([255, 0, 0]));
            }
            std::fs::create_dir_all(out)?;
            rgb.save(out.join(format!("{}.png", rel.replace('/', "_"))))?;
        }
    }
    Ok(())
}
