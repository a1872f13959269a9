//! Counters and a latency histogram per table, rendered as Prometheus text for `/metrics`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Upper bounds (seconds) of the pipeline latency histogram buckets.
pub const LATENCY_BUCKETS: [f64; 12] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0];

/// A fixed-bucket histogram.
#[derive(Debug, Default)]
pub struct Histogram {
    counts: [AtomicU64; LATENCY_BUCKETS.len()],
    overflow: AtomicU64,
    sum_micros: AtomicU64,
    total: AtomicU64,
}

impl Histogram {
    /// Records one observation in seconds.
    pub fn observe(&self, seconds: f64) {
        match LATENCY_BUCKETS.iter().position(|b| seconds <= *b) {
            Some(i) => self.counts[i].fetch_add(1, Ordering::Relaxed),
            None => self.overflow.fetch_add(1, Ordering::Relaxed),
        };
        // Truncation to whole microseconds is intended.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        self.sum_micros.fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
        self.total.fetch_add(1, Ordering::Relaxed);
    }

    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let mut cumulative = 0;
        for (bound, count) in LATENCY_BUCKETS.iter().zip(&self.counts) {
            cumulative += count.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {cumulative}");
        }
        cumulative += self.overflow.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {cumulative}");
        #[allow(clippy::cast_precision_loss)]
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum{{{labels}}} {sum}");
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", self.total.load(Ordering::Relaxed));
    }
}

/// The stages of a frame's way through a table's pipeline, timed separately (where a frame's
/// time goes under load).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// From arrival until the pipeline takes the frame for analysis (waiting for a core).
    Queue,
    /// Vision: decode, tracking check, read (or a board search).
    Vision,
    /// The referee's update.
    Referee,
    /// Evidence crops (alerts only) and the append to the log.
    Store,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 4] = [Stage::Queue, Stage::Vision, Stage::Referee, Stage::Store];

    /// Its label in `/metrics`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Queue => "queue",
            Stage::Vision => "vision",
            Stage::Referee => "referee",
            Stage::Store => "store",
        }
    }
}

/// Time spent per stage, summed over frames (microseconds).
#[derive(Debug, Default)]
pub struct StageTimes {
    micros: [AtomicU64; Stage::ALL.len()],
    frames: [AtomicU64; Stage::ALL.len()],
}

