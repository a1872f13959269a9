//! Broken and hostile input at the service's edges (issue 11), each a repro of what once broke
//! it: two services on one data folder, corrupt and oversized frames, slow clients and too
//! many connections, errors that were not JSON, garbage `Last-Event-ID`s, calibrations that
//! cannot be a board, camera failures nobody saw, and missing security headers.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};
use tengen_server::store::EventFilter;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn json_of(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(body)))
}

/// A textured JPEG large enough for the service (its scan holds real coefficients).
fn jpeg(width: u32, height: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x * 3 % 256) as u8, ((x ^ y) % 256) as u8, (y % 256) as u8])
    });
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Jpeg).unwrap();
    out
}

async fn post_frame(addr: std::net::SocketAddr, kind: &str, body: &[u8]) -> (u16, Value) {
    let auth = format!("Bearer {CAMERA}");
    let (status, _, body) =
        http(addr, "POST", "/api/tables/1/frames", &[("Authorization", &auth), ("Content-Type", kind)], body).await;
    (status, json_of(&body))
}

#[tokio::test]
async fn a_second_service_on_the_same_data_folder_is_refused_and_names_the_first() {
    // Item 2: both ran, and both appended "Black passes (move 1)" to the same game.
    let first = TestService::start("hostile-lock", &["1"]).await;
    let second = tengen_server::start(test_config(first.dir.clone(), &["1"]), test_engines()).await;
    match second {
        Err(err @ tengen_server::ServerError::Locked(_)) => {
            let message = err.to_string();
            assert!(message.contains(&format!("pid {}", std::process::id())), "{message}");
            assert!(message.contains("in use"), "{message}");
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("a second service started on the same data folder"),
    }
    // Once the first is gone the folder is free again.
    first.restart(test_engines()).await.stop().await;
}

#[tokio::test]
async fn corrupt_and_oversized_frames_are_refused_at_the_edge() {
    let service = TestService::start("hostile-frames", &["1"]).await;
    let addr = service.addr();
    let whole = jpeg(320, 240);
    let (status, body) = post_frame(addr, "image/jpeg", &whole).await;
    assert_eq!(status, 202, "{body}");
    // Item 9: a truncated JPEG with FF D9 appended was accepted (202).
    let mut cut = whole[..whole.len() * 2 / 3].to_vec();
    cut.extend_from_slice(&[0xFF, 0xD9]);
    let (status, body) = post_frame(addr, "image/jpeg", &cut).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("corrupt_image")), "{body}");
    // Item 3: 16-bit PNGs and frames over the pixel limit were accepted (202).
    let deep = image::DynamicImage::ImageRgba16(image::ImageBuffer::from_pixel(100, 100, image::Rgba([0u16, 0, 0, 0])));
    let mut png16 = Vec::new();
    deep.write_to(&mut std::io::Cursor::new(&mut png16), image::ImageFormat::Png).unwrap();
    let (status, body) = post_frame(addr, "image/png", &png16).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("unsupported_frame")), "{body}");
    let big = image::GrayImage::new(4200, 3100);
    let mut big_png = Vec::new();
    big.write_to(&mut std::io::Cursor::new(&mut big_png), image::ImageFormat::Png).unwrap();
    let (status, body) = post_frame(addr, "image/png", &big_png).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("unsupported_frame")), "{body}");
    // The shared fuzz findings, when present: the bomb and the two bit-flipped photos.
    let findings = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/fuzz-findings");
    if findings.is_dir() {
        for (name, kind) in [
            ("png_bomb_6320_rgba16.png", "image/png"),
            ("fail_000_60_bitflip.jpg", "image/jpeg"),
            ("fail_003_177_bitflip.jpg", "image/jpeg"),
        ] {
            let bytes = std::fs::read(findings.join(name)).unwrap();
            let (status, body) = post_frame(addr, kind, &bytes).await;
            assert_eq!(status, 422, "{name}: {body}");
        }
    } else {
        println!("SKIP (part): ../shared/datasets/fuzz-findings not present");
    }
    // A posting camera that sends frames the service refuses is seen in the hall (item 11).
    let (_, _, tables) = http(addr, "GET", "/api/tables", &[], b"").await;
    let error = json_of(&tables)[0]["camera_error"].as_str().map(str::to_owned);
    assert!(error.as_deref().is_some_and(|e| e.starts_with("frame refused")), "{error:?}");
    service.stop_now();
}

