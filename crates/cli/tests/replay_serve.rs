//! One pipeline: the same frames at the same times through `tengen replay` and through the
//! service give identical event streams and identical records. The service runs in-process on
//! a loopback port with the real vision and referee and a clock the test sets; frames go in over
//! `POST /frames`, the events come out of `GET /api/events` and the record out of
//! `GET /api/tables/1/sgf`. On the project's rendered `samples/` and on the imago webcam
//! sequences (`t2`, `t3`: real photos, each held 2 s and seen at 2 fps).
//!
//! The only field allowed to differ is an evidence sighting's `frame_ref` (where the frame can
//! be found again: a file name for `replay`, the service's stored evidence for `serve`), and
//! the record's header (the service adds the date, the game's name and the players).

#![allow(clippy::expect_used, clippy::unwrap_used)] // set-up failures in tests should fail loudly

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

// The server's own test helpers (its HTTP client among them), shared rather than copied.
#[path = "../../server/tests/common/mod.rs"]
mod common;
use tengen_referee::{Event, EventKind};
use tengen_server::engine::{Clock, Engines};

const CAMERA: &str = "camera-token-for-the-equality-test";

struct ManualClock(AtomicI64);

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// What a run gives: the referee's events and the record's main line and setup.
#[derive(Debug, PartialEq)]
struct Outcome {
    events: Vec<Event>,
    record: Record,
}

/// The part of a record both write: setup, moves with their comments, result.
#[derive(Debug, PartialEq)]
struct Record {
    setup_black: Vec<tengen_rules::Point>,
    setup_white: Vec<tengen_rules::Point>,
    moves: Vec<tengen_sgf::RecordedMove>,
    result: Option<String>,
    root_comment: Option<String>,
}

fn record_of(sgf: &[u8]) -> Record {
    let r = tengen_sgf::read_game(sgf).expect("the record reads back");
    Record {
        setup_black: r.setup_black,
        setup_white: r.setup_white,
        moves: r.moves,
        result: r.info.result,
        root_comment: r.root_comment,
    }
}

/// An event read back from its JSON (the referee's own type: numbers compare as the referee
/// holds them), with the evidence's frame references left out (see the module documentation).
fn event_of(json: Value) -> Event {
    let mut event: Event = serde_json::from_value(json).expect("a referee event");
    if let Some(evidence) = &mut event.evidence {
        for sighting in [&mut evidence.before, &mut evidence.after].into_iter().flatten() {
            sighting.frame_ref = None;
        }
    }
    event
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tengen-equality-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `tengen replay` over the folder, with the service's referee settings (an even game, table
/// "1", game 1, its stabiliser); `extra` sets the camera (`--fps`, `--hold`).
fn replay(frames: &Path, extra: &[&str]) -> Outcome {
    let dir = temp_dir(&format!("replay-{}", frames.file_name().unwrap().to_string_lossy()));
    let (sgf, events) = (dir.join("game.sgf"), dir.join("events.jsonl"));
    let mut args = vec![
        "replay",
        frames.to_str().unwrap(),
        "--out",
        sgf.to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
        "--start",
        "even",
        "--table",
        "1",
        "--game",
        "1",
    ];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_tengen")).args(&args).output().expect("run tengen");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events = String::from_utf8(std::fs::read(&events).unwrap())
        .unwrap()
        .lines()
        .map(|l| event_of(serde_json::from_str(l).unwrap()))
        .collect();
    let record = record_of(&std::fs::read(&sgf).unwrap());
    let _ = std::fs::remove_dir_all(dir);
    Outcome { events, record }
}

/// The frames `tengen replay` sees, in order: (file, time in seconds), asked of the replay
/// itself so both runs see the very same schedule.
fn schedule(frames: &Path, extra: &[&str]) -> Vec<(PathBuf, f64)> {
    let mut args = vec!["replay", frames.to_str().unwrap(), "--schedule"];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_tengen")).args(&args).output().expect("run tengen");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (t, file) = l.split_once('\t').expect("time<TAB>file");
            (frames.join(file), t.parse().expect("seconds"))
        })
        .collect()
}

