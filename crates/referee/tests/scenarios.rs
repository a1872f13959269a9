//! One scenario per infraction kind (and the ordinary flow), from sequences of boards shown the
//! way a camera shows them: a hand, then clear frames. Each scenario checks the moves, the
//! article raised, and that nothing else was raised.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod common;

use common::{infractions, kinds, moves, only_infraction, p, points_of, Table};
use tengen_referee::{
    ArbiterAction, ArbiterError, DifferenceCause, EventKind, Input, Observation, RecordAction, Referee, RefereeConfig,
    Status,
};
use tengen_rules::{ByColor, Color};

#[test]
fn ordinary_moves_and_a_capture_lifted_over_two_views_raise_nothing() {
    let mut t = Table::new();
    t.play_atari_on_d5();
    // D6 captures D5; the capturer lifts it in a second view.
    let ev = t.play("D6", 'X', &[]);
    assert!(kinds(&ev).contains(&EventKind::Capture), "{:?}", kinds(&ev));
    let st = t.state();
    assert_eq!(st.differences.len(), 1, "the captured stone is pending, visible as a difference");
    assert_eq!(st.differences[0].point.point.human(), "D5");
    t.put("D5", '.');
    t.show();
    assert!(t.state().differences.is_empty());
    t.play("S16", 'O', &[]);
    assert_eq!(
        moves(&t.events),
        vec![
            (Color::Black, "D4".into()),
            (Color::White, "D5".into()),
            (Color::Black, "C5".into()),
            (Color::White, "Q16".into()),
            (Color::Black, "E5".into()),
            (Color::White, "R16".into()),
            (Color::Black, "D6".into()),
            (Color::White, "S16".into()),
        ]
    );
    assert!(infractions(&t.events).is_empty(), "{:#?}", infractions(&t.events));
    assert_eq!(t.state().captures, ByColor::new(1, 0));
}

#[test]
fn wrong_colours_article_17_1() {
    let mut t = Table::new();
    let ev = t.play("Q16", 'O', &[]);
    let e = only_infraction(&ev, EventKind::WrongColours, "17.1");
    assert_eq!(e.side, Some(Color::White));
    assert_eq!(moves(&ev), vec![(Color::White, "Q16".into())]);
    let ev = t.play("D4", 'X', &[]);
    assert!(infractions(&ev).is_empty(), "play goes on alternating");
    let ev = t.arbiter(ArbiterAction::Confirm { infraction: e.infraction.expect("id") });
    assert_eq!(ev[0].status, Status::Confirmed);
    assert!(t.state().colours_corrected);
    assert_eq!(t.state().warnings, ByColor::new(0, 0), "no warning for wrong colours");
}

#[test]
fn double_move_article_17_2_confirmed_voids_the_second_move() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16"]);
    let ev = t.play("Q4", 'X', &[]);
    assert!(infractions(&ev).is_empty());
    let ev = t.play("D16", 'X', &[]);
    let e = only_infraction(&ev, EventKind::DoubleMove, "17.2");
    assert_eq!(e.side, Some(Color::Black));
    assert_eq!(e.points[0].point.human(), "D16");
    assert!(e.message.en.contains("unrecorded pass"));
    let ev = t.arbiter(ArbiterAction::Confirm { infraction: e.infraction.expect("id") });
    assert!(kinds(&ev).contains(&EventKind::Warning));
    let st = t.state();
    assert_eq!(st.warnings, ByColor::new(1, 0));
    assert_eq!(st.to_move, Color::White);
    assert_eq!(st.legal[3].chars().nth(3), Some('.'), "D16 is void on the legal board");
    assert_eq!(st.differences.len(), 1, "the void stone still stands: shown until removed");
    t.put("D16", '.');
    let ev = t.show();
    assert!(ev.is_empty(), "removing the void stone is expected: {:?}", kinds(&ev));
    assert!(t.state().differences.is_empty());
    let ev = t.play("C3", 'O', &[]);
    assert!(infractions(&ev).is_empty());
}

