//! How a game starts: an even game from an empty board, N handicap stones on the standard
//! points (White first), or the board as found. The first stable board is checked against the
//! setup; stones present at the start are never taken for moves.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod common;

use common::{infractions, kinds, moves, only_infraction, Table};
use tengen_referee::{ArbiterAction, EventKind, Phase, Referee, RefereeConfig, StartPosition, Status};
use tengen_rules::Color;
use tengen_rules::BOARD_LINES as SIZE;
use tengen_sgf::GameInfo;

fn table(start: StartPosition) -> Table {
    Table::with_config(RefereeConfig { start, ..RefereeConfig::default() })
}

/// A table whose camera first sees the board with these stones already on it.
fn table_first_seeing(start: StartPosition, stones: &[(&str, char)]) -> (Table, Vec<tengen_referee::Event>) {
    let config = RefereeConfig { start, ..RefereeConfig::default() };
    let mut t = Table { referee: Referee::new(config), t: 0.0, board: vec![vec!['.'; SIZE]; SIZE], events: Vec::new() };
    for &(at, ch) in stones {
        t.put(at, ch);
    }
    let ev = t.show();
    (t, ev)
}

#[test]
fn an_even_game_starts_on_the_empty_board_with_black() {
    let mut t = table(StartPosition::Even);
    assert_eq!(kinds(&t.events), vec![EventKind::Start]);
    assert_eq!(t.state().phase, Phase::Playing);
    t.play("Q16", 'X', &[]);
    t.play("D4", 'O', &[]);
    assert_eq!(moves(&t.events), vec![(Color::Black, "Q16".into()), (Color::White, "D4".into())]);
    assert!(infractions(&t.events).is_empty());
}

/// Five black stones on the first board (the service's bug report).
const FIVE_BLACK: [(&str, char); 5] = [("Q16", 'X'), ("D4", 'X'), ("Q4", 'X'), ("D16", 'X'), ("K10", 'X')];

#[test]
fn stones_present_at_the_start_of_an_even_game_are_one_alert_not_moves() {
    // The service's bug: five black stones on the first frame became five moves and four
    // double-move alerts.
    let stones = FIVE_BLACK;
    let (mut t, ev) = table_first_seeing(StartPosition::Even, &stones);
    assert_eq!(kinds(&ev)[0], EventKind::Start);
    assert!(moves(&ev).is_empty(), "no moves: {:?}", moves(&ev));
    let alert = only_infraction(&ev, EventKind::SetupMismatch, "2");
    assert_eq!(alert.points.len(), 5);
    assert!(alert.message.en.starts_with("5 stones on the board at the start"), "{}", alert.message.en);
    assert!(!kinds(&ev).contains(&EventKind::DoubleMove));
    let st = t.state();
    assert_eq!(st.move_number, 0);
    assert_eq!(st.to_move, Color::Black);
    assert!(st.legal.iter().all(|r| r.chars().all(|c| c == '.')), "the legal board stays empty");
    // The stones stand acknowledged under the alert: play around them raises nothing new.
    let ev = t.play("C3", 'X', &[]);
    assert_eq!(moves(&ev), vec![(Color::Black, "C3".into())]);
    assert!(infractions(&ev).is_empty(), "{:?}", kinds(&ev));
    // Confirmed, the stones are taken off and the two boards agree again.
    t.arbiter(ArbiterAction::Confirm { infraction: alert.infraction.unwrap() });
    assert_eq!(t.state().warnings, tengen_rules::ByColor { black: 0, white: 0 }, "a setup mismatch costs no warning");
    for (at, _) in stones {
        t.put(at, '.');
    }
    let ev = t.show();
    assert!(infractions(&ev).is_empty(), "{:?}", kinds(&ev));
    assert!(t.state().differences.is_empty());
}

#[test]
fn the_arbiter_may_adopt_stones_found_at_the_start_as_the_position() {
    let (mut t, ev) = table_first_seeing(StartPosition::Even, &[("Q16", 'X'), ("D4", 'O'), ("C16", 'X')]);
    only_infraction(&ev, EventKind::SetupMismatch, "2");
    t.arbiter(ArbiterAction::AdoptPhysical);
    assert_eq!(t.state().to_move, Color::White, "more black stones: White moves");
    let ev = t.play("R4", 'O', &[]);
    assert_eq!(moves(&ev), vec![(Color::White, "R4".into())]);
    assert!(infractions(&ev).is_empty());
}

