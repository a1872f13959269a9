//! Load benchmark: N simulated cameras post 1920×1080 JPEG frames at 2 fps each to one service
//! (real vision and referee, SQLite log) on this machine, for a fixed time per level of N.
//! Reports per level: frames posted / analysed / dropped, p50/p99 pipeline latency (frame
//! arrival → vision → referee → log → published), the least-served table, events, and the
//! process's resident memory; then the largest N that kept p99 under 1 s with no table starved.
//!
//! Frames: the project's rendered `samples/infractions` game (hands, moves, infractions),
//! scaled to 1920×1080, so the referee really works (moves and alerts are logged).
//! Baseline measured in the same run: one bare JPEG decode of such a frame.
//!
//! Run: `cargo bench -p tengen-server --bench load` (options via env: TENGEN_BENCH_LEVELS="5,10,20",
//! TENGEN_BENCH_SECONDS=15).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, clippy::cast_precision_loss)]

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tengen_server::{CameraConfig, Config, TableConfig};

const CAMERA_TOKEN: &str = "bench-camera-token";
const FPS: f64 = 2.0;

fn frames_1080p() -> Vec<Arc<Vec<u8>>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/infractions");
    let files = tengen_server::sources::folder_frames(&dir).unwrap_or_default();
    assert!(!files.is_empty(), "the bench needs samples/infractions (rendered frames)");
    files
        .iter()
        .map(|f| {
            let img = image::open(f).unwrap().to_rgb8();
            let big = image::imageops::resize(&img, 1920, 1080, image::imageops::FilterType::Triangle);
            let mut out = Vec::new();
            let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
            big.write_with_encoder(enc).unwrap();
            Arc::new(out)
        })
        .collect()
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

async fn post(addr: std::net::SocketAddr, table: &str, body: &[u8]) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else { return false };
    let head = format!(
        "POST /api/tables/{table}/frames HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {CAMERA_TOKEN}\r\nContent-Type: image/jpeg\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    if stream.write_all(head.as_bytes()).await.is_err() || stream.write_all(body).await.is_err() {
        return false;
    }
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    response.starts_with(b"HTTP/1.1 202")
}

struct Level {
    tables: usize,
    posted: u64,
    refused: u64,
    analysed: u64,
    dropped: u64,
    p50: f64,
    p99: f64,
    least_served: f64,
    events: u64,
    rss: f64,
}

/// The service with its vision replaced by a bare JPEG decode (same frames, same referee, same
/// log): what the service itself costs, apart from reading boards.
struct DecodeOnly;
impl tengen_server::FrameAnalyzer for DecodeOnly {
    fn analyze(&mut self, encoded: &[u8]) -> Result<tengen_server::model::Observation, tengen_server::engine::AnalyzeError> {
        let img = image::load_from_memory(encoded).map_err(|e| tengen_server::engine::AnalyzeError::Decode(e.to_string()))?;
        std::hint::black_box(img);
        Ok(tengen_server::model::Observation {
            points: vec![tengen_server::model::PointReading::Empty; tengen_server::model::POINTS],
            corners: None,
            confidence: 1.0,
            occluded: false,
            moved_cells: None,
        })
    }
    fn set_calibration(&mut self, _corners: Option<tengen_server::engine::Corners>) {}
}
struct DecodeOnlyFactory;
impl tengen_server::engine::AnalyzerFactory for DecodeOnlyFactory {
    fn create(&self, _table: &str, _calibration: Option<tengen_server::engine::Corners>) -> Box<dyn tengen_server::FrameAnalyzer> {
        Box::new(DecodeOnly)
    }
}

