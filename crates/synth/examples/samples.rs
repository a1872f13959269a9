//! Renders the project's own sample frame sequences into `samples/` (run from the repository
//! root): `cargo run -p tengen-synth --release --example samples [-- OUT_DIR]`.
//!
//! - `opening-capture/`: a clean 20-move opening, each stone brought in by a hand, with a
//!   capture whose stone the capturing player lifts off over a couple of frames.
//! - `infractions/`: a short game with a missed capture (Art. 18.2), a takeback (Art. 17.3) and
//!   two moves in a row by White (Art. 17.2).
//!
//! Every move meant to be legal is checked with the rules crate; the physical board of the clean
//! game is checked against the legal board after every move. Output is deterministic.

use std::fmt::Write as _;
use std::path::Path;

use tengen_rules::{Color, Game, Move, Point, Stone};
use tengen_synth::sequence::{frames, Action, SequenceFrame, Timing};
use tengen_synth::{render, ColourCast, Hand, Position, Scene, Side, SKIN_TONES};

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The clean game: a modern opening with an early 3-3 invasion in the lower right, where White
/// leaves a hane stone to be captured (SGF coordinates).
const OPENING: [&str; 20] = [
    "pd", "dd", "pp", "dp", "cn", "fq", "cj", "qq", "pq", "qp", "qo", "ro", "rn", "nc", "so", "jd", "rp", "rq", "qf",
    "dj",
];

fn main() -> AnyResult<()> {
    let out = std::env::args().nth(1).unwrap_or_else(|| "samples".into());
    let out = Path::new(&out);
    opening_capture(&out.join("opening-capture"))?;
    infractions(&out.join("infractions"))?;
    Ok(())
}

fn side_of(color: Color) -> Side {
    match color {
        Color::Black => Side::South,
        Color::White => Side::North,
    }
}

fn stone_of(color: Color) -> Stone {
    match color {
        Color::Black => Stone::BLACK,
        Color::White => Stone::WHITE,
    }
}

fn point(sgf: &str) -> AnyResult<Point> {
    Ok(Point::from_sgf(sgf, 19, 19).map_err(|e| format!("{sgf}: {e}"))?)
}

fn human(sgf: &str) -> String {
    point(sgf).map(|p| p.to_human(19)).unwrap_or_else(|_| sgf.to_string())
}

/// The two players' hands: Black sits at the bottom edge, White at the top.
fn looks(side: Side) -> Hand {
    match side {
        Side::North | Side::East => {
            Hand { side, skin_rgb: SKIN_TONES[2], sleeve_rgb: [120, 32, 38], ..Hand::default() }
        }
        Side::South | Side::West => Hand { side, skin_rgb: SKIN_TONES[0], sleeve_rgb: [38, 50, 84], ..Hand::default() },
    }
}

/// Plays a legal move on the rules board and returns the captured points.
fn play(game: &mut Game, color: Color, sgf: &str) -> AnyResult<Vec<(usize, usize)>> {
    let p = point(sgf)?;
    let outcome = game.play(color, Move::Place(p)).map_err(|e| format!("{sgf} ({}) illegal: {e}", human(sgf)))?;
    Ok(outcome.captured.iter().map(|c| (usize::from(c.col), usize::from(c.row))).collect())
}

fn place(color: Color, sgf: &str) -> AnyResult<Action> {
    let p = point(sgf)?;
    Ok(Action::Place { stone: stone_of(color), col: usize::from(p.col), row: usize::from(p.row), side: side_of(color) })
}

