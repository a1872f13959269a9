//! The ground truth must describe the rendered pixels: grid lines under projected intersections,
//! dark pixels on black stones and bright on white, hands flagged where drawn, determinism.

use image::RgbImage;
use tengen_rules::Stone;
use tengen_synth::{apply_homography, render, Hand, Position, Rendered, Scene, Side};

fn luma(image: &RgbImage, p: [f64; 2]) -> f64 {
    let (x, y) = (p[0].floor() as i64, p[1].floor() as i64);
    if x < 0 || y < 0 || x >= i64::from(image.width()) || y >= i64::from(image.height()) {
        return f64::NAN;
    }
    let px = image.get_pixel(x as u32, y as u32).0;
    0.299 * f64::from(px[0]) + 0.587 * f64::from(px[1]) + 0.114 * f64::from(px[2])
}

/// Median luma of the 5×5 window around p: robust to a stone's small specular highlight.
fn median_luma(image: &RgbImage, p: [f64; 2]) -> f64 {
    let mut values: Vec<f64> = (-2..=2)
        .flat_map(|dy| (-2..=2).map(move |dx| [p[0] + f64::from(dx), p[1] + f64::from(dy)]))
        .map(|q| luma(image, q))
        .filter(|v| v.is_finite())
        .collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn sample_position() -> Position {
    Position::empty()
        .with(3, 3, Stone::BLACK)
        .with(15, 3, Stone::WHITE)
        .with(3, 15, Stone::WHITE)
        .with(15, 15, Stone::BLACK)
        .with(9, 9, Stone::BLACK)
        .with(10, 9, Stone::WHITE)
        .with(2, 16, Stone::BLACK)
}

fn render_ok(position: &Position, scene: &Scene) -> Rendered {
    match render(position, scene) {
        Ok(r) => r,
        Err(e) => panic!("render failed: {e}"),
    }
}

fn preset(name: &str) -> Scene {
    Scene::preset(name).unwrap_or_else(|| panic!("no preset {name}"))
}

#[test]
fn intersections_land_on_grid_lines_in_a_clean_render() {
    let scene = preset("clean").with_size(1280, 960);
    let frame = render_ok(&Position::empty(), &scene);
    let t = &frame.truth;
    assert_eq!(t.intersections.len(), 361);
    let mut darker = 0;
    for row in 0..19 {
        for col in 0..19 {
            let on_line = luma(&frame.image, t.intersections[row * 19 + col]);
            // Centre of the neighbouring cell (inward), through the same homography and lens.
            let (cc, cr) =
                (col as f64 + if col < 18 { 0.5 } else { -0.5 }, row as f64 + if row < 18 { 0.5 } else { -0.5 });
            let cell = luma(&frame.image, t.lens.distort(apply_homography(&t.homography, cc, cr)));
            if on_line < cell - 40.0 {
                darker += 1;
            }
        }
    }
    assert_eq!(darker, 361, "every intersection pixel is on dark ink");
}

#[test]
fn corners_and_distortion_agree_with_intersections() {
    let scene = preset("webcam");
    let frame = render_ok(&sample_position(), &scene);
    let t = &frame.truth;
    assert_eq!(t.corners[0], t.intersections[0]);
    assert_eq!(t.corners[1], t.intersections[18]);
    assert_eq!(t.corners[2], t.intersections[360]);
    assert_eq!(t.corners[3], t.intersections[342]);
    assert!(t.lens.k1 < 0.0);
    // The corners as seen: TL is left of TR and above BL.
    assert!(t.corners[0][0] < t.corners[1][0] && t.corners[0][1] < t.corners[3][1]);
    assert!(t.in_frame.iter().all(|&v| v));
}

#[test]
fn stone_pixels_have_the_right_colour_in_every_preset() {
    let position = sample_position();
    for name in tengen_synth::PRESETS {
        let scene = preset(name).with_size(640, 480).with_seed(3);
        let frame = render_ok(&position, &scene);
        let t = &frame.truth;
        for row in 0..19 {
            for col in 0..19 {
                let i = row * 19 + col;
                let Some(top) = t.stone_tops[i] else { continue };
                let y = median_luma(&frame.image, top);
                match t.point(col, row) {
                    'X' => assert!(y < 80.0, "{name}: black stone at {col},{row} has luma {y}"),
                    'O' => assert!(y > 110.0, "{name}: white stone at {col},{row} has luma {y}"),
                    other => panic!("stone top on point {other:?}"),
                }
            }
        }
        assert_eq!(t.stone_tops.iter().filter(|s| s.is_some()).count(), position.stone_count());
    }
}

#[test]
fn rendering_is_deterministic_per_seed() {
    let scene = preset("webcam").with_hand(Hand::reaching(Side::South, 9.0, 0.4));
    let a = render_ok(&sample_position(), &scene);
    let b = render_ok(&sample_position(), &scene);
    assert_eq!(a.image.as_raw(), b.image.as_raw());
    assert_eq!(a.truth, b.truth);
    let c = render_ok(&sample_position(), &scene.clone().with_seed(scene.seed + 1));
    assert_ne!(a.image.as_raw(), c.image.as_raw());
}

#[test]
fn hands_are_flagged_where_drawn() {
    let position = sample_position();
    let scene = preset("clean").with_size(800, 600);
    let bare = render_ok(&position, &scene);
    assert!(!bare.truth.hand_present && bare.truth.occluded.iter().all(|o| !o));
    let hand = Hand::placing(Side::South, 12.0, 12.0, 1.0, Some(Stone::BLACK));
    let with_hand = render_ok(&position, &scene.clone().with_hand(hand));
    let t = &with_hand.truth;
    assert!(t.hand_present && t.hand_over_board && t.hand_fraction > 0.01);
    assert!(t.occluded[12 * 19 + 12], "the point under the fingertips is occluded");
    assert!(!t.occluded[2 * 19 + 2], "a far corner is not");
    let count = t.occluded.iter().filter(|o| **o).count();
    assert!((3..200).contains(&count), "{count} occluded points");
    // Every point not flagged looks the same as without the hand, up to a shadow (a uniform
    // darkening of all channels); skin or sleeve there would change the colour's balance.
    for i in 0..361 {
        if t.occluded[i] {
            continue;
        }
        let p = t.intersections[i];
        let (x, y) = (p[0] as u32, p[1] as u32);
        let a = bare.image.get_pixel(x, y).0.map(f64::from);
        let b = with_hand.image.get_pixel(x, y).0.map(f64::from);
        let ratios = [0, 1, 2].map(|c| (b[c] + 8.0) / (a[c] + 8.0));
        let spread = ratios.iter().cloned().fold(f64::MIN, f64::max) - ratios.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread < 0.2, "point {i} changed colour balance without being flagged: {a:?} -> {b:?}");
    }
}

