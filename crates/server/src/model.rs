//! What a camera frame becomes (an [`Observation`], the logged input the referee is fed) and how
//! a game is set up (its start and pairing). What the HTTP API sends and receives is in `json`.

use serde::{Deserialize, Serialize};
pub use tengen_referee::StartPosition;
use tengen_rules::{PointState, BOARD_POINTS};

/// The character of a point in the service's board strings (`.` empty, `B` black, `W` white,
/// `?` unknown): the API's alphabet, which differs from the board text of the rest of the
/// project (`X`/`O`); readers of either take both.
pub fn board_char(state: PointState) -> char {
    match state {
        PointState::Empty => '.',
        PointState::Black => 'B',
        PointState::White => 'W',
        PointState::Unknown => '?',
    }
}

/// A board as 361 characters, rows from the top as seen by the camera (SGF row "a", printed
/// row 19) to the bottom, columns left to right: `.` empty, `B` black, `W` white, `?` occluded.
pub type BoardString = String;

/// What one frame says about the board: the reading of every point and where the board lies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// 361 readings, row-major from the top-left intersection as seen.
    pub points: Vec<PointState>,
    /// The board's four corner intersections in pixels (top-left, top-right, bottom-right,
    /// bottom-left), used to crop evidence images; `None` when the board was not located.
    pub corners: Option<[[f64; 2]; 4]>,
    /// Overall confidence of the reading in 0..=1.
    pub confidence: f32,
    /// Whether something (a hand, an arm) covers part of the board in this frame.
    #[serde(default)]
    pub occluded: bool,
    /// The board (or camera) moved since the previous frame: largest shift of an intersection,
    /// in cells. The referee raises `board_moved` and restarts its stable window.
    #[serde(default)]
    pub moved_cells: Option<f64>,
    /// Each point's confidence in 0..=1, row-major like `points`; empty when the vision gives
    /// only the overall `confidence` (then every point has that). The service keeps it in whole
    /// tenths, rounded down ([`Observation::keep_point_confidence_in_tenths`]), so the log
    /// replays exactly what the referee saw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub point_confidence: Vec<f32>,
}

impl Observation {
    /// Every point read with full confidence, nothing over the board, the board not placed (no
    /// corners for evidence crops): what a stand-in analyser reports (benchmarks, tests).
    pub fn certain(points: Vec<PointState>) -> Self {
        Self {
            points,
            corners: None,
            confidence: 1.0,
            occluded: false,
            moved_cells: None,
            point_confidence: Vec::new(),
        }
    }

    /// Rounds each point's confidence down to whole tenths (a point under the referee's 0.5
    /// floor stays under it). A list that is not one value per point is dropped (the overall
    /// confidence then stands for every point): the log could not replay it.
    pub fn keep_point_confidence_in_tenths(&mut self) {
        if self.point_confidence.len() != BOARD_POINTS {
            self.point_confidence.clear();
        }
        for c in &mut self.point_confidence {
            *c = tenths(confidence_digit(*c));
        }
    }

    /// The point confidences as one digit per point (tenths, `A` for 1.0); empty when absent.
    pub fn point_confidence_code(&self) -> String {
        self.point_confidence
            .iter()
            .map(|&c| match confidence_digit(c) {
                10 => 'A',
                d => char::from(b'0' + d),
            })
            .collect()
    }

    /// Parses [`Observation::point_confidence_code`]: `None` unless it is empty or 361 digits.
    pub fn point_confidence_from_code(code: &str) -> Option<Vec<f32>> {
        let values: Option<Vec<f32>> = code
            .chars()
            .map(|c| match c {
                'A' => Some(tenths(10)),
                '0'..='9' => u8::try_from(c).ok().map(|b| tenths(b - b'0')),
                _ => None,
            })
            .collect();
        values.filter(|v| v.is_empty() || v.len() == BOARD_POINTS)
    }

    /// The readings as a compact [`BoardString`].
    pub fn board_string(&self) -> BoardString {
        self.points.iter().map(|&p| board_char(p)).collect()
    }

