//! Cluster mode's link to NATS (docs/cluster.md): the node's connection, the hall's log (the
//! JetStream stream `TENGEN_LOG`, one message per appended record on `tengen.log.<table>.events`
//! when it carries events and `tengen.log.<table>.quiet` when not, observations and actions in
//! the texts of `log.rs`), and the tables' leases
//! (the key-value bucket `tengen_leases`: key = table, value = the owning node; created only
//! when absent, renewed by revision, gone when the owner stops renewing for the bucket's age).
//!
//! A node mirrors the records of the tables it owns into its own SQLite, which serves the API
//! as in one process (and, when asked for their games, the records of tables running elsewhere:
//! the same import, read only); the stream is the record of truth, so another node can take a
//! table over.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, kv, object_store, stream};
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};

use crate::config::ClusterConfig;
use crate::engine::Corners;
use crate::json::{RefereeEvent, StoredEvent};
use crate::log::{is_repeat_text, InputDecoder, InputKind, LoggedInput};
use crate::model::GameSetup;
use crate::store::{GameRow, GameStart, LogBatch, Store, StoreError};

mod events;
mod evidence;
mod outbox;

pub use evidence::EvidenceUnreachable;

/// The stream holding every table's log.
pub const LOG_STREAM: &str = "TENGEN_LOG";
/// The key-value bucket of the tables' leases.
pub const LEASE_BUCKET: &str = "tengen_leases";
/// The key-value bucket where each live node keeps a key (gone a lease's lifetime after it stops).
pub const NODE_BUCKET: &str = "tengen_nodes";
/// The object store holding the hall's evidence images.
pub const EVIDENCE_BUCKET: &str = "tengen_evidence";

/// Lease renewals in flight at once (a node holds at most a few hundred tables).
const RENEWALS_AT_ONCE: usize = 256;

/// The core NATS subject a table's frames travel on to its owner (lossy: newest frame wins).
pub fn frame_subject(table: &str) -> String {
    format!("tengen.frames.{table}")
}

/// Header of a forwarded frame: when it arrived at the node the camera posted to (ms).
const FRAME_AT_MS: &str = "Tengen-At-Ms";
/// Header of a forwarded frame: its MIME type.
const FRAME_TYPE: &str = "Tengen-Type";

/// The core NATS subject on which a table's node tells the hall how the table stands.
pub fn table_subject(table: &str) -> String {
    format!("tengen.tables.{table}")
}

/// What every log subject starts with.
const LOG_PREFIX: &str = "tengen.log.";

/// The last token of the subject of a record that carries events (a node's follower and the
/// event readers read these alone).
const EVENTS_TOKEN: &str = "events";
/// The last token of the subject of a record that carries none (a reading without an event, a
/// game, its players, a calibration: most records, read only by a node taking the table).
const QUIET_TOKEN: &str = "quiet";

/// Every record of a table's log (a subject filter; `*`: every table's). The stream's records are
/// on `tengen.log.<table>.events` (those that carry events) and `tengen.log.<table>.quiet`.
pub fn log_subject(table: &str) -> String {
    format!("{LOG_PREFIX}{table}.*")
}

/// The subject a record of `table`'s log is stored on.
fn record_subject(table: &str, record: &LogRecord) -> String {
    let carries_events = matches!(record, LogRecord::Batch { events, .. } if !events.is_empty());
    format!("{LOG_PREFIX}{table}.{}", if carries_events { EVENTS_TOKEN } else { QUIET_TOKEN })
}

/// The records that carry events, of one table or (`*`) every table.
fn events_subject(table: &str) -> String {
    format!("{LOG_PREFIX}{table}.{EVENTS_TOKEN}")
}

/// The table whose log a record's subject is in (`None`: not a log subject).
fn table_of(subject: &str) -> Option<&str> {
    let (table, kind) = subject.strip_prefix(LOG_PREFIX)?.split_once('.')?;
    [EVENTS_TOKEN, QUIET_TOKEN].contains(&kind).then_some(table)
}

/// The header that makes a record's expected sequence (`Nats-Expected-Last-Subject-Sequence`)
/// the last of the table's whole log, both subjects, rather than of its own subject alone
/// (NATS 2.11).
const EXPECTED_LAST_SEQUENCE_OF: &str = "Nats-Expected-Last-Subject-Sequence-Subject";

/// The oldest NATS server that checks [`EXPECTED_LAST_SEQUENCE_OF`] (an older one ignores it,
/// and a node that lost a table could write into its log).
const OLDEST_NATS: (u64, u64) = (2, 11);

/// Why cluster mode could not start or hold a table.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The NATS server could not be reached.
    #[error("cannot reach NATS at {url}: {message}")]
    Connect {
        /// The address given.
        url: String,
        /// What the client said.
        message: String,
    },
    /// JetStream refused or failed a request (stream, bucket).
    #[error("JetStream: {0}")]
    JetStream(String),
}

