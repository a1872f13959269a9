//! The referee of one game: inputs (observations, arbiter actions) in, events out, with both
//! boards, the record, open infractions and warnings always available as a snapshot.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use tengen_rules::{count_area, handicap_placements, suggest_dead, Board, ByColor, Color, Game, GameResult, Grid, IllegalReason, Komi, Move, Penalties, Point, Stone};

use crate::event::{Event, EventKind, Evidence, Message, PointRef, ResultForms, Restore, Sighting, Status};
use crate::explain::{self, Context, Finding, LastMove, Plan};
use crate::observation::Observation;
use crate::stabilise::{StableBoard, Stabiliser, StabiliserConfig};

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
    /// Mark (or unmark) the chains through these points dead ("Q16" or "pd").
    MarkDead {
        /// Points, either notation.
        points: Vec<String>,
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
        /// The right point ("Q16" or "pd"); absent for a pass.
        #[serde(default)]
        point: Option<String>,
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
    /// A point could not be read.
    #[error("bad point `{0}`")]
    BadPoint(String),
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
        let value: serde_json::Value = serde_json::from_str(line).map_err(|e| InputLineError::NotJson(e.to_string()))?;
        if value.get("action").is_some() {
            let t = value.get("t").and_then(serde_json::Value::as_f64).filter(|t| t.is_finite()).ok_or(InputLineError::ArbiterTime)?;
            let mut action = value;
            if let Some(map) = action.as_object_mut() {
                map.remove("t");
            }
            let action: ArbiterAction = serde_json::from_value(action).map_err(|e| InputLineError::Arbiter(e.to_string()))?;
            return Ok(Input::Arbiter { t, action });
        }
        let reading: crate::ReadingLine = serde_json::from_value(value)
            .map_err(|e| crate::observation::ObservationError::Json(e.to_string()))?;
        Ok(Input::Observe(reading.into_observation()?))
    }
}

/// Where the game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Waiting for the first stable board (start position adopted from it).
    Waiting,
    /// Play goes on.
    Playing,
    /// Play is over; dead stones are being marked.
    Ended,
    /// The result is known.
    Finished,
}

/// What a record entry did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecordAction {
    /// A stone on a point.
    Place {
        /// The point.
        point: Point,
    },
    /// A pass.
    Pass,
    /// An illegal placement, void, counting as a pass (Art. 18.3, 19).
    Void {
        /// Where the stone was put.
        point: Point,
        /// Why it was illegal.
        reason: IllegalReason,
    },
    /// The position was set from the physical board (start, resync, arbiter).
    Setup {
        /// The position, 19 rows.
        rows: Vec<String>,
        /// Who moves next.
        to_move: Color,
        /// Moves estimated to have been missed.
        missed: u32,
    },
    /// The arbiter set whose turn it is.
    Turn,
}

/// One entry of the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordEntry {
    /// Move number (passes and void moves count; 0 for setups).
    pub number: u32,
    /// Who.
    pub side: Color,
    /// What.
    pub action: RecordAction,
    /// When it was seen, seconds.
    pub t: f64,
    /// Stones it captured.
    pub captured: Vec<Point>,
    /// Struck from the record by a ruling (a confirmed double move).
    pub struck: bool,
}

/// Why the physical board differs from the legal one at a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DifferenceCause {
    /// Captured stones not yet lifted.
    PendingCapture,
    /// Part of an infraction (suspected or decided) not yet put right on the board.
    Infraction {
        /// The infraction id.
        id: u64,
        /// Its kind.
        kind: EventKind,
    },
    /// The arbiter corrected the record here; the board (or the camera's reading of it) does
    /// not show the corrected move yet.
    Correction {
        /// The corrected move number.
        number: u32,
    },
}

/// A point where the two boards differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// The point.
    pub point: PointRef,
    /// What the rules say stands there.
    pub legal: Option<Color>,
    /// What the camera sees.
    pub physical: Option<Color>,
    /// Why.
    pub cause: DifferenceCause,
}

/// An infraction as the dashboard lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InfractionView {
    /// Id the arbiter answers with.
    pub id: u64,
    /// Where it stands.
    pub status: Status,
    /// The event that raised it.
    pub event: Event,
}

/// Everything the dashboard shows of a game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Table id.
    pub table: String,
    /// Game id.
    pub game: String,
    /// Phase.
    pub phase: Phase,
    /// The legal board, 19 rows of `.XO`.
    pub legal: Vec<String>,
    /// The last stable physical board, 19 rows of `.XO`.
    pub physical: Vec<String>,
    /// Where they differ and why.
    pub differences: Vec<Difference>,
    /// The record.
    pub moves: Vec<RecordEntry>,
    /// Whose turn it is.
    pub to_move: Color,
    /// Whether the side to move is only a guess (after a resync).
    pub to_move_uncertain: bool,
    /// Current move number.
    pub move_number: u32,
    /// Infractions not yet decided.
    pub open_infractions: Vec<InfractionView>,
    /// Decided infractions.
    pub decided_infractions: Vec<InfractionView>,
    /// Confirmed warnings: black, white (Art. 24).
    pub warnings: ByColor<u32>,
    /// Stones captured by black and by white (legal record).
    pub captures: ByColor<u32>,
    /// Stones marked dead.
    pub dead: Vec<PointRef>,
    /// The result, once known.
    pub result: Option<ResultForms>,
    /// The players' colours were found wrong within move 10 and are to be corrected: the
    /// game restarts with the organiser's colours (Art. 17.1).
    pub colours_corrected: bool,
    /// The players' colours were found wrong after move 10: the game stands as played, so the
    /// record names the organiser's Black as White and the organiser's White as Black (later
    /// pairings still follow the organiser's colours, Art. 17.1).
    #[serde(default)]
    pub players_swapped: bool,
}

#[derive(Debug, Clone)]
struct Infraction {
    id: u64,
    kind: EventKind,
    side: Option<Color>,
    status: Status,
    /// Record entry concerned (double move, takeback).
    entry: Option<usize>,
    /// Where a taken-back stone was replayed (the record holds this point until a confirmation).
    replay_point: Option<Point>,
    /// Where a taken-back stone was first played.
    original_point: Option<Point>,
    event: Event,
}

