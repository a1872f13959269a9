//! Every type the HTTP API and the SSE stream send or receive, and nothing else: the wire edge
//! (as moonfire-nvr's `json.rs`). The rest of the service speaks the referee's and the rules'
//! types (`EventKind`, `Status`, `Phase`, `Color`, the referee's `Event`); they are turned into
//! these shapes here, once. The event schema is documented in `docs/events.md` and `API.md`.

use serde::{Deserialize, Serialize};
use tengen_referee as referee;
use tengen_referee::{EventKind, Phase, Status};
use tengen_rules::{ByColor, Color, Point, PointState};

use crate::engine::Corners;
use crate::error::Error;
use crate::model::{board_char, BoardString, GamePairing, StartPosition};
use crate::store::GameRow;

/// One move of the legal record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordMove {
    /// 1-based move number.
    pub number: u32,
    /// Who played it.
    pub colour: Color,
    /// The point, on the wire in SGF coordinates ("pd"); `None` (`null`) for a pass.
    #[serde(default, with = "tengen_rules::point_text::option")]
    pub point: Option<Point>,
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

/// What an event is about: one of the referee's kinds, or one the service raises itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Kind {
    /// The referee's own kind (`move`, `missed_capture`, …).
    Referee(EventKind),
    /// The service's own.
    Service(ServiceKind),
}

/// The kinds of event the service raises itself (the referee has no part in them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceKind {
    /// The arbiter acted (the action is the event's detail).
    Arbiter,
    /// No frame from the camera for longer than the timeout.
    CameraLost,
    /// The camera sends frames again.
    CameraBack,
    /// A new game started at the table.
    GameStarted,
}

impl Kind {
    /// The kind's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Self::Referee(kind) => kind.name(),
            Self::Service(ServiceKind::Arbiter) => "arbiter",
            Self::Service(ServiceKind::CameraLost) => "camera_lost",
            Self::Service(ServiceKind::CameraBack) => "camera_back",
            Self::Service(ServiceKind::GameStarted) => "game_started",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
    }
}

/// What an event carries beyond its common fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Detail {
    /// The referee's own event, verbatim (its versioned schema, with the messages in both
    /// languages and the ruling).
    Referee(Box<referee::Event>),
    /// The arbiter's action (`arbiter` events).
    Action(ArbiterAction),
    /// A new game's komi and start (`game_started`).
    GameStarted {
        /// Komi in points.
        komi: f64,
        /// What the game starts from.
        start: StartPosition,
    },
    /// A result the arbiter set by hand (`result`).
    ResultSet {
        /// The result text.
        result: String,
        /// Who set it: `arbiter`.
        by: String,
    },
}

/// Something the referee (or the service) reports. Stored in the log and streamed to clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "EventForm")]
pub struct RefereeEvent {
    /// What it is about.
    pub kind: Kind,
    /// Info for ordinary events; suspected, confirmed or dismissed for infractions.
    pub status: Status,
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
    /// What else it carries.
    #[serde(default)]
    pub detail: Option<Detail>,
}

/// An event as the log holds it, of any version: events written before the status had a field
/// of its own carry it as a `_confirmed` / `_dismissed` suffix of the kind (the log is
/// append-only, so they are read as they are, never rewritten).
#[derive(Deserialize)]
struct EventForm {
    kind: String,
    #[serde(default)]
    status: Option<Status>,
    #[serde(default)]
    article: Option<String>,
    severity: Severity,
    #[serde(default)]
    alert_id: Option<u64>,
    #[serde(default)]
    move_number: Option<u32>,
    summary: String,
    #[serde(default)]
    detail: Option<Detail>,
}

impl TryFrom<EventForm> for RefereeEvent {
    type Error = String;

