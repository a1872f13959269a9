//! The service's own data types: what a camera frame becomes (an observation), what the referee
//! says (events, the game view) and what the arbiter does (actions). These are the contract
//! between the pipeline, the store, the HTTP API and the dashboard; the vision and referee crates
//! plug in behind the traits in `analyzer` and `referee` by converting to and from these types.

use serde::{Deserialize, Serialize};
use tengen_rules::{ByColor, Color, PointState, BOARD_POINTS};
pub use tengen_referee::StartPosition;

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
        let points: Option<Vec<_>> =
            text.chars().filter(|c| !c.is_whitespace()).map(PointState::from_char).collect();
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

/// One move of the legal record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordMove {
    /// 1-based move number.
    pub number: u32,
    /// Who played it.
    pub colour: Color,
    /// SGF coordinates ("pd"), or `None` for a pass.
    pub point: Option<String>,
}

/// How urgent an event is for the arbiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Part of the normal record (a move, a capture).
    Info,
    /// Something the arbiter should look at but need not answer (camera lost).
    Notice,
    /// A suspected infraction awaiting confirm or dismiss.
    Alert,
}

/// Something the referee (or the service) reports. Stored in the log and streamed to clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefereeEvent {
    /// Machine name, e.g. `move`, `capture`, `infraction_suspected`, `camera_lost`.
    pub kind: String,
    /// The article of the 2002 Chinese rules it applies, e.g. "Art. 18.2" (`docs/events.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub article: Option<String>,
    /// How urgent it is.
    pub severity: Severity,
    /// For infractions: the id the arbiter answers with confirm or dismiss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alert_id: Option<u64>,
    /// The move number it concerns, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_number: Option<u32>,
    /// One line for people, in English.
    pub summary: String,
    /// The referee's own structured event (its versioned JSON), kept verbatim.
    #[serde(default)]
    pub detail: serde_json::Value,
}

/// An open (unanswered) suspected infraction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAlert {
    /// Id to answer with confirm or dismiss.
    pub alert_id: u64,
    /// What is suspected, e.g. `missed_capture`.
    pub kind: String,
    /// The article that applies.
    pub article: Option<String>,
    /// One line for people.
    pub summary: String,
    /// SGF coordinates of the points involved.
    pub points: Vec<String>,
    /// When it was raised (ms since the epoch), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised_ms: Option<i64>,
}

/// The referee's view of one game, as the dashboard draws it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameView {
    /// The legal position (what the rules say the board is), as a [`BoardString`].
    pub legal: BoardString,
    /// The last stable physical board the camera saw, as a [`BoardString`].
    pub physical: BoardString,
    /// The legal record.
    pub moves: Vec<RecordMove>,
    /// Whose turn it is.
    pub to_move: Color,
    /// Unanswered suspected infractions.
    pub open_alerts: Vec<OpenAlert>,
    /// Confirmed warnings per side (Art. 24): black, white.
    pub warnings: ByColor<u32>,
    /// Stones captured by black and by white.
    pub captures: ByColor<u32>,
    /// Points marked dead at the end (SGF coordinates).
    pub dead: Vec<String>,
    /// `playing`, `ended` or `scored`.
    pub phase: String,
    /// The result text once known, e.g. "B+3¾ (B+7.5)".
    pub result: Option<String>,
    /// The result in words in each language (the exact form in English, the customary form in
    /// Chinese, each with the record's form), once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_text: Option<tengen_referee::Message>,
    /// Wrong colours found after move 10 (Art. 17.1): the game stands, and the record names the
    /// organiser's Black as White and the organiser's White as Black.
    #[serde(default)]
    pub players_swapped: bool,
}

