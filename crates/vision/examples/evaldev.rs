//! Development aid for studying misreads by hand, what `tengen eval photos` (the evaluation, with
//! the totals, the sources and the report) does not show: per photo under DIR, the features and
//! posteriors of every misread point, the point and cell behind each occlusion rule, and the
//! failing image drawn with its reading into OUT_DIR. Also reads unlabelled photos (NOTRUTH=1)
//! and photos the search misses, from corners typed by hand (ROUGH_CORNERS=FILE).
//! `evaldev DIR OUT_DIR`; env PATCH_MODEL=FILE (a learned reader from `tengen fit patch-reader`), DUMP=1 (features of every point), COVERED=1|all, CELLS=1, NOSAVE=1, FULL=1,
//! LABELS=1 (read on the labelled grid of a `.grid.json`, refined to the lines, as `tengen eval
//! photos --label-geometry` does; REFINED=1 prints whether the refinement took), CLASSES=1 (the
//! frame's classes after re-estimation), STONE_HEIGHT=H (the disc's height, in spacings),
//! SHIFT_ORACLE=1 (the labelled grid moved by up to ±0.2 spacing: the best move by the labels,
//! and the one the reader's certainty, margins capped at CAP=8, would choose), CLASSICAL=1 (no
//! learned reader), POSE=1 (the camera pose recovered from the grid, and the lean of a stone's
//! disc at the board's centre), HEIGHT_ORACLE=1 (the disc's height over 0–0.45 spacing: the best
//! by the labels, and the one the reader's certainty would choose).

use std::error::Error;
use std::path::{Path, PathBuf};

use tengen_vision::evaluate::{parse_grid, reading_grid, score};
use tengen_vision::{draw_reading, read_board_detailed};
use tengen_vision::{locate, LocateOptions, ReaderConfig};

#[path = "common/label_files.rs"]
mod label_files;
#[path = "common/picture.rs"]
mod picture;

/// Rough corners typed by a developer from a look at the photo (file named by ROUGH_CORNERS).
fn rough_corners(path: &Path) -> Option<[[f64; 2]; 4]> {
    let file = std::env::var("ROUGH_CORNERS").ok()?;
    let text = std::fs::read_to_string(file).ok()?;
    let p = path.display().to_string();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let key = parts.next()?;
        if p.contains(key) {
            let v: Vec<f64> = parts.filter_map(|x| x.parse().ok()).collect();
            if v.len() == 8 {
                return Some([[v[0], v[1]], [v[2], v[3]], [v[4], v[5]], [v[6], v[7]]]);
            }
        }
    }
    None
}