    fn try_from(form: EventForm) -> Result<Self, String> {
        let (name, status) = match form.status {
            Some(status) => (form.kind.as_str(), status),
            None => [("_confirmed", Status::Confirmed), ("_dismissed", Status::Dismissed)]
                .into_iter()
                .find_map(|(suffix, status)| form.kind.strip_suffix(suffix).map(|base| (base, status)))
                .unwrap_or((form.kind.as_str(), Status::Info)),
        };
        let kind = Kind::from_name(name).ok_or_else(|| format!("unknown event kind {:?}", form.kind))?;
        Ok(Self {
            kind,
            status,
            article: form.article,
            severity: form.severity,
            alert_id: form.alert_id,
            move_number: form.move_number,
            summary: form.summary,
            detail: form.detail,
        })
    }
}

impl RefereeEvent {
    /// An event of the service's own, with nothing to decide.
    pub fn service(kind: ServiceKind, severity: Severity, summary: String, detail: Option<Detail>) -> Self {
        Self {
            kind: Kind::Service(kind),
            status: Status::Info,
            article: None,
            severity,
            alert_id: None,
            move_number: None,
            summary,
            detail,
        }
    }

    /// The referee's event as the log and the clients get it (the event itself is its detail).
    pub fn of_referee(event: &referee::Event) -> Self {
        let severity = match (event.status, event.kind) {
            (Status::Suspected, _) => Severity::Alert,
            (_, EventKind::Occluded | EventKind::BoardMoved | EventKind::UnclearPoint | EventKind::Resync) => {
                Severity::Notice
            }
            _ => Severity::Info,
        };
        Self {
            kind: Kind::Referee(event.kind),
            status: event.status,
            article: event.article.as_ref().map(|a| format!("Art. {a}")),
            severity,
            alert_id: event.infraction,
            move_number: event.move_number,
            summary: event.message.en.clone(),
            detail: Some(Detail::Referee(Box::new(event.clone()))),
        }
    }

    /// The event of a result the arbiter set by hand (Art. 9).
    pub fn result_set(result: &str) -> Self {
        Self {
            kind: Kind::Referee(EventKind::Result),
            status: Status::Info,
            article: Some("Art. 9".into()),
            severity: Severity::Info,
            alert_id: None,
            move_number: None,
            summary: format!("Result set by the arbiter: {result}"),
            detail: Some(Detail::ResultSet { result: result.to_owned(), by: "arbiter".into() }),
        }
    }

    /// The points an event of the referee concerns (none for the service's own).
    pub fn points(&self) -> &[referee::PointRef] {
        match &self.detail {
            Some(Detail::Referee(event)) => &event.points,
            _ => &[],
        }
    }
}

/// An open (unanswered) suspected infraction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAlert {
    /// Id to answer with confirm or dismiss.
    pub alert_id: u64,
    /// What is suspected, e.g. `missed_capture`.
    pub kind: EventKind,
    /// The article that applies.
    pub article: Option<String>,
    /// One line for people.
    pub summary: String,
    /// The points involved, on the wire in SGF coordinates ("pd").
    #[serde(with = "tengen_rules::point_text::vec")]
    pub points: Vec<Point>,
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
    /// Points marked dead at the end, on the wire in SGF coordinates ("pd").
    #[serde(with = "tengen_rules::point_text::vec")]
    pub dead: Vec<Point>,
    /// Where the game stands: `waiting`, `playing`, `ended` or `finished`.
    pub phase: Phase,
    /// The result text once known, e.g. "B+3¾ (B+7.5)".
    pub result: Option<String>,
    /// The result in words in each language (the exact form in English, the customary form in
    /// Chinese, each with the record's form), once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_text: Option<referee::Message>,
    /// Wrong colours found after move 10 (Art. 17.1): the game stands, and the record names the
    /// organiser's Black as White and the organiser's White as Black.
    #[serde(default)]
    pub players_swapped: bool,
}

