//! Infractions and acknowledgements: raising a suspected infraction with its evidence, the
//! physical board and the points whose difference from the legal one is acknowledged (pending
//! captures, open infractions, corrections), the capture grace, and the arbiter's confirm or
//! dismiss with its warnings.

use super::*;

/// The book of infractions: every one raised, in order (its id is its place, from 1), and the
/// warnings they cost.
#[derive(Debug, Clone, Default)]
pub(super) struct InfractionBook {
    pub(super) raised: Vec<Infraction>,
    pub(super) penalties: Penalties,
}

impl InfractionBook {
    /// The id the next infraction raised gets.
    pub(super) fn next_id(&self) -> u64 {
        self.raised.len() as u64 + 1
    }

    /// The first open infraction of `kind`.
    pub(super) fn open_of(&self, kind: EventKind) -> Option<&Infraction> {
        self.raised.iter().find(|i| i.kind == kind && i.status == Status::Suspected)
    }

    /// The first open infraction concerning record entry `entry`.
    pub(super) fn open_on_entry(&self, entry: usize) -> Option<&Infraction> {
        self.raised.iter().find(|i| i.status == Status::Suspected && i.entry == Some(entry))
    }

    /// The last open takeback of the stone of record entry `entry` not yet replayed.
    pub(super) fn open_takeback_on(&self, entry: usize) -> Option<usize> {
        self.raised.iter().rposition(|i| {
            i.kind == EventKind::Takeback
                && i.status == Status::Suspected
                && i.replay_point.is_none()
                && i.entry == Some(entry)
        })
    }

    /// The kind of infraction `id` (a moved stone if there is none).
    pub(super) fn kind_of(&self, id: u64) -> EventKind {
        self.raised.iter().find(|i| i.id == id).map_or(EventKind::MovedStone, |i| i.kind)
    }

    /// A record entry was inserted at `entry`: the entries the infractions name from there on
    /// move up by one.
    pub(super) fn shift_entries(&mut self, entry: usize) {
        for other in &mut self.raised {
            if let Some(e) = other.entry.as_mut() {
                if *e >= entry {
                    *e += 1;
                }
            }
        }
    }

    /// The open (or the decided) infractions as the dashboard lists them.
    pub(super) fn views(&self, open: bool) -> Vec<InfractionView> {
        self.raised
            .iter()
            .filter(|i| (i.status == Status::Suspected) == open)
            .map(|i| InfractionView { id: i.id, status: i.status, event: i.event.clone() })
            .collect()
    }

    /// One more warning for `side`; returns how many it has.
    pub(super) fn warn(&mut self, side: Color) -> u32 {
        self.penalties.warnings[side] += 1;
        self.penalties.warnings[side]
    }
}

/// The physical side of the game: the last stable board the camera saw, and where it differs
/// from the legal board for a known reason (acknowledgements, the pending capture).
#[derive(Debug, Clone)]
pub(super) struct PhysicalBoard {
    pub(super) grid: Grid,
    pub(super) sighting: Option<Sighting>,
    /// Acknowledged differences, by point index: not raised again at the next stable board.
    pub(super) acks: BTreeMap<usize, Ack>,
    pub(super) pending: Option<PendingCapture>,
}

impl PhysicalBoard {
    /// Nothing seen yet: an empty board.
    pub(super) fn new() -> Self {
        PhysicalBoard { grid: Grid::empty(), sighting: None, acks: BTreeMap::new(), pending: None }
    }

    /// Takes a new stable board; returns the evidence of the change (the sightings before and
    /// after it).
    pub(super) fn see(&mut self, stable: &StableBoard) -> Evidence {
        let sighting = Sighting { t: stable.t, frame_ref: stable.frame_ref.clone(), rows: stable.grid.rows() };
        self.grid = stable.grid.clone();
        let before = self.sighting.replace(sighting.clone());
        Evidence { before, after: Some(sighting) }
    }

    /// Evidence of the board as last seen (for what is not a change of it).
    pub(super) fn as_last_seen(&self) -> Evidence {
        Evidence { before: None, after: self.sighting.clone() }
    }

