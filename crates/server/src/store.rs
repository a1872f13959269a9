//! The append-only game log in SQLite: every accepted observation, arbiter decision and event,
//! evidence images, games and calibrations. One dedicated writer thread owns the write
//! connection (so the async runtime never blocks on disk and writes never contend); reads use a
//! second connection on the blocking pool. WAL mode lets reads run beside the writer.
//!
//! Durability: `synchronous=NORMAL` for the stream of frames and events. In WAL mode a commit
//! is then in the operating system's hands before the call returns, so a killed process
//! (`kill -9`, a panic) loses nothing; only a power cut can lose the last commits, never corrupt
//! the file. Arbiter decisions are rarer and irreplaceable, so their transactions run with
//! `synchronous=FULL` (an fsync at commit). An fsync per camera frame at a hundred tables would
//! cost more than it protects.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::engine::Corners;
use crate::json::{ArbiterAction, RefereeEvent, StoredEvent};
use crate::log::{encode_action, encode_observation, InputDecoder, InputKind, LoggedInput};
use crate::model::{GameSetup, Observation};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored row could not be decoded (written by another version?).
    #[error("corrupt row {seq}: {message}")]
    Corrupt {
        /// The log sequence number.
        seq: i64,
        /// What was wrong.
        message: String,
    },
    /// The data folder could not be created.
    #[error("cannot create {path}: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The writer thread has stopped.
    #[error("the store's writer has stopped")]
    Closed,
    /// The cluster's log (a JetStream stream) refused or failed an append or a read.
    #[error("cluster log: {0}")]
    Cluster(String),
    /// Cluster mode: the hall's log cannot take an arbiter's command now (NATS away).
    #[error("{0}")]
    LogUnreachable(String),
    /// The file was written by a newer build (its schema version is higher than this one reads).
    #[error("the log has schema version {found}; this build reads up to {supported}: use a newer tengen")]
    NewerSchema {
        /// The file's version.
        found: i64,
        /// The highest this build reads.
        supported: i64,
    },
}

/// Before/after evidence images (JPEG) of an event.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    /// The board before the change.
    pub before: Option<Vec<u8>>,
    /// The board after the change.
    pub after: Option<Vec<u8>>,
}

/// One atomic append: what the referee was fed and what it said.
#[derive(Debug, Clone)]
pub struct LogBatch {
    /// Table id.
    pub table: String,
    /// Game id.
    pub game: i64,
    /// When it happened (ms since the epoch).
    pub at_ms: i64,
    /// The observation fed to the referee, if any.
    pub observation: Option<Observation>,
    /// The observation equals the previous one logged for this game (board, occlusion and
    /// confidence): a short row is written instead of the whole board.
    pub observation_repeats: bool,
    /// The arbiter action applied, if any.
    pub action: Option<ArbiterAction>,
    /// What came out, with evidence images.
    pub events: Vec<(RefereeEvent, Option<Evidence>)>,
}

impl LogBatch {
    /// The rows it takes in the log: its observation, its action, its events.
    pub fn rows(&self) -> i64 {
        i64::from(self.observation.is_some()) + i64::from(self.action.is_some()) + self.events.len() as i64
    }
}

/// A game to start: at which table, with what komi and setup, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct GameStart {
    /// Table id.
    pub table: String,
    /// Komi in points.
    pub komi: f64,
    /// What the game starts from, and what its record says beyond the names.
    pub setup: GameSetup,
    /// Start (ms since the epoch).
    pub started_ms: i64,
}

/// Which events to read: those with an id greater than `after`, of one table or all, of one
/// game or all, oldest first, at most `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFilter {
    /// Events with a greater id.
    pub after: i64,
    /// Of this table only.
    pub table: Option<String>,
    /// Of this game only.
    pub game: Option<i64>,
    /// At most this many.
    pub limit: usize,
}

impl EventFilter {
    /// The first `limit` events of all tables and games.
    pub fn first(limit: usize) -> Self {
        Self { after: 0, table: None, game: None, limit }
    }
}

