//! HTTP API tests on the router and on a real loopback listener: auth, limits, bad input,
//! the frame → event pipeline, arbiter actions, the event cursor, SSE resume, SGF, metrics,
//! restart recovery and pulled cameras.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::*;
use serde_json::{json, Value};
use tengen_server::store::EventFilter;
use tower::ServiceExt;

async fn call(hub: &Arc<tengen_server::Hub>, request: Request<Body>) -> (StatusCode, Value) {
    let response = tengen_server::router(Arc::clone(hub)).oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

fn post_frame(table: &str, token: Option<&str>, content_type: &str, body: Vec<u8>) -> Request<Body> {
    let mut b = Request::post(format!("/api/tables/{table}/frames")).header("content-type", content_type);
    if let Some(t) = token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    b.body(Body::from(body)).unwrap()
}

fn post_json(path: &str, token: Option<&str>, body: &str) -> Request<Body> {
    let mut b = Request::post(path).header("content-type", "application/json");
    if let Some(t) = token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    b.body(Body::from(body.to_owned())).unwrap()
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

async fn table_json(hub: &Arc<tengen_server::Hub>, table: &str) -> Value {
    call(hub, get(&format!("/api/tables/{table}"))).await.1
}

/// Posts a frame and waits until the table has analysed it.
async fn feed(hub: &Arc<tengen_server::Hub>, table: &str, stones: &[(u32, u32, char)]) {
    let before = hub.tables[table].metrics.latency.count();
    let (status, body) = call(hub, post_frame(table, Some(CAMERA), "image/png", board_png(stones))).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert!(analysed(&hub.tables[table], before, 5).await, "frame analysed in time");
}

#[tokio::test]
async fn bad_requests_get_clear_json_errors_and_change_nothing() {
    let service =
        TestService::start_with("api-bad", &["1"], test_engines(), |config| config.max_frame_bytes = 4096).await;
    let hub = service.hub();
    let png = board_png(&[(3, 3, 'B')]);

    let cases: Vec<(Request<Body>, StatusCode, &str)> = vec![
        (post_frame("1", None, "image/png", png.clone()), StatusCode::UNAUTHORIZED, "missing_token"),
        (post_frame("1", Some("wrong-token-123"), "image/png", png.clone()), StatusCode::FORBIDDEN, "wrong_token"),
        (post_frame("1", Some(ARBITER), "image/png", png.clone()), StatusCode::FORBIDDEN, "wrong_token"),
        (post_frame("nope", Some(CAMERA), "image/png", png.clone()), StatusCode::NOT_FOUND, "not_found"),
        (
            post_frame("1", Some(CAMERA), "text/plain", png.clone()),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            post_frame("1", Some(CAMERA), "image/jpeg", png.clone()),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            post_frame("1", Some(CAMERA), "image/png", b"not an image at all".to_vec()),
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_an_image",
        ),
        (
            post_frame("1", Some(CAMERA), "image/png", png[..png.len() - 5].to_vec()),
            StatusCode::UNPROCESSABLE_ENTITY,
            "corrupt_image",
        ),
        (post_frame("1", Some(CAMERA), "image/png", vec![0x89; 10_000]), StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
        (
            post_json("/api/tables/1/arbiter", None, r#"{"action":"pass","colour":"black"}"#),
            StatusCode::UNAUTHORIZED,
            "missing_token",
        ),
        (
            post_json("/api/tables/1/arbiter", Some(CAMERA), r#"{"action":"pass","colour":"black"}"#),
            StatusCode::FORBIDDEN,
            "wrong_token",
        ),
        (
            post_json("/api/tables/1/arbiter", Some(ARBITER), r#"{"action":"pass","colour":"#),
            StatusCode::BAD_REQUEST,
            "bad_json",
        ),
        (post_json("/api/tables/1/arbiter", Some(ARBITER), r#"{"action":"fly"}"#), StatusCode::BAD_REQUEST, "bad_json"),
        (
            post_json(
                "/api/tables/1/arbiter",
                Some(ARBITER),
                &format!("{{\"action\":\"set_result\",\"result\":\"{}\"}}", "x".repeat(70_000)),
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
        ),
        (
            post_json("/api/tables/1/arbiter", Some(ARBITER), r#"{"action":"confirm","alert_id":99}"#),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            post_json("/api/tables/1/arbiter", Some(ARBITER), r#"{"action":"mark_dead","points":["Z99"]}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_action",
        ),
        (
            post_json("/api/tables/1/arbiter", Some(ARBITER), r#"{"action":"pass","colour":"white"}"#),
            StatusCode::CONFLICT,
            "conflict",
        ),
        (
            post_json("/api/tables/2/arbiter", Some(ARBITER), r#"{"action":"end_game"}"#),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (get("/api/events?after=abc"), StatusCode::BAD_REQUEST, "bad_query"),
        (get("/api/events/1/sideways.jpg"), StatusCode::NOT_FOUND, "not_found"),
        (get("/api/nothing-here"), StatusCode::NOT_FOUND, "not_found"),
    ];
    let mut wrong_type = post_json("/api/tables/1/arbiter", Some(ARBITER), r#"{"action":"end_game"}"#);
    wrong_type.headers_mut().insert("content-type", "text/plain".parse().unwrap());
    let (status, body) = call(&hub, wrong_type).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    for (request, expected, code) in cases {
        let what = format!("{} {}", request.method(), request.uri());
        let (status, body) = call(&hub, request).await;
        assert_eq!(status, expected, "{what}: {body}");
        assert_eq!(body["error"], code, "{what}: {body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{what}: {body}");
    }
    // None of that touched the game.
    let t = table_json(&hub, "1").await;
    assert_eq!(t["move_number"], 0);
    let (_, events) = call(&hub, get("/api/events")).await;
    assert_eq!(events["events"].as_array().unwrap().len(), 0, "{events}");
    service.stop().await;
}

#[tokio::test]
async fn frames_become_moves_alerts_with_evidence_and_arbiter_decisions() {
    let service = TestService::start("api-flow", &["1", "2"]).await;
    let hub = service.hub();

    feed(&hub, "1", &[]).await;
    feed(&hub, "1", &[(15, 3, 'B')]).await;
    feed(&hub, "1", &[(15, 3, 'B'), (3, 15, 'W')]).await;
    let t = table_json(&hub, "1").await;
    assert_eq!(t["move_number"], 2, "{t}");
    assert_eq!(t["view"]["moves"][0]["point"], "pd");
    assert_eq!(t["to_move"], "black");
    // Table 2 is untouched by table 1's frames.
    assert_eq!(table_json(&hub, "2").await["move_number"], 0);

    // Black's stone vanishes: a suspected infraction with before/after evidence.
    feed(&hub, "1", &[(3, 15, 'W')]).await;
    let t = table_json(&hub, "1").await;
    assert_eq!(t["open_alerts"], 1, "{t}");
    let alert_id = t["view"]["open_alerts"][0]["alert_id"].as_u64().unwrap();

    let (_, page) = call(&hub, get("/api/events?table=1")).await;
    let events = page["events"].as_array().unwrap().clone();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"move") && kinds.contains(&"moved_stone"), "{kinds:?}");
    let alert = events.iter().find(|e| e["kind"] == "moved_stone" && e["status"] == "suspected").unwrap();
    assert_eq!(alert["evidence"], true);
    assert_eq!(alert["article"], "Art. 17.5");
    let id = alert["id"].as_i64().unwrap();
    for which in ["before", "after"] {
        let response = tengen_server::router(Arc::clone(&hub))
            .oneshot(get(&format!("/api/events/{id}/{which}.jpg")))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        assert!(image::load_from_memory(&bytes).is_ok(), "{which} evidence decodes");
    }

    // The cursor pages through events without repeats.
    let first_id = events[0]["id"].as_i64().unwrap();
    let (_, rest) = call(&hub, get(&format!("/api/events?after={first_id}&limit=1"))).await;
    assert_eq!(rest["events"].as_array().unwrap().len(), 1);
    assert!(rest["events"][0]["id"].as_i64().unwrap() > first_id);
    assert_eq!(rest["more"], true);

    // The arbiter confirms: the alert closes and a warning is recorded.
    let (status, body) = call(
        &hub,
        post_json("/api/tables/1/arbiter", Some(ARBITER), &json!({"action":"confirm","alert_id":alert_id}).to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["kind"] == "moved_stone" && e["status"] == "confirmed"));
    let t = table_json(&hub, "1").await;
    assert_eq!(t["open_alerts"], 0);
    assert_eq!(t["warnings"], json!([1, 0]));
    // Answering twice is a clear 404.
    let (status, _) = call(
        &hub,
        post_json("/api/tables/1/arbiter", Some(ARBITER), &json!({"action":"confirm","alert_id":alert_id}).to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A pass and the end of the game; then the SGF has the record and the comments.
    for action in [
        json!({"action":"pass","colour":"black"}),
        json!({"action":"end_game"}),
        json!({"action":"set_result","result":"W+R"}),
    ] {
        let (status, body) = call(&hub, post_json("/api/tables/1/arbiter", Some(ARBITER), &action.to_string())).await;
        assert_eq!(status, StatusCode::OK, "{action}: {body}");
    }
    let response = tengen_server::router(Arc::clone(&hub)).oneshot(get("/api/tables/1/sgf")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let sgf =
        String::from_utf8(axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec()).unwrap();
    assert!(sgf.starts_with("(;FF[4]GM[1]"), "{sgf}");
    assert!(sgf.contains(";B[pd]") && sgf.contains(";W[dp]") && sgf.contains(";B[]"), "{sgf}");
    assert!(sgf.contains("RE[W+R]") && sgf.contains("Art. 17.5"), "{sgf}");

    // Metrics and health.
    let response = tengen_server::router(Arc::clone(&hub)).oneshot(get("/metrics")).await.unwrap();
    let text =
        String::from_utf8(axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec()).unwrap();
    assert!(text.contains("tengen_frames_received_total{table=\"1\"} 4"), "{text}");
    assert!(text.contains("tengen_alerts_total{table=\"1\"} 1"), "{text}");
    assert!(text.contains("tengen_pipeline_latency_seconds_count{table=\"1\"} 4"), "{text}");
    let (status, health) = call(&hub, get("/healthz")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(health["status"], "ok");

    // A new game keeps the old one in the store.
    let (status, _) = call(&hub, post_json("/api/tables/1/arbiter", Some(ARBITER), r#"{"action":"new_game"}"#)).await;
    assert_eq!(status, StatusCode::OK);
    let (_, games) = call(&hub, get("/api/tables/1/games")).await;
    assert_eq!(games.as_array().unwrap().len(), 2);
    let old = games[1]["id"].as_i64().unwrap();
    let response =
        tengen_server::router(Arc::clone(&hub)).oneshot(get(&format!("/api/games/{old}/sgf"))).await.unwrap();
    let old_sgf =
        String::from_utf8(axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec()).unwrap();
    assert!(old_sgf.contains(";B[pd]"), "the finished game's record is rebuilt from its log: {old_sgf}");
    assert_eq!(table_json(&hub, "1").await["move_number"], 0);
    service.stop().await;
}

#[tokio::test]
async fn a_restart_resumes_every_table_from_the_log() {
    let service = TestService::start("api-restart", &["a", "b"]).await;
    let hub = service.hub();
    feed(&hub, "a", &[(3, 3, 'B')]).await;
    feed(&hub, "a", &[(3, 3, 'B'), (15, 15, 'W')]).await;
    feed(&hub, "b", &[(9, 9, 'B')]).await;
    feed(&hub, "b", &[]).await; // raises an alert on table b
    let before_a = table_json(&hub, "a").await;
    let before_b = table_json(&hub, "b").await;
    assert_eq!(before_b["open_alerts"], 1);
    drop(hub);

    let service = service.restart(test_engines()).await;
    let hub = service.hub();
    let after_a = table_json(&hub, "a").await;
    let after_b = table_json(&hub, "b").await;
    assert_eq!(after_a["view"], before_a["view"]);
    assert_eq!(after_b["view"], before_b["view"]);
    // The same frame again is not a new move: the referee's state came back exactly.
    feed(&hub, "a", &[(3, 3, 'B'), (15, 15, 'W')]).await;
    assert_eq!(table_json(&hub, "a").await["move_number"], 2);
    // And the alert raised before the restart can be answered after it.
    let alert_id = after_b["view"]["open_alerts"][0]["alert_id"].as_u64().unwrap();
    let (status, body) = call(
        &hub,
        post_json("/api/tables/b/arbiter", Some(ARBITER), &json!({"action":"dismiss","alert_id":alert_id}).to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    service.stop().await;
}

#[tokio::test]
async fn posted_frames_are_rate_limited_per_camera() {
    let service =
        TestService::start_with("api-rate", &["1"], test_engines(), |config| config.max_camera_fps = 2.0).await;
    let hub = service.hub();
    let png = board_png(&[]);
    let mut statuses = vec![];
    for _ in 0..8 {
        statuses.push(call(&hub, post_frame("1", Some(CAMERA), "image/png", png.clone())).await.0);
    }
    assert!(statuses.iter().take(4).all(|s| *s == StatusCode::ACCEPTED), "{statuses:?}");
    assert!(statuses.contains(&StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
    service.stop().await;
}

#[tokio::test]
async fn sse_streams_live_events_and_resumes_after_last_event_id() {
    let service = TestService::start("api-sse", &["1"]).await;
    let hub = service.hub();
    let addr = service.addr();
    let live = tokio::spawn(async move { read_sse(addr, "/api/stream", None, 2).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    feed(&hub, "1", &[(3, 3, 'B')]).await;
    feed(&hub, "1", &[(3, 3, 'B'), (4, 4, 'W')]).await;
    let seen = live.await.unwrap();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].2["kind"], "move");
    let first = seen[0].0.expect("events carry ids");
    assert_eq!(seen[1].0, seen[1].2["id"].as_i64());

    // A client that saw only the first event gets exactly the rest on reconnection.
    let resumed = read_sse(addr, "/api/stream?table=1", Some(first), 1).await;
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].0, seen[1].0);
    // The same through ?after= (for clients that cannot set headers).
    let resumed = read_sse(addr, &format!("/api/stream?after={first}"), None, 1).await;
    assert_eq!(resumed[0].0, seen[1].0);
    let (status, _, _) = http(addr, "GET", "/api/stream?table=missing", &[], b"").await;
    assert_eq!(status, 404);
    service.stop_now();
}

/// Waits up to five seconds for the table's summary to show what `shows` looks for.
async fn summary_shows(
    table: &tengen_server::table::TableHandle,
    shows: impl Fn(&tengen_server::json::TableSummary) -> bool,
) -> bool {
    let shows = &shows;
    wait_until(5, || async move { shows(&table.summary().unwrap()) }).await
}

#[tokio::test]
async fn pulled_cameras_mjpeg_and_snapshot_feed_their_tables_and_report_loss() {
    use axum::response::IntoResponse;
    // A fake camera: /video streams two PNG frames as multipart/x-mixed-replace then stalls;
    // /snapshot.png serves one frame.
    let frames = vec![board_png(&[]), board_png(&[(10, 10, 'B')])];
    let stream_frames = frames.clone();
    let snapshot = board_png(&[(2, 2, 'B')]);
    let app = axum::Router::new()
        .route(
            "/video",
            axum::routing::get(move || {
                let frames = stream_frames.clone();
                async move {
                    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
                    tokio::spawn(async move {
                        for f in frames {
                            let mut part = format!(
                                "--myboundary\r\nContent-Type: image/png\r\nContent-Length: {}\r\n\r\n",
                                f.len()
                            )
                            .into_bytes();
                            part.extend_from_slice(&f);
                            part.extend_from_slice(b"\r\n");
                            if tx.send(Ok(part)).await.is_err() {
                                return;
                            }
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                        // Then the camera hangs (the connection stays open, silent).
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    });
                    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
                        rx.recv().await.map(|item| (item, rx))
                    }));
                    ([("content-type", "multipart/x-mixed-replace; boundary=myboundary")], body).into_response()
                }
            }),
        )
        .route(
            "/snapshot.png",
            axum::routing::get(move || {
                let s = snapshot.clone();
                async move { ([("content-type", "image/png")], s) }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let camera_addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let service = TestService::start_with("api-pull", &["m", "s"], test_engines(), |config| {
        config.camera_timeout_secs = 0.6;
        config.tables[0].camera = tengen_server::CameraConfig::Mjpeg { url: format!("http://{camera_addr}/video") };
        config.tables[1].camera = tengen_server::CameraConfig::Snapshot {
            url: format!("http://{camera_addr}/snapshot.png"),
            interval_ms: 100,
        };
    })
    .await;
    let hub = service.hub();
    let (m, s) = (&hub.tables["m"], &hub.tables["s"]);
    assert!(summary_shows(m, |t| t.move_number == 1).await, "MJPEG frames were read");
    assert!(summary_shows(s, |t| t.move_number == 1).await, "snapshots were pulled");
    // The stream went silent: the camera is reported lost, with an event.
    assert!(summary_shows(m, |t| t.camera == tengen_server::json::CameraStatus::Lost).await);
    // The status shows first; the event reaches the log a moment later (the pipeline writes it
    // after it has set the status), so a loaded machine can see the one without the other.
    let store = hub.store.clone();
    assert!(
        wait_until(5, || {
            let store = store.clone();
            async move {
                let events =
                    store.events_after(EventFilter { table: Some("m".into()), ..EventFilter::first(100) }).await;
                events.is_ok_and(|events| events.iter().any(|e| e.event.kind.name() == "camera_lost"))
            }
        })
        .await,
        "the camera_lost event is logged"
    );
    // The snapshot camera keeps going meanwhile: one dead camera stalls nobody else.
    assert_eq!(s.summary().unwrap().camera, tengen_server::json::CameraStatus::Live);
    service.stop_now();
}

#[tokio::test]
async fn the_dashboard_and_its_assets_are_served() {
    let service = TestService::start("api-dash", &["1"]).await;
    for (path, kind) in [("/", "text/html"), ("/dashboard.js", "text/javascript"), ("/dashboard.css", "text/css")] {
        let (status, head, body) = http(service.addr(), "GET", path, &[], b"").await;
        assert_eq!(status, 200, "{path}");
        assert!(head.to_ascii_lowercase().contains(&format!("content-type: {kind}")), "{head}");
        assert!(!body.is_empty());
    }
    service.stop_now();
}

/// Fetches a table's live SGF.
async fn sgf_of(hub: &Arc<tengen_server::Hub>, table: &str) -> String {
    let response =
        tengen_server::router(Arc::clone(hub)).oneshot(get(&format!("/api/tables/{table}/sgf"))).await.unwrap();
    String::from_utf8(axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec()).unwrap()
}

#[tokio::test]
async fn the_arbiter_corrects_the_record_and_the_colours_and_both_survive_a_restart() {
    let service = TestService::start_with("api-correct", &["1"], real_referee_engines(), |_| {}).await;
    let hub = service.hub();
    // Eleven moves: Black on row 3, White on row 15, column by column.
    let mut board: Vec<(u32, u32, char)> = Vec::new();
    for n in 0..=11u32 {
        if n > 0 {
            let col = (n - 1) / 2 * 2 + 1;
            board.push(if n % 2 == 1 { (col, 3, 'B') } else { (col, 15, 'W') });
        }
        // The real referee accepts a board after several clear frames.
        for _ in 0..6 {
            feed(&hub, "1", &board).await;
        }
    }
    assert_eq!(table_json(&hub, "1").await["move_number"], 11);
    let arbiter = |body: Value| post_json("/api/tables/1/arbiter", Some(ARBITER), &body.to_string());
    let (status, body) =
        call(&hub, arbiter(json!({"action":"set_colours","swapped":false,"black":"Ann","white":"Bo"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Refused corrections are clear errors and change nothing.
    let before = table_json(&hub, "1").await;
    for (body, want) in [
        (json!({"action":"correct_record","move_number":1,"point":"bp"}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"action":"correct_record","move_number":17,"point":"dd"}), StatusCode::NOT_FOUND),
        (json!({"action":"correct_record","move_number":1,"point":"zz"}), StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let (status, error) = call(&hub, arbiter(body.clone())).await;
        assert_eq!(status, want, "{body}: {error}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{error}");
    }
    assert_eq!(table_json(&hub, "1").await["view"], before["view"]);

    // Move 1 was really at the centre ("jj"): corrected, the SGF follows.
    let (status, body) = call(&hub, arbiter(json!({"action":"correct_record","move_number":1,"point":"jj"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["events"].as_array().unwrap().iter().any(|e| e["kind"] == "correction"), "{body}");
    // Wrong colours found at move 11: the game stands (Art. 17.1) and the record names who
    // played which colour; a second finding is a conflict.
    let (status, body) = call(&hub, arbiter(json!({"action":"set_colours","swapped":true}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["events"].as_array().unwrap().iter().any(|e| e["kind"] == "wrong_colours" && e["status"] == "confirmed"),
        "{body}"
    );
    let (status, _) = call(&hub, arbiter(json!({"action":"set_colours","swapped":true}))).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let sgf = sgf_of(&hub, "1").await;
    assert!(sgf.contains(";B[jj]") && !sgf.contains("B[bd]") && sgf.contains(";W[bp]"), "{sgf}");
    assert!(sgf.contains("PB[Bo]") && sgf.contains("PW[Ann]"), "{sgf}");
    let corrected = table_json(&hub, "1").await;
    drop(hub);

    let service = service.restart(real_referee_engines()).await;
    let hub = service.hub();
    assert_eq!(table_json(&hub, "1").await["view"], corrected["view"]);
    let sgf = sgf_of(&hub, "1").await;
    assert!(sgf.contains(";B[jj]") && sgf.contains("PB[Bo]") && sgf.contains("PW[Ann]"), "{sgf}");
    service.stop().await;
}
