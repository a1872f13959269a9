//! The committed `samples/` agree with their own descriptions: every frame listed exists and
//! decodes at the stated size, times increase, grids are 19×19, and the clean game's last frame
//! shows exactly the board of its expected record replayed by the rules core.

use std::path::PathBuf;

use tengen_rules::{Color, Game, Move, Point};

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

fn load(name: &str) -> Option<serde_json::Value> {
    let path = samples_dir().join(name).join("sequence.json");
    let text = std::fs::read_to_string(&path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Moves of a plain SGF main line such as `(;GM[1];B[pd];W[dd])`.
fn sgf_moves(text: &str) -> Vec<(Color, String)> {
    text.split(';')
        .filter_map(|node| {
            let colour = match node.as_bytes().first() {
                Some(b'B') => Color::Black,
                Some(b'W') => Color::White,
                _ => return None,
            };
            let value = node.get(2..4)?;
            node.get(1..2).filter(|b| *b == "[").map(|_| (colour, value.to_string()))
        })
        .collect()
}

#[test]
fn sequences_are_consistent_with_their_frames() {
    for name in ["opening-capture", "infractions"] {
        let Some(doc) = load(name) else { panic!("samples/{name}/sequence.json missing or unreadable") };
        let frames = doc["frames"].as_array().cloned().unwrap_or_default();
        assert!(frames.len() > 40, "{name}: {} frames", frames.len());
        let (w, h) = (doc["geometry"]["width"].as_u64().unwrap_or(0), doc["geometry"]["height"].as_u64().unwrap_or(0));
        let mut last_time = -1.0;
        for (i, frame) in frames.iter().enumerate() {
            let time = frame["time_s"].as_f64().unwrap_or(-1.0);
            assert!(time > last_time, "{name}: frame {i} time {time} not after {last_time}");
            last_time = time;
            let grid = frame["grid"].as_array().cloned().unwrap_or_default();
            assert_eq!(grid.len(), 19);
            assert!(grid.iter().all(|r| r.as_str().is_some_and(|s| s.len() == 19)));
            let file = frame["file"].as_str().unwrap_or_default();
            assert_eq!(file, format!("{:04}.jpg", i + 1));
            // Decoding every frame would be slow in the dev profile; check every tenth fully.
            let bytes = std::fs::read(samples_dir().join(name).join(file)).unwrap_or_default();
            assert!(bytes.starts_with(&[0xFF, 0xD8]), "{name}/{file} is not a JPEG");
            if i % 10 == 0 {
                let img = image::load_from_memory(&bytes).map(|d| (d.width(), d.height()));
                assert_eq!(img.ok(), Some((w as u32, h as u32)), "{name}/{file}");
            }
        }
    }
}

#[test]
fn clean_game_ends_on_the_board_of_its_record() {
    let Some(doc) = load("opening-capture") else { panic!("samples/opening-capture/sequence.json missing") };
    let sgf = std::fs::read_to_string(samples_dir().join("opening-capture/expected.sgf")).unwrap_or_default();
    let moves = sgf_moves(&sgf);
    assert_eq!(moves.len(), 20);
    let mut game = match Game::new(19, 19) {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    };
    let mut captures = 0;
    for (colour, mv) in &moves {
        let Ok(p) = Point::from_sgf(mv, 19, 19) else { panic!("bad move {mv}") };
        match game.play(*colour, Move::Place(p)) {
            Ok(outcome) => {
                assert!(!outcome.out_of_turn, "{mv} out of turn");
                captures += outcome.captured.len();
            }
            Err(e) => panic!("{mv}: {e}"),
        }
    }
    assert_eq!(captures, 1);
    let frames = doc["frames"].as_array().cloned().unwrap_or_default();
    let Some(last) = frames.last() else { panic!("no frames") };
    let grid: Vec<String> = last["grid"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r.as_str().map(String::from))
        .collect();
    assert_eq!(grid, game.board().rows());
    assert_eq!(last["hand_present"].as_bool(), Some(false));
}
