//! Development and evaluation aid for board location.
//!
//! `locate_eval overlay IMAGE OUT.png` — locates the board and draws the grid on the image.
//! `locate_eval corners DIR` — corner error in cells over every `*.corners.json` in DIR
//!   (roboflow-corners layout), printing the distribution.
//! `locate_eval synth N [OUTDIR]` — N rendered frames per preset (random poses, rolls, stone
//!   densities), error over all 361 intersections against the renderer's ground truth.
//! `locate_eval folder DIR [OUTDIR]` — located or not for every image in DIR (recursively),
//!   drawing overlays into OUTDIR when given.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

use image::{Rgb, RgbImage};
use tengen_vision::image_io::decode_rgb;
use tengen_vision::{locate, GridGeometry, LocateOptions, BOARD_LINES};

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("overlay") if args.len() == 3 => overlay(&args[1], &args[2]),
        Some("corners") if args.len() == 2 => corners(Path::new(&args[1])),
        Some("synth") if args.len() >= 2 => synth(args[1].parse()?, args.get(2).map(PathBuf::from)),
        Some("zoom") if args.len() == 6 => zoom(&args[1], &args[2], &args[3], &args[4], &args[5]),
        Some("folder") if args.len() >= 2 => folder(Path::new(&args[1]), args.get(2).map(PathBuf::from)),
        _ => Err("usage: locate_eval overlay IMAGE OUT.png | corners DIR | folder DIR [OUTDIR]".into()),
    }
}

fn draw_grid(img: &mut RgbImage, geom: &GridGeometry) {
    let (w, h) = img.dimensions();
    let thick = (w.max(h) / 700).max(1) as i32;
    let mut put = |x: f64, y: f64, c: Rgb<u8>| {
        for dy in -thick / 2..=thick / 2 {
            for dx in -thick / 2..=thick / 2 {
                let (px, py) = (x.round() as i64 + i64::from(dx), y.round() as i64 + i64::from(dy));
                if px >= 0 && py >= 0 && (px as u32) < w && (py as u32) < h {
                    img.put_pixel(px as u32, py as u32, c);
                }
            }
        }
    };
    let last = (BOARD_LINES - 1) as f64;
    for k in 0..BOARD_LINES {
        let k = k as f64;
        let mut t = 0.0;
        while t <= last {
            let [x, y] = geom.project(k, t);
            put(x, y, Rgb([255, 0, 0]));
            let [x, y] = geom.project(t, k);
            put(x, y, Rgb([0, 120, 255]));
            t += 0.02;
        }
    }
    for (i, [x, y]) in geom.corners().into_iter().enumerate() {
        let colour = [Rgb([0, 255, 0]), Rgb([255, 255, 0]), Rgb([255, 0, 255]), Rgb([0, 255, 255])][i];
        for r in 0..(4 * thick) {
            for a in 0..64 {
                let ang = f64::from(a) / 64.0 * std::f64::consts::TAU;
                put(x + f64::from(r) * ang.cos(), y + f64::from(r) * ang.sin(), colour);
            }
        }
    }
}

fn overlay(input: &str, output: &str) -> Result<(), Box<dyn Error>> {
    let bytes = std::fs::read(input)?;
    let mut rgb = decode_rgb(&bytes)?.rgb;
    let start = Instant::now();
    let result = locate(&rgb, &LocateOptions::default());
    println!("{input}: {:?} in {:.1} ms", result.as_ref().map(|l| &l.quality), start.elapsed().as_secs_f64() * 1e3);
    let gray = image::DynamicImage::ImageRgb8(rgb.clone()).into_luma8();
    let (hyps, resp) = tengen_vision::locate::debug_hypotheses(&gray);
    resp.save(format!("{output}.resp.png"))?;
    for (i, h) in hyps.iter().enumerate() {
        let mut copy = rgb.clone();
        draw_grid(&mut copy, h);
        copy.save(format!("{output}.hyp{i}.png"))?;
    }
    if let Ok(located) = &result {
        draw_grid(&mut rgb, &located.geometry);
        println!("corners {:?} k1 {:.3}", located.geometry.corners(), located.geometry.lens.k1);
    }
    rgb.save(output)?;
    Ok(())
}

