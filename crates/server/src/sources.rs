//! Frame sources that the service pulls itself: an MJPEG-over-HTTP stream, an HTTP snapshot
//! URL polled at an interval, and a folder of frames replayed at a fixed rate. (Cameras that
//! push frames use `POST /api/tables/{id}/frames` instead.) Each source runs in its own task,
//! reconnects with backoff, and hands frames to its table's one-frame slot.
//!
//! The HTTP client is hyper's own HTTP/1 client over a tokio `TcpStream`: hyper is already
//! built for axum, so this adds no dependency weight. Plain `http://` only: cameras live on the
//! venue's network, and a TLS stack would cost more to build than the whole service.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

use crate::config::CameraConfig;
use crate::engine::Clock;
use crate::imaging::check_frame;
use crate::json::ArbiterAction;
use crate::table::{Frame, TableHandle};

/// Give up connecting after this long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Give up on a response (headers, or a snapshot's whole body) after this long.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Why a pull failed.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The URL is not `http://host[:port]/path`.
    #[error("unsupported camera URL {0:?} (use http://host:port/path)")]
    BadUrl(String),
    /// Network trouble.
    #[error("network: {0}")]
    Io(#[from] std::io::Error),
    /// HTTP protocol trouble.
    #[error("http: {0}")]
    Http(String),
    /// The camera answered with an error status.
    #[error("camera answered HTTP {0}")]
    Status(u16),
    /// Too slow.
    #[error("timed out")]
    Timeout,
    /// The stream is not the multipart stream expected.
    #[error("not an MJPEG stream: {0}")]
    NotMjpeg(String),
    /// A part or body larger than the frame limit.
    #[error("frame larger than {0} bytes")]
    TooLarge(usize),
}

/// A parsed `http://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// Host name or address.
    pub host: String,
    /// Port (80 by default).
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
    /// `user:password` from the URL, sent as Basic authorization.
    pub userinfo: Option<String>,
}

impl HttpUrl {
    /// Parses `http://[user:pass@]host[:port][/path]`.
    pub fn parse(url: &str) -> Result<Self, SourceError> {
        let bad = || SourceError::BadUrl(url.to_owned());
        let rest = url.strip_prefix("http://").ok_or_else(bad)?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].to_owned()),
            None => (rest, "/".to_owned()),
        };
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_owned()), h),
            None => (None, authority),
        };
        let (host, port) = if let Some(bracketed) = hostport.strip_prefix('[') {
            let (h, after) = bracketed.split_once(']').ok_or_else(bad)?;
            let port = match after.strip_prefix(':') {
                Some(p) => p.parse().map_err(|_| bad())?,
                None => 80,
            };
            (h.to_owned(), port)
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_owned(), p.parse().map_err(|_| bad())?),
                None => (hostport.to_owned(), 80),
            }
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(Self { host, port, path, userinfo })
    }
}

fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Sends a GET and returns the response with a streaming body.
pub async fn http_get(url: &HttpUrl) -> Result<hyper::Response<hyper::body::Incoming>, SourceError> {
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect((url.host.as_str(), url.port)))
        .await
        .map_err(|_| SourceError::Timeout)??;
    stream.set_nodelay(true)?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| SourceError::Http(e.to_string()))?;
    tokio::spawn(async move {
        // The connection driver ends with the response body or the peer.
        let _ = connection.await;
    });
    let host_header = if url.port == 80 { url.host.clone() } else { format!("{}:{}", url.host, url.port) };
    let mut request = hyper::Request::get(url.path.as_str())
        .header(hyper::header::HOST, host_header)
        .header(hyper::header::USER_AGENT, "tengen-server");
    if let Some(userinfo) = &url.userinfo {
        request = request.header(hyper::header::AUTHORIZATION, format!("Basic {}", base64(userinfo.as_bytes())));
    }
    let request = request.body(Empty::<Bytes>::new()).map_err(|e| SourceError::Http(e.to_string()))?;
    let response = tokio::time::timeout(RESPONSE_TIMEOUT, sender.send_request(request))
        .await
        .map_err(|_| SourceError::Timeout)?
        .map_err(|e| SourceError::Http(e.to_string()))?;
    if !response.status().is_success() {
        return Err(SourceError::Status(response.status().as_u16()));
    }
    Ok(response)
}

