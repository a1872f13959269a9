//! Every row of the fixtures table in ../shared/datasets/games/README.md, with its expected
//! verdict under Chinese practice. Each test prints one line and passes when the data is absent.

use std::path::{Path, PathBuf};

use tengen_rules::{count_area, Color, Komi, Move, Penalties, Point};
use tengen_sgf::{check_game, read_collection, read_game, EncodingSource, FindingKind, GameRecord, SgfError};

fn fixtures() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/games/fixtures");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("SKIP: {} absent", dir.display());
        None
    }
}

fn load(rel: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let Some(dir) = fixtures() else { return Ok(None) };
    Ok(Some(std::fs::read(dir.join(rel))?))
}

fn game(rel: &str) -> anyhow::Result<Option<GameRecord>> {
    let Some(bytes) = load(rel)? else { return Ok(None) };
    Ok(Some(read_game(&bytes)?))
}

/// (move number, kind) of every finding.
fn verdicts(rec: &GameRecord) -> anyhow::Result<Vec<(usize, FindingKind)>> {
    Ok(check_game(rec)?.findings.iter().map(|f| (f.move_number, f.kind)).collect())
}

fn read_error(rel: &str) -> anyhow::Result<Option<SgfError>> {
    let Some(bytes) = load(rel)? else { return Ok(None) };
    match read_game(&bytes) {
        Ok(_) => anyhow::bail!("{rel} was read, expected a rejection"),
        Err(e) => {
            println!("{rel}: {e}");
            Ok(Some(e))
        }
    }
}

#[test]
fn suicide_is_void_and_counts_as_a_pass() -> anyhow::Result<()> {
    let Some(rec) = game("littlego/sgf/Illegal games/suicide.sgf")? else { return Ok(()) };
    let report = check_game(&rec)?;
    assert_eq!(verdicts(&rec)?, vec![(4, FindingKind::IllegalMove)]);
    assert_eq!(report.findings[0].article, "19");
    Ok(())
}

#[test]
fn move_on_an_occupied_point_is_illegal() -> anyhow::Result<()> {
    let Some(rec) = game("littlego/sgf/Illegal games/illegal-move.sgf")? else { return Ok(()) };
    assert_eq!(verdicts(&rec)?, vec![(16, FindingKind::IllegalMove)]);
    Ok(())
}

#[test]
fn setup_without_liberties_is_rejected() -> anyhow::Result<()> {
    let Some(e) = read_error("littlego/sgf/Illegal games/illegal-setup.sgf")? else { return Ok(()) };
    assert!(matches!(e, SgfError::IllegalSetup { ref sgf, .. } if sgf == "ab"), "{e}");
    Ok(())
}

#[test]
fn positional_superko_is_legal_and_flagged_at_move_23() -> anyhow::Result<()> {
    let Some(rec) = game("littlego/sgf/Illegal games/positional-superko.sgf")? else { return Ok(()) };
    assert_eq!((rec.width, rec.height), (11, 11));
    assert_eq!(verdicts(&rec)?, vec![(23, FindingKind::Repetition)]);
    Ok(())
}

#[test]
fn situational_superko_game_is_legal() -> anyhow::Result<()> {
    let Some(rec) = game("littlego/sgf/Illegal games/situational-superko.sgf")? else { return Ok(()) };
    let v = verdicts(&rec)?;
    // Legal under basic ko; the last move recreates the board after move 20 (other player to
    // move), which Art. 6 flags.
    assert_eq!(v, vec![(24, FindingKind::Repetition)]);
    Ok(())
}

#[test]
fn b7_after_the_record_is_legal_but_repeats() -> anyhow::Result<()> {
    let Some(rec) = game("littlego/sgf/7x7/play-b-b7-for-superko.sgf")? else { return Ok(()) };
    assert!(verdicts(&rec)?.is_empty());
    let mut g = rec.start_game()?;
    for m in &rec.moves {
        g.play(m.color, m.mv)?;
    }
    let b7 = Point::from_human("B7", 7, 7)?;
    assert_eq!(b7.to_sgf(), "ba");
    let outcome = g.play(Color::Black, Move::Place(b7))?;
    assert!(outcome.repetition.is_some(), "B7 recreates an earlier position");
    Ok(())
}

