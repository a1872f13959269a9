//! Load benchmark: N simulated cameras post 1920×1080 JPEG frames at 2 fps each to one service
//! (real vision and referee, SQLite log) on this machine, for a fixed time per level of N.
//! Reports per level, over the measured window: frames received / analysed / dropped, the
//! least and most frames analysed by one table, p50/p99 pipeline latency (frame arrival →
//! vision → referee → log → published), events, board searches, peak resident memory, mean
//! time per pipeline stage, and the process's CPU per analysed frame (which, unlike the
//! latencies, does not depend on what else the machine runs); then the largest N that kept p99
//! under 1 s with no table starved and at least one analysed frame a second per table.
//!
//! Frames: the project's rendered `samples/infractions` game (hands, moves, infractions),
//! scaled to 1920×1080, so the referee really works (moves and alerts are logged); each
//! recorded frame is posted twice, the second time with fresh sensor noise.
//! Baseline measured in the same run: one bare JPEG decode of such a frame.
//!
//! Run: `cargo bench -p tengen-server --bench load`. Options via env: TENGEN_BENCH_LEVELS="5,10,20",
//! TENGEN_BENCH_SECONDS=15 (measured window), TENGEN_BENCH_WARMUP=5 (seconds before it, and
//! until every table has read its board; 0 = measure the cold start), TENGEN_BENCH_VISION=decode
//! (a bare decode instead of the vision), TENGEN_BENCH_STAGES=1 (first, the cost of each stage
//! of one frame alone).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, clippy::cast_precision_loss)]

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tengen_server::metrics::Stage;

mod common;
use common::{
    bench_config, bench_dir, cpu_seconds, post_frame, posting_tables, rendered_frames, status_mib, EachTable,
};

const FPS: f64 = 2.0;