#[test]
fn seen_grid_follows_camera_rotation() {
    let position = Position::empty().with(0, 0, Stone::BLACK).with(18, 0, Stone::WHITE);
    for roll in [0.0, 90.0, 180.0, 270.0, 30.0, -100.0] {
        let mut scene = preset("clean").with_size(640, 480);
        scene.camera.roll_deg = roll;
        let frame = render_ok(&position, &scene);
        let t = &frame.truth;
        assert_eq!(t.grid, position.rotated(t.quarter_turns).to_rows(), "roll {roll}");
        // The seen top-left corner is the one nearest the image's top-left.
        let sums: Vec<f64> = t.corners.iter().map(|c| c[0] + c[1]).collect();
        assert!(sums[0] <= sums[1] && sums[0] <= sums[2] && sums[0] <= sums[3], "roll {roll}: {sums:?}");
        for (i, top) in t.stone_tops.iter().enumerate() {
            if let Some(top) = top {
                let y = median_luma(&frame.image, *top);
                let expect_dark = t.grid[i / 19].as_bytes()[i % 19] == b'X';
                assert_eq!(y < 100.0, expect_dark, "roll {roll} point {i} luma {y}");
            }
        }
    }
}

#[test]
fn oblique_views_shift_stone_tops_toward_the_camera_side() {
    let position = Position::empty().with(9, 9, Stone::WHITE);
    let scene = preset("oblique").with_size(960, 540);
    let frame = render_ok(&position, &scene);
    let t = &frame.truth;
    let i = 9 * 19 + 9;
    let (Some(top), base) = (t.stone_tops[i], t.intersections[i]) else { panic!("stone top") };
    let shift = ((top[0] - base[0]).powi(2) + (top[1] - base[1]).powi(2)).sqrt();
    assert!(shift > 2.0, "a 9 mm tall stone seen at 42° shows its top off the intersection ({shift} px)");
}

#[test]
fn bad_sizes_are_errors() {
    assert!(render(&Position::empty(), &Scene::default().with_size(0, 480)).is_err());
    assert!(render(&Position::empty(), &Scene::default().with_size(100_000, 480)).is_err());
}

#[test]
fn jpeg_encoding_decodes_back() {
    let frame = render_ok(&sample_position(), &preset("webcam"));
    let bytes = frame.jpeg();
    let decoded = image::load_from_memory(&bytes).map(|d| d.to_rgb8());
    let Ok(decoded) = decoded else { panic!("jpeg does not decode") };
    assert_eq!(decoded.dimensions(), frame.image.dimensions());
}

