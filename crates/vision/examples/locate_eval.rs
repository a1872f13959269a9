//! Development aid for board location, for what a developer looks at by hand; the corner rates
//! over labelled photos (all frames and those without a hand) are `tengen eval photos DIR`.
//!
//! `locate_eval overlay IMAGE OUT.png` — locates the board and draws the grid on the image.
//! `locate_eval analyse DIR [CROPDIR]` — signed label-minus-located corner error along the board's
//!   own axes (outward positive), per corner and per source frame across its augmentations, and
//!   both against the outer-line crossings measured from the pixels
//!   (`tengen_vision::locate::crossings`); with CROPDIR, 8× crops of the four corners of every
//!   frame with the located corner (red ring), the label (cyan) and the measured crossing (green).
//! `locate_eval sheet DIR OUTPREFIX` — contact sheets (5×6 thumbnails, sorted by name, the
//!   order printed) of the first augmentation of every roboflow source frame, to check by eye.
//! `locate_eval synth N [OUTDIR]` — N rendered frames per preset (random poses, rolls, stone
//!   densities), error over all 361 intersections against the renderer's ground truth.
//! `locate_eval folder DIR [OUTDIR]` — located or not for every image in DIR (recursively),
//!   drawing overlays into OUTDIR when given.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

use image::{Rgb, RgbImage};
use tengen_rules::BOARD_LINES;
use tengen_vision::decode_rgb;
use tengen_vision::evaluate::parse_corners_label;
use tengen_vision::{locate, GridGeometry, LocateOptions};

#[path = "common/label_files.rs"]
mod label_files;
use label_files::walk_images;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("overlay") if args.len() == 3 => overlay(&args[1], &args[2]),
        Some("analyse") if args.len() >= 2 => analyse(Path::new(&args[1]), args.get(2).map(PathBuf::from)),
        Some("synth") if args.len() >= 2 => synth(args[1].parse()?, args.get(2).map(PathBuf::from)),
        Some("zoom") if args.len() == 6 => zoom(&args[1], &args[2], &args[3], &args[4], &args[5]),
        Some("sheet") if args.len() == 3 => sheet(Path::new(&args[1]), Path::new(&args[2])),
        Some("folder") if args.len() >= 2 => folder(Path::new(&args[1]), args.get(2).map(PathBuf::from)),
        _ => Err("usage: locate_eval overlay IMAGE OUT.png | analyse DIR [CROPDIR] | sheet DIR OUTPREFIX | \
                  synth N [OUTDIR] | zoom IMAGE X Y RADIUS OUT.png | folder DIR [OUTDIR]"
            .into()),
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

/// The project's own labels of which roboflow-corners source frames show a hand (see the file
/// for how they were made); a hand over the board's margin only (`margin`) counts as no hand
/// here, as in `tengen eval photos`.
const ROBOFLOW_HANDS: &str = include_str!("../../../tests/labels/roboflow-corners-hands.txt");

/// True when the source frame (file name before `_jpg`) is labelled as showing a hand over the grid.
fn shows_hand(source: &str) -> bool {
    ROBOFLOW_HANDS
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").split_whitespace().collect::<Vec<_>>())
        .any(|words| words.first() == Some(&source) && words.get(1) == Some(&"hand"))
}