/// One record of a table's log, as the stream holds it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum LogRecord {
    /// A new game at the table; its id is this record's stream sequence.
    Game { komi: f64, started_ms: i64, setup: GameSetup },
    /// The players' names of a game.
    Players { game: i64, black: Option<String>, white: Option<String> },
    /// The table's calibration (none: cleared).
    Calibration { corners: Option<Corners>, at_ms: i64 },
    /// One atomic append: the referee's input, in the texts of `log.rs`, and what it said.
    Batch {
        game: i64,
        at_ms: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        observation: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter: Option<String>,
        events: Vec<RefereeEvent>,
        /// The places in `events` of the events whose evidence images are in the hall's object
        /// store, under `evidence_key` (`cluster/evidence.rs`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        evidence: Vec<usize>,
        /// The name the images' objects start with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        evidence_key: Option<String>,
        /// The places of the events whose images were made but could not be stored, and why.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        evidence_lost: Vec<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        evidence_error: Option<String>,
    },
    /// Readings that changed nothing, several in one message (`outbox.rs`, "quiet readings"):
    /// each is what a `batch` with an observation alone would hold.
    Quiet { readings: Vec<QuietReading> },
}

/// One reading of a [`LogRecord::Quiet`] record.
#[derive(Debug, Serialize, Deserialize)]
struct QuietReading {
    game: i64,
    at_ms: i64,
    /// The observation, in the text of `log.rs`.
    observation: String,
}

/// How far the node's mirror of a table has followed the stream.
#[derive(Default)]
struct Cursor {
    /// Stream sequence of the table's last record in the mirror (0: none yet).
    last_seq: u64,
    /// Decodes the game's observations (a repeat needs the one before it).
    decoder: InputDecoder,
    /// Records waiting for the hall's log (NATS unreachable), in order (`outbox.rs`).
    outbox: std::collections::VecDeque<outbox::Pending>,
    /// Readings that changed nothing, waiting to share one record (`outbox.rs`).
    quiet: outbox::QuietReadings,
    /// Another writer wrote to the table's log: the pipeline running here fed its referee an
    /// input the log refused, so nothing more of it is logged; the table starts again from the
    /// log ([`Cluster::start_table`]).
    fenced: bool,
}

/// Counters of the node's cluster work (`/metrics`, `/healthz`).
#[derive(Debug, Default)]
pub struct ClusterMetrics {
    /// Lease renewals that succeeded.
    pub renewals: AtomicU64,
    /// Tables this node took over from another node (or from its own earlier life).
    pub takeovers: AtomicU64,
    /// Leases this node found taken by another node at renewal.
    pub leases_lost: AtomicU64,
    /// Records appended to the stream.
    pub appends: AtomicU64,
    /// Live nodes at the last count (this one included).
    pub nodes: AtomicU64,
    /// Times the NATS connection was lost.
    pub outages: AtomicU64,
    /// Records kept in memory for the hall's log, waiting for NATS.
    pub buffered_records: AtomicU64,
    /// Their size in bytes.
    pub buffered_bytes: AtomicU64,
    /// Records the hall's log refused for good (another node wrote to the table's log first),
    /// each said in the node's log.
    pub records_refused: AtomicU64,
    /// Evidence images put in the hall's object store.
    pub evidence_stored: AtomicU64,
    /// Evidence images that could not be put there (their events were logged without them).
    pub evidence_lost: AtomicU64,
}

/// A node's connection to the hall.
pub struct Cluster {
    /// This node's name.
    pub node: String,
    /// Counters.
    pub metrics: Arc<ClusterMetrics>,
    client: async_nats::Client,
    jetstream: jetstream::Context,
    log: stream::Stream,
    leases: kv::Store,
    nodes: kv::Store,
    /// The stream under `nodes` (its subject count is the live nodes).
    nodes_stream: stream::Stream,
    /// The hall's evidence images.
    evidence: object_store::ObjectStore,
    ttl: Duration,
    /// Each table's cursor, locked across an append (a table's appends are in order; tables'
    /// appends run side by side).
    cursors: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Cursor>>>>,
    held: Mutex<HashMap<String, u64>>,
    /// Appends waiting for NATS, kept in bounded memory (`outbox.rs`).
    buffer: outbox::Buffer,
}

