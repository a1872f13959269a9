//! Which tables this node analyses in cluster mode (docs/cluster.md). Every third of a lease's
//! lifetime the node (beside renewing its leases) stops the tables whose lease it lost, says it
//! is alive (bucket `tengen_nodes`), and takes free
//! tables up to its fair share (tables ÷ live nodes, rounded up) or lets go of the tables above
//! it: tables spread evenly, a joining node gets its share, and a dead node's tables move once
//! its leases run out. Frames reach a table's owner on the core NATS subject
//! `tengen.frames.<table>`, from whichever node the camera posted to; a camera the service pulls
//! (mjpeg, rtsp, snapshot, folder) is pulled by the table's node alone, and moves with the table.
//! A node stopped on purpose (SIGTERM, Ctrl-C) leaves: it stops its tables, logs what they held
//! back, gives their leases up and says it is gone, so the others take its tables at their next
//! round instead of after its leases run out.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures_util::StreamExt as _;

use crate::cluster::Cluster;
use crate::config::TableConfig;
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::json::TableSummary;
use crate::table::{self, BusMessage, Pipeline, Shared, TableHandle};

/// A table running here: its pipeline and the task feeding it the hall's frames.
struct Running {
    pipeline: Pipeline,
    frames: tokio::task::JoinHandle<()>,
    /// Answers the arbiter's commands sent from the other nodes.
    commands: tokio::task::JoinHandle<()>,
    /// Tells the other nodes how the table stands.
    announce: tokio::task::JoinHandle<()>,
    /// Pulls the table's camera (mjpeg, rtsp, snapshot, folder): only the table's node does.
    camera: Option<tokio::task::JoinHandle<()>>,
}

/// The node's tables and the loop that keeps its share of them.
pub struct Hall {
    cluster: Arc<Cluster>,
    tables: BTreeMap<String, (TableConfig, Arc<TableHandle>)>,
    shared: Shared,
    pullers: crate::sources::Pullers,
    running: HashMap<String, Running>,
}

impl Hall {
    /// The hall of `cluster` over the configured tables (none running yet).
    pub fn new(
        cluster: Arc<Cluster>,
        tables: BTreeMap<String, (TableConfig, Arc<TableHandle>)>,
        shared: Shared,
        pullers: crate::sources::Pullers,
    ) -> Self {
        Self { cluster, tables, shared, pullers, running: HashMap::new() }
    }

