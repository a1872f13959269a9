//! The game record as SGF (FF[4]): the one writer `tengen replay` and the service share.
//! The referee's record (setup stones and resyncs, moves, void moves as passes, struck moves)
//! with the players, the date and the result, and every event that is not a move as a comment
//! on the move it concerns.

use std::collections::BTreeMap;

use tengen_rules::{Move, Stone, MAX_BOARD_SIZE};
use tengen_sgf::{GameInfo, GameRecord, RecordedMove};

use crate::event::{Event, EventKind, Status};
use crate::referee::{RecordAction, Referee, StartPosition};

/// One comment line for an event: its kind, its infraction id and status, its article and the
/// English message, e.g. `missed_capture #1 [suspected] (Art. 18.2): …`.
pub fn comment_line(e: &Event) -> String {
    let article = e.article.as_deref().map(|a| format!(" (Art. {a})")).unwrap_or_default();
    let id = e.infraction.map(|i| format!(" #{i}")).unwrap_or_default();
    let status = match (e.kind.is_infraction(), e.status) {
        (false, _) | (_, Status::Info) => "",
        (true, Status::Suspected) => " [suspected]",
        (true, Status::Confirmed) => " [confirmed]",
        (true, Status::Dismissed) => " [dismissed]",
    };
    format!("{}{id}{status}{article}: {}", e.kind.name(), e.message.en)
}

impl Referee {
    /// The game record of everything the referee has seen, with `events` (what it published,
    /// in order) as comments. `info` is the game information as the organiser gives it: its
    /// Black and White are the organiser's (after wrong colours found past move 10 the record
    /// names each as the colour they played, Art. 17.1); without a handicap, a handicap start
    /// gives its stone count; without a result, the counted one is written.
    pub fn game_record(&self, events: &[Event], info: &GameInfo) -> GameRecord {
        let size = MAX_BOARD_SIZE;
        let state = self.state();
        let mut rec = GameRecord::new(size, size);
        rec.komi = Some(self.config().komi_points);
        rec.rules = Some("Chinese".into());
        rec.info = info.clone();
        // Wrong colours after move 10 stand (Art. 17.1): the record names who played which colour.
        if state.players_swapped {
            std::mem::swap(&mut rec.info.black_name, &mut rec.info.white_name);
            std::mem::swap(&mut rec.info.black_rank, &mut rec.info.white_rank);
        }
        rec.info.handicap = info.handicap.or(match self.config().start {
            StartPosition::Handicap(n) => Some(n),
            _ => None,
        });
        let (start, first) = self.start_position();
        for (p, stone) in start.iter() {
            match stone {
                Stone::Of(tengen_rules::Color::Black) => rec.setup_black.push(p),
                Stone::Of(tengen_rules::Color::White) => rec.setup_white.push(p),
                Stone::Empty => {}
            }
        }
        if !start.is_empty() {
            rec.first_player = Some(first);
        }
        // Comments by move number (0: the root): everything but the moves themselves.
        let mut notes: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for e in events.iter().filter(|e| !matches!(e.kind, EventKind::Move | EventKind::Capture)) {
            notes.entry(e.move_number.unwrap_or(0)).or_default().push(comment_line(e));
        }
        rec.root_comment = notes.remove(&0).map(|n| n.join("\n"));
        let mut carried: Vec<String> = Vec::new();
        for entry in self.record() {
            if entry.struck {
                carried.push(format!("move {} struck from the record by the arbiter", entry.number));
                continue;
            }
            let mv = match &entry.action {
                RecordAction::Place { point } => Move::Place(*point),
                RecordAction::Pass => Move::Pass,
                RecordAction::Void { point, reason } => {
                    carried.push(format!("void move at {} ({reason:?}): counts as a pass", point.human()));
                    Move::Pass
                }
                RecordAction::Setup { missed, .. } => {
                    // FF[4] readers of this project refuse setup after the first move: say it instead.
                    carried.push(format!(
                        "resync: about {missed} moves were not seen; the board as seen was adopted here"
                    ));
                    continue;
                }
                RecordAction::Turn => continue,
            };
            let mut comment: Vec<String> = std::mem::take(&mut carried);
            comment.extend(notes.remove(&entry.number).unwrap_or_default());
            rec.moves.push(RecordedMove {
                color: entry.side,
                mv,
                comment: (!comment.is_empty()).then(|| comment.join("\n")),
            });
        }
        // Notes on moves past the record's end (a game end, dead stones, the result) go on the
        // last move.
        let mut rest: Vec<String> = carried;
        rest.extend(notes.into_values().flatten());
        if !state.dead.is_empty() {
            rest.push(format!(
                "Dead stones: {}",
                state.dead.iter().map(|p| p.point.to_sgf()).collect::<Vec<_>>().join(" ")
            ));
        }
        if !rest.is_empty() {
            match rec.moves.last_mut() {
                Some(last) => {
                    let mut text: Vec<String> = last.comment.take().into_iter().collect();
                    text.extend(rest);
                    last.comment = Some(text.join("\n"));
                }
                None => {
                    let mut text: Vec<String> = rec.root_comment.take().into_iter().collect();
                    text.extend(rest);
                    rec.root_comment = Some(text.join("\n"));
                }
            }
        }
        rec.info.result = info.result.clone().or_else(|| state.result.map(|r| r.points));
        rec
    }
}
