//! Appends to the hall's log (docs/cluster.md, "NATS away"): sent at once while NATS answers,
//! else kept in memory in each table's order and sent when it is back, each with the message id
//! it was first sent with (a record stored whose acknowledgement was lost is stored once: the
//! stream's duplicate window) and the sequence it follows (a node that lost the table cannot
//! write into it). The memory is bounded: when it is full, frames for the tables waiting are
//! refused (`503 log_buffer_full`) rather than a logged event dropped. A wrong-sequence refusal
//! (another node wrote to the table's log) re-reads the stream into the mirror and gives the
//! table up here, for the hall to take it again from the log when its lease is still this
//! node's, instead of blocking it.
//!
//! Quiet readings: most of a table's log is readings that changed nothing (no event, no
//! arbiter). Each would cost the hall's log a message, an acknowledgement and a stored record
//! a frame; they wait instead, up to [`QUIET_HOLD`] or [`QUIET_MOST`] of them, and go as one
//! `quiet` record, always before the table's next other record (the log's order is the
//! referee's). A node that dies loses the readings waiting: frames that showed nothing new,
//! fewer than its tables' move loses anyway (a lease's lifetime).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, context::PublishErrorKind};
use tokio::sync::Notify;

use super::{
    log_subject, mirror_batches, record_subject, Cluster, Cursor, LogRecord, QuietReading, EXPECTED_LAST_SEQUENCE_OF,
    ROWS_PER_RECORD,
};
use crate::json::StoredEvent;
use crate::log::{encode_action, encode_observation, InputKind};
use crate::store::{LogBatch, Store, StoreError};

/// The longest a quiet reading waits for others to share its record. A quiet board at 2 fps
/// then costs the log one message in four frames. Chosen a priori: shorter than a lease's
/// default lifetime (3 s), so a node's death loses fewer frames to the wait than to its tables'
/// move; never longer than the lease's lifetime itself.
const QUIET_HOLD: Duration = Duration::from_secs(2);

/// The most quiet readings in one record (a camera faster than the usual 2 fps; a whole
/// reading's text is about 1 KiB, a repeat 100 bytes, far below a record's payload limit).
const QUIET_MOST: usize = 16;

/// A table's quiet readings waiting to share one record.
#[derive(Default)]
pub(super) struct QuietReadings {
    /// Each batch (an observation alone) and its observation's text in the log.
    waiting: Vec<(LogBatch, String)>,
    /// When the first of them came.
    since: Option<Instant>,
}

/// Whether a batch is a quiet reading: an observation that produced no event, no arbiter's
/// action with it.
fn is_quiet(batch: &LogBatch) -> bool {
    batch.observation.is_some() && batch.action.is_none() && batch.events.is_empty()
}

/// A record waiting for the hall's log.
pub(super) struct Pending {
    /// The record's subject (whether it carries events).
    subject: String,
    payload: Vec<u8>,
    message_id: String,
    /// What the mirror gets once the stream has stored it (a quiet record's readings, or one
    /// batch).
    batches: Vec<LogBatch>,
}

impl Pending {
    /// The memory it holds: the record and the evidence images its mirror row keeps (the node
    /// serves them from its SQLite once the record is logged).
    fn bytes(&self) -> u64 {
        let images: usize = self
            .batches
            .iter()
            .flat_map(|batch| &batch.events)
            .filter_map(|(_, evidence)| evidence.as_ref())
            .map(|e| e.before.as_ref().map_or(0, Vec::len) + e.after.as_ref().map_or(0, Vec::len))
            .sum();
        (self.payload.len() + images) as u64
    }
}

/// The node's appends waiting for NATS.
pub(super) struct Buffer {
    /// The most bytes kept before frames are refused.
    pub(super) limit: u64,
    /// Wakes the sender (NATS is back, or a record was kept).
    pub(super) wanted: Arc<Notify>,
    /// Tables with records waiting, and how many.
    waiting: Mutex<HashMap<String, usize>>,
    /// Random for each life of the process: message ids never repeat across restarts.
    life: String,
    next_id: AtomicU64,
}

impl Buffer {
    pub(super) fn new(node: &str, limit: u64) -> Self {
        Self {
            limit,
            wanted: Arc::new(Notify::new()),
            waiting: Mutex::new(HashMap::new()),
            life: format!("{node}-{:016x}", rand::random::<u64>()),
            next_id: AtomicU64::new(1),
        }
    }

