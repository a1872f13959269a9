//! Hostile-input benchmark (issue 11): does a table playing a real game keep its pace while two
//! other tables are fed frames that send the vision's board search astray, and what does a PNG
//! bomb cost?
//!
//! One service (real vision and referee, SQLite log), three tables. Table `play` gets the
//! project's rendered `samples/infractions` game, scaled to 1920×1080, at 2 fps. Two phases in
//! the same run, each `TENGEN_BENCH_SECONDS` (20) long after a warm-up: undisturbed, then with
//! tables `bad1` and `bad2` each sent a corrupt frame at 2 fps, so that each always has one in
//! flight. The corrupt frames are the two bit-flipped photos of
//! `../shared/datasets/fuzz-findings`, decoded as the decoder sees them and encoded again as
//! valid JPEGs: the edge check now refuses the damaged files themselves, so their pixels — the
//! ones that held a board-search slot for 35 s — are what gets through to the vision. Without
//! the datasets, frames of noise stand in. Reported: `play`'s frame-to-event latency p50/p99 in
//! each phase and their ratio, frames analysed, board searches and the time they took.
//!
//! Then the PNG bomb (`png_bomb_6320_rgba16.png`, 6320×6320 16-bit RGBA) posted to four tables:
//! the answers and the process's peak resident memory before and after.
//!
//! Run: `cargo bench -p tengen-server --bench hostile`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, clippy::cast_precision_loss)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tengen_server::TableConfig;

mod common;
use common::{bench_config, bench_dir, encode_jpeg, post_frame, status_mib};

const FPS: f64 = 2.0;

fn game_frames() -> Vec<Arc<Vec<u8>>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/infractions");
    let files = tengen_server::sources::folder_frames(&dir).unwrap_or_default();
    assert!(!files.is_empty(), "the bench needs samples/infractions (rendered frames)");
    files
        .iter()
        .map(|f| {
            let img = image::open(f).unwrap().to_rgb8();
            encode_jpeg(&image::imageops::resize(&img, 1920, 1080, image::imageops::FilterType::Triangle))
        })
        .collect()
}

fn findings() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/fuzz-findings");
    dir.is_dir().then_some(dir)
}

/// The corrupt photos' pixels as valid JPEGs, or noise when the datasets are absent.
fn corrupt_frames() -> (Vec<Arc<Vec<u8>>>, &'static str) {
    if let Some(dir) = findings() {
        let frames: Vec<Arc<Vec<u8>>> = ["fail_000_60_bitflip.jpg", "fail_003_177_bitflip.jpg"]
            .iter()
            .filter_map(|name| image::load_from_memory(&std::fs::read(dir.join(name)).ok()?).ok())
            .map(|img| encode_jpeg(&img.to_rgb8()))
            .collect();
        if frames.len() == 2 {
            return (frames, "the fuzz findings' pixels");
        }
    }
    let mut seed = 0x2545_F491_u32;
    let noise = (0..2)
        .map(|_| {
            encode_jpeg(&image::RgbImage::from_fn(1280, 960, |_, _| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                image::Rgb([seed as u8, (seed >> 8) as u8, (seed >> 16) as u8])
            }))
        })
        .collect();
    (noise, "noise (../shared/datasets/fuzz-findings absent)")
}

/// A camera posting `frames` in turn at 2 fps until `stop`.
fn camera(
    addr: std::net::SocketAddr,
    table: &'static str,
    frames: Vec<Arc<Vec<u8>>>,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / FPS));
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut n = 0usize;
        while !stop.load(Ordering::Relaxed) {
            ticker.tick().await;
            post_frame(addr, table, "image/jpeg", &frames[n % frames.len()]).await;
            n += 1;
        }
    })
}

struct Phase {
    p50_ms: f64,
    p99_ms: f64,
    analysed: u64,
    bad_searches: u64,
    bad_vision_ms: f64,
}