impl Cluster {
    /// Connects to NATS and opens (creating when absent) the log stream and the lease bucket.
    pub async fn connect(config: &ClusterConfig) -> Result<Arc<Self>, ClusterError> {
        let connect_error = |message: String| ClusterError::Connect { url: config.nats.clone(), message };
        let metrics = Arc::new(ClusterMetrics::default());
        let buffer = outbox::Buffer::new(&config.node, config.buffer_bytes);
        let said = (Arc::clone(&metrics), Arc::clone(&buffer.wanted), config.node.clone());
        let client = async_nats::ConnectOptions::new()
            .name(format!("tengen-{}", config.node))
            .connection_timeout(Duration::from_secs(5))
            // A node never needs its own messages back (the hall view it tells every second,
            // of tables it runs, is ignored here): the server does not send them.
            .no_echo()
            // Back soon after a NATS server restarts: the appends kept meanwhile wait for it.
            .reconnect_delay_callback(|attempts| Duration::from_millis(250).saturating_mul(u32::try_from(attempts.min(8)).unwrap_or(8)))
            .event_callback(move |event| {
                let (metrics, flush, node) = (Arc::clone(&said.0), Arc::clone(&said.1), said.2.clone());
                async move {
                    match event {
                        async_nats::Event::Disconnected => {
                            metrics.outages.fetch_add(1, Ordering::Relaxed);
                            tracing::error!(%node, "NATS connection lost: the hall's log is unreachable; appends are kept in memory until it is back");
                        }
                        async_nats::Event::Connected => {
                            tracing::warn!(%node, "NATS connection back: sending the appends kept meanwhile");
                            flush.notify_one();
                        }
                        other => tracing::info!(%node, event = %other, "NATS"),
                    }
                }
            })
            .connect(config.nats.as_str())
            .await
            .map_err(|e| connect_error(e.to_string()))?;
        check_server_version(&client.server_info().version).map_err(connect_error)?;
        // An append not acknowledged in 2 s is kept for later: the pipeline does not wait longer.
        let jetstream = jetstream::context::ContextBuilder::new().timeout(Duration::from_secs(2)).build(client.clone());
        let js_error = |e: &dyn std::fmt::Display| ClusterError::JetStream(e.to_string());
        let log = jetstream
            .get_or_create_stream(stream::Config {
                name: LOG_STREAM.into(),
                subjects: vec![log_subject("*")],
                num_replicas: config.replicas,
                storage: stream::StorageType::File,
                // A retried append (its acknowledgement lost) is stored once.
                duplicate_window: Duration::from_secs(120),
                ..Default::default()
            })
            .await
            .map_err(|e| js_error(&e))?;
        let subjects = &log.cached_info().config.subjects;
        if subjects != &[log_subject("*")] {
            return Err(ClusterError::JetStream(format!(
                "the stream {LOG_STREAM} holds the subjects {subjects:?}, not {:?}: it was made by an older tengen, \
                 whose logs this one cannot replay",
                log_subject("*")
            )));
        }
        let ttl = Duration::from_secs_f64(config.lease_ttl_secs);
        let leases = expiring_bucket(&jetstream, LEASE_BUCKET, ttl, config.replicas).await?;
        let nodes = expiring_bucket(&jetstream, NODE_BUCKET, ttl, config.replicas).await?;
        let nodes_stream = jetstream
            .get_stream(format!("KV_{NODE_BUCKET}"))
            .await
            .map_err(|e| ClusterError::JetStream(e.to_string()))?;
        let evidence = evidence::bucket(&jetstream, config).await?;
        Ok(Arc::new(Self {
            node: config.node.clone(),
            metrics,
            client,
            jetstream,
            log,
            leases,
            nodes,
            nodes_stream,
            evidence,
            ttl,
            cursors: Mutex::new(HashMap::new()),
            held: Mutex::new(HashMap::new()),
            buffer,
        }))
    }

    /// The node's NATS client (requests to other nodes, subscriptions).
    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    /// The NATS connection's state, as `/healthz` says it.
    pub fn connection_state(&self) -> String {
        format!("{:?}", self.client.connection_state()).to_lowercase()
    }

    /// The node's part of `/healthz`: its name, NATS state, owned tables and counters.
    pub fn health(&self) -> crate::json::ClusterHealth {
        crate::json::ClusterHealth {
            node: self.node.clone(),
            nats: self.connection_state(),
            owned_tables: self.owned_tables(),
            lease_renewals: self.metrics.renewals.load(Ordering::Relaxed),
            takeovers: self.metrics.takeovers.load(Ordering::Relaxed),
            leases_lost: self.metrics.leases_lost.load(Ordering::Relaxed),
            log_appends: self.metrics.appends.load(Ordering::Relaxed),
            nodes: usize::try_from(self.metrics.nodes.load(Ordering::Relaxed)).unwrap_or(usize::MAX),
            nats_outages: self.metrics.outages.load(Ordering::Relaxed),
            buffered_records: self.metrics.buffered_records.load(Ordering::Relaxed),
            buffered_bytes: self.metrics.buffered_bytes.load(Ordering::Relaxed),
            buffer_limit_bytes: self.buffer.limit,
            records_refused: self.metrics.records_refused.load(Ordering::Relaxed),
            evidence_images_stored: self.metrics.evidence_stored.load(Ordering::Relaxed),
            evidence_images_lost: self.metrics.evidence_lost.load(Ordering::Relaxed),
        }
    }