#[test]
fn non_alternating_play_is_flagged_at_move_45() -> anyhow::Result<()> {
    let Some(rec) = game("littlego/sgf/9x9/non-alternating-play.sgf")? else { return Ok(()) };
    assert_eq!(rec.moves[43].color, Color::White);
    assert_eq!(rec.moves[44].color, Color::White);
    assert_eq!(verdicts(&rec)?, vec![(45, FindingKind::Alternation)]);
    Ok(())
}

#[test]
fn consecutive_passes() -> anyhow::Result<()> {
    for n in 2..=5 {
        let Some(rec) = game(&format!("littlego/sgf/9x9/{n}-passes.sgf"))? else { return Ok(()) };
        assert_eq!(rec.moves.len(), n);
        assert!(rec.moves.iter().all(|m| m.mv == Move::Pass));
        assert!(verdicts(&rec)?.is_empty(), "{n} passes alternate and are legal");
        let mut g = rec.start_game()?;
        for m in &rec.moves {
            g.play(m.color, m.mv)?;
        }
        // Two passes end play (Art. 7.3); the later ones resume and end it again.
        assert_eq!(g.consecutive_passes(), n as u32);
    }
    Ok(())
}

#[test]
fn seki_liberties_are_shared() -> anyhow::Result<()> {
    for rel in ["littlego/sgf/7x7/seki-9b.sgf", "littlego/sgf/9x9/seki-9b.sgf"] {
        let Some(rec) = game(rel)? else { return Ok(()) };
        assert!(verdicts(&rec)?.is_empty());
        let mut g = rec.start_game()?;
        for m in &rec.moves {
            g.play(m.color, m.mv)?;
        }
        let count = count_area(g.board(), &[]);
        // Counted by hand: 10 stones each; A7 (aa) Black's, E7 (ea) White's; C7 (ca) between the
        // two chains in seki and the 26 open points below touch both colours: half each.
        assert_eq!((count.black_stones, count.white_stones), (10, 10), "{rel}");
        assert_eq!((count.black_territory, count.white_territory, count.shared), (1, 1, 27), "{rel}");
        assert_eq!(count.black_area(), 24.5);
        assert_eq!(count.white_area(), 24.5);
        let result = count.result(Komi { points: 0.0 }, Penalties::default());
        assert_eq!(result.winner, None, "even without komi");
    }
    Ok(())
}

#[test]
fn reject_cases_have_precise_errors() -> anyhow::Result<()> {
    let dir = "littlego/sgf/Illegal games";
    let Some(e) = read_error(&format!("{dir}/encoding-detection-fails.sgf"))? else { return Ok(()) };
    assert!(matches!(e, SgfError::MixedEncodings { .. }), "{e}");
    let Some(e) = read_error(&format!("{dir}/encoding-multiple.sgf"))? else { return Ok(()) };
    assert!(
        matches!(e, SgfError::MixedEncodings { ref first, ref second } if first == "UTF-8" && second == "ISO-8859-1")
    );
    let Some(e) = read_error(&format!("{dir}/encoding-unsupported.sgf"))? else { return Ok(()) };
    assert_eq!(e, SgfError::UnsupportedEncoding { label: "foo".into() });
    let Some(e) = read_error(&format!("{dir}/not-an-sgf-file.sgf"))? else { return Ok(()) };
    assert!(matches!(e, SgfError::NotSgf { .. }));
    let Some(e) = read_error(&format!("{dir}/setup-after-first-move.sgf"))? else { return Ok(()) };
    assert!(matches!(e, SgfError::SetupAfterFirstMove { ref property, after_move: 1, .. } if property == "AB"));
    let Some(e) = read_error(&format!("{dir}/setup-player-after-first-move.sgf"))? else { return Ok(()) };
    assert!(matches!(e, SgfError::SetupAfterFirstMove { ref property, after_move: 1, .. } if property == "PL"));
    let Some(e) = read_error(&format!("{dir}/setup-before-handicap-setup.sgf"))? else { return Ok(()) };
    assert_eq!(e, SgfError::HandicapAfterSetup { node: 1 });
    let Some(e) = read_error(&format!("{dir}/too-many-moves.sgf"))? else { return Ok(()) };
    assert_eq!(e, SgfError::TooManyMoves { moves: 1395, max: 1394 });
    let Some(e) = read_error("littlego/sgf/25x25/25x25_single_black_move.sgf")? else { return Ok(()) };
    assert_eq!(e, SgfError::BoardSize { value: "25".into() });
    // The longest record accepted: 1394 moves.
    let Some(rec) = game("littlego/sgf/19x19/maximum-number-of-moves.sgf")? else { return Ok(()) };
    assert_eq!(rec.moves.len(), 1394);
    Ok(())
}