    /// Parses a compact board string (whitespace ignored) into readings.
    pub fn points_from_str(text: &str) -> Option<Vec<PointState>> {
        let points: Option<Vec<_>> = text.chars().filter(|c| !c.is_whitespace()).map(PointState::from_char).collect();
        points.filter(|p| p.len() == BOARD_POINTS)
    }

    /// Number of occluded points.
    pub fn occluded(&self) -> usize {
        self.points.iter().filter(|p| **p == PointState::Unknown).count()
    }
}

/// A confidence in whole tenths, rounded down, as the referee takes it (0..=10).
fn confidence_digit(c: f32) -> u8 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let digit = (tengen_referee::confidence_in_tenths(c) * 10.0).round() as u8;
    digit
}

fn tenths(digit: u8) -> f32 {
    f32::from(digit) / 10.0
}

/// How a game is set up: what the referee checks the first stable board against, and what the
/// record says about it beyond the players' names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameSetup {
    /// What the game starts from: an even game (the default), N handicap stones, or the board
    /// as found.
    #[serde(default = "even")]
    pub start: StartPosition,
    /// The pairing the game plays, when it comes from an imported round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing: Option<GamePairing>,
}

impl Default for GameSetup {
    fn default() -> Self {
        Self { start: StartPosition::Even, pairing: None }
    }
}

/// Who plays whom in which round of which event (from imported pairings): what the record's
/// PB/PW/BR/WR/EV/RO/HA say, and what the round's results are exported with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GamePairing {
    /// The event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The round, from 1.
    pub round: u32,
    /// Black.
    pub black: crate::pairings::Player,
    /// White.
    pub white: crate::pairings::Player,
    /// Handicap stones as paired (0: even; 1: Black first without komi).
    #[serde(default)]
    pub handicap: u8,
}

fn even() -> StartPosition {
    StartPosition::Even
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_confidences_keep_whole_tenths_rounded_down_and_round_trip_as_digits() {
        let mut obs = Observation {
            points: vec![PointState::Empty; BOARD_POINTS],
            corners: None,
            confidence: 0.8,
            occluded: false,
            moved_cells: None,
            point_confidence: (0..BOARD_POINTS).map(|i| [0.49, 0.5, 0.7, 0.999, 1.0, 0.0, 0.31][i % 7]).collect(),
        };
        obs.keep_point_confidence_in_tenths();
        assert_eq!(obs.point_confidence[..7], [0.4, 0.5, 0.7, 0.9, 1.0, 0.0, 0.3]);
        // A point under the referee's 0.5 floor stays under it.
        assert!(obs.point_confidence[0] < 0.5);
        let code = obs.point_confidence_code();
        assert_eq!(&code[..7], "4579A03");
        assert_eq!(Observation::point_confidence_from_code(&code), Some(obs.point_confidence.clone()));
        // A pluggable analyzer's list of the wrong length is dropped before it is logged.
        let mut short = Observation { point_confidence: vec![0.9; 10], ..obs.clone() };
        short.keep_point_confidence_in_tenths();
        assert!(short.point_confidence.is_empty());
        assert_eq!(Observation::point_confidence_from_code(&short.point_confidence_code()), Some(vec![]));
        // Kept twice, nothing changes.
        let before = obs.clone();
        obs.keep_point_confidence_in_tenths();
        assert_eq!(obs, before);
        assert_eq!(Observation::point_confidence_from_code(""), Some(vec![]));
        assert_eq!(Observation::point_confidence_from_code("123"), None);
        assert_eq!(Observation::point_confidence_from_code(&"x".repeat(BOARD_POINTS)), None);
        // Without per-point confidences the JSON has no such field, and old JSON parses.
        let plain = Observation { point_confidence: vec![], ..obs };
        let json = serde_json::to_string(&plain).unwrap_or_default();
        assert!(!json.contains("point_confidence"), "{json}");
        assert_eq!(serde_json::from_str::<Observation>(&json).ok(), Some(plain));
    }
}
