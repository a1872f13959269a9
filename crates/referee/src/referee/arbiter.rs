//! The arbiter's actions: passes, the end of play, dead stones and the count, wrong colours
//! (Art. 17.1), corrections and the turn, and the result published.

use super::*;

/// The arbiter's rulings the record does not hold: the players' colours (Art. 17.1), the dead
/// stones and the result.
#[derive(Debug, Clone, Default)]
pub(super) struct Rulings {
    /// Wrong colours found within move 10: the game restarts with the organiser's colours.
    pub(super) colours_corrected: bool,
    /// Wrong colours found after move 10: the game stands, the players' colours swapped.
    pub(super) players_swapped: bool,
    pub(super) dead: BTreeSet<Point>,
    pub(super) result: Option<ResultForms>,
}

impl Rulings {
    /// Art. 17.1: up to and including move 10 the colours are corrected (the game restarts with
    /// the organiser's colours); after it the game stands and the record names who played
    /// which colour. Returns whether the colours are to be corrected.
    pub(super) fn rule_wrong_colours(&mut self, number: u32) -> bool {
        let corrected = number <= 10;
        if corrected {
            self.colours_corrected = true;
        } else {
            self.players_swapped = true;
        }
        corrected
    }

    /// Marks the chain of `point` dead, or alive again if it was marked.
    pub(super) fn toggle_dead(&mut self, point: Point, chain: Vec<Point>) {
        if self.dead.contains(&point) {
            for q in chain {
                self.dead.remove(&q);
            }
        } else {
            self.dead.extend(chain);
        }
    }

    pub(super) fn dead_points(&self) -> Vec<Point> {
        self.dead.iter().copied().collect()
    }
}

impl Referee {
    /// Applies an arbiter action at time `t`.
    pub fn arbiter(&mut self, t: f64, action: &ArbiterAction) -> Result<Vec<Event>, ArbiterError> {
        let t = self.time(t);
        match action {
            ArbiterAction::Confirm { infraction } => self.decide(t, *infraction, true),
            ArbiterAction::Dismiss { infraction } => self.decide(t, *infraction, false),
            ArbiterAction::Pass { side } => {
                if self.phase != Phase::Playing {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                self.record.to_move_uncertain = false;
                let number = self.record.pass(*side, RecordAction::Pass, t);
                let e = self
                    .event(t, EventKind::Pass, Say::Pass { side: *side, number }.message())
                    .with_side(Some(*side))
                    .with_move(Some(number));
                let mut events = vec![e];
                if self.record.game.consecutive_passes() >= 2 {
                    events.extend(self.end_play(t, PlayOver::BothPassed));
                }
                Ok(events)
            }
            ArbiterAction::EndGame { resigned } => {
                if !matches!(self.phase, Phase::Playing | Phase::Waiting) {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                match resigned {
                    Some(loser) => {
                        let winner = loser.opponent();
                        let (exact, customary) = resignation(winner);
                        let forms = ResultForms {
                            exact,
                            points: format!("{}+R", winner.sgf_letter()),
                            customary,
                            winner: Some(winner),
                            black_count: None,
                            komi_points: self.config.komi_points,
                            warnings: self.infractions.penalties.warnings,
                        };
                        let mut events = self.end_play(t, PlayOver::Resigned(*loser));
                        events.push(self.publish_result(t, forms));
                        Ok(events)
                    }
                    None => Ok(self.end_play(t, PlayOver::Agreed)),
                }
            }
            ArbiterAction::MarkDead { points } => {
                if self.phase != Phase::Ended {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                for &p in points {
                    let chain = self.record.game.board().chain(p);
                    if !chain.is_empty() {
                        self.rulings.toggle_dead(p, chain);
                    }
                }
                let dead = self.rulings.dead_points();
                let e =
                    self.event(t, EventKind::DeadStones, Say::DeadStones { dead: &dead }.message()).with_points(&dead);
                Ok(vec![e])
            }
            ArbiterAction::Count => {
                if !matches!(self.phase, Phase::Ended | Phase::Finished) {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                let dead = self.rulings.dead_points();
                let count = count_area(self.record.game.board(), &dead);
                let result = GameResult::from_count(
                    &count,
                    Komi { points: self.config.komi_points },
                    self.infractions.penalties,
                );
                let forms = self.forms(&result);
                Ok(vec![self.publish_result(t, forms)])
            }
            ArbiterAction::AdoptPhysical => {
                // While waiting (handicap stones placed off the standard points), adopting the
                // board as found is how the arbiter starts the game.
                if !matches!(self.phase, Phase::Playing | Phase::Waiting) {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                self.phase = Phase::Playing;
                let evidence = self.physical.as_last_seen();
                Ok(self.resync(t, 0, &evidence, true))
            }
            ArbiterAction::SetToMove { side } => {
                if self.phase != Phase::Playing {
                    return Err(ArbiterError::WrongPhase(self.phase_name()));
                }
                self.record.set_turn(*side, t);
                Ok(Vec::new())
            }
            ArbiterAction::CorrectMove { number, point } => self.correct_move(t, *number, *point),
            ArbiterAction::WrongColours => {
                if self.rulings.colours_corrected || self.rulings.players_swapped {
                    return Err(ArbiterError::ColoursAlreadyRuled);
                }
                // The referee's own alert (a white first stone), if open, is what is answered.
                match self.infractions.open_of(EventKind::WrongColours) {
                    Some(open) => self.decide(t, open.id, true),
                    None => Ok(vec![self.wrong_colours_ruled(t)]),
                }
            }
        }
    }

    /// The arbiter's finding that the players hold the wrong colours, ruled by Art. 17.1.
    pub(super) fn wrong_colours_ruled(&mut self, t: f64) -> Event {
        let number = self.move_number();
        let corrected = self.rulings.rule_wrong_colours(number);
        let mut e = self
            .event(t, EventKind::WrongColours, Say::WrongColours { number, corrected }.message())
            .with_move(Some(number));
        e.status = Status::Confirmed;
        e.confidence = 1.0;
        e
    }

    pub(super) fn phase_name(&self) -> &'static str {
        match self.phase {
            Phase::Waiting => "waiting",
            Phase::Playing => "playing",
            Phase::Ended => "ended",
            Phase::Finished => "finished",
        }
    }

    pub(super) fn forms(&self, result: &GameResult) -> ResultForms {
        ResultForms {
            exact: result.exact(),
            points: result.points(),
            customary: result.customary(),
            winner: result.winner,
            black_count: Some(result.black_count),
            komi_points: self.config.komi_points,
            warnings: self.infractions.penalties.warnings,
        }
    }

    pub(super) fn publish_result(&mut self, t: f64, forms: ResultForms) -> Event {
        self.phase = Phase::Finished;
        self.rulings.result = Some(forms.clone());
        let mut e = self.event(t, EventKind::Result, Say::Result { forms: &forms }.message());
        e.side = forms.winner;
        e.move_number = Some(self.move_number());
        e.result = Some(forms);
        e
    }

    pub(super) fn end_play(&mut self, t: f64, why: PlayOver) -> Vec<Event> {
        self.phase = Phase::Ended;
        self.physical.pending = None;
        let suggestion = suggest_dead(self.record.game.board());
        let mut e = self.event(t, EventKind::GameEnd, Say::PlayOver { why }.message());
        e.move_number = Some(self.move_number());
        e.suggested_dead = suggestion.dead_stones.iter().map(|&p| PointRef::of(p)).collect();
        vec![e]
    }
}
