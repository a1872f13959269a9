//! The table log's contract (docs/design.md, "The replay contract"): the one type of what a
//! referee is fed ([`LoggedInput`]), how an observation is quantised before it is fed and logged,
//! the key under which a repeated observation is logged short, the text each input is logged
//! as, and the one function that replays a logged game into a fresh referee. Any log (the SQLite
//! store, another store behind the same contract) keeps these bodies and gives them back in
//! order; replaying them gives the referee the state it had.

use serde::{Deserialize, Serialize};

use crate::engine::{apply_request, Corners, TableReferee};
use crate::error::Error;
use crate::json::{ArbiterAction, RefereeRequest};
use crate::model::Observation;

/// An input to a table's referee, as logged and as replayed.
#[derive(Debug, Clone, PartialEq)]
pub enum LoggedInput {
    /// An observation of the board.
    Observation(Observation),
    /// An arbiter action.
    Action(ArbiterAction),
}

/// The two kinds of logged input, as a log names them (the SQLite log's `kind` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `observation`.
    Observation,
    /// `arbiter`.
    Arbiter,
}

impl InputKind {
    /// The name a log stores.
    pub fn name(self) -> &'static str {
        match self {
            Self::Observation => "observation",
            Self::Arbiter => "arbiter",
        }
    }

    /// The kind of a stored name; `None` for any other (an event row).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "observation" => Some(Self::Observation),
            "arbiter" => Some(Self::Arbiter),
            _ => None,
        }
    }
}

/// Quantises an observation as the referee is fed it and the log keeps it: the overall
/// confidence in hundredths, each point's in whole tenths rounded down. What is logged is then
/// exactly what the referee saw, and a replay feeds it the same inputs.
pub fn quantise(observation: &mut Observation) {
    observation.confidence = (observation.confidence * 100.0).round() / 100.0;
    observation.keep_point_confidence_in_tenths();
}

/// What makes an observation the same as the previous one for the log: the board, the
/// occlusion, the overall confidence and the point confidences. A repeat (with no move of the
/// board) is logged as a short row that replays as the previous observation.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatKey {
    board: String,
    occluded: bool,
    confidence: f32,
    point_confidence: String,
}

impl RepeatKey {
    /// The key of a (quantised) observation.
    pub fn of(observation: &Observation) -> Self {
        Self {
            board: observation.board_string(),
            occluded: observation.occluded,
            confidence: observation.confidence,
            point_confidence: observation.point_confidence_code(),
        }
    }

    /// Whether `observation` may be logged as a repeat of the one this key was taken from: the
    /// same key, and the board did not move (a move of the board is never a repeat).
    pub fn repeated_by(&self, observation: &Observation) -> bool {
        observation.moved_cells.is_none() && *self == Self::of(observation)
    }
}

/// The compact logged form of an observation.
#[derive(Serialize, Deserialize)]
struct LoggedObservation {
    board: String,
    #[serde(default)]
    corners: Option<Corners>,
    #[serde(default)]
    confidence: f32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    occluded: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    moved_cells: Option<f64>,
    /// Per-point confidence, one digit (tenths) a point; absent when the vision gave none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    point_confidence: String,
}

/// Body of an observation row that repeats the previous one (most frames: a still board).
const SAME_OBSERVATION: &str = r#"{"same":true}"#;

/// The text an observation is logged as (`repeats`: the short row of a repeat).
pub fn encode_observation(observation: &Observation, repeats: bool) -> String {
    if repeats {
        return SAME_OBSERVATION.to_owned();
    }
    let logged = LoggedObservation {
        board: observation.board_string(),
        corners: observation.corners,
        confidence: observation.confidence,
        occluded: observation.occluded,
        moved_cells: observation.moved_cells,
        point_confidence: observation.point_confidence_code(),
    };
    serde_json::to_string(&logged).unwrap_or_default()
}

/// Whether a logged observation text is the short row of a repeat.
pub fn is_repeat_text(body: &str) -> bool {
    body == SAME_OBSERVATION
}

/// The text an arbiter action is logged as.
pub fn encode_action(action: &ArbiterAction) -> String {
    serde_json::to_string(action).unwrap_or_default()
}

/// Reads one game's logged inputs in order (a repeat row needs the observation before it).
#[derive(Debug, Default)]
pub struct InputDecoder {
    previous: Option<Observation>,
}

