//! The hall's events read from its log stream (docs/cluster.md, "Events"): the events of a
//! logged record with their hall-wide ids, the pages that `/api/events` and a resuming SSE client
//! read, and the node's follower that puts every table's new events on its bus in stream order,
//! whichever node logged them. The ids come from the stream, so they are the same on every node.

use std::time::Duration;

use async_nats::jetstream::consumer;
use futures_util::StreamExt as _;
use tokio::sync::broadcast;

use super::{events_subject, first_row, game_id, table_of, Cluster, LogRecord, ROWS_PER_RECORD};
use crate::json::StoredEvent;
use crate::store::{EventFilter, StoreError};
use crate::table::BusMessage;

/// How long a read of the stream waits for its next record before giving up.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

fn failed(err: impl std::fmt::Display) -> StoreError {
    StoreError::Cluster(err.to_string())
}

/// The events a record of `table`'s log holds, with their hall-wide ids (the record's sequence
/// times [`ROWS_PER_RECORD`] plus the row: the mirror numbers its rows the same way).
fn record_events(table: &str, seq: u64, record: LogRecord) -> Result<Vec<StoredEvent>, StoreError> {
    let LogRecord::Batch { game, at_ms, observation, arbiter, events, evidence, evidence_lost, evidence_error, .. } =
        record
    else {
        return Ok(Vec::new());
    };
    let first = first_row(seq)? + i64::from(observation.is_some()) + i64::from(arbiter.is_some());
    Ok((first..)
        .zip(events.into_iter().enumerate())
        .map(|(id, (place, event))| StoredEvent {
            id,
            table: table.to_owned(),
            game,
            at_ms,
            evidence: evidence.contains(&place),
            evidence_error: evidence_lost.contains(&place).then(|| evidence_error.clone().unwrap_or_default()),
            event,
        })
        .collect())
}

/// The place in its record of the event `id` of the record at `seq` (`None`: one of the
/// record's input rows, not an event).
pub(super) fn event_place(record: &LogRecord, seq: u64, id: i64) -> Option<usize> {
    let LogRecord::Batch { observation, arbiter, .. } = record else { return None };
    let first = first_row(seq).ok()? + i64::from(observation.is_some()) + i64::from(arbiter.is_some());
    usize::try_from(id.checked_sub(first)?).ok()
}

/// The events of one message of the log stream.
fn message_events(message: &async_nats::jetstream::Message) -> Result<(u64, Vec<StoredEvent>), StoreError> {
    let seq = message.info().map_err(failed)?.stream_sequence;
    let record: LogRecord = serde_json::from_slice(&message.payload)
        .map_err(|e| StoreError::Corrupt { seq: game_id(seq).unwrap_or(i64::MAX), message: e.to_string() })?;
    let subject = message.subject.as_str();
    let table = table_of(subject).unwrap_or(subject);
    Ok((seq, record_events(table, seq, record)?))
}

impl Cluster {
    /// The largest event id the hall's log can hold now (0: an empty log): a client may resume
    /// after any id up to it, and a new client starts there.
    pub async fn last_event_id(&self) -> Result<i64, StoreError> {
        let last = self.log.get_info().await.map_err(failed)?.state.last_sequence;
        if last == 0 {
            return Ok(0);
        }
        first_row(last)?
            .checked_add(ROWS_PER_RECORD - 1)
            .ok_or_else(|| StoreError::Cluster(format!("stream sequence {last} out of range")))
    }

