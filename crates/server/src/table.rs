//! One table's pipeline: a one-frame slot where the newest frame wins, and a task that reads
//! frames (vision on the blocking pool, bounded by a shared semaphore), feeds the referee, logs
//! inputs and events with evidence, and publishes them; plus the arbiter's commands and the
//! camera lost/back watch. Tables share nothing but the store, the bus and the semaphore, so a
//! slow or dead camera never stalls another table.

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tengen_rules::Point;
use tokio::sync::{broadcast, mpsc, oneshot, Notify, Semaphore};

use crate::auth::RateLimiter;
use crate::config::TableConfig;
use crate::engine::{apply_request, game_view, Corners, Engines, FrameAnalyzer, RefereeFactory, TableReferee};
use crate::error::Error;
use crate::imaging::FrameFormat;
use crate::json::{
    ArbiterAction, CameraStatus, Detail, GameView, RefereeEvent, RefereeRequest, ServiceKind, Severity, StoredEvent,
    TableDetail, TableSummary,
};
use crate::log::RepeatKey;
use crate::metrics::{Stage, TableMetrics};
use crate::model::{GameSetup, Observation, StartPosition};
use crate::store::{Evidence, GameRow, GameStart, LogBatch, StoreError};
use crate::table_log::TableLog;

/// One encoded camera frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// JPEG or PNG bytes.
    pub bytes: Arc<Vec<u8>>,
    /// Its encoding.
    pub format: FrameFormat,
    /// When it arrived (for latency).
    pub received: Instant,
    /// When it arrived (ms since the epoch, for the referee and the log).
    pub at_ms: i64,
}

/// A slot holding at most one frame: a newer frame replaces an unprocessed one (and the
/// replacement is counted as a drop), so a slow pipeline never queues frames without bound and
/// always works on the newest picture.
#[derive(Debug, Default)]
pub struct FrameSlot {
    latest: Mutex<Option<Frame>>,
    ready: Notify,
}

impl FrameSlot {
    /// Puts a frame in; true when it replaced one that was never processed.
    pub fn put(&self, frame: Frame) -> bool {
        let replaced = match self.latest.lock() {
            Ok(mut slot) => slot.replace(frame).is_some(),
            Err(_) => false,
        };
        self.ready.notify_one();
        replaced
    }

    /// Waits until a frame is there, without taking it (so that the pipeline can wait for a
    /// core first and then take the newest frame, not the one that was there when it began
    /// waiting).
    pub async fn ready(&self) {
        while !self.latest.lock().is_ok_and(|s| s.is_some()) {
            self.ready.notified().await;
        }
    }

    /// Takes the frame if there is one.
    pub fn try_take(&self) -> Option<Frame> {
        self.latest.lock().ok().and_then(|mut s| s.take())
    }
}

/// What a table shows right now (read by the API without touching the pipeline).
#[derive(Debug, Clone)]
pub struct LiveState {
    /// The current game.
    pub game: GameRow,
    /// The referee's view.
    pub view: GameView,
    /// Camera state.
    pub camera: CameraStatus,
    /// The latest frame received.
    pub last_frame: Option<Frame>,
    /// The calibration in force.
    pub calibration: Option<Corners>,
    /// The latest vision error, cleared by a good frame.
    pub last_error: Option<String>,
    /// The camera's latest failure (a refused connection, a timeout, a frame refused at the
    /// edge), cleared when it delivers a good frame.
    pub camera_error: Option<String>,
    /// The latest observation's board string (physical board, this frame).
    pub last_reading: Option<String>,
}

/// A message on the in-process bus.
#[derive(Debug, Clone)]
pub enum BusMessage {
    /// A stored event.
    Event(Box<StoredEvent>),
    /// A table changed.
    Table(Box<TableSummary>),
}

enum Command {
    Arbiter(ArbiterAction, oneshot::Sender<Result<Vec<StoredEvent>, Error>>),
    Calibrate(Option<Corners>, oneshot::Sender<Result<(), Error>>),
}

/// Where a table's frames go when its pipeline runs on another node (cluster mode).
pub trait FrameForwarder: Send + Sync {
    /// Sends `frame` towards the node analysing `table`; the error says why it cannot.
    fn forward(&self, table: &str, frame: &Frame) -> Result<(), String>;
}