/// A game row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameRow {
    /// Game id.
    pub id: i64,
    /// Table id.
    pub table: String,
    /// Komi in points.
    pub komi: f64,
    /// Start (ms since the epoch).
    pub started_ms: i64,
    /// Black player's name.
    pub black: Option<String>,
    /// White player's name.
    pub white: Option<String>,
    /// What the game starts from, and what its record says beyond the names.
    #[serde(default)]
    pub setup: GameSetup,
}

type WriteJob = Box<dyn FnOnce(&mut Connection) + Send>;

/// Handle to the store; cheap to clone.
#[derive(Clone)]
pub struct Store {
    writer: std::sync::mpsc::Sender<WriteJob>,
    reader: Arc<Mutex<Connection>>,
    path: PathBuf,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    komi REAL NOT NULL,
    started_ms INTEGER NOT NULL,
    black TEXT,
    white TEXT,
    setup TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS games_table ON games(table_id, id);
CREATE TABLE IF NOT EXISTS log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id TEXT NOT NULL,
    game_id INTEGER NOT NULL REFERENCES games(id),
    at_ms INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('observation', 'arbiter', 'event')),
    body TEXT NOT NULL,
    evidence INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS log_game ON log(game_id, seq);
CREATE INDEX IF NOT EXISTS log_kind ON log(kind, seq);
CREATE TABLE IF NOT EXISTS evidence (
    event_seq INTEGER PRIMARY KEY REFERENCES log(seq),
    before_jpeg BLOB,
    after_jpeg BLOB
);
CREATE TABLE IF NOT EXISTS calibration (
    table_id TEXT PRIMARY KEY,
    corners TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
);
-- The log is append-only: refuse edits and deletions at the database level.
CREATE TRIGGER IF NOT EXISTS log_no_update BEFORE UPDATE ON log
    BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS log_no_delete BEFORE DELETE ON log
    BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
";

/// The steps that bring a file up to date, one a version: `UPGRADES[v - 1]` takes a file of
/// version `v` to `v + 1`. A step is only ever added, never changed: files of every version
/// in the field go through the same steps.
const UPGRADES: &[&str] = &[
    // 1 → 2: each game's setup (even, handicap, adopted board).
    "ALTER TABLE games ADD COLUMN setup TEXT NOT NULL DEFAULT '{}';",
];

/// The schema version this build writes (`PRAGMA user_version`); [`SCHEMA`] is this version.
#[allow(clippy::cast_possible_wrap)]
const SCHEMA_VERSION: i64 = UPGRADES.len() as i64 + 1;

/// Checks the file's schema version at start: a new file gets the tables of
/// [`SCHEMA_VERSION`]; an older file is brought up to it one step at a time, in one transaction
/// (a step that fails leaves the file as it was); a newer file is refused, never rewritten.
fn upgrade_schema(conn: &mut Connection) -> Result<(), StoreError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema { found: version, supported: SCHEMA_VERSION });
    }
    let has_games: bool =
        conn.query_row("SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'games'", [], |r| {
            r.get(0)
        })?;
    let tx = conn.transaction()?;
    if has_games {
        // Version 1 was the first written; its files have the tables.
        let done = usize::try_from(version.max(1) - 1).unwrap_or_default();
        for (index, step) in UPGRADES.iter().enumerate().skip(done) {
            tx.execute_batch(step)?;
            // `UPGRADES[index]` leaves the file at version index + 2.
            tx.pragma_update(None, "user_version", i64::try_from(index + 2).unwrap_or(i64::MAX))?;
        }
    }
    tx.execute_batch(SCHEMA)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(())
}

fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