impl StageTimes {
    /// Adds one frame's time in a stage.
    pub fn add(&self, stage: Stage, elapsed: std::time::Duration) {
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.micros[stage as usize].fetch_add(micros, Ordering::Relaxed);
        self.frames[stage as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Total seconds spent in a stage and the number of frames that went through it.
    pub fn total(&self, stage: Stage) -> (f64, u64) {
        #[allow(clippy::cast_precision_loss)]
        let seconds = self.micros[stage as usize].load(Ordering::Relaxed) as f64 / 1e6;
        (seconds, self.frames[stage as usize].load(Ordering::Relaxed))
    }
}

/// What one table counts.
#[derive(Debug, Default)]
pub struct TableMetrics {
    /// Frames accepted from the camera.
    pub frames_received: AtomicU64,
    /// Frames replaced by a newer one before they were analysed.
    pub frames_dropped: AtomicU64,
    /// Frames refused (rate limit, bad image).
    pub frames_rejected: AtomicU64,
    /// Frames analysed.
    pub frames_analysed: AtomicU64,
    /// Frames the vision could not read.
    pub analysis_errors: AtomicU64,
    /// Events emitted.
    pub events: AtomicU64,
    /// Alerts (suspected infractions) emitted.
    pub alerts: AtomicU64,
    /// Seconds from a frame's arrival to the end of its processing (vision, referee, store).
    pub latency: Histogram,
    /// Time per pipeline stage.
    pub stages: StageTimes,
    /// Frames analysed with no board tracked yet (each pays for a full board search).
    pub board_searches: AtomicU64,
    /// Recent latencies in microseconds (a ring), for percentiles in the dashboard and bench.
    recent: Mutex<Vec<u64>>,
}

const RECENT_LATENCIES: usize = 512;

impl TableMetrics {
    /// Records a frame's processing latency.
    pub fn record_latency(&self, seconds: f64) {
        self.latency.observe(seconds);
        if let Ok(mut recent) = self.recent.lock() {
            if recent.len() >= RECENT_LATENCIES {
                recent.remove(0);
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            recent.push((seconds * 1e6) as u64);
        }
    }

    /// Forgets the recent latencies (a benchmark's warm-up ends; the histogram keeps them).
    pub fn clear_recent(&self) {
        if let Ok(mut recent) = self.recent.lock() {
            recent.clear();
        }
    }

    /// The given quantile (0..=1) of recent latencies in seconds.
    pub fn recent_quantile(&self, q: f64) -> Option<f64> {
        let mut recent = self.recent.lock().ok()?.clone();
        if recent.is_empty() {
            return None;
        }
        recent.sort_unstable();
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
        let index = ((recent.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
        #[allow(clippy::cast_precision_loss)]
        recent.get(index).map(|us| *us as f64 / 1e6)
    }
}

/// Renders all tables' metrics as Prometheus text exposition.
pub fn render<'a>(tables: impl Iterator<Item = (&'a str, &'a TableMetrics)> + Clone) -> String {
    let mut out = String::new();
    type Field = fn(&TableMetrics) -> &AtomicU64;
    let counters: [(&str, &str, Field); 8] = [
        ("tengen_frames_received_total", "Frames accepted from the camera.", |m| &m.frames_received),
        ("tengen_frames_dropped_total", "Frames replaced by a newer one before analysis.", |m| &m.frames_dropped),
        ("tengen_frames_rejected_total", "Frames refused (rate limit, bad image).", |m| &m.frames_rejected),
        ("tengen_frames_analysed_total", "Frames analysed.", |m| &m.frames_analysed),
        ("tengen_analysis_errors_total", "Frames the vision could not read.", |m| &m.analysis_errors),
        ("tengen_events_total", "Events emitted.", |m| &m.events),
        ("tengen_alerts_total", "Suspected infractions emitted.", |m| &m.alerts),
        ("tengen_board_searches_total", "Frames analysed with no board tracked yet (a full search).", |m| {
            &m.board_searches
        }),
    ];
    for (name, help, field) in counters {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for (table, metrics) in tables.clone() {
            let value = field(metrics).load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}{{table=\"{}\"}} {value}", escape(table));
        }
    }
    let name = "tengen_stage_seconds_total";
    let _ = writeln!(out, "# HELP {name} Time spent per pipeline stage.\n# TYPE {name} counter");
    for (table, metrics) in tables.clone() {
        for stage in Stage::ALL {
            let (seconds, _) = metrics.stages.total(stage);
            let _ = writeln!(out, "{name}{{table=\"{}\",stage=\"{}\"}} {seconds}", escape(table), stage.name());
        }
    }
    let name = "tengen_pipeline_latency_seconds";
    let _ = writeln!(out, "# HELP {name} Frame arrival to end of processing.\n# TYPE {name} histogram");
    for (table, metrics) in tables {
        metrics.latency.render(&mut out, name, &format!("table=\"{}\"", escape(table)));
    }
    out
}

/// A hall node's part (cluster mode), labelled with the node's name.
pub fn render_cluster(out: &mut String, health: &crate::json::ClusterHealth) {
    let node = format!("node=\"{}\"", escape(&health.node));
    let connected = u8::from(health.nats == "connected");
    let owned = health.owned_tables.len();
    let gauges: [(&str, &str, String); 3] = [
        ("tengen_cluster_nats_connected", "1 while the node's NATS connection is up.", connected.to_string()),
        ("tengen_cluster_owned_tables", "Tables this node analyses (holds the lease of).", owned.to_string()),
        ("tengen_cluster_nodes", "Live nodes in the hall at the last count.", health.nodes.to_string()),
    ];
    for (name, help, value) in gauges {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{{node}}} {value}");
    }
    let kept: [(&str, &str, u64); 3] = [
        (
            "tengen_cluster_buffered_records",
            "Appends kept in memory while the hall's log is unreachable.",
            health.buffered_records,
        ),
        ("tengen_cluster_buffered_bytes", "Their size.", health.buffered_bytes),
        ("tengen_cluster_buffer_limit_bytes", "The most kept before frames are refused.", health.buffer_limit_bytes),
    ];
    for (name, help, value) in kept {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{{node}}} {value}");
    }
    let counters: [(&str, &str, u64); 8] = [
        ("tengen_cluster_nats_outages_total", "Times the NATS connection was lost.", health.nats_outages),
        (
            "tengen_cluster_records_refused_total",
            "Kept appends the hall's log refused for good.",
            health.records_refused,
        ),
        ("tengen_cluster_lease_renewals_total", "Lease renewals that succeeded.", health.lease_renewals),
        ("tengen_cluster_takeovers_total", "Tables this node took (at start or from another node).", health.takeovers),
        ("tengen_cluster_leases_lost_total", "Leases found held by another node at renewal.", health.leases_lost),
        ("tengen_cluster_log_appends_total", "Records appended to the hall's log.", health.log_appends),
        (
            "tengen_cluster_evidence_images_stored_total",
            "Evidence images put in the hall's object store.",
            health.evidence_images_stored,
        ),
        (
            "tengen_cluster_evidence_images_lost_total",
            "Evidence images that could not be put there (their events were logged without them).",
            health.evidence_images_lost,
        ),
    ];
    for (name, help, value) in counters {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name}{{{node}}} {value}");
    }
}

fn escape(label: &str) -> String {
    label.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_cumulative_in_prometheus_text() {
        let m = TableMetrics::default();
        m.record_latency(0.003);
        m.record_latency(0.3);
        m.record_latency(20.0);
        m.frames_received.fetch_add(3, Ordering::Relaxed);
        let text = render([("t1", &m)].into_iter());
        assert!(text.contains("tengen_frames_received_total{table=\"t1\"} 3"));
        assert!(text.contains("tengen_pipeline_latency_seconds_bucket{table=\"t1\",le=\"0.005\"} 1"));
        assert!(text.contains("tengen_pipeline_latency_seconds_bucket{table=\"t1\",le=\"0.5\"} 2"));
        assert!(text.contains("tengen_pipeline_latency_seconds_bucket{table=\"t1\",le=\"+Inf\"} 3"));
        assert!(text.contains("tengen_pipeline_latency_seconds_count{table=\"t1\"} 3"));
        m.stages.add(Stage::Vision, std::time::Duration::from_millis(12));
        m.stages.add(Stage::Vision, std::time::Duration::from_millis(8));
        assert_eq!(m.stages.total(Stage::Vision), (0.02, 2));
        let text = render([("t1", &m)].into_iter());
        assert!(text.contains("tengen_stage_seconds_total{table=\"t1\",stage=\"vision\"} 0.02"), "{text}");
        let p50 = m.recent_quantile(0.5).expect("some");
        assert!((p50 - 0.3).abs() < 1e-6);
    }
}