impl InputDecoder {
    /// Decodes the next logged input of the game; the error says what is wrong with the row.
    pub fn decode(&mut self, kind: InputKind, body: &str) -> Result<LoggedInput, String> {
        match kind {
            InputKind::Arbiter => serde_json::from_str(body).map(LoggedInput::Action).map_err(|e| e.to_string()),
            InputKind::Observation if body == SAME_OBSERVATION => {
                // A repeat is the same reading again, never a second move of the board.
                let mut repeat = self.previous.clone().ok_or("a repeat before any observation")?;
                repeat.moved_cells = None;
                Ok(LoggedInput::Observation(repeat))
            }
            InputKind::Observation => {
                let logged: LoggedObservation = serde_json::from_str(body).map_err(|e| e.to_string())?;
                let observation = Observation {
                    points: Observation::points_from_str(&logged.board).ok_or("bad board string")?,
                    corners: logged.corners,
                    confidence: logged.confidence,
                    occluded: logged.occluded,
                    moved_cells: logged.moved_cells,
                    point_confidence: Observation::point_confidence_from_code(&logged.point_confidence)
                        .ok_or("bad point confidences")?,
                };
                self.previous = Some(observation.clone());
                Ok(LoggedInput::Observation(observation))
            }
        }
    }
}

/// What a replay found besides the referee's state.
#[derive(Debug, Default)]
pub struct Replayed {
    /// How many inputs were fed.
    pub inputs: usize,
    /// The key of the last observation fed: the next live one that repeats it is logged short.
    pub last_key: Option<RepeatKey>,
    /// Logged arbiter actions the referee refused again (a log written by a referee that took
    /// them): when, and why.
    pub refused: Vec<(i64, Error)>,
}

/// The one replay: feeds a game's logged inputs, in order and at their times, to `referee` (a
/// fresh one for the game). The referee is deterministic, so it ends in the state it had when
/// the last input was logged; what it says on the way is not published again.
pub fn replay(referee: &mut dyn TableReferee, inputs: impl IntoIterator<Item = (i64, LoggedInput)>) -> Replayed {
    let mut replayed = Replayed::default();
    for (at_ms, input) in inputs {
        replayed.inputs += 1;
        match input {
            LoggedInput::Observation(observation) => {
                let _ = referee.observe(at_ms, &observation);
                replayed.last_key = Some(RepeatKey::of(&observation));
            }
            LoggedInput::Action(action) => {
                if let Err(err) = RefereeRequest::try_from(&action).and_then(|r| apply_request(referee, at_ms, &r)) {
                    replayed.refused.push((at_ms, err));
                }
            }
        }
    }
    replayed
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::{PointState, BOARD_POINTS};

    fn observation() -> Observation {
        let mut points = vec![PointState::Empty; BOARD_POINTS];
        points[60] = PointState::Black;
        points[61] = PointState::Unknown;
        Observation {
            points,
            corners: Some([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]),
            confidence: 0.876,
            occluded: true,
            moved_cells: Some(0.4),
            point_confidence: (0..BOARD_POINTS).map(|i| [0.0, 0.45, 0.77, 1.0][i % 4]).collect(),
        }
    }

    #[test]
    fn a_quantised_observation_reads_back_as_logged_and_a_repeat_as_the_same_without_the_move() {
        let mut obs = observation();
        quantise(&mut obs);
        assert!((obs.confidence - 0.88).abs() < 1e-6);
        assert_eq!(obs.point_confidence[..4], [0.0, 0.4, 0.7, 1.0]);
        let mut decoder = InputDecoder::default();
        let first = decoder.decode(InputKind::Observation, &encode_observation(&obs, false));
        assert_eq!(first, Ok(LoggedInput::Observation(obs.clone())));
        let repeat = decoder.decode(InputKind::Observation, &encode_observation(&obs, true));
        assert_eq!(repeat, Ok(LoggedInput::Observation(Observation { moved_cells: None, ..obs.clone() })));
        let action = ArbiterAction::Confirm { alert_id: 4 };
        assert_eq!(decoder.decode(InputKind::Arbiter, &encode_action(&action)), Ok(LoggedInput::Action(action)));
    }

    #[test]
    fn bad_rows_say_what_is_wrong() {
        let mut decoder = InputDecoder::default();
        assert_eq!(
            decoder.decode(InputKind::Observation, SAME_OBSERVATION),
            Err("a repeat before any observation".into())
        );
        assert_eq!(decoder.decode(InputKind::Observation, r#"{"board":"..."}"#), Err("bad board string".into()));
        assert!(decoder.decode(InputKind::Arbiter, r#"{"action":"explode"}"#).is_err());
        assert_eq!(InputKind::from_name("event"), None);
        assert_eq!(InputKind::from_name(InputKind::Arbiter.name()), Some(InputKind::Arbiter));
    }

    #[test]
    fn a_moved_board_or_another_reading_is_not_a_repeat() {
        let mut obs = observation();
        quantise(&mut obs);
        let key = RepeatKey::of(&obs);
        assert!(!key.repeated_by(&obs), "the board moved");
        let still = Observation { moved_cells: None, ..obs.clone() };
        assert!(key.repeated_by(&still));
        let mut other = still.clone();
        other.points[0] = PointState::White;
        assert!(!key.repeated_by(&other));
        let less_sure = Observation { confidence: 0.5, ..still };
        assert!(!key.repeated_by(&less_sure));
    }
}
