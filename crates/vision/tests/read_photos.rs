//! The whole pipeline — decode with EXIF orientation, automatic location, reading — on real
//! labelled photos from `../shared/datasets/photos` (skipped with a printed line when absent).
//! Scored as the best of the 8 board symmetries: a photo has no canonical "up".

#![allow(clippy::expect_used)] // a test that cannot render or read its fixture should fail loudly

use std::path::{Path, PathBuf};

use tengen_vision::evaluate::{parse_grid, reading_grid, score, Confusion};
use tengen_vision::image_io::decode_rgb;
use tengen_vision::{locate, read_board, LocateOptions, ReaderConfig};

mod common;

use common::{jpegs_under, photos};

/// The photos under `dir` that have a per-point ground truth.
fn labelled(dir: &Path) -> Vec<PathBuf> {
    jpegs_under(dir).into_iter().filter(|p| PathBuf::from(format!("{}.grid.txt", p.display())).exists()).collect()
}

/// (located boards, exact boards, confusion) over a folder.
fn evaluate(folder: &Path) -> (usize, usize, usize, Confusion) {
    let mut total = Confusion::default();
    let (mut images, mut located, mut exact) = (0, 0, 0);
    for path in labelled(folder) {
        let name = path.display().to_string();
        if name.ends_with("t2_053.jpg") || name.ends_with("t2_054.jpg") {
            continue; // mislabelled in the source
        }
        images += 1;
        let truth = parse_grid(&std::fs::read_to_string(format!("{name}.grid.txt")).expect("label readable")).expect("label parses");
        let frame = decode_rgb(&std::fs::read(&path).expect("photo readable")).expect("photo decodes");
        let Ok(found) = locate(&frame.rgb, &LocateOptions::default()) else {
            println!("{name}: not located");
            continue;
        };
        located += 1;
        let reading = read_board(&frame.rgb, &found.geometry, &ReaderConfig::default());
        let s = score(&reading_grid(&reading), &truth, true);
        total.merge(&s.confusion);
        exact += usize::from(s.exact);
        if !s.exact {
            println!("{name}: {} wrong, {} unknown", s.confusion.wrong(), s.confusion.unknown());
        }
    }
    (images, located, exact, total)
}

#[test]
fn imago_sequences_and_gomrade_singles_are_read() {
    let Some(dir) = photos() else {
        println!("../shared/datasets/photos absent: skipping the real-photo test");
        return;
    };
    // Bounds a little under what was measured on 29 Nov after the edge-crossing and
    // line-visibility changes (t1 100 %, t2 100 %, t3 99.80 % — the hands of t3_003 and t3_005
    // read `?`, one finger wrong — gomrade 99.89 %, its 2 misses being label omissions), so a real
    // regression in location or reading fails here.
    for (folder, min_accuracy) in
        [("imago-tests/t1", 0.998), ("imago-tests/t2", 0.999), ("imago-tests/t3", 0.997), ("gomrade-singles", 0.997)]
    {
        let (images, located, exact, c) = evaluate(&dir.join(folder));
        let accuracy = c.correct() as f64 / c.total().max(1) as f64;
        println!(
            "{folder}: {located}/{images} located, {exact} exact, points {}/{} ({:.3} %), {} wrong, {} unknown",
            c.correct(),
            c.total(),
            accuracy * 100.0,
            c.wrong(),
            c.unknown()
        );
        assert!(located * 10 >= images * 9, "{folder}: only {located}/{images} boards located");
        assert!(accuracy >= min_accuracy, "{folder}: per-point accuracy {accuracy:.4} below {min_accuracy}");
    }
}

#[test]
fn a_hand_crossing_the_board_edge_is_flagged_not_read_as_white_stones() {
    let Some(dir) = photos() else {
        println!("../shared/datasets/photos absent: skipping the real-photo test");
        return;
    };
    // imago t3: a forearm lies over the top-left corner only (t3_005), pale fingers over the
    // left edge only (t3_003); the other frames of the game have no hand. One finger of t3_003
    // (col 0, row 7) still reads white: a known weakness, allowed here and no more.
    for path in labelled(&dir.join("imago-tests/t3")) {
        let name = path.display().to_string();
        let truth = parse_grid(&std::fs::read_to_string(format!("{name}.grid.txt")).expect("label readable")).expect("label parses");
        let frame = decode_rgb(&std::fs::read(&path).expect("photo readable")).expect("photo decodes");
        let Ok(found) = locate(&frame.rgb, &LocateOptions::default()) else {
            println!("{name}: not located");
            continue;
        };
        let reading = read_board(&frame.rgb, &found.geometry, &ReaderConfig::default());
        let s = score(&reading_grid(&reading), &truth, true);
        println!("{name}: occluded {}, {} wrong, {} unknown", reading.occluded, s.confusion.wrong(), s.confusion.unknown());
        let hand = name.ends_with("t3_003.jpg") || name.ends_with("t3_005.jpg");
        assert_eq!(reading.occluded, hand, "{name}: occlusion flag");
        let allowed = u64::from(name.ends_with("t3_003.jpg"));
        assert!(s.confusion.wrong() <= allowed, "{name}: {} points read wrong", s.confusion.wrong());
    }
}