impl Store {
    /// Opens (creating when needed) `tengen.sqlite` in `data_dir` and starts the writer thread.
    pub fn open(data_dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|source| StoreError::Io { path: data_dir.to_owned(), source })?;
        let path = data_dir.join("tengen.sqlite");
        let mut write_conn = open_connection(&path)?;
        upgrade_schema(&mut write_conn)?;
        let reader = open_connection(&path)?;
        let (writer, jobs) = std::sync::mpsc::channel::<WriteJob>();
        std::thread::Builder::new()
            .name("tengen-store-writer".into())
            .spawn(move || {
                // Runs until every Store handle is dropped.
                while let Ok(job) = jobs.recv() {
                    job(&mut write_conn);
                }
            })
            .map_err(|source| StoreError::Io { path: path.clone(), source })?;
        Ok(Self { writer, reader: Arc::new(Mutex::new(reader)), path })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn write<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        let boxed: WriteJob = Box::new(move |conn| {
            let _ = reply.send(job(conn));
        });
        self.writer.send(boxed).map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    async fn read<T: Send + 'static>(
        &self,
        job: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let reader = Arc::clone(&self.reader);
        tokio::task::spawn_blocking(move || {
            let conn = reader.lock().map_err(|_| StoreError::Closed)?;
            job(&conn)
        })
        .await
        .map_err(|_| StoreError::Closed)?
    }

    /// Starts a new game at a table.
    pub async fn create_game(&self, start: GameStart) -> Result<GameRow, StoreError> {
        let GameStart { table, komi, setup, started_ms } = start;
        self.write(move |conn| {
            let text =
                serde_json::to_string(&setup).map_err(|e| StoreError::Corrupt { seq: 0, message: e.to_string() })?;
            conn.execute(
                "INSERT INTO games (table_id, komi, started_ms, setup) VALUES (?1, ?2, ?3, ?4)",
                params![table, komi, started_ms, text],
            )?;
            Ok(GameRow { id: conn.last_insert_rowid(), table, komi, started_ms, black: None, white: None, setup })
        })
        .await
    }

    /// Records a game made elsewhere under its own id (cluster mode: the node's SQLite mirrors
    /// the hall's JetStream log, whose game ids are stream sequences).
    pub async fn import_game(&self, game: GameRow) -> Result<(), StoreError> {
        self.write(move |conn| {
            let text = serde_json::to_string(&game.setup).map_err(|e| StoreError::Corrupt { seq: 0, message: e.to_string() })?;
            conn.execute(
                "INSERT INTO games (id, table_id, komi, started_ms, black, white, setup) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![game.id, game.table, game.komi, game.started_ms, game.black, game.white, text],
            )?;
            Ok(())
        })
        .await
    }

    /// Records the players' names of a game (both, exactly as given: the caller merges).
    pub async fn set_players(&self, game: i64, black: Option<String>, white: Option<String>) -> Result<(), StoreError> {
        self.write(move |conn| {
            conn.execute("UPDATE games SET black = ?2, white = ?3 WHERE id = ?1", params![game, black, white])?;
            Ok(())
        })
        .await
    }

    /// Appends a batch atomically and returns the stored events with their ids.
    pub async fn append(&self, batch: LogBatch) -> Result<Vec<StoredEvent>, StoreError> {
        self.write(move |conn| append_batch(conn, batch, None)).await
    }

    /// Appends a batch whose rows take the sequence numbers `first_seq`, `first_seq + 1`, …
    /// (cluster mode: numbers derived from the hall's stream, the same on every node, so that
    /// an event has one id in the whole hall).
    pub async fn append_numbered(&self, batch: LogBatch, first_seq: i64) -> Result<Vec<StoredEvent>, StoreError> {
        self.write(move |conn| append_batch(conn, batch, Some(first_seq))).await
    }

    /// Saves a table's calibration.
    pub async fn set_calibration(&self, table: &str, corners: Option<Corners>, at_ms: i64) -> Result<(), StoreError> {
        let table = table.to_owned();
        self.write(move |conn| {
            match corners {
                Some(c) => {
                    let text = serde_json::to_string(&c).unwrap_or_default();
                    conn.execute(
                        "INSERT INTO calibration (table_id, corners, updated_ms) VALUES (?1, ?2, ?3)
                         ON CONFLICT(table_id) DO UPDATE SET corners = ?2, updated_ms = ?3",
                        params![table, text, at_ms],
                    )?;
                }
                None => {
                    conn.execute("DELETE FROM calibration WHERE table_id = ?1", params![table])?;
                }
            }
            Ok(())
        })
        .await
    }

    /// A table's saved calibration.
    pub async fn calibration(&self, table: &str) -> Result<Option<Corners>, StoreError> {
        let table = table.to_owned();
        self.read(move |conn| {
            let text: Option<String> = conn
                .query_row("SELECT corners FROM calibration WHERE table_id = ?1", params![table], |r| r.get(0))
                .optional()?;
            Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
        })
        .await
    }

    /// The latest game of a table.
    pub async fn current_game(&self, table: &str) -> Result<Option<GameRow>, StoreError> {
        let table = table.to_owned();
        self.read(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT id, table_id, komi, started_ms, black, white, setup FROM games
                     WHERE table_id = ?1 ORDER BY id DESC LIMIT 1",
                    params![table],
                    game_row,
                )
                .optional()?)
        })
        .await
    }

    /// One game.
    pub async fn game(&self, id: i64) -> Result<Option<GameRow>, StoreError> {
        self.read(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT id, table_id, komi, started_ms, black, white, setup FROM games WHERE id = ?1",
                    params![id],
                    game_row,
                )
                .optional()?)
        })
        .await
    }

    /// All games of a table, newest first.
    pub async fn games(&self, table: &str) -> Result<Vec<GameRow>, StoreError> {
        let table = table.to_owned();
        self.read(move |conn| {
            let mut stmt = conn.prepare(
                "SELECT id, table_id, komi, started_ms, black, white, setup FROM games
                 WHERE table_id = ?1 ORDER BY id DESC",
            )?;
            let rows = stmt.query_map(params![table], game_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// The events `filter` asks for, oldest first.
    pub async fn events_after(&self, filter: EventFilter) -> Result<Vec<StoredEvent>, StoreError> {
        let EventFilter { after, table, game, limit } = filter;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT seq, table_id, game_id, at_ms, body, evidence FROM log
                 WHERE kind = 'event' AND seq > ?1
                   AND (?2 IS NULL OR table_id = ?2) AND (?3 IS NULL OR game_id = ?3)
                 ORDER BY seq LIMIT ?4",
            )?;
            let rows = stmt.query_map(params![after, table, game, limit], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, bool>(5)?,
                ))
            })?;
            let mut events = Vec::new();
            for row in rows {
                let (id, table, game, at_ms, body, evidence) = row?;
                let event: RefereeEvent =
                    serde_json::from_str(&body).map_err(|e| StoreError::Corrupt { seq: id, message: e.to_string() })?;
                events.push(StoredEvent { id, table, game, at_ms, evidence, evidence_error: None, event });
            }
            Ok(events)
        })
        .await
    }

    /// Everything the referee of a game was fed, in order, for replay after a restart.
    pub async fn replay_inputs(&self, game: i64) -> Result<Vec<(i64, LoggedInput)>, StoreError> {
        self.read(move |conn| {
            let mut stmt = conn.prepare(
                "SELECT seq, at_ms, kind, body FROM log
                 WHERE game_id = ?1 AND kind IN ('observation', 'arbiter') ORDER BY seq",
            )?;
            let rows = stmt.query_map(params![game], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
            })?;
            let mut inputs = Vec::new();
            let mut decoder = InputDecoder::default();
            for row in rows {
                let (seq, at_ms, kind, body) = row?;
                let corrupt = |message: String| StoreError::Corrupt { seq, message };
                let kind = InputKind::from_name(&kind).ok_or_else(|| corrupt(format!("not an input: {kind}")))?;
                inputs.push((at_ms, decoder.decode(kind, &body).map_err(corrupt)?));
            }
            Ok(inputs)
        })
        .await
    }

    /// An evidence image of an event: `before` or `after`.
    pub async fn evidence(&self, event: i64, after: bool) -> Result<Option<Vec<u8>>, StoreError> {
        self.read(move |conn| {
            let column = if after { "after_jpeg" } else { "before_jpeg" };
            let sql = format!("SELECT {column} FROM evidence WHERE event_seq = ?1");
            let blob: Option<Option<Vec<u8>>> = conn.query_row(&sql, params![event], |r| r.get(0)).optional()?;
            Ok(blob.flatten())
        })
        .await
    }

    /// The highest event id (0 when there are none).
    pub async fn last_event_id(&self) -> Result<i64, StoreError> {
        self.read(|conn| {
            Ok(conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM log WHERE kind = 'event'", [], |r| r.get(0))?)
        })
        .await
    }
}

