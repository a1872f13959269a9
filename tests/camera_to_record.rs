//! End to end without a server: rendered camera frames (hands reaching in, stones placed, a
//! capture lifted over several frames) go through board location, point reading and the referee,
//! and must come out as exactly the game that was played, with no infraction — then the same
//! pipeline must catch a missed capture and a takeback.

use tengen_referee::{Event, EventKind, Observation, ReadingLine, RecordAction, Referee, RefereeConfig, StartPosition};
use tengen_rules::{Color, Point, Stone};
use tengen_synth::{render, Hand, Position, Scene, Side};
use tengen_vision::{locate, read_board, GridGeometry, LocateOptions, ReaderConfig};

/// Clear frames after each change: the referee's default stabiliser wants four hand-free frames.
const STABLE_FRAMES: usize = 4;

/// One camera frame to render: the stones physically on the board and an optional hand.
struct Frame {
    position: Position,
    hand: Option<Hand>,
}

/// Frames of a player placing `stone` at `sgf` and then removing `lifted` stones: the hand
/// reaching in, the stone down with the hand still there, then the board clear.
fn place(board: &mut Position, frames: &mut Vec<Frame>, stone: Stone, sgf: &str, lifted: &[&str]) {
    let (col, row) = sgf_point(sgf);
    let side = if stone == Stone::BLACK { Side::South } else { Side::North };
    frames.push(Frame {
        position: board.clone(),
        hand: Some(Hand::placing(side, col as f64, row as f64, 0.6, Some(stone))),
    });
    board.set(col, row, stone);
    frames.push(Frame { position: board.clone(), hand: Some(Hand::placing(side, col as f64, row as f64, 1.0, None)) });
    for _ in 0..STABLE_FRAMES {
        frames.push(Frame { position: board.clone(), hand: None });
    }
    if !lifted.is_empty() {
        for s in lifted {
            let (c, r) = sgf_point(s);
            board.set(c, r, Stone::Empty);
        }
        frames.push(Frame {
            position: board.clone(),
            hand: Some(Hand::placing(side, col as f64, row as f64, 0.9, None)),
        });
        for _ in 0..STABLE_FRAMES {
            frames.push(Frame { position: board.clone(), hand: None });
        }
    }
}

fn sgf_point(sgf: &str) -> (usize, usize) {
    let b = sgf.as_bytes();
    (usize::from(b[0] - b'a'), usize::from(b[1] - b'a'))
}

/// Renders the frames, locates the board on the first frame where it can, reads every frame and feeds the
/// referee; returns the referee and every event it raised.
fn run(frames: &[Frame], seed: u64) -> anyhow::Result<(Referee, Vec<tengen_referee::Event>)> {
    let scene = Scene::preset("webcam").unwrap_or_default().with_size(800, 600).with_seed(seed);
    let mut geometry: Option<GridGeometry> = None;
    let config = RefereeConfig { start: StartPosition::Even, ..RefereeConfig::default() };
    let mut referee = Referee::new(config);
    let mut events = Vec::new();
    for (i, frame) in frames.iter().enumerate() {
        let mut scene = scene.clone().with_seed(seed + i as u64);
        scene.hands = frame.hand.iter().cloned().collect();
        let rendered = render(&frame.position, &scene)?;
        // Like the server: until the board is found, frames are skipped and location retried.
        if geometry.is_none() {
            geometry = locate(&rendered.image, &LocateOptions::default()).ok().map(|located| located.geometry);
        }
        let Some(geometry) = &geometry else { continue };
        let reading = read_board(&rendered.image, geometry, &ReaderConfig::default());
        let line = ReadingLine {
            t: i as f64 * 0.5,
            grid: reading.grid_lines(),
            confidence: Some(reading.points.iter().map(|r| r.iter().map(|p| p.confidence).collect()).collect()),
            occluded: reading.occluded,
            frame: Some(format!("frame-{i:03}")),
        };
        let observation: Observation = line.into_observation()?;
        events.extend(referee.observe(&observation));
    }
    anyhow::ensure!(geometry.is_some(), "the board was never located");
    Ok((referee, events))
}

