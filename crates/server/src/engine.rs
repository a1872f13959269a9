//! The seams between the service and the pure cores: a frame analyzer (vision) turns an encoded
//! image into an [`Observation`]; a table referee turns observations and arbiter actions into
//! events and a [`GameView`]; a clock gives the time. The service owns I/O around them; the real
//! vision and referee crates plug in through `adapters`, tests plug in scripted ones.

use std::sync::Arc;

use tengen_referee as referee;
use tengen_sgf::{GameInfo, GameRecord};

use crate::error::Error;
use crate::json::{GameView, RefereeEvent, RefereeRequest};
use crate::model::Observation;
use crate::store::GameRow;
pub use tengen_vision::CancelFlag;

/// Board corners in pixels: top-left, top-right, bottom-right, bottom-left intersections.
pub type Corners = [[f64; 2]; 4];

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The bytes are not a decodable JPEG or PNG.
    #[error("cannot decode the image: {0}")]
    Decode(String),
    /// The board was not found in the image.
    #[error("board not found: {0}")]
    BoardNotFound(String),
    /// Anything else the vision reports.
    #[error("vision failed: {0}")]
    Other(String),
}

/// Reads boards from camera frames, for one table (it may keep tracking state between frames).
pub trait FrameAnalyzer: Send {
    /// Reads one encoded frame (JPEG or PNG).
    fn analyze(&mut self, encoded: &[u8]) -> Result<Observation, AnalyzeError>;
    /// Reads one frame, giving up a board search once `cancel` is raised (the service raises it
    /// at its search deadline, so a frame cannot hold a search slot for long however slow the
    /// machine). Analyzers without long work ignore the flag.
    fn analyze_cancellable(&mut self, encoded: &[u8], cancel: &CancelFlag) -> Result<Observation, AnalyzeError> {
        let _ = cancel;
        self.analyze(encoded)
    }
    /// Sets (or clears) a fixed calibration: where the board's corners lie in the image.
    fn set_calibration(&mut self, corners: Option<Corners>);
    /// Whether the next frame will need a full board search (nothing tracked or calibrated
    /// yet): the service runs few of those at once, so a cold start of many tables does not
    /// starve the tables already tracked.
    fn needs_search(&self) -> bool {
        false
    }
}

/// Makes one analyzer per table.
pub trait AnalyzerFactory: Send + Sync {
    /// A fresh analyzer for a table, with its calibration if known.
    fn create(&self, table: &str, calibration: Option<Corners>) -> Box<dyn FrameAnalyzer>;
}

/// The referee of one game: a pure state machine fed with observations and arbiter actions with
/// their times. It must be deterministic: feeding the same inputs again gives the same state,
/// which is how the service resumes a game after a restart (it replays its log). It speaks the
/// referee's types; the service turns its events into stored ones ([`apply_request`],
/// `RefereeEvent::of_referee`) and its snapshot into the dashboard's view ([`game_view`]).
pub trait TableReferee: Send {
    /// Feeds one observation seen at `at_ms` (milliseconds since the Unix epoch).
    fn observe(&mut self, at_ms: i64, observation: &Observation) -> Vec<referee::Event>;
    /// Applies one of the referee's arbiter actions (read from the wire once, in `json.rs`); on
    /// error nothing changed (a referee refusing an action says which kind of refusal it is:
    /// not found, conflict, invalid action).
    fn arbiter(&mut self, at_ms: i64, action: &referee::ArbiterAction) -> Result<Vec<referee::Event>, Error>;
    /// Takes a result the arbiter set by hand: it stands over the counted one in the view and
    /// the record.
    fn set_result(&mut self, result: &str);
    /// The referee's view of the game now.
    fn snapshot(&self) -> referee::Snapshot;
    /// The result the arbiter set by hand, if any: it stands over the counted one.
    fn hand_result(&self) -> Option<&str>;
    /// The game record so far, with `info`'s players, date and name.
    fn record(&self, info: &GameInfo) -> GameRecord;
}

/// Applies what an arbiter's action asks of a table's referee (live, or replaying the log): the
/// events as the log stores them. A result set by hand is the service's event (Art. 9); the
/// referee only keeps the result.
pub fn apply_request(
    referee: &mut dyn TableReferee,
    at_ms: i64,
    request: &RefereeRequest,
) -> Result<Vec<RefereeEvent>, Error> {
    match request {
        RefereeRequest::Act(action) => {
            Ok(referee.arbiter(at_ms, action)?.iter().map(RefereeEvent::of_referee).collect())
        }
        RefereeRequest::SetResult(result) => {
            referee.set_result(result);
            Ok(vec![RefereeEvent::result_set(result)])
        }
        RefereeRequest::Nothing => Ok(Vec::new()),
    }
}

/// The game as the dashboard draws it: the referee's snapshot at the wire edge, with a result
/// set by hand standing over the counted one.
pub fn game_view(referee: &dyn TableReferee) -> GameView {
    GameView::of_referee(&referee.snapshot(), referee.hand_result())
}

/// Makes one referee per game.
pub trait RefereeFactory: Send + Sync {
    /// A referee for a new game as the store holds it: its table, id, komi (points, e.g. 7.5)
    /// and setup (what it starts from).
    fn new_game(&self, game: &GameRow) -> Box<dyn TableReferee>;
}

/// The cores the service runs: how frames are read and how games are refereed.
#[derive(Clone)]
pub struct Engines {
    /// Vision.
    pub analyzers: Arc<dyn AnalyzerFactory>,
    /// Referee.
    pub referees: Arc<dyn RefereeFactory>,
    /// Time.
    pub clock: Arc<dyn Clock>,
}

/// Wall-clock time, injected so tests can control it.
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}
