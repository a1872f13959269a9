//! How game-like the playout's positions are: for several stone counts, the share of lone
//! stones (no same-colour neighbour) and the mean stones per chain over 30 seeds, then one
//! position to look at. `cargo run -p tengen-synth --example playout_stats`.
//!
//! Real end positions for comparison (goban-watcher-dev games 1–3, from their `grid.txt`):
//! 283 stones: lone 0.04, 7.9 per chain; 269: lone 0.04, 6.9; 129: lone 0.20, 2.35; an imago
//! game at 100 stones: lone 0.28, 2.1. The playout gives (30 seeds) 100: 0.16, 2.8; 250: 0.07,
//! 5.7; 300: 0.04, 9.0 — a little clumpy early, a little scattered at 250.

use tengen_rules::{Stone, BOARD_LINES};
use tengen_synth::Position;

/// (lone share, stones per chain) of a position.
fn shape(p: &Position) -> (f64, f64) {
    let n = BOARD_LINES as i64;
    let get = |c: i64, r: i64| {
        if c < 0 || r < 0 || c >= n || r >= n {
            Stone::Empty
        } else {
            p.get(c as usize, r as usize)
        }
    };
    let (mut stones, mut lone, mut chains) = (0usize, 0usize, 0usize);
    let mut seen = vec![false; BOARD_LINES * BOARD_LINES];
    for r in 0..n {
        for c in 0..n {
            let s = get(c, r);
            if s == Stone::Empty {
                continue;
            }
            stones += 1;
            let around = [(c - 1, r), (c + 1, r), (c, r - 1), (c, r + 1)];
            lone += usize::from(!around.iter().any(|&(a, b)| get(a, b) == s));
            if seen[(r * n + c) as usize] {
                continue;
            }
            chains += 1;
            seen[(r * n + c) as usize] = true;
            let mut stack = vec![(c, r)];
            while let Some((x, y)) = stack.pop() {
                for (a, b) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] {
                    if get(a, b) == s && !seen[(b * n + a) as usize] {
                        seen[(b * n + a) as usize] = true;
                        stack.push((a, b));
                    }
                }
            }
        }
    }
    (lone as f64 / stones.max(1) as f64, stones as f64 / chains.max(1) as f64)
}

fn main() {
    const SEEDS: u64 = 30;
    for stones in [40usize, 100, 160, 210, 250, 300, 330] {
        let (lone, per_chain) = (0..SEEDS)
            .map(|seed| shape(&Position::game_like(seed, stones)))
            .fold((0.0, 0.0), |(l, c), (a, b)| (l + a, c + b));
        println!("{stones}: lone {:.2} per chain {:.2}", lone / SEEDS as f64, per_chain / SEEDS as f64);
    }
    for row in Position::game_like(3, 210).to_rows() {
        println!("{row}");
    }
}