    /// The tables this node holds, sorted.
    pub fn owned_tables(&self) -> Vec<String> {
        let mut tables: Vec<String> = self.held.lock().map(|h| h.keys().cloned().collect()).unwrap_or_default();
        tables.sort();
        tables
    }

    /// A lease's lifetime without renewal.
    pub fn lease_ttl(&self) -> Duration {
        self.ttl
    }

    /// The largest message the NATS server takes (a frame forwarded to another node).
    pub fn max_payload(&self) -> usize {
        self.client.server_info().max_payload
    }

    /// Takes a table's lease when it is free, or this node's own (left by a restart under the
    /// same name); false when another node holds it.
    pub async fn try_acquire(&self, table: &str) -> bool {
        match self.leases.create(table, self.node.clone().into()).await {
            Ok(revision) => {
                self.hold(table, revision);
                return true;
            }
            Err(err) if err.kind() == kv::CreateErrorKind::AlreadyExists => {}
            Err(err) => {
                tracing::warn!(%table, %err, "cannot take the lease");
                return false;
            }
        }
        match self.leases.entry(table).await {
            Ok(Some(entry))
                if entry.operation == kv::Operation::Put && entry.value.as_ref() == self.node.as_bytes() =>
            {
                match self.leases.update(table, self.node.clone().into(), entry.revision).await {
                    Ok(revision) => {
                        self.hold(table, revision);
                        true
                    }
                    Err(_) => false,
                }
            }
            _ => false,
        }
    }

    /// Gives a table's lease up (its pipeline has stopped here), for another node to take.
    pub async fn release(&self, table: &str) {
        let revision = self.held.lock().ok().and_then(|mut held| held.remove(table));
        if let Some(revision) = revision {
            if let Err(err) = self.leases.delete_expect_revision(table, Some(revision)).await {
                tracing::warn!(%table, %err, "cannot give the lease up; it runs out by itself");
            }
        }
    }

    /// Says this node is gone (it leaves the hall): its key is removed from the live nodes'
    /// bucket outright — a delete marker would still count as a live node until it expired, and
    /// the others would keep their share too small to take this node's tables.
    pub async fn forget_node(&self) {
        let subject = format!("$KV.{NODE_BUCKET}.{}", self.node);
        if let Err(err) = self.nodes_stream.purge().filter(subject).await {
            tracing::warn!(%err, "cannot say the node is gone; it is forgotten when its word runs out");
        }
    }

    /// Says this node is alive and returns how many nodes are (this one included).
    pub async fn heartbeat(&self) -> usize {
        if let Err(err) = self.nodes.put(&self.node, self.node.clone().into()).await {
            tracing::warn!(%err, "cannot say the node is alive");
        }
        // The bucket's keys are the live nodes (one message each, gone a lease's lifetime after
        // the node's last word): its stream's subject count, one request, where listing the
        // keys made a consumer every round (measured: most of an idle hall's NATS work).
        let nodes = match self.nodes_stream.get_info().await {
            Ok(info) => usize::try_from(info.state.subjects_count).unwrap_or(usize::MAX).max(1),
            Err(err) => {
                tracing::warn!(%err, "cannot count the live nodes");
                usize::try_from(self.metrics.nodes.load(Ordering::Relaxed)).unwrap_or(1).max(1)
            }
        };
        self.metrics.nodes.store(u64::try_from(nodes).unwrap_or(u64::MAX), Ordering::Relaxed);
        nodes
    }

    /// Tells the other nodes how a table running here stands (lossy: the next word replaces it).
    pub fn announce(&self, detail: &crate::json::TableDetail) {
        let Ok(payload) = serde_json::to_vec(detail) else { return };
        let client = self.client.clone();
        let subject = table_subject(&detail.summary.id);
        tokio::spawn(async move {
            let _ = client.publish(subject, payload.into()).await;
        });
    }

    /// Listens to what the nodes tell of their tables and keeps it with the tables running
    /// elsewhere, for this node's hall view, for as long as the node runs.
    pub async fn hear_tables(
        &self,
        tables: std::collections::BTreeMap<String, Arc<crate::table::TableHandle>>,
    ) -> Result<tokio::task::JoinHandle<()>, ClusterError> {
        let mut told =
            self.client.subscribe(table_subject("*")).await.map_err(|e| ClusterError::JetStream(e.to_string()))?;
        Ok(tokio::spawn(async move {
            while let Some(message) = told.next().await {
                let Some(table) = message.subject.as_str().strip_prefix(table_subject("").as_str()) else { continue };
                // A table running here: its own word, not read (the handle ignores it anyway).
                let Some(handle) = tables.get(table).filter(|h| !h.is_running()) else { continue };
                match serde_json::from_slice::<crate::json::TableDetail>(&message.payload) {
                    Ok(detail) => {
                        handle.told_by_its_node(detail);
                    }
                    Err(err) => tracing::warn!(%table, %err, "a node told of a table in a form not understood"),
                }
            }
        }))
    }

