//! Referee speed: time per observed frame over a realistic stream (a 150-move game, hands and
//! noise), against a baseline measured in the same run (copying the frame's reading, the least
//! any consumer of a frame does), plus the worst explanation the referee searches (six stones
//! seen at once: every order tried). Run: `cargo bench -p tengen-referee --bench observe`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Instant;

use tengen_referee::{Observation, PointObservation, Referee, RefereeConfig};
use tengen_rules::{Color, Game, Move, Point, PointState, Stone, BOARD_LINES};

fn lcg(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

fn observation(t: f64, board: &[[Stone; BOARD_LINES]; BOARD_LINES], occluded: bool, rng: &mut u64) -> Observation {
    let mut points = [[PointObservation::default(); BOARD_LINES]; BOARD_LINES];
    for r in 0..BOARD_LINES {
        for c in 0..BOARD_LINES {
            let reading = match board[r][c] {
                Stone::Empty => PointState::Empty,
                Stone::Of(Color::Black) => PointState::Black,
                Stone::Of(Color::White) => PointState::White,
            };
            points[r][c] = PointObservation { reading, confidence: 0.95 };
        }
    }
    if occluded {
        for row in points.iter_mut().skip(8).take(6) {
            for p in row.iter_mut().take(5) {
                *p = PointObservation { reading: PointState::Unknown, confidence: 0.0 };
            }
        }
    } else if lcg(rng).is_multiple_of(3) {
        let (r, c) = ((lcg(rng) % 19) as usize, (lcg(rng) % 19) as usize);
        points[r][c] = PointObservation { reading: PointState::White, confidence: 0.9 };
    }
    Observation { t, points, occluded, frame_ref: None }
}

/// A stream of frames: per move two hand frames and six clear frames, 0.25 s apart.
fn stream(moves: usize) -> Vec<Observation> {
    let mut game = Game::new(19, 19).unwrap();
    let mut board = [[Stone::Empty; BOARD_LINES]; BOARD_LINES];
    let mut rng = 42u64;
    let mut t = 0.0;
    let mut out = Vec::new();
    let mut played = 0;
    while played < moves {
        let p = Point::new((lcg(&mut rng) % 19) as u8, (lcg(&mut rng) % 19) as u8);
        let color = game.to_move();
        let Ok(o) = game.play(color, Move::Place(p)) else { continue };
        played += 1;
        board[usize::from(p.row)][usize::from(p.col)] = Stone::Of(color);
        for q in o.captured {
            board[usize::from(q.row)][usize::from(q.col)] = Stone::Empty;
        }
        for k in 0..8 {
            t += 0.25;
            out.push(observation(t, &board, k < 2, &mut rng));
        }
    }
    out
}

fn main() {
    let frames = stream(150);
    let n = frames.len() as f64;

    let start = Instant::now();
    let mut copied = 0usize;
    for f in &frames {
        let c: Observation = black_box(f.clone());
        copied += usize::from(c.occluded);
    }
    let baseline = start.elapsed().as_secs_f64() / n;

    let start = Instant::now();
    let mut referee = Referee::new(RefereeConfig::default());
    let mut events = 0usize;
    for f in &frames {
        events += referee.observe(black_box(f)).len();
    }
    let per_frame = start.elapsed().as_secs_f64() / n;
    assert_eq!(referee.state().move_number, 150, "the bench stream must be read right");

    // Worst explanation: six stones appear at once (missed frames), every order is tried.
    let rows_before: Vec<String> = (0..19).map(|_| ".".repeat(19)).collect();
    let mut rows_after = rows_before.clone();
    for (r, c, ch) in [(3, 3, "X"), (3, 15, "O"), (15, 3, "X"), (15, 15, "O"), (9, 9, "X"), (2, 9, "O")] {
        rows_after[r].replace_range(c..c + 1, ch);
    }
    let reps = 20;
    let start = Instant::now();
    for _ in 0..reps {
        let mut r = Referee::new(RefereeConfig::default());
        for k in 0..5 {
            r.observe(&Observation::from_rows(f64::from(k) * 0.5, &rows_before, false).unwrap());
        }
        for k in 5..10 {
            r.observe(&Observation::from_rows(f64::from(k) * 0.5, &rows_after, false).unwrap());
        }
        assert_eq!(r.state().move_number, 6);
    }
    let six_at_once = start.elapsed().as_secs_f64() / f64::from(reps);

    println!("frames: {} ({} occluded), events: {events}", frames.len(), copied);
    println!("baseline (copy one frame's reading): {:.2} µs/frame", baseline * 1e6);
    println!(
        "referee.observe:                     {:.2} µs/frame = {:.1}× baseline",
        per_frame * 1e6,
        per_frame / baseline
    );
    println!(
        "six stones at once (10 frames, search of 720 orders): {:.2} ms = {:.0}× baseline frame",
        six_at_once * 1e3,
        six_at_once / baseline
    );
}