#[test]
fn a_lone_first_stone_is_move_one_and_a_white_one_is_wrong_colours() {
    let (t, ev) = table_first_seeing(StartPosition::Even, &[("Q16", 'X')]);
    assert_eq!(moves(&ev), vec![(Color::Black, "Q16".into())]);
    assert!(infractions(&ev).is_empty());
    assert_eq!(t.state().move_number, 1);
    let (_, ev) = table_first_seeing(StartPosition::Even, &[("Q16", 'O')]);
    only_infraction(&ev, EventKind::WrongColours, "17.1");
    // Also after the empty board was seen.
    let mut t = table(StartPosition::Even);
    let ev = t.play("D4", 'O', &[]);
    only_infraction(&ev, EventKind::WrongColours, "17.1");
}

#[test]
fn a_handicap_game_waits_for_its_stones_then_white_moves_first() {
    let mut t = table(StartPosition::Handicap(4));
    assert!(t.events.is_empty(), "an empty board: the stones are not down yet");
    assert_eq!(t.state().phase, Phase::Waiting);
    // Put down two at a time, with the hand lifted in between: still waiting.
    t.put_expected(&[("Q16", 'X'), ("D4", 'X')]);
    assert_eq!(t.state().phase, Phase::Waiting);
    t.put("Q4", 'X').put("D16", 'X');
    let ev = t.show();
    assert_eq!(kinds(&ev), vec![EventKind::Start]);
    assert_eq!(ev[0].side, Some(Color::White));
    assert_eq!(ev[0].points.len(), 4);
    let st = t.state();
    assert_eq!((st.phase, st.to_move, st.move_number), (Phase::Playing, Color::White, 0));
    assert!(moves(&t.events).is_empty(), "handicap stones are not moves");
    let ev = t.play("R14", 'O', &[]);
    assert_eq!(moves(&ev), vec![(Color::White, "R14".into())]);
    assert!(infractions(&ev).is_empty());
    assert_eq!(t.state().move_number, 1);
    // Black first after the handicap would have been a second black move in a row.
    let mut t = table(StartPosition::Handicap(2));
    t.put("Q16", 'X').put("D4", 'X');
    t.show();
    let ev = t.play("C3", 'X', &[]);
    only_infraction(&ev, EventKind::DoubleMove, "17.2");
}

#[test]
fn handicap_stones_are_recognised_from_any_side_of_the_board() {
    // Two stones on the other diagonal (the camera looks from Black's left).
    let (t, ev) = table_first_seeing(StartPosition::Handicap(2), &[("D16", 'X'), ("Q4", 'X')]);
    assert_eq!(kinds(&ev), vec![EventKind::Start]);
    assert_eq!(t.state().to_move, Color::White);
    // Six stones with the side stones at the top and bottom.
    let six = [("D4", 'X'), ("Q4", 'X'), ("D16", 'X'), ("Q16", 'X'), ("K4", 'X'), ("K16", 'X')];
    let (_, ev) = table_first_seeing(StartPosition::Handicap(6), &six);
    assert_eq!(kinds(&ev), vec![EventKind::Start]);
}

#[test]
fn a_camera_that_starts_late_sees_the_handicap_and_whites_first_move() {
    let (t, ev) = table_first_seeing(StartPosition::Handicap(2), &[("Q16", 'X'), ("D4", 'X'), ("R4", 'O')]);
    assert_eq!(kinds(&ev), vec![EventKind::Start, EventKind::Move]);
    assert_eq!(moves(&ev), vec![(Color::White, "R4".into())]);
    assert!(infractions(&ev).is_empty());
    assert_eq!(t.state().to_move, Color::Black);
}