    /// The frames the hall sends for a table (this node holds its lease).
    pub async fn frames(&self, table: &str) -> Result<async_nats::Subscriber, ClusterError> {
        self.client.subscribe(frame_subject(table)).await.map_err(|e| ClusterError::JetStream(e.to_string()))
    }

    /// A table's cursor (made at its first use).
    fn cursor(&self, table: &str) -> Arc<tokio::sync::Mutex<Cursor>> {
        match self.cursors.lock() {
            Ok(mut cursors) => Arc::clone(cursors.entry(table.to_owned()).or_default()),
            Err(poisoned) => Arc::clone(poisoned.into_inner().entry(table.to_owned()).or_default()),
        }
    }

    fn hold(&self, table: &str, revision: u64) {
        if let Ok(mut held) = self.held.lock() {
            if held.insert(table.to_owned(), revision).is_none() {
                self.metrics.takeovers.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Renews every held lease once; returns the tables whose lease another node now holds.
    pub async fn renew_leases(&self) -> Vec<String> {
        let held: Vec<(String, u64)> =
            self.held.lock().map(|h| h.iter().map(|(t, r)| (t.clone(), *r)).collect()).unwrap_or_default();
        // All at once, not one after another: the updates and their answers travel together
        // (a few socket writes and reads a round, not two per table) and the round takes one
        // round trip however many tables the node holds.
        let renewed: Vec<(String, Result<u64, kv::UpdateError>)> = futures_util::stream::iter(held)
            .map(|(table, revision)| async move {
                let renewed = self.leases.update(&table, self.node.clone().into(), revision).await;
                (table, renewed)
            })
            .buffer_unordered(RENEWALS_AT_ONCE)
            .collect()
            .await;
        let mut lost = Vec::new();
        for (table, renewed) in renewed {
            match renewed {
                Ok(revision) => {
                    self.metrics.renewals.fetch_add(1, Ordering::Relaxed);
                    // Unless the table was given up meanwhile.
                    if let Ok(mut held) = self.held.lock() {
                        if let Some(held) = held.get_mut(&table) {
                            *held = revision;
                        }
                    }
                }
                Err(err) if err.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                    if let Some(revision) = self.own_newer_revision(&table).await {
                        // A renewal sent while NATS was away and stored when it came back: still
                        // this node's lease, at a later revision.
                        if let Ok(mut held) = self.held.lock() {
                            held.insert(table, revision);
                        }
                        continue;
                    }
                    tracing::error!(%table, node = %self.node, "lease lost: another node holds the table");
                    self.metrics.leases_lost.fetch_add(1, Ordering::Relaxed);
                    if let Ok(mut held) = self.held.lock() {
                        held.remove(&table);
                    }
                    lost.push(table);
                }
                // NATS unreachable for a moment: try again at the next round (the lease lives
                // for the bucket's age).
                Err(err) => tracing::warn!(%table, %err, "lease renewal failed"),
            }
        }
        lost
    }

    /// The revision of `table`'s lease when it is this node's (written by this node later than
    /// the revision it holds).
    async fn own_newer_revision(&self, table: &str) -> Option<u64> {
        match self.leases.entry(table).await {
            Ok(Some(entry))
                if entry.operation == kv::Operation::Put && entry.value.as_ref() == self.node.as_bytes() =>
            {
                Some(entry.revision)
            }
            _ => None,
        }
    }

    /// Renews the held leases every third of their lifetime, for as long as the node runs.
    pub fn spawn_renewals(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let cluster = Arc::clone(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(cluster.ttl / 3);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                cluster.renew_leases().await;
            }
        })
    }

    /// Starts a game: its record goes to the stream, and its id is the record's sequence.
    pub(crate) async fn create_game(&self, store: &Store, start: GameStart) -> Result<GameRow, StoreError> {
        let GameStart { table, komi, setup, started_ms } = start;
        let cursor = self.cursor(&table);
        let mut cursor = cursor.lock().await;
        let record = LogRecord::Game { komi, started_ms, setup: setup.clone() };
        let seq = self.append(store, &table, &mut cursor, &record).await?;
        cursor.decoder = InputDecoder::default();
        let game = GameRow { id: game_id(seq)?, table, komi, started_ms, black: None, white: None, setup };
        store.import_game(game.clone()).await?;
        Ok(game)
    }