#[test]
fn random_scenes_keep_black_darker_than_white() {
    for seed in 0..6u64 {
        let scene = Scene::random(seed).with_size(480, 360);
        let position = Position::random(seed, 60);
        let frame = render_ok(&position, &scene);
        let t = &frame.truth;
        assert_eq!(t.grid, position.rotated(t.quarter_turns).to_rows());
        let (mut black, mut white) = (Vec::new(), Vec::new());
        for i in 0..361 {
            let (Some(top), false) = (t.stone_tops[i], t.occluded[i]) else {
                continue;
            };
            let y = median_luma(&frame.image, top);
            if !y.is_finite() {
                continue;
            }
            match t.grid[i / 19].as_bytes()[i % 19] {
                b'X' => black.push(y),
                b'O' => white.push(y),
                _ => {}
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        assert!(
            black.len() > 10 && white.len() > 10,
            "seed {seed}: {} black, {} white visible",
            black.len(),
            white.len()
        );
        assert!(mean(&black) + 60.0 < mean(&white), "seed {seed}: black {} white {}", mean(&black), mean(&white));
    }
}

#[test]
fn hands_shadow_the_board_beside_them() {
    let scene = preset("clean").with_size(640, 480);
    let bare = render_ok(&Position::empty(), &scene);
    let hand = Hand { lift_mm: 40.0, ..Hand::placing(Side::South, 9.0, 9.0, 1.0, None) };
    let with_hand = render_ok(&Position::empty(), &scene.clone().with_hand(hand));
    // Pixels that darkened uniformly (same colour balance): shadow, not skin or sleeve.
    let mut shadowed = 0;
    for (a, b) in bare.image.pixels().zip(with_hand.image.pixels()) {
        let (a, b) = (a.0.map(f64::from), b.0.map(f64::from));
        let ratios = [0, 1, 2].map(|c| (b[c] + 8.0) / (a[c] + 8.0));
        let spread = ratios.iter().cloned().fold(f64::MIN, f64::max) - ratios.iter().cloned().fold(f64::MAX, f64::min);
        if ratios[1] < 0.9 && spread < 0.08 {
            shadowed += 1;
        }
    }
    assert!(shadowed > 500, "only {shadowed} pixels in the hand's shadow");
}

#[test]
fn moving_hands_are_blurred_but_truth_stays_at_mid_exposure() {
    let scene = preset("clean").with_size(640, 480);
    let still = Hand::placing(Side::South, 9.0, 9.0, 1.0, None);
    let moving = Hand { motion_mm: [0.0, -40.0, 0.0], ..still.clone() };
    let sharp = render_ok(&Position::empty(), &scene.clone().with_hand(still));
    let blurred = render_ok(&Position::empty(), &scene.clone().with_hand(moving));
    assert_eq!(sharp.truth.occluded, blurred.truth.occluded);
    // The hand smears along its motion: many pixels around the fingertips change.
    let tip = sharp.truth.intersections[9 * 19 + 9];
    let (cx, cy) = (tip[0] as u32, tip[1] as u32);
    let mut changed = 0;
    for y in cy - 50..cy + 50 {
        for x in cx - 50..cx + 50 {
            let (a, b) = (sharp.image.get_pixel(x, y).0, blurred.image.get_pixel(x, y).0);
            if (i32::from(a[0]) - i32::from(b[0])).abs() > 12 {
                changed += 1;
            }
        }
    }
    assert!(changed > 800, "only {changed} pixels changed around the moving fingertips");
    // Far from the hand nothing changes.
    assert_eq!(sharp.image.get_pixel(20, 20), blurred.image.get_pixel(20, 20));
}

#[test]
fn bowls_stand_beside_the_board_without_touching_the_truth() {
    let mut scene = preset("clean").with_size(800, 600);
    scene.camera.board_fill = 0.6;
    let bare = render_ok(&sample_position(), &scene);
    scene.bowls = tengen_synth::Bowl::pair(100.0).to_vec();
    let with_bowls = render_ok(&sample_position(), &scene);
    assert_eq!(bare.truth, with_bowls.truth);
    // Look straight down into each bowl: black heap dark, white heap bright.
    let cam = tengen_synth::Camera::from_scene(&scene);
    for bowl in &scene.bowls {
        let top = -scene.board.thickness_mm + bowl.height_mm - 12.0;
        let px = cam.project([bowl.centre_mm[0], bowl.centre_mm[1], top]);
        let y = median_luma(&with_bowls.image, px);
        match bowl.contents {
            Stone::BLACK => assert!(y < 60.0, "black bowl luma {y}"),
            _ => assert!(y > 120.0, "white bowl luma {y}"),
        }
    }
}
