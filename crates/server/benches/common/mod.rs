//! What the server's benchmarks share: the rendered game's frames as a camera sends them, the
//! camera's POST of one frame, a frame's JPEG encoding, and a process's CPU time and memory as
//! Linux reports them.

use std::sync::Arc;

/// The camera token every benchmark's service is started with.
pub const CAMERA_TOKEN: &str = "bench-camera-token";

/// Encodes a frame as a camera would send it (JPEG, quality 85).
pub fn encode_jpeg(img: &image::RgbImage) -> Arc<Vec<u8>> {
    let mut out = Vec::new();
    let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
    img.write_with_encoder(enc).unwrap();
    Arc::new(out)
}

/// Posts one frame to a table over a fresh connection; the HTTP status, or 0 when the
/// connection failed or the answer was not HTTP.
pub async fn post_frame(addr: std::net::SocketAddr, table: &str, content_type: &str, body: &[u8]) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
        return 0;
    };
    let head = format!(
        "POST /api/tables/{table}/frames HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {CAMERA_TOKEN}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    if stream.write_all(head.as_bytes()).await.is_err() || stream.write_all(body).await.is_err() {
        return 0;
    }
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    String::from_utf8_lossy(&response).split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// A memory figure of this process from /proc/self/status, in MiB (0 where unavailable):
/// `"VmRSS:"` is the resident memory now, `"VmHWM:"` its peak so far.
pub fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The rendered game of `samples/infractions` at `height` lines (16:9; the rendered size as it
/// is), each frame twice as two camera frames of the same scene: the second with fresh sensor
/// noise (±3 levels per channel), so that no two consecutive posts are the same bytes.
#[allow(dead_code)] // not every benchmark that includes this module measures frames or CPU
pub fn rendered_frames(height: u32) -> Vec<[Arc<Vec<u8>>; 2]> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/infractions");
    let files = tengen_server::sources::folder_frames(&dir).unwrap_or_default();
    assert!(!files.is_empty(), "the bench needs samples/infractions (rendered frames)");
    let mut seed = 0x9E37_79B9_u32;
    files
        .iter()
        .map(|f| {
            let mut img = image::open(f).unwrap().to_rgb8();
            if img.height() != height {
                let width = height * 16 / 9;
                img = image::imageops::resize(&img, width, height, image::imageops::FilterType::Triangle);
            }
            let mut noisy = img.clone();
            for c in noisy.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                *c = (i32::from(*c) + (seed % 7) as i32 - 3).clamp(0, 255) as u8;
            }
            [encode_jpeg(&img), encode_jpeg(&noisy)]
        })
        .collect()
}

/// CPU seconds (user + system) a process has used, `pid` a number or `self`, from /proc (Linux
/// clock ticks, 100 Hz).
#[allow(dead_code)] // not every benchmark that includes this module measures frames or CPU
pub fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    // After the command name: state is field 3, utime 14 and stime 15 (1-based, see proc(5)).
    let ticks = |i: usize| fields.get(i - 3).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(14) + ticks(15)) / 100.0
}

/// `n` tables `t0`, `t1`, … whose cameras post their frames (even games, komi 7.5).
#[allow(dead_code)] // not every benchmark that includes this module starts a service with tables
pub fn posting_tables(n: usize) -> Vec<tengen_server::TableConfig> {
    (0..n).map(|i| tengen_server::TableConfig::posting(format!("t{i}"))).collect()
}

/// A fresh temporary data folder for a benchmark's service, named after `name` (emptied first).
#[allow(dead_code)] // not every benchmark that includes this module starts a service
pub fn bench_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tengen-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A service on a free loopback port with its data in `dir`, the benchmarks' tokens and these
/// tables.
#[allow(dead_code)] // not every benchmark that includes this module starts a service
pub fn bench_config(dir: &std::path::Path, tables: Vec<tengen_server::TableConfig>) -> tengen_server::Config {
    tengen_server::Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.to_path_buf(),
        arbiter_token: Some("bench-arbiter-token".into()),
        camera_token: Some(CAMERA_TOKEN.into()),
        tables,
        ..tengen_server::Config::default()
    }
}

/// Gives every table a fresh analyser from one function: the stand-in analysers keep no
/// calibration, so the table and its calibration do not matter to them.
#[allow(dead_code)] // not every benchmark that includes this module replaces the vision
pub struct EachTable(pub fn() -> Box<dyn tengen_server::FrameAnalyzer>);

impl tengen_server::engine::AnalyzerFactory for EachTable {
    fn create(
        &self,
        _table: &str,
        _calibration: Option<tengen_server::engine::Corners>,
    ) -> Box<dyn tengen_server::FrameAnalyzer> {
        (self.0)()
    }
}