#[test]
fn double_move_dismissed_is_an_unrecorded_pass() {
    let mut t = Table::new();
    t.play("D4", 'X', &[]);
    let ev = t.play("Q16", 'X', &[]);
    let e = only_infraction(&ev, EventKind::DoubleMove, "17.2");
    t.arbiter(ArbiterAction::Dismiss { infraction: e.infraction.expect("id") });
    let st = t.state();
    assert_eq!(st.warnings, ByColor::new(0, 0));
    assert_eq!(st.move_number, 3, "D4, white pass, Q16");
    assert!(matches!(st.moves[1].action, tengen_referee::RecordAction::Pass));
    assert!(st.differences.is_empty());
    let ev = t.play("D16", 'O', &[]);
    assert!(infractions(&ev).is_empty());
}

#[test]
fn takeback_article_17_3_lifted_and_replayed_elsewhere() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16", "Q4"]);
    t.put("Q4", '.');
    let ev = t.play("R4", 'X', &[]);
    let e = only_infraction(&ev, EventKind::Takeback, "17.3");
    assert_eq!(e.side, Some(Color::Black));
    assert_eq!(points_of(&e), vec!["Q4", "R4"]);
    assert!(moves(&ev).is_empty(), "the replayed stone is not a new move");
    assert_eq!(t.state().legal[15].chars().nth(16), Some('X'), "until confirmed, the record holds R4");
    assert!(t.state().differences.is_empty());
    // Confirmed: the stone goes back to Q4, Black is warned.
    let ev = t.arbiter(ArbiterAction::Confirm { infraction: e.infraction.expect("id") });
    assert!(kinds(&ev).contains(&EventKind::Warning));
    t.put_expected(&[("R4", '.'), ("Q4", 'X')]);
    t.play_moves(&["D16"]);
}

#[test]
fn takeback_lifted_then_replayed_in_a_later_view() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16"]);
    t.put("Q16", '.');
    let e = only_infraction(&t.show(), EventKind::Takeback, "17.3");
    let ev = t.play("R16", 'O', &[]);
    assert!(moves(&ev).is_empty(), "{:?}", kinds(&ev));
    assert_eq!(kinds(&ev), vec![EventKind::Takeback]);
    assert_eq!(ev[0].infraction, e.infraction, "the same takeback, now replayed");
    assert_eq!(points_of(&ev[0]), vec!["Q16", "R16"]);
    assert!(t.state().differences.is_empty(), "the record follows the board until a ruling");
    assert!(infractions(&t.play("C3", 'X', &[])).is_empty());
}

#[test]
fn takeback_lifted_only() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16"]);
    t.put("Q16", '.');
    let ev = t.show();
    let e = only_infraction(&ev, EventKind::Takeback, "17.3");
    assert_eq!(e.side, Some(Color::White));
    // Dismissed (an accident, put back): the stone returns and play goes on.
    assert_eq!(t.state().differences.len(), 1);
    t.arbiter(ArbiterAction::Dismiss { infraction: e.infraction.expect("id") });
    t.put_expected(&[("Q16", 'O')]);
    assert!(infractions(&t.play("C3", 'X', &[])).is_empty());
}

#[test]
fn moved_stone_article_17_5() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16", "Q4", "D16"]);
    // D4 slides to E4 while Black is to move.
    t.put("D4", '.').put("E4", 'X');
    let ev = t.show();
    let e = only_infraction(&ev, EventKind::MovedStone, "17.5");
    assert_eq!(points_of(&e), vec!["D4", "E4"]);
    assert!(moves(&ev).is_empty(), "a slid stone is not a move");
    assert_eq!(t.state().differences.len(), 2);
    // Put back, then Black plays normally.
    t.put_expected(&[("E4", '.'), ("D4", 'X')]);
    t.play_moves(&["C16"]);
}