    /// A new record's message id, kept across its retries.
    fn message_id(&self) -> String {
        format!("{}-{}", self.life, self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    fn waiting(&self, table: &str) -> usize {
        self.waiting.lock().map(|w| w.get(table).copied().unwrap_or(0)).unwrap_or(0)
    }

    fn tables_waiting(&self) -> Vec<String> {
        self.waiting.lock().map(|w| w.keys().cloned().collect()).unwrap_or_default()
    }

    fn count(&self, table: &str, added: bool) {
        if let Ok(mut waiting) = self.waiting.lock() {
            let n = waiting.entry(table.to_owned()).or_default();
            *n = if added { *n + 1 } else { n.saturating_sub(1) };
            if *n == 0 {
                waiting.remove(table);
            }
        }
    }
}

/// What the hall's log said to one append.
enum Sent {
    /// Stored at this sequence (or found stored already: the same message id).
    Stored(u64),
    /// Another node wrote to the table's log after the record this one follows.
    WrongSequence(String),
    /// Refused for good (too large, …).
    Refused(String),
    /// No answer (NATS away, JetStream not ready): try again later.
    Unreachable(String),
}

impl Cluster {
    pub(super) fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    /// Sends one record of `table`'s log on `subject`, following the record at `after` (the
    /// last of the table's whole log, both its subjects).
    async fn send(&self, table: &str, subject: &str, after: u64, message_id: &str, payload: Vec<u8>) -> Sent {
        let message = jetstream::message::PublishMessage::build()
            .payload(payload.into())
            .expected_last_subject_sequence(after)
            .header(EXPECTED_LAST_SEQUENCE_OF, log_subject(table).as_str())
            .message_id(message_id);
        let acked = match self.jetstream.send_publish(subject.to_owned(), message).await {
            Ok(ack) => ack.await,
            Err(err) => return Sent::Unreachable(err.to_string()),
        };
        match acked {
            Ok(ack) => Sent::Stored(ack.sequence),
            Err(err) => match err.kind() {
                PublishErrorKind::WrongLastSequence => {
                    Sent::WrongSequence(format!("table {table}: another node wrote to the table's log ({err})"))
                }
                PublishErrorKind::MaxPayloadExceeded | PublishErrorKind::WrongLastMessageId => {
                    Sent::Refused(format!("table {table}: {err}"))
                }
                _ => Sent::Unreachable(err.to_string()),
            },
        }
    }

    /// Refuses an append of the pipeline that was running when another writer wrote to the
    /// table's log (its referee took an input the log refused).
    fn fenced(table: &str, cursor: &Cursor) -> Result<(), StoreError> {
        match cursor.fenced {
            false => Ok(()),
            true => Err(StoreError::Cluster(format!(
                "table {table}: another node wrote to the table's log; this pipeline's appends are refused \
                 and the table starts again from the log"
            ))),
        }
    }

    fn unreachable(&self, table: &str, why: &str) -> StoreError {
        StoreError::LogUnreachable(format!(
            "table {table}: the hall's log (NATS) cannot take this now ({why}); try again when it is back"
        ))
    }

    /// Appends a record that is not a batch (a game, players, a calibration: an arbiter's doing,
    /// answered at once): sent now or refused, never kept.
    pub(super) async fn append(
        &self,
        store: &Store,
        table: &str,
        cursor: &mut Cursor,
        record: &LogRecord,
    ) -> Result<u64, StoreError> {
        Self::fenced(table, cursor)?;
        self.send_quiet(store, table, cursor).await?;
        if !cursor.outbox.is_empty() {
            return Err(self.unreachable(table, &format!("{} records wait to be logged first", cursor.outbox.len())));
        }
        let payload = serde_json::to_vec(record).map_err(|e| StoreError::Cluster(e.to_string()))?;
        let subject = record_subject(table, record);
        match self.send(table, &subject, cursor.last_seq, &self.buffer.message_id(), payload).await {
            Sent::Stored(seq) => {
                cursor.last_seq = seq;
                self.metrics.appends.fetch_add(1, Ordering::Relaxed);
                Ok(seq)
            }
            Sent::WrongSequence(why) => {
                self.lost_to_another(store, table, cursor, &why).await;
                Err(StoreError::Cluster(why))
            }
            Sent::Refused(why) => Err(StoreError::Cluster(why)),
            Sent::Unreachable(why) => Err(self.unreachable(table, &why)),
        }
    }

    /// Appends a batch: to the stream and then the mirror (whose ids the events get) while NATS
    /// answers; else kept, in order, for the sender (no events returned yet: they are stored,
    /// mirrored and said on the bus when the stream has them).
    pub(crate) async fn append_batch(&self, store: &Store, batch: LogBatch) -> Result<Vec<StoredEvent>, StoreError> {
        if batch.events.len() + 2 > usize::try_from(ROWS_PER_RECORD).unwrap_or(usize::MAX) {
            return Err(StoreError::Cluster(format!(
                "{} events in one append: more than a record holds",
                batch.events.len()
            )));
        }
        let table = batch.table.clone();
        if is_quiet(&batch) {
            return self.hold_quiet(store, batch).await.map(|()| Vec::new());
        }
        let message_id = self.buffer.message_id();
        // The images go to the hall's object store first (bounded in time), named after the
        // record's message id: the record then says which are there, and why any are not.
        let images = self.store_evidence(&table, &message_id, &batch.events).await;
        let cursor = self.cursor(&table);
        let mut cursor = cursor.lock().await;
        Self::fenced(&table, &cursor)?;
        // The quiet readings before it go first: the log keeps the referee's order.
        self.send_quiet(store, &table, &mut cursor).await?;
        let observation = batch.observation.as_ref().map(|o| encode_observation(o, batch.observation_repeats));
        let record = LogRecord::Batch {
            game: batch.game,
            at_ms: batch.at_ms,
            observation: observation.clone(),
            arbiter: batch.action.as_ref().map(encode_action),
            events: batch.events.iter().map(|(e, _)| e.clone()).collect(),
            evidence_key: (!images.stored.is_empty()).then(|| message_id.clone()),
            evidence: images.stored,
            evidence_lost: images.lost,
            evidence_error: images.error,
        };
        let payload = serde_json::to_vec(&record).map_err(|e| StoreError::Cluster(e.to_string()))?;
        let subject = record_subject(&table, &record);
        if let Some(text) = &observation {
            // Keeps the decoder where a later import (after losing and regaining the table)
            // continues: a repeat there repeats this observation.
            let _ = cursor.decoder.decode(InputKind::Observation, text);
        }
        self.send_or_keep(store, &table, &mut cursor, Pending { subject, payload, message_id, batches: vec![batch] })
            .await
    }

    /// Sends a record now while NATS answers and nothing of the table waits, and mirrors it;
    /// else keeps it, in order, for the sender (no events returned yet: they are stored,
    /// mirrored and said on the bus when the stream has them).
    async fn send_or_keep(
        &self,
        store: &Store,
        table: &str,
        cursor: &mut Cursor,
        pending: Pending,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        if cursor.outbox.is_empty() && self.connected() {
            let Pending { subject, payload, message_id, .. } = &pending;
            match self.send(table, subject, cursor.last_seq, message_id, payload.clone()).await {
                Sent::Stored(seq) => {
                    cursor.last_seq = seq;
                    self.metrics.appends.fetch_add(1, Ordering::Relaxed);
                    return mirror_batches(store, seq, pending.batches).await;
                }
                Sent::WrongSequence(why) => {
                    self.lost_to_another(store, table, cursor, &why).await;
                    return Err(StoreError::Cluster(why));
                }
                Sent::Refused(why) => return Err(StoreError::Cluster(why)),
                // Kept, with the same message id: if the stream did store it, the retry is
                // acknowledged as that record.
                Sent::Unreachable(why) => tracing::warn!(%table, %why, "append not acknowledged: kept for later"),
            }
        }
        self.keep(table, cursor, pending);
        Ok(Vec::new())
    }

    /// Keeps a quiet reading with the table's others; sends them together once the first has
    /// waited [`QUIET_HOLD`] (or the lease's lifetime, when shorter) or [`QUIET_MOST`] wait.
    async fn hold_quiet(&self, store: &Store, batch: LogBatch) -> Result<(), StoreError> {
        let table = batch.table.clone();
        let cursor = self.cursor(&table);
        let mut cursor = cursor.lock().await;
        Self::fenced(&table, &cursor)?;
        let Some(observation) = &batch.observation else { return Ok(()) };
        let text = encode_observation(observation, batch.observation_repeats);
        // As for any logged observation: the decoder follows what the log will hold.
        let _ = cursor.decoder.decode(InputKind::Observation, &text);
        cursor.quiet.waiting.push((batch, text));
        let since = *cursor.quiet.since.get_or_insert_with(Instant::now);
        if cursor.quiet.waiting.len() >= QUIET_MOST || since.elapsed() >= self.quiet_hold() {
            self.send_quiet(store, &table, &mut cursor).await?;
        }
        Ok(())
    }

    fn quiet_hold(&self) -> Duration {
        QUIET_HOLD.min(self.lease_ttl())
    }

    /// Sends the table's waiting quiet readings as one record (kept, like any record, while
    /// NATS is away).
    pub(super) async fn send_quiet(&self, store: &Store, table: &str, cursor: &mut Cursor) -> Result<(), StoreError> {
        let waiting = std::mem::take(&mut cursor.quiet.waiting);
        cursor.quiet.since = None;
        if waiting.is_empty() {
            return Ok(());
        }
        let readings = waiting
            .iter()
            .map(|(batch, text)| QuietReading { game: batch.game, at_ms: batch.at_ms, observation: text.clone() })
            .collect();
        let record = LogRecord::Quiet { readings };
        let payload = serde_json::to_vec(&record).map_err(|e| StoreError::Cluster(e.to_string()))?;
        let pending = Pending {
            subject: record_subject(table, &record),
            payload,
            message_id: self.buffer.message_id(),
            batches: waiting.into_iter().map(|(batch, _)| batch).collect(),
        };
        self.send_or_keep(store, table, cursor, pending).await.map(drop)
    }

    /// Sends every table's quiet readings that have waited long enough (the sender's round).
    async fn send_quiet_due(&self, store: &Store) {
        let cursors: Vec<(String, Arc<tokio::sync::Mutex<Cursor>>)> = match self.cursors.lock() {
            Ok(cursors) => cursors.iter().map(|(table, cursor)| (table.clone(), Arc::clone(cursor))).collect(),
            Err(_) => return,
        };
        for (table, cursor) in cursors {
            // A table appending now sends its own.
            let Ok(mut cursor) = cursor.try_lock() else { continue };
            if cursor.quiet.since.is_some_and(|since| since.elapsed() >= self.quiet_hold()) {
                if let Err(err) = self.send_quiet(store, &table, &mut cursor).await {
                    tracing::warn!(%table, %err, "quiet readings not logged");
                }
            }
        }
    }

    /// Sends a table's waiting quiet readings now (its pipeline stopped here).
    pub async fn send_quiet_of(&self, store: &Store, table: &str) {
        let cursor = self.cursor(table);
        let mut cursor = cursor.lock().await;
        if let Err(err) = self.send_quiet(store, table, &mut cursor).await {
            tracing::warn!(%table, %err, "quiet readings not logged");
        }
    }

    fn keep(&self, table: &str, cursor: &mut Cursor, pending: Pending) {
        self.metrics.buffered_records.fetch_add(1, Ordering::Relaxed);
        self.metrics.buffered_bytes.fetch_add(pending.bytes(), Ordering::Relaxed);
        self.buffer.count(table, true);
        cursor.outbox.push_back(pending);
        self.buffer.wanted.notify_one();
    }

    fn kept_no_more(&self, table: &str, pending: &Pending) {
        self.metrics.buffered_records.fetch_sub(1, Ordering::Relaxed);
        self.metrics.buffered_bytes.fetch_sub(pending.bytes(), Ordering::Relaxed);
        self.buffer.count(table, false);
    }

    /// Whether an arbiter's command can be logged at `table` now (it is answered at once, so it
    /// is never kept: refused before it changes anything).
    pub(crate) fn log_writable(&self, table: &str) -> Result<(), StoreError> {
        if !self.connected() {
            return Err(self.unreachable(table, &format!("NATS connection {}", self.connection_state())));
        }
        match self.buffer.waiting(table) {
            0 => Ok(()),
            n => Err(self.unreachable(table, &format!("{n} records wait to be logged first"))),
        }
    }

    /// Why frames for `table` are refused now, if they are: the memory kept for the hall's log
    /// is full and the table has records waiting in it.
    pub fn frames_refused(&self, table: &str) -> Option<String> {
        let kept = self.metrics.buffered_bytes.load(Ordering::Relaxed);
        (kept >= self.buffer.limit && self.buffer.waiting(table) > 0).then(|| {
            format!(
                "the hall's log (NATS) is unreachable and this node's memory for it is full ({kept} bytes kept, \
                 buffer_bytes {}): frames for table {table} are refused until NATS is back",
                self.buffer.limit
            )
        })
    }

    /// Sends the kept records, in each table's order, whenever NATS answers, for as long as the
    /// node runs.
    pub fn spawn_sender(self: &Arc<Self>, store: Store) -> tokio::task::JoinHandle<()> {
        let cluster = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                let _ = tokio::time::timeout(Duration::from_millis(250), cluster.buffer.wanted.notified()).await;
                cluster.send_quiet_due(&store).await;
                if !cluster.connected() {
                    continue;
                }
                for table in cluster.buffer.tables_waiting() {
                    cluster.send_kept(&store, &table).await;
                }
            }
        })
    }

    async fn send_kept(&self, store: &Store, table: &str) {
        let cursor = self.cursor(table);
        let mut cursor = cursor.lock().await;
        let mut sent = 0;
        while let Some(front) = cursor.outbox.front() {
            let (subject, message_id, payload) =
                (front.subject.clone(), front.message_id.clone(), front.payload.clone());
            match self.send(table, &subject, cursor.last_seq, &message_id, payload).await {
                Sent::Stored(seq) => {
                    let Some(pending) = cursor.outbox.pop_front() else { break };
                    self.kept_no_more(table, &pending);
                    cursor.last_seq = seq;
                    self.metrics.appends.fetch_add(1, Ordering::Relaxed);
                    sent += 1;
                    if let Err(err) = mirror_batches(store, seq, pending.batches).await {
                        tracing::error!(%table, seq, %err, "a kept record is in the hall's log but not in this node's mirror");
                    }
                }
                Sent::Unreachable(why) => {
                    tracing::debug!(%table, %why, "the hall's log does not answer yet");
                    break;
                }
                Sent::WrongSequence(why) => {
                    self.lost_to_another(store, table, &mut cursor, &why).await;
                    break;
                }
                Sent::Refused(why) => {
                    if let Some(pending) = cursor.outbox.pop_front() {
                        self.kept_no_more(table, &pending);
                    }
                    self.metrics.records_refused.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(%table, %why, "the hall's log refused a kept record for good: it is not logged");
                }
            }
        }
        if sent > 0 {
            tracing::warn!(%table, sent, "kept records logged now that NATS is back");
        }
    }

    /// Another node wrote to `table`'s log: the mirror follows the stream again, the records
    /// kept here cannot follow the other node's (they are said, counted and dropped), and the
    /// table is given up here; the hall takes it again from the log when its lease is still
    /// this node's.
    async fn lost_to_another(&self, store: &Store, table: &str, cursor: &mut Cursor, why: &str) {
        if let Err(err) = self.import_locked(store, table, cursor).await {
            tracing::error!(%table, %err, "cannot re-read the table's log after a refused append");
        }
        cursor.fenced = true;
        // Quiet readings waiting cannot follow the other node's records either.
        cursor.quiet = QuietReadings::default();
        let dropped: Vec<Pending> = cursor.outbox.drain(..).collect();
        for pending in &dropped {
            self.kept_no_more(table, pending);
        }
        if !dropped.is_empty() {
            self.metrics.records_refused.fetch_add(dropped.len() as u64, Ordering::Relaxed);
        }
        tracing::error!(
            %table,
            %why,
            refused = dropped.len(),
            "append refused: the table's log was re-read and the table is given up here"
        );
        if let Ok(mut held) = self.held.lock() {
            held.remove(table);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{RefereeEvent, ServiceKind, Severity};
    use crate::store::Evidence;

    #[test]
    fn a_kept_batch_counts_its_evidence_images_against_the_memory_bound() {
        let event = RefereeEvent::service(ServiceKind::CameraLost, Severity::Notice, "lost".into(), None);
        let images = Evidence { before: Some(vec![0; 3000]), after: Some(vec![0; 2000]) };
        let pending = Pending {
            subject: "tengen.log.t1.events".into(),
            payload: vec![b'x'; 100],
            message_id: "n1-1".into(),
            batches: vec![LogBatch {
                table: "t1".into(),
                game: 1,
                at_ms: 0,
                observation: None,
                observation_repeats: false,
                action: None,
                events: vec![(event.clone(), Some(images)), (event, None)],
            }],
        };
        assert_eq!(pending.bytes(), 5100);
    }
}