    /// Drops acknowledgements the board now satisfies against the `legal` board; with `cause`,
    /// acknowledges every new difference under it (after a ruling changed the legal board).
    pub(super) fn refresh_acks(&mut self, legal: &Board, cause: Option<AckCause>) {
        let legal = Grid::from_board(legal);
        let physical = &self.grid;
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
            for p in legal.differences(physical) {
                self.acks.entry(p.index()).or_insert(Ack { physical: physical.get(p), cause });
            }
        }
    }

    /// The acknowledged differences as the planner takes them: what stands at each point.
    pub(super) fn acked(&self) -> BTreeMap<usize, Stone> {
        self.acks.iter().map(|(&i, a)| (i, a.physical)).collect()
    }

    /// Whether the difference at `point` is acknowledged with `seen` standing there.
    pub(super) fn acknowledged(&self, point: Point, seen: Stone) -> bool {
        self.acks.get(&point.index()).map(|a| a.physical) == Some(seen)
    }

    /// Why the boards differ at `point`, if that is known.
    pub(super) fn cause_at(&self, point: Point) -> Option<AckCause> {
        self.acks.get(&point.index()).map(|a| a.cause)
    }

    /// Acknowledges the points of infraction `id` where the camera differs from `legal`.
    pub(super) fn ack_infraction(&mut self, points: &[Point], legal: &Board, id: u64) {
        for &p in points {
            if self.grid.get(p) != legal.get(p) {
                self.acks.insert(p.index(), Ack { physical: self.grid.get(p), cause: AckCause::Infraction(id) });
            }
        }
    }

    /// Acknowledges the points an arbiter's correction of move `number` changed on the legal
    /// board (from `before` to `after`) that the camera does not show as corrected.
    pub(super) fn ack_correction(&mut self, before: &Grid, after: &Grid, number: u32) {
        for p in before.differences(after) {
            if after.get(p) != self.grid.get(p) {
                self.acks
                    .entry(p.index())
                    .or_insert(Ack { physical: self.grid.get(p), cause: AckCause::Correction(number) });
            }
        }
    }

    /// Stones `side` captured with move `number` that still stand on `seen` at `t`: acknowledged
    /// and pending (added to `side`'s pending capture if it has one).
    pub(super) fn hold_capture(
        &mut self,
        side: Color,
        number: u32,
        still: BTreeSet<Point>,
        removed_some: bool,
        t: f64,
        seen: &Grid,
    ) {
        for &p in &still {
            self.acks.insert(p.index(), Ack { physical: seen.get(p), cause: AckCause::Pending });
        }
        match &mut self.pending {
            Some(pc) if pc.side == side => pc.points.extend(still),
            _ => {
                self.pending = Some(PendingCapture { side, move_number: number, points: still, since: t, removed_some })
            }
        }
    }

    /// Takes a point out of the pending capture (its stone is now a new move, not a leftover).
    pub(super) fn release_pending(&mut self, point: Point) {
        self.acks.remove(&point.index());
        if let Some(pending) = &mut self.pending {
            pending.points.remove(&point);
            if pending.points.is_empty() {
                self.pending = None;
            }
        }
    }

    /// A new position was adopted: the only differences known are the `captured` stones on the
    /// board that have no liberties on it.
    pub(super) fn restart_acks(&mut self, captured: &[Point]) {
        self.pending = None;
        self.acks.clear();
        for p in captured {
            self.acks.insert(p.index(), Ack { physical: self.grid.get(*p), cause: AckCause::Pending });
        }
    }

    /// The pending capture has stood longer than `grace` seconds at `t`.
    pub(super) fn pending_overdue(&self, t: f64, grace: f64) -> bool {
        self.pending.as_ref().is_some_and(|p| t - p.since > grace)
    }
}

