//! The record and its corrections: a stable change explained as moves (the plan of `explain`
//! carried out), takebacks replayed, resynchronisation, and the arbiter's corrections replayed
//! through the record.

use super::*;

/// The legal side of the game: the start position, the rules core's game and the record it is
/// replayed from, with the move numbering and whether the side to move is only a guess.
#[derive(Debug, Clone)]
pub(super) struct Record {
    /// The position play started from (empty, handicap stones or the board as found).
    pub(super) start_board: Board,
    /// Who moved first from the start position.
    pub(super) start_to_move: Color,
    pub(super) game: Game,
    /// Move number of the last setup (a resync): the game counts its moves from there.
    pub(super) number_offset: u32,
    pub(super) entries: Vec<RecordEntry>,
    /// After a resync the side to move is guessed until a move shows it.
    pub(super) to_move_uncertain: bool,
}

impl Record {
    /// An empty board, Black to move, nothing recorded.
    pub(super) fn new() -> Self {
        let start_board = empty_board();
        Record {
            game: Game::from_board(start_board.clone(), Color::Black),
            start_board,
            start_to_move: Color::Black,
            number_offset: 0,
            entries: Vec::new(),
            to_move_uncertain: false,
        }
    }

    /// Current move number.
    pub(super) fn move_number(&self) -> u32 {
        self.number_offset + self.game.move_number()
    }

    /// The legal board as a grid.
    pub(super) fn legal(&self) -> Grid {
        Grid::from_board(self.game.board())
    }

    /// Starts play from `board` with `to_move` first.
    pub(super) fn begin(&mut self, board: Board, to_move: Color) {
        self.start_board = board.clone();
        self.start_to_move = to_move;
        self.game = Game::from_board(board, to_move);
    }

    /// Rebuilds the legal game from the start position and the record (after a ruling).
    pub(super) fn rebuild(&mut self) {
        let (game, offset, _) = replay_record(&self.start_board, self.start_to_move, &mut self.entries);
        self.game = game;
        self.number_offset = offset;
    }

    /// The last entry that is a move (placed, passed or void), not struck.
    pub(super) fn last_played(&self) -> Option<usize> {
        self.entries.iter().rposition(|e| !e.struck && !matches!(e.action, RecordAction::Turn))
    }

    /// The last move for the planner, if it placed a stone.
    pub(super) fn last_move(&self) -> Option<LastMove> {
        let last = &self.entries[self.last_played()?];
        match last.action {
            RecordAction::Place { point } => Some(LastMove { side: last.side, point, captured: last.captured.clone() }),
            _ => None,
        }
    }

    /// Nothing stands in the record of a game started on an empty board: a stone now is the
    /// first one played.
    pub(super) fn empty_so_far(&self) -> bool {
        self.start_board == empty_board() && !self.entries.iter().any(|e| !e.struck)
    }

    /// The side to move was a guess (after a resync) and `side` moves: it is now known, and the
    /// count of missed moves is put right by the parity of the move.
    pub(super) fn settle_turn(&mut self, side: Color) {
        if !self.to_move_uncertain {
            return;
        }
        self.game.set_to_move(side);
        self.to_move_uncertain = false;
        // The estimate of missed moves counts stones; captured ones hide moves. The side now
        // moving fixes the parity: the first mover of the game plays odd moves.
        let next = self.move_number() + 1;
        let expected = if next % 2 == 1 { self.start_to_move } else { self.start_to_move.opponent() };
        if expected != side {
            self.number_offset += 1;
            if let Some(RecordEntry { action: RecordAction::Setup { missed, .. }, number, .. }) =
                self.entries.last_mut()
            {
                *missed += 1;
                *number += 1;
            }
        }
    }

    /// Plays a stone and records it; returns the rules core's outcome and the move number, or
    /// `None` (nothing recorded) if the rules refuse it.
    pub(super) fn place(&mut self, side: Color, point: Point, t: f64) -> Option<(MoveOutcome, u32)> {
        let outcome = self.game.play(side, Move::Place(point)).ok()?;
        let number = self.number_offset + outcome.move_number;
        self.entries.push(RecordEntry {
            number,
            side,
            action: RecordAction::Place { point },
            t,
            captured: outcome.captured.clone(),
            struck: false,
        });
        Some((outcome, number))
    }

