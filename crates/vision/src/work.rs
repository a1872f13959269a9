//! The work one frame may cost the vision: a budget of elementary steps (a pixel sampled, a
//! vote cast, a candidate scored) that a board search charges as it goes, and a cancel flag the
//! caller may raise. Steps rather than time keep the limit deterministic — a frame stops at the
//! same place on every machine and under any load — so the limit can be tested; a wall-clock
//! deadline is the caller's business (the service raises the flag from its own timer).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use thiserror::Error;

/// Steps a board search may take unless told otherwise: at least twice the most that any photo
/// of the project's datasets needs to be located (142.1 million for goban-watcher-dev game 2
/// `greenstones_2`, which every look on both greys fails and the last look, in the lamp's
/// channel, finds; `tests/hostile_frames.rs` checks the margin; a 1080p search takes 10–40
/// million), and under a second of one core. Raised from 160 million when the fifth look's
/// second placement first located a photo, then to 175 million with its third try, to 220
/// million with the last try on the standard luma, and to 290 million with the lamp's channel:
/// each of those looks runs only after whole failed searches.
pub const DEFAULT_SEARCH_STEPS: u64 = 290_000_000;

/// A flag the caller raises to stop work in progress (for instance at a deadline). Clones share
/// the flag.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag not raised yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the flag: work checking it stops at its next charge.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the flag was raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How much work one call may do.
#[derive(Debug, Clone)]
pub struct WorkLimit {
    /// Most steps the call may take.
    pub max_steps: u64,
    /// Stops the call early when raised.
    pub cancel: Option<CancelFlag>,
}

impl Default for WorkLimit {
    fn default() -> Self {
        Self { max_steps: DEFAULT_SEARCH_STEPS, cancel: None }
    }
}

impl WorkLimit {
    /// A limit of `max_steps` steps, not cancellable.
    pub fn steps(max_steps: u64) -> Self {
        Self { max_steps, cancel: None }
    }
}

/// Why work stopped before it was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WorkStopped {
    /// The step budget ran out.
    #[error("the work budget of {limit} steps ran out")]
    Exhausted {
        /// The budget.
        limit: u64,
    },
    /// The caller raised the cancel flag.
    #[error("cancelled by the caller")]
    Cancelled,
}

/// The meter of one call: steps spent against its limit. Once it stops, every further charge
/// fails at once, so loops deep inside unwind quickly and the stage that owns them reports it.
#[derive(Debug)]
pub(crate) struct WorkMeter {
    limit: u64,
    spent: Cell<u64>,
    cancel: Option<CancelFlag>,
    stopped: Cell<Option<WorkStopped>>,
}

impl WorkMeter {
    pub fn new(limit: &WorkLimit) -> Self {
        Self { limit: limit.max_steps, spent: Cell::new(0), cancel: limit.cancel.clone(), stopped: Cell::new(None) }
    }

    /// A meter that never stops (for callers with no budget of their own).
    pub fn unlimited() -> Self {
        Self::new(&WorkLimit::steps(u64::MAX))
    }

    /// Charges `steps`; false when the work must stop (the budget is spent or the caller
    /// cancelled), in which case the steps are not done.
    pub fn charge(&self, steps: u64) -> bool {
        if self.stopped.get().is_some() {
            return false;
        }
        if self.cancel.as_ref().is_some_and(CancelFlag::is_cancelled) {
            self.stopped.set(Some(WorkStopped::Cancelled));
            return false;
        }
        let spent = self.spent.get().saturating_add(steps);
        if spent > self.limit {
            self.stopped.set(Some(WorkStopped::Exhausted { limit: self.limit }));
            return false;
        }
        self.spent.set(spent);
        true
    }

    /// Steps charged so far.
    pub fn spent(&self) -> u64 {
        self.spent.get()
    }

    /// `Err` once the work has stopped.
    pub fn check(&self) -> Result<(), WorkStopped> {
        match self.stopped.get() {
            Some(stopped) => Err(stopped),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meter_stops_at_its_limit_and_stays_stopped() {
        let meter = WorkMeter::new(&WorkLimit::steps(100));
        assert!(meter.charge(60));
        assert!(meter.charge(40));
        assert_eq!(meter.check(), Ok(()));
        assert!(!meter.charge(1), "the 101st step is refused");
        assert_eq!(meter.spent(), 100, "refused steps are not counted");
        assert!(!meter.charge(0), "a stopped meter refuses everything");
        assert_eq!(meter.check(), Err(WorkStopped::Exhausted { limit: 100 }));
    }

    #[test]
    fn a_raised_flag_stops_the_work() {
        let flag = CancelFlag::new();
        let meter = WorkMeter::new(&WorkLimit { max_steps: u64::MAX, cancel: Some(flag.clone()) });
        assert!(meter.charge(1_000));
        flag.cancel();
        assert!(!meter.charge(1));
        assert_eq!(meter.check(), Err(WorkStopped::Cancelled));
    }
}
