//! Development aid: render frames over presets, colour casts and hands with tengen-synth, read
//! them through the exact geometry, and print accuracy and the features of misread points.
//! `synthdev [OUT_DIR]` (failing frames are drawn there).

use std::error::Error;

use tengen_rules::{PointState, Stone};

use tengen_synth::{render, ColourCast, Hand, Position, Scene, Side, PRESETS};
use tengen_vision::evaluate::{parse_grid, reading_grid, score, Confusion};
use tengen_vision::{draw_reading, read_board_detailed};
use tengen_vision::{GridGeometry, LensDistortion, ReaderConfig};

fn random_position(seed: u64, stones: usize) -> Position {
    let mut rng = tengen_synth::noise::Rng::new(seed);
    let mut p = Position::empty();
    for k in 0..stones {
        let c = (rng.unit() * 19.0) as usize % 19;
        let r = (rng.unit() * 19.0) as usize % 19;
        p.set(c, r, if k % 2 == 0 { Stone::BLACK } else { Stone::WHITE });
    }
    p
}

fn main() -> Result<(), Box<dyn Error>> {
    let out = std::env::args().nth(1);
    let config = ReaderConfig::default();
    let mut total = Confusion::default();
    let (mut n, mut exact, mut hands, mut hands_flagged, mut clean_flagged, mut clean) = (0, 0, 0, 0, 0, 0);
    let casts = [ColourCast::Neutral, ColourCast::Blue, ColourCast::Green, ColourCast::Yellow];
    for (pi, preset) in PRESETS.iter().enumerate() {
        for variant in 0..4u64 {
            let seed = pi as u64 * 100 + variant;
            let Some(mut scene) = Scene::preset(preset) else { continue };
            scene = scene.with_seed(seed);
            if scene.width > 1000 {
                scene = scene.with_size(960, 540);
            }
            scene.light.cast = casts[(variant as usize + pi) % 4];
            if scene.light.cast != ColourCast::Neutral {
                scene.light.cast_strength = scene.light.cast_strength.max(0.5);
            }
            let with_hand = variant == 3;
            if with_hand {
                scene = scene.with_hand(Hand::reaching(Side::South, 6.0 + variant as f64, 0.45));
            }
            let position = random_position(seed, 40 + 30 * variant as usize);
            let frame = render(&position, &scene)?;
            let t = &frame.truth;
            let geometry = GridGeometry {
                homography: t.homography,
                lens: LensDistortion { k1: t.lens.k1, centre: t.lens.centre, scale: t.lens.scale },
            };
            let details = read_board_detailed(&frame.image, &geometry, &config);
            let truth = parse_grid(&t.grid.join("\n"))?;
            let read = reading_grid(&details.reading);
            // Score only points the truth says are visible and unoccluded.
            let mut masked = read;
            for r in 0..19 {
                for c in 0..19 {
                    let i = r * 19 + c;
                    if t.occluded[i] || !t.in_frame[i] {
                        masked[r][c] = truth[r][c];
                    }
                }
            }
            let s = score(&masked, &truth, false);
            total.merge(&s.confusion);
            n += 1;
            exact += usize::from(s.exact);
            if t.hand_over_board {
                hands += 1;
                hands_flagged += usize::from(details.reading.occluded);
            } else {
                clean += 1;
                clean_flagged += usize::from(details.reading.occluded);
            }
            let occl_truth = t.occluded.iter().filter(|o| **o).count();
            let hidden_wrong = (0..361)
                .filter(|&i| {
                    t.occluded[i]
                        && read[i / 19][i % 19] != PointState::Unknown
                        && read[i / 19][i % 19] != truth[i / 19][i % 19]
                })
                .count();
            println!(
                "{preset} v{variant} cast {:?} hand {} flagged {} (truth occl {occl_truth}, read occl {}) wrong {} unk {} hidden-wrong {hidden_wrong}",
                scene.light.cast, t.hand_over_board, details.reading.occluded, details.reading.occluded_points.len(),
                s.confusion.wrong(), s.confusion.unknown()
            );
            for r in 0..19 {
                for c in 0..19 {
                    if masked[r][c] != truth[r][c] && masked[r][c] != PointState::Unknown
                        || (masked[r][c] == PointState::Unknown && !t.occluded[r * 19 + c])
                    {
                        let f = details.features[r][c];
                        let p = details.posteriors[r][c];
                        println!(
                            "   r{r:2} c{c:2} true {} read {} bright {:.2} tail {:.2} neutral {:.2} gr {:.2} cdist {:.2} lines {:.3} spread {:.2} post [{:.2} {:.2} {:.2}]",
                            truth[r][c].to_char(), read[r][c].to_char(), f.brightness, f.dark_tail, f.neutral, f.green_red, f.colour_distance, f.lines, f.spread, p[0], p[1], p[2]
                        );
                    }
                }
            }
            if std::env::var("DUMPW").is_ok() && with_hand {
                for r in 0..19 {
                    for c in 0..19 {
                        if read[r][c] == PointState::White {
                            let f = details.features[r][c];
                            println!("W occl {} true {} bright {:.2} neutral {:.2} gr {:.2} lines {:.2} cdist {:.2} conf {:.4}", t.occluded[r * 19 + c], truth[r][c].to_char(), f.brightness, f.neutral, f.green_red, f.lines, f.colour_distance, details.reading.points[r][c].confidence);
                        }
                    }
                }
            }
            if let Some(dir) = &out {
                if !s.exact || with_hand {
                    let mut img = frame.image.clone();
                    draw_reading(&mut img, &geometry, &details.reading);
                    img.save(format!("{dir}/{preset}_{variant}.png"))?;
                }
            }
        }
    }
    println!(
        "TOTAL frames {n} exact {exact} points {}/{} wrong {} unknown {} hands flagged {hands_flagged}/{hands} clean flagged {clean_flagged}/{clean} confusion {:?}",
        total.correct(), total.total(), total.wrong(), total.unknown(), total.0
    );
    Ok(())
}
