//! The reader on rendered frames with exact ground truth (tengen-synth): light levels, colour
//! casts, glare, oblique parallax and hands — through the renderer's exact geometry, so these
//! measure reading and occlusion alone.

#![allow(clippy::expect_used)] // a test that cannot render or read its fixture should fail loudly

use tengen_rules::{PointState, Stone};

use tengen_synth::{render, ColourCast, Hand, Position, Scene, Side};
use tengen_vision::evaluate::{parse_grid, reading_grid};
use tengen_vision::read_board_detailed;
use tengen_vision::{GridGeometry, LensDistortion, ReaderConfig};

struct Outcome {
    right: usize,
    wrong: usize,
    unknown_visible: usize,
    occluded_flag: bool,
    hand_over_board: bool,
    confident_wrong: usize,
    hidden_wrong: usize,
}

/// The renderer's exact grid, as the reader takes it.
fn truth_geometry(t: &tengen_synth::GroundTruth) -> GridGeometry {
    GridGeometry {
        homography: t.homography,
        lens: LensDistortion { k1: t.lens.k1, centre: t.lens.centre, scale: t.lens.scale },
    }
}

fn position(seed: u64, stones: usize) -> Position {
    let mut rng = tengen_synth::noise::Rng::new(seed);
    let mut p = Position::empty();
    for k in 0..stones {
        let (c, r) = ((rng.unit() * 19.0) as usize % 19, (rng.unit() * 19.0) as usize % 19);
        p.set(c, r, if k % 2 == 0 { Stone::BLACK } else { Stone::WHITE });
    }
    p
}

fn run(scene: Scene, stones: usize) -> Outcome {
    let scene_seed = scene.seed;
    let frame = render(&position(scene.seed, stones), &scene).expect("scene renders");
    let t = &frame.truth;
    let geometry = truth_geometry(t);
    let details = read_board_detailed(&frame.image, &geometry, &ReaderConfig::default());
    if let Ok(dir) = std::env::var("TENGEN_DRAW_DIR") {
        let mut img = frame.image.clone();
        tengen_vision::draw_reading(&mut img, &geometry, &details.reading);
        let _ = img.save(format!("{dir}/rendered_{}.png", scene_seed));
    }
    let truth = parse_grid(&t.grid.join("\n")).expect("truth grid parses");
    let read = reading_grid(&details.reading);
    let mut o = Outcome {
        right: 0,
        wrong: 0,
        unknown_visible: 0,
        occluded_flag: details.reading.occluded,
        hand_over_board: t.hand_over_board,
        confident_wrong: 0,
        hidden_wrong: 0,
    };
    for r in 0..19 {
        for c in 0..19 {
            let hidden = t.occluded[r * 19 + c] || !t.in_frame[r * 19 + c];
            match read[r][c] {
                PointState::Unknown if !hidden => o.unknown_visible += 1,
                PointState::Unknown => {}
                s if s == truth[r][c] => o.right += 1,
                _ if hidden => o.hidden_wrong += 1,
                _ => {
                    o.wrong += 1;
                    if details.reading.points[r][c].confidence >= 0.99 {
                        o.confident_wrong += 1;
                    }
                }
            }
        }
    }
    o
}

fn scene(preset: &str, seed: u64, cast: ColourCast) -> Scene {
    let mut s = Scene::preset(preset).expect("preset exists").with_seed(seed).with_size(800, 600);
    s.light.cast = cast;
    if cast != ColourCast::Neutral {
        s.light.cast_strength = s.light.cast_strength.max(0.5);
    }
    s
}

#[test]
fn clean_overhead_board_is_read_exactly() {
    let o = run(scene("clean", 3, ColourCast::Neutral), 80);
    assert_eq!((o.wrong, o.unknown_visible), (0, 0));
    assert!(!o.occluded_flag);
}

