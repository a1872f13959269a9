//! Render timings: `cargo run -p tengen-synth --example bench` (dev profile, opt-level 1) or with
//! `--release`. Prints the best of several runs per case, and the ratio to encoding the same
//! frame as JPEG (a baseline measured in the same run, so machine load cancels out roughly).

use std::time::{Duration, Instant};

use tengen_rules::Stone;

use tengen_synth::{encode_jpeg, render, Hand, Position, Scene, Side};

/// CPU time of the whole process (user + system, all threads) from `/proc/self/stat`, so a
/// loaded shared machine does not inflate the figures; `None` off Linux. Ticks are 10 ms, so
/// cases are timed over several runs.
fn process_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = text.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Over `runs`: (best wall time, mean process CPU time, last result).
fn timed<T>(runs: u32, mut f: impl FnMut() -> T) -> (Duration, Duration, T) {
    let mut best_wall = Duration::MAX;
    let cpu0 = process_cpu();
    let mut out = f();
    for _ in 0..runs {
        let start = Instant::now();
        out = f();
        best_wall = best_wall.min(start.elapsed());
    }
    let cpu = match (cpu0, process_cpu()) {
        (Some(a), Some(b)) => b.saturating_sub(a) / (runs + 1),
        _ => best_wall,
    };
    (best_wall, cpu, out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let profile = if cfg!(debug_assertions) { "dev" } else { "release" };
    let mut position = Position::empty();
    // A middle-game density: 120 stones.
    for i in 0..120usize {
        let (col, row) = ((i * 7) % 19, (i * 11 + i / 19) % 19);
        position.set(col, row, if i % 2 == 0 { Stone::BLACK } else { Stone::WHITE });
    }
    let hand = Hand { holding: Some(Stone::WHITE), ..Hand::placing(Side::North, 9.0, 7.0, 0.9, None) };
    let cases: Vec<(&str, Scene)> = vec![
        ("640x480 webcam", Scene::preset("webcam").ok_or("preset")?),
        ("640x480 webcam + hand", Scene::preset("webcam").ok_or("preset")?.with_hand(hand.clone())),
        ("960x540 default", Scene::default().with_size(960, 540)),
        ("1920x1080 default", Scene::default()),
        ("1920x1080 oblique + hand", Scene::preset("oblique").ok_or("preset")?.with_hand(hand)),
    ];
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "profile: {profile}; {} stones; {threads} cores; mean CPU time over 8 runs, all threads (best wall time in brackets)",
        position.stone_count()
    );
    for (name, scene) in cases {
        let (wall, cpu, frame) = timed(7, || render(&position, &scene));
        let frame = frame?;
        let (jpeg_wall, jpeg_cpu, bytes) = timed(7, || encode_jpeg(&frame.image, scene.jpeg_quality));
        println!(
            "{name:<26} render {:>7.1} ms ({:>7.1})   jpeg encode {:>6.1} ms ({:>6.1}, {} KB)   render/encode {:>5.1}×",
            cpu.as_secs_f64() * 1e3,
            wall.as_secs_f64() * 1e3,
            jpeg_cpu.as_secs_f64() * 1e3,
            jpeg_wall.as_secs_f64() * 1e3,
            bytes.len() / 1024,
            cpu.as_secs_f64() / jpeg_cpu.as_secs_f64().max(1e-9)
        );
    }
    Ok(())
}