fn folder(dir: &Path, outdir: Option<PathBuf>) -> Result<(), Box<dyn Error>> {
    let mut paths = Vec::new();
    walk_images(dir, &["jpg", "png"], &mut paths);
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
    use tengen_rules::Stone;
    use tengen_synth::Position;
    let mut p = Position::empty();
    for r in 0..BOARD_LINES {
        for c in 0..BOARD_LINES {
            if rng.unit() < density {
                p.set(c, r, if rng.unit() < 0.5 { Stone::BLACK } else { Stone::WHITE });
            }
        }
    }
    p
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
                    let e = tengen_vision::evaluate::worst_intersection_error_cells(
                        &l.geometry,
                        &frame.truth.intersections,
                    );
                    errors.push(e);
                    println!(
                        "{label}: worst intersection {e:.3} cell, k1 {:+.3} (truth {:+.3}) {ms:.0} ms",
                        l.geometry.lens.k1, frame.truth.lens.k1
                    );
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

/// Board coordinates (col, row) of an image pixel under a geometry (inverse lens + homography).
fn to_board(geom: &GridGeometry, pixel: [f64; 2]) -> Option<[f64; 2]> {
    let inv = geom.matrix().try_inverse()?;
    let u = geom.lens.undistort(pixel);
    let v = inv * nalgebra::Vector3::new(u[0], u[1], 1.0);
    (v.z.abs() > 1e-12).then(|| [v.x / v.z, v.y / v.z])
}

/// Source frame of a roboflow file name: the part before `_jpg.rf.`.
fn source_of(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    name.split("_jpg.rf.").next().unwrap_or(&name).to_string()
}

/// A 32×32 grey thumbnail of the board area, for finding the 90° rotation between augmentations.
fn thumbnail(rgb: &RgbImage) -> Vec<f64> {
    let small = image::imageops::resize(rgb, 32, 32, image::imageops::FilterType::Triangle);
    let v: Vec<f64> = small.pixels().map(|p| f64::from(p[0]) + f64::from(p[1]) + f64::from(p[2])).collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt().max(1e-9);
    v.iter().map(|x| (x - mean) / sd).collect()
}

/// Thumbnail `b` turned by `quarter` × 90° clockwise.
fn rotate_thumb(b: &[f64], quarter: usize) -> Vec<f64> {
    let n = 32;
    let mut out = b.to_vec();
    for _ in 0..quarter {
        let src = out.clone();
        for y in 0..n {
            for x in 0..n {
                // Clockwise: new(x, y) = old(y, n-1-x).
                out[y * n + x] = src[(n - 1 - x) * n + y];
            }
        }
    }
    out
}

struct FrameRecord {
    path: PathBuf,
    source: String,
    /// Per label corner TL, TR, BR, BL: (outward across the vertical edge, outward across the
    /// horizontal edge), in cells, label minus located.
    outward: [[f64; 2]; 4],
    thumb: Vec<f64>,
}

fn stats(v: &[f64]) -> (f64, f64, f64) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (mean, s.get(s.len() / 2).copied().unwrap_or(f64::NAN), sd)
}

fn mark_ring(img: &mut RgbImage, cx: f64, cy: f64, radius: f64, colour: Rgb<u8>) {
    for a in 0..256 {
        let ang = f64::from(a) / 256.0 * std::f64::consts::TAU;
        let (x, y) = (cx + radius * ang.cos(), cy + radius * ang.sin());
        if x >= 0.0 && y >= 0.0 && (x as u32) < img.width() && (y as u32) < img.height() {
            img.put_pixel(x as u32, y as u32, colour);
        }
    }
}

/// Four 8× crops (TL, TR / BL, BR) of radius `r` source pixels around the located corners, with
/// the located corner (red) and the label (cyan) marked by rings of one source pixel radius
/// (and a larger ring of a quarter cell around the located corner, in yellow).
fn corner_crops(
    rgb: &RgbImage,
    ours: [[f64; 2]; 4],
    labels: [[f64; 2]; 4],
    local: [Option<[f64; 2]>; 4],
    cell: f64,
) -> RgbImage {
    let scale = 8.0;
    let r = 16.0;
    let side = ((2.0 * r + 1.0) * scale) as u32;
    let mut out = RgbImage::new(2 * side + 4, 2 * side + 4);
    for (i, slot) in [(0u32, 0u32), (1, 0), (1, 1), (0, 1)].into_iter().enumerate() {
        let (ox, oy) = (ours[i][0].round() - r, ours[i][1].round() - r);
        let mut tile = RgbImage::from_fn(side, side, |u, v| {
            let (sx, sy) = (ox + (f64::from(u) / scale).floor(), oy + (f64::from(v) / scale).floor());
            if sx >= 0.0 && sy >= 0.0 && (sx as u32) < rgb.width() && (sy as u32) < rgb.height() {
                *rgb.get_pixel(sx as u32, sy as u32)
            } else {
                Rgb([0, 0, 0])
            }
        });
        // Pixel (sx, sy) covers [sx - 0.5, sx + 0.5] in image coordinates with pixel centres at
        // integers; the tile shows it over [(sx - ox)·8, (sx - ox + 1)·8).
        let to_tile = |p: [f64; 2]| ((p[0] - ox + 0.5) * scale, (p[1] - oy + 0.5) * scale);
        let (ax, ay) = to_tile(ours[i]);
        mark_ring(&mut tile, ax, ay, scale, Rgb([255, 0, 0]));
        mark_ring(&mut tile, ax, ay, 0.25 * cell * scale, Rgb([255, 255, 0]));
        let (bx, by) = to_tile(labels[i]);
        mark_ring(&mut tile, bx, by, scale, Rgb([0, 255, 255]));
        if let Some(l) = local[i] {
            let (lx, ly) = to_tile(l);
            mark_ring(&mut tile, lx, ly, 0.5 * scale, Rgb([0, 255, 0]));
        }
        image::imageops::replace(&mut out, &tile, i64::from(slot.0 * (side + 4)), i64::from(slot.1 * (side + 4)));
    }
    out
}