impl GameView {
    /// The referee's snapshot as the dashboard draws it, with a result the arbiter set by hand
    /// standing over the counted one.
    pub fn of_referee(snapshot: &referee::Snapshot, result_set: Option<&str>) -> Self {
        let moves = snapshot
            .moves
            .iter()
            .filter(|entry| !entry.struck)
            .filter_map(|entry| {
                let point = match &entry.action {
                    referee::RecordAction::Place { point } => Some(*point),
                    referee::RecordAction::Pass | referee::RecordAction::Void { .. } => None,
                    referee::RecordAction::Setup { .. } | referee::RecordAction::Turn => return None,
                };
                Some(RecordMove { number: entry.number, colour: entry.side, point })
            })
            .collect();
        let open_alerts = snapshot
            .open_infractions
            .iter()
            .map(|i| OpenAlert {
                alert_id: i.id,
                kind: i.event.kind,
                article: i.event.article.as_ref().map(|a| format!("Art. {a}")),
                summary: i.event.message.en.clone(),
                points: i.event.points.iter().map(|p| p.point).collect(),
                // The referee's time is the service's clock in seconds.
                #[allow(clippy::cast_possible_truncation)]
                raised_ms: Some((i.event.t * 1000.0).round() as i64),
            })
            .collect();
        // The referee's rows (board text, `.XO`, top first) in the service's alphabet (`.BW`).
        let board = |rows: &[String]| -> BoardString {
            rows.iter().flat_map(|r| r.chars()).map(|c| PointState::from_char(c).map_or('?', board_char)).collect()
        };
        Self {
            legal: board(&snapshot.legal),
            physical: board(&snapshot.physical),
            moves,
            to_move: snapshot.to_move,
            open_alerts,
            warnings: snapshot.warnings,
            captures: snapshot.captures,
            dead: snapshot.dead.iter().map(|p| p.point).collect(),
            phase: snapshot.phase,
            players_swapped: snapshot.players_swapped,
            result_text: match result_set {
                Some(re) => Some(referee::result_message(re)),
                None => snapshot.result.as_ref().map(referee::ResultForms::message),
            },
            result: result_set
                .map(str::to_owned)
                .or_else(|| snapshot.result.as_ref().map(|r| format!("{} ({}, {})", r.points, r.exact, r.customary))),
        }
    }
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

/// What an arbiter's action asks of the table's referee, read from the wire once: its points
/// are parsed here, in either notation, and nowhere else; the referee gets its own action with
/// typed points.
#[derive(Debug, Clone, PartialEq)]
pub enum RefereeRequest {
    /// One of the referee's actions.
    Act(referee::ArbiterAction),
    /// A result set by hand (it stands over the counted one).
    SetResult(String),
    /// Nothing for the referee: names alone (the service keeps them) or a new game (the
    /// service starts it with a referee of its own).
    Nothing,
}

impl TryFrom<&ArbiterAction> for RefereeRequest {
    type Error = Error;

    /// The referee's part of a wire action; `invalid_action` for a text that is not a point.
    fn try_from(action: &ArbiterAction) -> Result<Self, Error> {
        use referee::ArbiterAction as A;
        let point = |text: &String| {
            Point::parse_on_board(text)
                .map_err(|_| Error::invalid_action(format!("{text:?} is not a point (use \"pd\" or \"Q16\")")))
        };
        Ok(Self::Act(match action {
            ArbiterAction::Confirm { alert_id } => A::Confirm { infraction: *alert_id },
            ArbiterAction::Dismiss { alert_id } => A::Dismiss { infraction: *alert_id },
            ArbiterAction::Pass { colour } => A::Pass { side: *colour },
            ArbiterAction::EndGame { resigned } => A::EndGame { resigned: *resigned },
            ArbiterAction::MarkDead { points } => {
                A::MarkDead { points: points.iter().map(point).collect::<Result<_, _>>()? }
            }
            ArbiterAction::Count => A::Count,
            ArbiterAction::AdoptPhysical => A::AdoptPhysical,
            ArbiterAction::SetToMove { colour } => A::SetToMove { side: *colour },
            ArbiterAction::CorrectRecord { move_number, point: text } => {
                A::CorrectMove { number: *move_number, point: text.as_ref().map(point).transpose()? }
            }
            ArbiterAction::SetColours { swapped: true, .. } => A::WrongColours,
            ArbiterAction::SetColours { swapped: false, .. } | ArbiterAction::NewGame { .. } => {
                return Ok(Self::Nothing)
            }
            ArbiterAction::SetResult { result } => return Ok(Self::SetResult(result.clone())),
        }))
    }
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
    /// In a hall: why the event's evidence images could not be stored in the hall's object
    /// store (the event is logged without them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_error: Option<String>,
    /// The event itself.
    #[serde(flatten)]
    pub event: RefereeEvent,
}

/// The camera's state as the dashboard shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CameraStatus {
    /// No frame yet.
    Waiting,
    /// Frames are arriving.
    Live,
    /// No frame for longer than the timeout.
    Lost,
}

