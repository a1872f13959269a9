//! What the referee is configured and fed with: the game's start, its configuration, the
//! arbiter's actions (and why one is refused), and the inputs a log replays.

use super::*;

/// What the game starts from: what the organiser set up, checked against the first stable board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StartPosition {
    /// An even game: an empty board, Black first (Art. 2). A lone black stone on the first
    /// stable board is move 1 seen late; a lone white one is Art. 17.1 (wrong colours); any
    /// other stones present at the start are a `setup_mismatch` alert, never moves.
    #[serde(alias = "empty")]
    Even,
    /// This many handicap stones (2–9) on the standard star points, then White first. Seen from
    /// any side of the board; until they are all down the referee waits.
    Handicap(u8),
    /// Whatever the first stable board shows (empty, or handicap stones: then White moves first
    /// when Black has more stones).
    #[default]
    #[serde(rename = "adopt", alias = "adopt_first_board")]
    AdoptFirstBoard,
}

/// A start position that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a start: use `even`, `adopt` or `handicap:N` (N from 2 to 9)")]
pub struct StartPositionError(String);

impl std::str::FromStr for StartPosition {
    type Err = StartPositionError;

    /// `even`, `adopt`, or `handicap:N` (also `handicap=N`, `hN` or a bare `N`) with N in 2–9.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let t = text.trim().to_ascii_lowercase();
        let bad = || StartPositionError(text.to_owned());
        match t.as_str() {
            "even" | "empty" => return Ok(StartPosition::Even),
            "adopt" | "as-found" | "adopt_first_board" => return Ok(StartPosition::AdoptFirstBoard),
            _ => {}
        }
        let digits = ["handicap:", "handicap=", "handicap ", "h"].iter().find_map(|p| t.strip_prefix(p)).unwrap_or(&t);
        let stones: u8 = digits.trim().parse().map_err(|_| bad())?;
        StartPosition::Handicap(stones).checked().map_err(|_| bad())
    }
}

impl StartPosition {
    /// The start itself, or an error for a handicap with no standard placement (not 2–9).
    pub fn checked(self) -> Result<Self, StartPositionError> {
        match self {
            StartPosition::Handicap(n) if !(tengen_rules::MIN_HANDICAP..=tengen_rules::MAX_HANDICAP).contains(&n) => {
                Err(StartPositionError(self.to_string()))
            }
            _ => Ok(self),
        }
    }
}

impl std::fmt::Display for StartPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartPosition::Even => f.write_str("even"),
            StartPosition::Handicap(n) => write!(f, "handicap:{n}"),
            StartPosition::AdoptFirstBoard => f.write_str("adopt"),
        }
    }
}

/// Settings of one table's referee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RefereeConfig {
    /// Table id (goes into every event).
    pub table: String,
    /// Game id (goes into every event).
    pub game: String,
    /// Komi in points (7.5 = 3¾ stones, Art. 11).
    pub komi_points: f64,
    /// The start position.
    pub start: StartPosition,
    /// How readings become stable boards.
    pub stabiliser: StabiliserConfig,
    /// Captured stones may stay on the board this long after the move before a missed capture
    /// is suspected (it is suspected at once when the opponent's next move is seen).
    pub capture_grace_seconds: f64,
    /// Most stones added in one stable change that are still ordered as moves; more is a resync.
    pub max_moves_per_change: usize,
    /// Stones disturbed at once (not explained by moves) that make a scattered board.
    pub scatter_min_stones: usize,
    /// A board covered this long raises an `occluded` notice.
    pub occlusion_notice_seconds: f64,
}

impl Default for RefereeConfig {
    fn default() -> Self {
        RefereeConfig {
            table: "table".into(),
            game: "1".into(),
            komi_points: 7.5,
            start: StartPosition::default(),
            stabiliser: StabiliserConfig::default(),
            capture_grace_seconds: 30.0,
            max_moves_per_change: 6,
            scatter_min_stones: 4,
            occlusion_notice_seconds: 10.0,
        }
    }
}

