//! Board location on real photos from `../shared/datasets/photos` (skipped with a printed line
//! when absent): corner error in cells against the roboflow-corners labels and against the outer
//! line crossings measured from the pixels (a sample of the frames, to keep the test quick; `cargo run --release -p tengen-vision --example locate_eval
//! -- corners DIR` runs all of them), and located-or-not on imago-tests and gomrade-singles.

use std::path::PathBuf;

use tengen_rules::BOARD_LINES;
use tengen_vision::decode_rgb;
use tengen_vision::evaluate::parse_corners_label;
use tengen_vision::locate::crossings::measure_corners;
use tengen_vision::{locate, LocateOptions};

mod common;

use common::{jpegs_under as images_under, photos, roboflow_training_images};

/// Worst corner distance in cells of the labelled board, best of the 4 cyclic orders.
fn corner_error_cells(found: [[f64; 2]; 4], truth: [[f64; 2]; 4]) -> f64 {
    let dist = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    let cell = (0..4).map(|i| dist(truth[i], truth[(i + 1) % 4])).sum::<f64>() / 4.0 / (BOARD_LINES - 1) as f64;
    (0..4)
        .map(|rot| (0..4).map(|i| dist(found[(i + rot) % 4], truth[i])).fold(0.0, f64::max) / cell)
        .fold(f64::INFINITY, f64::min)
}

/// Worst corner distance, each in its own local cell (`cells`, as measured at the labelled
/// corners), best of the 4 cyclic orders.
fn corner_error_local_cells(found: [[f64; 2]; 4], truth: [[f64; 2]; 4], cells: [f64; 4]) -> f64 {
    let dist = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).hypot(a[1] - b[1]);
    (0..4)
        .map(|rot| (0..4).map(|i| dist(found[(i + rot) % 4], truth[i]) / cells[i]).fold(0.0, f64::max))
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn roboflow_corner_error_distribution() {
    let Some(dir) = roboflow_training_images() else { return };
    let frames = images_under(&dir);
    // Every 6th frame: 45 of 270, spread over all source frames and augmentations.
    let sample: Vec<&PathBuf> = frames.iter().step_by(6).collect();
    let mut errors = Vec::new();
    let mut not_located = 0;
    // Located corner against the outer lines measured straight from the pixels near it, in cells:
    // free of the labels' own error (their boxes sit about 0.1 cell inside the line crossings).
    let mut crossing_errors = Vec::new();
    let mut corners_seen = 0;
    for path in &sample {
        let label = PathBuf::from(format!("{}.corners.json", path.display()));
        let Some(truth) = std::fs::read_to_string(&label).ok().and_then(|s| parse_corners_label(&s).ok()) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(path) else { continue };
        let Ok(frame) = decode_rgb(&bytes) else { panic!("{} does not decode", path.display()) };
        match locate(&frame.rgb, &LocateOptions::default()) {
            Ok(l) => {
                errors.push(corner_error_cells(l.geometry.corners(), truth));
                let measured = measure_corners(&frame.rgb, &l.geometry);
                corners_seen += 4;
                for (m, c) in measured.iter().zip(l.geometry.corners()) {
                    if let Some(m) = m {
                        let d = ((m[0] - c[0]).powi(2) + (m[1] - c[1]).powi(2)).sqrt();
                        crossing_errors.push(d / l.quality.cell_px);
                    }
                }
            }
            Err(_) => not_located += 1,
        }
    }
    crossing_errors.sort_by(f64::total_cmp);
    let near_crossing = crossing_errors.iter().filter(|&&e| e <= 0.1).count();
    println!(
        "located corners against the measured line crossings: {} of {corners_seen} measurable, ≤0.1 cell {near_crossing}, median {:.3} cell, max {:.3} cell",
        crossing_errors.len(),
        crossing_errors.get(crossing_errors.len() / 2).copied().unwrap_or(f64::NAN),
        crossing_errors.last().copied().unwrap_or(f64::NAN)
    );
    errors.sort_by(f64::total_cmp);
    let n = sample.len();
    let within = |t: f64| errors.iter().filter(|&&e| e <= t).count();
    println!(
        "roboflow sample {n}: located {}, not located {not_located}; worst corner ≤0.25 cell {}, ≤0.5 cell {}, ≤1 cell {}; median {:.3}",
        errors.len(),
        within(0.25),
        within(0.5),
        within(1.0),
        errors.get(errors.len() / 2).copied().unwrap_or(f64::NAN)
    );
    // The labels are loose boxes around each corner (centres 0.1 cell inside the line crossings
    // on average, ±0.09 cell scatter per axis; `locate_eval analyse`), so against them the bounds
    // only catch gross regressions. Some frames show a hand or a blurred, crowded board.
    assert!(errors.len() * 100 >= n * 95, "located only {} of {n}", errors.len());
    assert!(within(0.5) * 100 >= n * 90, "only {} of {n} within half a cell", within(0.5));
    assert!(within(1.0) == errors.len(), "gross errors: {errors:?}");
    // Against the pixels themselves the located corners must be tight (measured on this sample:
    // 124 of 131 within 0.1 cell, median 0.025; the rest are blurred corners where the local
    // measurement itself wanders, judged on 8× crops).
    assert!(crossing_errors.len() * 2 >= corners_seen, "too few corners measurable: {}", crossing_errors.len());
    assert!(
        near_crossing * 100 >= crossing_errors.len() * 90,
        "only {near_crossing} corners within 0.1 cell of the crossing"
    );
    let median = crossing_errors.get(crossing_errors.len() / 2).copied().unwrap_or(f64::NAN);
    assert!(median <= 0.05, "median distance from the crossing {median:.3} cell");
}

