//! The hall's evidence images (docs/cluster.md, "Evidence"): the JetStream object store
//! `tengen_evidence`, one object per image named `<record's message id>/<event's place>/
//! before.jpg` (or `after.jpg`), put by the table's node before the record is logged, so the
//! record says which events' images are there and why any are not. Any node reads them for
//! `GET /api/events/{id}/{image}`: the record at the event's sequence names the objects. An
//! image that cannot be stored (NATS away, the bucket full, too slow) never holds the event
//! back: it is logged without it, says why, and the node counts it.

use std::sync::atomic::Ordering;
use std::time::Duration;

use async_nats::jetstream::{self, object_store};
use tokio::io::AsyncReadExt as _;

use super::events::event_place;
use super::{open_or_create, table_of, Cluster, ClusterError, LogRecord, EVIDENCE_BUCKET, ROWS_PER_RECORD};
use crate::config::ClusterConfig;
use crate::json::RefereeEvent;
use crate::store::Evidence;

/// Longest a batch's images may take to be stored: the pipeline waits for them (an alert's two
/// crops are put in a few milliseconds when NATS answers).
const STORE_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest a read of an image may take.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest image read back (a zoomed crop is at most 720 pixels a side: tens of KB).
const MAX_IMAGE_BYTES: usize = 8 << 20;

/// Opens the hall's evidence bucket, creating it when absent (replicas as the stream's; its
/// size bounded by `evidence_bytes`, refusing new images when full).
pub(super) async fn bucket(
    jetstream: &jetstream::Context,
    config: &ClusterConfig,
) -> Result<object_store::ObjectStore, ClusterError> {
    let bucket_config = object_store::Config {
        bucket: EVIDENCE_BUCKET.into(),
        description: Some("tengen: the evidence images of the hall's alerts".into()),
        max_bytes: i64::try_from(config.evidence_bytes).unwrap_or(i64::MAX),
        storage: jetstream::stream::StorageType::File,
        num_replicas: config.replicas,
        ..Default::default()
    };
    open_or_create(jetstream.get_object_store(EVIDENCE_BUCKET), || jetstream.create_object_store(bucket_config))
        .await
        .map_err(|e| ClusterError::JetStream(format!("evidence bucket {EVIDENCE_BUCKET}: {e}")))
}

/// The object name of an image.
fn object_name(key: &str, place: usize, after: bool) -> String {
    format!("{key}/{place}/{}", if after { "after.jpg" } else { "before.jpg" })
}

/// Which events' images a batch's record can say are in the hall.
#[derive(Debug, Default)]
pub(super) struct StoredImages {
    /// The places of the events whose images are all stored.
    pub(super) stored: Vec<usize>,
    /// The places of the events with images that could not be.
    pub(super) lost: Vec<usize>,
    /// Why.
    pub(super) error: Option<String>,
}

/// Why reading an image failed (the store unreachable or refusing; not "no such image").
#[derive(Debug, thiserror::Error)]
#[error("the hall's evidence store (JetStream object store {EVIDENCE_BUCKET}) cannot be read now: {0}")]
pub struct EvidenceUnreachable(String);

