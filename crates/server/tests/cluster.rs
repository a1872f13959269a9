//! Cluster mode on a real `nats-server -js`: a node's tables are logged to the hall's JetStream
//! stream, and a node killed with SIGKILL and started again on an empty data folder rebuilds its
//! tables from the stream alone and carries on. Nodes run as child processes (this test binary
//! re-executed), like the crash test.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, clippy::zombie_processes)]

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::nats::NatsServer;
use common::*;
use futures_util::StreamExt as _;
use serde_json::Value;

const CHILD_ENV: &str = "TENGEN_CLUSTER_CHILD";
const TABLES: [&str; 3] = ["a", "b", "c"];

/// Runs a node when re-executed as the child (`dir|nats url|node`); nothing in a normal run.
#[test]
fn cluster_child_node() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let mut parts = spec.split('|');
    let (dir, nats, node) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let dir = std::path::PathBuf::from(dir);
        let mut config = test_config(dir.join("data"), &TABLES);
        config.cluster = Some(tengen_server::config::ClusterConfig {
            nats: nats.into(),
            node: node.into(),
            lease_ttl_secs: 3.0,
            replicas: 1,
        });
        let server = tengen_server::start(config, test_engines()).await.unwrap();
        let tmp = dir.join("addr.tmp");
        std::fs::write(&tmp, server.addr.to_string()).unwrap();
        std::fs::rename(&tmp, dir.join("addr")).unwrap();
        server.wait().await.unwrap();
    });
}