#[test]
fn imago_and_gomrade_boards_are_located() {
    let Some(root) = photos() else { return };
    let mut frames: Vec<PathBuf> = images_under(&root.join("gomrade-singles"));
    // Every 4th imago frame keeps the test quick; the example `locate_eval folder` runs all.
    frames.extend(images_under(&root.join("imago-tests")).into_iter().step_by(4));
    let mut missed = Vec::new();
    for path in &frames {
        let Ok(bytes) = std::fs::read(path) else { continue };
        let Ok(frame) = decode_rgb(&bytes) else { panic!("{} does not decode", path.display()) };
        match locate(&frame.rgb, &LocateOptions::default()) {
            Ok(l) => {
                assert!(l.quality.rms_error_cells < 0.07, "{}: {:?}", path.display(), l.quality);
            }
            Err(e) => missed.push(format!("{}: {e}", path.display())),
        }
    }
    println!("imago + gomrade: located {} of {}", frames.len() - missed.len(), frames.len());
    assert!(missed.is_empty(), "{missed:?}");
}

/// Frames the locator used to miss, one per way it missed: a crowded board whose stone rows
/// outvoted a grid family (74, 58), a blurred board whose one dominant straight edge kept every
/// grid line under the Hough floor (22, 24), faint red lines on a noisy frame (27); and a crowded
/// board where, once those were fixed, a grid at half the row spacing passed every other check
/// (94). Each must be located with its corners on the measured line crossings and near the labels.
#[test]
fn formerly_missed_crowded_and_faint_boards_are_located() {
    let Some(dir) = roboflow_training_images() else { return };
    let names = [
        "74_jpg.rf.42f8aaa9d0ce1d57ac1856425ed36d58.jpg",
        "58_jpg.rf.6fbda9a96dc547416dc354271b3bbf7f.jpg",
        "22_jpg.rf.87a3064a86ad175af7a1f3cf0424daee.jpg",
        "24_jpg.rf.ca11e07804f3a71f26186aadbe63dd3b.jpg",
        "27_jpg.rf.4ae5b424af8f499316432936e254b6c4.jpg",
        "94_jpg.rf.18f7647e4b300d0c87f8d949d5541801.jpg",
    ];
    for name in names {
        let path = dir.join(name);
        let Ok(bytes) = std::fs::read(&path) else {
            println!("SKIP: {name} not present");
            continue;
        };
        let Ok(frame) = decode_rgb(&bytes) else { panic!("{name} does not decode") };
        let label = std::fs::read_to_string(dir.join(format!("{name}.corners.json")))
            .ok()
            .and_then(|s| parse_corners_label(&s).ok());
        let located = match locate(&frame.rgb, &LocateOptions::default()) {
            Ok(l) => l,
            Err(e) => panic!("{name}: {e}"),
        };
        let corners = located.geometry.corners();
        if let Some(truth) = label {
            let err = corner_error_cells(corners, truth);
            assert!(err <= 0.5, "{name}: worst corner {err:.2} cell from the label");
        }
        let measured = measure_corners(&frame.rgb, &located.geometry);
        for (m, c) in measured.iter().zip(corners) {
            if let Some(m) = m {
                let d = ((m[0] - c[0]).powi(2) + (m[1] - c[1]).powi(2)).sqrt() / located.quality.cell_px;
                assert!(d <= 0.15, "{name}: a corner {d:.2} cell from the measured crossing");
            }
        }
        println!(
            "{name}: located, {} inliers, {} corners measured",
            located.quality.inlier_intersections,
            measured.iter().flatten().count()
        );
    }
}