    /// Records a move that counts as a pass (a pass, or a void placement); returns its number.
    pub(super) fn pass(&mut self, side: Color, action: RecordAction, t: f64) -> u32 {
        let number = self.number_offset + self.game.pass(side).move_number;
        self.entries.push(RecordEntry { number, side, action, t, captured: Vec::new(), struck: false });
        number
    }

    /// The arbiter sets whose turn it is.
    pub(super) fn set_turn(&mut self, side: Color, t: f64) {
        self.game.set_to_move(side);
        self.to_move_uncertain = false;
        self.entries.push(RecordEntry {
            number: self.move_number(),
            side,
            action: RecordAction::Turn,
            t,
            captured: Vec::new(),
            struck: false,
        });
    }

    /// Adopts `board` as a setup after `missed` moves not seen; the side to move is a guess
    /// unless the arbiter adopted it.
    pub(super) fn adopt(&mut self, board: Board, to_move: Color, missed: u32, t: f64, by_arbiter: bool) {
        let number = self.move_number() + missed;
        self.entries.push(RecordEntry {
            number,
            side: to_move,
            action: RecordAction::Setup { rows: Grid::from_board(&board).rows(), to_move, missed },
            t,
            captured: Vec::new(),
            struck: false,
        });
        self.number_offset = number;
        self.game = Game::from_board(board, to_move);
        self.to_move_uncertain = !by_arbiter;
    }

    /// Moves the stone of entry `entry` to `point` (a takeback) and replays the record.
    pub(super) fn replace_point(&mut self, entry: usize, point: Point) {
        self.entries[entry].action = RecordAction::Place { point };
        self.rebuild();
    }

    /// Strikes entry `entry` from the record (a confirmed double move) and replays the record.
    pub(super) fn strike(&mut self, entry: usize) {
        self.entries[entry].struck = true;
        self.rebuild();
    }

    /// Enters a pass of the opponent before entry `entry` (a dismissed double move) and replays
    /// the record; returns who passed.
    pub(super) fn insert_pass(&mut self, entry: usize, t: f64) -> Color {
        let side = self.entries[entry].side.opponent();
        let pass = RecordEntry { number: 0, side, action: RecordAction::Pass, t, captured: Vec::new(), struck: false };
        self.entries.insert(entry, pass);
        self.rebuild();
        side
    }

    /// The entry of move `number` that an arbiter's correction may replace.
    pub(super) fn correctable(&self, number: u32) -> Result<usize, ArbiterError> {
        self.entries
            .iter()
            .rposition(|e| {
                !e.struck
                    && e.number == number
                    && matches!(e.action, RecordAction::Place { .. } | RecordAction::Pass | RecordAction::Void { .. })
            })
            .ok_or(ArbiterError::UnknownMove(number))
    }

    /// Replaces entry `idx` (move `number`) by a stone on `point` or a pass and replays the
    /// record; returns what the entry was. Nothing changes if the rules refuse the move or any
    /// later one.
    pub(super) fn correct(
        &mut self,
        idx: usize,
        number: u32,
        point: Option<Point>,
    ) -> Result<RecordAction, ArbiterError> {
        let (_, _, placed_before) = replay_record(&self.start_board, self.start_to_move, &mut self.entries.clone());
        let mut corrected = self.entries.clone();
        let was = corrected[idx].action.clone();
        corrected[idx].action = match point {
            Some(point) => RecordAction::Place { point },
            None => RecordAction::Pass,
        };
        let (_, _, placed_after) = replay_record(&self.start_board, self.start_to_move, &mut corrected);
        if point.is_some() && !placed_after[idx] {
            return Err(ArbiterError::BadCorrection(format!(
                "{} is not a legal move at move {number}",
                refs(&point.into_iter().collect::<Vec<_>>())
            )));
        }
        if let Some(later) = (idx + 1..corrected.len()).find(|&i| placed_before[i] && !placed_after[i]) {
            return Err(ArbiterError::BadCorrection(format!("move {} would become illegal", corrected[later].number)));
        }
        self.entries = corrected;
        self.rebuild();
        Ok(was)
    }

    /// Stones captured by each side, struck entries left out.
    pub(super) fn captures(&self) -> ByColor<u32> {
        let mut captures = ByColor::<u32>::default();
        for e in self.entries.iter().filter(|e| !e.struck) {
            captures[e.side] += e.captured.len() as u32;
        }
        captures
    }
}

