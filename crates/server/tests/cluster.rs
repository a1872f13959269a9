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

/// Runs a node when re-executed as the child (`dir|nats url|node|lease ttl|table,table,…|buffer
/// bytes|snapshot camera`, the last `table=url` or empty); nothing in a normal run.
#[test]
fn cluster_child_node() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let parts: Vec<&str> = spec.split('|').collect();
    let (dir, nats, node, ttl) = (parts[0], parts[1], parts[2], parts[3].parse().unwrap());
    let tables: Vec<&str> = parts[4].split(',').collect();
    let buffer_bytes = parts[5].parse().unwrap();
    let snapshot = parts.get(6).and_then(|camera| camera.split_once('='));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let dir = std::path::PathBuf::from(dir);
        let mut config = test_config(dir.join("data"), &tables);
        if let Some((table, url)) = snapshot {
            let table = config.tables.iter_mut().find(|t| t.id == table).unwrap();
            table.camera = tengen_server::CameraConfig::Snapshot { url: url.to_owned(), interval_ms: 100 };
        }
        config.cluster = Some(tengen_server::config::ClusterConfig {
            lease_ttl_secs: ttl,
            buffer_bytes,
            ..tengen_server::config::ClusterConfig::new(nats, node)
        });
        let server = tengen_server::start(config, test_engines()).await.unwrap();
        let tmp = dir.join("addr.tmp");
        std::fs::write(&tmp, server.addr.to_string()).unwrap();
        std::fs::rename(&tmp, dir.join("addr")).unwrap();
        // Stopped on purpose as `tengen serve` is (SIGTERM): it leaves the hall, then goes.
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap();
        terminate.recv().await;
        server.leave_hall().await;
        server.shutdown_now();
    });
}

/// A node process, killed (SIGKILL) when dropped: a failing test leaves no node running.
struct NodeProcess(Child);

impl NodeProcess {
    fn kill(&mut self) -> std::io::Result<()> {
        self.0.kill()
    }

    /// Asks the node to stop (SIGTERM), as systemd or `docker stop` does.
    fn terminate(&self) {
        let status = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status().unwrap();
        assert!(status.success(), "kill -TERM");
    }

    fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.0.wait()
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Ends a test's nodes (each is killed and waited for as it drops) and then removes its folder.
fn stop(children: Vec<NodeProcess>, dir: &Path) {
    drop(children);
    let _ = std::fs::remove_dir_all(dir);
}

fn spawn_node(dir: &Path, nats: &str, node: &str) -> (NodeProcess, std::net::SocketAddr) {
    spawn_hall_node(dir, nats, node, 3.0, &TABLES)
}

fn spawn_hall_node(
    dir: &Path,
    nats: &str,
    node: &str,
    ttl: f64,
    tables: &[&str],
) -> (NodeProcess, std::net::SocketAddr) {
    spawn_node_spec(dir, nats, node, &NodeSpec::hall(ttl, tables))
}

/// How a node of a test hall is started.
struct NodeSpec<'a> {
    /// Seconds a table's lease lasts.
    ttl: f64,
    /// The hall's tables.
    tables: &'a [&'a str],
    /// The node's outbox buffer.
    buffer_bytes: u64,
    /// A snapshot camera (`table=url`), or empty.
    snapshot: &'a str,
}

impl<'a> NodeSpec<'a> {
    /// A node of a hall of `tables` with leases of `ttl` seconds and the default buffer.
    fn hall(ttl: f64, tables: &'a [&'a str]) -> Self {
        let buffer_bytes = tengen_server::config::ClusterConfig::new("", "").buffer_bytes;
        NodeSpec { ttl, tables, buffer_bytes, snapshot: "" }
    }
}

fn spawn_node_spec(dir: &Path, nats: &str, node: &str, spec: &NodeSpec) -> (NodeProcess, std::net::SocketAddr) {
    let NodeSpec { ttl, tables, buffer_bytes, snapshot } = spec;
    std::fs::create_dir_all(dir).unwrap();
    let _ = std::fs::remove_file(dir.join("addr"));
    let child = NodeProcess(
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "cluster_child_node", "--nocapture", "--test-threads=1"])
            .env(
                CHILD_ENV,
                format!("{}|{nats}|{node}|{ttl}|{}|{buffer_bytes}|{snapshot}", dir.display(), tables.join(",")),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    (child, child_address(dir, 30, &format!("node {node}")))
}

async fn get_text(addr: std::net::SocketAddr, path: &str) -> String {
    let (status, _, body) = http(addr, "GET", path, &[], b"").await;
    assert_eq!(status, 200, "{path}");
    String::from_utf8(body).unwrap()
}

async fn move_number(addr: std::net::SocketAddr, table: &str) -> u64 {
    get_json(addr, &format!("/api/tables/{table}")).await["move_number"].as_u64().unwrap()
}

/// The event kinds logged for `table` in the hall's stream, read by an independent client.
async fn stream_event_kinds(nats: &str, table: &str) -> Vec<String> {
    stream_events(nats, table).await.iter().map(|e| e["kind"].as_str().unwrap().to_owned()).collect()
}

/// The events logged for `table` in the hall's stream, read by an independent client.
async fn stream_events(nats: &str, table: &str) -> Vec<Value> {
    stream_records(nats, table)
        .await
        .iter()
        .flat_map(|r| r["events"].as_array().into_iter().flatten().cloned())
        .collect()
}