/// A table's pipeline running in this process. Dropping it leaves the pipeline running (one
/// process runs its tables for good); [`Pipeline::stop`] ends it (a node letting a table go).
pub struct Pipeline {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Pipeline {
    /// Stops the pipeline after the frame or command in hand and waits until it has stopped.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// The shared handle of a table.
pub struct TableHandle {
    /// Table id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Default komi for new games.
    pub komi: f64,
    /// Default start of new games (even, handicap, as found).
    pub start: StartPosition,
    /// Where frames come from.
    pub source: String,
    /// The table's own camera token, if any.
    pub camera_token: Option<String>,
    /// The token of this table's phone-camera page (made at start; good for this table only).
    pub phone_token: String,
    /// Counters.
    pub metrics: TableMetrics,
    slot: FrameSlot,
    limiter: Mutex<RateLimiter>,
    live: RwLock<LiveState>,
    commands: mpsc::Sender<Command>,
    /// The commands' receiving end while no pipeline runs here (a pipeline holds it).
    idle_commands: Mutex<Option<mpsc::Receiver<Command>>>,
    /// Whether this process runs the table's pipeline.
    running: std::sync::atomic::AtomicBool,
    /// Cluster mode: where frames go while the pipeline runs on another node.
    forwarder: Option<Arc<dyn FrameForwarder>>,
    /// Cluster mode: this node's name (a table running here says so).
    node: Option<String>,
    /// Cluster mode: the table as its node last told the hall, while it runs elsewhere.
    remote: RwLock<Option<Box<TableDetail>>>,
    referees: Arc<dyn RefereeFactory>,
    bus: broadcast::Sender<BusMessage>,
}

impl TableHandle {
    /// Offers a frame to the pipeline (never blocks; the newest frame wins).
    pub fn offer_frame(&self, frame: Frame) {
        self.metrics.frames_received.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(forwarder) = self.forwarder.as_ref().filter(|_| !self.is_running()) {
            if let Err(err) = forwarder.forward(&self.id, &frame) {
                self.metrics.frames_rejected.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.camera_failed(&err);
            }
            return;
        }
        let recovered = match self.live.write() {
            Ok(mut live) => {
                live.last_frame = Some(frame.clone());
                live.camera_error.take().is_some()
            }
            Err(_) => false,
        };
        if recovered {
            self.publish_summary();
        }
        if self.slot.put(frame) {
            self.metrics.frames_dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Records a failure of the camera (shown by `/api/tables` and the dashboard until a good
    /// frame arrives); the hall hears of it when the message changes.
    pub fn camera_failed(&self, error: &str) {
        let changed = match self.live.write() {
            Ok(mut live) if live.camera_error.as_deref() != Some(error) => {
                live.camera_error = Some(error.to_owned());
                true
            }
            _ => false,
        };
        if changed {
            self.publish_summary();
        }
    }

    fn publish_summary(&self) {
        if let Some(summary) = self.summary() {
            let _ = self.bus.send(BusMessage::Table(Box::new(summary)));
        }
    }

    /// The referee factory of this table (to rebuild finished games' views).
    pub fn referees(&self) -> Arc<dyn RefereeFactory> {
        Arc::clone(&self.referees)
    }

    /// Takes a rate-limit token for a posted frame.
    pub fn allow_post(&self) -> bool {
        self.limiter.lock().map(|mut l| l.allow(Instant::now())).unwrap_or(false)
    }

    /// A copy of the live state.
    pub fn live(&self) -> Option<LiveState> {
        self.live.read().ok().map(|l| l.clone())
    }

    /// The table at a glance (in cluster mode, of a table running elsewhere: as its node told).
    pub fn summary(&self) -> Option<TableSummary> {
        if let Some(remote) = self.remote_detail() {
            return Some(remote.summary);
        }
        let live = self.live.read().ok()?;
        Some(self.summary_of(&live))
    }

    /// The table in full (in cluster mode, of a table running elsewhere: as its node told).
    pub fn detail(&self) -> Option<TableDetail> {
        if let Some(remote) = self.remote_detail() {
            return Some(remote);
        }
        let live = self.live()?;
        let summary = self.summary()?;
        Some(TableDetail {
            summary,
            game_info: live.game,
            view: live.view,
            calibration: live.calibration,
            last_reading: live.last_reading,
            latency_p50_ms: self.metrics.recent_quantile(0.5).map(|s| s * 1000.0),
            latency_p99_ms: self.metrics.recent_quantile(0.99).map(|s| s * 1000.0),
        })
    }

    /// What the table's node last told of it, while it runs on another node.
    fn remote_detail(&self) -> Option<TableDetail> {
        if self.is_running() {
            return None;
        }
        self.remote.read().ok()?.as_deref().cloned()
    }

    /// Keeps what the table's node (another node of the hall) tells of it, and says it on this
    /// node's bus; false (ignored) while the table runs here.
    pub fn told_by_its_node(&self, detail: TableDetail) -> bool {
        if self.is_running() || detail.summary.id != self.id {
            return false;
        }
        let summary = detail.summary.clone();
        let changed = match self.remote.write() {
            Ok(mut remote) => {
                let changed = remote.as_ref().is_none_or(|r| r.summary != summary);
                *remote = Some(Box::new(detail));
                changed
            }
            Err(_) => false,
        };
        if changed {
            let _ = self.bus.send(BusMessage::Table(Box::new(summary)));
        }
        true
    }

    fn summary_of(&self, live: &LiveState) -> TableSummary {
        use std::sync::atomic::Ordering::Relaxed;
        TableSummary {
            id: self.id.clone(),
            name: self.name.clone(),
            game: live.game.id,
            move_number: live.view.moves.len(),
            to_move: live.view.to_move,
            legal: live.view.legal.clone(),
            physical: live.view.physical.clone(),
            open_alerts: live.view.open_alerts.len(),
            newest_alert: live.view.open_alerts.iter().max_by_key(|a| (a.raised_ms, a.alert_id)).cloned(),
            black: player_label(
                live.game.black.as_deref(),
                live.game.setup.pairing.as_ref().and_then(|p| p.black.rank.as_deref()),
            ),
            white: player_label(
                live.game.white.as_deref(),
                live.game.setup.pairing.as_ref().and_then(|p| p.white.rank.as_deref()),
            ),
            warnings: live.view.warnings,
            phase: live.view.phase,
            result: live.view.result.clone(),
            result_text: live.view.result_text.clone(),
            camera: live.camera,
            source: self.source.clone(),
            frames: self.metrics.frames_received.load(Relaxed),
            dropped: self.metrics.frames_dropped.load(Relaxed),
            last_error: live.last_error.clone(),
            camera_error: live.camera_error.clone(),
            node: self.node.clone().filter(|_| self.is_running()),
        }
    }

    /// Whether this process runs the table's pipeline (always, but in cluster mode).
    pub fn is_running(&self) -> bool {
        self.running.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Refuses a command for a table whose pipeline runs on another node.
    fn here(&self) -> Result<(), Error> {
        if self.is_running() {
            return Ok(());
        }
        Err(Error::new(
            crate::error::ErrorKind::Conflict,
            "table_elsewhere",
            format!("table {} is analysed by another node of the hall: send this to that node", self.id),
        ))
    }

    /// Applies an arbiter action through the table's task (serialised with frames).
    pub async fn arbiter(&self, action: ArbiterAction) -> Result<Vec<StoredEvent>, Error> {
        self.ask(|reply| Command::Arbiter(action, reply)).await
    }

    /// Sets or clears the calibration.
    pub async fn calibrate(&self, corners: Option<Corners>) -> Result<(), Error> {
        self.ask(|reply| Command::Calibrate(corners, reply)).await
    }

    /// Sends a command to the table's task and waits for its answer.
    async fn ask<T>(&self, command: impl FnOnce(oneshot::Sender<Result<T, Error>>) -> Command) -> Result<T, Error> {
        self.here()?;
        let stopped = || Error::internal("the table's pipeline has stopped");
        let (reply, answer) = oneshot::channel();
        self.commands.send(command(reply)).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

/// "Name (3D)", or the name alone.
fn player_label(name: Option<&str>, rank: Option<&str>) -> Option<String> {
    let name = name?;
    Some(match rank {
        Some(rank) => format!("{name} ({rank})"),
        None => name.to_owned(),
    })
}

/// What every table task shares.
#[derive(Clone)]
pub struct Shared {
    /// The log tables write to (the SQLite store, or the hall's stream mirrored into it).
    pub log: TableLog,
    /// Cluster mode: this node's name.
    pub node: Option<String>,
    /// The bus.
    pub bus: broadcast::Sender<BusMessage>,
    /// Vision, referee, clock.
    pub engines: Engines,
    /// Bounds how many frames are analysed at once, FIFO-fair across tables.
    pub analysis_permits: Arc<Semaphore>,
    /// Bounds how many full board searches (tables with nothing tracked yet) run at once, in a
    /// lane of their own beside the tracked frames' lane: when many tables start together, the
    /// searches go on while the tables already tracked keep being served.
    pub search_permits: Arc<Semaphore>,
    /// No frame for this long: camera lost.
    pub camera_timeout: Duration,
    /// Posted frames per second allowed.
    pub max_camera_fps: f64,
    /// Longest a frame's analysis may search for the board (the vision's step budget bounds
    /// the work; this bounds the time on a loaded machine).
    pub search_deadline: Duration,
}

/// Restores a table from the store (replaying its current game into a fresh referee) and starts
/// its task, for good.
pub async fn start_table(config: &TableConfig, shared: Shared) -> Result<Arc<TableHandle>, StoreError> {
    let handle = new_table(config, &shared, None);
    // Dropped, the pipeline runs for as long as the process.
    let _pipeline = run_pipeline(&handle, config, shared).await?;
    Ok(handle)
}

/// A table's handle with no pipeline running yet (cluster mode: frames go to `forwarder`
/// until [`run_pipeline`] starts one here).
pub fn new_table(
    config: &TableConfig,
    shared: &Shared,
    forwarder: Option<Arc<dyn FrameForwarder>>,
) -> Arc<TableHandle> {
    let (commands, command_rx) = mpsc::channel(16);
    let source = match &config.camera {
        crate::config::CameraConfig::Post => "post",
        crate::config::CameraConfig::Mjpeg { .. } => "mjpeg",
        crate::config::CameraConfig::Snapshot { .. } => "snapshot",
        crate::config::CameraConfig::Rtsp { .. } => "rtsp",
        crate::config::CameraConfig::Folder { .. } => "folder",
    };
    let burst = shared.max_camera_fps.max(1.0) * 2.0;
    // Until a pipeline runs here, the table shows an empty game of its configured setup.
    let game = GameRow {
        id: 0,
        table: config.id.clone(),
        komi: config.komi,
        started_ms: 0,
        black: None,
        white: None,
        setup: GameSetup { start: config.start, pairing: None },
    };
    let view = game_view(shared.engines.referees.new_game(&game).as_ref());
    Arc::new(TableHandle {
        id: config.id.clone(),
        name: config.name.clone().unwrap_or_else(|| format!("Table {}", config.id)),
        komi: config.komi,
        start: config.start,
        source: source.into(),
        camera_token: config.camera_token.clone(),
        phone_token: crate::auth::generate_token(),
        metrics: TableMetrics::default(),
        slot: FrameSlot::default(),
        limiter: Mutex::new(RateLimiter::new(shared.max_camera_fps, burst)),
        live: RwLock::new(LiveState {
            game,
            view,
            camera: CameraStatus::Waiting,
            last_frame: None,
            calibration: config.calibration.as_ref().map(|c| c.corners),
            last_error: None,
            camera_error: None,
            last_reading: None,
        }),
        commands,
        idle_commands: Mutex::new(Some(command_rx)),
        running: std::sync::atomic::AtomicBool::new(false),
        forwarder,
        node: shared.node.clone(),
        remote: RwLock::new(None),
        referees: Arc::clone(&shared.engines.referees),
        bus: shared.bus.clone(),
    })
}

/// Starts the table's pipeline here: brings its log up to date (cluster mode: from the hall's
/// stream), rebuilds the referee by replaying the current game, and runs its task.
pub async fn run_pipeline(
    handle: &Arc<TableHandle>,
    config: &TableConfig,
    shared: Shared,
) -> Result<Pipeline, StoreError> {
    let caught_up = shared.log.catch_up(&config.id).await?;
    if caught_up > 0 {
        tracing::info!(table = %config.id, records = caught_up, "read the table's log from the hall");
    }
    let store = shared.log.store();
    let now = shared.engines.clock.now_ms();
    let game = match store.current_game(&config.id).await? {
        Some(game) => game,
        None => {
            let setup = GameSetup { start: config.start, pairing: None };
            shared
                .log
                .create_game(GameStart { table: config.id.clone(), komi: config.komi, setup, started_ms: now })
                .await?
        }
    };
    let mut referee = shared.engines.referees.new_game(&game);
    let replayed = crate::log::replay(referee.as_mut(), store.replay_inputs(game.id).await?);
    for (at_ms, err) in &replayed.refused {
        tracing::warn!(table = %config.id, at_ms, %err, "logged arbiter action refused on replay");
    }
    if replayed.inputs > 0 {
        tracing::info!(table = %config.id, game = game.id, replayed = replayed.inputs, "resumed game from the log");
    }
    let calibration = match store.calibration(&config.id).await? {
        Some(c) => Some(c),
        None => config.calibration.as_ref().map(|c| c.corners),
    };
    let analyzer = shared.engines.analyzers.create(&config.id, calibration);
    let commands = handle
        .idle_commands
        .lock()
        .ok()
        .and_then(|mut idle| idle.take())
        .ok_or_else(|| StoreError::Cluster(format!("table {}: its pipeline already runs", config.id)))?;
    if let Ok(mut live) = handle.live.write() {
        live.game = game.clone();
        live.view = game_view(referee.as_ref());
        live.calibration = calibration;
    }
    handle.running.store(true, std::sync::atomic::Ordering::SeqCst);
    let task = TableTask {
        handle: Arc::clone(handle),
        shared,
        analyzer: Some(analyzer),
        referee,
        game,
        last_logged: replayed.last_key,
        stable_frame: None,
        camera: CameraStatus::Waiting,
        last_frame_at: None,
    };
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(task.run(commands, stopped));
    handle.publish_summary();
    Ok(Pipeline { stop, task })
}

struct TableTask {
    handle: Arc<TableHandle>,
    shared: Shared,
    analyzer: Option<Box<dyn FrameAnalyzer>>,
    referee: Box<dyn TableReferee>,
    game: GameRow,
    /// The key of what the referee was last fed: a repeat is logged short.
    last_logged: Option<RepeatKey>,
    /// The frame and corners at the last change the referee accepted: the "before" evidence.
    stable_frame: Option<(Frame, Option<Corners>)>,
    camera: CameraStatus,
    last_frame_at: Option<Instant>,
}

impl TableTask {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>, stop: oneshot::Receiver<()>) {
        let handle = Arc::clone(&self.handle);
        // A dropped `Pipeline` (its sender gone) leaves the task running.
        let mut stop = Some(stop);
        loop {
            let deadline = match (self.camera, self.last_frame_at) {
                (CameraStatus::Live, Some(at)) => Some(at + self.shared.camera_timeout),
                _ => None,
            };
            let lost = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = handle.slot.ready() => self.process_next_frame().await,
                command = commands.recv() => match command {
                    Some(Command::Arbiter(action, reply)) => {
                        let _ = reply.send(self.apply_action(action).await);
                    }
                    Some(Command::Calibrate(corners, reply)) => {
                        let _ = reply.send(self.calibrate(corners).await);
                    }
                    None => break,
                },
                () = lost => self.camera_changed(CameraStatus::Lost).await,
                asked = async {
                    match stop.as_mut() {
                        Some(asked) => asked.await.is_ok(),
                        None => std::future::pending().await,
                    }
                } => {
                    if asked {
                        break;
                    }
                    stop = None;
                }
            }
        }
        // The next pipeline of this table (here, after a new lease) takes the commands.
        handle.running.store(false, std::sync::atomic::Ordering::SeqCst);
        if let Ok(mut idle) = handle.idle_commands.lock() {
            *idle = Some(commands);
        };
    }

    async fn camera_changed(&mut self, status: CameraStatus) {
        let previous = self.camera;
        self.camera = status;
        if let Ok(mut live) = self.handle.live.write() {
            live.camera = status;
        }
        let event = match (previous, status) {
            (CameraStatus::Live, CameraStatus::Lost) => RefereeEvent::service(
                ServiceKind::CameraLost,
                Severity::Notice,
                format!("No frame from the camera for {} s", self.shared.camera_timeout.as_secs()),
                None,
            ),
            (CameraStatus::Lost, CameraStatus::Live) => RefereeEvent::service(
                ServiceKind::CameraBack,
                Severity::Notice,
                "The camera is sending frames again".into(),
                None,
            ),
            _ => {
                self.publish_table();
                return;
            }
        };
        // A failed write is logged and shown on the table; the camera state is still right.
        let _ = self.log_and_publish(None, None, vec![(event, None)]).await;
    }

    /// A frame is waiting: wait for a core (for a table with nothing tracked yet, for a
    /// board-search slot), then take the newest frame, which may have replaced the one that
    /// was there when the wait began: a busy service reads fresh frames, not stale ones.
    async fn process_next_frame(&mut self) {
        self.last_frame_at = Some(Instant::now());
        if self.camera != CameraStatus::Live {
            self.camera_changed(CameraStatus::Live).await;
        }
        let analyzer = match self.analyzer.take() {
            Some(a) => a,
            None => {
                let calibration = self.handle.live().and_then(|l| l.calibration);
                self.shared.engines.analyzers.create(&self.handle.id, calibration)
            }
        };
        let searching = analyzer.needs_search();
        self.analyzer = Some(analyzer);
        // A board search runs in its own lane, beside the tracked tables' frames rather than
        // in their queue: waiting there for every search would take minutes at a cold start
        // of a hundred tables, and searches alone on the cores would stall the tracked tables.
        let lane = if searching { &self.shared.search_permits } else { &self.shared.analysis_permits };
        let Ok(permit) = Arc::clone(lane).acquire_owned().await else {
            return;
        };
        let Some(frame) = self.handle.slot.try_take() else {
            return;
        };
        let metrics = &self.handle.metrics;
        metrics.stages.add(Stage::Queue, frame.received.elapsed());
        if searching {
            metrics.board_searches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.process_frame(frame, permit).await;
    }

    /// Reads a frame (holding the permit, released as soon as the vision is done), feeds the
    /// referee, logs and publishes.
    async fn process_frame(&mut self, frame: Frame, permit: tokio::sync::OwnedSemaphorePermit) {
        let Some(mut analyzer) = self.analyzer.take() else {
            return;
        };
        let bytes = Arc::clone(&frame.bytes);
        let started = Instant::now();
        let cancel = crate::engine::CancelFlag::new();
        let deadline = tokio::spawn({
            let (cancel, after) = (cancel.clone(), self.shared.search_deadline);
            async move {
                tokio::time::sleep(after).await;
                cancel.cancel();
            }
        });
        let outcome = tokio::task::spawn_blocking(move || {
            let result = analyzer.analyze_cancellable(&bytes, &cancel);
            (analyzer, result)
        })
        .await;
        deadline.abort();
        drop(permit);
        use std::sync::atomic::Ordering::Relaxed;
        let handle = Arc::clone(&self.handle);
        let metrics = &handle.metrics;
        metrics.stages.add(Stage::Vision, started.elapsed());
        metrics.frames_analysed.fetch_add(1, Relaxed);
        let observation = match outcome {
            Ok((analyzer, result)) => {
                self.analyzer = Some(analyzer);
                match result {
                    Ok(obs) => obs,
                    Err(err) => {
                        metrics.analysis_errors.fetch_add(1, Relaxed);
                        if let Ok(mut live) = self.handle.live.write() {
                            live.last_error = Some(err.to_string());
                        }
                        metrics.record_latency(frame.received.elapsed().as_secs_f64());
                        return;
                    }
                }
            }
            Err(join) => {
                // The vision panicked: count it, drop the analyzer, a fresh one is made next frame.
                metrics.analysis_errors.fetch_add(1, Relaxed);
                tracing::error!(table = %self.handle.id, "vision panicked: {join}");
                return;
            }
        };
        let mut observation = observation;
        crate::log::quantise(&mut observation);
        let refereeing = Instant::now();
        let events: Vec<RefereeEvent> =
            self.referee.observe(frame.at_ms, &observation).iter().map(RefereeEvent::of_referee).collect();
        metrics.stages.add(Stage::Referee, refereeing.elapsed());
        let storing = Instant::now();
        let board = observation.board_string();
        let repeats = self.last_logged.as_ref().is_some_and(|key| key.repeated_by(&observation));
        let key = RepeatKey::of(&observation);
        if let Ok(mut live) = self.handle.live.write() {
            live.last_error = None;
            live.last_reading = Some(board.clone());
        }
        {
            // Every observation the referee saw is logged (a repeat as a short row): the
            // referee counts frames, so replaying only the changes would not rebuild its state.
            // Each alert's evidence is zoomed on its own points.
            let alert_points: Vec<Option<Vec<Point>>> = events
                .iter()
                .map(|e| (e.severity == Severity::Alert).then(|| e.points().iter().map(|p| p.point).collect()))
                .collect();
            let mut evidence: Vec<Option<Evidence>> = vec![None; events.len()];
            if alert_points.iter().any(Option::is_some) {
                let before = self.stable_frame.clone();
                let after = (frame.clone(), observation.corners);
                let wanted = alert_points.clone();
                if let Ok(made) = tokio::task::spawn_blocking(move || {
                    wanted
                        .iter()
                        .map(|points| {
                            points.as_ref().map(|points| {
                                let before = before.as_ref().map(|(f, c)| (f.bytes.as_slice(), c.as_ref()));
                                crate::evidence::alert_evidence(
                                    before,
                                    (after.0.bytes.as_slice(), after.1.as_ref()),
                                    points,
                                )
                            })
                        })
                        .collect::<Vec<_>>()
                })
                .await
                {
                    evidence = made;
                }
            }
            let produced = !events.is_empty();
            let with_evidence = events.into_iter().zip(evidence).collect();
            let at_ms = frame.at_ms;
            let logged = self.log_and_publish_at(at_ms, Some(observation.clone()), repeats, None, with_evidence).await;
            // When the write failed, the next frame logs its whole reading again.
            self.last_logged = logged.is_ok().then_some(key);
            if produced {
                self.stable_frame = Some((frame.clone(), observation.corners));
            }
        }
        if self.stable_frame.is_none() {
            self.stable_frame = Some((frame.clone(), observation.corners));
        }
        metrics.stages.add(Stage::Store, storing.elapsed());
        metrics.record_latency(frame.received.elapsed().as_secs_f64());
    }

    async fn apply_action(&mut self, action: ArbiterAction) -> Result<Vec<StoredEvent>, Error> {
        // Read first: an action that is not one (a point off the board) is refused as such.
        let request = RefereeRequest::try_from(&action)?;
        // Refused before the referee sees it when it cannot be logged now.
        self.shared.log.writable(&self.handle.id)?;
        let now = self.shared.engines.clock.now_ms();
        if let ArbiterAction::NewGame { komi, start, pairing } = &action {
            let komi = komi.unwrap_or(self.handle.komi);
            let setup = GameSetup { start: start.unwrap_or(self.handle.start), pairing: pairing.clone() };
            let start = GameStart { table: self.handle.id.clone(), komi, setup: setup.clone(), started_ms: now };
            let mut game = self.shared.log.create_game(start).await?;
            if let Some(p) = pairing {
                let (black, white) = (Some(p.black.display()), Some(p.white.display()));
                self.shared.log.set_players(&self.handle.id, game.id, black.clone(), white.clone()).await?;
                (game.black, game.white) = (black, white);
            }
            self.referee = self.shared.engines.referees.new_game(&game);
            self.game = game.clone();
            self.last_logged = None;
            self.stable_frame = None;
            if let Ok(mut live) = self.handle.live.write() {
                live.game = game;
            }
            let event = RefereeEvent::service(
                ServiceKind::GameStarted,
                Severity::Info,
                format!("New game ({}), komi {komi}", setup.start),
                Some(Detail::GameStarted { komi, start: setup.start }),
            );
            // The new game's log starts with this event; the action is not a referee input.
            return Ok(self.log_and_publish(None, None, vec![(event, None)]).await?);
        }
        let mut events = apply_request(self.referee.as_mut(), now, &request)?;
        if let ArbiterAction::SetColours { black, white, .. } = &action {
            // The names stay the organiser's; wrong colours after move 10 (Art. 17.1) swap them
            // only where the record is written, from the referee's logged ruling.
            let black = black.clone().or(self.game.black.clone());
            let white = white.clone().or(self.game.white.clone());
            if black != self.game.black || white != self.game.white {
                self.shared.log.set_players(&self.handle.id, self.game.id, black.clone(), white.clone()).await?;
                self.game.black = black;
                self.game.white = white;
                if let Ok(mut live) = self.handle.live.write() {
                    live.game = self.game.clone();
                }
            }
        }
        let mut acted = RefereeEvent::service(
            ServiceKind::Arbiter,
            Severity::Info,
            format!("Arbiter: {}", action.name().replace('_', " ")),
            Some(Detail::Action(action.clone())),
        );
        if let ArbiterAction::Confirm { alert_id } | ArbiterAction::Dismiss { alert_id } = &action {
            acted.alert_id = Some(*alert_id);
        }
        events.insert(0, acted);
        let events = events.into_iter().map(|e| (e, None)).collect();
        // Logged at the time the referee applied it, so a replay after a restart applies it at
        // the same time.
        Ok(self.log_and_publish_at(now, None, false, Some(action), events).await?)
    }

    async fn calibrate(&mut self, corners: Option<Corners>) -> Result<(), Error> {
        self.shared.log.writable(&self.handle.id)?;
        let now = self.shared.engines.clock.now_ms();
        self.shared.log.set_calibration(&self.handle.id, corners, now).await?;
        if let Some(analyzer) = self.analyzer.as_mut() {
            analyzer.set_calibration(corners);
        }
        if let Ok(mut live) = self.handle.live.write() {
            live.calibration = corners;
        }
        Ok(())
    }

    async fn log_and_publish(
        &mut self,
        observation: Option<Observation>,
        action: Option<ArbiterAction>,
        events: Vec<(RefereeEvent, Option<Evidence>)>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let now = self.shared.engines.clock.now_ms();
        self.log_and_publish_at(now, observation, false, action, events).await
    }

    async fn log_and_publish_at(
        &mut self,
        at_ms: i64,
        observation: Option<Observation>,
        observation_repeats: bool,
        action: Option<ArbiterAction>,
        events: Vec<(RefereeEvent, Option<Evidence>)>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        // Counted from what is logged: in a hall with NATS away the append returns no stored
        // events yet.
        let produced = events.len() as u64;
        let alerts = events.iter().filter(|(e, _)| e.severity == Severity::Alert).count() as u64;
        let batch = LogBatch {
            table: self.handle.id.clone(),
            game: self.game.id,
            at_ms,
            observation,
            observation_repeats,
            action,
            events,
        };
        let stored = match self.shared.log.append(batch).await {
            Ok(stored) => stored,
            Err(err) => {
                tracing::error!(table = %self.handle.id, %err, "cannot write the log");
                if let Ok(mut live) = self.handle.live.write() {
                    live.last_error = Some(format!("store: {err}"));
                }
                return Err(err);
            }
        };
        use std::sync::atomic::Ordering::Relaxed;
        self.handle.metrics.events.fetch_add(produced, Relaxed);
        self.handle.metrics.alerts.fetch_add(alerts, Relaxed);
        if !self.shared.log.events_from_hall() {
            for event in &stored {
                let _ = self.shared.bus.send(BusMessage::Event(Box::new(event.clone())));
            }
        }
        self.publish_table();
        Ok(stored)
    }

    fn publish_table(&self) {
        let view = game_view(self.referee.as_ref());
        let summary = match self.handle.live.write() {
            Ok(mut live) => {
                live.view = view;
                live.camera = self.camera;
                self.handle.summary_of(&live)
            }
            Err(_) => return,
        };
        let _ = self.shared.bus.send(BusMessage::Table(Box::new(summary)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: u8) -> Frame {
        Frame { bytes: Arc::new(vec![n]), format: FrameFormat::Jpeg, received: Instant::now(), at_ms: i64::from(n) }
    }

    #[tokio::test]
    async fn the_slot_keeps_only_the_newest_frame_and_reports_drops() {
        let slot = FrameSlot::default();
        assert!(!slot.put(frame(1)));
        assert!(slot.put(frame(2)));
        assert!(slot.put(frame(3)));
        slot.ready().await;
        assert_eq!(slot.try_take().map(|f| f.bytes[0]), Some(3));
        assert!(slot.try_take().is_none());
        let waiter = tokio::time::timeout(Duration::from_millis(50), slot.ready()).await;
        assert!(waiter.is_err(), "an empty slot waits");
        // A frame put while the pipeline waits wakes it, and the newest one is taken.
        let slot = Arc::new(slot);
        let waiting = tokio::spawn({
            let slot = Arc::clone(&slot);
            async move {
                slot.ready().await;
                slot.try_take().map(|f| f.bytes[0])
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        slot.put(frame(4));
        let taken = tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("woken").expect("task");
        assert_eq!(taken, Some(4));
    }
}