/// A table at a glance (the hall view and the SSE `table` messages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableSummary {
    /// Table id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Current game id.
    pub game: i64,
    /// Moves in the record.
    pub move_number: usize,
    /// Whose turn.
    pub to_move: Color,
    /// Legal board string.
    pub legal: String,
    /// Physical board string (last stable).
    pub physical: String,
    /// Unanswered alerts.
    pub open_alerts: usize,
    /// The newest unanswered alert: what, under which article, since when.
    pub newest_alert: Option<OpenAlert>,
    /// Black player's name (and rank), when known.
    pub black: Option<String>,
    /// White player's name (and rank), when known.
    pub white: Option<String>,
    /// Warnings black, white.
    pub warnings: ByColor<u32>,
    /// Where the game stands.
    pub phase: Phase,
    /// Result, when known.
    pub result: Option<String>,
    /// The result in words in each language, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_text: Option<referee::Message>,
    /// Camera state.
    pub camera: CameraStatus,
    /// Where frames come from (`post`, `mjpeg`, `snapshot`, `folder`).
    pub source: String,
    /// Frames received so far.
    pub frames: u64,
    /// Frames dropped under overload.
    pub dropped: u64,
    /// Latest vision error.
    pub last_error: Option<String>,
    /// The camera's latest failure, until it delivers a good frame.
    pub camera_error: Option<String>,
    /// Cluster mode: the node of the hall analysing the table (none: no node yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// `GET /api/tables/{table}`: a table in full (in cluster mode also what a table's node tells
/// the other nodes of it, on `tengen.tables.<table>`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableDetail {
    /// The table at a glance.
    #[serde(flatten)]
    pub summary: TableSummary,
    /// The current game.
    pub game_info: GameRow,
    /// The referee's view of it.
    pub view: GameView,
    /// The calibration in force.
    pub calibration: Option<Corners>,
    /// The latest frame's reading (physical board, this frame).
    pub last_reading: Option<String>,
    /// Median frame-to-event latency of the recent frames, ms.
    pub latency_p50_ms: Option<f64>,
    /// 99th percentile of the same, ms.
    pub latency_p99_ms: Option<f64>,
}

/// The record of a table's current game, as a table's node answers another node (cluster mode).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableRecord {
    /// The game's id.
    pub game: i64,
    /// Its SGF.
    pub sgf: String,
}

/// `GET /api/games/{game}`.
#[derive(Debug, Serialize)]
pub struct GameDetail {
    /// The game.
    pub game: GameRow,
    /// Whether it is its table's current game.
    pub live: bool,
    /// The referee's view, for the current game.
    pub view: Option<GameView>,
}

/// `GET /api/events`: one page of events.
#[derive(Debug, Serialize)]
pub struct EventsPage {
    /// Events, oldest first.
    pub events: Vec<StoredEvent>,
    /// The cursor of the next page (`after=next`).
    pub next: i64,
    /// Whether the page is full (there may be more).
    pub more: bool,
}