/// Runs `play` (and, when `disturb`, the two corrupt cameras) for `seconds` after `warmup`.
async fn phase(
    hub: &Arc<tengen_server::Hub>,
    addr: std::net::SocketAddr,
    game: &[Arc<Vec<u8>>],
    corrupt: &[Arc<Vec<u8>>],
    disturb: bool,
    warmup: f64,
    seconds: f64,
) -> Phase {
    let stop = Arc::new(AtomicBool::new(false));
    let mut cameras = vec![camera(addr, "play", game.to_vec(), Arc::clone(&stop))];
    if disturb {
        cameras.push(camera(addr, "bad1", vec![Arc::clone(&corrupt[0])], Arc::clone(&stop)));
        cameras.push(camera(addr, "bad2", vec![Arc::clone(&corrupt[1 % corrupt.len()])], Arc::clone(&stop)));
    }
    tokio::time::sleep(Duration::from_secs_f64(warmup)).await;
    let play = &hub.tables["play"];
    play.metrics.clear_recent();
    let analysed_before = play.metrics.frames_analysed.load(Ordering::Relaxed);
    let bad = |name: &str| {
        let m = &hub.tables[name].metrics;
        (m.board_searches.load(Ordering::Relaxed), m.stages.total(tengen_server::metrics::Stage::Vision))
    };
    let (s1, v1) = (bad("bad1"), bad("bad2"));
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    let (s2, v2) = (bad("bad1"), bad("bad2"));
    stop.store(true, Ordering::Relaxed);
    for c in cameras {
        c.await.unwrap();
    }
    let searches = (s2.0 - s1.0) + (v2.0 - v1.0);
    let vision_s = ((s2.1).0 - (s1.1).0) + ((v2.1).0 - (v1.1).0);
    let result = Phase {
        p50_ms: play.metrics.recent_quantile(0.5).unwrap_or(f64::NAN) * 1000.0,
        p99_ms: play.metrics.recent_quantile(0.99).unwrap_or(f64::NAN) * 1000.0,
        analysed: play.metrics.frames_analysed.load(Ordering::Relaxed) - analysed_before,
        bad_searches: searches,
        bad_vision_ms: if searches > 0 { vision_s * 1000.0 / searches as f64 } else { 0.0 },
    };
    // Let the frames in flight finish before the next phase.
    tokio::time::sleep(Duration::from_secs(3)).await;
    result
}

fn main() {
    let seconds: f64 = std::env::var("TENGEN_BENCH_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(20.0);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async move {
        let game = game_frames();
        let (corrupt, what) = corrupt_frames();
        let tables = ["play", "bad1", "bad2", "b1", "b2", "b3", "b4"].iter().map(|id| TableConfig::posting(*id)).collect();
        let dir = bench_dir("hostile");
        let config = bench_config(&dir, tables);
        let server = tengen_server::start(config, tengen_server::adapters::standard_engines()).await.unwrap();
        let (addr, hub) = (server.addr, Arc::clone(&server.hub));
        println!("hostile bench: table `play` at {FPS} fps (1920×1080 rendered game), {seconds} s a phase; corrupt frames: {what}");
        let quiet = phase(&hub, addr, &game, &corrupt, false, 8.0, seconds).await;
        let loud = phase(&hub, addr, &game, &corrupt, true, 4.0, seconds).await;
        for (name, p) in [("undisturbed", &quiet), ("two corrupt tables", &loud)] {
            println!(
                "  {name:<20} play: {} frames analysed, latency p50 {:.0} ms, p99 {:.0} ms; corrupt tables: {} searches, {:.0} ms each",
                p.analysed, p.p50_ms, p.p99_ms, p.bad_searches, p.bad_vision_ms
            );
        }
        println!("  p99 ratio (two corrupt tables / undisturbed): {:.2} (target ≤ 1.5)", loud.p99_ms / quiet.p99_ms);

        match findings().map(|d| std::fs::read(d.join("png_bomb_6320_rgba16.png"))) {
            Some(Ok(bomb)) => {
                let (rss, peak) = (status_mib("VmRSS:"), status_mib("VmHWM:"));
                let mut answers = Vec::new();
                for t in ["b1", "b2", "b3", "b4"] {
                    answers.push(post_frame(addr, t, "image/png", &bomb).await);
                }
                tokio::time::sleep(Duration::from_secs(2)).await;
                println!(
                    "  PNG bomb ({} KB, 6320×6320 16-bit RGBA) posted to 4 tables: answers {answers:?}; resident {rss:.0} → {:.0} MiB, peak {peak:.0} → {:.0} MiB",
                    bomb.len() / 1024,
                    status_mib("VmRSS:"),
                    status_mib("VmHWM:")
                );
            }
            _ => println!("  PNG bomb: SKIP (../shared/datasets/fuzz-findings absent)"),
        }
        server.shutdown_now();
        drop(hub);
        let _ = std::fs::remove_dir_all(&dir);
    });
}