#[test]
fn colour_casts_glare_dim_light_and_oblique_views_are_read() {
    let cases = [
        scene("webcam", 11, ColourCast::Blue),
        scene("webcam", 12, ColourCast::Green),
        scene("oblique", 13, ColourCast::Yellow),
        scene("oblique", 14, ColourCast::Neutral),
        scene("dim", 15, ColourCast::Yellow),
        scene("harsh", 16, ColourCast::Blue),
        scene("phone", 17, ColourCast::Neutral),
    ];
    let (mut right, mut wrong, mut unknown, mut confident_wrong) = (0, 0, 0, 0);
    for (k, s) in cases.into_iter().enumerate() {
        let o = run(s, 60 + 20 * k);
        assert!(!o.occluded_flag, "case {k}: no hand, yet flagged occluded");
        right += o.right;
        wrong += o.wrong;
        unknown += o.unknown_visible;
        confident_wrong += o.confident_wrong;
    }
    let total = right + wrong + unknown;
    println!("rendered conditions: {right}/{total} right, {wrong} wrong, {unknown} unknown, {confident_wrong} wrong at ≥ 0.99");
    // Measured: 2–6 of 2527 (white stones the renderer places off their point at the board's
    // edge read as empty); more than 0.3 % is a regression.
    assert!(wrong * 1000 <= total * 3, "more than 0.3 % of points read wrong: {wrong}/{total}");
    // Calibrated confidences leave weak reads as `?` (safe for the referee): about 1 % here.
    assert!(unknown * 100 <= total * 2, "more than 2 % of visible points unknown: {unknown}/{total}");
    // Known weakness: the off-point white stones above are read empty with confidence ≥ 0.99
    // (3 here); the calibration was fitted on photos, where such stones are rarer.
    assert!(confident_wrong <= 3, "{confident_wrong} points wrong at confidence ≥ 0.99");
}

#[test]
fn hands_over_the_board_are_flagged_and_hidden_points_never_misread_confidently() {
    let sides = [Side::South, Side::East, Side::North, Side::West];
    let (mut hidden_wrong, mut visible_wrong, mut confident_wrong) = (0, 0, 0);
    for (k, side) in sides.into_iter().enumerate() {
        let s = scene(["webcam", "overhead", "oblique", "dim"][k], 30 + k as u64, ColourCast::Neutral)
            .with_hand(Hand::reaching(side, 5.0 + 3.0 * k as f64, 0.45));
        let o = run(s, 70);
        assert!(o.hand_over_board, "case {k}: the renderer put no hand over the board");
        assert!(o.occluded_flag, "case {k}: a hand over the board was not flagged");
        println!(
            "case {k}: {} right, {} visible wrong, {} hidden wrong, {} visible unknown",
            o.right, o.wrong, o.hidden_wrong, o.unknown_visible
        );
        hidden_wrong += o.hidden_wrong;
        visible_wrong += o.wrong;
        confident_wrong += o.confident_wrong;
    }
    // Measured (renderer of 29 Nov): 4 visible points of ~1320 read wrong over the four hand
    // frames — white stones knocked well off their points and a fingertip's edge the truth calls
    // visible — 3 of them at confidence ≥ 0.99. A known weakness; more is a regression.
    assert!(visible_wrong <= 6, "{visible_wrong} visible points in the hand frames read wrong");
    assert!(confident_wrong <= 4, "{confident_wrong} visible points in the hand frames wrong at confidence ≥ 0.99");
    // Measured weakness: the edge of a fingertip over a point can still read as a stone
    // (0–3 points per hand, 5–7 over the four); more than 9 is a regression.
    assert!(hidden_wrong <= 9, "{hidden_wrong} points under the hands read as a definite wrong state");
}

#[test]
fn geometry_outside_the_image_reads_unknown_without_panicking() {
    let image = image::RgbImage::from_pixel(1, 1, image::Rgb([200, 160, 100]));
    let far = GridGeometry {
        homography: [[10.0, 0.0, 5000.0], [0.0, 10.0, 5000.0], [0.0, 0.0, 1.0]],
        lens: LensDistortion::none(1, 1),
    };
    let reading = tengen_vision::read_board(&image, &far, &ReaderConfig::default());
    assert!(reading.points.iter().flatten().all(|p| p.state == PointState::Unknown));
    assert!(!reading.occluded);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Any geometry — degenerate, mirrored, far off, tiny — on any small image yields a reading
    /// of 361 points with confidences in 0..=1, never a panic.
    #[test]
    fn any_geometry_on_any_small_image_is_safe(
        h in proptest::collection::vec(-300.0f64..300.0, 9),
        k1 in -0.3f64..0.3,
        w in 1u32..64,
        hgt in 1u32..64,
        shade in 0u8..=255,
    ) {
        let image = image::RgbImage::from_fn(w, hgt, |x, y| image::Rgb([shade, (x * 7) as u8, (y * 13) as u8]));
        let geometry = GridGeometry {
            homography: [[h[0], h[1], h[2]], [h[3], h[4], h[5]], [h[6] / 300.0, h[7] / 300.0, h[8]]],
            lens: LensDistortion { k1, ..LensDistortion::none(w, hgt) },
        };
        let reading = tengen_vision::read_board(&image, &geometry, &ReaderConfig::default());
        for p in reading.points.iter().flatten() {
            proptest::prop_assert!((0.0..=1.0).contains(&p.confidence));
        }
    }
}

