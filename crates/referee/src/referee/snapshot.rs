//! The view of a game the referee gives at any time: the phase, the record, both boards, the
//! open infractions, warnings and the result.

use super::*;

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

impl Referee {
    /// Everything the dashboard shows: both boards, their differences, the record, open
    /// infractions, warnings and the result.
    pub fn state(&self) -> Snapshot {
        let legal = self.record.legal();
        let mut differences = Vec::new();
        for p in Point::all() {
            let (l, ph) = (legal.get(p), self.physical.grid.get(p));
            if l == ph {
                continue;
            }
            let cause = match self.physical.cause_at(p) {
                Some(AckCause::Infraction(id)) => {
                    DifferenceCause::Infraction { id, kind: self.infractions.kind_of(id) }
                }
                Some(AckCause::Correction(number)) => DifferenceCause::Correction { number },
                _ => DifferenceCause::PendingCapture,
            };
            differences.push(Difference { point: PointRef::of(p), legal: l.color(), physical: ph.color(), cause });
        }
        Snapshot {
            table: self.config.table.clone(),
            game: self.config.game.clone(),
            phase: self.phase,
            legal: legal.rows(),
            physical: self.physical.grid.rows(),
            differences,
            moves: self.record.entries.clone(),
            to_move: self.record.game.to_move(),
            to_move_uncertain: self.record.to_move_uncertain,
            move_number: self.move_number(),
            open_infractions: self.infractions.views(true),
            decided_infractions: self.infractions.views(false),
            warnings: self.infractions.penalties.warnings,
            captures: self.record.captures(),
            dead: self.rulings.dead.iter().map(|&p| PointRef::of(p)).collect(),
            result: self.rulings.result.clone(),
            colours_corrected: self.rulings.colours_corrected,
            players_swapped: self.rulings.players_swapped,
        }
    }
}