#[test]
fn scattered_board_article_17_6_lists_the_stones_to_restore() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16", "Q4", "D16", "K10", "C3"]);
    // A sleeve sweeps the lower left: D4 and C3 gone, K10 and Q4 shoved.
    t.put("D4", '.').put("C3", '.').put("K10", '.').put("L11", 'X').put("Q4", '.').put("R3", 'X');
    let ev = t.show();
    let e = only_infraction(&ev, EventKind::ScatteredBoard, "17.6");
    assert!(moves(&ev).is_empty());
    let mut restore: Vec<(String, Option<Color>)> =
        e.restore.iter().map(|r| (r.point.point.human(), r.stone)).collect();
    restore.sort();
    assert_eq!(
        restore,
        vec![
            ("C3".into(), Some(Color::White)),
            ("D4".into(), Some(Color::Black)),
            ("K10".into(), Some(Color::Black)),
            ("L11".into(), None),
            ("Q4".into(), Some(Color::Black)),
            ("R3".into(), None),
        ]
    );
}

#[test]
fn wrong_capture_article_18_1() {
    let mut t = Table::new();
    t.play_moves(&["D4", "D5", "Q4"]);
    // White plays E4 and lifts D4, which still has liberties.
    let ev = t.play("E4", 'O', &["D4"]);
    let e = only_infraction(&ev, EventKind::WrongCapture, "18.1");
    assert_eq!(e.side, Some(Color::White));
    assert_eq!(e.points[0].point.human(), "D4");
    assert_eq!(moves(&ev), vec![(Color::White, "E4".into())]);
    assert_eq!(t.state().legal[15].chars().nth(3), Some('X'), "D4 stays on the legal board");
}

#[test]
fn missed_capture_article_18_2_when_the_opponent_moves() {
    let mut t = Table::new();
    t.play_atari_on_d5();
    let ev = t.play("D6", 'X', &[]);
    assert!(infractions(&ev).is_empty(), "pending, not yet missed");
    let ev = t.play("S16", 'O', &[]);
    let e = only_infraction(&ev, EventKind::MissedCapture, "18.2");
    assert_eq!(e.side, Some(Color::Black));
    assert_eq!(e.points[0].point.human(), "D5");
    assert_eq!(moves(&ev), vec![(Color::White, "S16".into())]);
    // Lifting it later is expected (the ruling removes it); nothing new is raised.
    t.put_expected(&[("D5", '.')]);
}

#[test]
fn missed_capture_after_the_grace_time_and_partly_removed() {
    let mut t = Table::new();
    // Black captures two white stones at D5 and E5 with F5; only D5 is lifted.
    t.play_moves(&["D4", "D5", "E4", "E5", "C5", "Q16", "D6", "R16", "E6", "S16"]);
    let ev = t.play("F5", 'X', &["D5"]);
    assert!(infractions(&ev).is_empty());
    let ev = t.wait(40.0);
    let e = only_infraction(&ev, EventKind::MissedCapture, "18.2");
    assert_eq!(e.points.iter().map(|p| p.point.human()).collect::<Vec<_>>(), vec!["E5"]);
    assert!(e.message.en.contains("partly"));
}

#[test]
fn a_capture_lifted_unseen_and_replayed_at_once_is_the_opponents_move() {
    let mut t = Table::new();
    // Black captures D5 and E5 with F5; the camera sees E5 lifted but never D5 empty: White has
    // already put a stone back there (it has a liberty at E5).
    t.play_moves(&["D4", "D5", "E4", "E5", "C5", "Q16", "D6", "R16", "E6", "S16"]);
    let ev = t.play("F5", 'X', &[]);
    assert!(infractions(&ev).is_empty());
    t.put("E5", '.');
    let ev = t.show();
    assert!(infractions(&ev).is_empty(), "{:#?}", infractions(&ev));
    let ev = t.play("Q4", 'X', &[]);
    assert_eq!(moves(&ev), vec![(Color::White, "D5".into()), (Color::Black, "Q4".into())]);
    assert!(infractions(&t.events).is_empty(), "{:#?}", infractions(&t.events));
    assert!(t.state().differences.is_empty(), "{:?}", t.state().differences);
    assert!(t.wait(40.0).is_empty(), "nothing is left pending");
}