fn opening_capture(dir: &Path) -> AnyResult<()> {
    let mut game = Game::new(19, 19).map_err(|e| format!("{e}"))?;
    let mut actions = vec![Action::Rest { seconds: 1.0 }];
    let mut record = String::new();
    let mut color = Color::Black;
    let mut captures_text = String::new();
    for (i, mv) in OPENING.iter().enumerate() {
        actions.push(place(color, mv)?);
        let captured = play(&mut game, color, mv)?;
        writeln!(record, "{}. {} {} ({mv})", i + 1, if color == Color::Black { "B" } else { "W" }, human(mv))?;
        if !captured.is_empty() {
            let names: Vec<String> =
                captured.iter().map(|&(c, r)| tengen_rules::Point::new(c as u8, r as u8).human()).collect();
            writeln!(
                captures_text,
                "- Move {} ({} {}) captures {}; the capturing player lifts the stone(s) off.",
                i + 1,
                if color == Color::Black { "B" } else { "W" },
                human(mv),
                names.join(", ")
            )?;
            actions.push(Action::Lift { points: captured, side: side_of(color) });
        }
        color = color.opponent();
    }
    actions.push(Action::Rest { seconds: 2.0 });
    let seq = frames(&Position::empty(), &actions, Timing::default(), &looks);
    // The physical board at the end must be the legal board.
    let last = seq.last().ok_or("no frames")?;
    let legal = Position::from_rows(&game.board().rows())?;
    if last.position != legal {
        return Err("final physical board differs from the legal board".into());
    }
    let scene = Scene {
        width: 960,
        height: 540,
        lens_k1: -0.08,
        blur_sigma: 0.6,
        noise_sigma: 2.5,
        jpeg_quality: 78,
        exposure_jitter: 0.015,
        seed: 2024,
        ..Scene::default()
    };
    let mut scene = scene;
    scene.camera.tilt_deg = 22.0;
    scene.camera.board_fill = 0.86;
    scene.light.glare = 0.3;
    let sgf = sgf_of(
        &OPENING
            .iter()
            .enumerate()
            .map(|(i, m)| (if i % 2 == 0 { 'B' } else { 'W' }, m.to_string()))
            .collect::<Vec<_>>(),
    );
    let readme = format!(
        "# opening-capture\n\nA clean 20-move opening rendered by `cargo run -p tengen-synth --release --example samples` \
         (crates/synth/examples/samples.rs). Black's player sits at the bottom edge of the image, White's at the top; \
         each move is a hand reaching in with the stone, the fingers on the placed stone, the hand gone, and a settled \
         frame. `sequence.json` gives each frame's time, ground-truth grid (rows top first, `.XO`) and whether a hand is \
         in view; the camera geometry (homography, lens) is fixed for the whole sequence.\n\n\
         ## Expected record\n\n```\n{record}```\n\nSGF: `{sgf}` (also in `expected.sgf`).\n\n\
         ## Expected events\n\n- 20 moves, alternating, all legal; no infraction.\n{captures_text}\
         - After the last move the board holds {} stones (B {} / W {}).\n",
        legal.stone_count(),
        legal.to_rows().iter().map(|r| r.matches('X').count()).sum::<usize>(),
        legal.to_rows().iter().map(|r| r.matches('O').count()).sum::<usize>(),
    );
    write_sequence(dir, &scene, &seq, "A clean 20-move opening with one capture lifted by hand.", &readme, &sgf)
}