/// `GET /api/events` query.
#[derive(Debug, Deserialize)]
pub struct EventsQuery {
    /// Events with a greater id.
    #[serde(default)]
    pub after: Option<i64>,
    /// Of this table only.
    #[serde(default)]
    pub table: Option<String>,
    /// Of this game only.
    #[serde(default)]
    pub game: Option<i64>,
    /// At most this many.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `GET /api/stream` query.
#[derive(Debug, Deserialize)]
pub struct StreamQuery {
    /// Of this table only.
    #[serde(default)]
    pub table: Option<String>,
    /// Resume after this event id (as the `Last-Event-ID` header).
    #[serde(default)]
    pub after: Option<String>,
}

/// `POST /api/tables/{table}/arbiter`: what the action raised.
#[derive(Debug, Serialize)]
pub struct ArbiterReply {
    /// The events, as stored.
    pub events: Vec<StoredEvent>,
}

/// `POST /api/tables/{table}/frames`: the frame was taken.
#[derive(Debug, Serialize)]
pub struct FrameAccepted {
    /// Always true.
    pub accepted: bool,
    /// The frame's width in pixels.
    pub width: u32,
    /// Its height.
    pub height: u32,
    /// Frames of this table replaced before they were read, so far.
    pub dropped_total: u64,
}

/// `GET`/`PUT /api/tables/{table}/calibration`.
#[derive(Debug, Serialize)]
pub struct Calibration {
    /// Table id.
    pub table: String,
    /// The corners in force, `null` when none.
    pub corners: Option<Corners>,
}

/// `PUT /api/tables/{table}/calibration` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationBody {
    /// Absent: a mistake (refused). `null`: clear the calibration. Four corners: set it.
    #[serde(default, deserialize_with = "present")]
    pub corners: Option<Option<Corners>>,
}

/// Tells a `null` field (`Some(None)`) from a missing one (`None`, by `default`).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// `GET /api/auth`: the token's role.
#[derive(Debug, Serialize)]
pub struct Role {
    /// `arbiter`.
    pub role: &'static str,
}

/// `GET /healthz`.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Health {
    /// The service and its store answer.
    Ok {
        /// Tables served.
        tables: usize,
        /// The newest event's id.
        last_event_id: i64,
        /// Seconds since the start.
        uptime_secs: u64,
        /// This node's part of the hall (cluster mode).
        #[serde(skip_serializing_if = "Option::is_none")]
        cluster: Option<ClusterHealth>,
    },
    /// The store does not answer.
    Error {
        /// What failed: `store`.
        error: &'static str,
        /// How.
        message: String,
    },
}

/// A node's part of the hall, in `/healthz` (cluster mode).
#[derive(Debug, Serialize)]
pub struct ClusterHealth {
    /// The node's name.
    pub node: String,
    /// The NATS connection: `connected`, `pending` (reconnecting) or `disconnected`.
    pub nats: String,
    /// The tables whose lease it holds.
    pub owned_tables: Vec<String>,
    /// Lease renewals so far.
    pub lease_renewals: u64,
    /// Tables it took (at start, or from a node that stopped).
    pub takeovers: u64,
    /// Live nodes in the hall, this one included, at the last count.
    pub nodes: usize,
    /// Times the NATS connection was lost.
    pub nats_outages: u64,
    /// Appends kept in memory while the hall's log is unreachable.
    pub buffered_records: u64,
    /// Their size in bytes.
    pub buffered_bytes: u64,
    /// The most kept before frames for the tables waiting are refused (`503 log_buffer_full`).
    pub buffer_limit_bytes: u64,
    /// Kept appends the hall's log refused for good (another node wrote first), each logged.
    pub records_refused: u64,
    /// Leases it found held by another node at renewal.
    pub leases_lost: u64,
    /// Records it appended to the hall's log.
    pub log_appends: u64,
    /// Evidence images it put in the hall's object store.
    pub evidence_images_stored: u64,
    /// Evidence images it could not put there (the events were logged without them).
    pub evidence_images_lost: u64,
}

/// Every error's body: `{"error": code, "message": text}`.
#[derive(Debug, Serialize)]
pub struct ErrorBody {
    /// Machine code.
    pub error: &'static str,
    /// What is wrong, for people.
    pub message: String,
}