#[test]
fn captured_stones_left_standing_when_the_capturer_moves_again_are_still_missed() {
    let mut t = Table::new();
    // Nothing of the capture was lifted: the standing stones are leftovers, not a White move.
    t.play_moves(&["D4", "D5", "E4", "E5", "C5", "Q16", "D6", "R16", "E6", "S16"]);
    t.play("F5", 'X', &[]);
    let ev = t.play("Q4", 'X', &[]);
    assert_eq!(moves(&ev), vec![(Color::Black, "Q4".into())]);
    assert!(kinds(&ev).contains(&EventKind::DoubleMove), "{:?}", kinds(&ev));
    let ev = t.wait(40.0);
    let e = only_infraction(&ev, EventKind::MissedCapture, "18.2");
    assert_eq!(points_of(&e), vec!["D5", "E5"]);
}

/// Rows with a ko at the top left: White inside, Black may take at C18.
const KO_ROWS: [&str; 19] = [
    ".XO................",
    "XO.O...............",
    ".XO................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
    "...................",
];

#[test]
fn ko_retaken_article_18_3() {
    let mut t = Table::new();
    t.set_rows(&KO_ROWS);
    let ev = t.show();
    assert_eq!(kinds(&ev), vec![EventKind::Resync], "seven stones at once: a resync");
    // Black takes the ko, White retakes at once.
    let ev = t.play("C18", 'X', &["B18"]);
    assert_eq!(moves(&ev), vec![(Color::Black, "C18".into())]);
    assert!(infractions(&ev).is_empty());
    let ev = t.play("B18", 'O', &["C18"]);
    let e = only_infraction(&ev, EventKind::KoRetaken, "18.3");
    assert_eq!(e.side, Some(Color::White));
    assert_eq!(points_of(&e), vec!["B18", "C18"]);
    assert!(moves(&ev).is_empty(), "the retake is void");
    let st = t.state();
    assert_eq!(st.to_move, Color::Black, "the void retake counts as a pass");
    assert_eq!(st.differences.len(), 2);
}

#[test]
fn forbidden_point_article_19() {
    let mut t = Table::new();
    // Black stones around A19's neighbours: White at A19 would have no liberty.
    t.play_moves(&["B19", "Q16", "A18"]);
    let ev = t.play("A19", 'O', &[]);
    let e = only_infraction(&ev, EventKind::ForbiddenPoint, "19");
    assert_eq!(e.side, Some(Color::White));
    assert!(moves(&ev).is_empty());
    assert_eq!(t.state().to_move, Color::Black);
    // Confirming gives no warning (Art. 19: void, a pass).
    let ev = t.arbiter(ArbiterAction::Confirm { infraction: e.infraction.expect("id") });
    assert!(!kinds(&ev).contains(&EventKind::Warning));
}

/// Three kos: top left (White inside), top middle (Black inside), top right (White inside).
const TRIPLE_KO: [&str; 3] = [".XO......XO.....XO.", "XO.O....X.XO...XO.O", ".XO......XO.....XO."];

#[test]
fn repetition_article_6_and_no_result_article_20_3_in_a_triple_ko() {
    let mut t = Table::with_config(RefereeConfig { max_moves_per_change: 2, ..RefereeConfig::default() });
    let mut rows: Vec<&str> = TRIPLE_KO.to_vec();
    let empty = ".".repeat(19);
    rows.extend(std::iter::repeat_n(empty.as_str(), 16));
    t.set_rows(&rows);
    t.show();
    t.arbiter(ArbiterAction::SetToMove { side: Color::Black });
    // The cycle: B takes ko 1, W ko 2, B ko 3, W ko 1, B ko 2, W ko 3 — and again.
    let cycle = [
        ("C18", 'X', "B18"),
        ("K18", 'O', "L18"),
        ("S18", 'X', "R18"),
        ("B18", 'O', "C18"),
        ("L18", 'X', "K18"),
        ("R18", 'O', "S18"),
    ];
    let mut all = Vec::new();
    for round in 0..2 {
        for &(at, ch, lift) in &cycle {
            let ev = t.play(at, ch, &[lift]);
            assert_eq!(moves(&ev).len(), 1, "round {round} {at}: {:?}", kinds(&ev));
            all.extend(ev);
        }
    }
    let inf = infractions(&all);
    let found: Vec<(EventKind, Option<&str>)> = inf.iter().map(|e| (e.kind, e.article.as_deref())).collect();
    assert_eq!(found, vec![(EventKind::Repetition, Some("6")), (EventKind::NoResult, Some("20.3"))]);
    // Numbers follow the resync that adopted the 21 stones (21 moves estimated missed).
    assert_eq!(inf[0].move_number, Some(21 + 6));
    assert_eq!(inf[1].move_number, Some(21 + 12));
}