/// The labelled intersections' spacing at each corner of a goban-watcher `.grid.json`
/// (`points_px`, 19 rows of 19), in pixels, in the order of its four corners.
fn local_cells_at_corners(label: &str) -> Option<[f64; 4]> {
    let v: serde_json::Value = serde_json::from_str(label).ok()?;
    let rows = v.get("points_px")?.as_array()?;
    let at = |r: usize, c: usize| -> Option<[f64; 2]> {
        let p = rows.get(r)?.as_array()?.get(c)?.as_array()?;
        Some([p.first()?.as_f64()?, p.get(1)?.as_f64()?])
    };
    let dist = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).hypot(a[1] - b[1]);
    let last = BOARD_LINES - 1;
    let mut cells = [0.0; 4];
    for (k, &(r, c, down, right)) in
        [(0, 0, 1, 1), (0, last, 1, last - 1), (last, last, last - 1, last - 1), (last, 0, last - 1, 1)]
            .iter()
            .enumerate()
    {
        cells[k] = (dist(at(r, c)?, at(down, c)?) + dist(at(r, c)?, at(r, right)?)) / 2.0;
    }
    Some(cells)
}

/// goban-watcher-dev game 1: a crowded end position (about 280 stones) under eight coloured
/// lamps, seen obliquely. The line looks find too few crossings between the stones; the fifth
/// look's lattice of the stones, placed by the stones themselves where the crossings cannot
/// tell its phase, finds most of the photos (before it: 3 of 17), and with the stones' outlines
/// as a third try 15 of these 16 (before: 13), and with the outline and stones' looks on the
/// standard luma where every look fails, all 16 (the test asks for 15). The phone did not move
/// between the game's photos, but one clicked corner varies by up to about half a cell from
/// photo to photo (three agree within 4 px): the truth is each corner's median over the
/// game's clicks, and every grid found must have each corner within half of that corner's own
/// cell of it (on this oblique view the near cells are 1.25 times the mean, the far 0.8).
/// 4 of the 16 are within a quarter of a cell (the test asks for 3).
#[test]
fn crowded_oblique_boards_under_coloured_lamps_are_located_from_their_stones() {
    crowded_game_is_located("goban-watcher-dev/1", 15, 16, 3);
}

/// goban-watcher-dev game 2: a crowded end position with green stones under the same
/// lamps. With the stones' outlines as the fifth look's third try, 8 of its 14 photos are
/// found (before: 2); with the outline and stones' looks on the standard luma where every
/// look on the search's grey fails (the green stones tie with the wood there under some
/// lamps), 13 (the test asks for 12), each within half a local cell of the game's median clicks.
/// With the grids refitted to the crossings between the stones (`stones::refined_between_stones`),
/// 12 of the 14 are within a quarter of a cell (before: 6; the test asks for 11): the line fits
/// had put the far rows on the gaps between the stones.
#[test]
fn crowded_green_stones_are_located_from_their_outlines() {
    crowded_game_is_located("goban-watcher-dev/2", 6, 7, 11);
}

