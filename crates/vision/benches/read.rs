//! Speed of reading a board against a bare JPEG decode of the same 1920×1080 frame, measured in
//! the same run: decode + rectify + read 361 points + occlusion, with the geometry known (as when
//! the board is tracked from frame to frame). Prints medians and the ratio; target ≤ 1.5×.
//! Run: `cargo bench -p tengen-vision --bench read`. Each frame is read with the shipped reader
//! (the learned point reader included) and with the classical reader alone, in the same run.

use std::time::{Duration, Instant};

use tengen_rules::Stone;

use tengen_synth::{render, Hand, Position, Scene, Side};
use tengen_vision::decode_rgb;
use tengen_vision::{read_board, GridGeometry, ReaderConfig};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn min(v: &[Duration]) -> Duration {
    v.iter().copied().min().unwrap_or_default()
}

/// The default scene seen 60° from vertical from a board corner.
fn steep_corner_view() -> Scene {
    let mut scene = Scene::default();
    scene.camera.tilt_deg = 60.0;
    scene.camera.azimuth_deg = 45.0;
    scene.camera.fov_deg = 60.0;
    scene.camera.board_fill = 0.8;
    scene
}

fn main() {
    let mut position = Position::empty();
    let mut rng = tengen_synth::noise::Rng::new(42);
    for k in 0..120 {
        let (c, r) = ((rng.unit() * 19.0) as usize % 19, (rng.unit() * 19.0) as usize % 19);
        position.set(c, r, if k % 2 == 0 { Stone::BLACK } else { Stone::WHITE });
    }
    let mut results = Vec::new();
    for (label, scene) in [
        ("phone 1920×1080", Scene::preset("phone").unwrap_or_default()),
        (
            "oblique 1920×1080 + hand",
            Scene::preset("oblique").unwrap_or_default().with_hand(Hand::reaching(Side::South, 9.0, 0.4)),
        ),
        // White tops lean over the cell centres here, so the reader measures the points whose
        // reference they whiten a second time (`BoardColour::wood_reference`): its worst case.
        ("steep 60° from a corner 1920×1080", steep_corner_view()),
    ] {
        let scene = scene.with_size(1920, 1080).with_seed(7);
        let frame = match render(&position, &scene) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("render failed: {e}");
                return;
            }
        };
        let jpeg = frame.jpeg();
        let t = &frame.truth;
        let geometry = GridGeometry { homography: t.homography, lens: t.lens };
        // The shipped reader (the classical one and the learned one multiplied), and the
        // classical reader alone for the learned reader's share of the time.
        let configs = [
            ("shipped", ReaderConfig::default()),
            ("classical alone", ReaderConfig { patch_model: None, ..ReaderConfig::default() }),
        ];
        for (reader, config) in configs {
            let rounds = 25;
            let (mut bare, mut full, mut read_only) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..3 {
                // Warm-up.
                let _ = decode_rgb(&jpeg).map(|f| read_board(&f.rgb, &geometry, &config));
            }
            for _ in 0..rounds {
                let t0 = Instant::now();
                let decoded = decode_rgb(&jpeg);
                bare.push(t0.elapsed());
                std::hint::black_box(&decoded);

                let t0 = Instant::now();
                let reading = decode_rgb(&jpeg).map(|f| {
                    let t1 = Instant::now();
                    let r = read_board(&f.rgb, &geometry, &config);
                    read_only.push(t1.elapsed());
                    r
                });
                full.push(t0.elapsed());
                std::hint::black_box(&reading);
            }
            // Medians, and minima (the least disturbed run: robust when other work shares the CPU).
            let (bm, fm) = (min(&bare), min(&full));
            let (b, f, r) = (median(bare), median(full), median(read_only));
            let ratio = f.as_secs_f64() / b.as_secs_f64();
            println!(
            "{label}, {reader}: bare decode {:.2} ms | decode + rectify + read + occlusion {:.2} ms (read alone {:.2} ms) | ratio {:.2}× median, {:.2}× min-of-{rounds} (target ≤ 1.5×)",
            b.as_secs_f64() * 1e3,
            f.as_secs_f64() * 1e3,
            r.as_secs_f64() * 1e3,
            ratio,
            fm.as_secs_f64() / bm.as_secs_f64()
        );
            results.push(ratio);
        }
    }
}