#[derive(Debug, Clone)]
struct PendingCapture {
    side: Color,
    move_number: u32,
    points: BTreeSet<Point>,
    since: f64,
    removed_some: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum AckCause {
    Pending,
    Infraction(u64),
    Correction(u32),
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Ack {
    physical: Stone,
    cause: AckCause,
}

/// The referee of one game.
#[derive(Debug, Clone)]
pub struct Referee {
    config: RefereeConfig,
    stabiliser: Stabiliser,
    phase: Phase,
    start_board: Board,
    start_to_move: Color,
    game: Game,
    number_offset: u32,
    record: Vec<RecordEntry>,
    physical: Grid,
    physical_sighting: Option<Sighting>,
    acks: BTreeMap<usize, Ack>,
    pending: Option<PendingCapture>,
    infractions: Vec<Infraction>,
    penalties: Penalties,
    seq: u64,
    last_t: f64,
    to_move_uncertain: bool,
    dead: BTreeSet<Point>,
    result: Option<ResultForms>,
    colours_corrected: bool,
    players_swapped: bool,
    occluded_since: Option<(f64, bool)>,
}

fn empty_board() -> Board {
    Board::from_stones(&Grid::empty())
}

fn refs(points: &[Point]) -> String {
    points.iter().map(|p| p.human()).collect::<Vec<_>>().join(" ")
}

/// "1 stone", "5 stones".
fn count_en(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

impl Referee {
    /// A referee for a new game.
    pub fn new(config: RefereeConfig) -> Self {
        let start_board = empty_board();
        // Every start waits for the first stable board: it is checked against the setup.
        let mut stabiliser = Stabiliser::new(config.stabiliser.clone(), Grid::empty());
        stabiliser.report_first();
        Referee {
            stabiliser,
            phase: Phase::Waiting,
            game: Game::from_board(start_board.clone(), Color::Black),
            start_board,
            start_to_move: Color::Black,
            number_offset: 0,
            record: Vec::new(),
            physical: Grid::empty(),
            physical_sighting: None,
            acks: BTreeMap::new(),
            pending: None,
            infractions: Vec::new(),
            penalties: Penalties::default(),
            seq: 0,
            last_t: f64::NEG_INFINITY,
            to_move_uncertain: false,
            dead: BTreeSet::new(),
            result: None,
            colours_corrected: false,
            players_swapped: false,
            occluded_since: None,
            config,
        }
    }

    /// Rebuilds a referee by replaying its inputs; returns it with every event it raised.
    pub fn replay(config: RefereeConfig, inputs: impl IntoIterator<Item = Input>) -> (Self, Vec<Event>) {
        let mut referee = Referee::new(config);
        let mut events = Vec::new();
        for input in inputs {
            events.extend(referee.feed(&input));
        }
        (referee, events)
    }

    /// Feeds any input; an arbiter action that cannot be applied yields no event (and changes
    /// nothing), exactly as [`Referee::arbiter`] returning an error.
    pub fn feed(&mut self, input: &Input) -> Vec<Event> {
        match input {
            Input::Observe(obs) => self.observe(obs),
            Input::Arbiter { t, action } => self.arbiter(*t, action).unwrap_or_default(),
            Input::BoardMoved { t, shift_cells } => self.board_moved(*t, *shift_cells),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RefereeConfig {
        &self.config
    }

    /// The legal game (rules core).
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The record, setups included.
    pub fn record(&self) -> &[RecordEntry] {
        &self.record
    }

    /// The start position and who moved first from it (empty board and Black, or the board
    /// adopted at the start: handicap stones and White).
    pub fn start_position(&self) -> (Grid, Color) {
        (Grid::from_board(&self.start_board), self.start_to_move)
    }

    /// Current move number.
    pub fn move_number(&self) -> u32 {
        self.number_offset + self.game.move_number()
    }

    fn time(&mut self, t: f64) -> f64 {
        // Time never goes backwards inside a game: a late frame is taken as happening now.
        let t = if t.is_finite() { t } else if self.last_t.is_finite() { self.last_t } else { 0.0 };
        self.last_t = self.last_t.max(t);
        self.last_t
    }

    fn event(&mut self, t: f64, kind: EventKind, message: Message) -> Event {
        self.seq += 1;
        Event::new(&self.config.table, &self.config.game, self.seq, t, kind, message)
    }

    /// The server's notice that the board or camera moved: readings restart from fresh frames.
    pub fn board_moved(&mut self, t: f64, shift_cells: Option<f64>) -> Vec<Event> {
        let t = self.time(t);
        self.stabiliser.reset_window();
        self.seq += 1;
        vec![Event::board_moved(&self.config.table, &self.config.game, self.seq, t, shift_cells)]
    }

    /// Feeds one frame's reading.
    pub fn observe(&mut self, obs: &Observation) -> Vec<Event> {
        let t = self.time(obs.t);
        let mut events = Vec::new();
        if obs.occluded {
            let (since, reported) = *self.occluded_since.get_or_insert((t, false));
            if !reported && t - since >= self.config.occlusion_notice_seconds {
                self.occluded_since = Some((since, true));
                let secs = t - since;
                let e = self.event(
                    t,
                    EventKind::Occluded,
                    Message::new(
                        format!("The board has been covered for {secs:.0} s: moves cannot be seen."),
                        format!("棋盤已被遮擋{secs:.0}秒，無法看到著手。"),
                    ),
                );
                events.push(e);
            }
        } else {
            self.occluded_since = None;
        }
        // The stabiliser sees the same monotonic time as the events.
        let out = if obs.t == t {
            self.stabiliser.push(obs)
        } else {
            self.stabiliser.push(&Observation { t, ..obs.clone() })
        };
        if self.phase == Phase::Playing {
            for p in out.unclear {
                let e = self
                    .event(
                        t,
                        EventKind::UnclearPoint,
                        Message::new(
                            format!("{} cannot be read: a stone between points or off the grid is not a move (Art. 2). Place it on a point or remove it.", p.human()),
                            format!("{}無法辨認：落在交叉點之間或棋盤外的棋子不算著手（第2條）。請放到點上或取走。", p.human()),
                        ),
                    )
                    .with_points(&[p])
                    .with_move(Some(self.move_number()));
                events.push(e);
            }
        }
        if let Some(stable) = out.changed {
            events.extend(self.on_stable(stable));
        }
        events.extend(self.check_capture_grace(t));
        events
    }

    fn on_stable(&mut self, stable: StableBoard) -> Vec<Event> {
        let before = self.physical_sighting.clone();
        let sighting = Sighting { t: stable.t, frame_ref: stable.frame_ref.clone(), rows: stable.grid.rows() };
        self.physical = stable.grid.clone();
        self.physical_sighting = Some(sighting.clone());
        let evidence = Evidence { before, after: Some(sighting) };
        match self.phase {
            Phase::Waiting => self.adopt_start(&stable, evidence),
            Phase::Playing => self.explain_change(&stable, evidence),
            // After play ends, lifting dead stones and filling territory are not moves.
            Phase::Ended | Phase::Finished => Vec::new(),
        }
    }

    fn adopt_start(&mut self, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        match self.config.start {
            StartPosition::AdoptFirstBoard => self.start_as_found(stable, evidence),
            StartPosition::Even => self.start_even(stable, evidence),
            StartPosition::Handicap(stones) => self.start_handicap(stones, stable, evidence),
        }
    }

    /// Starts play from `board` with `to_move` first.
    fn begin(&mut self, board: Board, to_move: Color) {
        self.start_board = board.clone();
        self.start_to_move = to_move;
        self.game = Game::from_board(board, to_move);
        self.phase = Phase::Playing;
        self.refresh_acks(None);
    }

    /// An even game: the board must be empty. A lone stone is the first move seen late (a white
    /// one raises Art. 17.1 as it is explained); more stones are for the arbiter, not moves.
    fn start_even(&mut self, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        let ByColor { black: b, white: w } = stable.grid.counts();
        self.begin(empty_board(), Color::Black);
        let start = self
            .event(stable.t, EventKind::Start, Message::new("Even game: empty board, Black to move.", "對局開始：空枰，黑先。"))
            .with_side(Some(Color::Black))
            .with_move(Some(0));
        let mut events = vec![start];
        match b + w {
            0 => {}
            1 => events.extend(self.explain_change(stable, evidence)),
            n => {
                let points: Vec<Point> = Grid::empty().differences(&stable.grid);
                let confidence = 0.9 * Self::min_confidence(stable, &points);
                let message = Message::new(
                    format!("{} on the board at the start of an even game ({b} black, {w} white): they are not moves. Clear the board, or adopt it as the start if the game goes on from it.", count_en(n, "stone", "stones")),
                    format!("對局開始時棋盤上已有{n}子（黑{b}、白{w}）：不算著手。請清空棋盤；若對局由此繼續，請以目前盤面為準。"),
                );
                events.push(self.raise(stable.t, EventKind::SetupMismatch, None, &points, confidence, &evidence, message, None));
            }
        }
        events
    }

    /// A handicap game: wait until the stones stand on the standard points (seen from any side),
    /// then White moves. Stones beyond them are moves seen late; any other board is for the
    /// arbiter, and play starts from the standard placement closest to it.
    fn start_handicap(&mut self, stones: u8, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        let Ok(placements) = handicap_placements(stones, tengen_rules::MAX_BOARD_SIZE) else {
            // Not a standard handicap (a bad configuration): take the board as found.
            return self.start_as_found(stable, evidence);
        };
        let black_at = |p: &Point| stable.grid.get(*p) == Stone::Of(Color::Black);
        let ByColor { black: b, white: w } = stable.grid.counts();
        let placing = w == 0
            && b < usize::from(stones)
            && placements.iter().any(|placement| stable.grid.differences(&Grid::empty()).iter().all(|p| placement.contains(p)));
        if placing {
            // Black is still putting the stones down (or has not begun): keep waiting.
            return Vec::new();
        }
        let complete = placements.iter().find(|placement| placement.iter().all(black_at));
        let closest = complete.unwrap_or_else(|| {
            placements.iter().max_by_key(|placement| placement.iter().filter(|p| black_at(p)).count()).unwrap_or(&placements[0])
        });
        let mut grid = Grid::empty();
        for &p in closest {
            grid.set(p, Stone::Of(Color::Black));
        }
        let (board, _) = grid.to_legal_board();
        self.begin(board, Color::White);
        let start = self
            .event(
                stable.t,
                EventKind::Start,
                Message::new(format!("Handicap game: {stones} stones on the standard points, White to move."), format!("讓{stones}子局：黑子放在星位上，白先。")),
            )
            .with_side(Some(Color::White))
            .with_points(closest)
            .with_move(Some(0));
        let mut events = vec![start];
        if complete.is_some() {
            if stable.grid != grid {
                events.extend(self.explain_change(stable, evidence));
            }
        } else {
            let points = grid.differences(&stable.grid);
            let confidence = 0.9 * Self::min_confidence(stable, &points);
            let shown: Vec<Point> = closest.clone();
            let message = Message::new(
                format!("The board at the start does not show the {stones} handicap stones on the standard points ({}): {b} black and {w} white stones. Put them right, or adopt the board as the start if it was agreed.", refs(&shown)),
                format!("開局盤面與讓{stones}子的星位（{}）不符：黑{b}子、白{w}子。請擺正；若雙方同意，則以目前盤面為準。", refs(&shown)),
            );
            events.push(self.raise(stable.t, EventKind::SetupMismatch, None, &points, confidence, &evidence, message, None));
        }
        events
    }

    /// Whatever the first stable board shows is the start (handicap stones: White first).
    fn start_as_found(&mut self, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        let ByColor { black: b, white: w } = stable.grid.counts();
        // There is no one-stone handicap: a lone black stone is move 1 seen late.
        let first_move_seen = b == 1 && w == 0;
        let (board, _dead) = if first_move_seen { (empty_board(), Vec::new()) } else { stable.grid.to_legal_board() };
        let to_move = if b > w && !first_move_seen { Color::White } else { Color::Black };
        self.begin(board, to_move);
        let (en, zh) = if b + w == 0 || first_move_seen {
            ("Game start: empty board, Black to move.".to_string(), "對局開始：空枰，黑先。".to_string())
        } else {
            (
                format!("Game start from the board as found: {b} black and {w} white stones, {} to move.", to_move.name()),
                format!("按盤面開始：黑{b}子、白{w}子，{}方先行。", to_move.chinese()),
            )
        };
        let e = self.event(stable.t, EventKind::Start, Message::new(en, zh)).with_side(Some(to_move)).with_move(Some(0));
        let mut events = vec![e];
        if first_move_seen {
            events.extend(self.explain_change(stable, evidence));
        }
        events
    }

    /// Drops acknowledgements the board now satisfies; with `cause`, acknowledges every new
    /// difference under it (after a ruling changed the legal board).
    fn refresh_acks(&mut self, cause: Option<AckCause>) {
        let legal = Grid::from_board(self.game.board());
        let physical = self.physical.clone();
        self.acks.retain(|&i, _| legal.get(Point::from_index(i)) != physical.get(Point::from_index(i)));
        if let Some(pending) = &mut self.pending {
            let before = pending.points.len();
            pending.points.retain(|p| physical.get(*p) != Stone::Empty && legal.get(*p) == Stone::Empty);
            if pending.points.len() < before {
                pending.removed_some = true;
            }
            if pending.points.is_empty() {
                self.pending = None;
            }
        }
        if let Some(cause) = cause {
            for p in legal.differences(&physical) {
                self.acks.entry(p.index()).or_insert(Ack { physical: physical.get(p), cause });
            }
        }
    }

    fn acked_map(&self) -> BTreeMap<usize, Stone> {
        self.acks.iter().map(|(&i, a)| (i, a.physical)).collect()
    }

    fn last_move(&self) -> Option<LastMove> {
        let last = self.record.iter().rev().find(|e| !e.struck && !matches!(e.action, RecordAction::Turn))?;
        match last.action {
            RecordAction::Place { point } => Some(LastMove { side: last.side, point, captured: last.captured.clone() }),
            _ => None,
        }
    }

    fn explain_change(&mut self, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        self.refresh_acks(None);
        if let Some(events) = self.takeback_replayed(stable, &evidence) {
            return events;
        }
        let acked = self.acked_map();
        let ctx = Context {
            game: &self.game,
            legal: Grid::from_board(self.game.board()),
            physical: &stable.grid,
            acked: &acked,
            last_move: self.last_move(),
            to_move_uncertain: self.to_move_uncertain,
            max_moves: self.config.max_moves_per_change,
            scatter_min: self.config.scatter_min_stones,
        };
        let plan = explain::explain(&ctx);
        self.apply(plan, stable, evidence)
    }

    /// A stone lifted in an earlier view (open takeback) and now put down elsewhere by the same
    /// side, nothing else changed: the takeback's replay, not a new move.
    fn takeback_replayed(&mut self, stable: &StableBoard, evidence: &Evidence) -> Option<Vec<Event>> {
        let last_entry = self.record.iter().rposition(|e| !e.struck && !matches!(e.action, RecordAction::Turn))?;
        let idx = self.infractions.iter().rposition(|i| {
            i.kind == EventKind::Takeback && i.status == Status::Suspected && i.replay_point.is_none() && i.entry == Some(last_entry)
        })?;
        let (side, from) = (self.infractions[idx].side?, self.infractions[idx].original_point?);
        let legal = Grid::from_board(self.game.board());
        let unexplained: Vec<Point> = legal
            .differences(&stable.grid)
            .into_iter()
            .filter(|p| self.acks.get(&p.index()).map(|a| a.physical) != Some(stable.grid.get(*p)))
            .collect();
        let [to] = unexplained[..] else { return None };
        if legal.get(to) != Stone::Empty || stable.grid.get(to) != Stone::Of(side) || stable.grid.get(from) != Stone::Empty {
            return None;
        }
        self.record[last_entry].action = RecordAction::Place { point: to };
        self.rebuild();
        self.refresh_acks(None);
        let id = self.infractions[idx].id;
        self.infractions[idx].replay_point = Some(to);
        let (h, th) = (from.human(), to.human());
        let mut e = self
            .event(
                stable.t,
                EventKind::Takeback,
                Message::new(
                    format!("{} replayed the stone lifted from {h} at {th}: a takeback. The move is recorded at {th} unless the arbiter confirms (then the stone goes back to {h} and {} is warned).", side.title(), side.name()),
                    format!("{}將{h}拿起的棋子改下在{th}：悔棋。裁判確認前該手記為{th}；確認則棋子放回{h}並警告。", side.chinese()),
                ),
            )
            .with_side(Some(side))
            .with_points(&[from, to])
            .with_move(Some(self.move_number()));
        e.infraction = Some(id);
        e.confidence = 0.7 * Self::min_confidence(stable, &[from, to]);
        e.evidence = Some(evidence.clone());
        e.ruling = EventKind::Takeback.ruling();
        self.infractions[idx].event = e.clone();
        Some(vec![e])
    }

    fn min_confidence(stable: &StableBoard, points: &[Point]) -> f32 {
        points.iter().map(|&p| stable.confidence[p.index()]).fold(1.0f32, f32::min)
    }

    #[allow(clippy::too_many_arguments)]
    fn raise(
        &mut self,
        t: f64,
        kind: EventKind,
        side: Option<Color>,
        points: &[Point],
        confidence: f32,
        evidence: &Evidence,
        message: Message,
        entry: Option<usize>,
    ) -> Event {
        let id = self.infractions.len() as u64 + 1;
        let mut e = self.event(t, kind, message).with_side(side).with_points(points).with_move(Some(self.move_number()));
        e.infraction = Some(id);
        e.confidence = confidence.clamp(0.0, 1.0);
        e.evidence = Some(evidence.clone());
        e.ruling = kind.ruling();
        self.infractions.push(Infraction { id, kind, side, status: Status::Suspected, entry, replay_point: None, original_point: None, event: e.clone() });
        for &p in points {
            if self.physical.get(p) != self.game.board().get(p) {
                self.acks.insert(p.index(), Ack { physical: self.physical.get(p), cause: AckCause::Infraction(id) });
            }
        }
        e
    }

    fn apply(&mut self, plan: Plan, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        let t = stable.t;
        let mut events = Vec::new();
        let ambiguous = plan.orders > 1;
        for step in &plan.steps {
            // The opponent of a capturer moved while the captured stones still stand: missed
            // (raised once this move is in the record, so it carries the move that revealed it).
            let missed_by: Option<Option<PendingCapture>> = if self.pending.as_ref().is_some_and(|p| p.side != step.side) { Some(self.pending.take()) } else { None };
            if self.to_move_uncertain {
                self.game.set_to_move(step.side);
                self.to_move_uncertain = false;
                // The estimate of missed moves counts stones; captured ones hide moves. The side
                // now moving fixes the parity: the first mover of the game plays odd moves.
                let next = self.move_number() + 1;
                let expected = if next % 2 == 1 { self.start_to_move } else { self.start_to_move.opponent() };
                if expected != step.side {
                    self.number_offset += 1;
                    if let Some(RecordEntry { action: RecordAction::Setup { missed, .. }, number, .. }) = self.record.last_mut() {
                        *missed += 1;
                        *number += 1;
                    }
                }
            }
            let out_of_turn = step.side != self.game.to_move();
            let first_on_empty = self.start_board == empty_board() && !self.record.iter().any(|e| !e.struck);
            match step.void {
                None => {
                    let outcome = match self.game.play(step.side, Move::Place(step.point)) {
                        Ok(o) => o,
                        // The plan was checked on a copy of this game; an error is impossible, but
                        // never panic on it: record nothing for this step.
                        Err(_) => {
                            if let Some(pending) = missed_by.flatten() {
                                self.pending = Some(pending);
                            }
                            continue;
                        }
                    };
                    let number = self.number_offset + outcome.move_number;
                    self.record.push(RecordEntry {
                        number,
                        side: step.side,
                        action: RecordAction::Place { point: step.point },
                        t,
                        captured: outcome.captured.clone(),
                        struck: false,
                    });
                    let entry = self.record.len() - 1;
                    let human = step.point.human();
                    let (en, zh) = if ambiguous {
                        (
                            format!("{} plays {human} (move {number}; {} orders fit this change).", step.side.title(), plan.orders),
                            format!("{}{human}（第{number}手；此變化有{}種次序）。", step.side.chinese(), plan.orders),
                        )
                    } else {
                        (format!("{} plays {human} (move {number}).", step.side.title()), format!("第{number}手：{}{human}。", step.side.chinese()))
                    };
                    let mut e = self.event(t, EventKind::Move, Message::new(en, zh)).with_side(Some(step.side)).with_points(&[step.point]).with_move(Some(number));
                    e.confidence = Self::min_confidence(stable, &[step.point]) * if ambiguous { 0.5 } else { 1.0 };
                    e.orders = (plan.steps.len() > 1).then_some(plan.orders);
                    e.captured = outcome.captured.iter().map(|&p| PointRef::of(p)).collect();
                    events.push(e);
                    if let Some(pending) = missed_by.clone().flatten() {
                        self.pending = Some(pending);
                        events.extend(self.raise_missed_capture(t, &evidence, "the opponent has moved"));
                    }
                    if !outcome.captured.is_empty() {
                        let still: BTreeSet<Point> = outcome.captured.iter().copied().filter(|&p| stable.grid.get(p) != Stone::Empty).collect();
                        let n = outcome.captured.len();
                        let (en, zh) = if still.is_empty() {
                            (format!("{} captures {}: {}.", step.side.title(), count_en(n, "stone", "stones"), refs(&outcome.captured)), format!("{}提{n}子：{}。", step.side.chinese(), refs(&outcome.captured)))
                        } else {
                            (
                                format!("{} captures {}: {}; {} still on the board (pending removal).", step.side.title(), count_en(n, "stone", "stones"), refs(&outcome.captured), still.len()),
                                format!("{}提{n}子：{}；尚有{}子未提出。", step.side.chinese(), refs(&outcome.captured), still.len()),
                            )
                        };
                        let mut c = self.event(t, EventKind::Capture, Message::new(en, zh)).with_side(Some(step.side)).with_points(&outcome.captured).with_move(Some(number));
                        c.captured = e_captured(&outcome.captured);
                        events.push(c);
                        if !still.is_empty() {
                            for &p in &still {
                                self.acks.insert(p.index(), Ack { physical: stable.grid.get(p), cause: AckCause::Pending });
                            }
                            match &mut self.pending {
                                Some(pc) if pc.side == step.side => pc.points.extend(still),
                                _ => {
                                    let removed_some = still.len() < outcome.captured.len();
                                    self.pending = Some(PendingCapture { side: step.side, move_number: number, points: still, since: t, removed_some })
                                }
                            }
                        }
                    }
                    if out_of_turn {
                        if first_on_empty && step.side == Color::White {
                            let e = self.raise(
                                t,
                                EventKind::WrongColours,
                                Some(Color::White),
                                &[step.point],
                                0.8 * Self::min_confidence(stable, &[step.point]),
                                &evidence,
                                Message::new(
                                    format!("The first stone on the empty board is white ({human}): the players may hold the wrong colours."),
                                    format!("空枰第一子為白子（{human}）：雙方可能拿錯黑白棋。"),
                                ),
                                Some(entry),
                            );
                            events.push(e);
                        } else {
                            let e = self.raise(
                                t,
                                EventKind::DoubleMove,
                                Some(step.side),
                                &[step.point],
                                0.6 * Self::min_confidence(stable, &[step.point]),
                                &evidence,
                                Message::new(
                                    format!("{} played twice in a row ({human}, move {number}): a double move or an unrecorded pass by {}. The arbiter decides.", step.side.title(), step.side.opponent().name()),
                                    format!("{}連下兩著（{human}，第{number}手）：連下兩著或{}方未記錄的虛著，由裁判裁決。", step.side.chinese(), step.side.opponent().chinese()),
                                ),
                                Some(entry),
                            );
                            events.push(e);
                        }
                    }
                    let open_repetition = self.infractions.iter().any(|i| i.kind == EventKind::Repetition && i.status == Status::Suspected);
                    // One open repetition at a time: a cycle repeats on every move of it.
                    if let (Some(rep), false) = (outcome.repetition, open_repetition) {
                        let e = self.raise(
                            t,
                            EventKind::Repetition,
                            Some(step.side),
                            &[step.point],
                            1.0,
                            &evidence,
                            Message::new(
                                format!("{human} repeats the whole-board position after move {} (Art. 6).", rep.first_seen_after_move),
                                format!("{human}造成全局同形再現（與第{}手後相同，第6條）。", rep.first_seen_after_move),
                            ),
                            Some(entry),
                        );
                        events.push(e);
                    }
                    let open_no_result = self.infractions.iter().any(|i| i.kind == EventKind::NoResult && i.status == Status::Suspected);
                    if outcome.no_result && !open_no_result {
                        let e = self.raise(
                            t,
                            EventKind::NoResult,
                            None,
                            &[step.point],
                            1.0,
                            &evidence,
                            Message::new(
                                "The same position has come round three times: a cycle (triple ko, eternal life) that cannot end (Art. 20.3).",
                                "同一局面第三次出現：三劫、長生等循環（第20條3款）。",
                            ),
                            Some(entry),
                        );
                        events.push(e);
                    }
                }
                Some(reason) => {
                    if let Some(pending) = missed_by.clone().flatten() {
                        self.pending = Some(pending);
                        events.extend(self.raise_missed_capture(t, &evidence, "the opponent has moved"));
                    }
                    let outcome = self.game.pass(step.side);
                    let number = self.number_offset + outcome.move_number;
                    self.record.push(RecordEntry {
                        number,
                        side: step.side,
                        action: RecordAction::Void { point: step.point, reason },
                        t,
                        captured: Vec::new(),
                        struck: false,
                    });
                    let entry = self.record.len() - 1;
                    let human = step.point.human();
                    let mut points = vec![step.point];
                    points.extend(plan.void_removals.iter().copied());
                    let (kind, en, zh) = match reason {
                        IllegalReason::Ko => (
                            EventKind::KoRetaken,
                            format!("{} retakes the ko at {human} at once, without a threat (move {number}): void, counts as a pass.", step.side.title()),
                            format!("{}在{human}立即回提劫（第{number}手），未找劫材：無效，棄權一次。", step.side.chinese()),
                        ),
                        IllegalReason::Suicide => (
                            EventKind::ForbiddenPoint,
                            format!("{} plays on the forbidden point {human} (no liberty, captures nothing; move {number}): void, counts as a pass.", step.side.title()),
                            format!("{}下在禁著點{human}（第{number}手）：無效，棄權一次。", step.side.chinese()),
                        ),
                        IllegalReason::Occupied | IllegalReason::OffBoard => (
                            EventKind::MovedStone,
                            format!("A stone appeared on an occupied point {human}."),
                            format!("{human}已有棋子，又出現一子。"),
                        ),
                    };
                    let conf = 0.9 * Self::min_confidence(stable, &points);
                    let side = if kind == EventKind::MovedStone { None } else { Some(step.side) };
                    let e = self.raise(t, kind, side, &points, conf, &evidence, Message::new(en, zh), Some(entry));
                    events.push(e);
                }
            }
        }
        for f in plan.findings {
            events.extend(self.apply_finding(f, stable, &evidence));
        }
        // Anything still different is acknowledged under the last infraction raised here, so it
        // is not raised again at the next stable board.
        self.refresh_acks(None);
        events
    }

    fn apply_finding(&mut self, f: Finding, stable: &StableBoard, evidence: &Evidence) -> Vec<Event> {
        let t = stable.t;
        let mut events = Vec::new();
        match f {
            Finding::Takeback { side, from, to, restored } => {
                let mut points = vec![from];
                points.extend(to);
                points.extend(restored.iter().copied());
                let h = from.human();
                let entry = self.record.iter().rposition(|e| !e.struck && e.action == RecordAction::Place { point: from });
                let (en, zh) = match to {
                    Some(p) => {
                        let ph = p.human();
                        // Art. 17.3: the claim must come before the opponent's next move; until the
                        // arbiter confirms, the game goes on from the stone where it now stands.
                        if let Some(i) = entry {
                            self.record[i].action = RecordAction::Place { point: p };
                            self.rebuild();
                        }
                        (
                            format!("{} lifted the stone at {h} and played it at {ph} before the opponent moved: a takeback. The move is recorded at {ph} unless the arbiter confirms (then the stone goes back to {h} and {} is warned).", side.title(), side.name()),
                            format!("{}將{h}的棋子拿起改下在{ph}：悔棋。裁判確認前該手記為{ph}；確認則棋子放回{h}並警告。", side.chinese()),
                        )
                    }
                    None => (format!("{} lifted the stone just played at {h}: a takeback.", side.title()), format!("{}拿起剛下的{h}棋子：悔棋。", side.chinese())),
                };
                let conf = 0.7 * Self::min_confidence(stable, &points);
                let e = self.raise(t, EventKind::Takeback, Some(side), &points, conf, evidence, Message::new(en, zh), entry);
                if let Some(inf) = self.infractions.last_mut() {
                    inf.replay_point = to;
                    inf.original_point = Some(from);
                }
                events.push(e);
            }
            Finding::MovedStones { from, to } => {
                let mut points = from.clone();
                points.extend(to.iter().copied().filter(|p| !from.contains(p)));
                let (en, zh) = if to.is_empty() {
                    (format!("{} missing from {} without a capture: moved or removed.", if from.len() == 1 { "A stone" } else { "Stones" }, refs(&from)), format!("{}的棋子未經提取而消失：被移動或拿走。", refs(&from)))
                } else if from == to {
                    (format!("{} at {} changed colour.", if from.len() == 1 { "The stone" } else { "Stones" }, refs(&from)), format!("{}的棋子顏色改變。", refs(&from)))
                } else {
                    (format!("{} moved from {} to {}.", if from.len() == 1 { "A stone" } else { "Stones" }, refs(&from), refs(&to)), format!("棋子從{}移到{}。", refs(&from), refs(&to)))
                };
                let conf = 0.7 * Self::min_confidence(stable, &points);
                let e = self.raise(t, EventKind::MovedStone, None, &points, conf, evidence, Message::new(en, zh), None);
                events.push(e);
            }
            Finding::WrongCapture { side, points } => {
                let conf = 0.8 * Self::min_confidence(stable, &points);
                let (en, zh) = (
                    format!("{} removed stones that still have liberties: {}.", side.title(), refs(&points)),
                    format!("{}誤提有氣之子：{}。", side.chinese(), refs(&points)),
                );
                let e = self.raise(t, EventKind::WrongCapture, Some(side), &points, conf, evidence, Message::new(en, zh), None);
                events.push(e);
            }
            Finding::Scattered { points } => {
                let restore: Vec<Restore> = points.iter().map(|&p| Restore { point: PointRef::of(p), stone: self.game.board().get(p).color() }).collect();
                let n = points.len();
                let (en, zh) = (
                    format!("{n} points disturbed at once: the board is scattered. Restore it from the record (list attached)."),
                    format!("{n}處棋子同時被擾亂：棋局散亂，請按記錄復盤（附清單）。"),
                );
                let mut e = self.raise(t, EventKind::ScatteredBoard, None, &points, 0.8, evidence, Message::new(en, zh), None);
                e.restore = restore;
                if let Some(inf) = self.infractions.last_mut() {
                    inf.event.restore = e.restore.clone();
                }
                events.push(e);
            }
            Finding::Resync { added } => {
                events.extend(self.resync(t, added, evidence, false));
            }
        }
        events
    }

    fn resync(&mut self, t: f64, added: u32, evidence: &Evidence, by_arbiter: bool) -> Vec<Event> {
        let (board, removed) = self.physical.to_legal_board();
        let ByColor { black: b, white: w } = self.physical.counts();
        let to_move = if b > w { Color::White } else { Color::Black };
        let missed = added;
        let base = self.move_number();
        self.record.push(RecordEntry {
            number: base + missed,
            side: to_move,
            action: RecordAction::Setup { rows: Grid::from_board(&board).rows(), to_move, missed },
            t,
            captured: Vec::new(),
            struck: false,
        });
        self.number_offset = base + missed;
        self.game = Game::from_board(board, to_move);
        self.to_move_uncertain = !by_arbiter;
        self.pending = None;
        self.acks.clear();
        // Chains without liberties on the adopted board are captured stones not yet lifted.
        for p in &removed {
            self.acks.insert(p.index(), Ack { physical: self.physical.get(*p), cause: AckCause::Pending });
        }
        let (en, zh) = if by_arbiter {
            ("The arbiter set the legal position to the board as seen.".to_string(), "裁判以目前盤面為準。".to_string())
        } else {
            (
                format!("{added} new stones at once: moves were not seen (missed frames). The board as seen is adopted as the position; the record lacks about {missed} moves and the side to move is taken from the next move."),
                format!("同時出現{added}子：有著手未被看到。以目前盤面為準，記錄缺約{missed}手，下一手決定輪到哪方。"),
            )
        };
        let mut e = self.event(t, EventKind::Resync, Message::new(en, zh)).with_move(Some(self.number_offset)).with_side(Some(to_move));
        e.evidence = Some(evidence.clone());
        vec![e]
    }

    fn raise_missed_capture(&mut self, t: f64, evidence: &Evidence, why: &str) -> Vec<Event> {
        let Some(p) = self.pending.take() else { return Vec::new() };
        let points: Vec<Point> = p.points.iter().copied().collect();
        let partly = if p.removed_some { "only partly removed" } else { "not removed" };
        let (stones, are) = if points.len() == 1 { ("the stone", "is") } else { ("the stones", "are") };
        let (en, zh) = (
            format!("{} captured at move {} but {stones} {} {are} {partly} ({why}).", p.side.title(), p.move_number, refs(&points)),
            format!("{}第{}手提子，但{}{}。", p.side.chinese(), p.move_number, refs(&points), if p.removed_some { "漏提" } else { "未提" }),
        );
        let e = self.raise(t, EventKind::MissedCapture, Some(p.side), &points, 0.9, evidence, Message::new(en, zh), None);
        vec![e]
    }

    fn check_capture_grace(&mut self, t: f64) -> Vec<Event> {
        let overdue = self.pending.as_ref().is_some_and(|p| t - p.since > self.config.capture_grace_seconds);
        if !overdue || self.phase != Phase::Playing {
            return Vec::new();
        }
        let evidence = Evidence { before: None, after: self.physical_sighting.clone() };
        let why = format!("still there after {:.0} s", self.config.capture_grace_seconds);
        self.raise_missed_capture(t, &evidence, &why)
    }

    /// Rebuilds the legal game from the start position and the record (after a ruling).
    fn rebuild(&mut self) {
        let (game, offset, _) = replay_record(&self.start_board, self.start_to_move, &mut self.record);
        self.game = game;
        self.number_offset = offset;
    }

    /// Applies an arbiter action at time `t`.
    pub fn arbiter(&mut self, t: f64, action: &ArbiterAction) -> Result<Vec<Event>, ArbiterError> {
        let t = self.time(t);
        match action {
            ArbiterAction::Confirm { infraction } => self.decide(t, *infraction, true),
            ArbiterAction::Dismiss { infraction } => self.decide(t, *infraction, false),
            ArbiterAction::Pass { side } => {
                if self.phase != Phase::Playing {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                let o = self.game.pass(*side);
                let number = self.number_offset + o.move_number;
                self.to_move_uncertain = false;
                self.record.push(RecordEntry { number, side: *side, action: RecordAction::Pass, t, captured: Vec::new(), struck: false });
                let e = self
                    .event(t, EventKind::Pass, Message::new(format!("{} passes (move {number}).", side.title()), format!("第{number}手：{}虛著。", side.chinese())))
                    .with_side(Some(*side))
                    .with_move(Some(number));
                let mut events = vec![e];
                if self.game.consecutive_passes() >= 2 {
                    events.extend(self.end_play(t, "Both sides passed in succession (Art. 7.3).", "雙方連續使用虛著（第7條3款）。"));
                }
                Ok(events)
            }
            ArbiterAction::EndGame { resigned } => {
                if !matches!(self.phase, Phase::Playing | Phase::Waiting) {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                match resigned {
                    Some(loser) => {
                        let winner = loser.opponent();
                        let forms = ResultForms {
                            exact: format!("{} wins by resignation", winner.title()),
                            points: format!("{}+R", winner.sgf_letter()),
                            customary: format!("{}中盤勝", winner.chinese()),
                            winner: Some(winner),
                            black_count: None,
                            komi_points: self.config.komi_points,
                            warnings: self.penalties.warnings,
                        };
                        let mut events = self.end_play(t, &format!("{} resigns (Art. 7.2).", loser.title()), &format!("{}方認輸（第7條2款）。", loser.chinese()));
                        events.push(self.publish_result(t, forms));
                        Ok(events)
                    }
                    None => Ok(self.end_play(t, "Both sides agree that play is finished (Art. 7.1, 13).", "雙方確認著子完畢（第7條1款、第13條）。")),
                }
            }
            ArbiterAction::MarkDead { points } => {
                if self.phase != Phase::Ended {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                let mut parsed = Vec::new();
                for text in points {
                    parsed.push(Point::parse_on_board(text).map_err(|_| ArbiterError::BadPoint(text.clone()))?);
                }
                for p in parsed {
                    let chain = self.game.board().chain(p);
                    if chain.is_empty() {
                        continue;
                    }
                    if self.dead.contains(&p) {
                        for q in chain {
                            self.dead.remove(&q);
                        }
                    } else {
                        self.dead.extend(chain);
                    }
                }
                let dead: Vec<Point> = self.dead.iter().copied().collect();
                let e = self
                    .event(t, EventKind::DeadStones, Message::new(format!("Dead stones: {}.", if dead.is_empty() { "none".to_string() } else { refs(&dead) }), format!("死子：{}。", if dead.is_empty() { "無".to_string() } else { refs(&dead) })))
                    .with_points(&dead);
                Ok(vec![e])
            }
            ArbiterAction::Count => {
                if !matches!(self.phase, Phase::Ended | Phase::Finished) {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                let dead: Vec<Point> = self.dead.iter().copied().collect();
                let count = count_area(self.game.board(), &dead);
                let result = GameResult::from_count(&count, Komi { points: self.config.komi_points }, self.penalties);
                let forms = self.forms(&result);
                Ok(vec![self.publish_result(t, forms)])
            }
            ArbiterAction::AdoptPhysical => {
                // While waiting (handicap stones placed off the standard points), adopting the
                // board as found is how the arbiter starts the game.
                if !matches!(self.phase, Phase::Playing | Phase::Waiting) {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                self.phase = Phase::Playing;
                let evidence = Evidence { before: None, after: self.physical_sighting.clone() };
                Ok(self.resync(t, 0, &evidence, true))
            }
            ArbiterAction::SetToMove { side } => {
                if self.phase != Phase::Playing {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                self.game.set_to_move(*side);
                self.to_move_uncertain = false;
                self.record.push(RecordEntry { number: self.move_number(), side: *side, action: RecordAction::Turn, t, captured: Vec::new(), struck: false });
                Ok(Vec::new())
            }
            ArbiterAction::CorrectMove { number, point } => self.correct_move(t, *number, point.as_deref()),
            ArbiterAction::WrongColours => {
                if self.colours_corrected || self.players_swapped {
                    return Err(ArbiterError::ColoursAlreadyRuled);
                }
                // The referee's own alert (a white first stone), if open, is what is answered.
                match self.infractions.iter().find(|i| i.kind == EventKind::WrongColours && i.status == Status::Suspected) {
                    Some(open) => self.decide(t, open.id, true),
                    None => Ok(vec![self.wrong_colours_ruled(t)]),
                }
            }
        }
    }

    /// Replaces a recorded move and replays the record; nothing changes if the rules refuse it.
    fn correct_move(&mut self, t: f64, number: u32, point: Option<&str>) -> Result<Vec<Event>, ArbiterError> {
        // Once play has ended, dead stones and the final passes rest on the record as it is.
        if self.phase != Phase::Playing {
            return Err(ArbiterError::WrongPhase(self.phase_name()));
        }
        let point = point
            .map(|text| Point::parse_on_board(text).map_err(|_| ArbiterError::BadPoint(text.to_owned())))
            .transpose()?;
        let idx = self
            .record
            .iter()
            .rposition(|e| !e.struck && e.number == number && matches!(e.action, RecordAction::Place { .. } | RecordAction::Pass | RecordAction::Void { .. }))
            .ok_or(ArbiterError::UnknownMove(number))?;
        // A ruling on that move (a takeback's confirmation rewrites it) must come first.
        if let Some(open) = self.infractions.iter().find(|i| i.status == Status::Suspected && i.entry == Some(idx)) {
            return Err(ArbiterError::BadCorrection(format!("infraction {} concerns move {number}: confirm or dismiss it first", open.id)));
        }
        let (_, _, placed_before) = replay_record(&self.start_board, self.start_to_move, &mut self.record.clone());
        let mut corrected = self.record.clone();
        let was = corrected[idx].action.clone();
        corrected[idx].action = match point {
            Some(point) => RecordAction::Place { point },
            None => RecordAction::Pass,
        };
        let (_, _, placed_after) = replay_record(&self.start_board, self.start_to_move, &mut corrected);
        if point.is_some() && !placed_after[idx] {
            return Err(ArbiterError::BadCorrection(format!("{} is not a legal move at move {number}", refs(&point.into_iter().collect::<Vec<_>>()))));
        }
        if let Some(later) = (idx + 1..corrected.len()).find(|&i| placed_before[i] && !placed_after[i]) {
            return Err(ArbiterError::BadCorrection(format!("move {} would become illegal", corrected[later].number)));
        }
        let side = corrected[idx].side;
        let board_before = Grid::from_board(self.game.board());
        self.record = corrected;
        self.rebuild();
        // The camera may still show (or misread) the old move: the points the correction
        // changed on the legal board are explained; any other difference is not.
        let board_after = Grid::from_board(self.game.board());
        self.refresh_acks(None);
        for p in board_before.differences(&board_after) {
            if board_after.get(p) != self.physical.get(p) {
                self.acks.entry(p.index()).or_insert(Ack { physical: self.physical.get(p), cause: AckCause::Correction(number) });
            }
        }
        let shown = |action: &RecordAction| match action {
            RecordAction::Place { point } | RecordAction::Void { point, .. } => point.human(),
            _ => "pass".to_owned(),
        };
        let (from, to) = (shown(&was), shown(&self.record[idx].action));
        let mut e = self
            .event(t, EventKind::Correction, Message::new(format!("The arbiter corrected move {number}: {} {to} (was {from}).", side.title()), format!("裁判更正第{number}手：{}{to}（原記為{from}）。", side.chinese())))
            .with_side(Some(side))
            .with_move(Some(number))
            .with_points(&point.into_iter().collect::<Vec<_>>());
        e.captured = e_captured(&self.record[idx].captured);
        e.confidence = 1.0;
        Ok(vec![e])
    }

    /// The arbiter's finding that the players hold the wrong colours, ruled by Art. 17.1.
    fn wrong_colours_ruled(&mut self, t: f64) -> Event {
        let number = self.move_number();
        let (en, zh) = self.rule_wrong_colours(number);
        let mut e = self.event(t, EventKind::WrongColours, Message::new(en, zh)).with_move(Some(number));
        e.status = Status::Confirmed;
        e.confidence = 1.0;
        e
    }

    /// Art. 17.1: up to and including move 10 the colours are corrected (the game restarts with
    /// the organiser's colours); after it the game stands and the record names who played
    /// which colour. Returns what to tell the arbiter.
    fn rule_wrong_colours(&mut self, number: u32) -> (String, String) {
        if number <= 10 {
            self.colours_corrected = true;
            (
                format!("Wrong colours found at move {number}: to be corrected (allowed up to and including move 10, Art. 17.1). Restart the game with the organiser's colours (new game)."),
                format!("第{number}手時發現拿錯黑白棋：允許改正（第10手之前含第10手，第17條1款），請按賽會原定的黑白重新開始對局。"),
            )
        } else {
            self.players_swapped = true;
            (
                format!("Wrong colours found at move {number}: after move 10 the game stands as played (Art. 17.1). The record names who played which colour; later pairings follow the organiser's colours."),
                format!("第{number}手時發現拿錯黑白棋：超過10手，不予改正（第17條1款）；棋譜按實際執子記錄，此後的編排以賽會原定為依據。"),
            )
        }
    }

    fn phase_name(&self) -> &'static str {
        match self.phase {
            Phase::Waiting => "waiting",
            Phase::Playing => "playing",
            Phase::Ended => "ended",
            Phase::Finished => "finished",
        }
    }

    fn forms(&self, result: &GameResult) -> ResultForms {
        ResultForms {
            exact: result.exact(),
            points: result.points(),
            customary: result.customary(),
            winner: result.winner,
            black_count: Some(result.black_count),
            komi_points: self.config.komi_points,
            warnings: self.penalties.warnings,
        }
    }

    fn publish_result(&mut self, t: f64, forms: ResultForms) -> Event {
        self.phase = Phase::Finished;
        self.result = Some(forms.clone());
        let mut e = self.event(t, EventKind::Result, Message::new(format!("Result: {} ({}).", forms.exact, forms.points), format!("結果：{}。", forms.customary)));
        e.side = forms.winner;
        e.move_number = Some(self.move_number());
        e.result = Some(forms);
        e
    }

    fn end_play(&mut self, t: f64, en: &str, zh: &str) -> Vec<Event> {
        self.phase = Phase::Ended;
        self.pending = None;
        let suggestion = suggest_dead(self.game.board());
        let mut e = self.event(t, EventKind::GameEnd, Message::new(format!("Play is over. {en} Mark the dead stones (a suggestion is attached) and count."), format!("終局。{zh}請確認死子（附建議）並計算勝負。")));
        e.move_number = Some(self.move_number());
        e.suggested_dead = suggestion.dead_stones.iter().map(|&p| PointRef::of(p)).collect();
        vec![e]
    }

    fn decide(&mut self, t: f64, id: u64, confirm: bool) -> Result<Vec<Event>, ArbiterError> {
        let idx = self.infractions.iter().position(|i| i.id == id).ok_or(ArbiterError::UnknownInfraction(id))?;
        if self.infractions[idx].status != Status::Suspected {
            return Err(ArbiterError::AlreadyDecided(id));
        }
        let inf = self.infractions[idx].clone();
        let mut events = Vec::new();
        let mut note_en = String::new();
        let mut note_zh = String::new();
        match (inf.kind, confirm) {
            (EventKind::DoubleMove, true) => {
                if let Some(entry) = inf.entry {
                    self.record[entry].struck = true;
                    self.rebuild();
                    self.refresh_acks(Some(AckCause::Infraction(id)));
                    note_en = " The second move is void: remove the stone.".into();
                    note_zh = "第二著無效，請取走該子。".into();
                }
            }
            (EventKind::DoubleMove, false) => {
                if let Some(entry) = inf.entry {
                    let side = self.record[entry].side.opponent();
                    self.record.insert(entry, RecordEntry { number: 0, side, action: RecordAction::Pass, t, captured: Vec::new(), struck: false });
                    for other in &mut self.infractions {
                        if let Some(e) = other.entry.as_mut() {
                            if *e >= entry {
                                *e += 1;
                            }
                        }
                    }
                    self.rebuild();
                    self.refresh_acks(Some(AckCause::Infraction(id)));
                    note_en = format!(" An unrecorded pass by {} is entered before the move.", side.name());
                    note_zh = format!("記錄{}方虛著一次。", side.chinese());
                }
            }
            (EventKind::Takeback, true) => {
                if let (Some(entry), Some(_), Some(from)) = (inf.entry, inf.replay_point, inf.original_point) {
                    // The takeback is void: the stone goes back to its first point.
                    self.record[entry].action = RecordAction::Place { point: from };
                    self.rebuild();
                    self.refresh_acks(Some(AckCause::Infraction(id)));
                    note_en = format!(" The stone goes back to {}.", from.human());
                    note_zh = format!("棋子放回{}。", from.human());
                }
            }
            (EventKind::WrongColours, true) => {
                let (en, zh) = self.rule_wrong_colours(self.move_number());
                note_en = format!(" {en}");
                note_zh = zh;
            }
            _ => {}
        }
        self.infractions[idx].status = if confirm { Status::Confirmed } else { Status::Dismissed };
        self.infractions[idx].event.status = self.infractions[idx].status;
        let verdict = if confirm { ("confirmed", "確認") } else { ("dismissed", "駁回") };
        let mut e = self.event(
            t,
            inf.kind,
            Message::new(format!("Arbiter {} infraction {id}: {}{note_en}", verdict.0, inf.event.message.en), format!("裁判{}第{id}號違規：{}{note_zh}", verdict.1, inf.event.message.zh)),
        );
        e.side = inf.side;
        e.points = inf.event.points.clone();
        e.move_number = inf.event.move_number;
        e.infraction = Some(id);
        e.status = self.infractions[idx].status;
        e.confidence = 1.0;
        e.ruling = inf.event.ruling.clone();
        e.restore = inf.event.restore.clone();
        events.push(e);
        if confirm && inf.kind.warns() {
            if let Some(side) = inf.side {
                events.extend(self.warn(t, side, id));
            }
        }
        Ok(events)
    }

    fn warn(&mut self, t: f64, side: Color, id: u64) -> Vec<Event> {
        self.penalties.warnings[side] += 1;
        let n = self.penalties.warnings[side];
        let (en, zh) = if n >= 2 {
            (format!("Second warning for {}: the game is lost (Art. 24.2).", side.name()), format!("{}方第二次警告，判負（第24條2款）。", side.chinese()))
        } else {
            (format!("Warning for {}: one stone is deducted at counting (Art. 24.1).", side.name()), format!("{}方警告一次，計算勝負時罰出一子（第24條1款）。", side.chinese()))
        };
        let mut e = self.event(t, EventKind::Warning, Message::new(en, zh)).with_side(Some(side)).with_move(Some(self.move_number()));
        e.infraction = Some(id);
        let mut events = vec![e];
        if n >= 2 && self.phase != Phase::Finished {
            let count = count_area(self.game.board(), &[]);
            let result = GameResult::from_count(&count, Komi { points: self.config.komi_points }, self.penalties);
            let forms = self.forms(&result);
            self.phase = Phase::Ended;
            events.push(self.publish_result(t, forms));
        }
        events
    }

    /// Everything the dashboard shows: both boards, their differences, the record, open
    /// infractions, warnings and the result.
    pub fn state(&self) -> Snapshot {
        let legal = Grid::from_board(self.game.board());
        let mut differences = Vec::new();
        for p in Point::all() {
            let (l, ph) = (legal.get(p), self.physical.get(p));
            if l == ph {
                continue;
            }
            let cause = match self.acks.get(&p.index()).map(|a| a.cause) {
                Some(AckCause::Infraction(id)) => {
                    let kind = self.infractions.iter().find(|i| i.id == id).map_or(EventKind::MovedStone, |i| i.kind);
                    DifferenceCause::Infraction { id, kind }
                }
                Some(AckCause::Correction(number)) => DifferenceCause::Correction { number },
                _ => DifferenceCause::PendingCapture,
            };
            differences.push(Difference { point: PointRef::of(p), legal: l.color(), physical: ph.color(), cause });
        }
        let view = |i: &Infraction| InfractionView { id: i.id, status: i.status, event: i.event.clone() };
        let mut captures = ByColor::<u32>::default();
        for e in self.record.iter().filter(|e| !e.struck) {
            captures[e.side] += e.captured.len() as u32;
        }
        Snapshot {
            table: self.config.table.clone(),
            game: self.config.game.clone(),
            phase: self.phase,
            legal: legal.rows(),
            physical: self.physical.rows(),
            differences,
            moves: self.record.clone(),
            to_move: self.game.to_move(),
            to_move_uncertain: self.to_move_uncertain,
            move_number: self.move_number(),
            open_infractions: self.infractions.iter().filter(|i| i.status == Status::Suspected).map(view).collect(),
            decided_infractions: self.infractions.iter().filter(|i| i.status != Status::Suspected).map(view).collect(),
            warnings: self.penalties.warnings,
            captures,
            dead: self.dead.iter().map(|&p| PointRef::of(p)).collect(),
            result: self.result.clone(),
            colours_corrected: self.colours_corrected,
            players_swapped: self.players_swapped,
        }
    }
}

/// Replays a record from its start position, renumbering the entries and refreshing their
/// captures; returns the game, the move-number offset of the last setup, and for every entry
/// whether it is a stone legally placed (an illegal one is replayed as a void move).
fn replay_record(start_board: &Board, start_to_move: Color, record: &mut [RecordEntry]) -> (Game, u32, Vec<bool>) {
    let mut game = Game::from_board(start_board.clone(), start_to_move);
    let mut offset = 0;
    let mut legal_places = vec![false; record.len()];
    for (e, legal) in record.iter_mut().zip(&mut legal_places) {
        if e.struck {
            continue;
        }
        match &e.action {
            RecordAction::Place { point } => match game.play(e.side, Move::Place(*point)) {
                Ok(o) => {
                    e.number = offset + o.move_number;
                    e.captured = o.captured;
                    *legal = true;
                }
                Err(illegal) => {
                    let o = game.void_move(&illegal);
                    e.number = offset + o.move_number;
                    e.captured.clear();
                }
            },
            RecordAction::Pass | RecordAction::Void { .. } => {
                e.number = offset + game.pass(e.side).move_number;
            }
            RecordAction::Setup { rows, to_move, missed } => {
                offset += game.move_number() + missed;
                e.number = offset;
                let board = Grid::<Stone>::from_rows(rows).map(|g| g.to_legal_board().0).unwrap_or_else(|_| empty_board());
                game = Game::from_board(board, *to_move);
            }
            RecordAction::Turn => game.set_to_move(e.side),
        }
    }
    (game, offset, legal_places)
}

fn e_captured(points: &[Point]) -> Vec<PointRef> {
    points.iter().map(|&p| PointRef::of(p)).collect()
}