fn parse_corners(json: &str) -> Option<[[f64; 2]; 4]> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    let arr = value.get("corners_px")?.as_array()?;
    let mut out = [[0.0; 2]; 4];
    for (i, c) in arr.iter().take(4).enumerate() {
        out[i] = [c.get(0)?.as_f64()?, c.get(1)?.as_f64()?];
    }
    Some(out)
}

/// Corner error in cells: each corner's distance divided by the mean cell size of the labelled
/// board. `best` matches the located corners to the labels under the best of 4 rotations (a
/// square board photographed from above has no canonical "up").
fn corner_errors(found: [[f64; 2]; 4], truth: [[f64; 2]; 4]) -> (f64, f64) {
    let dist = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    let perimeter: f64 = (0..4).map(|i| dist(truth[i], truth[(i + 1) % 4])).sum();
    let cell = perimeter / 4.0 / (BOARD_LINES - 1) as f64;
    let worst = |rot: usize| (0..4).map(|i| dist(found[(i + rot) % 4], truth[i])).fold(0.0, f64::max) / cell;
    let strict = worst(0);
    let best = (0..4).map(worst).fold(f64::INFINITY, f64::min);
    (strict, best)
}

fn corners(dir: &Path) -> Result<(), Box<dyn Error>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jpg"))
        .collect();
    paths.sort();
    let mut best_errors = Vec::new();
    let mut strict_errors = Vec::new();
    let mut failures = 0;
    let mut times = Vec::new();
    for path in &paths {
        let label = PathBuf::from(format!("{}.corners.json", path.display()));
        let Some(truth) = std::fs::read_to_string(&label).ok().and_then(|s| parse_corners(&s)) else { continue };
        let mut rgb = decode_rgb(&std::fs::read(path)?)?.rgb;
        let start = Instant::now();
        let result = locate(&rgb, &LocateOptions::default());
        times.push(start.elapsed().as_secs_f64() * 1e3);
        if let Some(out) = std::env::var_os("LOCATE_EVAL_OVERLAYS") {
            if let Ok(l) = &result {
                draw_grid(&mut rgb, &l.geometry);
            }
            for [x, y] in truth {
                for d in -6i32..=6 {
                    for (px, py) in [(x + f64::from(d), y), (x, y + f64::from(d))] {
                        if px >= 0.0 && py >= 0.0 && (px as u32) < rgb.width() && (py as u32) < rgb.height() {
                            rgb.put_pixel(px as u32, py as u32, Rgb([255, 255, 255]));
                        }
                    }
                }
            }
            let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            std::fs::create_dir_all(&out)?;
            rgb.save(Path::new(&out).join(format!("{name}.png")))?;
        }
        match result {
            Ok(located) => {
                let (strict, best) = corner_errors(located.geometry.corners(), truth);
                strict_errors.push(strict);
                best_errors.push(best);
                if best > 0.25 {
                    println!("{:6.2} cells  {}  {:?}", best, path.display(), located.quality);
                }
            }
            Err(e) => {
                failures += 1;
                println!("  FAIL  {}: {e}", path.display());
            }
        }
    }
    let n = paths.len();
    best_errors.sort_by(f64::total_cmp);
    strict_errors.sort_by(f64::total_cmp);
    times.sort_by(f64::total_cmp);
    let within = |errs: &[f64], t: f64| errs.iter().filter(|&&e| e <= t).count();
    println!("frames {n}, located {}, not located {failures}", best_errors.len());
    for t in [0.1, 0.25, 0.5, 1.0] {
        println!(
            "worst corner ≤ {t:4} cell: {:3} / {n} ({:.1} %)   [strict TL,TR,BR,BL order: {}]",
            within(&best_errors, t),
            100.0 * within(&best_errors, t) as f64 / n as f64,
            within(&strict_errors, t)
        );
    }
    let pct = |v: &[f64], q: f64| v.get(((v.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(f64::NAN);
    println!(
        "worst-corner error (cells): median {:.3}, p90 {:.3}, p95 {:.3}, max {:.3}",
        pct(&best_errors, 0.5),
        pct(&best_errors, 0.9),
        pct(&best_errors, 0.95),
        pct(&best_errors, 1.0)
    );
    println!("locate time (ms): median {:.1}, p95 {:.1}", pct(&times, 0.5), pct(&times, 0.95));
    Ok(())
}

fn collect_images(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_images(&p, out);
        } else if p.extension().is_some_and(|e| e == "jpg" || e == "png") {
            out.push(p);
        }
    }
}

