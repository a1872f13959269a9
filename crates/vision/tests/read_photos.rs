//! The whole pipeline — decode with EXIF orientation, automatic location, reading — on real
//! labelled photos from `../shared/datasets/photos` (skipped with a printed line when absent).
//! Scored as the best of the 8 board symmetries: a photo has no canonical "up".

#![allow(clippy::expect_used)] // a test that cannot render or read its fixture should fail loudly

use std::path::{Path, PathBuf};

use tengen_vision::decode_rgb;
use tengen_vision::evaluate::{parse_grid, reading_grid, score, Confusion};
use tengen_vision::{locate, read_board, LocateOptions, ReaderConfig};

mod common;

use common::{jpegs_under, photos, roboflow_training_images};

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
        let truth = parse_grid(&std::fs::read_to_string(format!("{name}.grid.txt")).expect("label readable"))
            .expect("label parses");
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
    let Some(dir) = photos() else { return };
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
    let Some(dir) = photos() else { return };
    // imago t3: a forearm lies over the top-left corner only (t3_005), pale fingers over the
    // left edge only (t3_003); the other frames of the game have no hand. One finger of t3_003
    // (col 0, row 7) still reads white: a known weakness, allowed here and no more.
    for path in labelled(&dir.join("imago-tests/t3")) {
        let name = path.display().to_string();
        let truth = parse_grid(&std::fs::read_to_string(format!("{name}.grid.txt")).expect("label readable"))
            .expect("label parses");
        let frame = decode_rgb(&std::fs::read(&path).expect("photo readable")).expect("photo decodes");
        // Every t3 frame is located today: a frame that is not must fail here, not be skipped.
        let found =
            locate(&frame.rgb, &LocateOptions::default()).unwrap_or_else(|e| panic!("{name}: not located: {e}"));
        let reading = read_board(&frame.rgb, &found.geometry, &ReaderConfig::default());
        let s = score(&reading_grid(&reading), &truth, true);
        println!(
            "{name}: occluded {}, {} wrong, {} unknown",
            reading.occluded,
            s.confusion.wrong(),
            s.confusion.unknown()
        );
        let hand = name.ends_with("t3_003.jpg") || name.ends_with("t3_005.jpg");
        assert_eq!(reading.occluded, hand, "{name}: occlusion flag");
        let allowed = u64::from(name.ends_with("t3_003.jpg"));
        assert!(s.confusion.wrong() <= allowed, "{name}: {} points read wrong", s.confusion.wrong());
    }
}

#[test]
fn crowded_pale_boards_are_not_flagged_and_reaching_hands_are() {
    let Some(images) = roboflow_training_images() else { return };
    // Hand-free frames (tests/labels/roboflow-corners-hands.txt lists no hand for these source
    // frames) that were flagged: crowded late-game boards whose stones have the pale wood's hue
    // (18 … 93), and bare wood on the outer line beside stones read white (56, three
    // augmentations), a lamp's glare spot with its fringe (34). And hand frames that were
    // missed: an overexposed forearm on a brightly lit board (95), a pale hand (13), fingers over
    // the first line (100). The hand frames still missed (86 and 9: fingertips at the edge) are
    // described in models/point-reader.md.
    let clean = [
        "18_jpg.rf.38a3d8414686c11d13d6213a77a549b0",
        "32_jpg.rf.3e8582f41eea78015ed146be2bbcbc12",
        "40_jpg.rf.d41c932d4d577be544be5cba7220c8f4",
        "43_jpg.rf.1d41d00a2212ddcc25e62307f8a41682",
        "54_jpg.rf.c1095de6a28e25194f99d51dacd330ca",
        "57_jpg.rf.e7dd0cffde5b4486b4bfdc78cdfe27df",
        "78_jpg.rf.e96d80ee957be9dadb0a5e2e0a37b8a1",
        "80_jpg.rf.dff804d51ed0ca7f26fa42f5df3eebe1",
        "93_jpg.rf.242116a217368b6d345914f72d9c7a59",
        "56_jpg.rf.1b93ff1e4a322411cbe3dfe9a29797be",
        "56_jpg.rf.21a1757cf2eb6bf2be4a1af53c8eb789",
        "56_jpg.rf.8b5c44cec2be342ecea990956a645825",
        "34_jpg.rf.4dd9b7da2805dd21e046c5f348a77ecd",
    ];
    let hands = [
        "95_jpg.rf.2af66e5d899acbe3dbdac0070d18d664",
        "13_jpg.rf.b2062dbbcd9bb386485595da99879905",
        "100_jpg.rf.f9eae9b5751dd870fb5b5974a3ef3cef",
    ];
    for (names, hand) in [(&clean[..], false), (&hands[..], true)] {
        for name in names {
            let path = images.join(format!("{name}.jpg"));
            let Ok(bytes) = std::fs::read(&path) else {
                println!("{}: absent, skipped", path.display());
                continue;
            };
            let frame = decode_rgb(&bytes).expect("photo decodes");
            let found = locate(&frame.rgb, &LocateOptions::default()).expect("board located");
            let reading = read_board(&frame.rgb, &found.geometry, &ReaderConfig::default());
            println!("{name}: occluded {} ({} points)", reading.occluded, reading.occluded_points.len());
            assert_eq!(reading.occluded, hand, "{name}: occlusion flag");
        }
    }
}