/// `GET /api/tables/{table}/phone`: the phone camera's link.
#[derive(Debug, Serialize)]
pub struct PhoneLink {
    /// The page's address, with the table's token.
    pub url: String,
    /// Its QR code, SVG.
    pub svg: String,
    /// Whether the link is HTTPS (phones need it for the camera).
    pub secure: bool,
}

/// `GET /api/tables/{table}/phone` query.
#[derive(Debug, Deserialize)]
pub struct LinkQuery {
    /// Where phones reach the service, e.g. `https://192.168.1.10:8443`; by default the host
    /// the dashboard was opened with, on the service's HTTPS port.
    #[serde(default)]
    pub origin: Option<String>,
}

/// `POST /api/rounds` query.
#[derive(Debug, Deserialize)]
pub struct ImportQuery {
    /// The round to take from an OpenGotha file (default: its last round with games), or the
    /// round number of a CSV (default 1).
    #[serde(default)]
    pub round: Option<u32>,
    /// The event's name for a CSV (an OpenGotha file names its own).
    #[serde(default)]
    pub event: Option<String>,
}

/// `POST /api/rounds`: the round imported and the games it started.
#[derive(Debug, Serialize)]
pub struct RoundImported {
    /// The round, from 1.
    pub round: u32,
    /// The event, when named.
    pub event: Option<String>,
    /// A game a table.
    pub games: Vec<RoundGame>,
}

/// A game started by a round's import.
#[derive(Debug, Serialize)]
pub struct RoundGame {
    /// Table id.
    pub table: String,
    /// Game id.
    pub game: Option<i64>,
}

/// `GET /api/rounds`.
#[derive(Debug, Serialize)]
pub struct Rounds {
    /// The rounds imported, in order.
    pub rounds: Vec<RoundInfo>,
}

