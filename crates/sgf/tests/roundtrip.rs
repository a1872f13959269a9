//! Property tests of the reader and writer: any record written and read back is the same
//! record (text with `]`, `\`, newlines and any Unicode; setup; passes; comments), and the reader
//! never panics on arbitrary bytes.

use std::collections::BTreeMap;

use proptest::prelude::*;
use tengen_rules::{Color, Move, Point};
use tengen_sgf::{read_collection, read_game, write_game, GameRecord, RecordedMove};

fn text() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        any::<String>().prop_map(Some),
        "[a-z\\]\\\\\\[:; \n()]{0,12}".prop_map(Some),
        "[古力柯洁黑勝白\\]\\\\]{0,6}".prop_map(Some),
    ]
}

fn colour() -> impl Strategy<Value = Color> {
    prop_oneof![Just(Color::Black), Just(Color::White)]
}

prop_compose! {
    fn record()(width in 2u8..=19, height in 2u8..=19)(
        width in Just(width),
        height in Just(height),
        komi in proptest::option::of((-400i32..=400).prop_map(|h| f64::from(h) / 2.0)),
        handicap in proptest::option::of(0u8..=1),
        fields in proptest::collection::vec(text(), 8),
        setup in proptest::collection::btree_map((0..width, 0..height), colour(), 0..6),
        first_player in proptest::option::of(colour()),
        moves in proptest::collection::vec(
            (colour(), proptest::option::of((0..width, 0..height)), text()), 0..40),
    ) -> GameRecord {
        let mut rec = GameRecord::new(width, height);
        rec.komi = komi;
        rec.info.handicap = handicap;
        rec.rules = fields[0].clone();
        rec.info.result = fields[1].clone();
        rec.info.date = fields[2].clone();
        rec.info.black_name = fields[3].clone();
        rec.info.white_name = fields[4].clone();
        rec.info.event = fields[5].clone();
        rec.info.game_name = fields[6].clone();
        rec.root_comment = fields[7].clone();
        let setup: BTreeMap<Point, Color> = setup.into_iter().map(|((c, r), col)| (Point::new(c, r), col)).collect();
        rec.setup_black = setup.iter().filter(|(_, c)| **c == Color::Black).map(|(p, _)| *p).collect();
        rec.setup_white = setup.iter().filter(|(_, c)| **c == Color::White).map(|(p, _)| *p).collect();
        rec.first_player = first_player;
        rec.moves = moves
            .into_iter()
            .map(|(color, at, comment)| RecordedMove {
                color,
                mv: at.map_or(Move::Pass, |(c, r)| Move::Place(Point::new(c, r))),
                comment,
            })
            .collect();
        rec
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn write_then_read_gives_the_same_record(rec in record()) {
        // Only setups that can stand on a board are records (a chain needs a liberty).
        prop_assume!(rec.start_game().is_ok());
        let text = write_game(&rec);
        let back = read_game(text.as_bytes());
        prop_assert!(back.is_ok(), "{:?}\n{}", back, text);
        let back = back.unwrap_or_else(|_| GameRecord::new(1, 1));
        prop_assert_eq!(back, rec, "{}", text);
    }

    #[test]
    fn reader_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = read_collection(&bytes);
        let _ = read_game(&bytes);
    }

    #[test]
    fn reader_never_panics_on_sgf_like_text(s in "[();\\[\\]\\\\A-Za-z: \n\u{80}-\u{ff}]{0,200}") {
        let _ = read_game(s.as_bytes());
    }
}
