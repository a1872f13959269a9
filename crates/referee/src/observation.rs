//! What the referee is fed per camera frame: a reading of every point with a confidence, whether
//! a hand (or anything) covers the board, and the time. Independent of the vision crate: the
//! server converts vision's output into this.

use serde::{Deserialize, Serialize};
use tengen_rules::{BoardTextError, Grid, PointState, BOARD_LINES};

/// One point's reading with the reader's confidence in 0..=1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct PointObservation {
    /// What was read.
    pub reading: PointState,
    /// How sure the reader is, 0..=1.
    pub confidence: f32,
}

/// One frame's reading of the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// When the frame was taken, in seconds (any origin, non-decreasing per table).
    pub t: f64,
    /// Rows from the top as seen, columns from the left: `points[row][col]`.
    pub points: [[PointObservation; BOARD_LINES]; BOARD_LINES],
    /// A hand or an object covers part of the board: no move is ever inferred from this frame.
    pub occluded: bool,
    /// Where the frame can be found again (file name, store key), for evidence.
    #[serde(default)]
    pub frame_ref: Option<String>,
}

/// Why a line of readings could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ObservationError {
    /// The line is not valid JSON of the expected shape.
    #[error("not a reading: {0}")]
    Json(String),
    /// The grid is not 19 rows of 19 points of `. X O ?`.
    #[error("grid: {0}")]
    Grid(#[from] BoardTextError),
    /// The confidence array is not 19×19 or holds a value outside 0..=1.
    #[error("confidence: {0}")]
    Confidence(String),
    /// The time is not a finite number.
    #[error("the time `t` must be a finite number of seconds")]
    Time,
}

/// The compact line format of `tengen referee`: `{"t": 1.5, "grid": [19 strings of . X O ?],
/// "confidence": [[19 numbers] × 19] (optional), "occluded": false (optional), "frame": "name"
/// (optional)}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadingLine {
    /// Seconds.
    pub t: f64,
    /// 19 rows of `. X O ?`.
    pub grid: Vec<String>,
    /// Per-point confidence; 1.0 for every known point when absent.
    #[serde(default)]
    pub confidence: Option<Vec<Vec<f32>>>,
    /// Whether a hand covers the board.
    #[serde(default)]
    pub occluded: bool,
    /// Frame reference for evidence.
    #[serde(default)]
    pub frame: Option<String>,
}

impl ReadingLine {
    /// Parses one JSON line.
    pub fn parse(line: &str) -> Result<Self, ObservationError> {
        serde_json::from_str(line).map_err(|e| ObservationError::Json(e.to_string()))
    }

    /// Checks the line and turns it into an observation.
    pub fn into_observation(self) -> Result<Observation, ObservationError> {
        if !self.t.is_finite() {
            return Err(ObservationError::Time);
        }
        let readings = Grid::<PointState>::from_rows(&self.grid)?;
        if let Some(conf) = &self.confidence {
            if conf.len() != BOARD_LINES || conf.iter().any(|r| r.len() != BOARD_LINES) {
                return Err(ObservationError::Confidence("expected 19 rows of 19 numbers".into()));
            }
            if conf.iter().flatten().any(|c| !(0.0..=1.0).contains(c)) {
                return Err(ObservationError::Confidence("values must lie in 0..=1".into()));
            }
        }
        let mut points = [[PointObservation::default(); BOARD_LINES]; BOARD_LINES];
        for (p, reading) in readings.iter() {
            let (row, col) = (usize::from(p.row), usize::from(p.col));
            let given = self.confidence.as_ref().map(|c| c[row][col]);
            let confidence = match (reading, given) {
                (_, Some(c)) => c,
                (PointState::Unknown, None) => 0.0,
                (_, None) => 1.0,
            };
            points[row][col] = PointObservation { reading, confidence };
        }
        Ok(Observation { t: self.t, points, occluded: self.occluded, frame_ref: self.frame })
    }
}

/// A confidence as the referee takes it from a camera: whole tenths, rounded down (so a point
/// under the referee's 0.5 floor stays under it). The log keeps exactly what the referee saw,
/// so a replay feeds it the same inputs; see `docs/design.md`, "The replay contract".
pub fn confidence_in_tenths(c: f32) -> f32 {
    // The small allowance keeps a value that is already a whole tenth (0.7 as f32 is a hair
    // under 7/10) on its tenth.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let tenths = ((c.clamp(0.0, 1.0) * 10.0 + 1e-4).floor() as u8).min(10);
    f32::from(tenths) / 10.0
}

impl Observation {
    /// One camera frame's reading from its points, row-major from the top-left as seen (the
    /// state and the reader's confidence of each): each confidence in whole tenths
    /// ([`confidence_in_tenths`]), none for an unknown point. Missing points are unknown.
    pub fn from_points(
        t: f64,
        points: impl IntoIterator<Item = (PointState, f32)>,
        occluded: bool,
        frame_ref: Option<String>,
    ) -> Self {
        let mut grid = [[PointObservation::default(); BOARD_LINES]; BOARD_LINES];
        for (cell, (reading, confidence)) in grid.iter_mut().flatten().zip(points) {
            let confidence = if reading == PointState::Unknown { 0.0 } else { confidence_in_tenths(confidence) };
            *cell = PointObservation { reading, confidence };
        }
        Observation { t, points: grid, occluded, frame_ref }
    }