/// Reads until the peer closes or `limit` passes; true when it closed.
async fn closed_within(stream: &mut tokio::net::TcpStream, limit: Duration) -> (bool, Vec<u8>) {
    let mut got = Vec::new();
    let read = async {
        let mut buf = [0u8; 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    let closed = tokio::time::timeout(limit, read).await.is_ok();
    (closed, got)
}

#[tokio::test]
async fn slow_clients_are_cut_off_and_connections_are_capped() {
    // Item 5: 100 slow-header connections and 10 slow-body posts were all open after 45 s.
    let service = TestService::start_with("hostile-slow", &["1"], test_engines(), |config| {
        config.header_timeout_secs = 1.0;
        config.body_timeout_secs = 1.0;
        config.max_connections = 6;
    })
    .await;
    let addr = service.addr();
    // Headers that never end: closed after the header timeout.
    let mut slow_headers = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow_headers.write_all(b"GET /api/tables HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let (closed, _) = closed_within(&mut slow_headers, Duration::from_secs(5)).await;
    assert!(closed, "a connection with unfinished headers stayed open");
    // A body that never ends: answered 408 and closed after the body timeout.
    let mut slow_body = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!("POST /api/tables/1/frames HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {CAMERA}\r\nContent-Type: image/jpeg\r\nContent-Length: 100000\r\n\r\n");
    slow_body.write_all(head.as_bytes()).await.unwrap();
    slow_body.write_all(&[0xFF, 0xD8, 0xFF]).await.unwrap();
    let (closed, answer) = closed_within(&mut slow_body, Duration::from_secs(5)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(closed && answer.starts_with("HTTP/1.1 408"), "closed {closed}: {answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    // Six idle connections hold the cap; a seventh is answered 503 with the API's JSON error,
    // and once they are gone the service answers again.
    let mut idle = Vec::new();
    for _ in 0..6 {
        idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut extra = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (closed, answer) = closed_within(&mut extra, Duration::from_secs(3)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(closed && answer.starts_with("HTTP/1.1 503") && answer.contains("too_many_connections"), "{answer}");
    drop(idle);
    let served = wait_until(5, || async move { http(addr, "GET", "/healthz", &[], b"").await.0 == 200 }).await;
    assert!(served, "the service answers once the idle connections are gone");
    service.stop_now();
}

#[tokio::test]
async fn every_error_is_json_and_every_answer_has_the_security_headers() {
    let service = TestService::start("hostile-json", &["1"]).await;
    let addr = service.addr();
    // Item 6: 405 with an empty body; plain-text 400 for a path parameter that is not a number.
    for (method, path, status, code) in [
        ("DELETE", "/api/tables", 405, "method_not_allowed"),
        ("POST", "/api/events", 405, "method_not_allowed"),
        ("GET", "/api/games/abc", 400, "bad_path"),
        ("GET", "/api/games/abc/sgf", 400, "bad_path"),
        ("GET", "/api/events/abc/before.jpg", 400, "bad_path"),
        ("GET", "/api/tables/%FF%FE", 400, "bad_path"),
        ("GET", "/api/nothing", 404, "not_found"),
    ] {
        let (got, head, body) = http(addr, method, path, &[], b"").await;
        assert_eq!(got, status, "{method} {path}: {}", String::from_utf8_lossy(&body));
        assert!(head.to_ascii_lowercase().contains("content-type: application/json"), "{method} {path}: {head}");
        assert_eq!(json_of(&body)["error"], code, "{method} {path}");
    }
    // Item 12: the dashboard (which keeps the arbiter's token) cannot be framed, run foreign
    // scripts or have its types guessed.
    for path in ["/", "/dashboard.js", "/api/tables", "/api/nothing"] {
        let (_, head, _) = http(addr, "GET", path, &[], b"").await;
        let head = head.to_ascii_lowercase();
        for header in
            ["content-security-policy: default-src 'self'", "x-frame-options: deny", "x-content-type-options: nosniff"]
        {
            assert!(head.contains(header), "{path} lacks {header}: {head}");
        }
    }
    service.stop_now();
}

/// Opens the event stream with these headers and reads for a moment: (status, body so far).
async fn open_stream(addr: std::net::SocketAddr, path: &str, last_event_id: Option<&str>) -> (u16, String) {
    let mut stream = open_sse(addr, path, last_event_id).await;
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_millis(700), async {
        let mut buf = [0u8; 65536];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&got).to_string();
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, text)
}

#[tokio::test]
async fn resume_ids_are_validated_and_a_long_backfill_arrives_whole_and_in_order() {
    let service = TestService::start("hostile-sse", &["1"]).await;
    let addr = service.addr();
    let hub = service.hub();
    // 260 events: more than two backfill pages.
    for _ in 0..130 {
        let (status, answer) = post_arbiter(addr, "1", &json!({"action": "set_result", "result": "B+R"})).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    }
    let last = hub.store.last_event_id().await.unwrap();
    // Item 7: `abc`, `1e5` and an id past the log gave a stream with no backfill, `-1` the whole
    // log: now each is refused with a JSON error.
    for bad in ["abc", "1e5", "-1", &(last + 1).to_string(), " ", "99999999999999999999"] {
        let (status, text) = open_stream(addr, "/api/stream", Some(bad)).await;
        assert_eq!(status, 400, "Last-Event-ID {bad:?}: {text}");
        assert!(text.contains("bad_last_event_id"), "{text}");
    }
    let (status, text) = open_stream(addr, "/api/stream?after=-1", None).await;
    assert_eq!(status, 400, "{text}");
    // A good id gets every later event, once each, in order, across the pages.
    let (status, text) = open_stream(addr, "/api/stream", Some("0")).await;
    assert_eq!(status, 200);
    let ids: Vec<i64> =
        text.lines().filter_map(|l| l.strip_prefix("id: ")).filter_map(|v| v.trim().parse().ok()).collect();
    let logged: Vec<i64> =
        hub.store.events_after(EventFilter::first(1000)).await.unwrap().iter().map(|e| e.id).collect();
    assert_eq!(logged.len(), 260);
    assert_eq!(ids, logged, "every event once, in order");
    service.stop_now();
}

#[tokio::test]
async fn calibrations_that_cannot_be_a_board_are_refused_and_kept_out_of_the_store() {
    let service = TestService::start("hostile-calibration", &["1"]).await;
    let addr = service.addr();
    let auth = format!("Bearer {ARBITER}");
    let put = |body: String| {
        let auth = auth.clone();
        async move {
            let (status, _, answer) = http(
                addr,
                "PUT",
                "/api/tables/1/calibration",
                &[("Authorization", &auth), ("Content-Type", "application/json")],
                body.as_bytes(),
            )
            .await;
            (status, json_of(&answer))
        }
    };
    let good = json!({"corners": [[100.0, 80.0], [900.0, 90.0], [910.0, 700.0], [95.0, 690.0]]});
    assert_eq!(put(good.to_string()).await.0, 200);
    // Item 8: `{}` answered 200 and cleared the stored calibration; four identical corners were
    // stored and the vision then failed on every frame.
    for bad in [
        json!({}),
        json!({"corners": [[5.0, 5.0], [5.0, 5.0], [5.0, 5.0], [5.0, 5.0]]}),
        json!({"corners": [[100.0, 80.0], [910.0, 700.0], [900.0, 90.0], [95.0, 690.0]]}),
        json!({"corners": [[100.0, 80.0], [9000.0, 90.0], [9100.0, 7000.0], [95.0, 690.0]]}),
        json!({"corners": [[100.0, 80.0], [101.0, 80.0], [101.0, 81.0], [100.0, 81.0]]}),
    ] {
        let (status, answer) = put(bad.to_string()).await;
        assert_eq!((status, answer["error"].as_str()), (422, Some("invalid_calibration")), "{bad}: {answer}");
    }
    let (_, _, stored) = http(addr, "GET", "/api/tables/1/calibration", &[], b"").await;
    assert_eq!(json_of(&stored)["corners"], good["corners"], "the good calibration is still in force");
    // Once a frame has arrived, corners must lie inside it (this camera's frames are 76 px).
    let (status, _) = post_frame(addr, "image/png", &board_png(&[])).await;
    assert_eq!(status, 202);
    let (status, answer) = put(good.to_string()).await;
    assert_eq!(status, 422, "corners outside a 76×76 frame: {answer}");
    // `null` clears it, explicitly.
    assert_eq!(put(json!({"corners": null}).to_string()).await.0, 200);
    let (_, _, stored) = http(addr, "GET", "/api/tables/1/calibration", &[], b"").await;
    assert_eq!(json_of(&stored)["corners"], Value::Null);
    service.stop_now();
}

#[tokio::test]
async fn a_pulled_camera_that_fails_is_seen_in_the_api() {
    // Item 11: a pulled camera's failures showed only in the log; the API said "waiting" with
    // an empty error.
    let refused = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap()
    };
    let service = TestService::start_with("hostile-camera", &["m", "s"], test_engines(), |config| {
        config.tables[0].camera = tengen_server::CameraConfig::Mjpeg { url: format!("http://{refused}/video") };
        config.tables[1].camera =
            tengen_server::CameraConfig::Snapshot { url: format!("http://{refused}/shot.jpg"), interval_ms: 100 };
    })
    .await;
    let addr = service.addr();
    let seen = wait_until(10, || async move {
        let (_, _, body) = http(addr, "GET", "/api/tables", &[], b"").await;
        let tables = json_of(&body);
        let error = |i: usize| tables[i]["camera_error"].as_str().unwrap_or("").to_owned();
        error(0).starts_with("MJPEG stream: network") && error(1).starts_with("snapshot: network")
    })
    .await;
    let (_, _, body) = http(addr, "GET", "/api/tables", &[], b"").await;
    assert!(seen, "{}", String::from_utf8_lossy(&body));
    service.stop_now();
}