async fn run_level(tables: usize, warmup: f64, seconds: f64, frames: &[Arc<Vec<u8>>], decode_only: bool) -> Level {
    let dir = std::env::temp_dir().join(format!("tengen-bench-{}-{tables}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.clone(),
        arbiter_token: Some("bench-arbiter-token".into()),
        camera_token: Some(CAMERA_TOKEN.into()),
        tables: (0..tables)
            .map(|i| TableConfig {
                id: format!("t{i}"),
                name: None,
                komi: 7.5,
                camera_token: None,
                camera: CameraConfig::Post,
                calibration: None,
            })
            .collect(),
        ..Config::default()
    };
    let mut engines = tengen_server::adapters::standard_engines();
    if decode_only {
        engines.analyzers = Arc::new(DecodeOnlyFactory);
    }
    let server = tengen_server::start(config, engines).await.unwrap();
    let addr = server.addr;
    let hub = Arc::clone(&server.hub);
    let warm = Instant::now() + Duration::from_secs_f64(warmup);
    let deadline = warm + Duration::from_secs_f64(seconds);
    let mut cameras = Vec::new();
    for i in 0..tables {
        let frames: Vec<Arc<Vec<u8>>> = frames.to_vec();
        cameras.push(tokio::spawn(async move {
            // Cameras start spread over one period, as real ones would.
            tokio::time::sleep(Duration::from_secs_f64(i as f64 / tables as f64 / FPS)).await;
            let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / FPS));
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let (mut posted, mut refused, mut n) = (0u64, 0u64, 0usize);
            while Instant::now() < deadline {
                ticker.tick().await;
                // Each recorded frame is shown for a second (two frames), like a still board.
                let frame = &frames[(n / 2) % frames.len()];
                n += 1;
                if post(addr, &format!("t{i}"), frame).await { posted += 1 } else { refused += 1 }
            }
            (posted, refused)
        }));
    }
    // The warm-up covers every table's first board search (they all start at once); the
    // latencies measured are those of the steady state that follows.
    tokio::time::sleep_until(warm.into()).await;
    for t in hub.tables.values() {
        t.metrics.clear_recent();
    }
    let mut rss_peak = 0.0f64;
    while Instant::now() < deadline {
        rss_peak = rss_peak.max(rss_mib());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (mut posted, mut refused) = (0, 0);
    for c in cameras {
        let (p, r) = c.await.unwrap();
        posted += p;
        refused += r;
    }
    // Let the frames in flight finish.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut all = Vec::new();
    let (mut analysed, mut dropped, mut events) = (0, 0, 0);
    let mut per_table = Vec::new();
    for t in hub.tables.values() {
        let m = &t.metrics;
        analysed += m.frames_analysed.load(Ordering::Relaxed);
        dropped += m.frames_dropped.load(Ordering::Relaxed);
        events += m.events.load(Ordering::Relaxed);
        per_table.push(m.frames_analysed.load(Ordering::Relaxed) as f64);
        for q in 0..=100 {
            if let Some(v) = m.recent_quantile(f64::from(q) / 100.0) {
                all.push(v);
            }
        }
    }
    all.sort_by(f64::total_cmp);
    let quantile = |q: f64| all.get(((all.len().max(1) - 1) as f64 * q).round() as usize).copied().unwrap_or(f64::NAN);
    let mean = per_table.iter().sum::<f64>() / per_table.len().max(1) as f64;
    let least = per_table.iter().copied().fold(f64::MAX, f64::min);
    server.shutdown_now();
    drop(hub);
    let _ = std::fs::remove_dir_all(&dir);
    Level {
        tables,
        posted,
        refused,
        analysed,
        dropped,
        p50: quantile(0.5),
        p99: quantile(0.99),
        least_served: if mean > 0.0 { least / mean } else { 0.0 },
        events,
        rss: rss_peak,
    }
}

fn main() {
    let levels: Vec<usize> = std::env::var("TENGEN_BENCH_LEVELS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 100]);
    // TENGEN_BENCH_VISION=decode replaces the vision by a bare decode (the service's own cost).
    let decode_only = std::env::var("TENGEN_BENCH_VISION").is_ok_and(|v| v == "decode");
    let seconds: f64 = std::env::var("TENGEN_BENCH_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(15.0);
    // TENGEN_BENCH_WARMUP=0 measures from the cold start instead.
    let warmup: f64 = std::env::var("TENGEN_BENCH_WARMUP").ok().and_then(|v| v.parse().ok()).unwrap_or(5.0);
    let frames = frames_1080p();
    // Baseline: a bare decode of one frame, the floor of any vision.
    let start = Instant::now();
    let decodes = 20;
    for i in 0..decodes {
        let _ = image::load_from_memory(&frames[i % frames.len()]).unwrap();
    }
    let decode_ms = start.elapsed().as_secs_f64() * 1000.0 / decodes as f64;
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    println!("load bench: {} frames of 1920x1080 JPEG (~{} KiB), {FPS} fps per camera, {seconds} s measured per level after {warmup} s of warm-up, {cores} cores", frames.len(), frames[0].len() / 1024);
    println!("baseline: bare JPEG decode of one frame {decode_ms:.1} ms → at most {:.0} frames/s on {cores} cores", 1000.0 / decode_ms * cores as f64);
    println!("vision: {}", if decode_only { "bare JPEG decode only (TENGEN_BENCH_VISION=decode)" } else { "tengen-vision (locate/track + read 361 points)" });
    println!("{:>6} {:>7} {:>7} {:>8} {:>7} {:>8} {:>8} {:>8} {:>7} {:>8} {:>9}", "tables", "posted", "refused", "analysed", "dropped", "p50 ms", "p99 ms", "p99/dec", "least", "events", "rss MiB");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let mut best = None;
    for n in levels {
        let level = runtime.block_on(run_level(n, warmup, seconds, &frames, decode_only));
        println!(
            "{:>6} {:>7} {:>7} {:>8} {:>7} {:>8.0} {:>8.0} {:>8.1} {:>7.2} {:>8} {:>9.0}",
            level.tables, level.posted, level.refused, level.analysed, level.dropped, level.p50 * 1000.0, level.p99 * 1000.0,
            level.p99 * 1000.0 / decode_ms, level.least_served, level.events, level.rss
        );
        // Keeping up: p99 under a second, and every table analysed at least half as many
        // frames as the average table (no starvation), and at least one frame a second.
        let per_table_rate = level.analysed as f64 / level.tables as f64 / seconds;
        let ok = level.p99 < 1.0 && level.least_served >= 0.5 && per_table_rate >= 1.0;
        if ok {
            best = Some(n);
        } else {
            println!("  level {n}: not kept up (p99 {:.2} s, least-served {:.2}, {:.2} analysed frames/s per table)", level.p99, level.least_served, per_table_rate);
            break;
        }
    }
    match best {
        Some(n) => println!("largest N with p99 < 1 s, no table starved, ≥1 analysed frame/s per table: {n}"),
        None => println!("no level kept up"),
    }
}