/// What the arbiter (or a player, through the arbiter's console) tells the referee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ArbiterAction {
    /// Confirm a suspected infraction (warnings follow Art. 24; a double move voids the move).
    Confirm {
        /// The infraction id from the event.
        infraction: u64,
    },
    /// Dismiss a suspected infraction (a double move then becomes an unrecorded pass).
    Dismiss {
        /// The infraction id from the event.
        infraction: u64,
    },
    /// A side passed (a camera cannot see it).
    Pass {
        /// Who passed.
        side: Color,
    },
    /// Play is over: both agreed (Art. 7.1, 13) or a side resigned.
    EndGame {
        /// The side that resigned, if any.
        #[serde(default)]
        resigned: Option<Color>,
    },
    /// Mark (or unmark) the chains through these points dead.
    MarkDead {
        /// The points: read in either notation ("Q16" or "pd"), written as SGF.
        #[serde(with = "tengen_rules::point_text::vec")]
        points: Vec<Point>,
    },
    /// Count the game by area with the marked dead stones and publish the result.
    Count,
    /// Take the physical board as the legal position (after missed moves or a ruling).
    AdoptPhysical,
    /// Set whose turn it is (an arbiter's decision).
    SetToMove {
        /// The side to move.
        side: Color,
    },
    /// Correct a recorded move the camera got wrong (a misread point, or stones seen together
    /// and ordered wrongly): the move with this number becomes a stone of the same side at
    /// `point`, or a pass when `point` is absent. Refused if the corrected move, or any later
    /// move that was legal, would become illegal.
    CorrectMove {
        /// The move number, as in the record.
        number: u32,
        /// The right point (read as "Q16" or "pd", written as SGF); absent for a pass.
        #[serde(default, with = "tengen_rules::point_text::option")]
        point: Option<Point>,
    },
    /// The players were found holding the wrong colours (Art. 17.1): corrected up to and
    /// including move 10, after which the game stands as played.
    WrongColours,
}

/// An arbiter action that cannot be applied; nothing changed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArbiterError {
    /// No infraction has this id.
    #[error("no infraction {0}")]
    UnknownInfraction(u64),
    /// The infraction was already confirmed or dismissed.
    #[error("infraction {0} is already decided")]
    AlreadyDecided(u64),
    /// The action needs the game in another phase.
    #[error("not allowed while the game is {0}")]
    WrongPhase(&'static str),
    /// No move in the record has this number.
    #[error("no move {0} in the record")]
    UnknownMove(u32),
    /// The correction contradicts the rules (the corrected move or a later one would be illegal)
    /// or an open infraction concerns that move.
    #[error("cannot correct the record: {0}")]
    BadCorrection(String),
    /// Wrong colours were already ruled on in this game (Art. 17.1).
    #[error("wrong colours were already ruled on in this game")]
    ColoursAlreadyRuled,
}

/// One input of the referee, as the server logs it; replaying the log rebuilds the state.
// Inputs are handled one at a time, never stored in bulk by the referee: boxing buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum Input {
    /// A frame's reading.
    Observe(Observation),
    /// An arbiter action at time `t`.
    Arbiter {
        /// Seconds.
        t: f64,
        /// The action.
        action: ArbiterAction,
    },
    /// Vision tracking saw the board or camera move.
    BoardMoved {
        /// Seconds.
        t: f64,
        /// How far, in grid cells, if known.
        shift_cells: Option<f64>,
    },
}

/// Why a line of `tengen referee`'s input could not be used (the line is skipped).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InputLineError {
    /// The line is not a JSON value.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// An arbiter action without a finite numeric `t`.
    #[error("an arbiter action needs a numeric `t`")]
    ArbiterTime,
    /// An `action` that is not one of the arbiter's actions.
    #[error("not an arbiter action: {0}")]
    Arbiter(String),
    /// A reading that does not hold (grid, confidences, time).
    #[error(transparent)]
    Reading(#[from] crate::observation::ObservationError),
}

impl Input {
    /// One line of `tengen referee`'s input: an arbiter action (`{"t": 12.5, "action": …}`) or
    /// a reading ([`crate::ReadingLine`]). The one reader of that format (the command and the
    /// `observations` fuzz target use it).
    pub fn from_line(line: &str) -> Result<Self, InputLineError> {
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| InputLineError::NotJson(e.to_string()))?;
        if value.get("action").is_some() {
            let t = value
                .get("t")
                .and_then(serde_json::Value::as_f64)
                .filter(|t| t.is_finite())
                .ok_or(InputLineError::ArbiterTime)?;
            let mut action = value;
            if let Some(map) = action.as_object_mut() {
                map.remove("t");
            }
            let action: ArbiterAction =
                serde_json::from_value(action).map_err(|e| InputLineError::Arbiter(e.to_string()))?;
            return Ok(Input::Arbiter { t, action });
        }
        let reading: crate::ReadingLine =
            serde_json::from_value(value).map_err(|e| crate::observation::ObservationError::Json(e.to_string()))?;
        Ok(Input::Observe(reading.into_observation()?))
    }
}
