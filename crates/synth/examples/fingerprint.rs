//! Prints hashes of the pixels and the ground truth of a fixed set of renders (every preset, random scenes with hands
//! and bowls, a moving hand holding a stone), to check that a refactor keeps outputs
//! bit-identical: `cargo run --release -p tengen-synth --example fingerprint` before and after.

use tengen_rules::Stone;
use tengen_synth::{render, Hand, Position, Scene, Side, PRESETS};

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut position = Position::empty();
    for i in 0..150usize {
        let (col, row) = ((i * 7) % 19, (i * 11 + i / 19) % 19);
        let stone = if i % 2 == 0 { Stone::BLACK } else { Stone::WHITE };
        position.set(col, row, stone);
    }
    let mut scenes: Vec<(String, Scene)> =
        PRESETS.iter().filter_map(|name| Some((name.to_string(), Scene::preset(name)?))).collect();
    for seed in 0..16 {
        scenes.push((format!("random {seed}"), Scene::random(seed)));
    }
    let mut moving = Hand {
        holding: Some(Stone::WHITE),
        motion_mm: [12.0, -8.0, 3.0],
        ..Hand::placing(Side::East, 9.0, 7.0, 0.8, None)
    };
    moving.lift_mm = 25.0;
    scenes.push(("moving hand".into(), Scene::default().with_hand(moving)));
    let mut all = 0u64;
    for (name, scene) in scenes {
        let scene = scene.with_size(640, 480);
        let frame = render(&position, &scene)?;
        let (pixels, truth) = (fnv(frame.image.as_raw()), fnv(frame.truth.to_json().as_bytes()));
        all = all.rotate_left(5) ^ pixels ^ truth.rotate_left(1);
        println!("{pixels:016x} {truth:016x} {name}");
    }
    println!("{all:016x} all");
    Ok(())
}
