//! The service configuration: an embedded default that needs nothing set up, or a TOML file
//! naming tables, cameras, calibrations, komi and tokens (see README.md for the reference).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::Corners;
use crate::model::StartPosition;

/// Why a configuration is unusable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown keys.
    #[error("bad configuration: {0}")]
    Parse(String),
    /// The values are inconsistent (duplicate table ids, bad ids, bad calibration).
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// The whole configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Address to listen on; port 0 picks a free port.
    #[serde(default = "default_listen")]
    pub listen: String,
    /// Folder for the SQLite database.
    #[serde(default = "default_data_dir")]
    pub data_dir: PathBuf,
    /// Token for arbiter actions and calibration; generated at start when absent.
    #[serde(default)]
    pub arbiter_token: Option<String>,
    /// Token cameras post frames with (tables may override); generated when absent.
    #[serde(default)]
    pub camera_token: Option<String>,
    /// Seconds without a frame before a table's camera is reported lost.
    #[serde(default = "default_camera_timeout")]
    pub camera_timeout_secs: f64,
    /// Highest frame rate a camera may post; faster posts get 429.
    #[serde(default = "default_max_fps")]
    pub max_camera_fps: f64,
    /// Frames analysed at once across all tables (0: one per CPU core). Board searches (a
    /// table's first frames) run beside them in a lane of their own, as many at once.
    #[serde(default)]
    pub analysis_threads: usize,
    /// Largest accepted frame, in bytes.
    #[serde(default = "default_max_frame")]
    pub max_frame_bytes: usize,
    /// HTTP connections open at once; more are answered 503.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers (and the longest a connection may sit
    /// idle between requests).
    #[serde(default = "default_header_timeout")]
    pub header_timeout_secs: f64,
    /// Seconds a client has to send a request's body.
    #[serde(default = "default_body_timeout")]
    pub body_timeout_secs: f64,
    /// Longest a board search may run, in seconds, beside its work budget (a search on a busy
    /// machine gets the same steps but less of a core).
    #[serde(default = "default_search_deadline")]
    pub search_deadline_secs: f64,
    /// Also serve HTTPS here (phone cameras need it), e.g. `0.0.0.0:8443`.
    #[serde(default)]
    pub https_listen: Option<String>,
    /// PEM certificate (chain) for HTTPS; self-signed under `data_dir/tls/` when absent.
    #[serde(default)]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key for HTTPS.
    #[serde(default)]
    pub tls_key: Option<PathBuf>,
    /// The ffmpeg program RTSP cameras are read with (Debian package `ffmpeg`).
    #[serde(default = "default_ffmpeg")]
    pub ffmpeg: PathBuf,
    /// Join a hall of nodes on NATS JetStream (absent: one process, its own SQLite log).
    #[serde(default)]
    pub cluster: Option<ClusterConfig>,
    /// The tables.
    #[serde(default, rename = "table")]
    pub tables: Vec<TableConfig>,
}

/// Cluster mode: the tables' logs are JetStream streams and each table is analysed by the node
/// holding its lease (see docs/cluster.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// The NATS server(s), e.g. `nats://10.0.0.1:4222` (several separated by commas).
    pub nats: String,
    /// This node's name, unique in the hall (letters, digits, `-` and `_`).
    pub node: String,
    /// Seconds a table's lease lives without renewal: a dead node's tables move after this.
    #[serde(default = "default_lease_ttl")]
    pub lease_ttl_secs: f64,
    /// Replicas of the streams and buckets this node creates (1 on one NATS server, 3 on a
    /// three-server NATS cluster).
    #[serde(default = "default_replicas")]
    pub replicas: usize,
    /// Bytes of log appends kept in memory while NATS is unreachable; when they are full, frames
    /// for the tables waiting are refused (`503 log_buffer_full`) until NATS is back.
    #[serde(default = "default_buffer_bytes")]
    pub buffer_bytes: u64,
    /// Bytes the hall's evidence images (JetStream object store `tengen_evidence`) may take
    /// (set by the node that creates the bucket); when full, an event is logged without its
    /// images and says why.
    #[serde(default = "default_evidence_bytes")]
    pub evidence_bytes: u64,
}