    /// Takes the node's first share, then keeps it every third of a lease's lifetime, for as
    /// long as the node runs or until it is asked to leave.
    pub async fn start(mut self) -> HallExit {
        // Renewals run on their own, never behind a round that takes tables over.
        self.cluster.spawn_renewals();
        self.balance().await;
        let (exit, mut asked) = mpsc::channel::<oneshot::Sender<()>>(1);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(self.cluster.lease_ttl() / 3);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            every.tick().await;
            loop {
                tokio::select! {
                    _ = every.tick() => self.balance().await,
                    request = asked.recv() => {
                        // None: the service was dropped without leaving (stopped at once).
                        if let Some(done) = request {
                            self.leave().await;
                            let _ = done.send(());
                        }
                        return;
                    }
                }
            }
        });
        HallExit(exit)
    }

    /// Stops every table running here, logging what each held back, gives their leases up and
    /// says the node is gone.
    async fn leave(&mut self) {
        let tables: Vec<String> = self.running.keys().cloned().collect();
        for table in &tables {
            self.stop(table).await;
            self.cluster.release(table).await;
        }
        self.cluster.forget_node().await;
        tracing::info!(node = %self.cluster.node, tables = tables.len(), "left the hall");
    }

    /// One round: stop the tables whose lease was lost, say alive, then take or give up tables.
    async fn balance(&mut self) {
        let held = self.cluster.owned_tables();
        let lost: Vec<String> = self.running.keys().filter(|t| !held.contains(t)).cloned().collect();
        for table in lost {
            self.stop(&table).await;
        }
        let nodes = self.cluster.heartbeat().await.max(1);
        let share = self.tables.len().div_ceil(nodes);
        let held = self.cluster.owned_tables();
        if held.len() > share {
            // A node joined: give up the tables above the share (the last in this node's order,
            // so the ones kept are stable), for the others to take.
            for table in self.order().into_iter().filter(|t| held.contains(t)).skip(share) {
                self.stop(&table).await;
                self.cluster.release(&table).await;
            }
            return;
        }
        let mut held = held.len();
        for table in self.order() {
            if held >= share {
                break;
            }
            if self.running.contains_key(&table) || !self.cluster.try_acquire(&table).await {
                continue;
            }
            match self.take(&table).await {
                Ok(()) => held += 1,
                Err(crate::store::StoreError::LogUnreachable(why)) => {
                    // Its records kept here are not logged yet: the lease stays, the table
                    // starts at a later round.
                    tracing::warn!(%table, %why, "table not started yet");
                }
                Err(err) => {
                    tracing::error!(%table, %err, "cannot take the table over; letting it go");
                    self.cluster.release(&table).await;
                }
            }
        }
    }

    /// The tables in this node's order of preference: all of them, starting at a place that
    /// depends on the node's name, so nodes starting together reach for different tables first.
    fn order(&self) -> Vec<String> {
        let ids: Vec<String> = self.tables.keys().cloned().collect();
        if ids.is_empty() {
            return ids;
        }
        let start =
            self.cluster.node.bytes().fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b))) % ids.len();
        ids[start..].iter().chain(&ids[..start]).cloned().collect()
    }

    /// Starts a table whose lease this node now holds: catches its mirror up with the stream,
    /// replays its game, subscribes to its frames, and pulls its camera when the service pulls
    /// it (after the pipeline runs: a pulled frame is read here, not forwarded).
    async fn take(&mut self, table: &str) -> Result<(), crate::store::StoreError> {
        let Some((config, handle)) = self.tables.get(table) else { return Ok(()) };
        let started = std::time::Instant::now();
        let pipeline = table::run_pipeline(handle, config, self.shared.clone()).await?;
        let frames = tokio::spawn(feed_frames(Arc::clone(&self.cluster), Arc::clone(handle)));
        let commands = tokio::spawn(crate::commands::serve(
            Arc::clone(&self.cluster),
            Arc::clone(handle),
            self.shared.log.store().clone(),
        ));
        let announce =
            tokio::spawn(announce(Arc::clone(&self.cluster), Arc::clone(handle), self.shared.bus.subscribe()));
        let camera = self.pullers.spawn(&config.camera, Arc::clone(handle));
        tracing::info!(%table, node = %self.cluster.node, took_ms = started.elapsed().as_millis(), "table taken");
        self.running.insert(table.to_owned(), Running { pipeline, frames, commands, announce, camera });
        Ok(())
    }

    async fn stop(&mut self, table: &str) {
        if let Some(running) = self.running.remove(table) {
            // The camera first: a frame it pulled after the pipeline stopped would be forwarded
            // to whichever node takes the table, which pulls the camera itself.
            if let Some(camera) = &running.camera {
                camera.abort();
            }
            running.frames.abort();
            // A command in hand is answered by the pipeline before it stops; later ones find
            // the table gone from here (`table_elsewhere`), never half done.
            running.announce.abort();
            running.pipeline.stop().await;
            // Its last quiet readings, before another node takes the table's log.
            self.cluster.send_quiet_of(self.shared.log.store(), table).await;
            running.commands.abort();
            tracing::warn!(%table, node = %self.cluster.node, "table no longer analysed here");
        }
    }
}

/// Asks a node's hall loop to leave the hall (see the module doc).
pub struct HallExit(mpsc::Sender<oneshot::Sender<()>>);

impl HallExit {
    /// Leaves the hall and returns once the node's tables are stopped, their records logged and
    /// their leases given up (at once when the loop has already ended).
    pub async fn leave(&self) {
        let (done, finished) = oneshot::channel();
        if self.0.send(done).await.is_ok() {
            let _ = finished.await;
        }
    }
}

/// Hands the frames the hall sends for `handle`'s table to its pipeline.
async fn feed_frames(cluster: Arc<Cluster>, handle: Arc<TableHandle>) {
    let mut frames = match cluster.frames(&handle.id).await {
        Ok(frames) => frames,
        Err(err) => {
            tracing::error!(table = %handle.id, %err, "cannot subscribe to the table's frames");
            return;
        }
    };
    while let Some(message) = frames.next().await {
        if let Some(why) = cluster.frames_refused(&handle.id) {
            // The node's memory for the hall's log is full: like a posted frame, refused.
            handle.metrics.frames_rejected.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            handle.camera_failed(&why);
            continue;
        }
        if let Some(frame) = crate::cluster::frame_of(&message) {
            handle.offer_frame(frame);
        }
    }
}

/// Tells the other nodes how `handle`'s table stands: when it changes (the board, the alerts,
/// the camera: not the frame counters), and every third of a lease's lifetime (a node that just
/// joined learns it).
async fn announce(cluster: Arc<Cluster>, handle: Arc<TableHandle>, mut bus: broadcast::Receiver<BusMessage>) {
    let told = |handle: &TableHandle| {
        let detail = handle.detail();
        if let Some(detail) = &detail {
            cluster.announce(detail);
        }
        detail.map(|d| without_counters(d.summary))
    };
    let mut last = told(&handle);
    let mut every = tokio::time::interval(cluster.lease_ttl() / 3);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            message = bus.recv() => match message {
                Ok(BusMessage::Table(summary)) if summary.id == handle.id => {
                    if last.as_ref() != Some(&without_counters(*summary)) {
                        last = told(&handle);
                    }
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = every.tick() => last = told(&handle),
        }
    }
}

/// A summary without the counters that change at every frame.
fn without_counters(summary: TableSummary) -> TableSummary {
    TableSummary { frames: 0, dropped: 0, ..summary }
}