#[test]
fn several_moves_at_once_are_ordered_by_legality() {
    let mut t = Table::new();
    t.play_moves(&["B2", "A2", "Q16", "B1", "D16", "Q4"]);
    // Missed frames: A3 (B), R16 (W), A1 (B) capturing A2 — all seen at once. A1 is a
    // forbidden point until A3 is played, so only one order fits.
    t.put("A3", 'X').put("R16", 'O').put("A1", 'X').put("A2", '.');
    let ev = t.show();
    assert!(infractions(&ev).is_empty(), "{:?}", kinds(&ev));
    assert_eq!(
        moves(&ev),
        vec![(Color::Black, "A3".into()), (Color::White, "R16".into()), (Color::Black, "A1".into())]
    );
    assert!(ev.iter().filter(|e| e.kind == EventKind::Move).all(|e| e.orders == Some(1)));
    assert!(kinds(&ev).contains(&EventKind::Capture));
    // Two white stones that could come in either order: ambiguous, and said so.
    t.put("R17", 'O').put("K10", 'X').put("C16", 'O');
    let ev = t.show();
    let first = ev.iter().find(|e| e.kind == EventKind::Move).expect("moves");
    assert_eq!(first.orders, Some(2), "{:#?}", ev);
    assert!(first.message.en.contains("2 orders"));
    assert!(infractions(&ev).is_empty());
    assert_eq!(moves(&ev).len(), 3);
}

#[test]
fn flicker_and_unknown_points_never_make_moves_and_an_unclear_point_is_reported() {
    let mut r = Referee::new(RefereeConfig::default());
    let empty: Vec<String> = (0..19).map(|_| ".".repeat(19)).collect();
    let mut events = Vec::new();
    let mut t = 0.0;
    for k in 0..40 {
        t += 0.5;
        let mut rows = empty.clone();
        if k % 5 == 2 {
            rows[4].replace_range(4..5, "X"); // a one-frame flicker
        }
        if k > 10 {
            rows[10].replace_range(10..11, "?"); // a stone between points
        }
        events.extend(r.observe(&Observation::from_rows(t, &rows, false).expect("rows")));
    }
    assert!(moves(&events).is_empty());
    let unclear: Vec<_> = events.iter().filter(|e| e.kind == EventKind::UnclearPoint).collect();
    assert_eq!(unclear.len(), 1);
    assert_eq!(unclear[0].points[0].point.human(), "L9");
}

#[test]
fn end_of_game_passes_dead_stones_count_and_warnings() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16"]);
    t.arbiter(ArbiterAction::Pass { side: Color::Black });
    let ev = t.arbiter(ArbiterAction::Pass { side: Color::White });
    assert_eq!(kinds(&ev), vec![EventKind::Pass, EventKind::GameEnd]);
    t.arbiter(ArbiterAction::MarkDead { points: vec![p("Q16")] });
    let ev = t.arbiter(ArbiterAction::Count);
    let r = ev[0].result.clone().expect("result forms");
    // Black: 361 points (the dead white stone removed) → wins by 361 - 180.5 - 3.75.
    assert_eq!(r.points, "B+353.5");
    assert_eq!(r.exact, "Black wins by 176¾ stones");
    assert_eq!(r.customary, "黑勝176又1/2子");
}