impl ClusterConfig {
    /// A node `node` of the hall on `nats`, with the default lease, replicas and buffer.
    pub fn new(nats: impl Into<String>, node: impl Into<String>) -> Self {
        Self {
            nats: nats.into(),
            node: node.into(),
            lease_ttl_secs: default_lease_ttl(),
            replicas: default_replicas(),
            buffer_bytes: default_buffer_bytes(),
            evidence_bytes: default_evidence_bytes(),
        }
    }
}

fn default_lease_ttl() -> f64 {
    3.0
}
fn default_buffer_bytes() -> u64 {
    // A record is about 1 KiB (a whole reading) or 100 bytes (a repeat): minutes of a hall.
    64 * 1024 * 1024
}
fn default_evidence_bytes() -> u64 {
    // An alert's two zoomed crops are about 60 KB: some 16 000 alerts, a congress's worth.
    1024 * 1024 * 1024
}
fn default_replicas() -> usize {
    1
}

/// One table: a board, a camera, a game at a time.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableConfig {
    /// Short id used in URLs: letters, digits, `-` and `_`, at most 32.
    pub id: String,
    /// Name shown on the dashboard.
    #[serde(default)]
    pub name: Option<String>,
    /// Komi in points (7.5 = 3¾ stones, the Chinese rules since 2001).
    #[serde(default = "default_komi")]
    pub komi: f64,
    /// What its games start from: `"even"` (the default: an empty board, Black first),
    /// `{ handicap = N }` (N stones on the standard points, White first) or `"adopt"` (the
    /// board as found).
    #[serde(default = "default_start")]
    pub start: StartPosition,
    /// This table's camera token, overriding the global one.
    #[serde(default)]
    pub camera_token: Option<String>,
    /// Where frames come from.
    #[serde(default)]
    pub camera: CameraConfig,
    /// A fixed calibration; when absent the vision locates the board by itself.
    #[serde(default)]
    pub calibration: Option<CalibrationConfig>,
}

impl TableConfig {
    /// A table whose camera posts its frames, with what a config file leaves out: no name,
    /// komi 7.5, even games, the global camera token, no fixed calibration.
    pub fn posting(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            name: None,
            komi: default_komi(),
            start: default_start(),
            camera_token: None,
            camera: CameraConfig::Post,
            calibration: None,
        }
    }
}

/// Where a table's frames come from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CameraConfig {
    /// The camera posts frames to `POST /api/tables/{id}/frames`.
    #[default]
    Post,
    /// Pull an MJPEG-over-HTTP stream (multipart/x-mixed-replace).
    Mjpeg {
        /// `http://host:port/path` (no TLS: cameras live on the venue network).
        url: String,
    },
    /// Pull an RTSP stream (H.264/H.265 IP cameras) through a supervised `ffmpeg` process.
    Rtsp {
        /// `rtsp://[user:pass@]host[:port]/path`.
        url: String,
        /// Frames per second handed to the table (the stream's own rate may be 25).
        #[serde(default = "default_fps")]
        fps: f64,
        /// RTP over `tcp` (the default: through firewalls, no lost packets) or `udp`.
        #[serde(default)]
        transport: crate::rtsp::RtspTransport,
        /// Frames wider than this are scaled down first (pixels).
        #[serde(default)]
        max_width: Option<u32>,
    },
    /// Pull a still image from an HTTP URL at an interval.
    Snapshot {
        /// `http://host:port/path`.
        url: String,
        /// Milliseconds between pulls.
        #[serde(default = "default_interval_ms")]
        interval_ms: u64,
    },
    /// Replay a folder of frames (sorted by name) at a fixed rate.
    Folder {
        /// The folder.
        path: PathBuf,
        /// Frames per second.
        #[serde(default = "default_fps")]
        fps: f64,
        /// Start over (with a new game) at the end.
        #[serde(default)]
        repeat: bool,
        /// Before starting over, hold the finished game (its last frame still sent) until the
        /// arbiter has decided its alerts, or at most this many seconds.
        #[serde(default = "default_hold_secs")]
        hold_secs: f64,
    },
}

/// A fixed calibration.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationConfig {
    /// Pixels of the corner intersections: top-left, top-right, bottom-right, bottom-left.
    pub corners: Corners,
}

