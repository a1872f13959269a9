//! Game setup through the service: each table's games start as configured (an even game, N
//! handicap stones, or the board as found), a new game may say how it starts, and the setup
//! survives a restart. Stones on the board when an even game starts are one alert, not moves.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::*;
use tengen_server::imaging::FrameFormat;
use tengen_server::json::ArbiterAction;
use tengen_server::model::StartPosition;
use tengen_server::store::EventFilter;
use tengen_server::table::{Frame, TableHandle};

/// The four corner star points and the centre: five black stones.
const FIVE: [(u32, u32, char); 5] = [(3, 3, 'B'), (15, 3, 'B'), (3, 15, 'B'), (15, 15, 'B'), (9, 9, 'B')];

/// Shows a board to a table's camera until the table has analysed it, six times (the
/// referee accepts a board after several clear frames).
async fn show(hub: &tengen_server::Hub, id: &str, stones: &[(u32, u32, char)]) {
    let table: &Arc<TableHandle> = &hub.tables[id];
    let png = Arc::new(board_png(stones));
    for _ in 0..6 {
        let before = table.metrics.latency.count();
        let at_ms = hub.clock.now_ms();
        table.offer_frame(Frame { bytes: Arc::clone(&png), format: FrameFormat::Png, received: Instant::now(), at_ms });
        assert!(analysed(table, before, 5).await, "the frame was analysed");
    }
}

/// A table's live record, fetched over HTTP.
async fn sgf_of(server: &tengen_server::RunningServer, table: &str) -> String {
    let (status, _, body) = http(server.addr, "GET", &format!("/api/tables/{table}/sgf"), &[], b"").await;
    assert_eq!(status, 200);
    String::from_utf8(body).unwrap()
}

async fn kinds(hub: &tengen_server::Hub, table: &str) -> Vec<String> {
    let events =
        hub.store.events_after(EventFilter { table: Some(table.into()), ..EventFilter::first(1000) }).await.unwrap();
    events.into_iter().map(|e| e.event.kind.name().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_table_checks_the_first_board_against_its_setup_and_keeps_it_across_a_restart() {
    let dir = temp_dir("setup");
    let mut config = test_config(dir.clone(), &["even", "h5", "found"]);
    config.tables[1].start = StartPosition::Handicap(5);
    config.tables[2].start = StartPosition::AdoptFirstBoard;
    let server = tengen_server::start(config.clone(), real_referee_engines()).await.unwrap();
    let hub = Arc::clone(&server.hub);
    for id in ["even", "h5", "found"] {
        show(&hub, id, &FIVE).await;
    }

    // Even game: one alert for the stones present, no moves, no double moves.
    let even = hub.tables["even"].live().unwrap();
    assert!(even.view.moves.is_empty(), "{:?}", even.view.moves);
    assert_eq!(even.view.open_alerts.len(), 1, "{:?}", even.view.open_alerts);
    assert_eq!(even.view.open_alerts[0].kind, tengen_referee::EventKind::SetupMismatch);
    assert_eq!(even.view.open_alerts[0].points.len(), 5);
    let even_kinds = kinds(&hub, "even").await;
    assert!(!even_kinds.iter().any(|k| k == "double_move" || k == "move"), "{even_kinds:?}");

    // Five handicap stones on the standard points: White to move, nothing to decide.
    let h5 = hub.tables["h5"].live().unwrap();
    assert!(h5.view.moves.is_empty() && h5.view.open_alerts.is_empty(), "{:?}", h5.view.open_alerts);
    assert_eq!(h5.view.to_move, tengen_rules::Color::White);
    assert_eq!(h5.game.setup.start, StartPosition::Handicap(5));
    // The board as found: the same, without checking.
    let found = hub.tables["found"].live().unwrap();
    assert!(found.view.moves.is_empty() && found.view.open_alerts.is_empty());
    assert_eq!(found.view.to_move, tengen_rules::Color::White);

    // The records, by the one writer `tengen replay` uses too: the handicap and the adopted
    // board are the start (AB, White first); the even game's stones are neither setup nor moves.
    let h5_sgf = sgf_of(&server, "h5").await;
    let h5_record = tengen_sgf::read_game(h5_sgf.as_bytes()).unwrap();
    assert_eq!(
        (h5_record.info.handicap, h5_record.first_player),
        (Some(5), Some(tengen_rules::Color::White)),
        "{h5_sgf}"
    );
    assert_eq!(h5_record.setup_black.len(), 5, "{h5_sgf}");
    let found_record = tengen_sgf::read_game(sgf_of(&server, "found").await.as_bytes()).unwrap();
    assert_eq!((found_record.setup_black.len(), found_record.info.handicap), (5, None));
    let even_sgf = sgf_of(&server, "even").await;
    let even_record = tengen_sgf::read_game(even_sgf.as_bytes()).unwrap();
    assert!(even_record.setup_black.is_empty() && even_record.moves.is_empty(), "{even_sgf}");
    assert!(even_sgf.contains("setup_mismatch"), "the alert is a comment of the record: {even_sgf}");

    // A new game at the even table, set up as a five-stone handicap game.
    let new_game = ArbiterAction::NewGame { komi: Some(0.5), start: Some(StartPosition::Handicap(5)), pairing: None };
    hub.tables["even"].arbiter(new_game).await.unwrap();
    show(&hub, "even", &[]).await;
    show(&hub, "even", &FIVE).await;
    let live = hub.tables["even"].live().unwrap();
    assert_eq!(live.game.setup.start, StartPosition::Handicap(5));
    assert!((live.game.komi - 0.5).abs() < 1e-9);
    assert!(live.view.open_alerts.is_empty(), "{:?}", live.view.open_alerts);
    assert_eq!(live.view.to_move, tengen_rules::Color::White);
    let before = live.view;
    server.shutdown().await.unwrap();

    // After a restart the game is replayed with the setup it was started with.
    let server = tengen_server::start(config, real_referee_engines()).await.unwrap();
    let live = server.hub.tables["even"].live().unwrap();
    assert_eq!(live.game.setup.start, StartPosition::Handicap(5));
    assert_eq!(live.view, before);
    server.shutdown().await.unwrap();
    let _ = std::fs::remove_dir_all(dir);
}