#[test]
fn a_second_confirmed_warning_loses_the_game() {
    let mut t = Table::new();
    t.play("D4", 'X', &[]);
    let e1 = only_infraction(&t.play("Q4", 'X', &[]), EventKind::DoubleMove, "17.2");
    t.arbiter(ArbiterAction::Confirm { infraction: e1.infraction.expect("id") });
    t.put("Q4", '.');
    t.show();
    t.play("Q16", 'O', &[]);
    let e2 = only_infraction(
        &t.play("C16", 'X', &[]).iter().chain(t.play("R16", 'X', &[]).iter()).cloned().collect::<Vec<_>>(),
        EventKind::DoubleMove,
        "17.2",
    );
    let ev = t.arbiter(ArbiterAction::Confirm { infraction: e2.infraction.expect("id") });
    let result = ev.iter().find(|e| e.kind == EventKind::Result).expect("second warning ends the game");
    assert_eq!(result.result.as_ref().map(|r| r.points.as_str()), Some("W+F"));
    assert_eq!(t.state().warnings, ByColor::new(2, 0));
}

#[test]
fn replaying_the_inputs_rebuilds_the_same_state_and_events() {
    let config = RefereeConfig::default();
    let mut inputs = Vec::new();
    let empty: Vec<String> = (0..19).map(|_| ".".repeat(19)).collect();
    let mut rows = empty.clone();
    let mut t = 0.0;
    let mut push_view = |rows: &Vec<String>, inputs: &mut Vec<Input>| {
        t += 0.5;
        let mut hand = rows.clone();
        hand[0] = "?".repeat(19);
        inputs.push(Input::Observe(Observation::from_rows(t, &hand, true).expect("rows")));
        for _ in 0..4 {
            t += 0.5;
            inputs.push(Input::Observe(Observation::from_rows(t, rows, false).expect("rows")));
        }
    };
    push_view(&rows, &mut inputs);
    for (r, c, ch) in [(3, 3, "X"), (3, 15, "O"), (15, 3, "X"), (15, 4, "X")] {
        rows[r].replace_range(c..c + 1, ch);
        push_view(&rows, &mut inputs);
    }
    inputs.push(Input::Arbiter { t: 100.0, action: ArbiterAction::Dismiss { infraction: 1 } });
    let (a, ev_a) = Referee::replay(config.clone(), inputs.clone());
    // Through JSON, as the server's log stores them.
    let json: Vec<String> = inputs.iter().map(|i| serde_json::to_string(i).expect("serialise")).collect();
    let back: Vec<Input> = json.iter().map(|j| serde_json::from_str(j).expect("parse")).collect();
    let (b, ev_b) = Referee::replay(config, back);
    assert_eq!(ev_a, ev_b);
    assert_eq!(a.state(), b.state());
    assert_eq!(a.state().move_number, 5, "four moves and an unrecorded pass");
}

#[test]
fn notices_board_moved_occluded_and_refused_arbiter_actions() {
    let mut t = Table::new();
    t.play("D4", 'X', &[]);
    // The server saw the board move: an event, and the window starts again.
    let ev = t.referee.board_moved(t.t + 0.1, Some(0.6));
    assert_eq!(kinds(&ev), vec![EventKind::BoardMoved]);
    assert_eq!(ev[0].status, Status::Info);
    // A board covered for 12 s: one occluded notice.
    let rows = t.rows();
    let mut notices = Vec::new();
    for k in 0..25 {
        notices
            .extend(t.referee.observe(&Observation::from_rows(t.t + 0.5 * f64::from(k), &rows, true).expect("rows")));
    }
    t.t += 12.5;
    assert_eq!(kinds(&notices), vec![EventKind::Occluded]);
    // Refused actions change nothing and say why.
    assert_eq!(
        t.referee.arbiter(t.t, &ArbiterAction::Confirm { infraction: 99 }),
        Err(tengen_referee::ArbiterError::UnknownInfraction(99))
    );
    assert!(matches!(t.referee.arbiter(t.t, &ArbiterAction::Count), Err(tengen_referee::ArbiterError::WrongPhase(_))));
    assert!(matches!(
        t.referee.arbiter(t.t, &ArbiterAction::MarkDead { points: vec![p("Q16")] }),
        Err(tengen_referee::ArbiterError::WrongPhase(_))
    ));
    let ev = t.play("Q16", 'O', &[]);
    assert_eq!(moves(&ev), vec![(Color::White, "Q16".into())]);
    // Resignation: the result in its three forms.
    let ev = t.arbiter(ArbiterAction::EndGame { resigned: Some(Color::White) });
    let r = ev.iter().find_map(|e| e.result.clone()).expect("result");
    assert_eq!(
        (r.exact.as_str(), r.points.as_str(), r.customary.as_str()),
        ("Black wins by resignation", "B+R", "黑中盤勝")
    );
}