/// What an arbiter can do at a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArbiterAction {
    /// Confirm a suspected infraction (it becomes a warning where the rules say so).
    Confirm {
        /// The alert answered.
        alert_id: u64,
    },
    /// Dismiss a suspected infraction (a misreading, or the players fixed it).
    Dismiss {
        /// The alert answered.
        alert_id: u64,
    },
    /// Record a pass for a side (a camera cannot see passes).
    Pass {
        /// Who passed.
        colour: Color,
    },
    /// Set the players' names, and/or report that they hold the wrong colours (Art. 17.1):
    /// `swapped` true swaps the names in the record so that it names who plays which colour;
    /// the referee rules the colours corrected up to and including move 10, and the game
    /// standing as played after that.
    SetColours {
        /// Whether the colours are swapped.
        swapped: bool,
        /// Black player's name.
        #[serde(default)]
        black: Option<String>,
        /// White player's name.
        #[serde(default)]
        white: Option<String>,
    },
    /// End the game (both sides agreed, Art. 7/21, or resignation).
    EndGame {
        /// Set when a side resigned.
        #[serde(default)]
        resigned: Option<Color>,
    },
    /// Mark (or unmark, when already marked) stones as dead for counting.
    MarkDead {
        /// SGF ("pd") or human ("Q16") coordinates.
        points: Vec<String>,
    },
    /// Set the result text directly (e.g. after a recount or a ruling).
    SetResult {
        /// The result, e.g. "B+R", "W+3.5", "Draw".
        result: String,
    },
    /// Correct the record: replace the move with this number (the camera misread it).
    CorrectRecord {
        /// 1-based move number to change.
        move_number: u32,
        /// The right point (SGF or human), or `None` for a pass.
        point: Option<String>,
    },
    /// Count the game by area with the marked dead stones and publish the result (Art. 9).
    Count,
    /// Take the physical board as the legal position (the camera missed moves, or a ruling
    /// restored a position): the way to correct the record from the board.
    AdoptPhysical,
    /// Set whose turn it is.
    SetToMove {
        /// The side to move.
        colour: Color,
    },
    /// Start a new game at this table (the old one stays in the store).
    NewGame {
        /// Komi in points; the table's default when absent.
        #[serde(default)]
        komi: Option<f64>,
        /// What the game starts from (`"even"`, `{"handicap": N}`, `"adopt"`); the table's
        /// default when absent.
        #[serde(default)]
        start: Option<StartPosition>,
        /// The pairing it plays (players, ranks, event, round), when a round was imported.
        #[serde(default)]
        pairing: Option<GamePairing>,
    },
}

impl ArbiterAction {
    /// Machine name of the action (the serde tag).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Confirm { .. } => "confirm",
            Self::Dismiss { .. } => "dismiss",
            Self::Pass { .. } => "pass",
            Self::SetColours { .. } => "set_colours",
            Self::EndGame { .. } => "end_game",
            Self::MarkDead { .. } => "mark_dead",
            Self::SetResult { .. } => "set_result",
            Self::CorrectRecord { .. } => "correct_record",
            Self::Count => "count",
            Self::AdoptPhysical => "adopt_physical",
            Self::SetToMove { .. } => "set_to_move",
            Self::NewGame { .. } => "new_game",
        }
    }
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

/// An event as stored and served: the referee's event plus where and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// Global, strictly increasing id (the SSE id and the cursor of `/api/events`).
    pub id: i64,
    /// Table id.
    pub table: String,
    /// Game id.
    pub game: i64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// Whether before/after evidence images are stored for it.
    pub evidence: bool,
    /// The event itself.
    #[serde(flatten)]
    pub event: RefereeEvent,
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

    #[test]
    fn arbiter_actions_parse_from_tagged_json() {
        let a: ArbiterAction =
            serde_json::from_str(r#"{"action":"confirm","alert_id":3}"#).expect("valid json");
        assert_eq!(a, ArbiterAction::Confirm { alert_id: 3 });
        assert!(serde_json::from_str::<ArbiterAction>(r#"{"action":"explode"}"#).is_err());
        assert!(serde_json::from_str::<ArbiterAction>(r#"{"action":"confirm"}"#).is_err());
    }
}
