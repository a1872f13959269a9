//! Tengen service: cameras in, referee dashboard out.
//!
//! Each table runs its own pipeline (frame slot → vision → referee → log → bus); the HTTP API
//! and the embedded dashboard read the tables' live state, the SQLite log and the bus. See
//! `README.md` (running it, pointing a camera at it, configuration) and `API.md` (the HTTP API).

pub mod adapters;
pub mod api;
pub mod archive;
pub mod auth;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod dashboard;
pub mod data_lock;
pub mod engine;
pub mod error;
pub mod evidence;
pub mod hall;
pub mod imaging;
pub mod json;
pub mod listener;
pub mod log;
pub mod metrics;
pub mod model;
pub mod pairings;
pub mod phone;
pub mod rounds;
pub mod rtsp;
pub mod sgf;
pub mod sources;
pub mod store;
pub mod table;
pub mod table_log;
pub mod tls;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, oneshot, Semaphore};

pub use api::{router, Hub};
pub use config::{CameraConfig, Config, TableConfig};
pub use engine::{Clock, Engines, FrameAnalyzer, SystemClock, TableReferee};
pub use store::Store;

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// The store could not be opened or read.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// Another service holds the data folder (or it cannot be locked).
    #[error(transparent)]
    Locked(#[from] data_lock::LockError),
    /// HTTPS could not be set up (certificate, key).
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// Cluster mode could not start (NATS unreachable, JetStream refused, a table held elsewhere).
    #[error(transparent)]
    Cluster(#[from] cluster::ClusterError),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// A running service.
pub struct RunningServer {
    /// The address actually bound (port 0 resolved).
    pub addr: SocketAddr,
    /// The arbiter token in force.
    pub arbiter_token: String,
    /// The global camera token in force.
    pub camera_token: String,
    /// Shared state (tables, store, bus).
    pub hub: Arc<Hub>,
    /// The HTTPS address (for phone cameras), when configured.
    pub https_addr: Option<SocketAddr>,
    /// The HTTPS certificate's SHA-256 fingerprint and whether it was made at this start.
    pub tls: Option<(String, bool)>,
    shutdown: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
    /// Makes this node leave the hall (cluster mode).
    hall_exit: Option<hall::HallExit>,
    /// The data folder is this service's until it is dropped.
    _lock: data_lock::DataDirLock,
    /// Stops the HTTPS listener when dropped or fired.
    https_stop: Option<oneshot::Sender<()>>,
    https: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl RunningServer {
    /// Waits until the HTTP server stops (it runs until `shutdown`).
    pub async fn wait(self) -> std::io::Result<()> {
        let RunningServer {
            shutdown: _keep_alive, https_stop: _keep_https, hall_exit: _keep_hall, served, _lock, ..
        } = self;
        served.await.unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }

    /// Leaves the hall (cluster mode): this node's tables stop here, what they held back is
    /// logged and their leases are given up, so the other nodes take them at their next round
    /// instead of after the leases run out. Nothing to do for a single process, whose log is
    /// written before anything is published.
    pub async fn leave_hall(&self) {
        if let Some(exit) = &self.hall_exit {
            exit.leave().await;
        }
    }

    /// Stops at once, closing open connections (SSE streams never finish by themselves).
    pub fn shutdown_now(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.served.abort();
        if let Some(https) = self.https.take() {
            https.abort();
        }
    }

    /// Stops accepting requests and waits for open ones to finish (HTTPS stops at once).
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(https) = self.https.take() {
            https.abort();
        }
        self.served.await.unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }
}

/// Locks the data folder (a second service on it is refused, naming the first), opens the
/// store, restores every table (replaying its game log), starts the cameras that the service
/// pulls, binds the listener and serves the API and the dashboard.
pub async fn start(config: Config, engines: Engines) -> Result<RunningServer, ServerError> {
    config.validate()?;
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|source| store::StoreError::Io { path: config.data_dir.clone(), source })?;
    let lock = data_lock::DataDirLock::acquire(&config.data_dir)?;
    let (store, log, hall) = match &config.cluster {
        None => {
            let store = Store::open(&config.data_dir)?;
            (store.clone(), table_log::TableLog::local(store), None)
        }
        Some(cluster_config) => {
            let hall = cluster::Cluster::connect(cluster_config).await?;
            // The node's SQLite mirrors the hall's log of the tables it owns, read afresh from
            // the stream at each start (the stream is the record; the mirror is rebuilt).
            let mirror = config.data_dir.join("cluster-mirror");
            if mirror.exists() {
                std::fs::remove_dir_all(&mirror)
                    .map_err(|source| store::StoreError::Io { path: mirror.clone(), source })?;
            }
            let store = Store::open(&mirror)?;
            (store.clone(), table_log::TableLog::cluster(store, Arc::clone(&hall)), Some(hall))
        }
    };
    let arbiter_token = config.arbiter_token.clone().unwrap_or_else(auth::generate_token);
    let camera_token = config.camera_token.clone().unwrap_or_else(auth::generate_token);
    let threads = match config.analysis_threads {
        0 => std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get),
        n => n,
    };
    let (bus, _) = broadcast::channel(1024);
    let shared = table::Shared {
        log,
        node: config.cluster.as_ref().map(|c| c.node.clone()),
        bus: bus.clone(),
        engines: engines.clone(),
        analysis_permits: Arc::new(Semaphore::new(threads)),
        // Board searches (a table's first frames, 60–190 ms each) run in a lane of their own
        // beside the tracked frames' lane, so a cold start of many tables shares the cores
        // between getting every table going and serving those already going (measured: with
        // one search at a time, a hundred tables' start-up left the last ones starved).
        search_permits: Arc::new(Semaphore::new(threads)),
        camera_timeout: Duration::from_secs_f64(config.camera_timeout_secs),
        max_camera_fps: config.max_camera_fps,
        search_deadline: Duration::from_secs_f64(config.search_deadline_secs),
    };
    let pullers = sources::Pullers {
        clock: Arc::clone(&engines.clock),
        max_frame_bytes: config.max_frame_bytes,
        ffmpeg: config.ffmpeg.clone(),
    };
    let mut tables = BTreeMap::new();
    let mut hall_tables = BTreeMap::new();
    for table_config in &config.tables {
        let handle = match &hall {
            // Cluster mode: the pipeline runs where the table's lease is; until then frames
            // travel to that node.
            Some(cluster) => {
                let forwarder: Arc<dyn table::FrameForwarder> = Arc::clone(cluster) as Arc<dyn table::FrameForwarder>;
                let handle = table::new_table(table_config, &shared, Some(forwarder));
                hall_tables.insert(table_config.id.clone(), (table_config.clone(), Arc::clone(&handle)));
                handle
            }
            None => table::start_table(table_config, shared.clone()).await?,
        };
        if hall.is_none() {
            // One process pulls its cameras for good; a node pulls a table's camera while it
            // runs the table (`hall.rs`).
            pullers.spawn(&table_config.camera, Arc::clone(&handle));
        }
        tables.insert(table_config.id.clone(), handle);
    }
    // HTTPS (phone cameras need a secure origin) beside plain HTTP, bound before the hub so
    // that the hub knows its port.
    let https = match &config.https_listen {
        Some(listen) => {
            let listener = tokio::net::TcpListener::bind(listen)
                .await
                .map_err(|source| ServerError::Bind { addr: listen.clone(), source })?;
            let addr = listener.local_addr().map_err(|source| ServerError::Bind { addr: listen.clone(), source })?;
            let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
            if !addr.ip().is_unspecified() {
                names.push(addr.ip().to_string());
            }
            let identity =
                tls::identity(config.tls_cert.as_deref(), config.tls_key.as_deref(), &config.data_dir, &names)?;
            Some((listener, addr, identity))
        }
        None => None,
    };
    let mut hall_exit = None;
    if let Some(cluster) = &hall {
        // Before any table of this node logs: the bus hears every event the hall logs from now
        // on (what came before, an SSE client reads from the stream).
        cluster.follow_events(bus.clone()).await?;
        // Appends kept while NATS is away go out when it is back.
        cluster.spawn_sender(store.clone());
        // The hall view shows the tables running on the other nodes as their nodes tell.
        cluster.hear_tables(tables.clone()).await?;
        hall_exit =
            Some(crate::hall::Hall::new(Arc::clone(cluster), hall_tables, shared.clone(), pullers).start().await);
        tracing::info!(node = %cluster.node, tables = cluster.owned_tables().len(), "joined the hall");
    }
    let hub = Arc::new(Hub {
        cluster: hall,
        tables,
        store,
        bus,
        arbiter_token: arbiter_token.clone(),
        camera_token: camera_token.clone(),
        max_frame_bytes: config.max_frame_bytes,
        body_timeout: Duration::from_secs_f64(config.body_timeout_secs),
        clock: Arc::clone(&engines.clock),
        started: Instant::now(),
        https_port: https.as_ref().map(|(_, addr, _)| addr.port()),
    });
    let socket = tokio::net::TcpListener::bind(&config.listen)
        .await
        .map_err(|source| ServerError::Bind { addr: config.listen.clone(), source })?;
    let addr = socket.local_addr().map_err(|source| ServerError::Bind { addr: config.listen.clone(), source })?;
    let (shutdown, stop) = oneshot::channel::<()>();
    let app = router(Arc::clone(&hub));
    let limits = listener::HttpLimits {
        max_connections: config.max_connections,
        header_timeout: Duration::from_secs_f64(config.header_timeout_secs),
        body_timeout: Duration::from_secs_f64(config.body_timeout_secs),
    };
    let served = tokio::spawn(listener::serve(socket, app, limits, stop));
    tracing::info!(%addr, tables = hub.tables.len(), "tengen service listening");
    let (https_addr, tls_info, https_task, https_stop) = match https {
        Some((socket, https_addr, identity)) => {
            // The same router, limits and graceful stop as HTTP, after a TLS handshake that
            // has the header deadline.
            let (https_stop, stop) = oneshot::channel::<()>();
            let acceptor = tokio_rustls::TlsAcceptor::from(identity.config);
            let task = tokio::spawn(listener::serve_tls(socket, acceptor, router(Arc::clone(&hub)), limits, stop));
            tracing::info!(%https_addr, fingerprint = %identity.fingerprint, "HTTPS for phone cameras");
            (Some(https_addr), Some((identity.fingerprint, identity.created)), Some(task), Some(https_stop))
        }
        None => (None, None, None, None),
    };
    Ok(RunningServer {
        addr,
        arbiter_token,
        camera_token,
        hub,
        https_addr,
        tls: tls_info,
        shutdown: Some(shutdown),
        served,
        hall_exit,
        _lock: lock,
        https_stop,
        https: https_task,
    })
}

/// A game's referee rebuilt by replaying its log (a finished game, or the live game's record).
pub async fn replay_referee(
    hub: &Hub,
    game: &store::GameRow,
) -> Result<Box<dyn engine::TableReferee>, store::StoreError> {
    let Some(table) = hub.tables.get(&game.table) else {
        return Err(store::StoreError::Corrupt { seq: 0, message: "game of an unknown table".into() });
    };
    replay_game(table, &hub.store, game).await
}

/// A game of `table` rebuilt by replaying its log from `store`.
pub async fn replay_game(
    table: &table::TableHandle,
    store: &Store,
    game: &store::GameRow,
) -> Result<Box<dyn engine::TableReferee>, store::StoreError> {
    let inputs = store.replay_inputs(game.id).await?;
    let mut referee = table.referees().new_game(game);
    log::replay(referee.as_mut(), inputs);
    Ok(referee)
}