#[test]
fn the_arbiter_can_adopt_the_physical_board() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16"]);
    t.put("D4", '.').put("E4", 'X');
    let e = only_infraction(&t.show(), EventKind::MovedStone, "17.5");
    // The chief arbiter rules the moved stone stands (Art. 17.5 (2)).
    t.arbiter(ArbiterAction::Dismiss { infraction: e.infraction.expect("id") });
    let ev = t.arbiter(ArbiterAction::AdoptPhysical);
    assert_eq!(kinds(&ev), vec![EventKind::Resync]);
    let st = t.state();
    assert!(st.differences.is_empty());
    assert_eq!(st.to_move, Color::Black);
    assert_eq!(st.move_number, 2);
    assert_eq!(st.legal[15].chars().nth(4), Some('X'), "E4 now stands on the legal board");
    assert!(infractions(&t.play("Q4", 'X', &[])).is_empty());
}

#[test]
fn time_never_runs_backwards_and_a_bad_time_is_not_a_crash() {
    let mut r = Referee::new(RefereeConfig::default());
    let empty: Vec<String> = (0..19).map(|_| ".".repeat(19)).collect();
    let mut obs = Observation::from_rows(0.0, &empty, false).expect("rows");
    obs.t = f64::NAN;
    assert!(r.observe(&obs).is_empty());
    let mut events = Vec::new();
    for t in [5.0, 4.0, 6.0, 7.0, 8.0] {
        obs.t = t;
        events.extend(r.observe(&obs));
    }
    assert_eq!(kinds(&events), vec![EventKind::Start]);
    assert!(events[0].t.is_finite());
    // The late frame (4.0 after 5.0) was taken as happening at 5.0.
    assert!((events[0].t - 6.0).abs() < 1e-9, "{}", events[0].t);
}

#[test]
fn the_arbiter_corrects_a_misread_move_and_the_rules_guard_the_correction() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16", "D16", "Q4"]);
    let before = t.state();
    // Refused corrections change nothing: an occupied point, a later move made illegal, a
    // move that does not exist (a point that is not one is refused where the action is read).
    let refused = [
        (ArbiterAction::CorrectMove { number: 3, point: Some(p("Q16")) }, "not a legal move"),
        (ArbiterAction::CorrectMove { number: 1, point: Some(p("Q4")) }, "move 4 would become illegal"),
        (ArbiterAction::CorrectMove { number: 9, point: Some(p("C3")) }, "no move 9"),
    ];
    for (action, why) in refused {
        let err = t.referee.arbiter(t.t, &action).expect_err(why);
        assert!(err.to_string().contains(why), "{err} / {why}");
        assert_eq!(t.state(), before, "{why}: nothing changed");
    }
    // The stone stands on C16 but was read at D16: the arbiter corrects move 3.
    let ev = t.arbiter(ArbiterAction::CorrectMove { number: 3, point: Some(p("C16")) });
    assert_eq!(kinds(&ev), vec![EventKind::Correction]);
    assert_eq!(ev[0].move_number, Some(3));
    assert!(ev[0].message.en.contains("Black C16 (was D16)"), "{}", ev[0].message.en);
    let st = t.state();
    assert_eq!(st.legal[3].chars().nth(2), Some('X'), "C16 on the legal board");
    assert_eq!(st.legal[3].chars().nth(3), Some('.'), "D16 off it");
    assert_eq!(st.differences.len(), 2, "the camera still shows D16");
    assert!(st.differences.iter().all(|d| d.cause == DifferenceCause::Correction { number: 3 }));
    // The known difference is not raised as an infraction; play goes on.
    let ev = t.play("C3", 'X', &[]);
    assert!(infractions(&ev).is_empty(), "{:#?}", infractions(&ev));
    assert_eq!(moves(&ev), vec![(Color::Black, "C3".into())]);
    // When the board is put right, the difference is gone.
    t.put("D16", '.').put("C16", 'X');
    assert!(infractions(&t.show()).is_empty());
    assert!(t.state().differences.is_empty());
    // A move corrected to a pass: the record keeps its numbering.
    t.arbiter(ArbiterAction::CorrectMove { number: 5, point: None });
    let st = t.state();
    assert_eq!(st.move_number, 5);
    assert!(matches!(st.moves.last().map(|m| &m.action), Some(RecordAction::Pass)));
}