fn analyse(dir: &Path, crops: Option<PathBuf>) -> Result<(), Box<dyn Error>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jpg"))
        .collect();
    paths.sort();
    let last = (BOARD_LINES - 1) as f64;
    let ideal = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
    let mut records = Vec::new();
    let mut local_vs_ours: Vec<[f64; 2]> = Vec::new();
    let mut verified_worst: Vec<(f64, f64, PathBuf)> = Vec::new();
    let mut label_vs_local: Vec<[f64; 2]> = Vec::new();
    println!("file,source,corner,outward_x_cells,outward_y_cells");
    for path in &paths {
        let label = PathBuf::from(format!("{}.corners.json", path.display()));
        let Some(truth) = std::fs::read_to_string(&label).ok().and_then(|s| parse_corners_label(&s).ok()) else {
            continue;
        };
        let rgb = decode_rgb(&std::fs::read(path)?)?.rgb;
        let Ok(located) = locate(&rgb, &LocateOptions::default()) else { continue };
        let geom = &located.geometry;
        let mut outward = [[0.0; 2]; 4];
        let local = tengen_vision::locate::crossings::measure_corners(&rgb, geom);
        if local.iter().all(Option::is_some) {
            let cell = located.quality.cell_px;
            let worst = (0..4)
                .filter_map(|i| {
                    local[i].map(|l| {
                        ((l[0] - geom.corners()[i][0]).powi(2) + (l[1] - geom.corners()[i][1]).powi(2)).sqrt() / cell
                    })
                })
                .fold(0.0, f64::max);
            let label_worst = (0..4)
                .filter_map(|i| {
                    local[i].map(|l| ((l[0] - truth[i][0]).powi(2) + (l[1] - truth[i][1]).powi(2)).sqrt() / cell)
                })
                .fold(0.0, f64::max);
            verified_worst.push((worst, label_worst, path.clone()));
        }
        for i in 0..4 {
            if let Some(l) = local[i].and_then(|l| to_board(geom, l)) {
                let sx = if ideal[i][0] == 0.0 { -1.0 } else { 1.0 };
                let sy = if ideal[i][1] == 0.0 { -1.0 } else { 1.0 };
                let lo = [(l[0] - ideal[i][0]) * sx, (l[1] - ideal[i][1]) * sy];
                local_vs_ours.push(lo);
                if let Some(b) = to_board(geom, truth[i]) {
                    let lab = [(b[0] - ideal[i][0]) * sx, (b[1] - ideal[i][1]) * sy];
                    label_vs_local.push([lab[0] - lo[0], lab[1] - lo[1]]);
                }
            }
        }
        for i in 0..4 {
            let Some(b) = to_board(geom, truth[i]) else { continue };
            let sx = if ideal[i][0] == 0.0 { -1.0 } else { 1.0 };
            let sy = if ideal[i][1] == 0.0 { -1.0 } else { 1.0 };
            outward[i] = [(b[0] - ideal[i][0]) * sx, (b[1] - ideal[i][1]) * sy];
            let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            println!(
                "{name},{},{},{:.4},{:.4}",
                source_of(path),
                ["TL", "TR", "BR", "BL"][i],
                outward[i][0],
                outward[i][1]
            );
        }
        if let Some(out) = &crops {
            std::fs::create_dir_all(out)?;
            let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            let mosaic = corner_crops(&rgb, geom.corners(), truth, local, located.quality.cell_px);
            mosaic.save(out.join(format!("{name}.corners.png")))?;
        }
        records.push(FrameRecord { path: path.clone(), source: source_of(path), outward, thumb: thumbnail(&rgb) });
    }
    // Per corner and axis.
    println!("\nframes located {}", records.len());
    println!("signed label − located, in cells, outward positive (x: across the left/right edge, y: across the top/bottom edge)");
    let mut all = Vec::new();
    for (i, name) in ["TL", "TR", "BR", "BL"].iter().enumerate() {
        for axis in 0..2 {
            let v: Vec<f64> = records.iter().map(|r| r.outward[i][axis]).collect();
            all.extend_from_slice(&v);
            let (mean, median, sd) = stats(&v);
            println!("  {name} {}: mean {mean:+.3} median {median:+.3} sd {sd:.3}", ["x", "y"][axis]);
        }
    }
    let (mean, median, sd) = stats(&all);
    println!("  all 8 components: mean {mean:+.3} median {median:+.3} sd {sd:.3}");
    let mut hist = [0usize; 16];
    for v in &all {
        let b = ((v + 0.4) / 0.05).floor();
        hist[(b.max(0.0) as usize).min(15)] += 1;
    }
    println!("  histogram (0.05-cell bins from -0.40; ends open):");
    for (b, n) in hist.iter().enumerate() {
        let lo = -0.4 + 0.05 * b as f64;
        println!("    [{lo:+.2},{:+.2}) {n:4} {}", lo + 0.05, "#".repeat(n / 4));
    }
    for (name, v) in
        [("local line crossing − located", &local_vs_ours), ("label − local line crossing", &label_vs_local)]
    {
        let comps: Vec<f64> = v.iter().flatten().copied().collect();
        let dists: Vec<f64> = v.iter().map(|c| (c[0] * c[0] + c[1] * c[1]).sqrt()).collect();
        let (m, med, sd) = stats(&comps);
        let mut d = dists.clone();
        d.sort_by(f64::total_cmp);
        let q = |f: f64| d.get(((d.len() as f64 - 1.0) * f).round() as usize).copied().unwrap_or(f64::NAN);
        println!(
            "{name}: {} corners; outward components mean {m:+.3} median {med:+.3} sd {sd:.3}; distance median {:.3} p90 {:.3} p95 {:.3} max {:.3}; ≤0.1 cell {:.1} %",
            v.len(),
            q(0.5),
            q(0.9),
            q(0.95),
            q(1.0),
            100.0 * d.iter().filter(|&&x| x <= 0.1).count() as f64 / d.len().max(1) as f64
        );
    }
    verified_worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (subset, hand) in [("all", None), ("without a hand", Some(false)), ("with a hand", Some(true))] {
        let chosen: Vec<&(f64, f64, PathBuf)> =
            verified_worst.iter().filter(|v| hand.is_none_or(|h| shows_hand(&source_of(&v.2)) == h)).collect();
        let count = |f: &dyn Fn(&(f64, f64, PathBuf)) -> bool| chosen.iter().filter(|v| f(v)).count();
        println!(
            "frames ({subset}) with all 4 corners measured locally: {}; located worst corner vs local ≤0.1 cell {}, ≤0.25 cell {}; label worst corner vs local ≤0.25 cell {}, ≤0.5 cell {}",
            chosen.len(),
            count(&|v| v.0 <= 0.1),
            count(&|v| v.0 <= 0.25),
            count(&|v| v.1 <= 0.25),
            count(&|v| v.1 <= 0.5)
        );
    }
    for (w, lw, p) in verified_worst.iter().take(5) {
        println!("  located vs local {w:.3} (label vs local {lw:.3})  {}", p.display());
    }
    // Per-frame mean outward (rotation invariant), and its spread within and between source frames.
    let frame_mean = |r: &FrameRecord| r.outward.iter().flatten().sum::<f64>() / 8.0;
    let mut by_source: std::collections::BTreeMap<String, Vec<&FrameRecord>> = Default::default();
    for r in &records {
        by_source.entry(r.source.clone()).or_default().push(r);
    }
    let means: Vec<f64> = records.iter().map(frame_mean).collect();
    let (_, _, between_sd) = stats(&means);
    let mut within = Vec::new();
    let mut component_diffs = Vec::new();
    let mut rotations = [0usize; 4];
    for group in by_source.values() {
        if group.len() < 2 {
            continue;
        }
        let m = group.iter().map(|r| frame_mean(r)).sum::<f64>() / group.len() as f64;
        within.extend(group.iter().map(|r| frame_mean(r) - m));
        // Physical corner matching: the quarter turn that best aligns each augmentation with the
        // first one, then the same physical corner's components compared.
        let base = group[0];
        for other in &group[1..] {
            let (q, _) = (0..4)
                .map(|q| {
                    let t = rotate_thumb(&other.thumb, q);
                    (q, base.thumb.iter().zip(&t).map(|(a, b)| a * b).sum::<f64>())
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((0, 0.0));
            rotations[q] += 1;
            // `other` turned clockwise by q quarters looks like `base`: base corner i is other's
            // corner (i + 4 - q) % 4 as seen, and an odd turn swaps the x/y axes.
            for i in 0..4 {
                let j = (i + 4 - q) % 4;
                for axis in 0..2 {
                    let oa = if q % 2 == 1 { 1 - axis } else { axis };
                    component_diffs.push(base.outward[i][axis] - other.outward[j][oa]);
                }
            }
        }
    }
    let (_, _, within_sd) = stats(&within);
    println!(
        "\nper-frame mean outward over 8 components: sd over all frames {between_sd:.3}, sd within a source frame's augmentations {within_sd:.3}"
    );
    let (dm, dmed, dsd) = stats(&component_diffs);
    let mad = {
        let mut a: Vec<f64> = component_diffs.iter().map(|d| d.abs()).collect();
        a.sort_by(f64::total_cmp);
        a.get(a.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!(
        "same physical corner component, augmentation vs first augmentation: {} pairs, diff mean {dm:+.3} median {dmed:+.3} sd {dsd:.3}, median |diff| {mad:.3} (rotations found {rotations:?})",
        component_diffs.len()
    );
    let mut worst: Vec<(f64, &FrameRecord)> =
        records.iter().map(|r| (r.outward.iter().flatten().fold(0.0f64, |a, b| a.max(b.abs())), r)).collect();
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("largest |component| frames:");
    for (w, r) in worst.iter().take(10) {
        println!(
            "  {w:.3}  {}  {:?}",
            r.path.display(),
            r.outward.map(|c| [(c[0] * 100.0).round() / 100.0, (c[1] * 100.0).round() / 100.0])
        );
    }
    Ok(())
}

fn sheet(dir: &Path, prefix: &Path) -> Result<(), Box<dyn Error>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jpg"))
        .collect();
    paths.sort();
    paths.dedup_by(|a, b| source_of(a) == source_of(b));
    let thumb = 160u32;
    for (sheet_index, chunk) in paths.chunks(30).enumerate() {
        let mut out = RgbImage::new(6 * (thumb + 4), 5 * (thumb + 4));
        for (i, path) in chunk.iter().enumerate() {
            let rgb = decode_rgb(&std::fs::read(path)?)?.rgb;
            let small = image::imageops::resize(&rgb, thumb, thumb, image::imageops::FilterType::Triangle);
            let (x, y) = ((i % 6) as u32 * (thumb + 4), (i / 6) as u32 * (thumb + 4));
            image::imageops::replace(&mut out, &small, i64::from(x), i64::from(y));
            println!("sheet {sheet_index} row {} col {}: {}", i / 6, i % 6, source_of(path));
        }
        out.save(format!("{}{sheet_index}.png", prefix.display()))?;
    }
    Ok(())
}