    /// The events `filter` asks for, in order, read from the hall's log (the same on every
    /// node).
    pub async fn events_after(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, StoreError> {
        let EventFilter { after, ref table, game, limit } = *filter;
        let table = table.as_deref();
        // The record holding `after` is read again (its later events may be wanted); a game's
        // events follow its `game` record, whose sequence is the game's id.
        let start = u64::try_from(after / ROWS_PER_RECORD)
            .unwrap_or(0)
            .max(game.and_then(|g| u64::try_from(g).ok()).unwrap_or(0))
            .max(1);
        // Only the records that carry events (most records carry none).
        let subject = events_subject(table.unwrap_or("*"));
        let end = match self.log.get_last_raw_message_by_subject(&subject).await {
            Ok(message) => message.sequence,
            Err(err) if err.kind() == async_nats::jetstream::stream::LastRawMessageErrorKind::NoMessageFound => {
                return Ok(Vec::new())
            }
            Err(err) => return Err(failed(err)),
        };
        let mut events = Vec::new();
        if start > end || limit == 0 {
            return Ok(events);
        }
        let reader = self
            .log
            .create_consumer(consumer::pull::OrderedConfig {
                filter_subject: subject,
                deliver_policy: consumer::DeliverPolicy::ByStartSequence { start_sequence: start },
                ..Default::default()
            })
            .await
            .map_err(failed)?;
        let mut messages = reader.messages().await.map_err(failed)?;
        loop {
            let message = tokio::time::timeout(READ_TIMEOUT, messages.next())
                .await
                .map_err(|_| failed(format!("the hall's log stopped before sequence {end}")))?
                .ok_or_else(|| failed(format!("the hall's log ended before sequence {end}")))?
                .map_err(failed)?;
            let (seq, found) = message_events(&message)?;
            events.extend(found.into_iter().filter(|e| e.id > after && game.is_none_or(|g| e.game == g)));
            if seq >= end || events.len() >= limit {
                break;
            }
        }
        events.truncate(limit);
        Ok(events)
    }

    /// Follows the hall's log from its present end and puts every new event on `bus`, in the
    /// stream's order (ids only grow), for as long as the node runs. In cluster mode this is the
    /// one way events reach the node's bus, its own tables' included: every node says the same.
    pub async fn follow_events(
        self: &std::sync::Arc<Self>,
        bus: broadcast::Sender<BusMessage>,
    ) -> Result<tokio::task::JoinHandle<()>, StoreError> {
        let mut next = self.log.get_info().await.map_err(failed)?.state.last_sequence + 1;
        let cluster = std::sync::Arc::clone(self);
        Ok(tokio::spawn(async move {
            loop {
                let reader = cluster
                    .log
                    .create_consumer(consumer::pull::OrderedConfig {
                        // The records that carry events: a node is not sent the readings of
                        // every table (most records), which it would only read and drop.
                        filter_subject: events_subject("*"),
                        deliver_policy: consumer::DeliverPolicy::ByStartSequence { start_sequence: next },
                        ..Default::default()
                    })
                    .await;
                let messages = match reader {
                    Ok(reader) => reader.messages().await,
                    Err(err) => {
                        tracing::warn!(%err, "cannot follow the hall's log; trying again");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                };
                let mut messages = match messages {
                    Ok(messages) => messages,
                    Err(err) => {
                        tracing::warn!(%err, "cannot follow the hall's log; trying again");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                };
                // A broken reader is made again from the record after the last one seen: no
                // record is skipped and none is said twice.
                while let Some(message) = messages.next().await {
                    let message = match message {
                        Ok(message) => message,
                        Err(err) => {
                            tracing::warn!(%err, "following the hall's log: reading again");
                            break;
                        }
                    };
                    match message_events(&message) {
                        Ok((seq, _)) if seq < next => {}
                        Ok((seq, events)) => {
                            next = seq + 1;
                            for event in events {
                                let _ = bus.send(BusMessage::Event(Box::new(event)));
                            }
                        }
                        Err(err) => {
                            tracing::error!(%err, "a record of the hall's log cannot be read; skipped");
                            if let Ok(info) = message.info() {
                                next = next.max(info.stream_sequence + 1);
                            }
                        }
                    }
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{RefereeEvent, ServiceKind, Severity};

    fn event(text: &str) -> RefereeEvent {
        RefereeEvent::service(ServiceKind::Arbiter, Severity::Info, text.into(), None)
    }

    #[test]
    fn a_records_events_are_numbered_after_its_input_rows_as_the_mirror_numbers_them() {
        let record = LogRecord::Batch {
            game: 3,
            at_ms: 99,
            observation: Some("{}".into()),
            arbiter: Some("{}".into()),
            events: vec![event("one"), event("two"), event("three")],
            evidence: vec![1],
            evidence_key: Some("n1-1".into()),
            evidence_lost: vec![2],
            evidence_error: Some("full".into()),
        };
        let events = record_events("t1", 7, record).unwrap();
        let ids: Vec<i64> = events.iter().map(|e| e.id).collect();
        assert_eq!(ids, [7 * ROWS_PER_RECORD + 2, 7 * ROWS_PER_RECORD + 3, 7 * ROWS_PER_RECORD + 4]);
        assert_eq!(events.iter().map(|e| e.evidence).collect::<Vec<_>>(), [false, true, false]);
        let errors: Vec<Option<&str>> = events.iter().map(|e| e.evidence_error.as_deref()).collect();
        assert_eq!(errors, [None, None, Some("full")]);
        assert!(events.iter().all(|e| e.table == "t1" && e.game == 3 && e.at_ms == 99));
        let calibration = LogRecord::Calibration { corners: None, at_ms: 1 };
        assert!(record_events("t1", 8, calibration).unwrap().is_empty());
        assert_eq!(table_of("tengen.log.t1.events"), Some("t1"));
        assert_eq!(table_of("tengen.log.t1.quiet"), Some("t1"));
        assert_eq!(table_of("tengen.log.t1"), None);
        assert_eq!(table_of("tengen.frames.t1.events"), None);
    }
}
