//! Property: a random legal game, turned into the reading stream a camera would give — hand
//! frames full of garbage (flagged occluded), captured stones lifted a view later, single-frame
//! flips and low-confidence points — yields exactly the game's record and no infraction.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use proptest::prelude::*;
use tengen_referee::{EventKind, Observation, PointObservation, Referee, RefereeConfig, Status};
use tengen_rules::{Color, Game, Move, Point, PointState, Stone, BOARD_LINES};

/// Draws for the noise, driven by proptest's seed: draw k is splitmix64's output for the state
/// seed + k·γ (the counter form of the generator, no state but the count).
struct Rng {
    seed: u64,
    draws: u64,
}
impl Rng {
    fn new(seed: u64) -> Self {
        Self { seed, draws: 0 }
    }
    fn next(&mut self) -> u64 {
        self.draws += 1;
        let mut z = self.seed.wrapping_add(self.draws.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

type Cells = [[Stone; BOARD_LINES]; BOARD_LINES];

fn reading(s: Stone) -> PointState {
    match s {
        Stone::Empty => PointState::Empty,
        Stone::Of(Color::Black) => PointState::Black,
        Stone::Of(Color::White) => PointState::White,
    }
}

fn frame(t: f64, cells: &Cells, occluded: bool, rng: &mut Rng) -> Observation {
    let mut points = [[PointObservation { reading: PointState::Empty, confidence: 0.95 }; BOARD_LINES]; BOARD_LINES];
    for r in 0..BOARD_LINES {
        for c in 0..BOARD_LINES {
            points[r][c] = PointObservation {
                reading: reading(cells[r][c]),
                confidence: 0.9 + 0.1 * (rng.below(10) as f32 / 10.0),
            };
        }
    }
    if occluded {
        // A hand: a rectangle of garbage readings, some of them confident.
        let (r0, c0) = (rng.below(BOARD_LINES as u64) as usize, rng.below(BOARD_LINES as u64) as usize);
        let (h, w) = (3 + rng.below(8) as usize, 2 + rng.below(5) as usize);
        for row in points.iter_mut().skip(r0).take(h) {
            for p in row.iter_mut().skip(c0).take(w) {
                let reading = [PointState::Empty, PointState::Black, PointState::White, PointState::Unknown]
                    [rng.below(4) as usize];
                *p = PointObservation { reading, confidence: rng.below(100) as f32 / 100.0 };
            }
        }
    } else {
        // Noise: a few single-frame flips, confident, and a few unreadable points.
        for _ in 0..rng.below(3) {
            let (r, c) = (rng.below(BOARD_LINES as u64) as usize, rng.below(BOARD_LINES as u64) as usize);
            let reading = [PointState::Empty, PointState::Black, PointState::White][rng.below(3) as usize];
            points[r][c] = PointObservation { reading, confidence: 0.9 };
        }
        for _ in 0..rng.below(3) {
            let (r, c) = (rng.below(BOARD_LINES as u64) as usize, rng.below(BOARD_LINES as u64) as usize);
            points[r][c] = PointObservation { reading: PointState::Unknown, confidence: 0.1 };
        }
    }
    Observation { t, points, occluded, frame_ref: None }
}

/// Plays the attempts that are legal (in a `region`×`region` corner, so captures and kos happen)
/// and returns (colour, point, captured) per move.
fn random_game(attempts: &[(u8, u8)], region: u8) -> Vec<(Color, Point, Vec<Point>)> {
    let mut game = match Game::new(BOARD_LINES as u8, BOARD_LINES as u8) {
        Ok(g) => g,
        Err(e) => panic!("19x19: {e}"),
    };
    let mut out = Vec::new();
    for &(c, r) in attempts {
        let p = Point::new(c % region, r % region);
        let color = game.to_move();
        if let Ok(o) = game.play(color, Move::Place(p)) {
            // Keep out of whole-board repetitions: those are flagged for the arbiter by design.
            if o.repetition.is_some() {
                break;
            }
            out.push((color, p, o.captured));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn noisy_streams_of_legal_games_give_the_record_and_no_infraction(
        attempts in prop::collection::vec((0u8..19, 0u8..19), 1..90),
        region in 5u8..10,
        seed in any::<u64>(),
    ) {
        let record = random_game(&attempts, region);
        let mut rng = Rng::new(seed);
        let mut referee = Referee::new(RefereeConfig::default());
        let mut cells: Cells = [[Stone::Empty; BOARD_LINES]; BOARD_LINES];
        let mut t = 0.0;
        let mut events = Vec::new();
        let mut view = |cells: &Cells, t: &mut f64, rng: &mut Rng, events: &mut Vec<tengen_referee::Event>| {
            for _ in 0..1 + rng.below(3) {
                *t += 0.2;
                events.extend(referee.observe(&frame(*t, cells, true, rng)));
            }
            for _ in 0..5 + rng.below(3) {
                *t += 0.3;
                events.extend(referee.observe(&frame(*t, cells, false, rng)));
            }
        };
        view(&cells, &mut t, &mut rng, &mut events);
        for (color, p, captured) in &record {
            cells[usize::from(p.row)][usize::from(p.col)] = Stone::Of(*color);
            if !captured.is_empty() && rng.chance(50) {
                // The stone first, the captured stones lifted in a later view.
                view(&cells, &mut t, &mut rng, &mut events);
            }
            for q in captured {
                cells[usize::from(q.row)][usize::from(q.col)] = Stone::Empty;
            }
            view(&cells, &mut t, &mut rng, &mut events);
        }
        // The camera keeps watching after the last move (noise can keep one short view from
        // settling; the next view settles it, as it does for every earlier move).
        view(&cells, &mut t, &mut rng, &mut events);
        let seen: Vec<(Color, Point)> = events
            .iter()
            .filter(|e| e.kind == EventKind::Move)
            .filter_map(|e| Some((e.side?, e.points.first()?.point)))
            .collect();
        let expected: Vec<(Color, Point)> = record.iter().map(|(c, p, _)| (*c, *p)).collect();
        prop_assert_eq!(seen, expected);
        let infractions: Vec<String> = events
            .iter()
            .filter(|e| e.kind.is_infraction() && e.status == Status::Suspected)
            .map(|e| e.message.en.clone())
            .collect();
        prop_assert!(infractions.is_empty(), "{:?}", infractions);
        let state = referee.state();
        prop_assert!(state.differences.is_empty());
        prop_assert_eq!(state.move_number as usize, record.len());
    }
}

#[test]
fn the_generator_makes_captures_so_the_property_is_not_vacuous() {
    let mut rng = Rng::new(7);
    let attempts: Vec<(u8, u8)> = (0..90).map(|_| (rng.below(19) as u8, rng.below(19) as u8)).collect();
    let record = random_game(&attempts, 6);
    let captures: usize = record.iter().map(|(_, _, c)| c.len()).sum();
    assert!(record.len() > 30 && captures > 0, "{} moves, {captures} captures", record.len());
}