/// What every pulled camera needs besides its own settings.
#[derive(Clone)]
pub struct Pullers {
    /// Stamps the frames.
    pub clock: Arc<dyn Clock>,
    /// Largest frame taken from a camera.
    pub max_frame_bytes: usize,
    /// The program RTSP cameras are read with.
    pub ffmpeg: PathBuf,
}

impl Pullers {
    /// Starts pulling `camera` into `table` (none for a posting camera). One process pulls its
    /// cameras for good; a node of a hall pulls a table's camera while it runs the table and
    /// aborts the task when the table moves (an RTSP camera's ffmpeg is killed with it).
    pub fn spawn(&self, camera: &CameraConfig, table: Arc<TableHandle>) -> Option<tokio::task::JoinHandle<()>> {
        let (clock, max_frame) = (Arc::clone(&self.clock), self.max_frame_bytes);
        Some(match camera {
            CameraConfig::Post => return None,
            CameraConfig::Mjpeg { url } => tokio::spawn(run_mjpeg(url.clone(), table, clock, max_frame)),
            CameraConfig::Snapshot { url, interval_ms } => {
                tokio::spawn(run_snapshot(url.clone(), Duration::from_millis(*interval_ms), table, clock, max_frame))
            }
            CameraConfig::Rtsp { url, fps, transport, max_width } => {
                let options = crate::rtsp::RtspOptions {
                    url: url.clone(),
                    fps: *fps,
                    transport: *transport,
                    max_width: *max_width,
                    ffmpeg: self.ffmpeg.clone(),
                };
                tokio::spawn(crate::rtsp::run_rtsp(options, table, clock, max_frame))
            }
            CameraConfig::Folder { path, fps, repeat, hold_secs } => {
                let replay = FolderReplay { fps: *fps, repeat: *repeat, hold: Duration::from_secs_f64(*hold_secs) };
                tokio::spawn(run_folder(path.clone(), replay, table, clock, max_frame))
            }
        })
    }
}

/// Hands a pulled frame to its table (refusing corrupt ones).
pub(crate) fn deliver(table: &TableHandle, clock: &dyn Clock, bytes: Vec<u8>) {
    match check_frame(&bytes) {
        Ok((format, _, _)) => {
            table.offer_frame(Frame { bytes: Arc::new(bytes), format, received: Instant::now(), at_ms: clock.now_ms() })
        }
        Err(err) => {
            table.metrics.frames_rejected.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::debug!(table = %table.id, %err, "camera sent a bad frame");
            table.camera_failed(&format!("frame refused: {err}"));
        }
    }
}

/// Splits a multipart/x-mixed-replace byte stream into parts.
///
/// Every byte is searched for a delimiter about once, however the stream is chunked: a part
/// without `Content-Length` remembers how far its body was searched, so a camera sending large
/// parts in small chunks costs time in proportion to the bytes, not to their square.
#[derive(Debug)]
pub struct MultipartSplitter {
    delimiter: Vec<u8>,
    buffer: Vec<u8>,
    max_part: usize,
    /// Where in `buffer` the search for the end of the current part's body resumes.
    body_searched: usize,
    /// Bytes examined by searches so far (for the test that keeps this linear).
    examined: u64,
}

impl MultipartSplitter {
    /// A splitter for this boundary (from the Content-Type header, without the leading `--`).
    pub fn new(boundary: &str, max_part: usize) -> Self {
        let boundary = boundary.trim_matches('"');
        let boundary = boundary.strip_prefix("--").unwrap_or(boundary);
        Self {
            delimiter: format!("--{boundary}").into_bytes(),
            buffer: Vec::new(),
            max_part,
            body_searched: 0,
            examined: 0,
        }
    }