fn infractions(dir: &Path) -> AnyResult<()> {
    use Color::{Black as B, White as W};
    let mut game = Game::new(19, 19).map_err(|e| format!("{e}"))?;
    let mut actions = vec![Action::Rest { seconds: 1.0 }];
    // Moves 1–12: legal play with an early 3-3 invasion.
    let legal_start = [
        (B, "pd"),
        (W, "dp"),
        (B, "pp"),
        (W, "qq"),
        (B, "pq"),
        (W, "qp"),
        (B, "qo"),
        (W, "ro"),
        (B, "rn"),
        (W, "dd"),
        (B, "so"),
        (W, "cf"),
    ];
    for (color, mv) in legal_start {
        actions.push(place(color, mv)?);
        let captured = play(&mut game, color, mv)?;
        if !captured.is_empty() {
            return Err(format!("unexpected capture at {mv}").into());
        }
    }
    // Move 13: Black captures the hane stone at S5 by playing S4, but leaves it on the board.
    actions.push(place(B, "rp")?);
    let captured = play(&mut game, B, "rp")?;
    if captured != vec![(17, 14)] {
        return Err(format!("expected S4 to capture S5, got {captured:?}").into());
    }
    // Move 14: White plays S3 with the dead stone still on the board (missed capture).
    actions.push(place(W, "rq")?);
    play(&mut game, W, "rq")?;
    // Black notices and removes the dead stone.
    actions.push(Action::Lift { points: vec![(17, 14)], side: Side::South });
    // Move 15: Black puts a stone on F17, lets go, picks it up and plays C14 instead (takeback).
    actions.push(place(B, "fc")?);
    actions.push(Action::Lift { points: vec![(5, 2)], side: Side::South });
    actions.push(place(B, "cn")?);
    play(&mut game, B, "cn")?;
    // Moves 16 and 17: White plays F3 and then, without a Black move between, R10.
    actions.push(place(W, "fq")?);
    play(&mut game, W, "fq")?;
    actions.push(place(W, "qj")?);
    // The rules core treats it as out of turn; record it as such.
    let outcome = game.play(W, Move::Place(point("qj")?)).map_err(|e| format!("qj: {e}"))?;
    if !outcome.out_of_turn {
        return Err("R10 should be out of turn".into());
    }
    actions.push(Action::Rest { seconds: 2.0 });
    let seq = frames(&Position::empty(), &actions, Timing::default(), &looks);
    let mut scene = Scene {
        width: 960,
        height: 540,
        lens_k1: -0.1,
        blur_sigma: 0.7,
        noise_sigma: 3.0,
        jpeg_quality: 78,
        exposure_jitter: 0.02,
        seed: 7070,
        ..Scene::default()
    };
    scene.camera.tilt_deg = 28.0;
    scene.camera.roll_deg = -4.0;
    scene.camera.azimuth_deg = 8.0;
    scene.camera.board_fill = 0.86;
    scene.light.cast = ColourCast::Yellow;
    scene.light.cast_strength = 0.35;
    scene.light.gradient = 0.2;
    scene.board.wood_rgb = [206, 158, 96];
    let moves: Vec<(char, String)> = legal_start
        .iter()
        .map(|(c, m)| (if *c == B { 'B' } else { 'W' }, m.to_string()))
        .chain([('B', "rp".into()), ('W', "rq".into()), ('B', "cn".into()), ('W', "fq".into()), ('W', "qj".into())])
        .collect();
    let sgf = sgf_of(&moves);
    let mut record = String::new();
    for (i, (c, m)) in moves.iter().enumerate() {
        writeln!(record, "{}. {c} {} ({m})", i + 1, human(m))?;
    }
    let readme = format!(
        "# infractions\n\nA short game with three infractions for the referee demo, rendered by \
         `cargo run -p tengen-synth --release --example samples` (crates/synth/examples/samples.rs). Black sits at \
         the bottom edge of the image, White at the top. `sequence.json` gives each frame's time, ground-truth \
         physical grid (rows top first, `.XO`: what is on the board, not the legal position) and whether a hand \
         is in view.\n\n\
         ## What happens\n\n\
         1. Moves 1–12 are legal and alternate (an early 3-3 invasion in the lower right; White's hane S5 \
         is left in atari by Black's T5).\n\
         2. Move 13, B S4 (rp), captures the white stone at S5 (ro) — but nobody lifts it.\n\
         3. Move 14, W S3 (rq), is played with the dead S5 stone still on the board: **missed capture, Art. 18.2** \
         (Black failed to remove stones left without liberties). A few frames later Black's hand lifts the S5 \
         stone off (the physical board then agrees with the legal one).\n\
         4. Move 15: Black puts a stone on F17 (fc), lets go (the hand leaves, the board settles), then picks it \
         up and plays C6 (cn) instead: **takeback, Art. 17.3** (the stone belongs back on F17 if White claims).\n\
         5. Moves 16 and 17: White plays F3 (fq) and then R10 (qj) with no Black move between: **two moves in a \
         row, Art. 17.2** (or an unrecorded Black pass; a camera cannot tell, the arbiter decides).\n\n\
         ## Expected record (as the camera sees the moves)\n\n```\n{record}```\n\n\
         SGF: `{sgf}` (also in `expected.sgf`; the F17 stone of the takeback is not a move of the record).\n\n\
         ## Expected events\n\n\
         - moves 1–13 as in the record, each legal; move 13 captures S5.\n\
         - at move 14 (W S3): suspected missed capture, Art. 18.2, against Black, evidence: S5 still white on the \
         physical board after its capture at move 13; cleared on the board when S5 is lifted.\n\
         - move 15: suspected takeback, Art. 17.3, against Black: a black stone appeared on F17, stayed while the \
         board was settled, and was removed by Black's hand; Black's stone then appeared on C6.\n\
         - move 17 (W R10): suspected two moves in a row, Art. 17.2, against White (or unrecorded pass by Black).\n"
    );
    write_sequence(dir, &scene, &seq, "Infractions: missed capture, takeback, two moves in a row.", &readme, &sgf)
}

