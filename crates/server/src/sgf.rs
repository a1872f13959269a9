//! The live game record as SGF FF[4]: the legal moves, with the game's events (infractions,
//! arbiter decisions, camera trouble) as comments on the move they concern.
//! Written by the project's SGF writer (`tengen-sgf`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use tengen_rules::{Move, Point};
use tengen_sgf::{GameRecord, RecordedMove};

use crate::model::{GameView, StoredEvent};
use crate::store::GameRow;

/// The UTC calendar date (YYYY-MM-DD) of a time in ms since the epoch.
pub fn utc_date(ms: i64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let days = ms.div_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

/// Writes the record of a game with the project's SGF writer (`tengen-sgf`), so what the
/// service serves reads back with `tengen sgf check` into the same record.
pub fn write_sgf(game: &GameRow, table_name: &str, view: &GameView, events: &[StoredEvent]) -> String {
    // Comments per node: 0 is the root, n is the node of move n.
    let mut comments: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut current = 0usize;
    for stored in events {
        let e = &stored.event;
        if e.kind == "move" {
            if let Some(n) = e.move_number {
                current = usize::try_from(n).unwrap_or(current);
            }
            continue;
        }
        let node = e.move_number.map_or(current, |n| usize::try_from(n).unwrap_or(current));
        let node = node.min(view.moves.len());
        let mut line = String::new();
        if let Some(article) = &e.article {
            let _ = write!(line, "[{article}] ");
        }
        line.push_str(&e.summary);
        comments.entry(node).or_default().push(line);
    }
    let size = tengen_rules::MAX_BOARD_SIZE;
    let mut record = GameRecord::new(size, size);
    record.komi = Some(game.komi);
    record.rules = Some("Chinese".into());
    record.result.clone_from(&view.result);
    record.date = Some(utc_date(game.started_ms));
    // Wrong colours after move 10 stand (Art. 17.1): the record names who played which colour.
    let (black, white) = if view.players_swapped { (&game.white, &game.black) } else { (&game.black, &game.white) };
    record.black_name.clone_from(black);
    record.white_name.clone_from(white);
    record.game_name = Some(format!("{table_name}, game {}", game.id));
    record.root_comment = comments.get(&0).map(|c| c.join("\n"));
    for (i, mv) in view.moves.iter().enumerate() {
        let node = i + 1;
        let mut text = comments.get(&node).cloned().unwrap_or_default();
        if node == view.moves.len() && !view.dead.is_empty() {
            text.push(format!("Dead stones: {}", view.dead.join(" ")));
        }
        let point = mv.point.as_deref().and_then(|p| Point::from_sgf(p, size, size).ok());
        record.moves.push(RecordedMove {
            color: mv.colour,
            mv: point.map_or(Move::Pass, Move::Place),
            comment: (!text.is_empty()).then(|| text.join("\n")),
        });
    }
    tengen_sgf::write_game(&record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RecordMove, RefereeEvent, Severity};
    use tengen_rules::Color;

    #[test]
    fn dates_and_escapes() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(1_795_000_000_000), "2026-11-18");
    }

    #[test]
    fn events_become_comments_on_their_moves() {
        let game = GameRow {
            id: 3,
            table: "1".into(),
            komi: 7.5,
            started_ms: 0,
            black: Some("Ke]Jie".into()),
            white: None,
        };
        let view = GameView {
            legal: ".".repeat(361),
            physical: ".".repeat(361),
            moves: vec![
                RecordMove { number: 1, colour: Color::Black, point: Some("pd".into()) },
                RecordMove { number: 2, colour: Color::White, point: None },
            ],
            to_move: Color::Black,
            open_alerts: vec![],
            warnings: Default::default(),
            captures: Default::default(),
            dead: vec![],
            phase: "playing".into(),
            result: Some("B+R".into()),
            players_swapped: false,
        };
        let ev = |kind: &str, n: Option<u32>, article: Option<&str>| StoredEvent {
            id: 1,
            table: "1".into(),
            game: 3,
            at_ms: 0,
            evidence: false,
            event: RefereeEvent {
                kind: kind.into(),
                article: article.map(Into::into),
                severity: Severity::Alert,
                alert_id: None,
                move_number: n,
                summary: format!("{kind} here"),
                detail: serde_json::Value::Null,
            },
        };
        let events = [
            ev("camera_lost", None, None),
            ev("move", Some(1), None),
            ev("infraction_suspected", Some(1), Some("Art. 18.2")),
        ];
        let sgf = write_sgf(&game, "Table 1", &view, &events);
        assert!(sgf.starts_with("(;FF[4]GM[1]"), "{sgf}");
        assert!(sgf.contains("RU[Chinese]") && sgf.contains("KM[7.5]"), "{sgf}");
        assert!(sgf.contains("PB[Ke\\]Jie]"));
        assert!(sgf.contains("RE[B+R]"));
        assert!(sgf.contains("C[camera_lost here]"));
        assert!(sgf.contains(";B[pd]C[[Art. 18.2\\] infraction_suspected here]"), "{sgf}");
        assert!(sgf.contains(";W[]"));
        assert!(sgf.trim_end().ends_with(')'));
    }
}