/// A learned point reader given in the settings is multiplied with the classical reader on the
/// points the occlusion mask leaves (here one that always leans to "white"), and leaves the
/// occlusion decision to the classical tests: it can pull unsure points towards white but not
/// overturn what the classical reader is sure of, and with no network the frame reads as the
/// classical reader alone.
#[test]
fn a_patch_model_weighs_in_on_the_unmasked_points_and_not_on_the_occlusion() {
    let scene = Scene::preset("phone").expect("preset").with_size(1280, 720).with_seed(5);
    let frame = render(&position(5, 60), &scene).expect("scene renders");
    let t = &frame.truth;
    let geometry = truth_geometry(t);
    let inputs = tengen_vision::fit::PATCH_INPUTS;
    let leaning_white = tengen_vision::PatchModel {
        hidden: 1,
        input_mean: vec![0.0; inputs],
        input_sd: vec![1.0; inputs],
        w1: vec![0.0; inputs],
        b1: vec![0.0],
        w2: vec![0.0; 3],
        b2: vec![0.0, 0.0, 3.0],
    };
    leaning_white.validate().expect("shapes fit");
    let classical_config = ReaderConfig { patch_model: None, ..ReaderConfig::default() };
    let classical = read_board_detailed(&frame.image, &geometry, &classical_config).reading;
    let config = ReaderConfig { patch_model: Some(leaning_white.leak()), ..ReaderConfig::default() };
    let learned = read_board_detailed(&frame.image, &geometry, &config).reading;
    let [empty, black, white, _] = classical.counts();
    assert!(empty > 200 && black > 10 && white > 10, "classical {:?}", classical.counts());
    // The rendered frame is clear: the classical reader is sure of nearly every point, so a
    // network 20 to 1 for white moves almost nothing, and only towards white.
    let mut moved = 0;
    for (classical_row, learned_row) in classical.points.iter().zip(&learned.points) {
        for (c, l) in classical_row.iter().zip(learned_row) {
            if c.state != l.state {
                moved += 1;
                let definite = |s: PointState| s != PointState::Unknown;
                assert!(!(definite(c.state) && definite(l.state)) || l.state == PointState::White, "{c:?} -> {l:?}");
            }
            if c.state == PointState::White {
                assert_eq!(l.state, PointState::White);
            }
        }
    }
    assert!(moved <= 5, "{moved} points moved");
    assert_eq!(learned.occluded, classical.occluded);
    assert_eq!(learned.occluded_points, classical.occluded_points);
}

/// On a steep view the tops of white stones lean over the cell centres behind them, where the
/// reader takes the board's colour. In a white group those cells are all white tops, so a
/// reference taken from them is white and the group's stones read as bare board. The reader
/// takes its reference from the wood the board's light explains instead
/// (`BoardColour::wood_reference`).
#[test]
fn white_groups_on_a_steep_view_are_read_against_the_wood() {
    let mut p = Position::empty();
    // Two solid white blocks (rows 2–7 and 11–15 over columns 3–9 and 10–16), edged by black.
    for (rows, cols) in [(2..8, 3..10), (11..16, 10..17)] {
        for r in rows.clone() {
            for c in cols.clone() {
                p.set(c, r, Stone::WHITE);
            }
        }
        for c in cols.clone() {
            p.set(c, rows.end, Stone::BLACK);
        }
    }
    let (mut white_read_empty, mut wrong, mut whites) = (0, 0, 0);
    for seed in [41u64, 42, 43] {
        let mut scene = Scene::default().with_seed(seed).with_size(1920, 1080);
        // Seen from a corner, a top leans towards the cell centre behind its point.
        scene.camera.tilt_deg = 60.0;
        scene.camera.azimuth_deg = 45.0;
        scene.camera.fov_deg = 60.0;
        scene.camera.board_fill = 0.8;
        let frame = render(&p, &scene).expect("scene renders");
        let t = &frame.truth;
        let geometry = truth_geometry(t);
        let reading = tengen_vision::read_board(&frame.image, &geometry, &ReaderConfig::default());
        let truth = parse_grid(&t.grid.join("\n")).expect("truth grid parses");
        let read = reading_grid(&reading);
        for (truth_row, read_row) in truth.iter().zip(&read) {
            for (&want, &got) in truth_row.iter().zip(read_row) {
                whites += usize::from(want == PointState::White);
                white_read_empty += usize::from(want == PointState::White && got == PointState::Empty);
                wrong += usize::from(got != PointState::Unknown && got != want);
            }
        }
    }
    println!("steep white groups: {white_read_empty} of {whites} whites read empty, {wrong} wrong");
    assert!(white_read_empty * 100 <= whites, "{white_read_empty} of {whites} white stones read as bare board");
    assert!(wrong * 100 <= whites, "{wrong} points read wrong");
}