/// Every move of `rec` is legal and the game is a no-result (a long cycle) after move `n`.
fn assert_no_result_after(rec: &GameRecord, n: usize) -> anyhow::Result<()> {
    let v = verdicts(rec)?;
    assert!(!v.iter().any(|(_, k)| *k == FindingKind::IllegalMove), "all {n} moves legal");
    let no_result: Vec<usize> = v.iter().filter(|(_, k)| *k == FindingKind::NoResult).map(|(n, _)| *n).collect();
    assert_eq!(no_result, vec![n]);
    Ok(())
}

#[test]
fn triple_ko_is_no_result_after_move_12() -> anyhow::Result<()> {
    let Some(rec) = game("katago-tests/derived/triple-ko-simple.sgf")? else { return Ok(()) };
    assert_eq!((rec.width, rec.height), (7, 6));
    assert_no_result_after(&rec, 12)
}

#[test]
fn eternal_life_is_no_result_after_move_8() -> anyhow::Result<()> {
    let Some(rec) = game("katago-tests/derived/eternal-life.sgf")? else { return Ok(()) };
    assert_eq!((rec.width, rec.height), (8, 5));
    // The comment holds an unescaped `W[fe]`: the reader keeps it in the comment.
    assert!(rec.root_comment.as_deref().is_some_and(|c| c.contains("W[fe] is illegal")));
    assert_no_result_after(&rec, 8)
}

#[test]
fn encodings_decode() -> anyhow::Result<()> {
    let dir = "sabaki-sgf/tests-sgf";
    let Some(rec) = game(&format!("{dir}/chinese.sgf"))? else { return Ok(()) };
    // GB2312 declared after PB: PB is decoded with it all the same.
    assert_eq!(rec.info.black_name.as_deref(), Some("古力"));
    assert_eq!(rec.info.white_name.as_deref(), Some("柯洁"));
    assert_eq!(rec.moves[1].comment.as_deref(), Some("围棋 is fun"));
    let Some(rec) = game(&format!("{dir}/japanese.sgf"))? else { return Ok(()) };
    assert_eq!(rec.info.black_name.as_deref(), Some("井山 裕太"));
    assert_eq!(rec.info.white_name.as_deref(), Some("山下 敬吾"));
    assert_eq!(rec.moves[1].comment.as_deref(), Some("囲碁 is fun"));
    let Some(rec) = game(&format!("{dir}/korean.sgf"))? else { return Ok(()) };
    assert_eq!(rec.info.black_name.as_deref(), Some("이세돌"));
    assert_eq!(rec.info.white_name.as_deref(), Some("박정환"));
    // MS_KANJI declared, but the bytes are UTF-8 (already mangled to U+FFFD by some converter).
    let Some(bytes) = load(&format!("{dir}/japanese_bad.sgf"))? else { return Ok(()) };
    let coll = read_collection(&bytes)?;
    assert_eq!(coll.encoding.source, EncodingSource::DeclaredButUtf8);
    let rec = read_game(&bytes)?;
    assert_eq!(rec.info.black_name.as_deref(), Some("\u{FFFD}\u{FFFD}\u{FFFD}R \u{FFFD}T\u{FFFD}\u{FFFD}"));
    // GB18030 without CA.
    let Some(rec) = game(&format!("{dir}/no-ca.sgf"))? else { return Ok(()) };
    assert!(rec.root_comment.as_deref().is_some_and(|c| c.starts_with("【第三型】 黑先")), "{:?}", rec.root_comment);
    assert_eq!(rec.setup_black.len(), 12);
    // UTF-16LE and UTF-8 with a byte-order mark.
    for f in ["utf16le.sgf", "utf8bom.sgf"] {
        let Some(bytes) = load(&format!("{dir}/{f}"))? else { return Ok(()) };
        assert_eq!(read_collection(&bytes)?.encoding.source, EncodingSource::ByteOrderMark);
        let rec = read_game(&bytes)?;
        assert_eq!(rec.info.white_name.as_deref(), Some("Go Seigen"), "{f}");
        assert_eq!(rec.info.black_name.as_deref(), Some("Kitani Minoru"), "{f}");
        assert!(rec.moves.len() > 50, "{f}");
    }
    // Shift_JIS without CA, and "ソ" (0x83 0x5C) whose second byte is a backslash.
    let Some(bytes) = load(&format!("{dir}/encoding/nihon-kiin.sgf"))? else { return Ok(()) };
    let coll = read_collection(&bytes)?;
    assert_eq!(coll.encoding.encoding, encoding_rs::SHIFT_JIS);
    let rec = read_game(&bytes)?;
    assert_eq!(rec.info.black_name.as_deref(), Some("申眞ソ"));
    assert_eq!(rec.info.white_name.as_deref(), Some("党毅飛"));
    assert_eq!(rec.moves.len(), 8);
    // A large UTF-8 file with markdown-ish comments and a RU in lower case.
    let Some(rec) = game(&format!("{dir}/complex.sgf"))? else { return Ok(()) };
    assert_eq!(rec.komi, Some(7.5));
    assert!(verdicts(&rec)?.is_empty());
    Ok(())
}

