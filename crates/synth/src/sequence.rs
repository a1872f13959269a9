//! Frame sequences of play at the board: a script of physical actions (a hand places a stone,
//! lifts stones, the board rests) turned into timed frames, each a position plus the hands in
//! view. The script says what hands do, not what the rules say: a capture whose stones are never
//! lifted stays on the board, a stone can be taken back, a player can move twice.

use serde::{Deserialize, Serialize};

use tengen_rules::Stone;

use crate::position::Position;
use crate::scene::{Hand, Side};

/// One physical action at the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Action {
    /// A hand from `side` brings `stone` to (col, row) and puts it down (3 frames: reaching in
    /// with the stone, fingers on the placed stone, hand gone).
    Place {
        /// Colour of the stone.
        stone: Stone,
        /// Column, 0 = left.
        col: usize,
        /// Row, 0 = top.
        row: usize,
        /// The player's side.
        side: Side,
    },
    /// A hand from `side` picks up the stones at `points`, a few per frame, then leaves.
    Lift {
        /// Points (col, row) whose stones are taken off.
        points: Vec<(usize, usize)>,
        /// The lifting player's side.
        side: Side,
    },
    /// Nobody touches the board for `seconds` (one frame at the end).
    Rest {
        /// Duration in seconds.
        seconds: f64,
    },
}

/// One frame of a sequence: when, what lies on the board, which hands are in view.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceFrame {
    /// Seconds since the start of the sequence.
    pub time_s: f64,
    /// Stones physically on the board.
    pub position: Position,
    /// Hands in view.
    pub hands: Vec<Hand>,
    /// What is happening, for people reading the sequence.
    pub note: String,
}

/// Timing of the frames an action produces, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Between consecutive frames while a hand moves.
    pub hand_step_s: f64,
    /// From the hand leaving to the "settled" frame.
    pub settle_s: f64,
    /// Motion blur of moving hands: how far a hand travels during one exposure, in millimetres
    /// (0 = sharp hands; about 15–30 for a 1/30 s webcam exposure).
    pub hand_blur_mm: f64,
}

impl Default for Timing {
    fn default() -> Self {
        Self { hand_step_s: 0.4, settle_s: 1.5, hand_blur_mm: 0.0 }
    }
}

/// Turns a script into frames, starting from `start`, with the players' hand looks given per
/// side (skin and sleeve colours are taken from `looks`, target and holding are set here).
pub fn frames(
    start: &Position,
    actions: &[Action],
    timing: Timing,
    looks: &dyn Fn(Side) -> Hand,
) -> Vec<SequenceFrame> {
    let mut out = Vec::new();
    let mut board = start.clone();
    let mut time = 0.0;
    let mut push = |time: &mut f64, step: f64, board: &Position, hands: Vec<Hand>, note: String| {
        *time += step;
        out.push(SequenceFrame { time_s: *time, position: board.clone(), hands, note });
    };
    // Direction a hand moves in: in toward the target while reaching, up and out when leaving.
    let inward = |side: Side| match side {
        Side::North => [0.0, 1.0, 0.0],
        Side::South => [0.0, -1.0, 0.0],
        Side::West => [1.0, 0.0, 0.0],
        Side::East => [-1.0, 0.0, 0.0],
    };
    // `moving`: 1 reaching in, 0 still, −1 leaving (which also lifts the hand).
    let hand = |side: Side, col: f64, row: f64, progress: f64, lift_mm: f64, holding: Option<Stone>, moving: f64| {
        let placing = Hand::placing(side, col, row, progress, holding);
        let d = inward(side);
        let blur = timing.hand_blur_mm * moving;
        let rise = if moving < 0.0 { -0.6 * blur } else { 0.0 };
        Hand {
            target: placing.target,
            lift_mm,
            holding,
            side,
            motion_mm: [d[0] * blur, d[1] * blur, rise],
            ..looks(side)
        }
    };
    for action in actions {
        match action {
            Action::Place { stone, col, row, side } => {
                let (c, r) = (*col as f64, *row as f64);
                let name = tengen_rules::Point::new(*col as u8, *row as u8).human();
                push(
                    &mut time,
                    timing.hand_step_s,
                    &board,
                    vec![hand(*side, c, r, 0.55, 45.0, Some(*stone), 1.0)],
                    format!("{name}: hand reaching in with a stone"),
                );
                board.set(*col, *row, *stone);
                push(
                    &mut time,
                    timing.hand_step_s,
                    &board,
                    vec![hand(*side, c, r, 1.0, 20.0, None, 0.0)],
                    format!("{name}: stone put down, fingers on it"),
                );
                push(&mut time, timing.hand_step_s, &board, vec![], format!("{name}: hand gone"));
                push(&mut time, timing.settle_s, &board, vec![], format!("{name}: settled"));
            }
            Action::Lift { points, side } => {
                // Up to two stones per frame, the hand over the next stone to take.
                for chunk in points.chunks(2) {
                    let (c, r) = chunk[0];
                    let holding = board.get(c, r);
                    push(
                        &mut time,
                        timing.hand_step_s,
                        &board,
                        vec![hand(*side, c as f64, r as f64, 1.0, 22.0, None, 0.0)],
                        format!("lifting {}", tengen_rules::Point::new(c as u8, r as u8).human()),
                    );
                    for &(c, r) in chunk {
                        board.set(c, r, Stone::Empty);
                    }
                    let held = (holding != Stone::Empty).then_some(holding);
                    push(
                        &mut time,
                        timing.hand_step_s,
                        &board,
                        vec![hand(*side, c as f64, r as f64, 0.85, 50.0, held, -1.0)],
                        "hand rising with the lifted stone(s)".to_string(),
                    );
                }
                push(&mut time, timing.hand_step_s, &board, vec![], "hand gone".to_string());
                push(&mut time, timing.settle_s, &board, vec![], "settled".to_string());
            }
            Action::Rest { seconds } => {
                push(&mut time, seconds.max(0.0), &board, vec![], "resting".to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn place_then_lift_produces_the_physical_positions() {
        let looks = |side| Hand { side, ..Hand::default() };
        let actions = vec![
            Action::Place { stone: Stone::BLACK, col: 3, row: 3, side: Side::South },
            Action::Lift { points: vec![(3, 3)], side: Side::North },
            Action::Rest { seconds: 2.0 },
        ];
        let frames = frames(&Position::empty(), &actions, Timing::default(), &looks);
        assert_eq!(frames.len(), 4 + 4 + 1);
        assert!(frames[0].position.get(3, 3) == Stone::Empty && frames[0].hands[0].holding == Some(Stone::BLACK));
        assert!(frames[1].position.get(3, 3) == Stone::BLACK && !frames[1].hands.is_empty());
        assert!(frames[2].hands.is_empty() && frames[3].hands.is_empty());
        assert_eq!(frames[4].position.get(3, 3), Stone::BLACK);
        assert_eq!(frames[5].position.get(3, 3), Stone::Empty);
        assert_eq!(frames[5].hands[0].holding, Some(Stone::BLACK));
        assert!(frames.windows(2).all(|w| w[1].time_s > w[0].time_s));
        assert_eq!(frames[8].position, Position::empty());
    }
}
