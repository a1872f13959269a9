//! Board location on frames rendered by `tengen-synth` with exact ground truth: camera tilts
//! from overhead to 45°, any roll, off-centre boards, empty to dense positions, colour casts,
//! glare and dim light, lens distortion. Also: images without a board are an error, given
//! corners override the search, and the tracker tells stable from moved from lost.

use image::{GrayImage, Luma, RgbImage};
use tengen_rules::{Stone, BOARD_LINES};
use tengen_synth::noise::Rng;
use tengen_synth::{render, Hand, Position, Rendered, Scene, Side};
use tengen_vision::locate::{from_corners, refine_corners, GeometrySource, Refinement};
use tengen_vision::{locate, LensDistortion, LocateError, LocateOptions};
use tengen_vision::{TrackStatus, Tracker, TrackerConfig};

fn random_position(rng: &mut Rng, density: f64) -> Position {
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

fn scene(preset: &str, seed: u64, width: u32, height: u32) -> Scene {
    let base = Scene::preset(preset).unwrap_or_default().with_size(width, height).with_seed(seed);
    let mut rng = Rng::new(seed * 31 + 7);
    let mut s = base;
    s.camera.roll_deg += rng.range(-180.0, 180.0);
    s.camera.azimuth_deg = rng.range(0.0, 360.0);
    s.camera.offset = [rng.range(-0.05, 0.05), rng.range(-0.05, 0.05)];
    s
}

/// The scene and 800×600 frame of a random position of this density under the preset's camera
/// (turned and shifted by the seed), tilted as given.
fn rendered_case(preset: &str, tilt: Option<f64>, density: f64, seed: u64) -> (Scene, Rendered) {
    let mut s = scene(preset, seed, 800, 600);
    if let Some(t) = tilt {
        s.camera.tilt_deg = t;
    }
    let position = random_position(&mut Rng::new(seed), density);
    let Ok(frame) = render(&position, &s) else { panic!("render failed for {preset}") };
    (s, frame)
}

#[test]
fn locates_rendered_boards_across_conditions() {
    // (preset, tilt override, stone density)
    let cases: &[(&str, Option<f64>, f64)] = &[
        ("clean", None, 0.0),
        ("overhead", None, 0.3),
        ("webcam", None, 0.15),
        ("oblique", Some(45.0), 0.2),
        ("phone", None, 0.5),
        ("dim", None, 0.3),
        ("harsh", None, 0.3),
        ("small", Some(35.0), 0.6),
    ];
    let mut failures = Vec::new();
    for (i, &(preset, tilt, density)) in cases.iter().enumerate() {
        let seed = 100 + i as u64;
        let (s, frame) = rendered_case(preset, tilt, density, seed);
        match locate(&frame.image, &LocateOptions::default()) {
            Ok(located) => {
                let e = tengen_vision::evaluate::worst_intersection_error_cells(
                    &located.geometry,
                    &frame.truth.intersections,
                );
                println!("{preset:9} tilt {:4.1} roll {:6.1} density {density}: worst {e:.3} cell, {} inliers, k1 {:+.3} (truth {:+.3})",
                    s.camera.tilt_deg, s.camera.roll_deg, located.quality.inlier_intersections, located.geometry.lens.k1, frame.truth.lens.k1);
                if e > 0.2 {
                    failures.push(format!("{preset}: worst intersection {e:.3} cell"));
                }
            }
            Err(e) => failures.push(format!("{preset}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn images_without_a_board_are_an_error() {
    // Smooth clutter with a few straight edges and bars: no 19×19 lattice anywhere.
    let (w, h) = (640u32, 480u32);
    let noise = tengen_synth::noise::Noise2::new(9);
    let mut img = RgbImage::from_fn(w, h, |x, y| {
        let v = noise.at(x as f32 / 40.0, y as f32 / 40.0);
        let base = (60.0 + 160.0 * v).clamp(0.0, 255.0) as u8;
        image::Rgb([base, base.saturating_sub(20), base / 2])
    });
    for k in 0..6u32 {
        for y in 0..h {
            let x = 50 + k * 97 + y / 7;
            if x < w {
                img.put_pixel(x, y, image::Rgb([20, 20, 20]));
            }
        }
    }
    let result = locate(&img, &LocateOptions::default());
    assert!(matches!(result, Err(LocateError::NoBoard(_))), "{result:?}");

    let flat = RgbImage::from_pixel(300, 200, image::Rgb([180, 150, 100]));
    assert!(matches!(locate(&flat, &LocateOptions::default()), Err(LocateError::NoBoard(_))));

    let tiny = RgbImage::from_pixel(20, 20, image::Rgb([180, 150, 100]));
    assert!(matches!(locate(&tiny, &LocateOptions::default()), Err(LocateError::ImageTooSmall { .. })));
}

#[test]
fn given_corners_override_the_search() {
    let s = scene("clean", 5, 640, 480);
    let Ok(frame) = render(&Position::empty(), &s) else { panic!("render failed") };
    let corners = frame.truth.corners;
    let options = LocateOptions {
        corners: Some(corners),
        lens: Some(LensDistortion::none(640, 480)),
        ..LocateOptions::default()
    };
    let Ok(located) = locate(&frame.image, &options) else { panic!("corners refused") };
    assert_eq!(located.quality.source, GeometrySource::GivenCorners);
    // Exact corners stay where they are (refined to the lines they already lie on).
    let e = tengen_vision::evaluate::worst_intersection_error_cells(&located.geometry, &frame.truth.intersections);
    assert!(e < 0.1, "exact corners moved: worst intersection {e:.3} cell");
    // Crossed corners are refused with a clear error.
    let crossed = [corners[0], corners[2], corners[1], corners[3]];
    assert!(from_corners(crossed, LensDistortion::none(640, 480)).is_err());
}

/// The true outer corners, each moved `cells` (of the board's mean cell) in its own direction.
fn clicked(truth: &[[f64; 2]; 4], cells: f64, turn: f64) -> [[f64; 2]; 4] {
    let side =
        (0..4).map(|k| (truth[k][0] - truth[(k + 1) % 4][0]).hypot(truth[k][1] - truth[(k + 1) % 4][1])).sum::<f64>()
            / 4.0;
    let cell = side / (BOARD_LINES - 1) as f64;
    std::array::from_fn(|k| {
        let a = turn + k as f64 * 2.4;
        [truth[k][0] + cells * cell * a.cos(), truth[k][1] + cells * cell * a.sin()]
    })
}

#[test]
fn corners_clicked_up_to_half_a_cell_off_are_refined_to_the_lines() {
    // (preset, tilt override, stone density, how far off the clicks are in cells)
    let cases: &[(&str, Option<f64>, f64, f64)] = &[
        ("clean", None, 0.0, 0.45),
        ("overhead", None, 0.3, 0.25),
        ("webcam", None, 0.15, 0.4),
        ("oblique", Some(45.0), 0.2, 0.3),
        ("phone", None, 0.5, 0.35),
        ("dim", None, 0.3, 0.45),
    ];
    let mut failures = Vec::new();
    for (i, &(preset, tilt, density, off)) in cases.iter().enumerate() {
        let seed = 300 + i as u64;
        let (_, frame) = rendered_case(preset, tilt, density, seed);
        let given = clicked(&frame.truth.corners, off, i as f64);
        let before = from_corners(given, LensDistortion::none(800, 600))
            .map(|l| tengen_vision::evaluate::worst_intersection_error_cells(&l.geometry, &frame.truth.intersections));
        let Ok(refined) = refine_corners(&tengen_vision::grey(&frame.image), given, None) else {
            panic!("{preset}: the clicked corners were refused")
        };
        let after = tengen_vision::evaluate::worst_intersection_error_cells(
            &refined.located.geometry,
            &frame.truth.intersections,
        );
        println!(
            "{preset:9} clicks {off} cell off: worst intersection {before:?} -> {after:.3} cell, {:?}",
            refined.refinement
        );
        match &refined.refinement {
            Refinement::Refined { moved_cells } => {
                // Each corner moved back by about as far as it was off.
                if moved_cells.iter().any(|m| (m - off).abs() > 0.2) {
                    failures.push(format!("{preset}: corners moved {moved_cells:?}, clicked {off} cell off"));
                }
            }
            Refinement::Found { .. } => failures.push(format!("{preset}: refine_corners searched instead of refining")),
            Refinement::Kept { reason } => failures.push(format!("{preset}: not refined: {reason}")),
        }
        if after > 0.15 {
            failures.push(format!("{preset}: worst intersection {after:.3} cell after refinement"));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

fn gray(img: &RgbImage) -> GrayImage {
    image::DynamicImage::ImageRgb8(img.clone()).into_luma8()
}

#[test]
fn tracker_tells_stable_moved_and_lost() {
    let position = random_position(&mut Rng::new(3), 0.2);
    let mut s = scene("overhead", 11, 640, 480);
    s.camera.roll_deg = 10.0;
    s.camera.offset = [0.0, 0.0];
    let Ok(first) = render(&position, &s) else { panic!("render failed") };
    let Ok(located) = locate(&first.image, &LocateOptions::default()) else { panic!("not located") };
    let mut tracker =
        Tracker::new(located.geometry.clone(), &gray(&first.image), TrackerConfig::default(), LocateOptions::default());

    // The same scene again (new noise seed): stable.
    let Ok(again) = render(&position, &s.clone().with_seed(12)) else { panic!("render failed") };
    let status = tracker.check(&gray(&again.image));
    assert!(matches!(status, TrackStatus::Stable { .. }), "{status:?}");

    // A hand over the board hides lines but moves nothing: still stable.
    let hand_scene = s.clone().with_seed(13).with_hand(Hand::reaching(Side::South, 9.0, 0.7));
    let Ok(with_hand) = render(&position, &hand_scene) else { panic!("render failed") };
    assert!(with_hand.truth.hand_over_board);
    let status = tracker.check(&gray(&with_hand.image));
    assert!(matches!(status, TrackStatus::Stable { .. }), "hand over the board: {status:?}");

    // Board pushed across the table and turned a little: moved, with the new grid.
    let mut moved_scene = s.clone();
    moved_scene.camera.offset = [0.04, -0.03];
    moved_scene.camera.roll_deg = 14.0;
    let Ok(moved) = render(&position, &moved_scene) else { panic!("render failed") };
    match tracker.check(&gray(&moved.image)) {
        TrackStatus::Moved { located, shift_cells } => {
            assert!(shift_cells > 0.25, "{shift_cells}");
            let e =
                tengen_vision::evaluate::worst_intersection_error_cells(&located.geometry, &moved.truth.intersections);
            assert!(e < 0.2, "re-located grid off by {e:.3} cell");
        }
        other => panic!("expected Moved, got {other:?}"),
    }

    // No board at all: lost.
    let blank = GrayImage::from_pixel(640, 480, Luma([128]));
    assert!(matches!(tracker.check(&blank), TrackStatus::Lost { .. }));
}
