//! The frame reader over rendered camera frames (tengen-synth): a still board keeps its reading
//! and is read afresh when a stone or a hand comes, at least every READ_AT_LEAST_EVERY frames;
//! a board bumped under a hand is found again within a re-check period and reported moved; the
//! tracking check from the colour frame equals the check on grey. (A bump in plain view, and
//! the referee's `board_moved`, are tested through the service's analyzer in
//! `crates/server/src/adapters.rs`.)

#![allow(clippy::expect_used)] // a test that cannot render or read its fixture should fail loudly

use tengen_rules::{PointState, Stone};
use tengen_synth::{render, Hand, Position, Scene, Side};
use tengen_vision::decode_rgb;
use tengen_vision::locate::locate_gray;
use tengen_vision::{line_score, line_score_rgb};
use tengen_vision::{CancelFlag, WorkLimit, WorkStopped};
use tengen_vision::{FrameReadError, FrameReader, FrameReading, LocateError, LocateOptions, Tracking};
use tengen_vision::{READ_AT_LEAST_EVERY, RECHECK_COVERED_EVERY};

fn frame(position: &Position, scene: &Scene) -> image::RgbImage {
    let jpeg = render(position, scene).expect("render").jpeg();
    decode_rgb(&jpeg).expect("decodes").rgb
}

fn count(reading: &FrameReading, state: PointState) -> usize {
    reading.states().filter(|&s| s == state).count()
}

/// The work limit reaches every board search the reader starts (issue 11: the service's
/// deadline and the step budget apply on the one pipeline, in `serve` and in `replay`): a
/// budget too small or a raised cancel flag stops it with a clear error, in both tracking
/// modes, and the next frame with room to work is read as usual.
#[test]
fn the_callers_work_limit_bounds_every_board_search_of_the_reader() {
    let position = Position::empty().with(3, 3, Stone::BLACK);
    let scene = Scene::preset("webcam").expect("preset").with_size(960, 720).with_seed(7);
    let rgb = frame(&position, &scene);
    let raised = CancelFlag::new();
    raised.cancel();
    for tracking in [Tracking::Track, Tracking::LocateEveryFrame] {
        let mut reader = FrameReader::new(None, tracking);
        let tiny = WorkLimit::steps(1_000);
        match reader.read_within(&rgb, &tiny) {
            Err(FrameReadError::BoardNotFound(LocateError::Stopped(WorkStopped::Exhausted { limit: 1_000 }))) => {}
            other => panic!("{tracking:?}: a 1,000-step budget must stop the search, got {other:?}"),
        }
        assert!(reader.needs_search() || tracking == Tracking::LocateEveryFrame, "{tracking:?}: nothing tracked");
        let cancelled = WorkLimit { cancel: Some(raised.clone()), ..WorkLimit::default() };
        match reader.read_within(&rgb, &cancelled) {
            Err(FrameReadError::BoardNotFound(LocateError::Stopped(WorkStopped::Cancelled))) => {}
            other => panic!("{tracking:?}: a raised flag must stop the search, got {other:?}"),
        }
        let read = reader.read(&rgb).expect("the default budget finds the board");
        assert_eq!(count(&read, PointState::Black), 1, "{tracking:?}");
    }
}