    /// A clear, fully confident observation of rows of `.XO?` (tests, tools).
    pub fn from_rows<S: AsRef<str>>(t: f64, rows: &[S], occluded: bool) -> Result<Self, ObservationError> {
        ReadingLine {
            t,
            grid: rows.iter().map(|r| r.as_ref().to_string()).collect(),
            confidence: None,
            occluded,
            frame: None,
        }
        .into_observation()
    }

    /// The readings as rows of `.XO?`.
    pub fn rows(&self) -> Vec<String> {
        self.points.iter().map(|r| r.iter().map(|p| p.reading.to_char()).collect()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_and_bad_lines_say_what_is_wrong() {
        let rows: Vec<String> = (0..BOARD_LINES).map(|_| ".".repeat(BOARD_LINES)).collect();
        let line = serde_json::json!({"t": 1.0, "grid": rows}).to_string();
        let obs = ReadingLine::parse(&line).and_then(ReadingLine::into_observation).expect("valid");
        assert_eq!(obs.points[3][4].reading, PointState::Empty);
        assert!((obs.points[3][4].confidence - 1.0).abs() < 1e-6);
        let mut bad = rows.clone();
        bad[2] = format!("{}Z", ".".repeat(BOARD_LINES - 1));
        let line = serde_json::json!({"t": 1.0, "grid": bad}).to_string();
        let err = ReadingLine::parse(&line).and_then(ReadingLine::into_observation).expect_err("bad char");
        assert_eq!(err, ObservationError::Grid(BoardTextError::Char { row: 2, col: 18, ch: 'Z', alphabet: ". X O ?" }));
        assert!(ReadingLine::parse("{\"t\": 1}").is_err());
        let short = serde_json::json!({"t": 1.0, "grid": &rows[..18]}).to_string();
        assert_eq!(
            ReadingLine::parse(&short).and_then(ReadingLine::into_observation),
            Err(ObservationError::Grid(BoardTextError::Rows { found: 18, expected: 19 }))
        );
    }

    #[test]
    fn input_lines_are_readings_or_arbiter_actions_and_bad_ones_say_why() {
        use crate::{Input, InputLineError};
        let rows: Vec<String> = (0..BOARD_LINES).map(|_| ".".repeat(BOARD_LINES)).collect();
        let reading = serde_json::json!({"t": 2.5, "grid": rows}).to_string();
        assert!(matches!(Input::from_line(&reading), Ok(Input::Observe(o)) if o.t == 2.5));
        let pass = r#"{"t": 90, "action": "pass", "side": "black"}"#;
        assert!(
            matches!(Input::from_line(pass), Ok(Input::Arbiter { t, .. }) if t == 90.0),
            "{:?}",
            Input::from_line(pass)
        );
        assert!(matches!(Input::from_line("not json"), Err(InputLineError::NotJson(_))));
        assert_eq!(Input::from_line(r#"{"action": "pass", "side": "black"}"#), Err(InputLineError::ArbiterTime));
        assert!(matches!(Input::from_line(r#"{"t": 1, "action": "dance"}"#), Err(InputLineError::Arbiter(_))));
        // Points are read once, here, in either notation; one off the board refuses the line.
        let dead =
            |points: &str| Input::from_line(&format!(r#"{{"t": 1, "action": "mark_dead", "points": {points}}}"#));
        let q16 = tengen_rules::Point::new(15, 3);
        let marked = Ok(Input::Arbiter { t: 1.0, action: crate::ArbiterAction::MarkDead { points: vec![q16, q16] } });
        assert_eq!(dead(r#"["Q16", "pd"]"#), marked);
        assert!(matches!(dead(r#"["Q16", "Z99"]"#), Err(InputLineError::Arbiter(e)) if e.contains("Z99")));
        let correct = r#"{"t": 1, "action": "correct_move", "number": 3, "point": "q16"}"#;
        let action = crate::ArbiterAction::CorrectMove { number: 3, point: Some(q16) };
        assert_eq!(Input::from_line(correct), Ok(Input::Arbiter { t: 1.0, action: action.clone() }));
        let pass = crate::ArbiterAction::CorrectMove { number: 3, point: None };
        let to_pass = r#"{"t": 1, "action": "correct_move", "number": 3}"#;
        assert_eq!(Input::from_line(to_pass), Ok(Input::Arbiter { t: 1.0, action: pass }));
        // Written in one form, SGF, which reads back the same.
        let json = serde_json::to_string(&action).unwrap_or_default();
        assert_eq!(json, r#"{"action":"correct_move","number":3,"point":"pd"}"#);
        assert_eq!(serde_json::from_str::<crate::ArbiterAction>(&json).ok(), Some(action));
        let odd = serde_json::json!({"t": 1.0, "grid": &rows[..3]}).to_string();
        assert!(matches!(Input::from_line(&odd), Err(InputLineError::Reading(ObservationError::Grid(_)))));
        assert!(matches!(Input::from_line("[1, 2]"), Err(InputLineError::Reading(ObservationError::Json(_)))));
    }
}