/// At least `share_num`/`share_den` of the game's labelled `.jpg` photos located, each with every
/// corner within half of its own cell of the median of the game's clicked corners, and at least
/// `quarter_min` of them within a quarter of a cell.
fn crowded_game_is_located(game: &str, share_num: usize, share_den: usize, quarter_min: usize) {
    let Some(root) = photos() else { return };
    let dir = root.join(game);
    let labelled: Vec<(PathBuf, [[f64; 2]; 4], [f64; 4])> = images_under(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jpg"))
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let label = std::fs::read_to_string(dir.join(format!("{name}.grid.json"))).ok()?;
            Some((p, parse_corners_label(&label).ok()?, local_cells_at_corners(&label)?))
        })
        .collect();
    if labelled.is_empty() {
        println!("SKIP: {} has no labelled photos", dir.display());
        return;
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let truth: [[f64; 2]; 4] = std::array::from_fn(|k| {
        std::array::from_fn(|axis| median(labelled.iter().map(|(_, c, _)| c[k][axis]).collect()))
    });
    let cells: [f64; 4] = std::array::from_fn(|k| median(labelled.iter().map(|(_, _, l)| l[k]).collect()));
    let mut located = 0;
    let mut within_quarter = 0;
    for (path, _, _) in &labelled {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let Ok(bytes) = std::fs::read(path) else { continue };
        let Ok(frame) = decode_rgb(&bytes) else { panic!("{name} does not decode") };
        match locate(&frame.rgb, &LocateOptions::default()) {
            Ok(l) => {
                let err = corner_error_local_cells(l.geometry.corners(), truth, cells);
                println!("{name}: located, worst corner {err:.2} of its cell from the game's median clicks");
                assert!(err <= 0.5, "{name}: worst corner {err:.2} of its cell from the game's median clicks");
                located += 1;
                within_quarter += usize::from(err <= 0.25);
            }
            Err(e) => println!("{name}: not located: {e}"),
        }
    }
    assert!(
        located * share_den >= labelled.len() * share_num,
        "{game}: only {located} of {} crowded photos located",
        labelled.len()
    );
    println!("{game}: {within_quarter} of {} located within a quarter of a cell", labelled.len());
    assert!(within_quarter >= quarter_min, "{game}: only {within_quarter} photos within a quarter of a cell");
}

/// goban-watcher-dev game 1's 12 MP phone photo: the crowded board turned about 30° in the frame
/// on a floor of the same light wood. The working image (a fifth of the frame a side) keeps the
/// few bare crossings a pixel or two across; the first look's lattice is right but its refinement
/// there falls short of the inliers it needs, so the search used to fail ("only 2 grid
/// intersections seen"). Refined once more at twice the working resolution it is found, each
/// corner within half of its own cell of the person's clicks.
#[test]
fn a_large_photo_of_a_crowded_board_is_refined_finer_than_the_working_image() {
    let Some(root) = photos() else { return };
    let path = root.join("goban-watcher-dev/1/IMG_1688.jpeg");
    let (Ok(bytes), Ok(label)) = (std::fs::read(&path), std::fs::read_to_string(path.with_extension("jpeg.grid.json")))
    else {
        println!("SKIP: {} or its label is missing", path.display());
        return;
    };
    let truth = parse_corners_label(&label).expect("the label parses");
    let cells = local_cells_at_corners(&label).expect("the label has its points");
    let frame = decode_rgb(&bytes).expect("the photo decodes");
    let found = locate(&frame.rgb, &LocateOptions::default()).expect("the board is located").geometry.corners();
    let err = corner_error_local_cells(found, truth, cells);
    assert!(err <= 0.5, "worst corner {err:.2} of its cell from the clicks");
}