struct Level {
    tables: usize,
    posted: u64,
    refused: u64,
    /// In the measured window (after the warm-up):
    received: u64,
    analysed: u64,
    dropped: u64,
    p50: f64,
    p99: f64,
    least_served: f64,
    min_max: (u64, u64),
    events: u64,
    rss: f64,
    /// Mean milliseconds per frame in each stage (queue, vision, referee, store).
    stages: Vec<(&'static str, f64)>,
    searches: u64,
    /// CPU seconds the whole process used in the measured window (service and cameras).
    cpu: f64,
    /// Seconds from the cameras' start to the measured window.
    startup: f64,
}

/// The service with its vision replaced by a bare JPEG decode (same frames, same referee, same
/// log): what the service itself costs, apart from reading boards.
struct DecodeOnly;
impl tengen_server::FrameAnalyzer for DecodeOnly {
    fn analyze(
        &mut self,
        encoded: &[u8],
    ) -> Result<tengen_server::model::Observation, tengen_server::engine::AnalyzeError> {
        let img =
            image::load_from_memory(encoded).map_err(|e| tengen_server::engine::AnalyzeError::Decode(e.to_string()))?;
        std::hint::black_box(img);
        Ok(tengen_server::model::Observation::certain(vec![
            tengen_rules::PointState::Empty;
            tengen_rules::BOARD_POINTS
        ]))
    }
    fn set_calibration(&mut self, _corners: Option<tengen_server::engine::Corners>) {}
}

async fn run_level(tables: usize, warmup: f64, seconds: f64, frames: &[[Arc<Vec<u8>>; 2]], decode_only: bool) -> Level {
    let dir = bench_dir(&format!("load-{tables}"));
    let config = bench_config(&dir, posting_tables(tables));
    let mut engines = tengen_server::adapters::standard_engines();
    if decode_only {
        engines.analyzers = Arc::new(EachTable(|| Box::new(DecodeOnly)));
    }
    let server = tengen_server::start(config, engines).await.unwrap();
    let addr = server.addr;
    let hub = Arc::clone(&server.hub);
    let started = Instant::now();
    let warm = started + Duration::from_secs_f64(warmup);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut cameras = Vec::new();
    for i in 0..tables {
        let frames: Vec<[Arc<Vec<u8>>; 2]> = frames.to_vec();
        let stop = Arc::clone(&stop);
        cameras.push(tokio::spawn(async move {
            // Cameras start spread over one period, as real ones would.
            tokio::time::sleep(Duration::from_secs_f64(i as f64 / tables as f64 / FPS)).await;
            let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / FPS));
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let (mut posted, mut refused, mut n) = (0u64, 0u64, 0usize);
            while !stop.load(Ordering::Relaxed) {
                ticker.tick().await;
                // Each recorded frame is shown for a second (two frames with different noise),
                // like a still board.
                let frame = &frames[(n / 2) % frames.len()][n % 2];
                n += 1;
                if post_frame(addr, &format!("t{i}"), "image/jpeg", frame).await == 202 {
                    posted += 1
                } else {
                    refused += 1
                }
            }
            (posted, refused)
        }));
    }
    // The warm-up covers every table's first board search (they all start at once): at least
    // `warmup` seconds and, when there is a warm-up at all, until every table has read its
    // board once (at most a minute more); the latencies measured are those of the steady
    // state that follows. With no warm-up the start-up itself is measured.
    tokio::time::sleep_until(warm.into()).await;
    if warmup > 0.0 {
        let limit = Instant::now() + Duration::from_secs(60);
        while Instant::now() < limit && !hub.tables.values().all(|t| t.live().is_some_and(|l| l.last_reading.is_some()))
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let startup = started.elapsed().as_secs_f64();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    for t in hub.tables.values() {
        t.metrics.clear_recent();
    }
    // Counters at the start of the measured window; the figures are the differences.
    let counters = |hub: &tengen_server::Hub| -> Vec<[u64; 4]> {
        hub.tables
            .values()
            .map(|t| {
                let m = &t.metrics;
                [&m.frames_received, &m.frames_analysed, &m.frames_dropped, &m.board_searches]
                    .map(|c| c.load(Ordering::Relaxed))
            })
            .collect()
    };
    let stage_totals = |hub: &tengen_server::Hub| -> Vec<(f64, u64)> {
        Stage::ALL
            .iter()
            .map(|&st| {
                hub.tables.values().map(|t| t.metrics.stages.total(st)).fold((0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
            })
            .collect()
    };
    let events_before: u64 = hub.tables.values().map(|t| t.metrics.events.load(Ordering::Relaxed)).sum();
    let (counters_before, stages_before) = (counters(&hub), stage_totals(&hub));
    let cpu_before = cpu_seconds("self");
    let mut rss_peak = 0.0f64;
    while Instant::now() < deadline {
        rss_peak = rss_peak.max(status_mib("VmRSS:"));
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let (counters_after, stages_after) = (counters(&hub), stage_totals(&hub));
    let cpu = cpu_seconds("self") - cpu_before;
    let events_after: u64 = hub.tables.values().map(|t| t.metrics.events.load(Ordering::Relaxed)).sum();
    let (mut posted, mut refused) = (0, 0);
    for c in cameras {
        let (p, r) = c.await.unwrap();
        posted += p;
        refused += r;
    }
    // Let the frames in flight finish.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    rss_peak = rss_peak.max(status_mib("VmRSS:"));
    let mut all = Vec::new();
    for t in hub.tables.values() {
        for q in 0..=100 {
            if let Some(v) = t.metrics.recent_quantile(f64::from(q) / 100.0) {
                all.push(v);
            }
        }
    }
    let delta: Vec<[u64; 4]> =
        counters_after.iter().zip(&counters_before).map(|(a, b)| [0, 1, 2, 3].map(|k| a[k] - b[k])).collect();
    let sum = |k: usize| delta.iter().map(|d| d[k]).sum::<u64>();
    let per_table: Vec<u64> = delta.iter().map(|d| d[1]).collect();
    let stages = Stage::ALL
        .iter()
        .zip(stages_after.iter().zip(&stages_before))
        .map(|(st, (a, b))| (st.name(), if a.1 > b.1 { (a.0 - b.0) * 1000.0 / (a.1 - b.1) as f64 } else { 0.0 }))
        .collect();
    all.sort_by(f64::total_cmp);
    let quantile = |q: f64| all.get(((all.len().max(1) - 1) as f64 * q).round() as usize).copied().unwrap_or(f64::NAN);
    let mean = per_table.iter().sum::<u64>() as f64 / per_table.len().max(1) as f64;
    let least = per_table.iter().copied().min().unwrap_or(0);
    let most = per_table.iter().copied().max().unwrap_or(0);
    server.shutdown_now();
    drop(hub);
    let _ = std::fs::remove_dir_all(&dir);
    Level {
        tables,
        posted,
        refused,
        received: sum(0),
        analysed: sum(1),
        dropped: sum(2),
        p50: quantile(0.5),
        p99: quantile(0.99),
        least_served: if mean > 0.0 { least as f64 / mean } else { 0.0 },
        min_max: (least, most),
        events: events_after - events_before,
        rss: rss_peak,
        stages,
        searches: sum(3),
        cpu,
        startup,
    }
}

/// Mean cost of each stage of one frame's analysis, measured alone on one core (the profile that
/// tells where a frame's time goes): TENGEN_BENCH_STAGES=1.
fn stage_costs(frames_by_variant: &[[Arc<Vec<u8>>; 2]]) {
    let frames: Vec<Arc<Vec<u8>>> = frames_by_variant.iter().map(|f| Arc::clone(&f[1])).collect();
    use tengen_server::engine::TableReferee as _;
    use tengen_vision::locate::{locate_gray, refine_gray, LocateOptions};
    let reps = frames.len().min(40);
    let time = |name: &str, f: &mut dyn FnMut(usize)| {
        f(0);
        let start = Instant::now();
        for i in 0..reps {
            f(i);
        }
        println!("stage {name:<34} {:>7.2} ms", start.elapsed().as_secs_f64() * 1000.0 / reps as f64);
    };
    let decoded: Vec<_> = frames.iter().map(|f| tengen_vision::decode_rgb(f).unwrap().rgb).collect();
    let grey: Vec<_> = decoded.iter().map(tengen_vision::grey).collect();
    let located: Vec<_> = grey.iter().map(|g| locate_gray(g, &LocateOptions::default()).unwrap().geometry).collect();
    let config = tengen_vision::ReaderConfig::default();
    time("check_frame (header, on receipt)", &mut |i| {
        std::hint::black_box(tengen_server::imaging::check_frame(&frames[i % frames.len()]).unwrap());
    });
    time("decode_rgb (zune-jpeg, 1080p)", &mut |i| {
        std::hint::black_box(tengen_vision::decode_rgb(&frames[i % frames.len()]).unwrap());
    });
    time("grey (image::imageops::grayscale)", &mut |i| {
        std::hint::black_box(image::imageops::grayscale(&decoded[i % frames.len()]));
    });
    time("grey (vision::grey, bit-exact)", &mut |i| {
        std::hint::black_box(tengen_vision::grey(&decoded[i % frames.len()]));
    });
    time("grey_within (board window only)", &mut |i| {
        let rgb = &decoded[i % frames.len()];
        let c = located[i % frames.len()].corners();
        let (x0, x1) =
            (c.iter().map(|p| p[0]).fold(f64::MAX, f64::min), c.iter().map(|p| p[0]).fold(f64::MIN, f64::max));
        let (y0, y1) =
            (c.iter().map(|p| p[1]).fold(f64::MAX, f64::min), c.iter().map(|p| p[1]).fold(f64::MIN, f64::max));
        let cell = (x1 - x0) / 18.0;
        let px = |v: f64| v.max(0.0) as u32;
        std::hint::black_box(tengen_vision::grey_within(
            rgb,
            px(x0 - cell),
            px(y0 - cell),
            px(x1 + cell),
            px(y1 + cell),
        ));
    });
    time("line_score (tracking check)", &mut |i| {
        std::hint::black_box(tengen_vision::line_score(&grey[i % frames.len()], &located[i % frames.len()]));
    });
    time("read_board (361 points)", &mut |i| {
        std::hint::black_box(tengen_vision::read_board(
            &decoded[i % frames.len()],
            &located[i % frames.len()],
            &config,
        ));
    });
    time("refine_gray (local re-fit)", &mut |i| {
        std::hint::black_box(refine_gray(&grey[i % frames.len()], &located[i % frames.len()]).ok());
    });
    time("locate_gray (full board search)", &mut |i| {
        std::hint::black_box(locate_gray(&grey[i % frames.len()], &LocateOptions::default()).ok());
    });
    time("evidence_crop (alerts only)", &mut |i| {
        std::hint::black_box(tengen_server::imaging::evidence_crop(&frames[i % frames.len()], None));
    });
    let mut analyzer = tengen_server::adapters::VisionAnalyzer::new(None);
    let observations: Vec<_> =
        frames.iter().map(|f| tengen_server::FrameAnalyzer::analyze(&mut analyzer, f).unwrap()).collect();
    time("VisionAnalyzer::analyze (tracked, seq.)", &mut |i| {
        std::hint::black_box(tengen_server::FrameAnalyzer::analyze(&mut analyzer, &frames[i % frames.len()]).ok());
    });
    // One table's camera as the bench posts it (each recorded frame twice, fresh noise).
    let mut camera = tengen_server::adapters::VisionAnalyzer::new(None);
    let sequence: Vec<&Arc<Vec<u8>>> = frames_by_variant.iter().flat_map(|f| [&f[0], &f[1]]).collect();
    let _ = tengen_server::FrameAnalyzer::analyze(&mut camera, sequence[0]);
    let start = Instant::now();
    for f in &sequence {
        std::hint::black_box(tengen_server::FrameAnalyzer::analyze(&mut camera, f).ok());
    }
    println!(
        "stage {:<34} {:>7.2} ms",
        "analyze, one camera's every frame",
        start.elapsed().as_secs_f64() * 1000.0 / sequence.len() as f64
    );
    let mut referee =
        tengen_server::adapters::RefereeAdapter::new("bench", 1, 7.5, tengen_server::model::StartPosition::Even);
    let mut t = 0i64;
    time("referee observe (tengen-referee)", &mut |i| {
        t += 500;
        std::hint::black_box(referee.observe(t, &observations[i % observations.len()]));
    });
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
    let frames = rendered_frames(1080);
    // Baseline: a bare decode of one frame, the floor of any vision.
    let start = Instant::now();
    let decodes = 20;
    for i in 0..decodes {
        let _ = image::load_from_memory(&frames[i % frames.len()][i % 2]).unwrap();
    }
    let decode_ms = start.elapsed().as_secs_f64() * 1000.0 / decodes as f64;
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    if std::env::var("TENGEN_BENCH_STAGES").is_ok_and(|v| v != "0") {
        stage_costs(&frames);
    }
    println!("load bench: {} frames of 1920x1080 JPEG (~{} KiB), {FPS} fps per camera, {seconds} s measured per level after {warmup} s of warm-up (and until every table has read its board once), {cores} cores", frames.len(), frames[0][0].len() / 1024);
    println!(
        "baseline: bare JPEG decode of one frame {decode_ms:.1} ms → at most {:.0} frames/s on {cores} cores",
        1000.0 / decode_ms * cores as f64
    );
    println!(
        "vision: {}",
        if decode_only {
            "bare JPEG decode only (TENGEN_BENCH_VISION=decode)"
        } else {
            "tengen-vision (locate/track + read 361 points)"
        }
    );
    println!("(received, analysed, dropped, per-table min/max and events are counted over the measured window; rss is the peak)");
    println!(
        "{:>6} {:>7} {:>7} {:>8} {:>8} {:>8} {:>9} {:>8} {:>8} {:>8} {:>7} {:>8} {:>8} {:>9}",
        "tables",
        "posted",
        "refused",
        "received",
        "analysed",
        "dropped",
        "min/max",
        "p50 ms",
        "p99 ms",
        "p99/dec",
        "least",
        "events",
        "searches",
        "rss MiB"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let mut best = None;
    for n in levels {
        let level = runtime.block_on(run_level(n, warmup, seconds, &frames, decode_only));
        let dropped_pct = 100.0 * level.dropped as f64 / level.received.max(1) as f64;
        println!(
            "{:>6} {:>7} {:>7} {:>8} {:>8} {:>7.1}% {:>9} {:>8.0} {:>8.0} {:>8.1} {:>7.2} {:>8} {:>8} {:>9.0}",
            level.tables,
            level.posted,
            level.refused,
            level.received,
            level.analysed,
            dropped_pct,
            format!("{}/{}", level.min_max.0, level.min_max.1),
            level.p50 * 1000.0,
            level.p99 * 1000.0,
            level.p99 * 1000.0 / decode_ms,
            level.least_served,
            level.events,
            level.searches,
            level.rss
        );
        let stages: Vec<String> = level.stages.iter().map(|(name, ms)| format!("{name} {ms:.1}")).collect();
        println!(
            "       measured after {:.1} s of warm-up; mean ms per frame by stage: {}",
            level.startup,
            stages.join(", ")
        );
        // CPU per analysed frame does not depend on what else the machine runs (wall-clock
        // latencies do): the frames/s this process could sustain on its cores alone.
        let cpu_ms = level.cpu * 1000.0 / level.analysed.max(1) as f64;
        println!(
            "       CPU {:.1} s in {seconds} s ({:.0}% of {cores} cores), {cpu_ms:.1} ms per analysed frame → about {:.0} frames/s ({:.0} tables at {FPS} fps) on an otherwise idle machine",
            level.cpu, 100.0 * level.cpu / seconds / cores as f64, 1000.0 * cores as f64 / cpu_ms, 1000.0 * cores as f64 / cpu_ms / FPS
        );
        // Keeping up: p99 under a second, and every table analysed at least half as many
        // frames as the average table (no starvation), and at least one frame a second.
        let per_table_rate = level.analysed as f64 / level.tables as f64 / seconds;
        let ok = level.p99 < 1.0 && level.least_served >= 0.5 && per_table_rate >= 1.0;
        if ok {
            best = Some(n);
        } else {
            println!(
                "  level {n}: not kept up (p99 {:.2} s, least-served {:.2}, {:.2} analysed frames/s per table)",
                level.p99, level.least_served, per_table_rate
            );
            break;
        }
    }
    match best {
        Some(n) => println!("largest N with p99 < 1 s, no table starved, ≥1 analysed frame/s per table: {n}"),
        None => println!("no level kept up"),
    }
}