fn default_start() -> StartPosition {
    StartPosition::Even
}
fn default_ffmpeg() -> PathBuf {
    PathBuf::from("ffmpeg")
}
fn default_listen() -> String {
    "127.0.0.1:8080".into()
}
fn default_data_dir() -> PathBuf {
    PathBuf::from("./tengen-data")
}
fn default_camera_timeout() -> f64 {
    10.0
}
fn default_max_fps() -> f64 {
    10.0
}
fn default_max_frame() -> usize {
    8 * 1024 * 1024
}
fn default_max_connections() -> usize {
    crate::listener::HttpLimits::default().max_connections
}
fn default_header_timeout() -> f64 {
    crate::listener::HttpLimits::default().header_timeout.as_secs_f64()
}
fn default_body_timeout() -> f64 {
    crate::listener::HttpLimits::default().body_timeout.as_secs_f64()
}
fn default_search_deadline() -> f64 {
    2.0
}
fn default_komi() -> f64 {
    7.5
}
fn default_interval_ms() -> u64 {
    500
}
fn default_fps() -> f64 {
    2.0
}
fn default_hold_secs() -> f64 {
    300.0
}

impl Default for Config {
    /// The embedded default: four tables whose cameras post frames.
    fn default() -> Self {
        let tables = (1..=4)
            .map(|i| TableConfig { name: Some(format!("Table {i}")), ..TableConfig::posting(i.to_string()) })
            .collect();
        Self {
            listen: default_listen(),
            data_dir: default_data_dir(),
            arbiter_token: None,
            camera_token: None,
            camera_timeout_secs: default_camera_timeout(),
            max_camera_fps: default_max_fps(),
            analysis_threads: 0,
            max_frame_bytes: default_max_frame(),
            max_connections: default_max_connections(),
            header_timeout_secs: default_header_timeout(),
            body_timeout_secs: default_body_timeout(),
            search_deadline_secs: default_search_deadline(),
            ffmpeg: default_ffmpeg(),
            https_listen: None,
            tls_cert: None,
            tls_key: None,
            cluster: None,
            tables,
        }
    }
}

