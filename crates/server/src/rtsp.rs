//! The RTSP camera source (H.264 IP cameras): a supervised `ffmpeg` child process pulls the
//! stream, keeps only the frames a second the table needs and writes them as JPEGs on its
//! standard output; this module splits them and hands them to the table, and restarts ffmpeg
//! with backoff when it exits, fails or goes silent (the camera dropped).
//!
//! Why a child process: ffmpeg (Debian's `ffmpeg` package) speaks every camera's RTSP dialect
//! and decodes H.264/H.265 in optimised C, at no build cost to the service; a pure-Rust RTSP
//! client still needs a C/C++ H.264 decoder. The stream is decoded in full (inter frames need
//! their predecessors) but only `fps` frames a second are scaled and encoded as JPEG.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::engine::Clock;
use crate::sources::{deliver, disable_camera, supervise, Restarts};
use crate::table::TableHandle;

/// No frame for this long: the stream is taken as dropped and ffmpeg is restarted.
const STALL: Duration = Duration::from_secs(10);
/// Longest wait between restarts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// A run this long counts as healthy: the backoff starts again from the shortest wait.
const HEALTHY_RUN: Duration = Duration::from_secs(30);

/// How RTP travels from the camera.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtspTransport {
    /// Interleaved in the RTSP TCP connection: passes NAT and firewalls, no lost packets.
    #[default]
    Tcp,
    /// Separate UDP ports: what some old cameras only offer.
    Udp,
}

/// What to pull and how.
#[derive(Debug, Clone, PartialEq)]
pub struct RtspOptions {
    /// `rtsp://[user:pass@]host[:port]/path`.
    pub url: String,
    /// Frames per second handed to the table (Go needs about one; the stream's own rate may be 25).
    pub fps: f64,
    /// RTP over TCP or UDP.
    pub transport: RtspTransport,
    /// Frames wider than this are scaled down (keeping the aspect) before JPEG encoding.
    pub max_width: Option<u32>,
    /// The ffmpeg program.
    pub ffmpeg: PathBuf,
}

/// Why an RTSP source cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RtspError {
    /// The URL is not `rtsp://…` or `rtsps://…`.
    #[error("unsupported camera URL {0:?} (use rtsp://host:port/path)")]
    BadUrl(String),
}

impl RtspOptions {
    /// Checks the URL.
    pub fn validate(&self) -> Result<(), RtspError> {
        let rest = self.url.strip_prefix("rtsp://").or_else(|| self.url.strip_prefix("rtsps://"));
        match rest {
            Some(rest) if !rest.is_empty() && !rest.starts_with('/') && !self.url.chars().any(char::is_whitespace) => {
                Ok(())
            }
            _ => Err(RtspError::BadUrl(self.url.clone())),
        }
    }

    /// The ffmpeg command line (without the program).
    pub fn ffmpeg_args(&self) -> Vec<String> {
        let mut filter = format!("fps={}", self.fps.clamp(0.1, 30.0));
        if let Some(width) = self.max_width {
            // Never upscale; an even height keeps the JPEG encoder's chroma subsampling happy.
            filter.push_str(&format!(",scale='min({width},iw)':-2"));
        }
        let transport = match self.transport {
            RtspTransport::Tcp => "tcp",
            RtspTransport::Udp => "udp",
        };
        [
            "-hide_banner",
            "-nostdin",
            "-loglevel",
            "error",
            "-rtsp_transport",
            transport,
            // Socket I/O timeout in microseconds: a dead camera ends the process.
            "-timeout",
            "5000000",
            "-i",
            &self.url,
            "-an",
            "-sn",
            "-dn",
            "-vf",
            &filter,
            "-c:v",
            "mjpeg",
            "-q:v",
            "3",
            "-f",
            "image2pipe",
            "pipe:1",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    }
}

/// Splits a stream of concatenated JPEG images (as ffmpeg's `image2pipe` writes them) into
/// images, scanning every byte once.
#[derive(Debug)]
pub struct JpegSplitter {
    buffer: Vec<u8>,
    /// Where the search for the end marker goes on.
    scanned: usize,
    max_image: usize,
}

/// Why the byte stream is not a sequence of JPEGs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    /// An image larger than the frame limit.
    #[error("an image larger than {0} bytes")]
    TooLarge(usize),
}