fn spawn_node(dir: &Path, nats: &str, node: &str) -> (Child, std::net::SocketAddr) {
    std::fs::create_dir_all(dir).unwrap();
    let _ = std::fs::remove_file(dir.join("addr"));
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "cluster_child_node", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("{}|{nats}|{node}", dir.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join("addr")) {
            return (child, text.trim().parse().unwrap());
        }
        assert!(Instant::now() < deadline, "node {node} did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn get_json(addr: std::net::SocketAddr, path: &str) -> Value {
    let (status, _, body) = http(addr, "GET", path, &[], b"").await;
    assert_eq!(status, 200, "{path}");
    serde_json::from_slice(&body).unwrap()
}

async fn get_text(addr: std::net::SocketAddr, path: &str) -> String {
    let (status, _, body) = http(addr, "GET", path, &[], b"").await;
    assert_eq!(status, 200, "{path}");
    String::from_utf8(body).unwrap()
}

async fn post_png(addr: std::net::SocketAddr, table: &str, stones: &[(u32, u32, char)]) -> u16 {
    let auth = format!("Bearer {CAMERA}");
    http(addr, "POST", &format!("/api/tables/{table}/frames"), &[("Authorization", &auth), ("Content-Type", "image/png")], &board_png(stones)).await.0
}

/// The node's events, without the evidence flag (evidence images stay on the node that made
/// them).
async fn events(addr: std::net::SocketAddr) -> Vec<Value> {
    let mut events = get_json(addr, "/api/events?limit=1000").await["events"].as_array().unwrap().clone();
    for event in &mut events {
        event.as_object_mut().unwrap().remove("evidence");
    }
    events
}

fn position(n: usize) -> Vec<(u32, u32, char)> {
    (0..n)
        .map(|i| {
            let i = u32::try_from(i).unwrap();
            (i % 19, (i / 19) * 3, if i % 2 == 0 { 'B' } else { 'W' })
        })
        .collect()
}

async fn move_number(addr: std::net::SocketAddr, table: &str) -> u64 {
    get_json(addr, &format!("/api/tables/{table}")).await["move_number"].as_u64().unwrap()
}

/// The event kinds logged for `table` in the hall's stream, read by an independent client.
async fn stream_event_kinds(nats: &str, table: &str) -> Vec<String> {
    let client = async_nats::connect(nats).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream(tengen_server::cluster::LOG_STREAM).await.unwrap();
    let subject = tengen_server::cluster::log_subject(table);
    let last = stream.get_last_raw_message_by_subject(&subject).await.unwrap().sequence;
    let _ = stream.info().await.unwrap();
    let consumer = stream
        .create_consumer(async_nats::jetstream::consumer::pull::OrderedConfig { filter_subject: subject, ..Default::default() })
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    let mut kinds = Vec::new();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(5), messages.next()).await.unwrap().unwrap().unwrap();
        let record: Value = serde_json::from_slice(&message.payload).unwrap();
        for event in record["events"].as_array().into_iter().flatten() {
            kinds.push(event["kind"].as_str().unwrap().to_owned());
        }
        if message.info().unwrap().stream_sequence >= last {
            return kinds;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_and_restarted_on_an_empty_folder_rebuilds_its_tables_from_the_stream() {
    let Some(nats) = NatsServer::start("cluster restart") else { return };
    let dir = temp_dir("cluster-restart");
    let (mut child, addr) = spawn_node(&dir.join("first"), &nats.url, "n1");
    let health = get_json(addr, "/healthz").await;
    assert_eq!(health["cluster"]["owned_tables"], serde_json::json!(TABLES), "{health}");
    assert_eq!(health["cluster"]["nats"], "connected", "{health}");

    // Table a plays 8 moves, b 3, c gets an alert (a stone taken off the board).
    for n in 0..=8 {
        assert_eq!(post_png(addr, "a", &position(n)).await, 202);
        if n <= 3 {
            assert_eq!(post_png(addr, "b", &position(n)).await, 202);
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    post_png(addr, "c", &[(3, 3, 'B')]).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    post_png(addr, "c", &[]).await;
    assert!(
        wait_until(10, || async move {
            move_number(addr, "a").await == 8
                && move_number(addr, "b").await == 3
                && get_json(addr, "/api/tables/c").await["open_alerts"] == 1
        })
        .await,
        "the games reached their positions"
    );
    // The stream holds the events, read by a client of its own.
    let kinds = stream_event_kinds(&nats.url, "a").await;
    assert_eq!(kinds.iter().filter(|k| *k == "move").count(), 8, "{kinds:?}");
    let before = events(addr).await;
    let sgf_a = get_text(addr, "/api/tables/a/sgf").await;
    child.kill().unwrap(); // SIGKILL: its leases stay until they run out
    child.wait().unwrap();

    // The same node, restarted with nothing on disk: everything comes from the stream.
    let started = Instant::now();
    let (mut child, addr) = spawn_node(&dir.join("second"), &nats.url, "n1");
    eprintln!("restarted node serving after {:?}", started.elapsed());
    assert_eq!(events(addr).await, before, "every event once, in order");
    assert_eq!(get_text(addr, "/api/tables/a/sgf").await, sgf_a);
    assert_eq!(move_number(addr, "b").await, 3);
    assert_eq!(get_json(addr, "/api/tables/c").await["open_alerts"], 1);
    let health = get_json(addr, "/healthz").await;
    assert_eq!(health["cluster"]["takeovers"], 3, "{health}");

    // And play goes on.
    assert_eq!(post_png(addr, "a", &position(9)).await, 202);
    assert!(wait_until(10, || async move { move_number(addr, "a").await == 9 }).await, "play continues");
    let kinds = stream_event_kinds(&nats.url, "a").await;
    assert_eq!(kinds.iter().filter(|k| *k == "move").count(), 9, "{kinds:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn an_unreachable_nats_is_said_at_start() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = test_config(temp_dir("cluster-unreachable"), &["a"]);
    let url = format!("nats://127.0.0.1:{port}");
    config.cluster = Some(tengen_server::config::ClusterConfig { nats: url.clone(), node: "n1".into(), lease_ttl_secs: 3.0, replicas: 1 });
    let Err(err) = tengen_server::start(config, test_engines()).await else { panic!("started without NATS") };
    let text = err.to_string();
    assert!(text.contains("cannot reach NATS at") && text.contains(&url), "{text}");
}
