//! The record and its corrections: a stable change explained as moves (the plan of `explain`
//! carried out), takebacks replayed, resynchronisation, and the arbiter's corrections replayed
//! through the record.

use super::*;

impl Referee {
    pub(super) fn explain_change(&mut self, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        self.refresh_acks(None);
        if let Some(events) = self.takeback_replayed(stable, &evidence) {
            return events;
        }
        let acked = self.acked_map();
        let plan = explain::explain(&self.context(stable, &acked));
        let plan = self.replay_on_a_captured_point(stable, plan);
        self.apply(plan, stable, evidence)
    }

    fn context<'a>(&'a self, stable: &'a StableBoard, acked: &'a BTreeMap<usize, Stone>) -> Context<'a> {
        Context {
            game: &self.game,
            legal: Grid::from_board(self.game.board()),
            physical: &stable.grid,
            acked,
            last_move: self.last_move(),
            to_move_uncertain: self.to_move_uncertain,
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
        let Some(pending) = self.pending.as_ref() else { return plan };
        let to_move = self.game.to_move();
        if plan.cost == 0 || pending.side == to_move || !pending.removed_some {
            return plan;
        }
        let candidates: Vec<Point> =
            pending.points.iter().copied().filter(|&p| stable.grid.get(p) == Stone::Of(to_move)).collect();
        let mut best: Option<(Point, Plan)> = None;
        for point in candidates {
            let mut acked = self.acked_map();
            acked.remove(&point.index());
            let tried = explain::explain(&self.context(stable, &acked));
            let starts_there = tried.steps.first().is_some_and(|s| s.side == to_move && s.point == point);
            let bound = best.as_ref().map_or(plan.cost, |(_, b)| b.cost);
            if starts_there && tried.cost < bound {
                best = Some((point, tried));
            }
        }
        let Some((point, tried)) = best else { return plan };
        self.release_pending(point);
        tried
    }

    /// Takes a point out of the pending capture (its stone is now a new move, not a leftover).
    fn release_pending(&mut self, point: Point) {
        self.acks.remove(&point.index());
        if let Some(pending) = &mut self.pending {
            pending.points.remove(&point);
            if pending.points.is_empty() {
                self.pending = None;
            }
        }
    }

    /// A stone lifted in an earlier view (open takeback) and now put down elsewhere by the same
    /// side, nothing else changed: the takeback's replay, not a new move.
    pub(super) fn takeback_replayed(&mut self, stable: &StableBoard, evidence: &Evidence) -> Option<Vec<Event>> {
        let last_entry = self.record.iter().rposition(|e| !e.struck && !matches!(e.action, RecordAction::Turn))?;
        let idx = self.infractions.iter().rposition(|i| {
            i.kind == EventKind::Takeback
                && i.status == Status::Suspected
                && i.replay_point.is_none()
                && i.entry == Some(last_entry)
        })?;
        let (side, from) = (self.infractions[idx].side?, self.infractions[idx].original_point?);
        let legal = Grid::from_board(self.game.board());
        let unexplained: Vec<Point> = legal
            .differences(&stable.grid)
            .into_iter()
            .filter(|p| self.acks.get(&p.index()).map(|a| a.physical) != Some(stable.grid.get(*p)))
            .collect();
        let [to] = unexplained[..] else { return None };
        if legal.get(to) != Stone::Empty
            || stable.grid.get(to) != Stone::Of(side)
            || stable.grid.get(from) != Stone::Empty
        {
            return None;
        }
        self.record[last_entry].action = RecordAction::Place { point: to };
        self.rebuild();
        self.refresh_acks(None);
        let id = self.infractions[idx].id;
        self.infractions[idx].replay_point = Some(to);
        let mut e = self
            .event(stable.t, EventKind::Takeback, Say::TakebackReplayed { side, from, to }.message())
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

    pub(super) fn apply(&mut self, plan: Plan, stable: &StableBoard, evidence: Evidence) -> Vec<Event> {
        let t = stable.t;
        let mut events = Vec::new();
        let ambiguous = plan.orders > 1;
        for step in &plan.steps {
            // The opponent of a capturer moved while the captured stones still stand: missed
            // (raised once this move is in the record, so it carries the move that revealed it).
            let missed_by: Option<Option<PendingCapture>> =
                if self.pending.as_ref().is_some_and(|p| p.side != step.side) {
                    Some(self.pending.take())
                } else {
                    None
                };
            if self.to_move_uncertain {
                self.game.set_to_move(step.side);
                self.to_move_uncertain = false;
                // The estimate of missed moves counts stones; captured ones hide moves. The side
                // now moving fixes the parity: the first mover of the game plays odd moves.
                let next = self.move_number() + 1;
                let expected = if next % 2 == 1 { self.start_to_move } else { self.start_to_move.opponent() };
                if expected != step.side {
                    self.number_offset += 1;
                    if let Some(RecordEntry { action: RecordAction::Setup { missed, .. }, number, .. }) =
                        self.record.last_mut()
                    {
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
                        self.pending = Some(pending);
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
                            for &p in &still {
                                self.acks
                                    .insert(p.index(), Ack { physical: stable.grid.get(p), cause: AckCause::Pending });
                            }
                            match &mut self.pending {
                                Some(pc) if pc.side == step.side => pc.points.extend(still),
                                _ => {
                                    let removed_some = still.len() < outcome.captured.len();
                                    self.pending = Some(PendingCapture {
                                        side: step.side,
                                        move_number: number,
                                        points: still,
                                        since: t,
                                        removed_some,
                                    })
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
                    let open_repetition = self
                        .infractions
                        .iter()
                        .any(|i| i.kind == EventKind::Repetition && i.status == Status::Suspected);
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
                    let open_no_result =
                        self.infractions.iter().any(|i| i.kind == EventKind::NoResult && i.status == Status::Suspected);
                    if outcome.no_result && !open_no_result {
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
                        self.pending = Some(pending);
                        events.extend(self.raise_missed_capture(t, &evidence, MissedWhy::OpponentMoved));
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
        self.refresh_acks(None);
        events
    }

    pub(super) fn resync(&mut self, t: f64, added: u32, evidence: &Evidence, by_arbiter: bool) -> Vec<Event> {
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
        let said = if by_arbiter { Say::ArbiterAdoptedBoard } else { Say::MovesNotSeen { added } };
        let mut e = self
            .event(t, EventKind::Resync, said.message())
            .with_move(Some(self.number_offset))
            .with_side(Some(to_move));
        e.evidence = Some(evidence.clone());
        vec![e]
    }

    /// Rebuilds the legal game from the start position and the record (after a ruling).
    pub(super) fn rebuild(&mut self) {
        let (game, offset, _) = replay_record(&self.start_board, self.start_to_move, &mut self.record);
        self.game = game;
        self.number_offset = offset;
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
        let idx = self
            .record
            .iter()
            .rposition(|e| {
                !e.struck
                    && e.number == number
                    && matches!(e.action, RecordAction::Place { .. } | RecordAction::Pass | RecordAction::Void { .. })
            })
            .ok_or(ArbiterError::UnknownMove(number))?;
        // A ruling on that move (a takeback's confirmation rewrites it) must come first.
        if let Some(open) = self.infractions.iter().find(|i| i.status == Status::Suspected && i.entry == Some(idx)) {
            return Err(ArbiterError::BadCorrection(format!(
                "infraction {} concerns move {number}: confirm or dismiss it first",
                open.id
            )));
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
            return Err(ArbiterError::BadCorrection(format!(
                "{} is not a legal move at move {number}",
                refs(&point.into_iter().collect::<Vec<_>>())
            )));
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
                self.acks
                    .entry(p.index())
                    .or_insert(Ack { physical: self.physical.get(p), cause: AckCause::Correction(number) });
            }
        }
        let shown = |action: &RecordAction| match action {
            RecordAction::Place { point } | RecordAction::Void { point, .. } => point.human(),
            _ => "pass".to_owned(),
        };
        let (from, to) = (shown(&was), shown(&self.record[idx].action));
        let mut e = self
            .event(t, EventKind::Correction, Say::Correction { side, number, to: &to, from: &from }.message())
            .with_side(Some(side))
            .with_move(Some(number))
            .with_points(&point.into_iter().collect::<Vec<_>>());
        e.captured = e_captured(&self.record[idx].captured);
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
