//! Tengen's referee: from per-frame board readings to moves, captures and infractions of the
//! 2002 Chinese rules, as versioned events.
//!
//! Pure: no clocks, files or threads. Time arrives as timestamps on the inputs, so the same
//! inputs always give the same events and state ([`Referee::replay`]); the server rebuilds a
//! table after a restart by replaying its append-only log of [`Input`]s.
//!
//! The referee keeps two boards (`docs/design.md`, "Two boards, always"): the *physical* board the
//! camera saw when it was last stable, and the *legal* game state of the rules core. Every
//! stable change is explained as moves, captures (pending while the stones are being lifted)
//! or a suspected infraction naming its article; the arbiter confirms or dismisses.
//!
//! ```
//! use tengen_referee::{Observation, Referee, RefereeConfig};
//! let mut referee = Referee::new(RefereeConfig::default());
//! let empty: Vec<String> = (0..19).map(|_| ".".repeat(19)).collect();
//! let mut with_move = empty.clone();
//! with_move[3].replace_range(15..16, "X"); // Q16
//! let mut events = Vec::new();
//! for (k, rows) in [&empty, &empty, &empty, &empty, &with_move, &with_move, &with_move, &with_move].iter().enumerate() {
//!     let obs = Observation::from_rows(k as f64, rows, false).expect("19 rows of 19");
//!     events.extend(referee.observe(&obs));
//! }
//! let moves: Vec<_> = events.iter().filter(|e| e.kind.name() == "move").collect();
//! assert_eq!(moves.len(), 1);
//! assert_eq!(moves[0].points[0].point.human(), "Q16");
//! ```

mod event;
mod explain;
mod hans;
mod messages;
mod observation;
mod record;
mod referee;
mod stabilise;

pub use event::{
    Event, EventKind, Evidence, Message, PointRef, Restore, ResultForms, Sighting, Status, EVENT_SCHEMA_VERSION,
};
pub use messages::result_message;
pub use observation::{confidence_in_tenths, Observation, ObservationError, PointObservation, ReadingLine};
pub use record::comment_line;
pub use referee::{
    ArbiterAction, ArbiterError, Difference, DifferenceCause, InfractionView, Input, InputLineError, Phase,
    RecordAction, RecordEntry, Referee, RefereeConfig, Snapshot, StartPosition, StartPositionError,
};
pub use stabilise::{Stabiliser, StabiliserConfig, StableBoard};