#[test]
fn handicap_stones_off_the_standard_points_are_for_the_arbiter() {
    let (mut t, ev) = table_first_seeing(StartPosition::Handicap(3), &[("Q16", 'X'), ("D4", 'X'), ("C3", 'X')]);
    let alert = only_infraction(&ev, EventKind::SetupMismatch, "2");
    assert!(moves(&ev).is_empty());
    // The closest standard placement is the legal start; C3 and the missing stone differ.
    let humans: Vec<String> = alert.points.iter().map(|p| p.point.human()).collect();
    assert!(humans.iter().any(|h| h == "C3"), "{humans:?}");
    assert_eq!(humans.len(), 2, "{humans:?}");
    assert_eq!(t.state().to_move, Color::White);
    // The players agreed on this placement: the arbiter adopts it.
    t.arbiter(ArbiterAction::Dismiss { infraction: alert.infraction.unwrap() });
    t.arbiter(ArbiterAction::AdoptPhysical);
    let ev = t.play("R16", 'O', &[]);
    assert_eq!(moves(&ev), vec![(Color::White, "R16".into())]);
    assert!(infractions(&ev).is_empty());
    assert!(t.state().decided_infractions.iter().all(|i| i.status == Status::Dismissed));
}

#[test]
fn adopting_the_board_as_found_takes_any_stones_as_the_start() {
    let stones = FIVE_BLACK;
    let (t, ev) = table_first_seeing(StartPosition::AdoptFirstBoard, &stones);
    assert_eq!(kinds(&ev), vec![EventKind::Start]);
    assert!(infractions(&ev).is_empty());
    assert_eq!(t.state().to_move, Color::White);
}

#[test]
fn starts_are_written_and_read_as_people_type_them() {
    for (text, start) in [
        ("even", StartPosition::Even),
        ("adopt", StartPosition::AdoptFirstBoard),
        ("handicap:4", StartPosition::Handicap(4)),
    ] {
        assert_eq!(text.parse::<StartPosition>(), Ok(start));
        assert_eq!(start.to_string(), text);
    }
    assert_eq!("H9".parse::<StartPosition>(), Ok(StartPosition::Handicap(9)));
    assert_eq!("3".parse::<StartPosition>(), Ok(StartPosition::Handicap(3)));
    assert!("handicap:1".parse::<StartPosition>().is_err());
    assert!("handicap:10".parse::<StartPosition>().is_err());
    assert!("uneven".parse::<StartPosition>().is_err());
    assert!(StartPosition::Handicap(12).checked().is_err());
    // JSON as the service and the configuration write it; the old name of an even start reads.
    assert_eq!(serde_json::to_string(&StartPosition::Handicap(4)).unwrap(), r#"{"handicap":4}"#);
    assert_eq!(serde_json::from_str::<StartPosition>(r#""empty""#).unwrap(), StartPosition::Even);
    assert_eq!(serde_json::from_str::<StartPosition>(r#""adopt""#).unwrap(), StartPosition::AdoptFirstBoard);
}

#[test]
fn the_record_says_how_the_game_started() {
    // The one record writer (`tengen replay` and the service): handicap stones are the setup,
    // HA and White first; an even game's stray stones are neither setup nor moves.
    let mut t = table(StartPosition::Handicap(4));
    t.put("Q16", 'X').put("D4", 'X').put("Q4", 'X').put("D16", 'X');
    t.show();
    t.play("R14", 'O', &[]);
    let rec = t.referee.game_record(&t.events, &GameInfo::default());
    assert_eq!((rec.info.handicap, rec.first_player, rec.setup_black.len()), (Some(4), Some(Color::White), 4));
    assert_eq!(rec.moves.len(), 1);
    assert_eq!(rec.moves[0].color, Color::White);
    let paired =
        GameInfo { handicap: Some(4), round: Some("3".into()), black_rank: Some("2k".into()), ..GameInfo::default() };
    let sgf = tengen_sgf::write_game(&t.referee.game_record(&t.events, &paired));
    assert!(sgf.contains("HA[4]") && sgf.contains("RO[3]") && sgf.contains("BR[2k]") && sgf.contains("PL[W]"), "{sgf}");

    let stones = [("Q16", 'X'), ("D4", 'X'), ("K10", 'X')];
    let (t, _) = table_first_seeing(StartPosition::Even, &stones);
    let rec = t.referee.game_record(&t.events, &GameInfo::default());
    assert!(rec.setup_black.is_empty() && rec.moves.is_empty() && rec.info.handicap.is_none());
    assert!(rec.root_comment.as_deref().is_some_and(|c| c.contains("setup_mismatch")), "{:?}", rec.root_comment);
}