impl Cluster {
    /// Puts the evidence images of a batch's events in the hall's object store under `key`, in
    /// at most [`STORE_TIMEOUT`]; says which are there and why the others are not.
    pub(super) async fn store_evidence(
        &self,
        table: &str,
        key: &str,
        events: &[(RefereeEvent, Option<Evidence>)],
    ) -> StoredImages {
        let wanted: Vec<(usize, &Evidence)> = events
            .iter()
            .enumerate()
            .filter_map(|(place, (_, evidence))| {
                evidence.as_ref().filter(|e| e.before.is_some() || e.after.is_some()).map(|e| (place, e))
            })
            .collect();
        let mut images = StoredImages::default();
        if wanted.is_empty() {
            return images;
        }
        let mut stored_images = 0u64;
        let outcome = if self.connected() {
            let put_all = async {
                for (place, evidence) in &wanted {
                    for (after, bytes) in [(false, &evidence.before), (true, &evidence.after)] {
                        let Some(bytes) = bytes else { continue };
                        let name = object_name(key, *place, after);
                        self.evidence.put(name.as_str(), &mut bytes.as_slice()).await.map_err(|e| e.to_string())?;
                        stored_images += 1;
                    }
                    images.stored.push(*place);
                }
                Ok::<(), String>(())
            };
            match tokio::time::timeout(STORE_TIMEOUT, put_all).await {
                Ok(outcome) => outcome,
                Err(_) => Err(format!("no answer within {} s", STORE_TIMEOUT.as_secs())),
            }
        } else {
            Err(format!("NATS connection {}", self.connection_state()))
        };
        self.metrics.evidence_stored.fetch_add(stored_images, Ordering::Relaxed);
        if let Err(why) = outcome {
            images.lost = wanted.iter().map(|(place, _)| *place).filter(|p| !images.stored.contains(p)).collect();
            let total: u64 =
                wanted.iter().map(|(_, e)| u64::from(e.before.is_some()) + u64::from(e.after.is_some())).sum();
            self.metrics.evidence_lost.fetch_add(total.saturating_sub(stored_images), Ordering::Relaxed);
            let why = format!(
                "the evidence images could not be stored in the hall (JetStream object store {EVIDENCE_BUCKET}): {why}"
            );
            tracing::error!(%table, events = images.lost.len(), %why, "events logged without their evidence images");
            images.error = Some(why);
        }
        images
    }

    /// The image (`after`, else before) of the event `id`, read from the hall's object store;
    /// `None` when the hall has no such image.
    pub async fn evidence_image(&self, id: i64, after: bool) -> Result<Option<Vec<u8>>, EvidenceUnreachable> {
        let failed = |e: &dyn std::fmt::Display| EvidenceUnreachable(e.to_string());
        let Some(seq) = u64::try_from(id / ROWS_PER_RECORD).ok().filter(|seq| *seq > 0 && id > 0) else {
            return Ok(None);
        };
        let message = match tokio::time::timeout(READ_TIMEOUT, self.log.get_raw_message(seq)).await {
            Ok(Ok(message)) => message,
            Ok(Err(err)) if err.kind() == jetstream::stream::RawMessageErrorKind::NoMessageFound => return Ok(None),
            Ok(Err(err)) => return Err(failed(&err)),
            Err(_) => {
                return Err(failed(&format!("the hall's log did not answer within {} s", READ_TIMEOUT.as_secs())))
            }
        };
        if table_of(message.subject.as_str()).is_none() {
            return Ok(None);
        }
        let Ok(record) = serde_json::from_slice::<LogRecord>(&message.payload) else { return Ok(None) };
        let Some(place) = event_place(&record, seq, id) else { return Ok(None) };
        let LogRecord::Batch { evidence, evidence_key: Some(key), .. } = &record else { return Ok(None) };
        if !evidence.contains(&place) {
            return Ok(None);
        }
        let read = async {
            let mut object = match self.evidence.get(object_name(key, place, after)).await {
                Ok(object) => object,
                Err(err) if err.kind() == object_store::GetErrorKind::NotFound => return Ok(None),
                Err(err) => return Err(failed(&err)),
            };
            if object.info().size > MAX_IMAGE_BYTES {
                return Err(failed(&format!("an image of {} bytes", object.info().size)));
            }
            let mut bytes = Vec::with_capacity(object.info().size);
            object.read_to_end(&mut bytes).await.map_err(|e| failed(&e))?;
            Ok(Some(bytes))
        };
        tokio::time::timeout(READ_TIMEOUT, read)
            .await
            .unwrap_or_else(|_| Err(failed(&format!("no answer within {} s", READ_TIMEOUT.as_secs()))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_images_object_is_named_after_its_record_place_and_side() {
        assert_eq!(object_name("n1-00ab-7", 2, true), "n1-00ab-7/2/after.jpg");
        assert_eq!(object_name("n1-00ab-7", 0, false), "n1-00ab-7/0/before.jpg");
    }
}