/// One imported round.
#[derive(Debug, Serialize)]
pub struct RoundInfo {
    /// The round, from 1.
    pub round: u32,
    /// The event, when named.
    pub event: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arbiter_actions_parse_from_tagged_json() {
        let a: ArbiterAction = serde_json::from_str(r#"{"action":"confirm","alert_id":3}"#).expect("valid json");
        assert_eq!(a, ArbiterAction::Confirm { alert_id: 3 });
        assert!(serde_json::from_str::<ArbiterAction>(r#"{"action":"explode"}"#).is_err());
        assert!(serde_json::from_str::<ArbiterAction>(r#"{"action":"confirm"}"#).is_err());
    }

    #[test]
    fn a_wire_action_asks_the_referee_with_its_points_read_once_in_either_notation() {
        use referee::ArbiterAction as A;
        let q16 = Point::new(15, 3);
        let read = |json: &str| {
            let action: ArbiterAction = serde_json::from_str(json).expect("wire json");
            RefereeRequest::try_from(&action)
        };
        let dead = read(r#"{"action":"mark_dead","points":["Q16","pd"]}"#).expect("points");
        assert_eq!(dead, RefereeRequest::Act(A::MarkDead { points: vec![q16, q16] }));
        let corrected = read(r#"{"action":"correct_record","move_number":2,"point":"q16"}"#).expect("point");
        assert_eq!(corrected, RefereeRequest::Act(A::CorrectMove { number: 2, point: Some(q16) }));
        let to_pass = read(r#"{"action":"correct_record","move_number":2,"point":null}"#).expect("pass");
        assert_eq!(to_pass, RefereeRequest::Act(A::CorrectMove { number: 2, point: None }));
        let bad = read(r#"{"action":"mark_dead","points":["pd","Z99"]}"#).expect_err("off the board");
        assert_eq!((bad.code(), bad.to_string().contains("Z99")), ("invalid_action", true), "{bad}");
        assert!(read(r#"{"action":"correct_record","move_number":2,"point":"tt"}"#).is_err(), "a pass is no point");
        assert_eq!(
            read(r#"{"action":"confirm","alert_id":3}"#).ok(),
            Some(RefereeRequest::Act(A::Confirm { infraction: 3 }))
        );
        assert_eq!(read(r#"{"action":"set_colours","swapped":false}"#).ok(), Some(RefereeRequest::Nothing));
        assert_eq!(read(r#"{"action":"set_colours","swapped":true}"#).ok(), Some(RefereeRequest::Act(A::WrongColours)));
        assert_eq!(
            read(r#"{"action":"set_result","result":"W+R"}"#).ok(),
            Some(RefereeRequest::SetResult("W+R".into()))
        );
        assert_eq!(read(r#"{"action":"new_game"}"#).ok(), Some(RefereeRequest::Nothing));
    }

    #[test]
    fn the_view_of_a_referee_is_in_the_service_alphabet_and_a_result_set_by_hand_stands() {
        let mut referee = referee::Referee::new(referee::RefereeConfig::default());
        // An empty board, a hand over it, then a black stone on Q16, as a camera shows them.
        let empty = vec![".".repeat(19); 19];
        let mut hand = empty.clone();
        hand[9] = "?".repeat(19);
        let mut stone = empty.clone();
        stone[3].replace_range(15..16, "X");
        let frames = [&empty; 5].into_iter().map(|r| (r, false)).chain([(&hand, true)]).chain([(&stone, false); 5]);
        for (k, (rows, hand_in_view)) in frames.enumerate() {
            let t = 0.5 * f64::from(u8::try_from(k).expect("few frames"));
            referee.observe(&referee::Observation::from_rows(t, rows, hand_in_view).expect("rows"));
        }
        let counted = GameView::of_referee(&referee.state(), None);
        assert_eq!(counted.physical.len(), tengen_rules::BOARD_POINTS);
        assert_eq!(counted.physical.chars().nth(3 * 19 + 15), Some('B'), "{}", counted.physical);
        assert_eq!(counted.physical.chars().filter(|&c| c == '.').count(), tengen_rules::BOARD_POINTS - 1);
        assert_eq!((counted.result, counted.result_text), (None, None));
        let set = GameView::of_referee(&referee.state(), Some("W+R"));
        assert_eq!(set.result.as_deref(), Some("W+R"));
        assert!(set.result_text.is_some());
        let event = RefereeEvent::result_set("W+R");
        // A move of the record goes on the wire in SGF, as ever, and reads back the same.
        let q16 = RecordMove { number: 1, colour: Color::Black, point: Some(Point::new(15, 3)) };
        let wire = serde_json::to_string(&[q16.clone(), RecordMove { point: None, ..q16.clone() }]).expect("json");
        assert_eq!(wire, r#"[{"number":1,"colour":"black","point":"pd"},{"number":1,"colour":"black","point":null}]"#);
        assert_eq!(serde_json::from_str::<Vec<RecordMove>>(&wire).ok().map(|m| m[0].clone()), Some(q16));
        assert_eq!(
            (event.kind, event.summary.as_str()),
            (Kind::Referee(EventKind::Result), "Result set by the arbiter: W+R")
        );
    }

    #[test]
    fn an_event_of_the_log_before_the_status_field_reads_with_its_status() {
        let old = r#"{"kind":"missed_capture_confirmed","severity":"info","alert_id":3,"summary":"s"}"#;
        let event: RefereeEvent = serde_json::from_str(old).expect("old form");
        assert_eq!((event.kind, event.status), (Kind::Referee(EventKind::MissedCapture), Status::Confirmed));
        let plain: RefereeEvent =
            serde_json::from_str(r#"{"kind":"camera_lost","severity":"notice","summary":"s","detail":null}"#)
                .expect("service kind");
        assert_eq!(
            (plain.kind, plain.status, plain.detail),
            (Kind::Service(ServiceKind::CameraLost), Status::Info, None)
        );
        // The new form round-trips, kind and status apart.
        let json = serde_json::to_string(&event).expect("json");
        assert!(json.contains(r#""kind":"missed_capture","status":"confirmed""#), "{json}");
        assert_eq!(serde_json::from_str::<RefereeEvent>(&json).ok(), Some(event));
        assert!(serde_json::from_str::<RefereeEvent>(r#"{"kind":"explode","severity":"info","summary":"s"}"#).is_err());
    }
}