impl Referee {
    pub(super) fn min_confidence(stable: &StableBoard, points: &[Point]) -> f32 {
        points.iter().map(|&p| stable.confidence[p.index()]).fold(1.0f32, f32::min)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn raise(
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
        let id = self.infractions.next_id();
        let mut e =
            self.event(t, kind, message).with_side(side).with_points(points).with_move(Some(self.move_number()));
        e.infraction = Some(id);
        e.confidence = confidence.clamp(0.0, 1.0);
        e.evidence = Some(evidence.clone());
        e.ruling = kind.ruling();
        self.infractions.raised.push(Infraction {
            id,
            kind,
            side,
            status: Status::Suspected,
            entry,
            replay_point: None,
            original_point: None,
            event: e.clone(),
        });
        self.physical.ack_infraction(points, self.record.game.board(), id);
        e
    }

    pub(super) fn apply_finding(&mut self, f: Finding, stable: &StableBoard, evidence: &Evidence) -> Vec<Event> {
        let t = stable.t;
        let mut events = Vec::new();
        match f {
            Finding::Takeback { side, from, to, restored } => {
                let mut points = vec![from];
                points.extend(to);
                points.extend(restored.iter().copied());
                let entry = self
                    .record
                    .entries
                    .iter()
                    .rposition(|e| !e.struck && e.action == RecordAction::Place { point: from });
                if let (Some(p), Some(i)) = (to, entry) {
                    // Art. 17.3: the claim must come before the opponent's next move; until the
                    // arbiter confirms, the game goes on from the stone where it now stands.
                    self.record.replace_point(i, p);
                }
                let conf = 0.7 * Self::min_confidence(stable, &points);
                let message = Say::Takeback { side, from, to }.message();
                let e = self.raise(t, EventKind::Takeback, Some(side), &points, conf, evidence, message, entry);
                if let Some(inf) = self.infractions.raised.last_mut() {
                    inf.replay_point = to;
                    inf.original_point = Some(from);
                }
                events.push(e);
            }
            Finding::MovedStones { from, to } => {
                let mut points = from.clone();
                points.extend(to.iter().copied().filter(|p| !from.contains(p)));
                let conf = 0.7 * Self::min_confidence(stable, &points);
                let message = Say::MovedStones { from: &from, to: &to }.message();
                let e = self.raise(t, EventKind::MovedStone, None, &points, conf, evidence, message, None);
                events.push(e);
            }
            Finding::WrongCapture { side, points } => {
                let conf = 0.8 * Self::min_confidence(stable, &points);
                let message = Say::WrongCapture { side, points: &points }.message();
                let e = self.raise(t, EventKind::WrongCapture, Some(side), &points, conf, evidence, message, None);
                events.push(e);
            }
            Finding::Scattered { points } => {
                let restore: Vec<Restore> = points
                    .iter()
                    .map(|&p| Restore { point: PointRef::of(p), stone: self.record.game.board().get(p).color() })
                    .collect();
                let message = Say::Scattered { points: points.len() }.message();
                let mut e = self.raise(t, EventKind::ScatteredBoard, None, &points, 0.8, evidence, message, None);
                e.restore = restore;
                if let Some(inf) = self.infractions.raised.last_mut() {
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

    pub(super) fn raise_missed_capture(&mut self, t: f64, evidence: &Evidence, why: MissedWhy) -> Vec<Event> {
        let Some(p) = self.physical.pending.take() else { return Vec::new() };
        let points: Vec<Point> = p.points.iter().copied().collect();
        let said = Say::MissedCapture {
            side: p.side,
            move_number: p.move_number,
            points: &points,
            removed_some: p.removed_some,
            why,
        };
        let e = self.raise(t, EventKind::MissedCapture, Some(p.side), &points, 0.9, evidence, said.message(), None);
        vec![e]
    }

    pub(super) fn check_capture_grace(&mut self, t: f64) -> Vec<Event> {
        let overdue = self.physical.pending_overdue(t, self.config.capture_grace_seconds);
        if !overdue || self.phase != Phase::Playing {
            return Vec::new();
        }
        let evidence = self.physical.as_last_seen();
        self.raise_missed_capture(t, &evidence, MissedWhy::StillThere(self.config.capture_grace_seconds))
    }

    pub(super) fn decide(&mut self, t: f64, id: u64, confirm: bool) -> Result<Vec<Event>, ArbiterError> {
        let idx = self.infractions.raised.iter().position(|i| i.id == id).ok_or(ArbiterError::UnknownInfraction(id))?;
        if self.infractions.raised[idx].status != Status::Suspected {
            return Err(ArbiterError::AlreadyDecided(id));
        }
        let inf = self.infractions.raised[idx].clone();
        let mut events = Vec::new();
        let mut outcome = Outcome::Nothing;
        match (inf.kind, confirm) {
            (EventKind::DoubleMove, true) => {
                if let Some(entry) = inf.entry {
                    self.record.strike(entry);
                    self.physical.refresh_acks(self.record.game.board(), Some(AckCause::Infraction(id)));
                    outcome = Outcome::SecondMoveVoid;
                }
            }
            (EventKind::DoubleMove, false) => {
                if let Some(entry) = inf.entry {
                    self.infractions.shift_entries(entry);
                    let side = self.record.insert_pass(entry, t);
                    self.physical.refresh_acks(self.record.game.board(), Some(AckCause::Infraction(id)));
                    outcome = Outcome::PassEntered(side);
                }
            }
            (EventKind::Takeback, true) => {
                if let (Some(entry), Some(_), Some(from)) = (inf.entry, inf.replay_point, inf.original_point) {
                    // The takeback is void: the stone goes back to its first point.
                    self.record.replace_point(entry, from);
                    self.physical.refresh_acks(self.record.game.board(), Some(AckCause::Infraction(id)));
                    outcome = Outcome::StoneBack(from);
                }
            }
            (EventKind::WrongColours, true) => {
                let number = self.move_number();
                outcome = Outcome::WrongColours { number, corrected: self.rulings.rule_wrong_colours(number) };
            }
            _ => {}
        }
        let decided = &mut self.infractions.raised[idx];
        decided.status = if confirm { Status::Confirmed } else { Status::Dismissed };
        decided.event.status = decided.status;
        let status = decided.status;
        let said = Say::Decision { id, confirmed: confirm, infraction: &inf.event.message, outcome };
        let mut e = self.event(t, inf.kind, said.message());
        e.side = inf.side;
        e.points = inf.event.points.clone();
        e.move_number = inf.event.move_number;
        e.infraction = Some(id);
        e.status = status;
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

    pub(super) fn warn(&mut self, t: f64, side: Color, id: u64) -> Vec<Event> {
        let n = self.infractions.warn(side);
        let mut e = self
            .event(t, EventKind::Warning, Say::Warning { side, second: n >= 2 }.message())
            .with_side(Some(side))
            .with_move(Some(self.move_number()));
        e.infraction = Some(id);
        let mut events = vec![e];
        if n >= 2 && self.phase != Phase::Finished {
            let count = count_area(self.record.game.board(), &[]);
            let result =
                GameResult::from_count(&count, Komi { points: self.config.komi_points }, self.infractions.penalties);
            let forms = self.forms(&result);
            self.phase = Phase::Ended;
            events.push(self.publish_result(t, forms));
        }
        events
    }
}
