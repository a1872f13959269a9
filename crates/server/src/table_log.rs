//! Where a table's pipeline writes its log: the node's SQLite alone (one process, the default),
//! or first the hall's JetStream stream and then the node's SQLite, which mirrors the stream
//! for the tables the node owns (cluster mode, `cluster.rs`). Reads stay on the SQLite.

use std::sync::Arc;

use crate::cluster::Cluster;
use crate::engine::Corners;
use crate::json::StoredEvent;
use crate::store::{GameRow, GameStart, LogBatch, Store, StoreError};

/// The table log a pipeline writes to; cheap to clone.
#[derive(Clone)]
pub struct TableLog {
    store: Store,
    cluster: Option<Arc<Cluster>>,
}

impl TableLog {
    /// The SQLite log of one process.
    pub fn local(store: Store) -> Self {
        Self { store, cluster: None }
    }

    /// The hall's JetStream log, mirrored into this node's SQLite.
    pub fn cluster(store: Store, cluster: Arc<Cluster>) -> Self {
        Self { store, cluster: Some(cluster) }
    }

    /// Whether the node's bus hears the events from the hall's stream (cluster mode: every node
    /// says every table's events, in the stream's order), not from the pipeline that made them.
    pub fn events_from_hall(&self) -> bool {
        self.cluster.is_some()
    }

    /// Whether an arbiter's command can be logged at `table` now: always in one process; in a
    /// hall, not while NATS is away (the command is refused before it changes anything).
    pub fn writable(&self, table: &str) -> Result<(), StoreError> {
        match &self.cluster {
            Some(cluster) => cluster.log_writable(table),
            None => Ok(()),
        }
    }

    /// The SQLite the API and the replays read.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Before a table starts here: brings its SQLite up to the hall's log (cluster mode).
    pub async fn catch_up(&self, table: &str) -> Result<usize, StoreError> {
        match &self.cluster {
            Some(cluster) => cluster.start_table(&self.store, table).await,
            None => Ok(0),
        }
    }

    /// Starts a new game at a table.
    pub async fn create_game(&self, start: GameStart) -> Result<GameRow, StoreError> {
        match &self.cluster {
            Some(cluster) => cluster.create_game(&self.store, start).await,
            None => self.store.create_game(start).await,
        }
    }

    /// Records the players' names of a game at a table.
    pub async fn set_players(
        &self,
        table: &str,
        game: i64,
        black: Option<String>,
        white: Option<String>,
    ) -> Result<(), StoreError> {
        match &self.cluster {
            Some(cluster) => cluster.set_players(&self.store, table, game, black, white).await,
            None => self.store.set_players(game, black, white).await,
        }
    }

    /// Appends a batch atomically and returns the stored events with their ids (in a hall while
    /// NATS is away: none yet, the batch is kept in order and logged when it is back).
    pub async fn append(&self, batch: LogBatch) -> Result<Vec<StoredEvent>, StoreError> {
        match &self.cluster {
            Some(cluster) => cluster.append_batch(&self.store, batch).await,
            None => self.store.append(batch).await,
        }
    }

    /// Saves a table's calibration.
    pub async fn set_calibration(&self, table: &str, corners: Option<Corners>, at_ms: i64) -> Result<(), StoreError> {
        match &self.cluster {
            Some(cluster) => cluster.set_calibration(&self.store, table, corners, at_ms).await,
            None => self.store.set_calibration(table, corners, at_ms).await,
        }
    }
}