    /// Bytes examined by delimiter and header searches so far.
    pub fn examined(&self) -> u64 {
        self.examined
    }

    fn find_from(&mut self, from: usize, needle: &[u8]) -> Option<usize> {
        let haystack = &self.buffer[from..];
        let found = find(haystack, needle);
        self.examined += found.map_or(haystack.len(), |at| at + needle.len()) as u64;
        found.map(|at| from + at)
    }

    /// Adds bytes and returns the complete parts' bodies found so far.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, SourceError> {
        self.buffer.extend_from_slice(bytes);
        let mut parts = Vec::new();
        loop {
            let delimiter = self.delimiter.clone();
            let Some(start) = self.find_from(0, &delimiter) else {
                // Keep only a tail that could still hold the start of a delimiter.
                let keep = self.delimiter.len();
                if self.buffer.len() > keep {
                    self.buffer.drain(..self.buffer.len() - keep);
                }
                break;
            };
            if start > 0 {
                // Whatever came before the delimiter (a preamble, a CRLF) is not a part.
                self.buffer.drain(..start);
                self.body_searched = self.body_searched.saturating_sub(start);
            }
            let after_delimiter = self.delimiter.len();
            // Part headers are short (at most 8 KiB), so searching them again is cheap.
            let Some(header_end) = self.find_from(after_delimiter, b"\r\n\r\n") else {
                if self.buffer.len() - after_delimiter > 8192 {
                    return Err(SourceError::NotMjpeg("part headers too long".into()));
                }
                break;
            };
            let headers = String::from_utf8_lossy(&self.buffer[after_delimiter..header_end]);
            let content_length = headers.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim().eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
            });
            let body_start = header_end + 4;
            let body_end = match content_length {
                Some(len) if len > self.max_part => return Err(SourceError::TooLarge(self.max_part)),
                Some(len) => {
                    if self.buffer.len() < body_start + len {
                        break;
                    }
                    body_start + len
                }
                None => {
                    let from = self.body_searched.max(body_start);
                    match self.find_from(from, &delimiter) {
                        Some(next) => {
                            // The CRLF before the next delimiter belongs to the delimiter.
                            if self.buffer[..next].ends_with(b"\r\n") {
                                next - 2
                            } else {
                                next
                            }
                        }
                        None => {
                            if self.buffer.len() - body_start > self.max_part {
                                return Err(SourceError::TooLarge(self.max_part));
                            }
                            // Resume where a delimiter split across chunks could still begin.
                            self.body_searched =
                                (self.buffer.len() + 1).saturating_sub(self.delimiter.len()).max(body_start);
                            break;
                        }
                    }
                }
            };
            parts.push(self.buffer[body_start..body_end].to_vec());
            self.buffer.drain(..body_end);
            self.body_searched = 0;
        }
        Ok(parts)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

async fn pull_mjpeg_once(
    url: &HttpUrl,
    table: &TableHandle,
    clock: &dyn Clock,
    max_frame: usize,
) -> Result<(), SourceError> {
    let response = http_get(url).await?;
    let content_type = response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    if !content_type.to_ascii_lowercase().starts_with("multipart/") {
        return Err(SourceError::NotMjpeg(format!("content type {content_type:?}")));
    }
    let boundary = content_type
        .split(';')
        .find_map(|p| p.trim().strip_prefix("boundary="))
        .ok_or_else(|| SourceError::NotMjpeg("no boundary".into()))?;
    let mut splitter = MultipartSplitter::new(boundary, max_frame);
    let mut body = response.into_body();
    loop {
        // A live stream that goes silent is as good as lost: reconnect.
        let frame = tokio::time::timeout(RESPONSE_TIMEOUT, body.frame()).await.map_err(|_| SourceError::Timeout)?;
        let Some(frame) = frame else { return Ok(()) };
        let frame = frame.map_err(|e| SourceError::Http(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            for part in splitter.push(&data)? {
                deliver(table, clock, part);
            }
        }
    }
}

/// A camera whose configuration cannot be used stays off; the hall shows why.
pub(crate) fn disable_camera(table: &TableHandle, err: &dyn std::fmt::Display) {
    tracing::error!(table = %table.id, %err, "camera disabled");
    table.camera_failed(&format!("camera disabled: {err}"));
}

/// How a stream camera is restarted: waits doubling from 250 ms up to `max`, back to 250 ms
/// after a run that lasted `healthy_run`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Restarts {
    /// The longest wait between two runs.
    pub max: Duration,
    /// A run this long was healthy: the next wait starts short again.
    pub healthy_run: Duration,
}