impl JpegSplitter {
    /// A splitter refusing images over `max_image` bytes.
    pub fn new(max_image: usize) -> Self {
        Self { buffer: Vec::new(), scanned: 0, max_image }
    }

    /// Adds bytes; returns the images completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, SplitError> {
        self.buffer.extend_from_slice(bytes);
        let mut images = Vec::new();
        loop {
            // Skip anything before a start-of-image marker (FF D8).
            match self.buffer.windows(2).position(|w| w == [0xFF, 0xD8]) {
                Some(0) => {}
                Some(start) => {
                    self.buffer.drain(..start);
                    self.scanned = 0;
                }
                None => {
                    // Keep a lone trailing FF: it may begin the next marker.
                    let keep = usize::from(self.buffer.last() == Some(&0xFF));
                    self.buffer.drain(..self.buffer.len() - keep);
                    self.scanned = 0;
                    break;
                }
            }
            // In entropy-coded data every FF is followed by 00 or a restart marker, so the
            // first FF D9 after the header is the end of the image.
            let from = self.scanned.max(2);
            match self.buffer[from.min(self.buffer.len())..].windows(2).position(|w| w == [0xFF, 0xD9]) {
                Some(end) => {
                    let end = from + end + 2;
                    let image: Vec<u8> = self.buffer.drain(..end).collect();
                    self.scanned = 0;
                    if image.len() > self.max_image {
                        return Err(SplitError::TooLarge(self.max_image));
                    }
                    images.push(image);
                }
                None => {
                    if self.buffer.len() > self.max_image {
                        self.buffer.clear();
                        self.scanned = 0;
                        return Err(SplitError::TooLarge(self.max_image));
                    }
                    self.scanned = self.buffer.len().saturating_sub(1).max(2);
                    break;
                }
            }
        }
        Ok(images)
    }
}

/// How one ffmpeg run ended.
#[derive(Debug)]
enum RunEnd {
    /// The program could not be started.
    Spawn(std::io::Error),
    /// No frame for [`STALL`].
    Stalled,
    /// ffmpeg exited (the stream ended or failed); its last error line.
    Exited(String),
    /// The output was not JPEG images.
    Bad(SplitError),
}

impl std::fmt::Display for RunEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunEnd::Spawn(err) if err.kind() == std::io::ErrorKind::NotFound => {
                write!(f, "ffmpeg not found ({err}): install it (Debian: apt-get install ffmpeg)")
            }
            RunEnd::Spawn(err) => write!(f, "cannot start ffmpeg: {err}"),
            RunEnd::Stalled => write!(f, "no frame for {} s", STALL.as_secs()),
            RunEnd::Exited(line) if line.is_empty() => write!(f, "the stream ended"),
            RunEnd::Exited(line) => write!(f, "ffmpeg: {line}"),
            RunEnd::Bad(err) => write!(f, "{err}"),
        }
    }
}

/// Runs ffmpeg once, delivering frames until it ends or stalls; returns how many frames came.
async fn run_once(options: &RtspOptions, table: &TableHandle, clock: &dyn Clock, max_frame: usize) -> (u64, RunEnd) {
    let mut child = match tokio::process::Command::new(&options.ffmpeg)
        .args(options.ffmpeg_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(err) => return (0, RunEnd::Spawn(err)),
    };
    let (Some(mut stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return (0, RunEnd::Exited("no output pipes".into()));
    };
    // The last line ffmpeg wrote on stderr says why it stopped.
    let last_error = Arc::new(std::sync::Mutex::new(String::new()));
    let errors = tokio::spawn({
        let last_error = Arc::clone(&last_error);
        async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut last) = last_error.lock() {
                    *last = line.chars().take(300).collect();
                }
            }
        }
    });
    let mut splitter = JpegSplitter::new(max_frame);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut frames = 0u64;
    let end = loop {
        match tokio::time::timeout(STALL, stdout.read(&mut chunk)).await {
            Err(_) => break RunEnd::Stalled,
            Ok(Ok(0) | Err(_)) => {
                // Let stderr drain so that the reason is known.
                let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
                let _ = tokio::time::timeout(Duration::from_secs(1), errors).await;
                let line = last_error.lock().map(|l| l.clone()).unwrap_or_default();
                return (frames, RunEnd::Exited(line));
            }
            Ok(Ok(n)) => match splitter.push(&chunk[..n]) {
                Ok(images) => {
                    for image in images {
                        frames += 1;
                        deliver(table, clock, image);
                    }
                }
                Err(err) => break RunEnd::Bad(err),
            },
        }
    };
    let _ = child.kill().await;
    errors.abort();
    (frames, end)
}