/// With LABELS=1, the grid of the photo's `.grid.json` corners refined to the lines.
fn labelled_geometry(path: &Path, rgb: &image::RgbImage) -> Option<tengen_vision::Located> {
    std::env::var("LABELS").ok()?;
    let text = std::fs::read_to_string(format!("{}.grid.json", path.display())).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let c = json.get("corners_px")?.as_array()?;
    let xy = |k: usize| -> Option<[f64; 2]> {
        let p = c.get(k)?.as_array()?;
        Some([p.first()?.as_f64()?, p.get(1)?.as_f64()?])
    };
    let corners = [xy(0)?, xy(1)?, xy(2)?, xy(3)?];
    let gray = image::DynamicImage::ImageRgb8(rgb.clone()).into_luma8();
    let given = tengen_vision::locate::refine_corners(&gray, corners, None).ok()?;
    if std::env::var("REFINED").is_ok() {
        println!("R {} {:?}", path.display(), given.refinement);
    }
    Some(given.located)
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(args.get(1).ok_or("usage: evaldev DIR OUT_DIR")?);
    let outdir = PathBuf::from(args.get(2).ok_or("usage: evaldev DIR OUT_DIR")?);
    std::fs::create_dir_all(&outdir)?;
    let mut files = Vec::new();
    label_files::walk_images(&dir, &["jpg", "png"], &mut files);
    files.sort();
    let mut config = ReaderConfig::default();
    // READER_MODEL / OCCLUSION_MODEL: read with a model file written by `tengen fit reader` /
    // `tengen fit occlusion` (e.g. one fitted `--without` this source: its left-out figures).
    if let Ok(file) = std::env::var("READER_MODEL") {
        let m: tengen_vision::fit::ReaderModelFile = toml::from_str(&std::fs::read_to_string(file)?)?;
        config.model = m.model;
    }
    // PATCH_MODEL: read with a learned reader written by `tengen fit patch-reader --out FILE`
    // (e.g. one fitted `--without` this source: its left-out reading).
    if let Ok(file) = std::env::var("PATCH_MODEL") {
        let m = tengen_vision::PatchModel::from_json(&std::fs::read_to_string(file)?)?;
        config.patch_model = Some(Box::leak(Box::new(m)));
    }
    // CLASSICAL=1: without the learned reader.
    if std::env::var("CLASSICAL").is_ok() {
        config.patch_model = None;
    }
    if let Some(h) = std::env::var("STONE_HEIGHT").ok().and_then(|v| v.parse().ok()) {
        config.stone_height = h;
    }
    if let Ok(file) = std::env::var("OCCLUSION_MODEL") {
        let m: tengen_vision::fit::OcclusionModelFile = toml::from_str(&std::fs::read_to_string(file)?)?;
        config.occlusion_model = Some(m.model);
    }
    for path in files {
        let truth_path = PathBuf::from(format!("{}.grid.txt", path.display()));
        // NOTRUTH=1 also reads unlabelled photos (scored against an empty board) to inspect flags.
        let truth_text = match std::fs::read_to_string(&truth_path) {
            Ok(t) => t,
            Err(_) if std::env::var("NOTRUTH").is_ok() => vec![".".repeat(19); 19].join("\n"),
            Err(_) => continue,
        };
        let name = path.file_name().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        // Mislabelled (the labels move stones the photo shows unchanged); `tengen eval` skips them too.
        if name == "t2_053.jpg" || name == "t2_054.jpg" {
            continue;
        }
        let truth = parse_grid(&truth_text)?;
        let frame = tengen_vision::decode_rgb(&std::fs::read(&path)?)?;
        let t0 = std::time::Instant::now();
        let labelled = labelled_geometry(&path, &frame.rgb);
        let located = match labelled.map_or_else(|| locate(&frame.rgb, &LocateOptions::default()), Ok) {
            Ok(l) => l,
            Err(e) if rough_corners(&path).is_some() => {
                let corners = rough_corners(&path).unwrap_or_default();
                let lens = tengen_vision::LensDistortion::none(frame.rgb.width(), frame.rgb.height());
                let given = tengen_vision::locate::from_corners(corners, lens)?;
                let gray = image::DynamicImage::ImageRgb8(frame.rgb.clone()).into_luma8();
                match tengen_vision::locate::refine_gray(&gray, &given.geometry) {
                    Ok(l) => {
                        println!("{} (locate failed: {e}; refined from rough corners)", path.display());
                        l
                    }
                    Err(e2) => {
                        println!("{} (locate failed: {e}; refine failed: {e2}; rough corners)", path.display());
                        given
                    }
                }
            }
            Err(e) => {
                println!("{} NOT LOCATED: {e}", path.display());
                continue;
            }
        };
        let t1 = t0.elapsed();
        if std::env::var("SHIFT_ORACLE").is_ok() {
            // Diagnostic: the whole grid moved by (dx, dy) board spacings, scored against the
            // labels — how much a frame-wide correction of the grid could gain at best.
            let mut best = (0u64, 0.0, 0.0);
            let mut at_zero = 0;
            let mut chosen = (f32::NEG_INFINITY, 0u64, 0.0, 0.0);
            for iy in -4..=4 {
                for ix in -4..=4 {
                    let (dx, dy) = (f64::from(ix) * 0.05, f64::from(iy) * 0.05);
                    let mut g = located.geometry.clone();
                    let h = g.homography;
                    for (r, hr) in h.iter().enumerate() {
                        g.homography[r][2] = hr[0] * dx + hr[1] * dy + hr[2];
                    }
                    let d = read_board_detailed(&frame.rgb, &g, &config);
                    let right = score(&reading_grid(&d.reading), &truth, true).confusion.correct();
                    if ix == 0 && iy == 0 {
                        at_zero = right;
                    }
                    if right > best.0 {
                        best = (right, dx, dy);
                    }
                    // Without the labels: how sure the reader is of the frame's points.
                    let cap: f32 = std::env::var("CAP").ok().and_then(|v| v.parse().ok()).unwrap_or(8.0);
                    let sure: f32 = d.margins.iter().flatten().map(|m| m.min(cap)).sum();
                    if sure > chosen.0 {
                        chosen = (sure, right, dx, dy);
                    }
                }
            }
            println!(
                "SHIFT {name} at_zero {at_zero} best {} at ({:.2}, {:.2}) chosen {} at ({:.2}, {:.2})",
                best.0, best.1, best.2, chosen.1, chosen.2, chosen.3
            );
            continue;
        }
        if std::env::var("POSE").is_ok() {
            // The camera pose recovered from the grid (where the reader puts a stone's top).
            if let Some(cam) = tengen_vision::stages::CameraFoot::estimate(&located.geometry) {
                let top = cam.raised([9.0, 9.0], config.stone_height);
                println!(
                    "P {name} foot ({:.1}, {:.1}) height {:.1} centre top shift ({:.3}, {:.3})",
                    cam.foot[0],
                    cam.foot[1],
                    cam.height,
                    top[0] - 9.0,
                    top[1] - 9.0
                );
            }
        }
        if std::env::var("HEIGHT_ORACLE").is_ok() {
            // Diagnostic: the stone disc's height (in spacings) tried over 0–0.45, scored against
            // the labels — the best, and the one the reader's own certainty (margins capped at
            // CAP=8) would choose without them.
            let cap: f32 = std::env::var("CAP").ok().and_then(|v| v.parse().ok()).unwrap_or(8.0);
            let mut line = String::new();
            let (mut best, mut chosen) = ((0u64, 0.0), (f32::NEG_INFINITY, 0u64, 0.0));
            for step in 0..=9 {
                let h = f64::from(step) * 0.05;
                let c = ReaderConfig { stone_height: h, ..config };
                let d = read_board_detailed(&frame.rgb, &located.geometry, &c);
                let right = score(&reading_grid(&d.reading), &truth, true).confusion.correct();
                let sure: f32 = d.margins.iter().flatten().map(|m| m.min(cap)).sum();
                line.push_str(&format!(" {h:.2}:{right}"));
                if right > best.0 {
                    best = (right, h);
                }
                if sure > chosen.0 {
                    chosen = (sure, right, h);
                }
            }
            println!("H {name}{line} best {} at {:.2} chosen {} at {:.2}", best.0, best.1, chosen.1, chosen.2);
            continue;
        }
        let details = read_board_detailed(&frame.rgb, &located.geometry, &config);
        let t2 = t0.elapsed() - t1;
        let read = reading_grid(&details.reading);
        let s = score(&read, &truth, true);
        // The truth turned into the reading's orientation, point by point.
        let truth_in_read = s.symmetry.inverse().apply(&truth);
        println!(
            "{} ok {}/{} wrong {} unk {} occl {} (cells {} covered {} crossed {}, points {}) sym {:?} locate {:?} read {:?}",
            path.display(),
            s.confusion.correct(),
            s.confusion.total(),
            s.confusion.wrong(),
            s.confusion.unknown(),
            details.reading.occluded,
            details.occlusion.foreign_cells,
            details.occlusion.covered_points,
            details.occlusion.crossed_points,
            details.reading.occluded_points.len(),
            (s.symmetry.transpose, s.symmetry.quarter_turns),
            t1,
            t2
        );
        if std::env::var("CLASSES").is_ok() {
            // The frame's classes after re-estimation: mean / spread per feature.
            for (k, (m, sd)) in details.class_model.iter().enumerate() {
                let f = |v: &Vec<f64>| v.iter().map(|x| format!("{x:6.2}")).collect::<Vec<_>>().join(" ");
                println!("K {name} {} mean {} sd {}", [".", "X", "O"][k], f(m), f(sd));
            }
        }
        if std::env::var("BREAKDOWN").is_ok() {
            // Where the points are lost: `?` under the occlusion mask or from the reader itself,
            // and the wrong reads by confusion (truth → read).
            let masked: std::collections::HashSet<(u8, u8)> = details.reading.occluded_points.iter().copied().collect();
            let (mut unk_mask, mut unk_reader) = (0, 0);
            let mut conf = std::collections::BTreeMap::new();
            for r in 0..19 {
                for c in 0..19 {
                    let (t, g) = (truth_in_read[r][c], read[r][c]);
                    if g == tengen_rules::PointState::Unknown {
                        if masked.contains(&(c as u8, r as u8)) {
                            unk_mask += 1;
                        } else {
                            unk_reader += 1;
                        }
                    } else if t != g {
                        *conf.entry(format!("{}>{}", t.to_char(), g.to_char())).or_insert(0) += 1;
                    }
                }
            }
            println!("B {name} unk_mask {unk_mask} unk_reader {unk_reader} wrong {conf:?}");
        }
        if std::env::var("COVSTATS").is_ok() {
            let e = &details.occlusion;
            println!(
                "V {name} occl {} cells {} largest_patch {} covered {} largest_covered {} edge {} crossed {} lineless {:.3} hidden {:.2}",
                details.reading.occluded, e.foreign_cells, e.largest_patch, e.covered_points, e.largest_covered,
                e.covered_at_edge, e.crossed_points, e.lineless_share, e.hidden_lines
            );
        }
        if std::env::var("CELLSTATS").is_ok() {
            // Inner cells' colour distance from the board colour, and how many hide their lines.
            let mut d: Vec<f32> = Vec::new();
            let mut hidden = 0;
            for j in 1..19 {
                for i in 1..19 {
                    let k = j * 20 + i;
                    if details.colour.distance[k].is_finite() {
                        d.push(details.colour.distance[k]);
                    }
                    hidden += usize::from(details.colour.lattice[k] < 0.5);
                }
            }
            d.sort_by(f32::total_cmp);
            let q = |f: f64| d.get(((d.len().saturating_sub(1)) as f64 * f) as usize).copied().unwrap_or(f32::NAN);
            let g = details.colour.global;
            println!(
                "S {name} board [{:.0} {:.0} {:.0}] d q25 {:.2} q50 {:.2} q75 {:.2} q90 {:.2} hidden {hidden}/324 foreign>2&hidden {}",
                g[0], g[1], g[2], q(0.25), q(0.5), q(0.75), q(0.9),
                (0..400).filter(|&k| { let (i,j)=(k%20,k/20); i>0&&j>0&&i<19&&j<19 && details.colour.distance[k] > 2.0 && details.colour.lattice[k] < 0.5 }).count()
            );
        }
        if std::env::var("DUMP").is_ok() {
            let t = &truth_in_read;
            for r in 0..19 {
                for c in 0..19 {
                    let f = details.features[r][c];
                    let p = details.posteriors[r][c];
                    println!(
                        "D {} {} {:.3} {:.3} {:.3} {:.3} {:.3} {:.3} {} {r} {c} {:.3} {:.3} {:.1} {} {:.4} {:.4} {:.4} {:.2}",
                        t[r][c].to_char(),
                        read[r][c].to_char(),
                        f.brightness,
                        f.dark_tail,
                        f.neutral,
                        f.green_red,
                        f.lines,
                        f.weakest_arm,
                        name,
                        f.spread,
                        f.colour_distance,
                        f.luma,
                        u8::from(f.valid),
                        p[0],
                        p[1],
                        p[2],
                        details.margins[r][c]
                    );
                }
            }
        }
        if details.reading.occluded
            || !details.reading.occluded_points.is_empty()
            || std::env::var("COVERED").is_ok_and(|v| v == "all")
        {
            println!("   occluded points {:?}", details.reading.occluded_points);
            // Which rule fired: the cell-centre test alone (the rest is the covered-point and
            // edge-crossing tests).
            let stones: Vec<[bool; 19]> = details
                .posteriors
                .iter()
                .map(|row| std::array::from_fn(|c| row[c][1].max(row[c][2]) > row[c][0]))
                .collect();
            let camera = tengen_vision::stages::CameraFoot::estimate(&located.geometry);
            let under = tengen_vision::stages::cells_under_stones(camera.as_ref(), &stones);
            let cells = tengen_vision::stages::detect_occlusion(&details.colour, &under, &config.occlusion);
            let core: Vec<(usize, usize)> =
                (0..20 * 20).filter(|&k| cells.cells[k]).map(|k| (k % 20, k / 20)).collect();
            println!("   cell-centre rule: occluded {} cells {:?}", cells.occluded, core);
            if std::env::var("CELLS").is_ok() {
                // The cell-centre measurements behind the cell rule, for study.
                for &(i, j) in &core {
                    let k = j * 20 + i;
                    let c = details.colour.cells[k];
                    println!(
                        "   K i{i:2} j{j:2} rgb [{:.0} {:.0} {:.0}] board [{:.0} {:.0} {:.0}] distance {:.2} lattice {:.2}",
                        c[0], c[1], c[2], details.colour.global[0], details.colour.global[1], details.colour.global[2],
                        details.colour.distance[k], details.colour.lattice[k]
                    );
                    let g = details.colour.global;
                    let t: Vec<f32> = (0..3).map(|n| (c[n] - g[n]) / (255.0 - g[n]).max(1.0)).collect();
                    println!("   T {:.2} {:.2} {:.2}", t[0], t[1], t[2]);
                }
            }
            if std::env::var("COVERED").is_ok() {
                // Candidates of the covered-point rule (board colour, no lines), for study.
                for r in 0..19 {
                    for c in 0..19 {
                        let f = details.features[r][c];
                        let all = std::env::var("COVERED").is_ok_and(|v| v == "all");
                        if all
                            || (f.valid
                                && f.colour_distance < 0.8
                                && f.lines < 0.03
                                && f.spread < 1.0
                                && f.brightness.abs() < 0.3)
                        {
                            let p = details.posteriors[r][c];
                            println!(
                                "   C r{r:2} c{c:2} bright {:.2} tail {:.2} neutral {:.2} gr {:.2} cdist {:.2} lines {:.3} spread {:.2} post [{:.2} {:.2} {:.2}] margin {:.1} luma {:.0}",
                                f.brightness, f.dark_tail, f.neutral, f.green_red, f.colour_distance, f.lines, f.spread, p[0], p[1], p[2], details.margins[r][c], f.luma
                            );
                        }
                    }
                }
            }
        }
        if !s.exact {
            for r in 0..19 {
                for c in 0..19 {
                    if truth_in_read[r][c] != read[r][c] {
                        let f = details.features[r][c];
                        let p = details.posteriors[r][c];
                        println!(
                            "   r{r:2} c{c:2} true {} read {} bright {:.2} tail {:.2} neutral {:.2} gr {:.2} cdist {:.2} lines {:.3} spread {:.2} post [{:.2} {:.2} {:.2}]",
                            truth_in_read[r][c].to_char(), read[r][c].to_char(), f.brightness, f.dark_tail, f.neutral, f.green_red, f.colour_distance, f.lines, f.spread, p[0], p[1], p[2]
                        );
                    }
                }
            }
            if std::env::var("NOSAVE").is_ok() {
                continue;
            }
            let mut img = frame.rgb.clone();
            draw_reading(&mut img, &located.geometry, &details.reading);
            let img = if std::env::var("FULL").is_err() { picture::fit_within(img, 1400) } else { img };
            img.save(outdir.join(format!("{}.png", name)))?;
        }
    }
    Ok(())
}