#[test]
fn fox_files() -> anyhow::Result<()> {
    let dir = "sabaki-sgf/fox-pr";
    let Some(rec) = game(&format!("{dir}/fox_go_server_komi.sgf"))? else { return Ok(()) };
    assert_eq!(rec.komi, Some(7.5), "KM[375] is 3.75 stones = 7.5 points");
    assert_eq!(rec.info.result.as_deref(), Some("W+12.75"));
    assert_eq!(rec.info.black_name.as_deref(), Some("东升712"));
    let Some(rec) = game(&format!("{dir}/fox_go_server_japanese.sgf"))? else { return Ok(()) };
    assert_eq!(rec.komi, Some(6.5), "KM[650]");
    // The main line is written as ~300 nested variations.
    assert!(rec.moves.len() > 250, "{} moves", rec.moves.len());
    assert!(verdicts(&rec)?.is_empty());
    let Some(rec) = game(&format!("{dir}/fox_go_server_handicap.sgf"))? else { return Ok(()) };
    assert_eq!(rec.info.handicap, Some(2));
    assert_eq!(rec.setup_black.len(), 2);
    assert_eq!(rec.moves[0].color, Color::White);
    assert!(verdicts(&rec)?.is_empty());
    let Some(rec) = game(&format!("{dir}/non_fox_game.sgf"))? else { return Ok(()) };
    assert_eq!(rec.komi, Some(11.0));
    assert!(rec.moves.len() > 100);
    for f in ["fox_go_server.sgf", "fox_go_server_nokomi.sgf"] {
        let Some(rec) = game(&format!("{dir}/{f}"))? else { return Ok(()) };
        assert_eq!(rec.komi, Some(0.0));
        assert!(verdicts(&rec)?.is_empty(), "{f}");
    }
    Ok(())
}

#[test]
fn katago_parser_fixtures() -> anyhow::Result<()> {
    let dir = "katago-tests";
    let Some(rec) = game(&format!("{dir}/foxlike.sgf"))? else { return Ok(()) };
    assert_eq!(rec.komi, Some(6.5), "KM[325] is 3.25 stones");
    assert_eq!(rec.setup_black.len(), 2);
    assert_eq!(rec.moves.len(), 2);
    // Messy variations with setup and a B[] pass in a side line; the main line is first children.
    let Some(rec) = game(&format!("{dir}/messy.sgf"))? else { return Ok(()) };
    let line: Vec<String> = rec
        .moves
        .iter()
        .map(|m| match m.mv {
            Move::Place(p) => p.to_sgf(),
            Move::Pass => String::new(),
        })
        .collect();
    assert_eq!(line, vec!["fd", "df", "ff", "dd", "dg"]);
    let Some(bytes) = load(&format!("{dir}/messy.sgf"))? else { return Ok(()) };
    let coll = read_collection(&bytes)?;
    let passes = (0..coll.node_count()).filter(|&id| coll.node(id).value("B") == Some("")).count();
    assert_eq!(passes, 1);
    let Some(rec) = game(&format!("{dir}/sampletest9x9.sgf"))? else { return Ok(()) };
    assert_eq!((rec.setup_black.len(), rec.setup_white.len()), (5, 5));
    assert!(verdicts(&rec)?.is_empty());
    for f in ["cornermoves.sgf", "humanslbigdiff.sgf", "sampletest7x7.sgf"] {
        let Some(rec) = game(&format!("{dir}/{f}"))? else { return Ok(()) };
        assert!(!rec.moves.is_empty());
        assert!(verdicts(&rec)?.is_empty(), "{f}");
    }
    Ok(())
}