/// Runs a stream camera forever: `run` until it ends (it says why, for the hall), then a wait
/// by `restarts`, then again. Shared by the MJPEG and RTSP cameras.
pub(crate) async fn supervise<F, Fut>(table: &TableHandle, restarts: Restarts, mut run: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let first = Duration::from_millis(250);
    let mut backoff = first;
    loop {
        let started = Instant::now();
        let why = run().await;
        // Shown on the dashboard until the next good frame.
        table.camera_failed(&why);
        if started.elapsed() > restarts.healthy_run {
            backoff = first;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(restarts.max);
    }
}

/// Pulls an MJPEG stream forever, reconnecting with backoff.
pub async fn run_mjpeg(url: String, table: Arc<TableHandle>, clock: Arc<dyn Clock>, max_frame: usize) {
    let parsed = match HttpUrl::parse(&url) {
        Ok(u) => u,
        Err(err) => return disable_camera(&table, &err),
    };
    let restarts = Restarts { max: MAX_BACKOFF, healthy_run: Duration::from_secs(30) };
    supervise(&table, restarts, || {
        let (parsed, table, clock) = (parsed.clone(), Arc::clone(&table), Arc::clone(&clock));
        async move {
            // The message names no URL: it may hold the camera's password.
            match pull_mjpeg_once(&parsed, &table, clock.as_ref(), max_frame).await {
                Ok(()) => {
                    tracing::info!(table = %table.id, "MJPEG stream ended; reconnecting");
                    "MJPEG stream ended; reconnecting".to_owned()
                }
                Err(err) => {
                    tracing::warn!(table = %table.id, %err, "MJPEG stream failed; reconnecting");
                    format!("MJPEG stream: {err}")
                }
            }
        }
    })
    .await;
}

async fn pull_snapshot_once(url: &HttpUrl, max_frame: usize) -> Result<Vec<u8>, SourceError> {
    let response = http_get(url).await?;
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    let read = async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| SourceError::Http(e.to_string()))?;
            if let Ok(data) = frame.into_data() {
                if bytes.len() + data.len() > max_frame {
                    return Err(SourceError::TooLarge(max_frame));
                }
                bytes.extend_from_slice(&data);
            }
        }
        Ok(())
    };
    tokio::time::timeout(RESPONSE_TIMEOUT, read).await.map_err(|_| SourceError::Timeout)??;
    Ok(bytes)
}

/// Polls a snapshot URL forever at the interval (a failed pull waits with backoff).
pub async fn run_snapshot(
    url: String,
    interval: Duration,
    table: Arc<TableHandle>,
    clock: Arc<dyn Clock>,
    max_frame: usize,
) {
    let parsed = match HttpUrl::parse(&url) {
        Ok(u) => u,
        Err(err) => return disable_camera(&table, &err),
    };
    let mut ticker = tokio::time::interval(interval.max(Duration::from_millis(20)));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failures = 0u32;
    loop {
        ticker.tick().await;
        match pull_snapshot_once(&parsed, max_frame).await {
            Ok(bytes) => {
                failures = 0;
                deliver(&table, clock.as_ref(), bytes);
            }
            Err(err) => {
                failures += 1;
                if failures == 1 || failures.rem_euclid(20) == 0 {
                    tracing::warn!(table = %table.id, %err, failures, "snapshot failed");
                }
                table.camera_failed(&format!("snapshot: {err}"));
                let pause = Duration::from_millis(250) * 2u32.saturating_pow(failures.min(6));
                tokio::time::sleep(pause.min(MAX_BACKOFF)).await;
            }
        }
    }
}