impl Referee {
    pub(super) fn explain_change(&mut self, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        self.physical.refresh_acks(self.record.game.board(), None);
        if let Some(events) = self.takeback_replayed(stable, &evidence) {
            return events;
        }
        let acked = self.physical.acked();
        let plan = explain::explain(&self.context(stable, &acked));
        let plan = self.replay_on_a_captured_point(stable, plan);
        self.apply(plan, stable, evidence)
    }

    fn context<'a>(&'a self, stable: &'a StableBoard, acked: &'a BTreeMap<usize, Stone>) -> Context<'a> {
        Context {
            game: &self.record.game,
            legal: self.record.legal(),
            physical: &stable.grid,
            acked,
            last_move: self.record.last_move(),
            to_move_uncertain: self.record.to_move_uncertain,
            max_moves: self.config.max_moves_per_change,
            scatter_min: self.config.scatter_min_stones,
        }
    }

    /// A stone of the side to move standing on a point of its opponent's pending capture, when
    /// the change is not explained in turn: the captured stone may have been lifted and a stone
    /// of the same colour replayed there before the camera saw the point empty (a throw-in
    /// into the space of a larger capture). Tried only once the capturer has lifted some of the
    /// captured stones (the capture was seen being carried out); taken when the change then
    /// costs less and starts with that move, and the point leaves the pending capture.
    fn replay_on_a_captured_point(&mut self, stable: &StableBoard, plan: Plan) -> Plan {
        let Some(pending) = self.physical.pending.as_ref() else { return plan };
        let to_move = self.record.game.to_move();
        if plan.cost == 0 || pending.side == to_move || !pending.removed_some {
            return plan;
        }
        let candidates: Vec<Point> =
            pending.points.iter().copied().filter(|&p| stable.grid.get(p) == Stone::Of(to_move)).collect();
        let mut best: Option<(Point, Plan)> = None;
        for point in candidates {
            let mut acked = self.physical.acked();
            acked.remove(&point.index());
            let tried = explain::explain(&self.context(stable, &acked));
            let starts_there = tried.steps.first().is_some_and(|s| s.side == to_move && s.point == point);
            let bound = best.as_ref().map_or(plan.cost, |(_, b)| b.cost);
            if starts_there && tried.cost < bound {
                best = Some((point, tried));
            }
        }
        let Some((point, tried)) = best else { return plan };
        self.physical.release_pending(point);
        tried
    }

    /// A stone lifted in an earlier view (open takeback) and now put down elsewhere by the same
    /// side, nothing else changed: the takeback's replay, not a new move.
    pub(super) fn takeback_replayed(&mut self, stable: &StableBoard, evidence: &Evidence) -> Option<Vec<Event>> {
        let last_entry = self.record.last_played()?;
        let idx = self.infractions.open_takeback_on(last_entry)?;
        let (side, from) = (self.infractions.raised[idx].side?, self.infractions.raised[idx].original_point?);
        let legal = self.record.legal();
        let unexplained: Vec<Point> = legal
            .differences(&stable.grid)
            .into_iter()
            .filter(|&p| !self.physical.acknowledged(p, stable.grid.get(p)))
            .collect();
        let [to] = unexplained[..] else { return None };
        if legal.get(to) != Stone::Empty
            || stable.grid.get(to) != Stone::Of(side)
            || stable.grid.get(from) != Stone::Empty
        {
            return None;
        }
        self.record.replace_point(last_entry, to);
        self.physical.refresh_acks(self.record.game.board(), None);
        let id = self.infractions.raised[idx].id;
        self.infractions.raised[idx].replay_point = Some(to);
        let mut e = self
            .event(stable.t, EventKind::Takeback, Say::TakebackReplayed { side, from, to }.message())
            .with_side(Some(side))
            .with_points(&[from, to])
            .with_move(Some(self.move_number()));
        e.infraction = Some(id);
        e.confidence = 0.7 * Self::min_confidence(stable, &[from, to]);
        e.evidence = Some(evidence.clone());
        e.ruling = EventKind::Takeback.ruling();
        self.infractions.raised[idx].event = e.clone();
        Some(vec![e])
    }

    pub(super) fn apply(&mut self, plan: Plan, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        let t = stable.t;
        let mut events = Vec::new();
        let ambiguous = plan.orders > 1;
        for step in &plan.steps {
            // The opponent of a capturer moved while the captured stones still stand: missed
            // (raised once this move is in the record, so it carries the move that revealed it).
            let missed_by: Option<Option<PendingCapture>> =
                if self.physical.pending.as_ref().is_some_and(|p| p.side != step.side) {
                    Some(self.physical.pending.take())
                } else {
                    None
                };
            self.record.settle_turn(step.side);
            let out_of_turn = step.side != self.record.game.to_move();
            let first_on_empty = self.record.empty_so_far();
            match step.void {
                None => {
                    // The plan was checked on a copy of this game; a refusal is impossible, but
                    // never panic on it: record nothing for this step.
                    let Some((outcome, number)) = self.record.place(step.side, step.point, t) else {
                        if let Some(pending) = missed_by.flatten() {
                            self.physical.pending = Some(pending);
                        }
                        continue;
                    };
                    let entry = self.record.entries.len() - 1;
                    let said = Say::Move {
                        side: step.side,
                        point: step.point,
                        number,
                        orders: ambiguous.then_some(plan.orders),
                    };
                    let mut e = self
                        .event(t, EventKind::Move, said.message())
                        .with_side(Some(step.side))
                        .with_points(&[step.point])
                        .with_move(Some(number));
                    e.confidence = Self::min_confidence(stable, &[step.point]) * if ambiguous { 0.5 } else { 1.0 };
                    e.orders = (plan.steps.len() > 1).then_some(plan.orders);
                    e.captured = outcome.captured.iter().map(|&p| PointRef::of(p)).collect();
                    events.push(e);
                    if let Some(pending) = missed_by.clone().flatten() {
                        self.physical.pending = Some(pending);
                        events.extend(self.raise_missed_capture(t, &evidence, MissedWhy::OpponentMoved));
                    }
                    if !outcome.captured.is_empty() {
                        let still: BTreeSet<Point> =
                            outcome.captured.iter().copied().filter(|&p| stable.grid.get(p) != Stone::Empty).collect();
                        let said = Say::Capture { side: step.side, captured: &outcome.captured, still: still.len() };
                        let mut c = self
                            .event(t, EventKind::Capture, said.message())
                            .with_side(Some(step.side))
                            .with_points(&outcome.captured)
                            .with_move(Some(number));
                        c.captured = e_captured(&outcome.captured);
                        events.push(c);
                        if !still.is_empty() {
                            let removed_some = still.len() < outcome.captured.len();
                            self.physical.hold_capture(step.side, number, still, removed_some, t, &stable.grid);
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
                                Say::FirstStoneWhite { point: step.point }.message(),
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
                                Say::DoubleMove { side: step.side, point: step.point, number }.message(),
                                Some(entry),
                            );
                            events.push(e);
                        }
                    }
                    let open_repetition = self.infractions.open_of(EventKind::Repetition).is_some();
                    // One open repetition at a time: a cycle repeats on every move of it.
                    if let (Some(rep), false) = (outcome.repetition, open_repetition) {
                        let e = self.raise(
                            t,
                            EventKind::Repetition,
                            Some(step.side),
                            &[step.point],
                            1.0,
                            &evidence,
                            Say::Repetition { point: step.point, after_move: rep.first_seen_after_move }.message(),
                            Some(entry),
                        );
                        events.push(e);
                    }
                    if outcome.no_result && self.infractions.open_of(EventKind::NoResult).is_none() {
                        let e = self.raise(
                            t,
                            EventKind::NoResult,
                            None,
                            &[step.point],
                            1.0,
                            &evidence,
                            Say::NoResult.message(),
                            Some(entry),
                        );
                        events.push(e);
                    }
                }
                Some(reason) => {
                    if let Some(pending) = missed_by.clone().flatten() {
                        self.physical.pending = Some(pending);
                        events.extend(self.raise_missed_capture(t, &evidence, MissedWhy::OpponentMoved));
                    }
                    let action = RecordAction::Void { point: step.point, reason };
                    let number = self.record.pass(step.side, action, t);
                    let entry = self.record.entries.len() - 1;
                    let mut points = vec![step.point];
                    points.extend(plan.void_removals.iter().copied());
                    let (side, point) = (step.side, step.point);
                    let (kind, said) = match reason {
                        IllegalReason::Ko => (EventKind::KoRetaken, Say::KoRetaken { side, point, number }),
                        IllegalReason::Suicide => {
                            (EventKind::ForbiddenPoint, Say::ForbiddenPoint { side, point, number })
                        }
                        IllegalReason::Occupied | IllegalReason::OffBoard => {
                            (EventKind::MovedStone, Say::OccupiedPoint { point })
                        }
                    };
                    let conf = 0.9 * Self::min_confidence(stable, &points);
                    let side = if kind == EventKind::MovedStone { None } else { Some(step.side) };
                    let e = self.raise(t, kind, side, &points, conf, &evidence, said.message(), Some(entry));
                    events.push(e);
                }
            }
        }
        for f in plan.findings {
            events.extend(self.apply_finding(f, stable, &evidence));
        }
        // Anything still different is acknowledged under the last infraction raised here, so it
        // is not raised again at the next stable board.
        self.physical.refresh_acks(self.record.game.board(), None);
        events
    }

    pub(super) fn resync(&mut self, t: f64, added: u32, evidence: &Evidence, by_arbiter: bool) -> Vec<Event> {
        let (board, removed) = self.physical.grid.to_legal_board();
        let ByColor { black: b, white: w } = self.physical.grid.counts();
        let to_move = if b > w { Color::White } else { Color::Black };
        self.record.adopt(board, to_move, added, t, by_arbiter);
        // Chains without liberties on the adopted board are captured stones not yet lifted.
        self.physical.restart_acks(&removed);
        let said = if by_arbiter { Say::ArbiterAdoptedBoard } else { Say::MovesNotSeen { added } };
        let mut e = self
            .event(t, EventKind::Resync, said.message())
            .with_move(Some(self.record.number_offset))
            .with_side(Some(to_move));
        e.evidence = Some(evidence.clone());
        vec![e]
    }

    /// Replaces a recorded move and replays the record; nothing changes if the rules refuse it.
    pub(super) fn correct_move(
        &mut self,
        t: f64,
        number: u32,
        point: Option<Point>,
    ) -> Result<Vec<Event>, ArbiterError> {
        // Once play has ended, dead stones and the final passes rest on the record as it is.
        if self.phase != Phase::Playing {
            return Err(ArbiterError::WrongPhase(self.phase_name()));
        }
        let idx = self.record.correctable(number)?;
        // A ruling on that move (a takeback's confirmation rewrites it) must come first.
        if let Some(open) = self.infractions.open_on_entry(idx) {
            return Err(ArbiterError::BadCorrection(format!(
                "infraction {} concerns move {number}: confirm or dismiss it first",
                open.id
            )));
        }
        let board_before = self.record.legal();
        let was = self.record.correct(idx, number, point)?;
        let side = self.record.entries[idx].side;
        // The camera may still show (or misread) the old move: the points the correction
        // changed on the legal board are explained; any other difference is not.
        let board_after = self.record.legal();
        self.physical.refresh_acks(self.record.game.board(), None);
        self.physical.ack_correction(&board_before, &board_after, number);
        let shown = |action: &RecordAction| match action {
            RecordAction::Place { point } | RecordAction::Void { point, .. } => point.human(),
            _ => "pass".to_owned(),
        };
        let (from, to) = (shown(&was), shown(&self.record.entries[idx].action));
        let mut e = self
            .event(t, EventKind::Correction, Say::Correction { side, number, to: &to, from: &from }.message())
            .with_side(Some(side))
            .with_move(Some(number))
            .with_points(&point.into_iter().collect::<Vec<_>>());
        e.captured = e_captured(&self.record.entries[idx].captured);
        e.confidence = 1.0;
        Ok(vec![e])
    }
}

/// Replays a record from its start position, renumbering the entries and refreshing their
/// captures; returns the game, the move-number offset of the last setup, and for every entry
/// whether it is a stone legally placed (an illegal one is replayed as a void move).
pub(super) fn replay_record(
    start_board: &Board,
    start_to_move: Color,
    record: &mut [RecordEntry],
) -> (Game, u32, Vec<bool>) {
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
                let board =
                    Grid::<Stone>::from_rows(rows).map(|g| g.to_legal_board().0).unwrap_or_else(|_| empty_board());
                game = Game::from_board(board, *to_move);
            }
            RecordAction::Turn => game.set_to_move(e.side),
        }
    }
    (game, offset, legal_places)
}

pub(super) fn e_captured(points: &[Point]) -> Vec<PointRef> {
    points.iter().map(|&p| PointRef::of(p)).collect()
}