impl Config {
    /// Parses TOML text and checks it.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Reads and checks a TOML file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
        Self::from_toml(&text)
    }

    /// Checks ids, numbers and calibrations.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(cluster) = &self.cluster {
            if !valid_table_id(&cluster.node) {
                return Err(ConfigError::Invalid(format!(
                    "node name {:?}: use 1-32 letters, digits, '-' or '_'",
                    cluster.node
                )));
            }
            if !(1.0..=600.0).contains(&cluster.lease_ttl_secs) {
                return Err(ConfigError::Invalid("cluster lease_ttl_secs is 1 to 600".into()));
            }
            if !(1..=5).contains(&cluster.replicas) {
                return Err(ConfigError::Invalid("cluster replicas is 1 to 5".into()));
            }
            if cluster.buffer_bytes < 1024 {
                return Err(ConfigError::Invalid("cluster buffer_bytes is at least 1024".into()));
            }
            if cluster.evidence_bytes < 1 << 20 || i64::try_from(cluster.evidence_bytes).is_err() {
                return Err(ConfigError::Invalid("cluster evidence_bytes is at least 1048576".into()));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for table in &self.tables {
            if !valid_table_id(&table.id) {
                return Err(ConfigError::Invalid(format!(
                    "table id {:?}: use 1-32 letters, digits, '-' or '_'",
                    table.id
                )));
            }
            if !seen.insert(table.id.as_str()) {
                return Err(ConfigError::Invalid(format!("table id {:?} appears twice", table.id)));
            }
            if !table.komi.is_finite() || table.komi.abs() > 100.0 {
                return Err(ConfigError::Invalid(format!("table {}: komi out of range", table.id)));
            }
            if let Err(err) = table.start.checked() {
                return Err(ConfigError::Invalid(format!("table {}: {err}", table.id)));
            }
            if let Some(cal) = &table.calibration {
                if cal.corners.iter().flatten().any(|v| !v.is_finite() || *v < 0.0) {
                    return Err(ConfigError::Invalid(format!(
                        "table {}: calibration corners must be non-negative pixels",
                        table.id
                    )));
                }
                // The same check as a calibration set through the API: a board the vision can read.
                let side = crate::imaging::FrameLimits::default().max_side;
                let lens = tengen_vision::LensDistortion::none(side, side);
                if let Err(err) = tengen_vision::locate::from_corners(cal.corners, lens) {
                    return Err(ConfigError::Invalid(format!("table {}: calibration: {err}", table.id)));
                }
            }
            if let CameraConfig::Rtsp { url, fps, .. } = &table.camera {
                if fps.is_nan() || *fps <= 0.0 || *fps > 30.0 {
                    return Err(ConfigError::Invalid(format!("table {}: fps in (0, 30]", table.id)));
                }
                let options = crate::rtsp::RtspOptions {
                    url: url.clone(),
                    fps: *fps,
                    transport: crate::rtsp::RtspTransport::Tcp,
                    max_width: None,
                    ffmpeg: self.ffmpeg.clone(),
                };
                options.validate().map_err(|e| ConfigError::Invalid(format!("table {}: {e}", table.id)))?;
            }
            if let CameraConfig::Folder { fps, hold_secs, .. } = &table.camera {
                if fps.is_nan() || *fps <= 0.0 || *fps > 60.0 {
                    return Err(ConfigError::Invalid(format!("table {}: fps in (0, 60]", table.id)));
                }
                if !(0.0..=86_400.0).contains(hold_secs) {
                    return Err(ConfigError::Invalid(format!("table {}: hold_secs in [0, 86400]", table.id)));
                }
            }
        }
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return Err(ConfigError::Invalid("tls_cert and tls_key go together".into()));
        }
        if self.max_camera_fps.is_nan() || self.max_camera_fps <= 0.0 {
            return Err(ConfigError::Invalid("max_camera_fps must be positive".into()));
        }
        // Seconds become `Duration`s, which a NaN, a negative or an absurd number would panic.
        for (name, secs) in [
            ("camera_timeout_secs", self.camera_timeout_secs),
            ("header_timeout_secs", self.header_timeout_secs),
            ("body_timeout_secs", self.body_timeout_secs),
            ("search_deadline_secs", self.search_deadline_secs),
        ] {
            if !(secs > 0.0 && secs <= MAX_SECONDS) {
                return Err(ConfigError::Invalid(format!("{name} must be above 0 and at most {MAX_SECONDS} (a day)")));
            }
        }
        if self.max_connections == 0 {
            return Err(ConfigError::Invalid("max_connections must be at least 1".into()));
        }
        for token in [&self.arbiter_token, &self.camera_token].into_iter().flatten() {
            if token.len() < 8 {
                return Err(ConfigError::Invalid("tokens must have at least 8 characters".into()));
            }
        }
        Ok(())
    }
}

/// Longest duration a setting may give, in seconds (a day).
pub const MAX_SECONDS: f64 = 86_400.0;

/// Whether a table id is safe in URLs and file names.
pub fn valid_table_id(id: &str) -> bool {
    (1..=32).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_example_parses() {
        let text = include_str!("../config.example.toml");
        let config = Config::from_toml(text).expect("the documented example must parse");
        assert_eq!(config.tables.len(), 5);
        assert!(matches!(config.tables[2].camera, CameraConfig::Rtsp { .. }));
        assert_eq!(config.tables[2].start, StartPosition::Handicap(4));
        assert!(matches!(config.tables[1].camera, CameraConfig::Mjpeg { .. }));
    }

    #[test]
    fn unknown_keys_and_duplicate_tables_are_refused() {
        assert!(Config::from_toml("lisen = \"x\"").is_err());
        let dup = "[[table]]\nid = \"a\"\n[[table]]\nid = \"a\"\n";
        assert!(matches!(Config::from_toml(dup), Err(ConfigError::Invalid(_))));
        assert!(Config::from_toml("[[table]]\nid = \"../x\"\n").is_err());
    }

    #[test]
    fn empty_file_gives_defaults_without_tables() {
        let config = Config::from_toml("").expect("empty is valid");
        assert_eq!(config.listen, "127.0.0.1:8080");
        assert!(config.tables.is_empty());
        assert_eq!(Config::default().tables.len(), 4);
    }
}