#[test]
fn a_still_board_keeps_its_reading_and_a_new_stone_or_a_hand_is_read() {
    let before = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE);
    for preset in ["webcam", "dim"] {
        let scene = Scene::preset(preset).expect("preset").with_size(960, 720).with_seed(4);
        // Each frame of a camera gets fresh sensor noise and exposure wobble.
        let shot = |position: &Position, n: u64| {
            let mut s = scene.clone();
            s.frame_seed = n;
            frame(position, &s)
        };
        let mut reader = FrameReader::new(None, Tracking::Track);
        let first = reader.read(&shot(&before, 1)).expect("located");
        assert!(!first.kept);
        let second = reader.read(&shot(&before, 2)).expect("read with the tracked grid");
        assert!(!second.kept, "{preset}: read, and kept for the next frames");
        for n in 3..5 {
            let kept = reader.read(&shot(&before, n)).expect("kept");
            assert!(kept.kept, "{preset}: frame {n} keeps the reading");
            assert_eq!(kept.reading.grid_lines(), first.reading.grid_lines(), "{preset}");
        }
        // A black stone, then a white one: each is read at once.
        assert_eq!((count(&first, PointState::Black), count(&first, PointState::White)), (1, 1), "{preset}");
        let one_more = before.clone().with(9, 9, Stone::BLACK);
        let seen = reader.read(&shot(&one_more, 10)).expect("read");
        assert!(!seen.kept, "{preset}: read afresh for the black stone");
        assert_eq!((count(&seen, PointState::Black), count(&seen, PointState::White)), (2, 1), "{preset}");
        let two_more = one_more.clone().with(10, 4, Stone::WHITE);
        let seen = reader.read(&shot(&two_more, 11)).expect("read");
        assert!(!seen.kept, "{preset}: read afresh for the white stone");
        assert_eq!((count(&seen, PointState::Black), count(&seen, PointState::White)), (2, 2), "{preset}");
        // A hand over the still board is read too, and its reading is not kept.
        let mut with_hand = scene.clone().with_hand(Hand::placing(Side::South, 9.0, 9.0, 1.0, None));
        with_hand.frame_seed = 20;
        reader.read(&shot(&two_more, 21)).expect("read");
        let covered = reader.read(&frame(&two_more, &with_hand)).expect("read");
        assert!(!covered.kept && covered.reading.occluded, "{preset}: the hand is seen");
        let after = reader.read(&shot(&two_more, 22)).expect("read");
        assert!(!after.kept, "{preset}: the frame after the hand is read afresh");
        // However still, the board is read afresh every READ_AT_LEAST_EVERY frames.
        let reads = (30..30 + 2 * u64::from(READ_AT_LEAST_EVERY))
            .filter(|&n| !reader.read(&shot(&two_more, n)).expect("read").kept)
            .count();
        assert!((2..=4).contains(&reads), "{preset}: {reads} fresh reads in {} still frames", 2 * READ_AT_LEAST_EVERY);
    }
}

#[test]
fn a_board_bumped_under_a_hand_is_relocated_within_a_recheck_period() {
    let position = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE);
    let scene = Scene::preset("webcam").expect("preset").with_size(960, 720).with_seed(4);
    let bumped = scene.clone().with_board_shifted(0.08, -0.05);
    // Two arms across the board, moving: the lines fit clearly worse.
    let arms = |s: &Scene, reach: f64| {
        s.clone().with_hand(Hand::reaching(Side::South, 6.0, reach)).with_hand(Hand::reaching(Side::East, 12.0, reach))
    };
    let mut reader = FrameReader::new(None, Tracking::Track);
    let first = reader.read(&frame(&position, &scene)).expect("located");
    // Arms over the board for a while: read with the tracked grid, not taken for a move.
    for reach in [0.9, 1.0, 1.1] {
        let covered = reader.read(&frame(&position, &arms(&scene, reach))).expect("read");
        assert!(covered.reading.occluded && covered.moved_cells.is_none());
    }
    // The board is bumped under the arm, then the arm leaves.
    let mut frames = vec![frame(&position, &arms(&bumped, 1.0)), frame(&position, &arms(&bumped, 0.9))];
    frames.extend((0..=RECHECK_COVERED_EVERY).map(|_| frame(&position, &bumped)));
    let readings: Vec<FrameReading> = frames.iter().map(|f| reader.read(f).expect("read")).collect();
    let moved = readings.iter().position(|r| r.moved_cells.is_some()).expect("the bump is found");
    // At the latest at the stretch's next re-check: the shifted grid reads as covered after
    // the arms leave, and a re-fit comes every RECHECK_COVERED_EVERY frames.
    assert!(moved <= 1 + RECHECK_COVERED_EVERY as usize, "found at frame {moved}");
    let last = readings.last().expect("frames");
    assert!(!last.reading.occluded && last.moved_cells.is_none());
    assert_eq!(last.reading.grid_lines(), first.reading.grid_lines(), "the same stones after the bump");
}

#[test]
fn the_tracking_check_from_colour_equals_the_check_on_grey() {
    let position = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE).with(9, 0, Stone::WHITE);
    for (preset, seed) in [("webcam", 4), ("phone", 9), ("oblique", 2)] {
        let scene = Scene::preset(preset).expect("preset").with_size(960, 720).with_seed(seed);
        let rgb = frame(&position, &scene);
        let full = image::imageops::grayscale(&rgb);
        let geometry = locate_gray(&full, &LocateOptions::default()).expect("located").geometry;
        assert_eq!(line_score_rgb(&rgb, &geometry), line_score(&full, &geometry), "{preset}");
        // A grid shifted by half a cell scores differently, and still the same both ways; so
        // does one hanging off the frame.
        for shift in [20.0, 400.0] {
            let mut shifted = geometry.clone();
            shifted.homography[0][2] += shift;
            assert_eq!(line_score_rgb(&rgb, &shifted), line_score(&full, &shifted), "{preset}, shifted {shift}");
        }
    }
}