/// Every record of `table`'s log in the hall's stream, read by an independent client.
async fn stream_records(nats: &str, table: &str) -> Vec<Value> {
    let client = async_nats::connect(nats).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream(tengen_server::cluster::LOG_STREAM).await.unwrap();
    let subject = tengen_server::cluster::log_subject(table);
    let last = stream.get_last_raw_message_by_subject(&subject).await.unwrap().sequence;
    let _ = stream.info().await.unwrap();
    let consumer = stream
        .create_consumer(async_nats::jetstream::consumer::pull::OrderedConfig {
            filter_subject: subject,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    let mut records = Vec::new();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(5), messages.next()).await.unwrap().unwrap().unwrap();
        records.push(serde_json::from_slice(&message.payload).unwrap());
        if message.info().unwrap().stream_sequence >= last {
            return records;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_and_restarted_on_an_empty_folder_rebuilds_its_tables_from_the_stream() {
    let Some(nats) = NatsServer::start("cluster restart") else { return };
    let dir = temp_dir("cluster-restart");
    let (mut child, addr) = spawn_node(&dir.join("first"), &nats.url, "n1");
    let health = get_json(addr, "/healthz").await;
    // A node alone in the hall takes every table at start.
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
    raise_alert(addr, "c").await;
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
    let before = all_events(addr).await;
    let sgf_a = get_text(addr, "/api/tables/a/sgf").await;
    child.kill().unwrap(); // SIGKILL: its leases stay until they run out
    child.wait().unwrap();

    // The same node, restarted with nothing on disk: everything comes from the stream.
    let started = Instant::now();
    let (mut child, addr) = spawn_node(&dir.join("second"), &nats.url, "n1");
    eprintln!("restarted node serving after {:?}", started.elapsed());
    assert_eq!(all_events(addr).await, before, "every event once, in order");
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
    config.cluster = Some(tengen_server::config::ClusterConfig::new(url.clone(), "n1"));
    let Err(err) = tengen_server::start(config, test_engines()).await else { panic!("started without NATS") };
    let text = err.to_string();
    assert!(text.contains("cannot reach NATS at") && text.contains(&url), "{text}");
}

/// A hall of two nodes over tables a and b, their leases living `ttl` seconds: the nodes, and
/// table a's node (its name and address) and the other node's address.
async fn two_nodes_for_table_a(
    nats: &str,
    dir: &Path,
    ttl: f64,
) -> (Vec<NodeProcess>, String, std::net::SocketAddr, std::net::SocketAddr) {
    let (children, nodes) = hall_with_ttl(nats, dir, &["n1", "n2"], &["a", "b"], ttl).await;
    let (owner_name, owner, other) = owner_and_other(&nodes, "a").await;
    (children, owner_name, owner, other)
}

/// In a hall of two nodes: the name and address of the node that owns `table`, and the other's.
async fn owner_and_other(
    nodes: &[(String, std::net::SocketAddr)],
    table: &str,
) -> (String, std::net::SocketAddr, std::net::SocketAddr) {
    let owner_name = owners(nodes).await[table].clone();
    let owner = nodes.iter().find(|(n, _)| *n == owner_name).unwrap().1;
    let other = nodes.iter().find(|(n, _)| *n != owner_name).unwrap().1;
    (owner_name, owner, other)
}

/// Which live node runs each table, from their `/healthz`.
async fn owners(nodes: &[(String, std::net::SocketAddr)]) -> std::collections::BTreeMap<String, String> {
    let mut owners = std::collections::BTreeMap::new();
    for (name, addr) in nodes {
        let health = get_json(*addr, "/healthz").await;
        for table in health["cluster"]["owned_tables"].as_array().unwrap() {
            owners.insert(table.as_str().unwrap().to_owned(), name.clone());
        }
    }
    owners
}

/// Each table's move number, the highest any live node shows (a node not running a table shows
/// it as the table's node last told, a moment behind).
async fn move_numbers(nodes: &[std::net::SocketAddr]) -> std::collections::HashMap<String, u64> {
    let mut numbers = std::collections::HashMap::new();
    for addr in nodes {
        for table in get_json(*addr, "/api/tables").await.as_array().unwrap() {
            let n = table["move_number"].as_u64().unwrap();
            let entry = numbers.entry(table["id"].as_str().unwrap().to_owned()).or_insert(0);
            *entry = (*entry).max(n);
        }
    }
    numbers
}

/// Plays moves `moves` at every table like cameras: each shows the position until the hall has
/// taken the move, posting to the nodes in turn (a camera may post to any node).
async fn play(nodes: &[std::net::SocketAddr], tables: &[String], moves: std::ops::RangeInclusive<usize>) {
    let (first, last) = (*moves.start(), *moves.end());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashMap::<String, u64>::new()));
    let nodes = nodes.to_vec();
    let watcher = tokio::spawn({
        let (seen, nodes) = (seen.clone(), nodes.clone());
        async move {
            loop {
                let numbers = move_numbers(&nodes).await;
                *seen.lock().unwrap() = numbers;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
    let cameras: Vec<_> = tables
        .iter()
        .enumerate()
        .map(|(i, table)| {
            let (seen, nodes, table) = (seen.clone(), nodes.clone(), table.clone());
            tokio::spawn(async move {
                let mut turn = i;
                for n in first..=last {
                    let deadline = Instant::now() + Duration::from_secs(30);
                    while seen.lock().unwrap().get(&table).copied().unwrap_or(0) < u64::try_from(n).unwrap() {
                        assert!(Instant::now() < deadline, "table {table} never reached move {n}");
                        let _ = tokio::time::timeout(
                            Duration::from_secs(2),
                            post_png(nodes[turn % nodes.len()], &table, &position(n)),
                        )
                        .await;
                        turn += 1;
                        tokio::time::sleep(Duration::from_millis(150)).await;
                    }
                }
            })
        })
        .collect();
    for camera in cameras {
        camera.await.unwrap();
    }
    watcher.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_share_thirty_tables_and_take_over_a_killed_nodes_tables() {
    let Some(nats) = NatsServer::start("cluster three nodes") else { return };
    let dir = temp_dir("cluster-hall");
    let tables: Vec<String> = (1..=30).map(|i| format!("t{i:02}")).collect();
    let table_ids: Vec<&str> = tables.iter().map(String::as_str).collect();
    // The tables spread evenly: ten a node (`hall` waits for it).
    let (mut children, mut nodes) = hall(&nats.url, &dir, &["n1", "n2", "n3"], &table_ids).await;
    let addrs: Vec<_> = nodes.iter().map(|(_, a)| *a).collect();
    play(&addrs, &tables, 1..=3).await;
    let mut before = std::collections::BTreeMap::new();
    for table in &tables {
        before.insert(table.clone(), stream_events(&nats.url, table).await);
    }

    // Kill n2; its ten tables move to n1 and n3 within 5 s.
    let killed_at = Instant::now();
    children[1].kill().unwrap();
    children[1].wait().unwrap();
    nodes.remove(1);
    let taken = wait_until(15, || {
        let nodes = nodes.clone();
        async move { owners(&nodes).await.len() == 30 }
    })
    .await;
    let took = killed_at.elapsed();
    eprintln!("the killed node's tables were taken over after {took:?}");
    assert!(taken && took < Duration::from_secs(5), "take-over took {took:?}: {:?}", owners(&nodes).await);

    let addrs: Vec<_> = nodes.iter().map(|(_, a)| *a).collect();
    play(&addrs, &tables, 4..=6).await;
    let owners = owners(&nodes).await;
    // A single process fed the same positions: the reference records.
    let single = tengen_server::start(test_config(dir.join("single"), &table_ids), test_engines()).await.unwrap();
    play(&[single.addr], &tables, 1..=6).await;
    for table in &tables {
        let events = stream_events(&nats.url, table).await;
        let earlier = &before[table];
        assert_eq!(
            &events[..earlier.len()],
            &earlier[..],
            "table {table}: every event before the kill, once, in order"
        );
        let moves: Vec<u64> =
            events.iter().filter(|e| e["kind"] == "move").map(|e| e["move_number"].as_u64().unwrap()).collect();
        assert_eq!(moves, (1..=6).collect::<Vec<u64>>(), "table {table}: each move once");
        let owner = nodes.iter().find(|(n, _)| *n == owners[table]).unwrap().1;
        let sgf = get_text(owner, &format!("/api/tables/{table}/sgf")).await;
        assert_eq!(
            sgf,
            get_text(single.addr, &format!("/api/tables/{table}/sgf")).await,
            "table {table}: the record of a single node"
        );
    }
    single.shutdown_now();
    // Node 1 was killed above; dropping a dead node's process is harmless.
    stop(children, &dir);
}

/// Starts a hall of `names` nodes over `tables` and waits until the tables are spread evenly.
async fn hall(
    nats: &str,
    dir: &Path,
    names: &[&str],
    tables: &[&str],
) -> (Vec<NodeProcess>, Vec<(String, std::net::SocketAddr)>) {
    hall_with_ttl(nats, dir, names, tables, 2.0).await
}

async fn hall_with_ttl(
    nats: &str,
    dir: &Path,
    names: &[&str],
    tables: &[&str],
    ttl: f64,
) -> (Vec<NodeProcess>, Vec<(String, std::net::SocketAddr)>) {
    let mut children = Vec::new();
    let mut nodes = Vec::new();
    for name in names {
        let (child, addr) = spawn_hall_node(&dir.join(name), nats, name, ttl, tables);
        children.push(child);
        nodes.push(((*name).to_owned(), addr));
    }
    let share = tables.len().div_ceil(names.len());
    let spread = wait_until(20, || {
        let nodes = nodes.clone();
        async move {
            let owners = owners(&nodes).await;
            owners.len() == tables.len()
                && nodes.iter().all(|(n, _)| owners.values().filter(|o| *o == n).count() <= share)
        }
    })
    .await;
    assert!(spread, "the tables spread: {:?}", owners(&nodes).await);
    (children, nodes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_client_cut_from_one_node_resumes_on_another_with_no_gap_and_no_duplicate() {
    let Some(nats) = NatsServer::start("cluster SSE resume") else { return };
    let dir = temp_dir("cluster-sse");
    let table_ids = ["a", "b"];
    let tables: Vec<String> = table_ids.iter().map(|t| (*t).to_owned()).collect();
    let (children, nodes) = hall(&nats.url, &dir, &["n1", "n2"], &table_ids).await;
    let (node_a, node_b) = (nodes[0].1, nodes[1].1);
    let addrs = [node_a, node_b];

    // A dashboard on node A hears both tables (one analysed on each node), and is cut after
    // four events.
    let first_part = tokio::spawn(async move { read_sse(node_a, "/api/stream", None, 4).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    play(&addrs, &tables, 1..=3).await;
    let seen = first_part.await.unwrap();
    assert_eq!(seen.len(), 4, "{seen:?}");
    // Play goes on while the client is away.
    play(&addrs, &tables, 4..=5).await;

    // Every node serves the same events with the same ids.
    let expected = get_json(node_a, "/api/events?limit=1000").await["events"].as_array().unwrap().clone();
    let on_b = get_json(node_b, "/api/events?limit=1000").await["events"].as_array().unwrap().clone();
    assert_eq!(expected, on_b, "the same events and ids on every node");
    let moves = expected.iter().filter(|e| e["kind"] == "move").count();
    assert_eq!(moves, 10, "{expected:?}");
    assert!(table_ids.iter().all(|t| expected.iter().any(|e| e["table"] == *t)), "both tables: {expected:?}");

    // It comes back on node B with the last id it saw.
    let last_seen = seen.last().unwrap().0.expect("events carry ids");
    let rest = read_sse(node_b, "/api/stream", Some(last_seen), expected.len() - seen.len()).await;
    let received: Vec<Value> = seen.iter().chain(&rest).map(|(_, _, event)| event.clone()).collect();
    assert_eq!(received, expected, "every event once, in order, across the two nodes");
    assert!(seen.iter().chain(&rest).all(|(id, _, event)| *id == event["id"].as_i64()), "the SSE id is the event's");
    stop(children, &dir);
}

/// An arbiter's request with a JSON body: its status and body.
async fn arbiter_request(addr: std::net::SocketAddr, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let auth = format!("Bearer {ARBITER}");
    let (status, _, bytes) = http(
        addr,
        method,
        path,
        &[("Authorization", &auth), ("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .await;
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arbiter_action_posted_to_any_node_is_carried_out_by_the_tables_node_with_its_answer() {
    let Some(nats) = NatsServer::start("cluster arbiter") else { return };
    let dir = temp_dir("cluster-arbiter");
    let (children, _, owner, other) = two_nodes_for_table_a(&nats.url, &dir, 2.0).await;

    // A stone taken off table a's board: an alert, on the table's node.
    assert_eq!(post_png(other, "a", &[(3, 3, 'B')]).await, 202);
    assert!(wait_until(10, || async move { move_number(owner, "a").await == 1 }).await);
    assert_eq!(post_png(other, "a", &[]).await, 202);
    assert!(wait_until(10, || async move { get_json(owner, "/api/tables/a").await["open_alerts"] == 1 }).await);
    let alert_id = get_json(owner, "/api/tables/a").await["newest_alert"]["alert_id"].clone();

    // A refused action: the same answer from the node that does not run the table as from the
    // one that does.
    let bad = serde_json::json!({"action": "mark_dead", "points": ["Z99"]});
    let (status, body) = arbiter_request(other, "POST", "/api/tables/a/arbiter", &bad).await;
    assert_eq!((status, &body), (422, &arbiter_request(owner, "POST", "/api/tables/a/arbiter", &bad).await.1));
    assert_eq!(body["error"], "invalid_action", "{body}");

    // Confirmed through the other node: carried out on the table's node.
    let confirm = serde_json::json!({"action": "confirm", "alert_id": alert_id});
    let (status, body) = arbiter_request(other, "POST", "/api/tables/a/arbiter", &confirm).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["events"][0]["kind"], "arbiter", "{body}");
    let table = get_json(owner, "/api/tables/a").await;
    assert_eq!(table["open_alerts"], 0, "{table}");
    let logged = stream_events(&nats.url, "a").await;

    // Confirmed again: refused alike on both nodes, and nothing is logged.
    let (status, body) = arbiter_request(other, "POST", "/api/tables/a/arbiter", &confirm).await;
    let on_owner = arbiter_request(owner, "POST", "/api/tables/a/arbiter", &confirm).await;
    assert!((400..500).contains(&status), "{status} {body}");
    assert_eq!((status, body), on_owner, "the table's node's answer, as it is");
    assert_eq!(stream_events(&nats.url, "a").await, logged, "a refused action changes nothing");

    // A calibration set through the other node is the table's.
    let corners = serde_json::json!({"corners": [[1.0, 1.0], [75.0, 1.0], [75.0, 75.0], [1.0, 75.0]]});
    let (status, body) = arbiter_request(other, "PUT", "/api/tables/a/calibration", &corners).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(get_json(owner, "/api/tables/a/calibration").await["corners"], corners["corners"]);

    // The game's record from either node: the table's node writes it.
    let sgf = get_text(owner, "/api/tables/a/sgf").await;
    assert!(sgf.contains(";B["), "{sgf}");
    assert_eq!(get_text(other, "/api/tables/a/sgf").await, sgf);
    stop(children, &dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_shows_every_table_with_its_node_and_says_its_part_in_healthz_and_metrics() {
    let Some(nats) = NatsServer::start("cluster hall view") else { return };
    let dir = temp_dir("cluster-view");
    let table_ids = ["a", "b", "c", "d"];
    let tables: Vec<String> = table_ids.iter().map(|t| (*t).to_owned()).collect();
    let (children, nodes) = hall(&nats.url, &dir, &["n1", "n2"], &table_ids).await;
    let addrs: Vec<_> = nodes.iter().map(|(_, a)| *a).collect();
    play(&addrs, &tables, 1..=2).await;
    let owners = owners(&nodes).await;

    // Each node's hall view: every table at its move, with the node analysing it.
    for (name, addr) in &nodes {
        let addr = *addr;
        let owners = owners.clone();
        let shown = wait_until(10, || {
            let owners = owners.clone();
            async move {
                let view = get_json(addr, "/api/tables").await;
                let view = view.as_array().unwrap();
                view.len() == 4
                    && view.iter().all(|t| {
                        t["move_number"] == 2
                            && t["node"].as_str() == owners.get(t["id"].as_str().unwrap()).map(String::as_str)
                    })
            }
        })
        .await;
        assert!(shown, "node {name}: {} (owners {owners:?})", get_json(addr, "/api/tables").await);
        // A table analysed elsewhere in full, as its node tells it.
        let remote = owners.iter().find(|(_, owner)| *owner != name).unwrap().0;
        let detail = get_json(addr, &format!("/api/tables/{remote}")).await;
        assert_eq!(detail["view"]["moves"].as_array().unwrap().len(), 2, "{detail}");

        let health = get_json(addr, "/healthz").await;
        let owned: Vec<&String> = owners.iter().filter(|(_, o)| *o == name).map(|(t, _)| t).collect();
        assert_eq!(health["cluster"]["owned_tables"], serde_json::json!(owned), "{health}");
        assert_eq!(health["cluster"]["nats"], "connected", "{health}");
        assert_eq!(health["cluster"]["nodes"], 2, "{health}");
        assert!(health["cluster"]["lease_renewals"].is_u64(), "{health}");
        let metrics = get_text(addr, "/metrics").await;
        for line in [
            format!("tengen_cluster_owned_tables{{node=\"{name}\"}} {}", owned.len()),
            format!("tengen_cluster_nats_connected{{node=\"{name}\"}} 1"),
            format!("tengen_cluster_nodes{{node=\"{name}\"}} 2"),
        ] {
            assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
        }
        // The first node took every table before the second joined, then gave half up.
        let takeovers = format!("tengen_cluster_takeovers_total{{node=\"{name}\"}} ");
        let took: usize = metrics.lines().find_map(|l| l.strip_prefix(&takeovers)).unwrap().parse().unwrap();
        assert!(took >= owned.len(), "{took} take-overs, {} tables owned", owned.len());
    }
    stop(children, &dir);
}

/// Shows position `n` at `table` on the node at `addr` until that node has read move `n`.
async fn play_on(addr: std::net::SocketAddr, table: &'static str, n: usize) -> bool {
    wait_until(10, || async move {
        post_png(addr, table, &position(n)).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        move_number(addr, table).await >= u64::try_from(n).unwrap()
    })
    .await
}

/// Each table's move events in the hall's stream, by move number.
async fn logged_moves(nats: &str, table: &str) -> Vec<u64> {
    stream_events(nats, table)
        .await
        .iter()
        .filter(|e| e["kind"] == "move")
        .map(|e| e["move_number"].as_u64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_restarted_mid_game_loses_and_repeats_no_accepted_event_and_the_nodes_say_the_outage() {
    let Some(mut nats) = NatsServer::start("cluster NATS restart") else { return };
    let dir = temp_dir("cluster-nats-restart");
    let table_ids = ["a", "b"];
    let tables: Vec<String> = table_ids.iter().map(|t| (*t).to_owned()).collect();
    // Leases live 8 s: longer than the outage, so no table changes hands meanwhile.
    let (children, nodes) = hall_with_ttl(&nats.url, &dir, &["n1", "n2"], &table_ids, 8.0).await;
    let addrs: Vec<_> = nodes.iter().map(|(_, a)| *a).collect();
    play(&addrs, &tables, 1..=2).await;
    let owners = owners(&nodes).await;
    let node_of = |table: &str| nodes.iter().find(|(n, _)| *n == owners[table]).unwrap().1;

    nats.stop();
    // Each table's node goes on reading its camera and refereeing.
    for n in 3..=4 {
        for table in table_ids {
            assert!(play_on(node_of(table), table, n).await, "table {table} reads move {n} with NATS away");
        }
    }
    let mut kept = 0;
    for (name, addr) in &nodes {
        let health = get_json(*addr, "/healthz").await;
        assert_ne!(health["cluster"]["nats"], "connected", "{name}: {health}");
        kept += health["cluster"]["buffered_records"].as_u64().unwrap();
    }
    assert!(kept >= 4, "moves 3 and 4 of both tables kept in memory: {kept}");
    // An arbiter's command cannot be logged now: refused before it changes anything.
    let pass = serde_json::json!({"action": "pass", "colour": "white"});
    let (status, body) = arbiter_request(node_of("a"), "POST", "/api/tables/a/arbiter", &pass).await;
    assert_eq!((status, body["error"].as_str()), (503, Some("hall_log_unreachable")), "{body}");

    nats.spawn();
    for (name, addr) in &nodes {
        let addr = *addr;
        let back = wait_until(20, || async move {
            let health = get_json(addr, "/healthz").await;
            health["cluster"]["nats"] == "connected" && health["cluster"]["buffered_records"] == 0
        })
        .await;
        let health = get_json(addr, "/healthz").await;
        assert!(back, "{name} sent what it kept: {health}");
        assert!(health["cluster"]["nats_outages"].as_u64().unwrap() >= 1, "{health}");
        assert_eq!(health["cluster"]["records_refused"], 0, "{health}");
        let metrics = get_text(addr, "/metrics").await;
        assert!(metrics.contains(&format!("tengen_cluster_nats_outages_total{{node=\"{name}\"}} ")), "{metrics}");
    }
    play(&addrs, &tables, 5..=5).await;
    for table in table_ids {
        assert_eq!(logged_moves(&nats.url, table).await, [1, 2, 3, 4, 5], "table {table}: every move once, in order");
    }
    let on_a = get_json(addrs[0], "/api/events?limit=1000").await;
    assert_eq!(on_a, get_json(addrs[1], "/api/events?limit=1000").await, "the same on every node");
    stop(children, &dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_memory_for_the_log_is_full_refuses_frames_and_loses_nothing_it_read() {
    let Some(mut nats) = NatsServer::start("cluster buffer full") else { return };
    let dir = temp_dir("cluster-buffer-full");
    let (mut child, addr) = spawn_node_spec(
        &dir.join("n1"),
        &nats.url,
        "n1",
        &NodeSpec { buffer_bytes: 1500, ..NodeSpec::hall(8.0, &["a"]) },
    );
    assert!(play_on(addr, "a", 1).await);

    nats.stop();
    let auth = format!("Bearer {CAMERA}");
    let mut refused = None;
    'play: for n in 2..=40 {
        let deadline = Instant::now() + Duration::from_secs(10);
        while move_number(addr, "a").await < u64::try_from(n).unwrap() {
            assert!(Instant::now() < deadline, "move {n} never read");
            let (status, _, body) = http(
                addr,
                "POST",
                "/api/tables/a/frames",
                &[("Authorization", &auth), ("Content-Type", "image/png")],
                &board_png(&position(n)),
            )
            .await;
            if status == 503 {
                refused = Some(serde_json::from_slice::<Value>(&body).unwrap());
                break 'play;
            }
            assert_eq!(status, 202);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let refused = refused.expect("frames refused once the memory is full");
    assert_eq!(refused["error"], "log_buffer_full", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("NATS"), "{refused}");
    let read = move_number(addr, "a").await;
    assert!(read >= 2, "moves read with NATS away before the memory filled: {read}");

    nats.spawn();
    let back =
        wait_until(20, || async move { get_json(addr, "/healthz").await["cluster"]["buffered_records"] == 0 }).await;
    assert!(back, "{}", get_json(addr, "/healthz").await);
    let expected: Vec<u64> = (1..=read).collect();
    assert_eq!(logged_moves(&nats.url, "a").await, expected, "every move the node read, once");
    // Frames are taken again, and play goes on.
    let next = usize::try_from(read).unwrap() + 1;
    assert!(play_on(addr, "a", next).await, "play goes on");
    assert!(wait_until(10, || async { logged_moves(&nats.url, "a").await.len() == next }).await, "and is logged");
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

/// A camera the service pulls (`snapshot`): an HTTP server answering every GET with a board of
/// one stone, counting the requests by path (each node is given its own path).
struct SnapshotCamera {
    url: String,
    pulls: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
    task: tokio::task::JoinHandle<()>,
}

impl SnapshotCamera {
    async fn start() -> Self {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let pulls = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
        let png = board_png(&position(1));
        let counted = pulls.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else { return };
                let (counted, png) = (counted.clone(), png.clone());
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&request);
                    let path = text.split_whitespace().nth(1).unwrap_or("").to_owned();
                    *counted.lock().unwrap().entry(path).or_insert(0) += 1;
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        png.len()
                    );
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(&png).await;
                });
            }
        });
        Self { url, pulls, task }
    }

    /// The camera's URL as node `node` is told it.
    fn url_for(&self, node: &str) -> String {
        format!("{}/{node}.png", self.url)
    }

    /// How many times node `node` pulled a frame.
    fn pulls_by(&self, node: &str) -> usize {
        self.pulls.lock().unwrap().get(&format!("/{node}.png")).copied().unwrap_or(0)
    }
}

impl Drop for SnapshotCamera {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pulled_camera_is_pulled_by_the_tables_node_only_and_moves_with_the_table() {
    let Some(nats) = NatsServer::start("cluster pulled camera") else { return };
    let dir = temp_dir("cluster-pulled");
    let camera = SnapshotCamera::start().await;
    let table_ids = ["a", "b"];
    let mut children = Vec::new();
    let mut nodes = Vec::new();
    for name in ["n1", "n2"] {
        let snapshot = format!("a={}", camera.url_for(name));
        let spec = NodeSpec { buffer_bytes: 64 << 20, snapshot: &snapshot, ..NodeSpec::hall(2.0, &table_ids) };
        let (child, addr) = spawn_node_spec(&dir.join(name), &nats.url, name, &spec);
        children.push(child);
        nodes.push((name.to_owned(), addr));
    }
    let spread = wait_until(20, || {
        let nodes = nodes.clone();
        async move {
            let owners = owners(&nodes).await;
            owners.len() == 2 && owners["a"] != owners["b"]
        }
    })
    .await;
    assert!(spread, "a table a node: {:?}", owners(&nodes).await);
    let owner_name = owners(&nodes).await["a"].clone();
    let (owner_index, other_index) = if owner_name == "n1" { (0, 1) } else { (1, 0) };
    let (owner, other) = (nodes[owner_index].clone(), nodes[other_index].clone());

    // The table's node pulls the camera and reads the board; the other node does not pull it
    // (the first node alone took every table at its start, and pulled then).
    let owner_addr = owner.1;
    assert!(
        wait_until(10, || async move { move_number(owner_addr, "a").await == 1 }).await,
        "the owner reads the pulled camera"
    );
    let (by_owner, by_other) = (camera.pulls_by(&owner.0), camera.pulls_by(&other.0));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let pulls = format!("{:?}", camera.pulls.lock().unwrap());
    assert!(camera.pulls_by(&owner.0) >= by_owner + 5, "the owner pulls: {pulls}");
    assert_eq!(camera.pulls_by(&other.0), by_other, "the other node does not pull: {pulls}");

    // The owner dies: the other node takes the table and pulls its camera from then on.
    children[owner_index].kill().unwrap();
    children[owner_index].wait().unwrap();
    let survivor = [other.clone()];
    let taken = wait_until(15, || {
        let survivor = survivor.clone();
        async move { owners(&survivor).await.len() == 2 }
    })
    .await;
    assert!(taken, "the survivor takes both tables: {:?}", owners(&survivor).await);
    let (other_name, pulls) = (other.0.as_str(), &camera);
    assert!(
        wait_until(10, || async move { pulls.pulls_by(other_name) >= by_other + 5 }).await,
        "the new owner pulls: {:?}",
        camera.pulls.lock().unwrap()
    );
    // The game goes on from the log: the board the camera shows is the game's first move.
    let table = get_json(other.1, "/api/tables/a").await;
    assert_eq!((table["move_number"].as_u64(), table["node"].as_str()), (Some(1), Some(other.0.as_str())), "{table}");
    assert_eq!(logged_moves(&nats.url, "a").await, [1], "the move logged once");
    // The owner was killed above; dropping a dead node's process is harmless.
    stop(children, &dir);
}

/// The bytes of `path` on the node at `addr`, with the status.
async fn get_bytes(addr: std::net::SocketAddr, path: &str) -> (u16, Vec<u8>) {
    let (status, _, body) = http(addr, "GET", path, &[], b"").await;
    (status, body)
}

/// The alerts logged for `table`, as the node at `addr` serves them.
async fn alerts(addr: std::net::SocketAddr, table: &str) -> Vec<Value> {
    let page = get_json(addr, &format!("/api/events?table={table}&limit=1000")).await;
    page["events"].as_array().unwrap().iter().filter(|e| e["severity"] == "alert").cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_images_are_in_the_hall_for_every_node_and_an_image_not_stored_is_said() {
    let Some(mut nats) = NatsServer::start("cluster evidence") else { return };
    let dir = temp_dir("cluster-evidence");
    // Leases live 8 s: longer than the outage below, so no table changes hands meanwhile.
    let (children, owner_name, owner, other) = two_nodes_for_table_a(&nats.url, &dir, 8.0).await;

    // A stone taken off table a's board: an alert with before/after images.
    assert!(play_on(owner, "a", 1).await);
    assert_eq!(post_png(owner, "a", &[]).await, 202);
    assert!(wait_until(10, || async move { alerts(other, "a").await.len() == 1 }).await, "the alert is logged");
    let alert = alerts(other, "a").await.remove(0);
    assert_eq!((alert["evidence"].as_bool(), alert.get("evidence_error")), (Some(true), None), "{alert}");
    let id = alert["id"].as_i64().unwrap();
    // The node that did not make the images serves them, the same bytes as the one that did.
    for image in ["before.jpg", "after.jpg"] {
        let path = format!("/api/events/{id}/{image}");
        let (status, bytes) = get_bytes(other, &path).await;
        assert_eq!(status, 200, "{image} from the other node: {}", String::from_utf8_lossy(&bytes));
        assert!(image::load_from_memory(&bytes).is_ok(), "{image} decodes");
        assert_eq!(get_bytes(owner, &path).await, (200, bytes), "{image}: the same on both nodes");
    }
    let (status, _) = get_bytes(other, &format!("/api/events/{}/after.jpg", id + 1)).await;
    assert_eq!(status, 404, "an event without images");
    let health = get_json(owner, "/healthz").await;
    assert_eq!(health["cluster"]["evidence_images_stored"], 2, "{health}");

    // NATS away: the other node says the hall's images cannot be read now; the table's node
    // goes on, and an alert raised meanwhile is logged without its images and says why.
    nats.stop();
    let (status, body) = get_bytes(other, &format!("/api/events/{id}/after.jpg")).await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!((status, body["error"].as_str()), (503, Some("evidence_store_unreachable")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("tengen_evidence"), "{body}");
    let back = wait_until(10, || async move {
        post_png(owner, "a", &position(1)).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        get_json(owner, "/api/tables/a").await["view"]["physical"].as_str().unwrap().contains('B')
    })
    .await;
    assert!(back, "the stone is put back");
    assert_eq!(post_png(owner, "a", &[]).await, 202);
    assert!(
        wait_until(10, || async move { get_json(owner, "/healthz").await["cluster"]["evidence_images_lost"] == 2 })
            .await,
        "{}",
        get_json(owner, "/healthz").await
    );
    nats.spawn();
    let logged = wait_until(20, || async move {
        let health = get_json(owner, "/healthz").await;
        health["cluster"]["buffered_records"] == 0 && alerts(other, "a").await.len() == 2
    })
    .await;
    assert!(logged, "{}", get_json(owner, "/healthz").await);
    let late = alerts(other, "a").await.remove(1);
    assert_eq!(late["evidence"], false, "{late}");
    let why = late["evidence_error"].as_str().unwrap_or_default();
    assert!(why.contains("NATS") && why.contains("tengen_evidence"), "{late}");
    let metrics = get_text(owner, "/metrics").await;
    let line = format!("tengen_cluster_evidence_images_lost_total{{node=\"{owner_name}\"}} 2");
    assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    // The first alert's images are still served by every node.
    assert_eq!(get_bytes(other, &format!("/api/events/{id}/after.jpg")).await.0, 200);
    stop(children, &dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_games_of_a_table_analysed_elsewhere_are_served_by_every_node() {
    let Some(nats) = NatsServer::start("cluster games by id") else { return };
    let dir = temp_dir("cluster-games");
    let (children, _, owner, other) = two_nodes_for_table_a(&nats.url, &dir, 2.0).await;
    let addrs = [owner, other];
    let table = ["a".to_owned()];

    // Two games at table a: three moves, a new game, two moves.
    play(&addrs, &table, 1..=3).await;
    let (status, body) =
        arbiter_request(other, "POST", "/api/tables/a/arbiter", &serde_json::json!({"action": "new_game"})).await;
    assert_eq!(status, 200, "{body}");
    play(&addrs, &table, 1..=2).await;

    // The node that does not run the table lists the same games, with the same rows.
    let games = get_json(owner, "/api/tables/a/games").await;
    assert_eq!(games.as_array().unwrap().len(), 2, "{games}");
    assert_eq!(get_json(other, "/api/tables/a/games").await, games, "the table's games from the other node");
    for game in games.as_array().unwrap() {
        let id = game["id"].as_i64().unwrap();
        // The game's detail (the live one's view as the table's node last told) and record.
        let same = wait_until(10, || async move {
            get_json(other, &format!("/api/games/{id}")).await == get_json(owner, &format!("/api/games/{id}")).await
        })
        .await;
        assert!(same, "game {id}: {} on the other node", get_json(other, &format!("/api/games/{id}")).await);
        let sgf = get_text(owner, &format!("/api/games/{id}/sgf")).await;
        assert!(sgf.contains(";B["), "{sgf}");
        assert_eq!(get_text(other, &format!("/api/games/{id}/sgf")).await, sgf, "game {id}'s record");
    }
    // Newest first: the live game, then the finished one.
    let detail = get_json(other, &format!("/api/games/{}", games[0]["id"])).await;
    assert_eq!((detail["live"].as_bool(), detail["view"]["moves"].as_array().map(Vec::len)), (Some(true), Some(2)));
    assert_eq!(get_json(other, &format!("/api/games/{}", games[1]["id"])).await["live"], false);
    // A game the hall never had, and a sequence of the log that is not a game.
    let (status, _, _) = http(other, "GET", "/api/games/999999", &[], b"").await;
    assert_eq!(status, 404);
    let not_a_game = games[0]["id"].as_i64().unwrap() + 1;
    let (status, _, _) = http(other, "GET", &format!("/api/games/{not_a_game}/sgf"), &[], b"").await;
    assert_eq!(status, 404);
    stop(children, &dir);
}

/// A table's log is fenced as a whole: a record another writer put on the table's `quiet`
/// subject refuses the node's next append, whichever subject that goes to (here `events`, a
/// move), and the node re-reads the log, gives the table up and takes it again from the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_another_writer_put_on_either_subject_fences_the_nodes_next_append() {
    let Some(nats) = NatsServer::start("cluster fence") else { return };
    let dir = temp_dir("cluster-fence");
    let (child, addr) = spawn_hall_node(&dir.join("n1"), &nats.url, "n1", 3.0, &["a"]);
    assert!(play_on(addr, "a", 1).await, "move 1 played");
    assert!(wait_until(10, || async { logged_moves(&nats.url, "a").await == [1] }).await, "move 1 logged");
    assert_eq!(get_json(addr, "/healthz").await["cluster"]["takeovers"], 1);

    // Another writer follows the table's last record, on the quiet subject.
    let js = async_nats::jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let stream = js.get_stream(tengen_server::cluster::LOG_STREAM).await.unwrap();
    let table_log = tengen_server::cluster::log_subject("a");
    let last = stream.get_last_raw_message_by_subject(&table_log).await.unwrap().sequence;
    let foreign = async_nats::jetstream::message::PublishMessage::build()
        .payload(r#"{"record":"calibration","corners":null,"at_ms":1}"#.into())
        .expected_last_subject_sequence(last)
        .header("Nats-Expected-Last-Subject-Sequence-Subject", table_log.as_str());
    let ack = js.send_publish("tengen.log.a.quiet", foreign).await.unwrap().await.unwrap();

    // The node's move 2 is refused once, then logged after the table is taken again.
    assert!(
        wait_until(20, || async {
            post_png(addr, "a", &position(2)).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            logged_moves(&nats.url, "a").await == [1, 2]
        })
        .await,
        "move 2 logged once after the take-over: {:?}, {}, {}",
        logged_moves(&nats.url, "a").await,
        get_json(addr, "/healthz").await,
        get_json(addr, "/api/tables/a").await
    );
    let health = get_json(addr, "/healthz").await;
    assert_eq!(health["cluster"]["takeovers"], 2, "given up and taken again: {health}");
    // Every record after the foreign one follows it (the node re-read the log before writing).
    let after = stream.get_last_raw_message_by_subject(&table_log).await.unwrap().sequence;
    assert!(after > ack.sequence, "the node writes after the foreign record");
    stop(vec![child], &dir);
}

/// The rows of a node's mirror of the hall's log (its SQLite), as (row, kind, body).
fn mirrored_log(node_dir: &Path) -> Vec<(i64, String, String)> {
    let path = node_dir.join("data").join("cluster-mirror").join("tengen.sqlite");
    let conn = rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut rows = conn.prepare("SELECT seq, kind, body FROM log ORDER BY seq").unwrap();
    rows.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_readings_share_records_and_a_node_rebuilt_from_the_log_mirrors_every_one_on_the_same_row() {
    let Some(nats) = NatsServer::start("cluster quiet") else { return };
    let dir = temp_dir("cluster-quiet");
    let (mut child, addr) = spawn_hall_node(&dir.join("first"), &nats.url, "n1", 3.0, &["a"]);
    assert!(play_on(addr, "a", 1).await, "move 1 played");
    // The board stays as it is: readings that change nothing.
    for _ in 0..16 {
        assert_eq!(post_png(addr, "a", &position(1)).await, 202);
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    // None waits longer than 2 s.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let records = stream_records(&nats.url, "a").await;
    let quiet: Vec<&Value> = records.iter().filter(|r| r["record"] == "quiet").collect();
    let readings: usize = quiet.iter().map(|r| r["readings"].as_array().unwrap().len()).sum();
    let first = mirrored_log(&dir.join("first"));
    let observations = first.iter().filter(|(_, kind, _)| kind == "observation").count();
    let batches = records.iter().filter(|r| r["record"] == "batch").count();
    assert_eq!(readings + batches, observations, "every reading analysed is in the log once: {records:?}");
    assert!(readings >= 8, "the frames were read: {readings} quiet readings");
    assert!(quiet.len() * 3 <= readings, "{} quiet records for {readings} readings", quiet.len());
    assert!(
        records
            .iter()
            .filter(|r| r["record"] == "batch")
            .all(|r| r["events"].as_array().is_some_and(|e| !e.is_empty())),
        "a batch record carries events: {records:?}"
    );
    child.kill().unwrap();
    child.wait().unwrap();

    // Rebuilt from the stream alone: the same rows, numbered the same (event ids depend on them).
    let (second, addr) = spawn_hall_node(&dir.join("second"), &nats.url, "n1", 3.0, &["a"]);
    assert!(wait_until(20, || async move { move_number(addr, "a").await == 1 }).await, "the table is taken again");
    let last = first.last().unwrap().0;
    let rebuilt: Vec<_> = mirrored_log(&dir.join("second")).into_iter().filter(|(row, ..)| *row <= last).collect();
    assert_eq!(rebuilt, first);
    stop(vec![second], &dir);
}

/// Frames a node has analysed for `table` (its `/metrics`).
async fn frames_analysed(addr: std::net::SocketAddr, table: &str) -> u64 {
    let text = get_text(addr, "/metrics").await;
    let line = format!("tengen_frames_analysed_total{{table=\"{table}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(line.as_str())).and_then(|v| v.trim().parse().ok()).unwrap()
}

/// Readings of `table` in the hall's log: one a `batch`, each of a `quiet` record's.
async fn logged_readings(nats: &str, table: &str) -> usize {
    stream_records(nats, table)
        .await
        .iter()
        .map(|r| match r["record"].as_str() {
            Some("batch") => 1,
            Some("quiet") => r["readings"].as_array().map_or(0, Vec::len),
            _ => 0,
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_stopped_with_sigterm_leaves_the_hall_logging_every_reading_and_its_table_moves_at_once() {
    let Some(nats) = NatsServer::start("cluster leave") else { return };
    let dir = temp_dir("cluster-leave");
    // Leases of 15 s: a take-over sooner than that is the leaving node's doing, not expiry.
    let ttl = 15.0;
    let (first, addr1) = spawn_hall_node(&dir.join("first"), &nats.url, "n1", ttl, &["a"]);
    assert!(play_on(addr1, "a", 1).await, "move 1 played");
    let (second, addr2) = spawn_hall_node(&dir.join("second"), &nats.url, "n2", ttl, &["a"]);
    let second_node = [("n2".to_owned(), addr2)];
    // The board stays as it is: readings that change nothing wait to share a record (≤ 2 s).
    for _ in 0..6 {
        assert_eq!(post_png(addr1, "a", &position(1)).await, 202);
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    let mut analysed = frames_analysed(addr1, "a").await;
    loop {
        tokio::time::sleep(Duration::from_millis(150)).await;
        let now = frames_analysed(addr1, "a").await;
        if now == analysed {
            break;
        }
        analysed = now;
    }
    eprintln!("before the stop: {} of {analysed} readings logged", logged_readings(&nats.url, "a").await);
    let stopped_at = Instant::now();
    first.terminate();
    let mut first = first;
    let exit = first.wait().unwrap();
    assert!(exit.success(), "the node stops by itself: {exit:?}");
    assert_eq!(
        logged_readings(&nats.url, "a").await,
        usize::try_from(analysed).unwrap(),
        "every reading the node analysed is in the hall's log"
    );
    let taken = wait_until(20, || {
        let nodes = second_node.clone();
        async move { owners(&nodes).await.contains_key("a") }
    })
    .await;
    let took = stopped_at.elapsed();
    eprintln!("the table moved {took:?} after SIGTERM");
    assert!(taken && took < Duration::from_secs(10), "took {took:?}; the lease alone would take {ttl} s");
    assert!(play_on(addr2, "a", 2).await, "the game goes on on n2");
    assert_eq!(logged_moves(&nats.url, "a").await, vec![1, 2], "each move once");
    stop(vec![first, second], &dir);
}
