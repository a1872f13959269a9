//! Rounds through the HTTP API: an OpenGotha round imported starts every paired table's game at
//! once with its players; its results go back as an OpenGotha file that reads back with the same
//! pairings and the results; every record comes in one archive with standard names and the
//! pairing in its game information. A round naming an unknown table starts nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::*;
use tengen_server::pairings::{opengotha_results, parse_opengotha, Outcome};

/// A tournament of four players over two rounds (shared with the pairings unit tests).
const TOURNAMENT: &str = include_str!("data/opengotha-round.xml");

fn json(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body).unwrap_or(serde_json::Value::Null)
}

/// The stored files of a ZIP archive written with `zip_stored`: (name, contents).
fn unzip(zip: &[u8]) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut at = 0;
    while zip[at..].starts_with(b"PK\x03\x04") {
        let le16 = |i: usize| usize::from(u16::from_le_bytes([zip[i], zip[i + 1]]));
        let size = u32::from_le_bytes([zip[at + 18], zip[at + 19], zip[at + 20], zip[at + 21]]) as usize;
        let (name_len, extra) = (le16(at + 26), le16(at + 28));
        let name = String::from_utf8(zip[at + 30..at + 30 + name_len].to_vec()).unwrap();
        let start = at + 30 + name_len + extra;
        files.push((name, String::from_utf8(zip[start..start + size].to_vec()).unwrap()));
        at = start + size;
    }
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opengotha_round_starts_every_table_and_its_results_and_records_go_back() {
    let dir = temp_dir("rounds");
    // The real referee: the records are written by the one writer `tengen replay` uses too.
    let server =
        tengen_server::start(test_config(dir.clone(), &["1", "2", "3"]), real_referee_engines()).await.unwrap();
    let addr = server.addr;
    let arbiter = [("authorization", "Bearer arbiter-token-for-tests"), ("content-type", "application/xml")];
    let before: Vec<i64> = ["1", "2", "3"].iter().map(|t| server.hub.tables[*t].live().unwrap().game.id).collect();

    // Without the arbiter's token nothing happens.
    let (status, _, _) = http(addr, "POST", "/api/rounds", &[], TOURNAMENT.as_bytes()).await;
    assert_eq!(status, 401);
    // Round 2 (the file's last): tables 1 and 2 start new games at once; table 3 is not paired.
    let (status, _, body) = http(addr, "POST", "/api/rounds", &arbiter, TOURNAMENT.as_bytes()).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let answer = json(&body);
    assert_eq!(answer["round"], 2);
    assert_eq!(answer["games"].as_array().map(Vec::len), Some(2));
    let live = |t: &str| server.hub.tables[t].live().unwrap();
    assert_ne!(live("1").game.id, before[0]);
    assert_ne!(live("2").game.id, before[1]);
    assert_eq!(live("3").game.id, before[2], "an unpaired table keeps its game");
    assert_eq!(live("1").game.black.as_deref(), Some("Du Pont Jean"));
    assert_eq!(live("1").game.white.as_deref(), Some("Wang Li"));
    let t2 = live("2").game;
    assert_eq!(t2.setup.start, tengen_server::model::StartPosition::Handicap(3));
    assert_eq!(t2.komi, 0.0);
    // The tables list shows the players.
    let (_, _, body) = http(addr, "GET", "/api/tables/2", &[], b"").await;
    assert_eq!(
        json(&body)["game_info"]["setup"]["pairing"]["white"]["surname"],
        "O'Neil & Co",
        "{}",
        String::from_utf8_lossy(&body)
    );

    // Results: White wins at table 1 by resignation; table 2 is still playing.
    let set_result = br#"{"action":"set_result","result":"W+R"}"#;
    let (status, _, _) =
        http(addr, "POST", "/api/tables/1/arbiter", &[arbiter[0], ("content-type", "application/json")], set_result)
            .await;
    assert_eq!(status, 200);
    let (status, _, exported) = http(addr, "GET", "/api/rounds/2/opengotha.xml", &[], b"").await;
    assert_eq!(status, 200);
    let exported = String::from_utf8(exported).unwrap();
    // OpenGotha reads it back: the same pairings, with the results.
    let again = parse_opengotha(&exported, Some(2)).expect("an OpenGotha file");
    let original = parse_opengotha(TOURNAMENT, Some(2)).expect("the input");
    let key = |r: &tengen_server::pairings::Round| {
        let mut v: Vec<_> =
            r.pairings.iter().map(|p| (p.table.clone(), p.black.clone(), p.white.clone(), p.handicap)).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(key(&again), key(&original));
    // No tournament parameters: OpenGotha would need all of them and would overwrite the
    // organiser's; the event is named in a comment.
    assert_eq!(again.event, None);
    assert!(exported.contains("Paris Open 2026"), "{exported}");
    let mut results = opengotha_results(&exported, 2).unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(results, vec![("1".to_owned(), Outcome::WhiteWins), ("2".to_owned(), Outcome::Unknown)]);

    // Every record of the round in one archive, named by round, table and players.
    let (status, head, zip) = http(addr, "GET", "/api/rounds/2/records.zip", &[], b"").await;
    assert_eq!(status, 200);
    assert!(head.to_ascii_lowercase().contains("application/zip"), "{head}");
    let files = unzip(&zip);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["R2-T001-Du_Pont_Jean-Wang_Li.sgf", "R2-T002-Berg_Bo-ONeil__Co_Ann.sgf"]);
    let sgf = &files[1].1;
    for prop in [
        "PB[Berg Bo]",
        "PW[O'Neil & Co Ann]",
        "BR[8k]",
        "WR[5k]",
        "EV[Paris Open 2026]",
        "RO[2]",
        "HA[3]",
        "KM[0]",
        "DT[",
    ] {
        assert!(sgf.contains(prop), "{prop} in {sgf}");
    }
    assert!(files[0].1.contains("RE[W+R]"), "{}", files[0].1);

    // A CSV round naming a table the service does not have: refused, nothing started.
    let csv = "table,black,white\n1,A B,C D\n9,E F,G H\n";
    let (status, _, body) =
        http(addr, "POST", "/api/rounds?round=3", &[arbiter[0], ("content-type", "text/csv")], csv.as_bytes()).await;
    assert_eq!(status, 422);
    assert!(json(&body)["message"].as_str().unwrap_or("").contains("no table 9"), "{}", String::from_utf8_lossy(&body));
    assert_eq!(live("1").game.black.as_deref(), Some("Du Pont Jean"), "nothing was started");
    // The same round with the right tables starts; the rounds are listed.
    let csv = "1,A B,C D,2d,1d,,6.5\n3,E F,G H,,,2,\n";
    let (status, _, _) = http(
        addr,
        "POST",
        "/api/rounds?round=3&event=Club%20night",
        &[arbiter[0], ("content-type", "text/csv")],
        csv.as_bytes(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(live("1").game.black.as_deref(), Some("A B"));
    assert_eq!(live("3").game.setup.start, tengen_server::model::StartPosition::Handicap(2));
    let (_, _, body) = http(addr, "GET", "/api/rounds", &[], b"").await;
    let rounds: Vec<u64> =
        json(&body)["rounds"].as_array().unwrap().iter().filter_map(|r| r["round"].as_u64()).collect();
    assert_eq!(rounds, [2, 3]);
    server.shutdown_now();
    let _ = std::fs::remove_dir_all(dir);
}