#[test]
fn wrong_colours_found_by_the_arbiter_are_ruled_by_move_ten() {
    let mut t = Table::new();
    t.play("D4", 'X', &[]);
    let ev = t.arbiter(ArbiterAction::WrongColours);
    assert_eq!((ev[0].kind, ev[0].status), (EventKind::WrongColours, Status::Confirmed));
    assert!(ev[0].message.en.contains("Restart the game"), "{}", ev[0].message.en);
    assert!(t.state().colours_corrected && !t.state().players_swapped, "the organiser's colours stand in the record");
    assert_eq!(t.referee.arbiter(t.t, &ArbiterAction::WrongColours), Err(ArbiterError::ColoursAlreadyRuled));

    let mut late = Table::new();
    let stones = ["D4", "Q16", "D16", "Q4", "C3", "R3", "C17", "R17", "K10", "K4", "K16"];
    for (i, at) in stones.iter().enumerate() {
        late.play(at, if i % 2 == 0 { 'X' } else { 'O' }, &[]);
    }
    assert_eq!(late.state().move_number, 11);
    let ev = late.arbiter(ArbiterAction::WrongColours);
    assert!(ev[0].message.en.contains("stands as played"), "{}", ev[0].message.en);
    assert!(!late.state().colours_corrected);
    assert!(late.state().players_swapped, "the record names who played which colour");
    assert_eq!(late.state().warnings, ByColor::new(0, 0));

    // The referee's own alert (a white first stone) is what the arbiter's finding answers.
    let mut own = Table::new();
    let alert = only_infraction(&own.play("Q16", 'O', &[]), EventKind::WrongColours, "17.1").infraction;
    let ev = own.arbiter(ArbiterAction::WrongColours);
    assert_eq!((ev[0].infraction, ev[0].status), (alert, Status::Confirmed));
    assert!(own.state().open_infractions.is_empty() && own.state().colours_corrected);
}

#[test]
fn a_move_under_an_open_infraction_or_after_play_ended_is_not_corrected() {
    let mut t = Table::new();
    t.play_moves(&["D4", "Q16", "Q4"]);
    t.put("Q4", '.');
    let e = only_infraction(&t.play("R4", 'X', &[]), EventKind::Takeback, "17.3");
    let before = t.state();
    let err = t
        .referee
        .arbiter(t.t, &ArbiterAction::CorrectMove { number: 3, point: Some(p("C3")) })
        .expect_err("open takeback");
    assert!(matches!(err, ArbiterError::BadCorrection(ref m) if m.contains("confirm or dismiss")), "{err}");
    assert_eq!(t.state(), before);
    t.arbiter(ArbiterAction::Dismiss { infraction: e.infraction.expect("id") });
    t.arbiter(ArbiterAction::CorrectMove { number: 3, point: Some(p("C3")) });
    t.arbiter(ArbiterAction::EndGame { resigned: None });
    let err =
        t.referee.arbiter(t.t, &ArbiterAction::CorrectMove { number: 1, point: Some(p("C4")) }).expect_err("ended");
    assert_eq!(err, ArbiterError::WrongPhase("ended"));
}