/// Pulls an RTSP stream forever through ffmpeg, restarting it with backoff.
pub async fn run_rtsp(options: RtspOptions, table: Arc<TableHandle>, clock: Arc<dyn Clock>, max_frame: usize) {
    if let Err(err) = options.validate() {
        return disable_camera(&table, &err);
    }
    let restarts = Restarts { max: MAX_BACKOFF, healthy_run: HEALTHY_RUN };
    supervise(&table, restarts, || {
        let (options, table, clock) = (options.clone(), Arc::clone(&table), Arc::clone(&clock));
        async move {
            let (frames, end) = run_once(&options, &table, clock.as_ref(), max_frame).await;
            tracing::warn!(table = %table.id, frames, reason = %end, "RTSP stream stopped; restarting");
            format!("RTSP stream stopped ({end}); reconnecting")
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg(fill: u8, len: usize) -> Vec<u8> {
        let mut v = vec![0xFF, 0xD8, 0xFF, 0xE0];
        // Entropy-coded data: FF only ever followed by 00.
        v.extend((0..len).map(|i| if i % 7 == 0 { 0xFF } else { fill }).flat_map(|b| {
            if b == 0xFF {
                vec![0xFF, 0x00]
            } else {
                vec![b]
            }
        }));
        v.extend([0xFF, 0xD9]);
        v
    }

    #[test]
    fn concatenated_jpegs_split_whatever_the_chunking() {
        let images = [jpeg(1, 50), jpeg(2, 3), jpeg(3, 200)];
        let mut stream = b"junk before".to_vec();
        for i in &images {
            stream.extend(i);
        }
        for size in [1, 2, 3, 5, 64, 10_000] {
            let mut splitter = JpegSplitter::new(1 << 20);
            let mut out = Vec::new();
            for chunk in stream.chunks(size) {
                out.extend(splitter.push(chunk).expect("within the limit"));
            }
            assert_eq!(out, images.to_vec(), "chunks of {size}");
        }
        let mut small = JpegSplitter::new(100);
        assert_eq!(small.push(&jpeg(4, 500)), Err(SplitError::TooLarge(100)));
        // After refusing, the next image still comes through.
        assert_eq!(small.push(&jpeg(5, 10)).expect("small image"), vec![jpeg(5, 10)]);
    }

    #[test]
    fn urls_and_the_command_line() {
        let mut options = RtspOptions {
            url: "rtsp://admin:pw@192.168.1.60:554/stream1".into(),
            fps: 2.0,
            transport: RtspTransport::Tcp,
            max_width: Some(1920),
            ffmpeg: "ffmpeg".into(),
        };
        assert!(options.validate().is_ok());
        let args = options.ffmpeg_args().join(" ");
        assert!(
            args.contains("-rtsp_transport tcp -timeout 5000000 -i rtsp://admin:pw@192.168.1.60:554/stream1"),
            "{args}"
        );
        assert!(args.contains("-vf fps=2,scale='min(1920,iw)':-2"), "{args}");
        assert!(args.ends_with("-f image2pipe pipe:1"), "{args}");
        for bad in ["http://cam/", "rtsp://", "rtsp:///x", "rtsp://cam/a b"] {
            options.url = bad.into();
            assert!(options.validate().is_err(), "{bad}");
        }
    }
}
