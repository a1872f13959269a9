//! The referee of one game: inputs (observations, arbiter actions) in, events out, with both
//! boards, the record, open infractions and warnings always available as a snapshot.
//!
//! This file owns the way in (observations, the stabiliser, the phase, the events' numbering);
//! the roles live in files of their own, each with the state it keeps: `start` (the first
//! stable board against the setup), `record` (explaining a change as moves, the record and its
//! corrections: `Record`), `infractions` (raising, acknowledging and deciding infractions,
//! warnings: `InfractionBook`, and the physical board with its acknowledged differences:
//! `PhysicalBoard`), `arbiter` (the arbiter's actions, the end of play and the result:
//! `Rulings`), `snapshot` (the view of the game), and `inputs` (what the referee is
//! configured and fed with). The words it says are one table, `crate::messages`.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use tengen_rules::{
    count_area, handicap_placements, suggest_dead, Board, ByColor, Color, Game, GameResult, Grid, IllegalReason, Komi,
    Move, MoveOutcome, Penalties, Point, Stone,
};

use crate::event::{Event, EventKind, Evidence, Message, PointRef, Restore, ResultForms, Sighting, Status};
use crate::explain::{self, Context, Finding, LastMove, Plan};
use crate::messages::{refs, resignation, MissedWhy, Outcome, PlayOver, Say};
use crate::observation::Observation;
use crate::stabilise::{Stabiliser, StabiliserConfig, StableBoard};

mod arbiter;
mod infractions;
mod inputs;
mod record;
mod snapshot;
mod start;

pub use inputs::{
    ArbiterAction, ArbiterError, Input, InputLineError, RefereeConfig, StartPosition, StartPositionError,
};
pub use snapshot::{Difference, DifferenceCause, InfractionView, Phase, RecordAction, RecordEntry, Snapshot};

use arbiter::Rulings;
use infractions::{InfractionBook, PhysicalBoard};
use record::Record;

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

/// The referee of one game: the way in (configuration, stabiliser, phase, event numbering and
/// time) and the state of each role, owned by the role's file.
#[derive(Debug, Clone)]
pub struct Referee {
    config: RefereeConfig,
    stabiliser: Stabiliser,
    phase: Phase,
    /// Number of the last event raised.
    seq: u64,
    /// Latest time seen: events never go back in time.
    last_t: f64,
    /// Since when the board has been hidden, and whether that was reported.
    occluded_since: Option<(f64, bool)>,
    record: Record,
    physical: PhysicalBoard,
    infractions: InfractionBook,
    rulings: Rulings,
}

fn empty_board() -> Board {
    Board::from_stones(&Grid::empty())
}

impl Referee {
    /// A referee for a new game.
    pub fn new(config: RefereeConfig) -> Self {
        // Every start waits for the first stable board: it is checked against the setup.
        let mut stabiliser = Stabiliser::new(config.stabiliser.clone(), Grid::empty());
        stabiliser.report_first();
        Referee {
            stabiliser,
            phase: Phase::Waiting,
            seq: 0,
            last_t: f64::NEG_INFINITY,
            occluded_since: None,
            record: Record::new(),
            physical: PhysicalBoard::new(),
            infractions: InfractionBook::default(),
            rulings: Rulings::default(),
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
        &self.record.game
    }

    /// The record, setups included.
    pub fn record(&self) -> &[RecordEntry] {
        &self.record.entries
    }

    /// The start position and who moved first from it (empty board and Black, or the board
    /// adopted at the start: handicap stones and White).
    pub fn start_position(&self) -> (Grid, Color) {
        (Grid::from_board(&self.record.start_board), self.record.start_to_move)
    }

    /// Current move number.
    pub fn move_number(&self) -> u32 {
        self.record.move_number()
    }

    fn time(&mut self, t: f64) -> f64 {
        // Time never goes backwards inside a game: a late frame is taken as happening now.
        let t = if t.is_finite() {
            t
        } else if self.last_t.is_finite() {
            self.last_t
        } else {
            0.0
        };
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
        vec![self.event(t, EventKind::BoardMoved, Say::BoardMoved { shift_cells }.message())]
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
                let e = self.event(t, EventKind::Occluded, Say::Occluded { secs }.message());
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
                    .event(t, EventKind::UnclearPoint, Say::UnclearPoint { point: p }.message())
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
        let evidence = self.physical.see(&stable);
        match self.phase {
            Phase::Waiting => self.adopt_start(&stable, evidence),
            Phase::Playing => self.explain_change(&stable, evidence),
            // After play ends, lifting dead stones and filling territory are not moves.
            Phase::Ended | Phase::Finished => Vec::new(),
        }
    }
}
