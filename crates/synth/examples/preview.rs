//! Renders one frame per preset and a few random scenes into a folder (default /tmp/tengen-preview) and prints timings:
//! `cargo run -p tengen-synth --example preview [-- OUT_DIR]`.

use std::time::Instant;

use tengen_rules::Stone;

use tengen_synth::{render, Hand, Position, Scene, Side, PRESETS};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/tengen-preview".into());
    std::fs::create_dir_all(&out)?;
    let position = Position::parse_grid(SAMPLE)?;
    for (i, name) in PRESETS.iter().enumerate() {
        let mut scene = Scene::preset(name).ok_or("preset")?.with_seed(i as u64 + 1);
        if i % 2 == 1 {
            scene.hands.push(Hand {
                holding: Some(Stone::BLACK),
                ..Hand::placing(Side::South, 13.0, 12.0, 0.9, None)
            });
        }
        let start = Instant::now();
        let frame = render(&position, &scene)?;
        let took = start.elapsed();
        std::fs::write(format!("{out}/{name}.jpg"), frame.jpeg())?;
        std::fs::write(format!("{out}/{name}.truth.json"), frame.truth.to_json())?;
        frame.image.save(format!("{out}/{name}.png"))?;
        println!(
            "{name}: {}x{} in {:.1} ms",
            scene.width,
            scene.height,
            took.as_secs_f64() * 1e3
        );
    }
    for seed in 0..6u64 {
        let scene = Scene::random(seed).with_size(960, 540);
        let position = Position::random(seed, 40 + 30 * seed as usize);
        let frame = render(&position, &scene)?;
        std::fs::write(format!("{out}/random{seed}.jpg"), frame.jpeg())?;
        frame.image.save(format!("{out}/random{seed}.png"))?;
        println!(
            "random{seed}: {} stones, hand {}",
            position.stone_count(),
            frame.truth.hand_present
        );
    }
    Ok(())
}

const SAMPLE: &str = "
...................
...................
...O..........X....
...X.......O..OX...
..OX.........XO....
...................
...................
...................
...................
...................
...................
...................
...................
..XO...........X...
..X........X.......
..XO...........O...
...XO..........O...
...................
...................
";