/// The frame files of a folder (JPEG or PNG), sorted by name.
pub fn folder_frames(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "jpg" | "jpeg" | "png"))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Latest frame time a `sequence.json` may give (a week, in seconds): beyond it a time is a
/// mistake, and it must stay far inside what a `Duration` holds.
pub const MAX_FRAME_TIME_S: f64 = 7.0 * 24.0 * 3600.0;

/// Largest `sequence.json` read.
const MAX_SCHEDULE_BYTES: u64 = 4 << 20;

/// The frame times of a folder, from its `sequence.json` (`{"frames": [{"file", "time_s"}]}`,
/// as written by the project's sample generator), when it has one. Times must be numbers from
/// 0 to [`MAX_FRAME_TIME_S`] that never go backwards, else the file is ignored.
pub fn folder_schedule(path: &Path) -> Option<Vec<(PathBuf, f64)>> {
    let file = path.join("sequence.json");
    if std::fs::metadata(&file).ok()?.len() > MAX_SCHEDULE_BYTES {
        tracing::warn!(path = %file.display(), "sequence.json is too large; frames play at the configured rate");
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let frames = json.get("frames")?.as_array()?;
    let schedule: Option<Vec<(PathBuf, f64)>> = frames
        .iter()
        .map(|f| {
            let file = f.get("file")?.as_str()?;
            // Only plain file names inside the folder.
            if file.contains('/') || file.contains('\\') || file.starts_with('.') {
                return None;
            }
            let time_s = f.get("time_s")?.as_f64()?;
            (0.0..=MAX_FRAME_TIME_S).contains(&time_s).then(|| (path.join(file), time_s))
        })
        .collect();
    schedule.filter(|s| !s.is_empty() && s.windows(2).all(|w| w[0].1 <= w[1].1))
}

/// Reads one frame file of a folder, refusing one larger than `max_frame` bytes before
/// reading it (and one that grows past it while being read).
pub async fn read_frame_file(file: &Path, max_frame: usize) -> Result<Vec<u8>, SourceError> {
    use tokio::io::AsyncReadExt;
    let opened = tokio::fs::File::open(file).await?;
    let limit = u64::try_from(max_frame).unwrap_or(u64::MAX);
    if opened.metadata().await?.len() > limit {
        return Err(SourceError::TooLarge(max_frame));
    }
    let mut bytes = Vec::new();
    opened.take(limit.saturating_add(1)).read_to_end(&mut bytes).await?;
    if bytes.len() > max_frame {
        return Err(SourceError::TooLarge(max_frame));
    }
    Ok(bytes)
}

/// How a folder of frames is played.
#[derive(Debug, Clone, Copy)]
pub struct FolderReplay {
    /// Frames per second (between recorded frames, and for folders without times).
    pub fps: f64,
    /// Start over with a new game at the end.
    pub repeat: bool,
    /// Before starting over, hold the finished game until its alerts are decided, at most
    /// this long (a newcomer fetching the arbiter token must still find them).
    pub hold: Duration,
}

/// Replays a folder of frames at their recorded times (`sequence.json`) or else at `fps`,
/// repeating the current frame at `fps` across longer gaps as a live camera would; with
/// `repeat`, holds the finished game while it has open alerts (at most `hold`), then starts a
/// new game and plays it again.
pub async fn run_folder(
    path: PathBuf,
    replay: FolderReplay,
    table: Arc<TableHandle>,
    clock: Arc<dyn Clock>,
    max_frame: usize,
) {
    let FolderReplay { fps, repeat, hold } = replay;
    let period = Duration::from_secs_f64(1.0 / fps.clamp(0.01, 60.0));
    // A looping replay restarted mid-game (the service restarted) begins a fresh game, so the
    // first frames are not mistaken for a scattered board.
    if repeat && table.summary().is_some_and(|s| s.move_number > 0) {
        if let Err(err) = table.arbiter(ArbiterAction::NewGame { komi: None, start: None, pairing: None }).await {
            tracing::warn!(table = %table.id, %err, "cannot start a fresh replay game");
        }
    }
    loop {
        let files = match folder_frames(&path) {
            Ok(files) if !files.is_empty() => files,
            Ok(_) => {
                tracing::error!(table = %table.id, path = %path.display(), "no frames in folder");
                table.camera_failed("no frames in the folder");
                return;
            }
            Err(err) => {
                tracing::error!(table = %table.id, path = %path.display(), %err, "cannot read folder");
                table.camera_failed(&format!("cannot read the folder: {err}"));
                return;
            }
        };
        // Real speed: each frame at its recorded time when known, else one per period.
        let schedule = folder_schedule(&path).unwrap_or_else(|| {
            files.iter().enumerate().map(|(i, f)| (f.clone(), period.as_secs_f64() * i as f64)).collect()
        });
        let start = tokio::time::Instant::now();
        let first = schedule.first().map_or(0.0, |s| s.1);
        let mut current: Option<Vec<u8>> = None;
        for (file, time_s) in schedule {
            let due = start + Duration::from_secs_f64((time_s - first).max(0.0));
            // A camera keeps sending frames of a still board: between recorded frames that are
            // further apart than one period, the current frame is sent again every period.
            while let Some(bytes) = &current {
                let next = tokio::time::Instant::now() + period;
                if next >= due {
                    break;
                }
                tokio::time::sleep_until(next).await;
                deliver(&table, clock.as_ref(), bytes.clone());
            }
            tokio::time::sleep_until(due).await;
            match read_frame_file(&file, max_frame).await {
                Ok(bytes) => {
                    deliver(&table, clock.as_ref(), bytes.clone());
                    current = Some(bytes);
                }
                Err(err) => {
                    tracing::warn!(file = %file.display(), %err, "cannot read frame");
                    table.camera_failed(&format!("cannot read a frame file: {err}"));
                }
            }
        }
        if !repeat {
            return;
        }
        // Let the referee settle on the last position; hold it while the arbiter has alerts to
        // decide (the still board keeps being sent, as a camera would); then start over.
        let settled = tokio::time::Instant::now() + period * 6;
        let held_until = settled + hold;
        loop {
            let now = tokio::time::Instant::now();
            let open = table.summary().is_some_and(|s| s.open_alerts > 0);
            if now >= held_until || (now >= settled && !open) {
                break;
            }
            tokio::time::sleep(period).await;
            if let Some(bytes) = &current {
                deliver(&table, clock.as_ref(), bytes.clone());
            }
        }
        if let Err(err) = table.arbiter(ArbiterAction::NewGame { komi: None, start: None, pairing: None }).await {
            tracing::warn!(table = %table.id, %err, "cannot start the next demo game");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_urls_parse_with_ports_credentials_and_paths() {
        let u = HttpUrl::parse("http://admin:pw@192.168.1.5:8081/video?x=1").expect("valid");
        assert_eq!(u.host, "192.168.1.5");
        assert_eq!(u.port, 8081);
        assert_eq!(u.path, "/video?x=1");
        assert_eq!(u.userinfo.as_deref(), Some("admin:pw"));
        let u = HttpUrl::parse("http://cam").expect("valid");
        assert_eq!((u.port, u.path.as_str()), (80, "/"));
        assert!(HttpUrl::parse("https://cam/").is_err());
        assert!(HttpUrl::parse("http://:80/").is_err());
        assert!(HttpUrl::parse("http://cam:99999/").is_err());
        assert_eq!(base64(b"admin:pw"), "YWRtaW46cHc=");
        assert_eq!(base64(b"ab"), "YWI=");
    }

    #[test]
    fn folder_schedules_come_from_sequence_json_and_refuse_paths_outside() {
        let dir = std::env::temp_dir().join(format!("tengen-schedule-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let write = |text: &str| std::fs::write(dir.join("sequence.json"), text).expect("write");
        write(r#"{"frames": [{"file": "0001.jpg", "time_s": 1.0}, {"file": "0002.jpg", "time_s": 1.4}]}"#);
        let schedule = folder_schedule(&dir).expect("valid schedule");
        assert_eq!(schedule, vec![(dir.join("0001.jpg"), 1.0), (dir.join("0002.jpg"), 1.4)]);
        write(r#"{"frames": [{"file": "../secret.jpg", "time_s": 1.0}]}"#);
        assert!(folder_schedule(&dir).is_none());
        write(r#"{"frames": [{"file": "a.jpg", "time_s": 2.0}, {"file": "b.jpg", "time_s": 1.0}]}"#);
        assert!(folder_schedule(&dir).is_none(), "times must not go backwards");
        write("not json");
        assert!(folder_schedule(&dir).is_none());
        // Issue 11, item 12: an absurd time panicked in Duration::from_secs_f64.
        for time in ["1e300", "-5", "604801"] {
            write(&format!(
                r#"{{"frames": [{{"file": "a.jpg", "time_s": 0}}, {{"file": "b.jpg", "time_s": {time}}}]}}"#
            ));
            assert!(folder_schedule(&dir).is_none(), "time_s {time} is refused");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_folder_frame_larger_than_the_limit_is_not_read() {
        let dir = std::env::temp_dir().join(format!("tengen-folder-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("0001.jpg");
        std::fs::write(&file, vec![0u8; 5000]).expect("write");
        assert_eq!(read_frame_file(&file, 5000).await.map(|b| b.len()).ok(), Some(5000));
        assert!(matches!(read_frame_file(&file, 4999).await, Err(SourceError::TooLarge(4999))));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn multipart_parts_are_split_with_and_without_content_length_across_chunks() {
        let mut stream = Vec::new();
        stream.extend_from_slice(b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: 4\r\n\r\nAAAA\r\n");
        stream.extend_from_slice(b"--frame\r\nContent-Type: image/jpeg\r\n\r\nBBBBBB\r\n");
        stream.extend_from_slice(b"--frame\r\nContent-Type: image/jpeg\r\n\r\nCC");
        for chunk_size in [1, 3, 7, 1000] {
            let mut splitter = MultipartSplitter::new("frame", 1 << 20);
            let mut parts = Vec::new();
            for chunk in stream.chunks(chunk_size) {
                parts.extend(splitter.push(chunk).expect("valid stream"));
            }
            assert_eq!(parts, vec![b"AAAA".to_vec(), b"BBBBBB".to_vec()], "chunk {chunk_size}");
        }
        let mut splitter = MultipartSplitter::new("--frame", 3);
        assert!(splitter.push(b"--frame\r\nContent-Length: 9\r\n\r\n").is_err());
    }

    #[test]
    fn a_part_without_length_sent_in_small_chunks_is_searched_once() {
        // Issue 11, item 4: one such camera cost 14 s of CPU in 20 s, every chunk searching the
        // part from its start again. Two 2 MB parts in 1 KiB chunks.
        let body: Vec<u8> = (0..2_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut stream = Vec::new();
        for _ in 0..2 {
            stream.extend_from_slice(b"--frame\r\nContent-Type: image/jpeg\r\n\r\n");
            stream.extend_from_slice(&body);
            stream.extend_from_slice(b"\r\n");
        }
        stream.extend_from_slice(b"--frame\r\n");
        let mut splitter = MultipartSplitter::new("frame", 4 << 20);
        let mut parts = Vec::new();
        for chunk in stream.chunks(1024) {
            parts.extend(splitter.push(chunk).expect("valid stream"));
        }
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|p| *p == body));
        let examined = splitter.examined();
        assert!(examined < 3 * stream.len() as u64, "{examined} bytes examined for {} bytes of stream", stream.len());
    }
}
