//! Crash test: a server in a child process is killed with SIGKILL in the middle of a game while
//! frames are arriving, restarted on the same data folder, and must show every event it had
//! published and the same position, then carry on.
//!
//! The child is this test binary re-executed with `TENGEN_CRASH_CHILD_DIR` set: it runs the
//! service (the same `tengen_server::start` that `tengen serve` runs) and writes its address.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, clippy::zombie_processes)]

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;

const CHILD_ENV: &str = "TENGEN_CRASH_CHILD_DIR";

/// Runs the service when re-executed as the child; does nothing in a normal test run.
#[test]
fn crash_child_server() {
    let Ok(dir) = std::env::var(CHILD_ENV) else { return };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let dir = std::path::PathBuf::from(dir);
        let config = test_config(dir.join("data"), &["1", "2"]);
        let server = tengen_server::start(config, test_engines()).await.unwrap();
        let tmp = dir.join("addr.tmp");
        std::fs::write(&tmp, server.addr.to_string()).unwrap();
        std::fs::rename(&tmp, dir.join("addr")).unwrap();
        server.wait().await.unwrap();
    });
}

fn spawn_child(dir: &Path) -> (Child, std::net::SocketAddr) {
    let _ = std::fs::remove_file(dir.join("addr"));
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child_server", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (child, child_address(dir, 20, "child server"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_game_loses_no_event_and_resumes_the_position() {
    let dir = temp_dir("crash");
    let (mut child, addr) = spawn_child(&dir);

    // Table 1 plays 12 moves; table 2 gets an alert; frames keep coming while we kill.
    for n in 0..=12 {
        assert_eq!(post_png(addr, "1", &position(n)).await, 202);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    raise_alert(addr, "2").await;
    assert!(
        wait_until(10, || async move {
            get_json(addr, "/api/tables/1").await["move_number"] == 12
                && get_json(addr, "/api/tables/2").await["open_alerts"] == 1
        })
        .await,
        "the game reached move 12 and table 2 has its alert"
    );

    // Frames in flight at the moment of the kill.
    let flood = tokio::spawn(async move {
        for n in 13..=30 {
            let _ = tokio::time::timeout(Duration::from_secs(2), post_png(addr, "1", &position(n))).await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    tokio::time::sleep(Duration::from_millis(40)).await;
    let seen_before_kill = all_events(addr).await;
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let _ = flood.await;

    let (mut child, addr) = spawn_child(&dir);
    let after = all_events(addr).await;
    // Every event published before the kill is still there, unchanged, in the same order.
    assert!(after.len() >= seen_before_kill.len());
    assert_eq!(&after[..seen_before_kill.len()], &seen_before_kill[..]);
    // The position is the one the log describes: as many moves as move events logged, and the
    // record matches them move for move.
    let table = get_json(addr, "/api/tables/1").await;
    let logged_moves: Vec<&Value> = after.iter().filter(|e| e["table"] == "1" && e["kind"] == "move").collect();
    let record = table["view"]["moves"].as_array().unwrap();
    assert!(record.len() >= 12, "{table}");
    assert_eq!(record.len(), logged_moves.len());
    for (entry, event) in record.iter().zip(&logged_moves) {
        assert_eq!(entry["number"], event["move_number"]);
    }
    let two = get_json(addr, "/api/tables/2").await;
    assert_eq!(two["open_alerts"], 1, "the open alert survived: {two}");

    // And the game goes on from there.
    let next = record.len() + 1;
    assert_eq!(post_png(addr, "1", &position(next)).await, 202);
    assert!(
        wait_until(10, || async move {
            get_json(addr, "/api/tables/1").await["move_number"].as_u64() == Some(u64::try_from(next).unwrap())
        })
        .await,
        "play continues after the restart"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}