/// The same frames through the service.
fn serve(frames: &Path, extra: &[&str]) -> Outcome {
    let seen = schedule(frames, extra);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async move {
        let clock = Arc::new(ManualClock(AtomicI64::new(0)));
        let engines = Engines {
            analyzers: Arc::new(tengen_server::adapters::VisionAnalyzers),
            referees: Arc::new(tengen_server::adapters::RefereeAdapters),
            clock: Arc::clone(&clock) as Arc<dyn Clock>,
        };
        let data = temp_dir(&format!("serve-{}", frames.file_name().unwrap().to_string_lossy()));
        let config = tengen_server::Config {
            listen: "127.0.0.1:0".into(),
            data_dir: data.clone(),
            arbiter_token: Some("arbiter-token-for-the-equality-test".into()),
            camera_token: Some(CAMERA.into()),
            max_camera_fps: 1000.0,
            tables: vec![tengen_server::TableConfig {
                name: Some("Table 1".into()),
                ..tengen_server::TableConfig::posting("1")
            }],
            ..tengen_server::Config::default()
        };
        let server = tengen_server::start(config, engines).await.unwrap();
        let table = Arc::clone(&server.hub.tables["1"]);
        for (file, t) in &seen {
            #[allow(clippy::cast_possible_truncation)]
            clock.0.store((t * 1000.0).round() as i64, Ordering::SeqCst);
            let before = table.metrics.latency.count();
            let bytes = std::fs::read(file).unwrap();
            let mime = if file.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
                "image/png"
            } else {
                "image/jpeg"
            };
            let (status, _, body) = common::http(
                server.addr,
                "POST",
                "/api/tables/1/frames",
                &[("Authorization", &format!("Bearer {CAMERA}")), ("Content-Type", mime)],
                &bytes,
            )
            .await;
            assert_eq!(status, 202, "{}", String::from_utf8_lossy(&body));
            // One frame at a time, in order: the next is posted when this one is processed.
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            while table.metrics.latency.count() == before {
                assert!(tokio::time::Instant::now() < deadline, "frame {} processed in time", file.display());
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        let (status, _, body) = common::http(server.addr, "GET", "/api/events?table=1&limit=1000", &[], b"").await;
        assert_eq!(status, 200);
        let page: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(page["more"], false, "all events on one page");
        // The referee's own events (camera notices are the service's, not the referee's).
        let events = page["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["detail"].get("schema").is_some())
            .map(|e| event_of(e["detail"].clone()))
            .collect();
        let (status, _, sgf) = common::http(server.addr, "GET", "/api/tables/1/sgf", &[], b"").await;
        assert_eq!(status, 200);
        server.shutdown_now();
        let _ = std::fs::remove_dir_all(data);
        Outcome { events, record: record_of(&sgf) }
    })
}

/// Feeds the frames of `dir` through `tengen replay` and through the service, both watched by
/// `camera`, and requires the same events and record (and at least `moves` moves seen).
fn assert_same(dir: &Path, camera: &[&str], moves: usize) {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (replayed, served) = (replay(dir, camera), serve(dir, camera));
    assert!(replayed.events.iter().filter(|e| e.kind == EventKind::Move).count() >= moves, "{name}: the game is seen");
    assert_eq!(replayed.events.len(), served.events.len(), "{name}: as many events");
    for (k, (a, b)) in replayed.events.iter().zip(&served.events).enumerate() {
        assert_eq!(a, b, "{name}: event {k} differs");
    }
    assert_eq!(replayed.record, served.record, "{name}: the records differ");
    println!(
        "{name}: {} events, {} moves, the same through replay and the service",
        replayed.events.len(),
        replayed.record.moves.len()
    );
}

#[test]
fn the_sample_games_give_the_same_events_and_record_through_replay_and_the_service() {
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    for name in ["infractions", "opening-capture"] {
        // The service's camera at 2.5 fps, each recorded frame seen again until the next.
        assert_same(&samples.join(name), &["--fps", "2.5"], 17);
    }
}

#[test]
fn the_imago_webcam_games_give_the_same_events_and_record_through_replay_and_the_service() {
    let imago = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/photos/imago-tests");
    if !imago.is_dir() {
        println!("SKIP: {} absent", imago.display());
        return;
    }
    for name in ["t2", "t3"] {
        // Photos taken once per move, each watched by a 2 fps camera for 2 s.
        assert_same(&imago.join(name), &["--fps", "2", "--hold", "2"], 8);
    }
}