    /// Records a game's players.
    pub(crate) async fn set_players(
        &self,
        store: &Store,
        table: &str,
        game: i64,
        black: Option<String>,
        white: Option<String>,
    ) -> Result<(), StoreError> {
        let cursor = self.cursor(table);
        let mut cursor = cursor.lock().await;
        let record = LogRecord::Players { game, black: black.clone(), white: white.clone() };
        self.append(store, table, &mut cursor, &record).await?;
        store.set_players(game, black, white).await
    }

    /// Records the table's calibration.
    pub(crate) async fn set_calibration(
        &self,
        store: &Store,
        table: &str,
        corners: Option<Corners>,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        let cursor = self.cursor(table);
        let mut cursor = cursor.lock().await;
        self.append(store, table, &mut cursor, &LogRecord::Calibration { corners, at_ms }).await?;
        store.set_calibration(table, corners, at_ms).await
    }

    /// Before a table's pipeline starts here: [`Cluster::import_table`], and the table's log
    /// open to this node's appends again (after a refusal, the new pipeline's referee is
    /// rebuilt from the log alone).
    pub async fn start_table(&self, store: &Store, table: &str) -> Result<usize, StoreError> {
        let read = self.import_table(store, table).await?;
        self.cursor(table).lock().await.fenced = false;
        Ok(read)
    }

    /// Brings the node's mirror of a table up to the stream: every record after the last one
    /// mirrored, in order. Returns how many were read.
    pub async fn import_table(&self, store: &Store, table: &str) -> Result<usize, StoreError> {
        let cursor = self.cursor(table);
        let mut cursor = cursor.lock().await;
        self.send_quiet(store, table, &mut cursor).await?;
        if !cursor.outbox.is_empty() {
            // A pipeline started now would miss them: the table starts when they are logged.
            return Err(StoreError::LogUnreachable(format!(
                "table {table}: {} records kept while NATS was away are not logged yet",
                cursor.outbox.len()
            )));
        }
        self.import_locked(store, table, &mut cursor).await
    }

    /// The table whose game `game` is, read from the hall's log (a game's id is the sequence of
    /// its `game` record); `None` when the log holds no such game.
    pub async fn table_of_game(&self, game: i64) -> Result<Option<String>, StoreError> {
        let Some(seq) = u64::try_from(game).ok().filter(|seq| *seq > 0) else { return Ok(None) };
        let message = match self.log.get_raw_message(seq).await {
            Ok(message) => message,
            Err(err) if err.kind() == stream::RawMessageErrorKind::NoMessageFound => return Ok(None),
            Err(err) => return Err(StoreError::Cluster(err.to_string())),
        };
        let Some(table) = table_of(message.subject.as_str()) else { return Ok(None) };
        match serde_json::from_slice::<LogRecord>(&message.payload) {
            Ok(LogRecord::Game { .. }) => Ok(Some(table.to_owned())),
            Ok(_) => Ok(None),
            Err(err) => Err(StoreError::Corrupt { seq: game, message: err.to_string() }),
        }
    }

    /// [`Cluster::import_table`] with the table's cursor in hand.
    async fn import_locked(&self, store: &Store, table: &str, cursor: &mut Cursor) -> Result<usize, StoreError> {
        let subject = log_subject(table);
        let last = match self.log.get_last_raw_message_by_subject(&subject).await {
            Ok(message) => message.sequence,
            Err(err) if err.kind() == stream::LastRawMessageErrorKind::NoMessageFound => return Ok(0),
            Err(err) => return Err(StoreError::Cluster(err.to_string())),
        };
        if cursor.last_seq >= last {
            return Ok(0);
        }
        let consumer = self
            .log
            .create_consumer(jetstream::consumer::pull::OrderedConfig {
                filter_subject: subject,
                deliver_policy: jetstream::consumer::DeliverPolicy::ByStartSequence {
                    start_sequence: cursor.last_seq + 1,
                },
                ..Default::default()
            })
            .await
            .map_err(|e| StoreError::Cluster(e.to_string()))?;
        let mut messages = consumer.messages().await.map_err(|e| StoreError::Cluster(e.to_string()))?;
        let mut read = 0;
        while cursor.last_seq < last {
            let message = tokio::time::timeout(Duration::from_secs(10), messages.next())
                .await
                .map_err(|_| StoreError::Cluster(format!("table {table}: the log stopped before sequence {last}")))?
                .ok_or_else(|| StoreError::Cluster(format!("table {table}: the log ended before sequence {last}")))?
                .map_err(|e| StoreError::Cluster(e.to_string()))?;
            let seq = message.info().map_err(|e| StoreError::Cluster(e.to_string()))?.stream_sequence;
            let record: LogRecord = serde_json::from_slice(&message.payload).map_err(|e| StoreError::Corrupt {
                seq: i64::try_from(seq).unwrap_or(i64::MAX),
                message: e.to_string(),
            })?;
            mirror(store, table, cursor, seq, record).await?;
            cursor.last_seq = seq;
            read += 1;
        }
        Ok(read)
    }
}

