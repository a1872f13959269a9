//! End to end through the real cores: the service on a loopback port with `tengen-vision` and
//! `tengen-referee`, fed the project's rendered `samples/infractions` frames (hands, a missed
//! capture, a takeback, a double move) over `POST /frames` at their recorded times (a clock the
//! test controls, so it runs faster than real time). Checks the SSE stream, the alerts with
//! their articles, an arbiter confirmation, and the SGF record.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::Value;
use tengen_server::engine::{Clock, Engines};

struct ManualClock(AtomicI64);
impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/infractions")
}

/// Collects SSE `event` messages from a raw loopback connection until `stop` is set.
async fn collect_sse(addr: std::net::SocketAddr, out: Arc<std::sync::Mutex<Vec<Value>>>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!("GET /api/stream?table=1 HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut lines = BufReader::new(stream).lines();
    let mut name = String::new();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(v) = line.strip_prefix("event: ").or_else(|| line.strip_prefix("event:")) {
            name = v.trim().to_owned();
        } else if let Some(v) = line.strip_prefix("data: ").or_else(|| line.strip_prefix("data:")) {
            if name == "event" {
                out.lock().unwrap().push(serde_json::from_str(v).unwrap());
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rendered_game_with_infractions_gives_alerts_over_sse_and_the_right_sgf() {
    let dir = samples();
    let Some(schedule) = tengen_server::sources::folder_schedule(&dir) else {
        println!("e2e skipped: no samples/infractions/sequence.json (render them: cargo run -p tengen-synth --release --example samples)");
        return;
    };
    let start_ms = 1_800_000_000_000i64;
    let clock = Arc::new(ManualClock(AtomicI64::new(start_ms)));
    let engines = Engines {
        analyzers: Arc::new(tengen_server::adapters::VisionAnalyzers),
        referees: Arc::new(tengen_server::adapters::RefereeAdapters),
        clock: Arc::clone(&clock) as Arc<dyn Clock>,
    };
    let data = temp_dir("e2e");
    let server = tengen_server::start(test_config(data.clone(), &["1"]), engines).await.unwrap();
    let hub = Arc::clone(&server.hub);
    let addr = server.addr;
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sse = tokio::spawn(collect_sse(addr, Arc::clone(&seen)));
    tokio::time::sleep(Duration::from_millis(100)).await;

    let auth = format!("Bearer {CAMERA}");
    let table = Arc::clone(&hub.tables["1"]);
    // A live camera at 2.5 fps: between recorded frames further apart than 0.4 s the current
    // frame is sent again (the samples hold only the frames where something changes).
    let mut camera: Vec<(PathBuf, f64)> = Vec::new();
    for pair in schedule.windows(2) {
        let (file, t) = &pair[0];
        let mut at = *t;
        while at < pair[1].1 - 1e-9 {
            camera.push((file.clone(), at));
            at += 0.4;
        }
    }
    camera.push(schedule[schedule.len() - 1].clone());
    let first = camera[0].1;
    for (file, time_s) in &camera {
        #[allow(clippy::cast_possible_truncation)]
        clock.0.store(start_ms + ((time_s - first) * 1000.0) as i64, Ordering::SeqCst);
        let before = table.metrics.latency.count();
        let bytes = std::fs::read(file).unwrap();
        let (status, _, body) = http(
            addr,
            "POST",
            "/api/tables/1/frames",
            &[("Authorization", &auth), ("Content-Type", "image/jpeg")],
            &bytes,
        )
        .await;
        assert_eq!(status, 202, "{}", String::from_utf8_lossy(&body));
        assert!(analysed(&table, before, 30).await, "frame processed");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let events: Vec<Value> = seen.lock().unwrap().clone();
    let kinds: Vec<String> = events.iter().map(|e| e["kind"].as_str().unwrap().to_owned()).collect();
    println!("e2e events over SSE: {kinds:?}");
    let summary = table.summary().unwrap();
    println!(
        "e2e: {} frames, {} analysis errors, {} moves",
        summary.frames,
        table.metrics.analysis_errors.load(Ordering::SeqCst),
        summary.move_number
    );
    let alert = |kind: &str| events.iter().find(|e| e["kind"] == kind && e["severity"] == "alert").cloned();
    let missed = alert("missed_capture").expect("a missed capture alert over SSE");
    assert_eq!(missed["article"], "Art. 18.2");
    assert!(missed["evidence"].as_bool().unwrap(), "evidence images stored");
    let takeback = alert("takeback").expect("a takeback alert over SSE");
    assert_eq!(takeback["article"], "Art. 17.3");
    // SSE ids are the store's: the stream and /api/events agree.
    let (_, _, body) = http(addr, "GET", "/api/events?table=1&limit=1000", &[], b"").await;
    let stored: Value = serde_json::from_slice(&body).unwrap();
    let stored_ids: Vec<i64> = stored["events"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()).collect();
    let sse_ids: Vec<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert_eq!(sse_ids, stored_ids);

    // The arbiter confirms the missed capture.
    let (status, reply) =
        post_arbiter(addr, "1", &serde_json::json!({"action": "confirm", "alert_id": missed["alert_id"]})).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&reply));

    // The record: the expected moves of the sample, with the infractions as comments.
    let (status, _, sgf) = http(addr, "GET", "/api/tables/1/sgf", &[], b"").await;
    assert_eq!(status, 200);
    let sgf = String::from_utf8(sgf).unwrap();
    println!("e2e SGF: {sgf}");
    let expected = std::fs::read_to_string(dir.join("expected.sgf")).unwrap();
    let moves = |text: &str| -> Vec<String> {
        text.split(';')
            .skip(2)
            .filter_map(|node| {
                let node = node.trim_start();
                let colour = node.chars().next()?;
                if colour != 'B' && colour != 'W' || node.as_bytes().get(1) != Some(&b'[') {
                    return None;
                }
                Some(node[..node.find(']')? + 1].to_owned())
            })
            .collect()
    };
    let expected_moves = moves(&expected);
    let got_moves = moves(&sgf);
    // Through move 14 (the missed capture) the camera's record must be exact; after that the
    // takeback's stone and the double move wait for the arbiter's rulings.
    assert!(got_moves.len() >= 15, "{got_moves:?}");
    assert_eq!(got_moves[..14], expected_moves[..14], "record differs from expected.sgf");
    assert!(got_moves[14..].contains(&"B[cn]".to_owned()), "{got_moves:?}");
    assert!(sgf.contains("Art. 18.2") && sgf.contains("Art. 17.3"), "infractions commented in the SGF");
    sse.abort();

    // A restart replays the log into a fresh real referee: the same game comes back.
    let view_before = table.live().unwrap().view;
    server.shutdown_now();
    drop(table);
    drop(hub);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let engines = Engines {
        analyzers: Arc::new(tengen_server::adapters::VisionAnalyzers),
        referees: Arc::new(tengen_server::adapters::RefereeAdapters),
        clock: Arc::clone(&clock) as Arc<dyn Clock>,
    };
    let server = tengen_server::start(test_config(data.clone(), &["1"]), engines).await.unwrap();
    let view_after = server.hub.tables["1"].live().unwrap().view;
    assert_eq!(view_after, view_before, "the replayed referee has the same game");
    server.shutdown_now();
    let _ = std::fs::remove_dir_all(data);
}