fn folder(dir: &Path, outdir: Option<PathBuf>) -> Result<(), Box<dyn Error>> {
    let mut paths = Vec::new();
    collect_images(dir, &mut paths);
    paths.sort();
    let mut located_count = 0;
    for path in &paths {
        let mut rgb = decode_rgb(&std::fs::read(path)?)?.rgb;
        let start = Instant::now();
        let result = locate(&rgb, &LocateOptions::default());
        let ms = start.elapsed().as_secs_f64() * 1e3;
        match &result {
            Ok(l) => {
                located_count += 1;
                println!(
                    "located   {:50} {:4} inliers rms {:.3} cell extent {:.2} k1 {:+.3} ({ms:.0} ms)",
                    path.display().to_string(),
                    l.quality.inlier_intersections,
                    l.quality.rms_error_cells,
                    l.quality.extent_contrast,
                    l.geometry.lens.k1
                );
            }
            Err(e) => println!("NOT found {:50} {e} ({ms:.0} ms)", path.display().to_string()),
        }
        if let Some(out) = &outdir {
            if let Ok(l) = &result {
                draw_grid(&mut rgb, &l.geometry);
            }
            let name = path.strip_prefix(dir).unwrap_or(path).display().to_string().replace('/', "_");
            std::fs::create_dir_all(out)?;
            rgb.save(out.join(format!("{name}.png")))?;
        }
    }
    println!("located {located_count} / {}", paths.len());
    Ok(())
}

/// `zoom IMAGE X Y RADIUS OUT.png`: an 8× nearest-neighbour crop, to judge labels by eye.
fn zoom(input: &str, x: &str, y: &str, radius: &str, output: &str) -> Result<(), Box<dyn Error>> {
    let img = image::open(input)?.into_rgb8();
    let (x, y, r): (i64, i64, i64) = (x.parse()?, y.parse()?, radius.parse()?);
    let scale = 8;
    let side = (2 * r + 1) as u32 * scale;
    let out = RgbImage::from_fn(side, side, |u, v| {
        let (sx, sy) = (x - r + i64::from(u / scale), y - r + i64::from(v / scale));
        if sx >= 0 && sy >= 0 && (sx as u32) < img.width() && (sy as u32) < img.height() {
            *img.get_pixel(sx as u32, sy as u32)
        } else {
            Rgb([0, 0, 0])
        }
    });
    out.save(output)?;
    Ok(())
}

/// Random position with about `density` of the points occupied.
fn random_position(rng: &mut tengen_synth::noise::Rng, density: f64) -> tengen_synth::Position {
    use tengen_synth::{Position, Stone};
    let mut p = Position::empty();
    for r in 0..BOARD_LINES {
        for c in 0..BOARD_LINES {
            if rng.unit() < density {
                p.set(c, r, if rng.unit() < 0.5 { Stone::Black } else { Stone::White });
            }
        }
    }
    p
}