impl crate::table::FrameForwarder for Cluster {
    fn forward(&self, table: &str, frame: &crate::table::Frame) -> Result<(), String> {
        let limit = self.max_payload();
        // 0: the server's limit is not known (between connections); the publish says.
        if limit > 0 && frame.bytes.len() > limit {
            return Err(format!(
                "frame of {} bytes is larger than the hall's NATS payload limit ({limit} bytes): raise max_payload in the NATS server's configuration",
                frame.bytes.len()
            ));
        }
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(FRAME_AT_MS, frame.at_ms.to_string().as_str());
        headers.insert(FRAME_TYPE, frame.format.mime());
        let client = self.client.clone();
        let subject = frame_subject(table);
        let payload: Vec<u8> = frame.bytes.as_ref().clone();
        // Lossy by design, like the frame slot: a frame nobody takes (a table changing hands) is
        // gone, and the camera's next frame shows the board again.
        tokio::spawn(async move {
            let _ = client.publish_with_headers(subject, headers, payload.into()).await;
        });
        Ok(())
    }
}

/// A forwarded frame as the owner's pipeline takes it; `None` for a message that is not one.
pub fn frame_of(message: &async_nats::Message) -> Option<crate::table::Frame> {
    let headers = message.headers.as_ref()?;
    let at_ms = headers.get(FRAME_AT_MS)?.as_str().parse().ok()?;
    let format = match headers.get(FRAME_TYPE)?.as_str() {
        "image/jpeg" => crate::imaging::FrameFormat::Jpeg,
        "image/png" => crate::imaging::FrameFormat::Png,
        _ => return None,
    };
    Some(crate::table::Frame { bytes: Arc::new(message.payload.to_vec()), format, received: Instant::now(), at_ms })
}

/// Refuses a NATS server older than [`OLDEST_NATS`] (`version` as its INFO says it).
fn check_server_version(version: &str) -> Result<(), String> {
    let mut numbers = version.trim_start_matches('v').split(['.', '-']).map(|n| n.parse::<u64>().ok());
    let (major, minor) = (numbers.next().flatten(), numbers.next().flatten());
    match major.zip(minor) {
        Some(found) if found >= OLDEST_NATS => Ok(()),
        _ => Err(format!(
            "the NATS server is version {version}; a hall needs {}.{} or later (the log's sequence check)",
            OLDEST_NATS.0, OLDEST_NATS.1
        )),
    }
}

/// Opens a key-value bucket whose keys live `ttl` after their last write, creating it when absent.
async fn expiring_bucket(
    jetstream: &jetstream::Context,
    name: &str,
    ttl: Duration,
    replicas: usize,
) -> Result<kv::Store, ClusterError> {
    let config =
        kv::Config { bucket: name.into(), history: 1, max_age: ttl, num_replicas: replicas, ..Default::default() };
    open_or_create(jetstream.get_key_value(name), || jetstream.create_key_value(config))
        .await
        .map_err(|e| ClusterError::JetStream(e.to_string()))
}

/// A bucket any node of the hall may have created already: opened when it is there, else
/// created (a failed open is not an error of its own: the creation says what is wrong).
pub(super) async fn open_or_create<Bucket, OpenError, CreateError, Created>(
    open: impl std::future::Future<Output = Result<Bucket, OpenError>>,
    create: impl FnOnce() -> Created,
) -> Result<Bucket, CreateError>
where
    Created: std::future::Future<Output = Result<Bucket, CreateError>>,
{
    match open.await {
        Ok(bucket) => Ok(bucket),
        Err(_) => create().await,
    }
}