fn game_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<GameRow> {
    Ok(GameRow {
        id: r.get(0)?,
        table: r.get(1)?,
        komi: r.get(2)?,
        started_ms: r.get(3)?,
        black: r.get(4)?,
        white: r.get(5)?,
        // A setup this build cannot read (written by a newer one) falls back to an even game.
        setup: serde_json::from_str(&r.get::<_, String>(6)?).unwrap_or_default(),
    })
}

fn append_batch(
    conn: &mut Connection,
    batch: LogBatch,
    first_seq: Option<i64>,
) -> Result<Vec<StoredEvent>, StoreError> {
    // Arbiter decisions are worth an fsync each (see the module doc).
    let durable = batch.action.is_some();
    if durable {
        conn.pragma_update(None, "synchronous", "FULL")?;
    }
    let result = append_in_transaction(conn, batch, first_seq);
    if durable {
        conn.pragma_update(None, "synchronous", "NORMAL")?;
    }
    result
}

fn append_in_transaction(
    conn: &mut Connection,
    batch: LogBatch,
    first_seq: Option<i64>,
) -> Result<Vec<StoredEvent>, StoreError> {
    let tx = conn.transaction()?;
    // The rows' numbers when given (NULL: SQLite's next).
    let mut next_seq = first_seq;
    let mut seq = move || {
        let this = next_seq;
        next_seq = next_seq.map(|s| s + 1);
        this
    };
    let LogBatch { table, game, at_ms, observation, observation_repeats, action, events } = batch;
    if let Some(obs) = observation {
        let body = encode_observation(&obs, observation_repeats);
        tx.execute(
            "INSERT INTO log (seq, table_id, game_id, at_ms, kind, body) VALUES (?5, ?1, ?2, ?3, 'observation', ?4)",
            params![table, game, at_ms, body, seq()],
        )?;
    }
    if let Some(action) = action {
        let body = encode_action(&action);
        tx.execute(
            "INSERT INTO log (seq, table_id, game_id, at_ms, kind, body) VALUES (?5, ?1, ?2, ?3, 'arbiter', ?4)",
            params![table, game, at_ms, body, seq()],
        )?;
    }
    let mut stored = Vec::with_capacity(events.len());
    for (event, evidence) in events {
        let body = serde_json::to_string(&event).unwrap_or_default();
        let has_evidence = evidence.as_ref().is_some_and(|e| e.before.is_some() || e.after.is_some());
        tx.execute(
            "INSERT INTO log (seq, table_id, game_id, at_ms, kind, body, evidence) VALUES (?6, ?1, ?2, ?3, 'event', ?4, ?5)",
            params![table, game, at_ms, body, has_evidence, seq()],
        )?;
        let id = tx.last_insert_rowid();
        if let Some(evidence) = evidence.filter(|_| has_evidence) {
            tx.execute(
                "INSERT INTO evidence (event_seq, before_jpeg, after_jpeg) VALUES (?1, ?2, ?3)",
                params![id, evidence.before, evidence.after],
            )?;
        }
        stored.push(StoredEvent {
            id,
            table: table.clone(),
            game,
            at_ms,
            evidence: has_evidence,
            evidence_error: None,
            event,
        });
    }
    tx.commit()?;
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Kind, Severity};
    use tengen_referee::{EventKind, Status};
    use tengen_rules::{PointState, BOARD_POINTS};

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tengen-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn event(kind: EventKind, status: Status) -> RefereeEvent {
        RefereeEvent {
            kind: Kind::Referee(kind),
            status,
            article: None,
            severity: Severity::Info,
            alert_id: None,
            move_number: Some(1),
            summary: kind.name().into(),
            detail: None,
        }
    }

    /// An even game at table `t1`, komi 7.5, started at `started_ms`.
    fn even_game(started_ms: i64) -> GameStart {
        GameStart { table: "t1".into(), komi: 7.5, setup: GameSetup::default(), started_ms }
    }

    #[tokio::test]
    async fn appended_inputs_and_events_read_back_in_order_and_survive_reopening() {
        let dir = temp_dir("roundtrip");
        let store = Store::open(&dir).expect("open");
        let game = store.create_game(even_game(1000)).await.expect("game");
        let mut points = vec![PointState::Empty; BOARD_POINTS];
        points[60] = PointState::Black;
        let obs = Observation {
            points,
            corners: None,
            confidence: 0.9,
            occluded: true,
            moved_cells: None,
            point_confidence: (0..BOARD_POINTS).map(|i| [0.0, 0.4, 0.7, 1.0][i % 4]).collect(),
        };
        let stored = store
            .append(LogBatch {
                table: "t1".into(),
                game: game.id,
                at_ms: 2000,
                observation: Some(obs.clone()),
                observation_repeats: false,
                action: None,
                events: vec![
                    (event(EventKind::Move, Status::Info), None),
                    (
                        event(EventKind::MovedStone, Status::Suspected),
                        Some(Evidence { before: Some(vec![1, 2]), after: Some(vec![3]) }),
                    ),
                ],
            })
            .await
            .expect("append");
        assert_eq!(stored.len(), 2);
        assert!(stored[0].id < stored[1].id);
        store
            .append(LogBatch {
                table: "t1".into(),
                game: game.id,
                at_ms: 3000,
                observation: Some(obs.clone()),
                observation_repeats: true,
                action: Some(ArbiterAction::Confirm { alert_id: 1 }),
                events: vec![],
            })
            .await
            .expect("append action");
        drop(store);

        let store = Store::open(&dir).expect("reopen");
        let events = store
            .events_after(EventFilter { table: Some("t1".into()), ..EventFilter::first(100) })
            .await
            .expect("events");
        assert_eq!(events.len(), 2);
        assert_eq!(
            (events[1].event.kind, events[1].event.status),
            (Kind::Referee(EventKind::MovedStone), Status::Suspected)
        );
        assert!(events[1].evidence);
        assert_eq!(store.evidence(events[1].id, true).await.expect("ev"), Some(vec![3]));
        let inputs = store.replay_inputs(game.id).await.expect("inputs");
        assert_eq!(inputs.len(), 3);
        assert_eq!(inputs[0], (2000, LoggedInput::Observation(obs.clone())));
        assert_eq!(inputs[1], (3000, LoggedInput::Observation(obs)), "a repeat row replays");
        assert_eq!(inputs[2].1, LoggedInput::Action(ArbiterAction::Confirm { alert_id: 1 }));
        let after_first =
            store.events_after(EventFilter { after: events[0].id, ..EventFilter::first(100) }).await.expect("cursor");
        assert_eq!(after_first.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The first schema the service wrote (version 1: games without their setup).
    const SCHEMA_V1: &str = "
        CREATE TABLE games (id INTEGER PRIMARY KEY, table_id TEXT NOT NULL, komi REAL NOT NULL,
            started_ms INTEGER NOT NULL, black TEXT, white TEXT);
        CREATE TABLE log (seq INTEGER PRIMARY KEY AUTOINCREMENT, table_id TEXT NOT NULL,
            game_id INTEGER NOT NULL REFERENCES games(id), at_ms INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('observation', 'arbiter', 'event')),
            body TEXT NOT NULL, evidence INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE evidence (event_seq INTEGER PRIMARY KEY REFERENCES log(seq), before_jpeg BLOB, after_jpeg BLOB);
        CREATE TABLE calibration (table_id TEXT PRIMARY KEY, corners TEXT NOT NULL, updated_ms INTEGER NOT NULL);
        PRAGMA user_version = 1;";

    fn user_version(dir: &Path) -> i64 {
        let conn = Connection::open(dir.join("tengen.sqlite")).expect("open");
        conn.query_row("PRAGMA user_version", [], |r| r.get(0)).expect("version")
    }

    #[tokio::test]
    async fn a_version_1_file_is_upgraded_step_by_step_and_keeps_its_games_and_log() {
        let dir = temp_dir("upgrade-v1");
        std::fs::create_dir_all(&dir).expect("dir");
        {
            let conn = Connection::open(dir.join("tengen.sqlite")).expect("create");
            conn.execute_batch(SCHEMA_V1).expect("v1 schema");
            conn.execute_batch(
                "INSERT INTO games VALUES (1, 't1', 6.5, 1000, 'Ann', 'Bo');
                 INSERT INTO log (table_id, game_id, at_ms, kind, body) VALUES ('t1', 1, 2000, 'arbiter', '{\"action\":\"pass\",\"colour\":\"black\"}');
                 INSERT INTO log (table_id, game_id, at_ms, kind, body) VALUES ('t1', 1, 2000, 'event', '{\"kind\":\"pass\",\"severity\":\"info\",\"summary\":\"Black passes\"}');",
            )
            .expect("v1 rows");
        }
        assert_eq!(user_version(&dir), 1);
        let store = Store::open(&dir).expect("upgraded");
        assert_eq!(user_version(&dir), SCHEMA_VERSION);
        let game = store.game(1).await.expect("read").expect("the game is kept");
        assert_eq!((game.komi, game.black.as_deref(), game.setup.clone()), (6.5, Some("Ann"), GameSetup::default()));
        let inputs = store.replay_inputs(1).await.expect("inputs");
        assert_eq!(
            inputs,
            vec![(2000, LoggedInput::Action(ArbiterAction::Pass { colour: tengen_rules::Color::Black }))]
        );
        assert_eq!(store.events_after(EventFilter::first(10)).await.expect("events").len(), 1);
        // The upgraded file takes new games with their setup, and opens again as it is.
        let handicap = GameSetup { start: tengen_referee::StartPosition::Handicap(3), pairing: None };
        let second = store
            .create_game(GameStart { table: "t1".into(), komi: 0.5, setup: handicap.clone(), started_ms: 3000 })
            .await
            .expect("new game");
        drop(store);
        let store = Store::open(&dir).expect("reopened");
        assert_eq!(store.game(second.id).await.expect("read").map(|g| g.setup), Some(handicap));
        assert_eq!(user_version(&dir), SCHEMA_VERSION);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_file_of_a_newer_build_is_refused_and_left_as_it_was() {
        let dir = temp_dir("newer");
        drop(Store::open(&dir).expect("new file"));
        assert_eq!(user_version(&dir), SCHEMA_VERSION);
        let newer = SCHEMA_VERSION + 1;
        {
            let conn = Connection::open(dir.join("tengen.sqlite")).expect("open");
            conn.pragma_update(None, "user_version", newer).expect("set");
        }
        match Store::open(&dir) {
            Err(StoreError::NewerSchema { found, supported }) => {
                assert_eq!((found, supported), (newer, SCHEMA_VERSION));
            }
            Err(other) => panic!("expected NewerSchema, got {other}"),
            Ok(_) => panic!("a newer file was opened"),
        }
        assert_eq!(user_version(&dir), newer, "the file is not rewritten");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn the_log_refuses_updates_and_deletes() {
        let dir = temp_dir("append-only");
        let store = Store::open(&dir).expect("open");
        let game = store.create_game(even_game(0)).await.expect("game");
        store
            .append(LogBatch {
                table: "t1".into(),
                game: game.id,
                at_ms: 1,
                observation: None,
                observation_repeats: false,
                action: None,
                events: vec![(event(EventKind::Move, Status::Info), None)],
            })
            .await
            .expect("append");
        let outcome = store.write(|conn| Ok(conn.execute("DELETE FROM log", [])?)).await;
        assert!(outcome.is_err());
        assert_eq!(store.events_after(EventFilter::first(10)).await.expect("read").len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
