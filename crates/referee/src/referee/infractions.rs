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
        let mut e = self.event(t, kind, message).with_side(side).with_points(points).with_move(Some(self.move_number()));
        e.infraction = Some(id);
        e.confidence = confidence.clamp(0.0, 1.0);
        e.evidence = Some(evidence.clone());
        e.ruling = kind.ruling();
        self.infractions.push(Infraction { id, kind, side, status: Status::Suspected, entry, replay_point: None, original_point: None, event: e.clone() });
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
                let h = from.human();
                let entry = self.record.iter().rposition(|e| !e.struck && e.action == RecordAction::Place { point: from });
                let (en, zh) = match to {
                    Some(p) => {
                        let ph = p.human();
                        // Art. 17.3: the claim must come before the opponent's next move; until the
                        // arbiter confirms, the game goes on from the stone where it now stands.
                        if let Some(i) = entry {
                            self.record[i].action = RecordAction::Place { point: p };
                            self.rebuild();
                        }
                        (
                            format!("{} lifted the stone at {h} and played it at {ph} before the opponent moved: a takeback. The move is recorded at {ph} unless the arbiter confirms (then the stone goes back to {h} and {} is warned).", side.title(), side.name()),
                            format!("{}將{h}的棋子拿起改下在{ph}：悔棋。裁判確認前該手記為{ph}；確認則棋子放回{h}並警告。", side.chinese()),
                        )
                    }
                    None => (format!("{} lifted the stone just played at {h}: a takeback.", side.title()), format!("{}拿起剛下的{h}棋子：悔棋。", side.chinese())),
                };
                let conf = 0.7 * Self::min_confidence(stable, &points);
                let e = self.raise(t, EventKind::Takeback, Some(side), &points, conf, evidence, Message::new(en, zh), entry);
                if let Some(inf) = self.infractions.last_mut() {
                    inf.replay_point = to;
                    inf.original_point = Some(from);
                }
                events.push(e);
            }
            Finding::MovedStones { from, to } => {
                let mut points = from.clone();
                points.extend(to.iter().copied().filter(|p| !from.contains(p)));
                let (en, zh) = if to.is_empty() {
                    (format!("{} missing from {} without a capture: moved or removed.", if from.len() == 1 { "A stone" } else { "Stones" }, refs(&from)), format!("{}的棋子未經提取而消失：被移動或拿走。", refs(&from)))
                } else if from == to {
                    (format!("{} at {} changed colour.", if from.len() == 1 { "The stone" } else { "Stones" }, refs(&from)), format!("{}的棋子顏色改變。", refs(&from)))
                } else {
                    (format!("{} moved from {} to {}.", if from.len() == 1 { "A stone" } else { "Stones" }, refs(&from), refs(&to)), format!("棋子從{}移到{}。", refs(&from), refs(&to)))
                };
                let conf = 0.7 * Self::min_confidence(stable, &points);
                let e = self.raise(t, EventKind::MovedStone, None, &points, conf, evidence, Message::new(en, zh), None);
                events.push(e);
            }
            Finding::WrongCapture { side, points } => {
                let conf = 0.8 * Self::min_confidence(stable, &points);
                let (en, zh) = (
                    format!("{} removed stones that still have liberties: {}.", side.title(), refs(&points)),
                    format!("{}誤提有氣之子：{}。", side.chinese(), refs(&points)),
                );
                let e = self.raise(t, EventKind::WrongCapture, Some(side), &points, conf, evidence, Message::new(en, zh), None);
                events.push(e);
            }
            Finding::Scattered { points } => {
                let restore: Vec<Restore> = points.iter().map(|&p| Restore { point: PointRef::of(p), stone: self.game.board().get(p).color() }).collect();
                let n = points.len();
                let (en, zh) = (
                    format!("{n} points disturbed at once: the board is scattered. Restore it from the record (list attached)."),
                    format!("{n}處棋子同時被擾亂：棋局散亂，請按記錄復盤（附清單）。"),
                );
                let mut e = self.raise(t, EventKind::ScatteredBoard, None, &points, 0.8, evidence, Message::new(en, zh), None);
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

    pub(super) fn raise_missed_capture(&mut self, t: f64, evidence: &Evidence, why: &str) -> Vec<Event> {
        let Some(p) = self.pending.take() else { return Vec::new() };
        let points: Vec<Point> = p.points.iter().copied().collect();
        let partly = if p.removed_some { "only partly removed" } else { "not removed" };
        let (stones, are) = if points.len() == 1 { ("the stone", "is") } else { ("the stones", "are") };
        let (en, zh) = (
            format!("{} captured at move {} but {stones} {} {are} {partly} ({why}).", p.side.title(), p.move_number, refs(&points)),
            format!("{}第{}手提子，但{}{}。", p.side.chinese(), p.move_number, refs(&points), if p.removed_some { "漏提" } else { "未提" }),
        );
        let e = self.raise(t, EventKind::MissedCapture, Some(p.side), &points, 0.9, evidence, Message::new(en, zh), None);
        vec![e]
    }

    pub(super) fn check_capture_grace(&mut self, t: f64) -> Vec<Event> {
        let overdue = self.pending.as_ref().is_some_and(|p| t - p.since > self.config.capture_grace_seconds);
        if !overdue || self.phase != Phase::Playing {
            return Vec::new();
        }
        let evidence = Evidence { before: None, after: self.physical_sighting.clone() };
        let why = format!("still there after {:.0} s", self.config.capture_grace_seconds);
        self.raise_missed_capture(t, &evidence, &why)
    }

    pub(super) fn decide(&mut self, t: f64, id: u64, confirm: bool) -> Result<Vec<Event>, ArbiterError> {
        let idx = self.infractions.iter().position(|i| i.id == id).ok_or(ArbiterError::UnknownInfraction(id))?;
        if self.infractions[idx].status != Status::Suspected {
            return Err(ArbiterError::AlreadyDecided(id));
        }
        let inf = self.infractions[idx].clone();
        let mut events = Vec::new();
        let mut note_en = String::new();
        let mut note_zh = String::new();
        match (inf.kind, confirm) {
            (EventKind::DoubleMove, true) => {
                if let Some(entry) = inf.entry {
                    self.record[entry].struck = true;
                    self.rebuild();
                    self.refresh_acks(Some(AckCause::Infraction(id)));
                    note_en = " The second move is void: remove the stone.".into();
                    note_zh = "第二著無效，請取走該子。".into();
                }
            }
            (EventKind::DoubleMove, false) => {
                if let Some(entry) = inf.entry {
                    let side = self.record[entry].side.opponent();
                    self.record.insert(entry, RecordEntry { number: 0, side, action: RecordAction::Pass, t, captured: Vec::new(), struck: false });
                    for other in &mut self.infractions {
                        if let Some(e) = other.entry.as_mut() {
                            if *e >= entry {
                                *e += 1;
                            }
                        }
                    }
                    self.rebuild();
                    self.refresh_acks(Some(AckCause::Infraction(id)));
                    note_en = format!(" An unrecorded pass by {} is entered before the move.", side.name());
                    note_zh = format!("記錄{}方虛著一次。", side.chinese());
                }
            }
            (EventKind::Takeback, true) => {
                if let (Some(entry), Some(_), Some(from)) = (inf.entry, inf.replay_point, inf.original_point) {
                    // The takeback is void: the stone goes back to its first point.
                    self.record[entry].action = RecordAction::Place { point: from };
                    self.rebuild();
                    self.refresh_acks(Some(AckCause::Infraction(id)));
                    note_en = format!(" The stone goes back to {}.", from.human());
                    note_zh = format!("棋子放回{}。", from.human());
                }
            }
            (EventKind::WrongColours, true) => {
                let (en, zh) = self.rule_wrong_colours(self.move_number());
                note_en = format!(" {en}");
                note_zh = zh;
            }
            _ => {}
        }
        self.infractions[idx].status = if confirm { Status::Confirmed } else { Status::Dismissed };
        self.infractions[idx].event.status = self.infractions[idx].status;
        let verdict = if confirm { ("confirmed", "確認") } else { ("dismissed", "駁回") };
        let mut e = self.event(
            t,
            inf.kind,
            Message::new(format!("Arbiter {} infraction {id}: {}{note_en}", verdict.0, inf.event.message.en), format!("裁判{}第{id}號違規：{}{note_zh}", verdict.1, inf.event.message.zh)),
        );
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
        let (en, zh) = if n >= 2 {
            (format!("Second warning for {}: the game is lost (Art. 24.2).", side.name()), format!("{}方第二次警告，判負（第24條2款）。", side.chinese()))
        } else {
            (format!("Warning for {}: one stone is deducted at counting (Art. 24.1).", side.name()), format!("{}方警告一次，計算勝負時罰出一子（第24條1款）。", side.chinese()))
        };
        let mut e = self.event(t, EventKind::Warning, Message::new(en, zh)).with_side(Some(side)).with_move(Some(self.move_number()));
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