/// Writes one record read from the stream into the node's SQLite.
async fn mirror(
    store: &Store,
    table: &str,
    cursor: &mut Cursor,
    seq: u64,
    record: LogRecord,
) -> Result<(), StoreError> {
    let corrupt = |message: String| StoreError::Corrupt { seq: i64::try_from(seq).unwrap_or(i64::MAX), message };
    match record {
        LogRecord::Game { komi, started_ms, setup } => {
            cursor.decoder = InputDecoder::default();
            let game = GameRow {
                id: game_id(seq)?,
                table: table.to_owned(),
                komi,
                started_ms,
                black: None,
                white: None,
                setup,
            };
            store.import_game(game).await
        }
        LogRecord::Players { game, black, white } => store.set_players(game, black, white).await,
        LogRecord::Calibration { corners, at_ms } => store.set_calibration(table, corners, at_ms).await,
        LogRecord::Batch { game, at_ms, observation, arbiter, events, .. } => {
            let observation_repeats = observation.as_deref().is_some_and(is_repeat_text);
            let observation = match observation {
                Some(text) => match cursor.decoder.decode(InputKind::Observation, &text).map_err(corrupt)? {
                    LoggedInput::Observation(o) => Some(o),
                    LoggedInput::Action(_) => None,
                },
                None => None,
            };
            let action = match arbiter {
                Some(text) => match cursor.decoder.decode(InputKind::Arbiter, &text).map_err(corrupt)? {
                    LoggedInput::Action(a) => Some(a),
                    LoggedInput::Observation(_) => None,
                },
                None => None,
            };
            let events = events.into_iter().map(|e| (e, None)).collect();
            let batch =
                LogBatch { table: table.to_owned(), game, at_ms, observation, observation_repeats, action, events };
            store.append_numbered(batch, first_row(seq)?).await.map(drop)
        }
        LogRecord::Quiet { readings } => {
            let mut batches = Vec::with_capacity(readings.len());
            for QuietReading { game, at_ms, observation } in readings {
                let observation_repeats = is_repeat_text(&observation);
                let observation = match cursor.decoder.decode(InputKind::Observation, &observation).map_err(corrupt)? {
                    LoggedInput::Observation(o) => Some(o),
                    LoggedInput::Action(_) => None,
                };
                batches.push(LogBatch {
                    table: table.to_owned(),
                    game,
                    at_ms,
                    observation,
                    observation_repeats,
                    action: None,
                    events: Vec::new(),
                });
            }
            mirror_batches(store, seq, batches).await.map(drop)
        }
    }
}

/// Writes the batches of the record at stream sequence `seq` into the node's SQLite, each on
/// the rows after the one before (a record's rows are numbered from [`first_row`]); returns
/// the stored events (only a `batch` record has any).
async fn mirror_batches(store: &Store, seq: u64, batches: Vec<LogBatch>) -> Result<Vec<StoredEvent>, StoreError> {
    let mut row = first_row(seq)?;
    let mut stored = Vec::new();
    for batch in batches {
        let rows = batch.rows();
        stored.extend(store.append_numbered(batch, row).await?);
        row += rows;
    }
    Ok(stored)
}

/// Rows a record may take in the mirror's log: an event's id is its record's stream sequence
/// times this plus its place in the record, the same on every node (the hall-wide event id).
pub const ROWS_PER_RECORD: i64 = 1024;

/// The number of the first mirrored row of the record at stream sequence `seq`.
fn first_row(seq: u64) -> Result<i64, StoreError> {
    game_id(seq)?
        .checked_mul(ROWS_PER_RECORD)
        .ok_or_else(|| StoreError::Cluster(format!("stream sequence {seq} out of range")))
}

/// A game's id: the sequence of its record in the stream.
fn game_id(seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq).map_err(|_| StoreError::Cluster(format!("stream sequence {seq} out of range")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_carrying_events_is_on_the_events_subject_and_every_other_on_the_quiet_one() {
        let batch = |events: Vec<RefereeEvent>| LogRecord::Batch {
            game: 1,
            at_ms: 0,
            observation: Some("=".into()),
            arbiter: None,
            events,
            evidence: Vec::new(),
            evidence_key: None,
            evidence_lost: Vec::new(),
            evidence_error: None,
        };
        let event = RefereeEvent::service(
            crate::json::ServiceKind::CameraLost,
            crate::json::Severity::Notice,
            "lost".into(),
            None,
        );
        assert_eq!(record_subject("t1", &batch(vec![event])), "tengen.log.t1.events");
        assert_eq!(record_subject("t1", &batch(Vec::new())), "tengen.log.t1.quiet");
        let calibration = LogRecord::Calibration { corners: None, at_ms: 0 };
        assert_eq!(record_subject("t1", &calibration), "tengen.log.t1.quiet");
        // One filter holds both: a table's whole log, as a take-over reads it and as the
        // sequence check of an append counts it.
        assert_eq!(log_subject("t1"), "tengen.log.t1.*");
        assert_eq!(events_subject("*"), "tengen.log.*.events");
    }

    #[test]
    fn a_nats_server_older_than_2_11_is_refused_by_name() {
        assert!(check_server_version("2.11.0").is_ok());
        assert!(check_server_version("2.15.1").is_ok());
        assert!(check_server_version("3.0.0-beta.1").is_ok());
        let old = check_server_version("2.9.25").unwrap_err();
        assert!(old.contains("2.9.25") && old.contains("2.11"), "{old}");
        assert!(check_server_version("2.10.22").is_err());
        assert!(check_server_version("unknown").is_err());
    }
}
