//! Infractions and acknowledgements: raising a suspected infraction with its evidence, the
//! points whose physical difference is acknowledged (pending captures, open infractions,
//! corrections), the capture grace, and the arbiter's confirm or dismiss with its warnings.

use super::*;

impl Referee {
    /// Drops acknowledgements the board now satisfies; with `cause`, acknowledges every new
    /// difference under it (after a ruling changed the legal board).
    pub(super) fn refresh_acks(&mut self, cause: Option<AckCause>) {
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

    pub(super) fn acked_map(&self) -> BTreeMap<usize, Stone> {
        self.acks.iter().map(|(&i, a)| (i, a.physical)).collect()
    }

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
        let id = self.infractions.len() as u64 + 1;
        let mut e =
            self.event(t, kind, message).with_side(side).with_points(points).with_move(Some(self.move_number()));
        e.infraction = Some(id);
        e.confidence = confidence.clamp(0.0, 1.0);
        e.evidence = Some(evidence.clone());
        e.ruling = kind.ruling();
        self.infractions.push(Infraction {
            id,
            kind,
            side,
            status: Status::Suspected,
            entry,
            replay_point: None,
            original_point: None,
            event: e.clone(),
        });
        for &p in points {
            if self.physical.get(p) != self.game.board().get(p) {
                self.acks.insert(p.index(), Ack { physical: self.physical.get(p), cause: AckCause::Infraction(id) });
            }
        }
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
                let entry =
                    self.record.iter().rposition(|e| !e.struck && e.action == RecordAction::Place { point: from });
                if let (Some(p), Some(i)) = (to, entry) {
                    // Art. 17.3: the claim must come before the opponent's next move; until the
                    // arbiter confirms, the game goes on from the stone where it now stands.
                    self.record[i].action = RecordAction::Place { point: p };
                    self.rebuild();
                }
                let conf = 0.7 * Self::min_confidence(stable, &points);
                let message = Say::Takeback { side, from, to }.message();
                let e = self.raise(t, EventKind::Takeback, Some(side), &points, conf, evidence, message, entry);
                if let Some(inf) = self.infractions.last_mut() {
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
                    .map(|&p| Restore { point: PointRef::of(p), stone: self.game.board().get(p).color() })
                    .collect();
                let message = Say::Scattered { points: points.len() }.message();
                let mut e = self.raise(t, EventKind::ScatteredBoard, None, &points, 0.8, evidence, message, None);
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

    pub(super) fn raise_missed_capture(&mut self, t: f64, evidence: &Evidence, why: MissedWhy) -> Vec<Event> {
        let Some(p) = self.pending.take() else { return Vec::new() };
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
        let overdue = self.pending.as_ref().is_some_and(|p| t - p.since > self.config.capture_grace_seconds);
        if !overdue || self.phase != Phase::Playing {
            return Vec::new();
        }
        let evidence = Evidence { before: None, after: self.physical_sighting.clone() };
        self.raise_missed_capture(t, &evidence, MissedWhy::StillThere(self.config.capture_grace_seconds))
    }

    pub(super) fn decide(&mut self, t: f64, id: u64, confirm: bool) -> Result<Vec<Event>, ArbiterError> {
        let idx = self.infractions.iter().position(|i| i.id == id).ok_or(ArbiterError::UnknownInfraction(id))?;
        if self.infractions[idx].status != Status::Suspected {
            return Err(ArbiterError::AlreadyDecided(id));
        }
        let inf = self.infractions[idx].clone();
        let mut events = Vec::new();
        let mut outcome = Outcome::Nothing;
        match (inf.kind, confirm) {
            (EventKind::DoubleMove, true) => {
                if let Some(entry) = inf.entry {
                    self.record[entry].struck = true;
                    self.rebuild();
                    self.refresh_acks(Some(AckCause::Infraction(id)));
                    outcome = Outcome::SecondMoveVoid;
                }
            }
            (EventKind::DoubleMove, false) => {
                if let Some(entry) = inf.entry {
                    let side = self.record[entry].side.opponent();
                    self.record.insert(
                        entry,
                        RecordEntry {
                            number: 0,
                            side,
                            action: RecordAction::Pass,
                            t,
                            captured: Vec::new(),
                            struck: false,
                        },
                    );
                    for other in &mut self.infractions {
                        if let Some(e) = other.entry.as_mut() {
                            if *e >= entry {
                                *e += 1;
                            }
                        }
                    }
                    self.rebuild();
                    self.refresh_acks(Some(AckCause::Infraction(id)));
                    outcome = Outcome::PassEntered(side);
                }
            }
            (EventKind::Takeback, true) => {
                if let (Some(entry), Some(_), Some(from)) = (inf.entry, inf.replay_point, inf.original_point) {
                    // The takeback is void: the stone goes back to its first point.
                    self.record[entry].action = RecordAction::Place { point: from };
                    self.rebuild();
                    self.refresh_acks(Some(AckCause::Infraction(id)));
                    outcome = Outcome::StoneBack(from);
                }
            }
            (EventKind::WrongColours, true) => {
                let number = self.move_number();
                outcome = Outcome::WrongColours { number, corrected: self.rule_wrong_colours(number) };
            }
            _ => {}
        }
        self.infractions[idx].status = if confirm { Status::Confirmed } else { Status::Dismissed };
        self.infractions[idx].event.status = self.infractions[idx].status;
        let said = Say::Decision { id, confirmed: confirm, infraction: &inf.event.message, outcome };
        let mut e = self.event(t, inf.kind, said.message());
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

    pub(super) fn warn(&mut self, t: f64, side: Color, id: u64) -> Vec<Event> {
        self.penalties.warnings[side] += 1;
        let n = self.penalties.warnings[side];
        let mut e = self
            .event(t, EventKind::Warning, Say::Warning { side, second: n >= 2 }.message())
            .with_side(Some(side))
            .with_move(Some(self.move_number()));
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
}