/// Points right, wrong and `?` (visible ones) of one frame read with `config`, and whether it was
/// flagged occluded.
fn tally(frame: &tengen_synth::Rendered, config: &ReaderConfig) -> (usize, usize, usize, bool) {
    let t = &frame.truth;
    let geometry = truth_geometry(t);
    let reading = tengen_vision::read_board(&frame.image, &geometry, config);
    let truth = parse_grid(&t.grid.join("\n")).expect("truth grid parses");
    let read = reading_grid(&reading);
    let (mut right, mut wrong, mut unknown) = (0, 0, 0);
    for r in 0..19 {
        for c in 0..19 {
            if t.occluded[r * 19 + c] || !t.in_frame[r * 19 + c] {
                continue;
            }
            match read[r][c] {
                PointState::Unknown => unknown += 1,
                s if s == truth[r][c] => right += 1,
                _ => wrong += 1,
            }
        }
    }
    (right, wrong, unknown, reading.occluded)
}

#[test]
fn the_learned_reader_decides_doubtful_points_except_beside_a_hand() {
    let keep_doubt = ReaderConfig { patch_decides_doubtful: false, ..ReaderConfig::default() };
    let shipped = ReaderConfig::default();
    assert!(shipped.patch_decides_doubtful && shipped.patch_model.is_some());
    // Crowded boards seen steeply: stones lean over the lines of the bare points beside them,
    // so the classical reader finds bare board without lines, or off every class, there.
    let (mut before, mut after) = ((0, 0, 0), (0, 0, 0));
    for seed in [51u64, 52, 53, 54] {
        let mut scene = Scene::default().with_seed(seed).with_size(1280, 720);
        scene.camera.tilt_deg = 55.0;
        scene.camera.azimuth_deg = 40.0 * seed as f64;
        let frame = render(&position(seed, 320), &scene).expect("scene renders");
        let (r0, w0, u0, _) = tally(&frame, &keep_doubt);
        let (r1, w1, u1, _) = tally(&frame, &shipped);
        before = (before.0 + r0, before.1 + w0, before.2 + u0);
        after = (after.0 + r1, after.1 + w1, after.2 + u1);
    }
    println!("steep crowded boards: right, wrong, `?` {before:?} with the doubt kept, {after:?} decided");
    // Measured: 19 `?` → 0, 18 more right, 1 more wrong (1280×720, four frames).
    assert!(before.2 >= 8 && after.2 * 4 <= before.2, "the doubtful points stayed `?`: {before:?} → {after:?}");
    assert!(after.0 > before.0 && after.1 <= before.1 + 2, "deciding them read them wrong: {before:?} → {after:?}");
    // Beside a hand a doubtful point stays `?`: the hand's shadow and sleeve make the doubt.
    for (k, side) in [Side::South, Side::East].into_iter().enumerate() {
        let s = scene(["webcam", "oblique"][k], 60 + k as u64, ColourCast::Neutral).with_hand(Hand::reaching(
            side,
            6.0 + 4.0 * k as f64,
            0.45,
        ));
        let frame = render(&position(60 + k as u64, 150), &s).expect("scene renders");
        let kept = tally(&frame, &keep_doubt);
        assert!(kept.3, "case {k}: the hand was not flagged");
        assert_eq!(tally(&frame, &shipped), kept, "case {k}: the hand frame's reading moved");
    }
}
