//! Speed of board location on a 1920×1080 frame, against a bare JPEG decode of the same frame
//! measured in the same run: locate from scratch, the tracked check (grid still fits), and the
//! decode itself; then a failed search on a 12 MP frame, against that frame's decode. Run with
//! `cargo bench -p tengen-vision --bench locate`.
//!
//! The frames are rendered by `tengen-synth` (phone preset, 30° tilt, a mid-game position), so
//! the benchmark needs no data files.

use std::time::{Duration, Instant};

use image::DynamicImage;
use tengen_rules::Stone;
use tengen_synth::{render, Position, Scene};
use tengen_vision::decode_rgb;
use tengen_vision::{line_score, Tracker, TrackerConfig};
use tengen_vision::{locate, LocateOptions};

/// Runs `f` repeatedly for about `budget` (at least 3 times) and returns the median time.
fn median_time(budget: Duration, mut f: impl FnMut()) -> Duration {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3 || (start.elapsed() < budget && times.len() < 200) {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

fn mid_game() -> Position {
    let mut p = Position::empty();
    // A deterministic scatter of about 120 stones.
    let mut state: u64 = 12345;
    for _ in 0..120 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let c = ((state >> 33) % 19) as usize;
        let r = ((state >> 45) % 19) as usize;
        p.set(c, r, if (state >> 20) & 1 == 0 { Stone::BLACK } else { Stone::WHITE });
    }
    p
}

fn main() {
    let Some(scene) = Scene::preset("phone") else {
        eprintln!("synth has no `phone` preset; nothing to measure");
        return;
    };
    let scene = scene.with_size(1920, 1080).with_seed(3);
    let frame = match render(&mid_game(), &scene) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("could not render the frame: {e}");
            return;
        }
    };
    let jpeg = frame.jpeg();
    let budget = Duration::from_secs(4);
    let decode = median_time(budget, || {
        let decoded = decode_rgb(&jpeg);
        std::hint::black_box(decoded.is_ok());
    });
    let Ok(decoded) = decode_rgb(&jpeg) else {
        eprintln!("the rendered JPEG did not decode");
        return;
    };
    let rgb = decoded.rgb;
    let gray = DynamicImage::ImageRgb8(rgb.clone()).into_luma8();
    let options = LocateOptions::default();
    let located = match locate(&rgb, &options) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("locate failed on the benchmark frame: {e}");
            return;
        }
    };
    let from_scratch = median_time(budget, || {
        std::hint::black_box(locate(&rgb, &options).is_ok());
    });
    let to_gray = median_time(budget, || {
        std::hint::black_box(DynamicImage::ImageRgb8(rgb.clone()).into_luma8().len());
    });
    let score = median_time(budget, || {
        std::hint::black_box(line_score(&gray, &located.geometry));
    });
    let mut tracker = Tracker::new(located.geometry.clone(), &gray, TrackerConfig::default(), options.clone());
    let tracked = median_time(budget, || {
        std::hint::black_box(tracker.check(&gray));
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "frame 1920×1080, {} JPEG bytes; located with {} intersections",
        jpeg.len(),
        located.quality.inlier_intersections
    );
    println!("bare JPEG decode (image_io)        {:8.2} ms   1.00×", ms(decode));
    println!(
        "locate from scratch                {:8.2} ms   {:.2}× decode",
        ms(from_scratch),
        ms(from_scratch) / ms(decode)
    );
    println!("tracked check (grey frame given)   {:8.3} ms   {:.3}× decode", ms(tracked), ms(tracked) / ms(decode));
    println!("  of which the line score          {:8.3} ms", ms(score));
    println!("RGB → grey conversion              {:8.2} ms   {:.2}× decode", ms(to_gray), ms(to_gray) / ms(decode));
    failed_search_at_12_mp();
}

/// A failed search on a 12 MP frame (issue 9 asks for at most 1 s): the phone scene at
/// 4032×3024, the mid-game stones on a board whose lines and star points are drawn in the wood's
/// own colour. The lit outline and the stones are there, the crossings are not, so every look
/// runs and fails, on both greys, until the work budget stops the lamp's channel: the slowest
/// a search can fail.
fn failed_search_at_12_mp() {
    let Some(mut scene) = Scene::preset("phone") else {
        return;
    };
    scene = scene.with_size(4032, 3024).with_seed(3);
    scene.board.line_rgb = Some(scene.board.wood_rgb);
    scene.board.star_radius_mm = 0.0;
    let jpeg = match render(&mid_game(), &scene) {
        Ok(frame) => frame.jpeg(),
        Err(e) => {
            eprintln!("could not render the 12 MP frame: {e}");
            return;
        }
    };
    let Ok(decoded) = decode_rgb(&jpeg) else {
        eprintln!("the rendered 12 MP JPEG did not decode");
        return;
    };
    let options = LocateOptions::default();
    let outcome = locate(&decoded.rgb, &options);
    let budget = Duration::from_secs(8);
    let decode = median_time(budget, || {
        std::hint::black_box(decode_rgb(&jpeg).is_ok());
    });
    let failed = median_time(budget, || {
        std::hint::black_box(locate(&decoded.rgb, &options).is_err());
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    match outcome {
        Ok(found) => println!(
            "12 MP frame without lines: a board was found ({} intersections), not a failed search",
            found.quality.inlier_intersections
        ),
        Err(why) => println!("12 MP frame without lines, {} JPEG bytes: {why}", jpeg.len()),
    }
    println!("bare JPEG decode, 12 MP            {:8.2} ms   1.00×", ms(decode));
    println!(
        "failed search, 12 MP               {:8.2} ms   {:.2}× decode ({:.2} s of the 1 s allowed)",
        ms(failed),
        ms(failed) / ms(decode),
        failed.as_secs_f64()
    );
}