/// Worst intersection error in cells, under the best of the 4 rotations of the board indexing.
fn grid_error(geom: &GridGeometry, truth: &tengen_synth::GroundTruth) -> f64 {
    let n = BOARD_LINES;
    let last = n - 1;
    let mut best = f64::INFINITY;
    for rot in 0..4 {
        let mut worst: f64 = 0.0;
        for r in 0..n {
            for c in 0..n {
                let (tc, tr) = match rot {
                    0 => (c, r),
                    1 => (last - r, c),
                    2 => (last - c, last - r),
                    _ => (r, last - c),
                };
                let t = truth.intersections[tr * n + tc];
                let p = geom.project(c as f64, r as f64);
                // Local cell size from the truth.
                let nb = if tc + 1 < n { truth.intersections[tr * n + tc + 1] } else { truth.intersections[tr * n + tc - 1] };
                let cell = ((nb[0] - t[0]).powi(2) + (nb[1] - t[1]).powi(2)).sqrt().max(1e-9);
                worst = worst.max(((p[0] - t[0]).powi(2) + (p[1] - t[1]).powi(2)).sqrt() / cell);
            }
        }
        best = best.min(worst);
    }
    best
}

fn synth(per_preset: u64, outdir: Option<PathBuf>) -> Result<(), Box<dyn Error>> {
    use tengen_synth::{render, Scene, PRESETS};
    let mut errors = Vec::new();
    let mut failures = 0;
    let mut total = 0;
    for preset in PRESETS {
        for seed in 0..per_preset {
            let Some(base) = Scene::preset(preset) else { continue };
            let mut rng = tengen_synth::noise::Rng::new(seed * 7919 + 13);
            let mut scene = base.with_seed(seed + 1);
            scene.camera.roll_deg += rng.range(-180.0, 180.0);
            scene.camera.tilt_deg = (scene.camera.tilt_deg + rng.range(-5.0, 10.0)).clamp(0.0, 45.0);
            scene.camera.azimuth_deg = rng.range(0.0, 360.0);
            scene.camera.offset = [rng.range(-0.06, 0.06), rng.range(-0.06, 0.06)];
            let density = [0.0, 0.15, 0.4, 0.7][(seed % 4) as usize];
            let position = random_position(&mut rng, density);
            let frame = render(&position, &scene)?;
            let mut rgb = frame.image.clone();
            total += 1;
            let start = Instant::now();
            let result = locate(&rgb, &LocateOptions::default());
            let ms = start.elapsed().as_secs_f64() * 1e3;
            let label = format!(
                "{preset:8} seed {seed} tilt {:4.1} roll {:6.1} density {density:.2}",
                scene.camera.tilt_deg, scene.camera.roll_deg
            );
            match &result {
                Ok(l) => {
                    let e = grid_error(&l.geometry, &frame.truth);
                    errors.push(e);
                    println!("{label}: worst intersection {e:.3} cell, k1 {:+.3} (truth {:+.3}) {ms:.0} ms", l.geometry.lens.k1, frame.truth.lens.k1);
                }
                Err(e) => {
                    failures += 1;
                    println!("{label}: NOT located: {e}");
                }
            }
            if let Some(out) = &outdir {
                if let Ok(l) = &result {
                    draw_grid(&mut rgb, &l.geometry);
                }
                std::fs::create_dir_all(out)?;
                rgb.save(out.join(format!("{preset}_{seed}.png")))?;
            }
        }
    }
    errors.sort_by(f64::total_cmp);
    let within = |t: f64| errors.iter().filter(|&&e| e <= t).count();
    println!(
        "synthetic frames {total}: located {}, not located {failures}; worst-intersection error ≤ 0.1 cell {}, ≤ 0.25 cell {}, median {:.3}",
        errors.len(),
        within(0.1),
        within(0.25),
        errors.get(errors.len() / 2).copied().unwrap_or(f64::NAN)
    );
    Ok(())
}