fn sgf_of(moves: &[(char, String)]) -> String {
    let mut sgf = String::from("(;GM[1]FF[4]SZ[19]KM[7.5]RU[Chinese]");
    for (c, m) in moves {
        let _ = write!(sgf, ";{c}[{m}]");
    }
    sgf.push(')');
    sgf
}

fn write_sequence(
    dir: &Path,
    scene: &Scene,
    seq: &[SequenceFrame],
    description: &str,
    readme: &str,
    sgf: &str,
) -> AnyResult<()> {
    std::fs::create_dir_all(dir)?;
    // Remove frames of an earlier, longer run.
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "jpg") {
            std::fs::remove_file(path)?;
        }
    }
    let mut entries = Vec::new();
    let mut geometry = None;
    let mut bytes_total = 0usize;
    for (i, frame) in seq.iter().enumerate() {
        let mut s = scene.clone();
        s.hands = frame.hands.clone();
        s.frame_seed = i as u64;
        let rendered = render(&frame.position, &s)?;
        let name = format!("{:04}.jpg", i + 1);
        let jpeg = rendered.jpeg();
        bytes_total += jpeg.len();
        std::fs::write(dir.join(&name), &jpeg)?;
        let t = &rendered.truth;
        if geometry.is_none() {
            geometry = Some(serde_json::json!({
                "width": t.width, "height": t.height, "homography": t.homography, "lens": t.lens,
                "corners": t.corners, "quarter_turns": t.quarter_turns,
            }));
        }
        entries.push(serde_json::json!({
            "file": name,
            "time_s": (frame.time_s * 1000.0).round() / 1000.0,
            "grid": t.grid,
            "hand_present": t.hand_present,
            "hand_over_board": t.hand_over_board,
            "occluded_points": t.occluded.iter().filter(|o| **o).count(),
            "note": frame.note,
        }));
    }
    let doc = serde_json::json!({
        "description": description,
        "generator": "cargo run -p tengen-synth --release --example samples",
        "grid_orientation": "rows top first as seen in the image; X black, O white, . empty",
        "geometry": geometry,
        "scene": scene,
        "frames": entries,
    });
    std::fs::write(dir.join("sequence.json"), serde_json::to_string_pretty(&doc)?)?;
    std::fs::write(dir.join("README.md"), readme)?;
    std::fs::write(dir.join("expected.sgf"), format!("{sgf}\n"))?;
    println!("{}: {} frames, {:.1} MB of JPEG", dir.display(), seq.len(), bytes_total as f64 / 1e6);
    Ok(())
}
