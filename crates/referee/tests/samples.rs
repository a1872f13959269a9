//! The project's rendered sample sequences (`samples/*/sequence.json`: per frame the ground-truth
//! grid, its time and whether a hand is over the board) fed to the referee as perfect readings:
//! the record must equal `expected.sgf`, and the infractions must be those the sample's README
//! names — and no other. (The same frames through vision: `tengen replay samples/<name>`.)

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::path::Path;

use tengen_referee::{EventKind, Observation, RecordAction, Referee, RefereeConfig, StabiliserConfig, Status};
use tengen_rules::Color;

/// A record as (colour letter, SGF point) pairs.
type Moves = Vec<(char, String)>;

fn run(name: &str) -> Option<(Referee, Vec<tengen_referee::Event>, Moves)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples").join(name);
    let Ok(text) = std::fs::read_to_string(dir.join("sequence.json")) else {
        println!("samples/{name} absent: skipped");
        return None;
    };
    let seq: serde_json::Value = serde_json::from_str(&text).expect("sequence.json is JSON");
    // The samples show two clear frames per move, about 1.5 s apart.
    let config = RefereeConfig {
        stabiliser: StabiliserConfig { frames: 2, ..StabiliserConfig::default() },
        ..RefereeConfig::default()
    };
    let mut referee = Referee::new(config);
    let mut events = Vec::new();
    for frame in seq["frames"].as_array().expect("frames") {
        let grid: Vec<String> =
            frame["grid"].as_array().expect("grid").iter().map(|r| r.as_str().expect("row").to_string()).collect();
        let mut obs = Observation::from_rows(
            frame["time_s"].as_f64().expect("time"),
            &grid,
            frame["hand_over_board"].as_bool().expect("hand flag"),
        )
        .expect("19 rows");
        obs.frame_ref = frame["file"].as_str().map(str::to_string);
        events.extend(referee.observe(&obs));
    }
    let sgf = std::fs::read_to_string(dir.join("expected.sgf")).expect("expected.sgf");
    let expected: Vec<(char, String)> = sgf
        .split(';')
        .filter_map(|node| {
            let c = node.chars().next()?;
            let rest = node.strip_prefix(c)?.strip_prefix('[')?;
            matches!(c, 'B' | 'W').then(|| (c, rest.split(']').next().unwrap_or("").to_string()))
        })
        .collect();
    Some((referee, events, expected))
}

fn record(referee: &Referee) -> Moves {
    referee
        .record()
        .iter()
        .filter(|e| !e.struck)
        .filter_map(|e| match e.action {
            RecordAction::Place { point } => Some((if e.side == Color::Black { 'B' } else { 'W' }, point.to_sgf())),
            RecordAction::Pass => Some((if e.side == Color::Black { 'B' } else { 'W' }, String::new())),
            _ => None,
        })
        .collect()
}

#[test]
fn opening_capture_sample_is_the_exact_record_without_infraction() {
    let Some((referee, events, expected)) = run("opening-capture") else { return };
    assert_eq!(record(&referee), expected);
    let inf: Vec<_> = events.iter().filter(|e| e.kind.is_infraction()).map(|e| e.message.en.clone()).collect();
    assert!(inf.is_empty(), "{inf:?}");
    assert_eq!(events.iter().filter(|e| e.kind == EventKind::Capture).count(), 1);
}

#[test]
fn infractions_sample_raises_exactly_its_three_infractions() {
    let Some((referee, events, expected)) = run("infractions") else { return };
    assert_eq!(record(&referee), expected);
    let mut raised: Vec<(EventKind, String, Option<Color>, Option<u32>)> = events
        .iter()
        .filter(|e| e.kind.is_infraction() && e.status == Status::Suspected)
        .map(|e| (e.kind, e.article.clone().unwrap_or_default(), e.side, e.move_number))
        .collect();
    raised.dedup_by_key(|r| r.0);
    assert_eq!(
        raised,
        vec![
            (EventKind::MissedCapture, "18.2".into(), Some(Color::Black), Some(14)),
            (EventKind::Takeback, "17.3".into(), Some(Color::Black), Some(15)),
            (EventKind::DoubleMove, "17.2".into(), Some(Color::White), Some(17)),
        ]
    );
    let missed = events.iter().find(|e| e.kind == EventKind::MissedCapture).expect("missed capture");
    assert_eq!(missed.points.iter().map(|p| p.point.human()).collect::<Vec<_>>(), vec!["S5"]);
    assert!(referee.state().differences.is_empty(), "S5 lifted, F17 gone: the boards agree again");
}
