//! The `tengen` commands end to end as a user runs them: `referee` over JSON-line readings,
//! `replay` over the project's own rendered sample frames, and `sgf check` on a record with an
//! illegal move — each checked against what the articles say, plus bad input.

#![allow(clippy::expect_used)] // set-up failures in tests should fail loudly

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tengen(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_tengen")).args(args).output().expect("run tengen");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "tengen {args:?} panicked: {stderr}");
    out
}

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tengen-cli-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn json_lines(bytes: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(bytes).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

fn empty_rows() -> Vec<String> {
    vec![".".repeat(19); 19]
}

fn with_stone(mut rows: Vec<String>, col: usize, row: usize, c: char) -> Vec<String> {
    let mut chars: Vec<char> = rows[row].chars().collect();
    chars[col] = c;
    rows[row] = chars.into_iter().collect();
    rows
}

#[test]
fn referee_turns_readings_into_moves_and_flags_two_moves_in_a_row() {
    // Black D16 ("dd"), White Q4 ("pp"), then White again at Q16 ("pd"): Art. 17.2.
    let b1 = with_stone(empty_rows(), 3, 3, 'X');
    let w1 = with_stone(b1.clone(), 15, 15, 'O');
    let w2 = with_stone(w1.clone(), 15, 3, 'O');
    let mut lines = String::new();
    let mut t = 0.0;
    for (board, hand) in
        [(&empty_rows(), false), (&b1, true), (&b1, false), (&w1, true), (&w1, false), (&w2, true), (&w2, false)]
    {
        for _ in 0..6 {
            lines.push_str(&serde_json::json!({"t": t, "grid": board, "occluded": hand}).to_string());
            lines.push('\n');
            t += 0.5;
        }
    }
    lines.push_str("this line is not JSON\n");
    let dir = temp_dir("referee");
    let obs = dir.join("obs.jsonl");
    std::fs::write(&obs, lines).expect("write readings");
    let out = tengen(&["referee", obs.to_str().expect("path")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("43"), "the bad line is reported with its number");
    let events = json_lines(&out.stdout);
    let moves: Vec<String> = events
        .iter()
        .filter(|e| e["kind"] == "move")
        .map(|e| format!("{} {}", e["side"].as_str().unwrap_or("?"), e["points"][0]["sgf"].as_str().unwrap_or("?")))
        .collect();
    assert_eq!(moves, ["black dd", "white pp", "white pd"]);
    let double: Vec<&serde_json::Value> = events.iter().filter(|e| e["kind"] == "double_move").collect();
    assert_eq!(double.len(), 1, "{events:?}");
    assert_eq!(double[0]["article"], "17.2");
    assert_eq!(double[0]["side"], "white");
    assert_eq!(double[0]["status"], "suspected");
}

#[test]
fn referee_skips_a_line_that_is_not_utf8_and_reads_on() {
    // Issue 11, item 10: a line of invalid UTF-8 stopped the command (exit 2) although a bad
    // line is documented as skipped.
    let b1 = with_stone(empty_rows(), 3, 3, 'X');
    let mut bytes = Vec::new();
    let mut t = 0.0;
    for (i, (board, hand)) in [(&empty_rows(), false), (&b1, true), (&b1, false)].into_iter().enumerate() {
        for _ in 0..6 {
            bytes
                .extend_from_slice(serde_json::json!({"t": t, "grid": board, "occluded": hand}).to_string().as_bytes());
            bytes.push(b'\n');
            t += 0.5;
        }
        if i == 0 {
            bytes.extend_from_slice(b"{\"t\": 3.1, \"grid\": \"\xff\xfe\xfd\"}\n");
        }
    }
    let dir = temp_dir("referee-utf8");
    let obs = dir.join("obs.jsonl");
    std::fs::write(&obs, bytes).expect("write readings");
    let out = tengen(&["referee", obs.to_str().expect("path")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(":7: skipped") && stderr.contains("UTF-8"), "the bad line is named: {stderr}");
    let moves = json_lines(&out.stdout).iter().filter(|e| e["kind"] == "move").count();
    assert_eq!(moves, 1, "the readings after the bad line are read");
}

#[test]
fn replay_reads_the_sample_frames_into_the_expected_record_and_infractions() {
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/infractions");
    let (events, written) = replay(&samples, "replay", &[]);
    let mut infractions: Vec<(String, String)> = events
        .iter()
        .filter(|e| ["missed_capture", "takeback", "double_move"].contains(&e["kind"].as_str().unwrap_or("")))
        .map(|e| (e["kind"].as_str().unwrap_or("").to_string(), e["article"].as_str().unwrap_or("").to_string()))
        .collect();
    infractions.dedup();
    assert_eq!(
        infractions,
        [
            ("missed_capture".to_string(), "18.2".to_string()),
            ("takeback".into(), "17.3".into()),
            ("double_move".into(), "17.2".into())
        ]
    );
    let others: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| {
            e["status"] == "suspected"
                && !["missed_capture", "takeback", "double_move"].contains(&e["kind"].as_str().unwrap_or(""))
        })
        .collect();
    assert!(others.is_empty(), "false infractions: {others:?}");
    // The record agrees with the sample's expected record, move by move.
    let expected = std::fs::read_to_string(samples.join("expected.sgf")).expect("expected.sgf");
    let moves = |text: &str| -> Vec<String> {
        text.split(';')
            .filter_map(|node| {
                node.trim().get(0..5).filter(|m| m.starts_with("B[") || m.starts_with("W[")).map(str::to_string)
            })
            .collect()
    };
    assert_eq!(moves(&written), moves(&expected));
}

#[test]
fn sgf_check_reports_a_suicide_as_an_illegal_move_and_bad_files_as_parse_errors() {
    let dir = temp_dir("sgf");
    // 9×9: Black surrounds A9; White's move 4 at A9 ("aa") is suicide (Art. 5, 19).
    std::fs::write(dir.join("a.sgf"), "(;GM[1]FF[4]SZ[9];B[ba];W[ee];B[ab];W[aa];B[gg])").expect("write");
    std::fs::write(dir.join("b.sgf"), "this is not a game record").expect("write");
    let out = tengen(&["sgf", "check", "--json", dir.to_str().expect("path")]);
    assert_eq!(out.status.code(), Some(1), "findings exit 1: {}", String::from_utf8_lossy(&out.stderr));
    let lines = json_lines(&out.stdout);
    let illegal: Vec<&serde_json::Value> = lines.iter().filter(|l| l["kind"] == "illegal_move").collect();
    assert_eq!(illegal.len(), 1, "{lines:?}");
    assert_eq!(illegal[0]["move"], 4);
    assert_eq!(illegal[0]["article"], "19");
    let summary = &lines.last().expect("a summary line")["summary"];
    assert_eq!(summary["files"], 2);
    assert_eq!(summary["illegal_moves"], 1);
    assert_eq!(summary["parse_errors"], 1);
    // A path that does not exist: it could not run.
    let out = tengen(&["sgf", "check", dir.join("missing.sgf").to_str().expect("path")]);
    assert_eq!(out.status.code(), Some(2));
    // A clean record: exit 0, and the summary speaks of one file in the singular.
    std::fs::write(dir.join("clean.sgf"), "(;GM[1]FF[4]SZ[9];B[ee];W[cc])").expect("write");
    let out = tengen(&["sgf", "check", dir.join("clean.sgf").to_str().expect("path")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("1 file, 1 game, 2 moves: 0 illegal moves"), "{text}");
}

#[test]
fn a_calibration_written_by_calibrate_is_read_by_detect() {
    use tengen_rules::Stone;
    use tengen_synth::{render, Position, Scene};
    let position = Position::empty().with(3, 3, Stone::BLACK).with(15, 15, Stone::WHITE).with(9, 9, Stone::BLACK);
    let frame = render(&position, &Scene::preset("webcam").expect("preset").with_seed(3)).expect("render");
    let dir = temp_dir("calibrate");
    let (image, toml) = (dir.join("frame.jpg"), dir.join("table.toml"));
    std::fs::write(&image, frame.jpeg()).expect("write frame");
    let out = tengen(&["calibrate", image.to_str().expect("path"), "-o", toml.to_str().expect("path")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = tengen(&["detect", image.to_str().expect("path"), "--calibration", toml.to_str().expect("path")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(printed, frame.truth.grid);
    // A calibration file that is not one: a clear error, not a panic.
    std::fs::write(&toml, "corners = \"somewhere\"").expect("write");
    let out = tengen(&["detect", image.to_str().expect("path"), "--calibration", toml.to_str().expect("path")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a calibration"));
}

#[test]
fn eval_photos_scores_points_boards_and_the_moves_of_a_sequence_whose_orientation_flips() {
    let Some(t1) = imago("t1") else { return };
    let out_dir = temp_dir("eval");
    let out = tengen(&["eval", "photos", t1.to_str().expect("path"), "--out", out_dir.to_str().expect("path")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = std::fs::read_to_string(out_dir.join("eval-photos.md")).expect("report written");
    assert!(report.contains("| 11 | 11 |"), "all 11 frames located: {report}");
    // t1's EXIF tag flips between frames 002 and 003: move diffs are taken in stored order,
    // and every label turned back agrees with its `.grid.raw.txt`.
    let exif = report.lines().find(|l| l.contains("EXIF orientation undone")).expect("EXIF line");
    let (agree, of) =
        exif.split_once(": ").and_then(|(_, r)| r.split_once(' ')).and_then(|(f, _)| f.split_once('/')).expect("n/m");
    assert_eq!(agree, of, "{exif}");
    assert!(of.parse::<u32>().expect("count") >= 8, "{exif}");
    let pairs = report.lines().find(|l| l.contains("consecutive frame pairs")).expect("pairs line");
    assert!(pairs.contains("/10 consecutive frame pairs"), "t1 holds moves 0-10: {pairs}");
    assert!(std::fs::read_to_string(out_dir.join("eval-photos.json")).is_ok_and(|j| j.contains("\"folders\"")));
    let _ = std::fs::remove_dir_all(out_dir);
}

/// Runs `tengen replay` over a folder of frames (`name` names its temporary folder); the events
/// and the SGF.
fn replay(frames: &Path, name: &str, extra: &[&str]) -> (Vec<serde_json::Value>, String) {
    let dir = temp_dir(name);
    let (sgf, events) = (dir.join("game.sgf"), dir.join("events.jsonl"));
    let mut args = vec![
        "replay",
        frames.to_str().expect("path"),
        "--out",
        sgf.to_str().expect("path"),
        "--events",
        events.to_str().expect("path"),
    ];
    args.extend_from_slice(extra);
    let out = tengen(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events = json_lines(&std::fs::read(&events).expect("events written"));
    let sgf = std::fs::read_to_string(&sgf).expect("sgf written");
    let _ = std::fs::remove_dir_all(dir);
    (events, sgf)
}

/// Runs `tengen replay` over an imago-tests sequence, one photo per move (`--stable-frames 1`);
/// the events and the SGF, or `None` when the dataset is absent.
fn replay_imago(sequence: &str, extra: &[&str]) -> Option<(Vec<serde_json::Value>, String)> {
    let frames = imago(sequence)?;
    let one_photo_a_move = ["--stable-frames", "1", "--min-stable-seconds", "0"];
    Some(replay(&frames, &format!("replay-{sequence}"), &[&one_photo_a_move[..], extra].concat()))
}

/// An imago-tests sequence folder, or `None` (with a line) when the dataset is absent.
fn imago(sequence: &str) -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/photos/imago-tests").join(sequence);
    if !dir.is_dir() {
        println!("SKIP: {} absent", dir.display());
    }
    dir.is_dir().then_some(dir)
}

fn suspected(events: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    events.iter().filter(|e| e["status"] == "suspected").collect()
}

#[test]
fn replay_of_hand_held_photos_whose_view_turns_gives_the_true_game() {
    // imago t1: one photo per move, hand-held, and the EXIF tag turns the view by a quarter
    // between frames 002 and 003. Vision and referee together must give the 10 moves and no
    // infraction, and the final position must be the labelled one (up to the board's turn: a
    // board has no canonical "up").
    let Some((events, text)) = replay_imago("t1", &["--relocate"]) else { return };
    let t1 = imago("t1").expect("present");
    assert!(suspected(&events).is_empty(), "false infractions: {:#?}", suspected(&events));
    assert_eq!(events.iter().filter(|e| e["kind"] == "move").count(), 10);
    // The record's final position, turned to the labelled one.
    let mut board = vec![vec!['.'; 19]; 19];
    for node in text.split(';').skip(2) {
        let (colour, rest) = node.split_at(1);
        let point: Vec<u8> = rest.bytes().skip(1).take(2).collect();
        if (colour == "B" || colour == "W") && point.len() == 2 && point.iter().all(u8::is_ascii_lowercase) {
            board[usize::from(point[1] - b'a')][usize::from(point[0] - b'a')] = if colour == "B" { 'X' } else { 'O' };
        }
    }
    let label: Vec<Vec<char>> = std::fs::read_to_string(t1.join("t1_011.jpg.grid.raw.txt"))
        .expect("label")
        .lines()
        .map(|l| l.chars().collect())
        .collect();
    let mut turned = board;
    let matches = (0..4).any(|_| {
        turned = (0..19).map(|r| (0..19).map(|c| turned[18 - c][r]).collect()).collect();
        turned == label
    });
    assert!(matches, "final position differs from the label:\n{text}");
}

#[test]
fn replay_of_webcam_photos_with_hands_at_the_board_edge_gives_the_true_moves() {
    // imago t3: frames 000-011 one move each (000 holds 5 black stones), then a jump to 050.
    // Frames 003 and 005 show fingers over the left edge, which must not become stones.
    let Some((events, _)) = replay_imago("t3", &[]) else { return };
    let t3 = imago("t3").expect("present");
    assert!(suspected(&events).is_empty(), "false infractions: {:#?}", suspected(&events));
    let label = |n: u32| -> Vec<Vec<char>> {
        std::fs::read_to_string(t3.join(format!("t3_{n:03}.jpg.grid.txt")))
            .expect("label")
            .lines()
            .map(|l| l.chars().collect())
            .collect()
    };
    let human = |r: usize, c: usize| format!("{}{}", "ABCDEFGHJKLMNOPQRST".as_bytes()[c] as char, 19 - r);
    let moves: Vec<String> = events
        .iter()
        .filter(|e| e["kind"] == "move" && e["move_number"].as_u64().is_some_and(|n| n <= 11))
        .map(|e| e["points"][0]["human"].as_str().unwrap_or("").to_string())
        .collect();
    // The labels add one stone a frame (frame 001 repeats 000): ten moves.
    let truth: Vec<String> = (0..11)
        .flat_map(|n| {
            let (a, b) = (label(n), label(n + 1));
            let changed: Vec<String> = (0..19)
                .flat_map(|r| (0..19).map(move |c| (r, c)))
                .filter(|&(r, c)| a[r][c] != b[r][c])
                .map(|(r, c)| human(r, c))
                .collect();
            assert!(changed.len() <= 1, "at most one stone per frame in the labels");
            changed
        })
        .collect();
    assert_eq!(truth.len(), 10);
    assert_eq!(moves, truth);
    assert!(events.iter().any(|e| e["kind"] == "resync"), "the jump to move 50 is a resync");
}