fn played(referee: &Referee) -> Vec<(Color, String)> {
    referee
        .record()
        .iter()
        .filter(|e| !e.struck)
        .filter_map(|e| match e.action {
            RecordAction::Place { point } => Some((e.side, point.to_sgf())),
            _ => None,
        })
        .collect()
}

const OPENING: [(Stone, &str, &[&str]); 7] = [
    (Stone::BLACK, "dd", &[]),
    (Stone::WHITE, "dc", &[]),
    (Stone::BLACK, "cc", &[]),
    (Stone::WHITE, "pp", &[]),
    (Stone::BLACK, "ec", &[]),
    (Stone::WHITE, "qd", &[]),
    // Black captures the white stone at D17 ("dc") and lifts it off.
    (Stone::BLACK, "db", &["dc"]),
];

#[test]
fn a_game_seen_through_the_camera_becomes_the_exact_record() -> anyhow::Result<()> {
    let mut board = Position::empty();
    let mut frames = vec![Frame { position: board.clone(), hand: None }, Frame { position: board.clone(), hand: None }];
    for (stone, sgf, lifted) in OPENING {
        place(&mut board, &mut frames, stone, sgf, lifted);
    }
    let (referee, events) = run(&frames, 11)?;
    let expected: Vec<(Color, String)> = OPENING
        .iter()
        .map(|(s, p, _)| (if *s == Stone::BLACK { Color::Black } else { Color::White }, p.to_string()))
        .collect();
    assert_eq!(played(&referee), expected);
    let infractions: Vec<_> =
        events.iter().filter(|e| e.kind.is_infraction()).map(|e| (e.kind, e.message.en.clone())).collect();
    assert!(infractions.is_empty(), "false infractions: {infractions:?}");
    let capture = events.iter().find(|e| e.kind == EventKind::Capture).expect("a capture event");
    assert_eq!(capture.points.iter().map(|p| p.point.to_sgf()).collect::<Vec<_>>(), vec!["dc"]);
    assert_eq!(referee.game().board().get(Point::new(3, 2)), tengen_rules::Stone::Empty);
    Ok(())
}

/// The one event of `kind` among `events`, raised under `article` against `side`.
fn the_one<'a>(events: &'a [Event], kind: EventKind, article: &str, side: Color) -> &'a Event {
    let found: Vec<_> = events.iter().filter(|e| e.kind == kind).collect();
    assert_eq!(found.len(), 1, "events: {:?}", events.iter().map(|e| e.kind).collect::<Vec<_>>());
    assert_eq!(found[0].article.as_deref(), Some(article));
    assert_eq!(found[0].side, Some(side));
    found[0]
}

#[test]
fn the_camera_catches_a_missed_capture() -> anyhow::Result<()> {
    let mut board = Position::empty();
    let mut frames = vec![Frame { position: board.clone(), hand: None }, Frame { position: board.clone(), hand: None }];
    // Black captures at "db" but leaves the dead white stone on the board, and White plays on.
    for (stone, sgf, _) in OPENING {
        place(&mut board, &mut frames, stone, sgf, &[]);
    }
    place(&mut board, &mut frames, Stone::WHITE, "qq", &[]);
    let (_referee, events) = run(&frames, 23)?;
    let missed = the_one(&events, EventKind::MissedCapture, "18.2", Color::Black);
    assert!(missed.points.iter().any(|p| p.point.to_sgf() == "dc"));
    Ok(())
}

#[test]
fn the_camera_catches_a_takeback() -> anyhow::Result<()> {
    let mut board = Position::empty();
    let mut frames = vec![Frame { position: board.clone(), hand: None }, Frame { position: board.clone(), hand: None }];
    for (stone, sgf, lifted) in &OPENING[..4] {
        place(&mut board, &mut frames, *stone, sgf, lifted);
    }
    // Black plays E17 ("ec"), then lifts it and plays F17 ("fc") before White has moved.
    place(&mut board, &mut frames, Stone::BLACK, "ec", &[]);
    board.set(4, 2, Stone::Empty);
    place(&mut board, &mut frames, Stone::BLACK, "fc", &[]);
    let (_referee, events) = run(&frames, 37)?;
    the_one(&events, EventKind::Takeback, "17.3", Color::Black);
    Ok(())
}
