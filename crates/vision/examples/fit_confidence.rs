//! Fits the reader's confidence calibration (Platt scaling of the classifier's log-odds margin)
//! on labelled photos: locate + read every image with a `.grid.txt` under the given folders and
//! fit P(right) = 1 / (1 + exp(−(slope × margin + offset))) by maximum likelihood.
//! `cargo run -p tengen-vision --example fit_confidence -- DIR...` prints the two constants for
//! `reading::CONFIDENCE_SLOPE` / `CONFIDENCE_OFFSET` and a reliability table. With
//! `CHECK_ONLY=1` it keeps the reader's constants and prints the table for held-out folders.

use std::error::Error;
use std::path::{Path, PathBuf};

use tengen_vision::evaluate::{parse_grid, reading_grid, score, Symmetry};
use tengen_vision::image_io::decode_rgb;
use tengen_vision::reading::read_board_detailed;
use tengen_vision::{locate, LocateOptions, ReaderConfig};
use tengen_rules::PointState;

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "jpg") {
            out.push(p);
        }
    }
}

#[allow(clippy::needless_range_loop)] // reading and truth grids are indexed together
fn main() -> Result<(), Box<dyn Error>> {
    let mut samples: Vec<(f64, bool)> = Vec::new();
    for dir in std::env::args().skip(1) {
        let mut files = Vec::new();
        walk(Path::new(&dir), &mut files);
        files.sort();
        for path in files {
            let name = path.display().to_string();
            if name.ends_with("t2_053.jpg") || name.ends_with("t2_054.jpg") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(format!("{name}.grid.txt")) else { continue };
            let truth = parse_grid(&text)?;
            let frame = decode_rgb(&std::fs::read(&path)?)?;
            let Ok(found) = locate(&frame.rgb, &LocateOptions::default()) else { continue };
            let details = read_board_detailed(&frame.rgb, &found.geometry, &ReaderConfig::default());
            let read = reading_grid(&details.reading);
            let s = score(&read, &truth, true);
            let probe = read;
            let inverse = Symmetry::all().into_iter().find(|c| c.apply(&s.symmetry.apply(&probe)) == probe).unwrap_or(Symmetry::IDENTITY);
            let truth_seen = inverse.apply(&truth);
            for r in 0..19 {
                for c in 0..19 {
                    let p = details.reading.points[r][c];
                    if p.best_guess != PointState::Unknown {
                        samples.push((f64::from(details.margins[r][c]), p.best_guess == truth_seen[r][c]));
                    }
                }
            }
        }
    }
    // Newton's method on the two-parameter logistic log-likelihood, with a weak ridge so a
    // perfectly separated set still gives finite constants.
    let (mut a, mut b) = (0.1f64, 0.0f64);
    for _ in 0..100 {
        let (mut ga, mut gb, mut haa, mut hab, mut hbb) = (0.0, 0.0, 1e-3, 0.0, 1e-3);
        for &(m, right) in &samples {
            let p = 1.0 / (1.0 + (-(a * m + b)).exp());
            let y = if right { 1.0 } else { 0.0 };
            ga += (y - p) * m;
            gb += y - p;
            let w = p * (1.0 - p);
            haa += w * m * m;
            hab += w * m;
            hbb += w;
        }
        ga -= 1e-3 * a;
        gb -= 1e-3 * b;
        let det = haa * hbb - hab * hab;
        if det.abs() < 1e-12 {
            break;
        }
        let (da, db) = ((hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det);
        a += da;
        b += db;
        if da.abs() + db.abs() < 1e-9 {
            break;
        }
    }
    if std::env::var("CHECK_ONLY").is_ok() {
        // Keep the reader's constants: report how they fare on these folders.
        let config = ReaderConfig::default();
        a = config.confidence_slope;
        b = config.confidence_offset;
    }
    let wrong = samples.iter().filter(|s| !s.1).count();
    println!("points {} wrong {wrong}", samples.len());
    println!("CONFIDENCE_SLOPE = {a:.5}; CONFIDENCE_OFFSET = {b:.5}");
    let edges = [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999];
    let mut bins = vec![(0usize, 0usize, 0.0f64); edges.len()];
    for &(m, right) in &samples {
        let p = 1.0 / (1.0 + (-(a * m + b)).exp());
        let k = edges.iter().rposition(|e| p >= *e).unwrap_or(0);
        bins[k].0 += 1;
        bins[k].1 += usize::from(right);
        bins[k].2 += p;
    }
    for (k, (n, ok, sum)) in bins.iter().enumerate() {
        if *n > 0 {
            println!("conf >= {:<7} n {n:6} stated {:.4} observed {:.4}", edges[k], sum / *n as f64, *ok as f64 / *n as f64);
        }
    }
    Ok(())
}
