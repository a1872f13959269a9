//! Test doubles and helpers shared by the server's integration tests.
//!
//! The doubles are deliberately simple and deterministic so the tests exercise the service
//! (transport, pipeline, store, replay, API) rather than vision or rules:
//! - `PixelBoardAnalyzer` reads a 19×19 PNG where each pixel is a point (black, white, grey
//!   empty, red occluded) — a "camera" whose frames are exact.
//! - `SimpleReferee` accepts one stone of the colour to move as a move; any stone that vanishes
//!   from the record raises a suspected infraction (Art. 17.5) that the arbiter answers.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

pub mod nats;

use std::path::PathBuf;
use std::sync::Arc;

use tengen_referee::{
    ArbiterAction, Event, EventKind, InfractionView, Message, Phase, PointRef, RecordAction, RecordEntry, Snapshot,
    Status,
};
use tengen_rules::{ByColor, Color, Move, Point, PointState, BOARD_POINTS};
use tengen_server::engine::{
    AnalyzeError, AnalyzerFactory, Clock, Corners, Engines, FrameAnalyzer, RefereeFactory, SystemClock, TableReferee,
};
use tengen_server::error::Error;
use tengen_server::json::RecordMove;
use tengen_server::model::Observation;
use tengen_sgf::{GameInfo, GameRecord, RecordedMove};

pub struct PixelBoardAnalyzer;

impl FrameAnalyzer for PixelBoardAnalyzer {
    fn analyze(&mut self, encoded: &[u8]) -> Result<Observation, AnalyzeError> {
        let img = image::load_from_memory(encoded).map_err(|e| AnalyzeError::Decode(e.to_string()))?.to_rgb8();
        if img.dimensions() != (19 * POINT_PX, 19 * POINT_PX) {
            return Err(AnalyzeError::BoardNotFound(format!("{:?}", img.dimensions())));
        }
        let points: Vec<PointState> = (0..19 * 19)
            .map(|i| img.get_pixel(i % 19 * POINT_PX, i / 19 * POINT_PX))
            .map(|p| match p.0 {
                [0, 0, 0] => PointState::Black,
                [255, 255, 255] => PointState::White,
                [255, 0, 0] => PointState::Unknown,
                _ => PointState::Empty,
            })
            .collect();
        let occluded = points.contains(&PointState::Unknown);
        Ok(Observation {
            points,
            corners: Some([[0.0, 0.0], [18.0, 0.0], [18.0, 18.0], [0.0, 18.0]]),
            confidence: 1.0,
            occluded,
            moved_cells: None,
            point_confidence: Vec::new(),
        })
    }
    fn set_calibration(&mut self, _corners: Option<Corners>) {}
}

pub struct PixelBoards;
impl AnalyzerFactory for PixelBoards {
    fn create(&self, _table: &str, _calibration: Option<Corners>) -> Box<dyn FrameAnalyzer> {
        Box::new(PixelBoardAnalyzer)
    }
}

/// Seconds since the epoch, the referee's time base.
#[allow(clippy::cast_precision_loss)]
fn seconds(at_ms: i64) -> f64 {
    at_ms as f64 / 1000.0
}

/// A deterministic referee double (see the module doc).
pub struct SimpleReferee {
    legal: Vec<char>,
    physical: Vec<char>,
    moves: Vec<RecordMove>,
    /// Its open alerts, as the referee raised them.
    alerts: Vec<Event>,
    next_alert: u64,
    warnings: ByColor<u32>,
    phase: Phase,
    result: Option<String>,
    /// What its alerts said, with their articles.
    comments: Vec<String>,
}

impl SimpleReferee {
    pub fn new() -> Self {
        Self {
            legal: vec!['.'; BOARD_POINTS],
            physical: vec!['.'; BOARD_POINTS],
            moves: vec![],
            alerts: vec![],
            next_alert: 1,
            warnings: ByColor::default(),
            phase: Phase::Playing,
            result: None,
            comments: vec![],
        }
    }
    fn to_move(&self) -> Color {
        if self.moves.len() & 1 == 0 {
            Color::Black
        } else {
            Color::White
        }
    }
    /// The referee's event of `kind`, saying `summary` (in both languages), with no article.
    fn event(kind: EventKind, status: Status, summary: String) -> Event {
        let mut event = Event::new("test", "test", 0, 0.0, kind, Message::new(summary.clone(), summary));
        event.status = status;
        event.article = None;
        event
    }
}

impl TableReferee for SimpleReferee {
    fn observe(&mut self, at_ms: i64, obs: &Observation) -> Vec<Event> {
        if obs.points.contains(&PointState::Unknown) {
            return vec![];
        }
        let seen: Vec<char> = obs.board_string().chars().collect();
        if seen == self.physical {
            return vec![];
        }
        self.physical = seen.clone();
        let mut events = vec![];
        let colour = self.to_move();
        let mine = if colour == Color::Black { 'B' } else { 'W' };
        let added: Vec<usize> = (0..BOARD_POINTS).filter(|&i| self.legal[i] == '.' && seen[i] != '.').collect();
        let vanished: Vec<usize> = (0..BOARD_POINTS).filter(|&i| self.legal[i] != '.' && seen[i] == '.').collect();
        if added.len() == 1 && seen[added[0]] == mine && self.phase == Phase::Playing {
            let i = added[0];
            self.legal[i] = mine;
            let number = u32::try_from(self.moves.len() + 1).unwrap();
            let point = Point::from_index(i);
            self.moves.push(RecordMove { number, colour, point: Some(point) });
            let mut e = Self::event(EventKind::Move, Status::Info, format!("{colour:?} {}", point.to_sgf()));
            e.move_number = Some(number);
            events.push(e);
        }
        if !vanished.is_empty() {
            let id = self.next_alert;
            self.next_alert += 1;
            let points: Vec<Point> = vanished.iter().map(|&i| Point::from_index(i)).collect();
            let sgf: Vec<String> = points.iter().map(|p| p.to_sgf()).collect();
            let summary = format!("stones gone: {}", sgf.join(" "));
            let mut e = Self::event(EventKind::MovedStone, Status::Suspected, summary.clone());
            e.infraction = Some(id);
            e.article = Some("17.5".into());
            e.move_number = u32::try_from(self.moves.len()).ok();
            e.points = points.iter().map(|&p| PointRef::of(p)).collect();
            e.t = seconds(at_ms);
            self.alerts.push(e.clone());
            self.comments.push(format!("[Art. 17.5] {summary}"));
            events.push(e);
        }
        events
    }

    fn arbiter(&mut self, _at_ms: i64, action: &ArbiterAction) -> Result<Vec<Event>, Error> {
        match action {
            ArbiterAction::Confirm { infraction: alert_id } | ArbiterAction::Dismiss { infraction: alert_id } => {
                let pos = self
                    .alerts
                    .iter()
                    .position(|a| a.infraction == Some(*alert_id))
                    .ok_or_else(|| Error::not_found(format!("no open alert {alert_id}")))?;
                let alert = self.alerts.remove(pos);
                let confirmed = matches!(action, ArbiterAction::Confirm { .. });
                if confirmed {
                    let side = self.to_move();
                    self.warnings[side] += 1;
                }
                let status = if confirmed { Status::Confirmed } else { Status::Dismissed };
                let mut e = Self::event(EventKind::MovedStone, status, alert.message.en);
                e.infraction = alert.infraction;
                Ok(vec![e])
            }
            ArbiterAction::Pass { side: colour } => {
                if *colour != self.to_move() {
                    return Err(Error::conflict("not that side's turn"));
                }
                let number = u32::try_from(self.moves.len() + 1).unwrap();
                self.moves.push(RecordMove { number, colour: *colour, point: None });
                Ok(vec![Self::event(EventKind::Pass, Status::Info, format!("{colour:?} passes"))])
            }
            ArbiterAction::EndGame { .. } => {
                self.phase = Phase::Ended;
                Ok(vec![Self::event(EventKind::GameEnd, Status::Info, "game ended".into())])
            }
            _ => Err(Error::invalid_action("not supported by the test referee")),
        }
    }

    fn set_result(&mut self, result: &str) {
        self.result = Some(result.to_owned());
    }

    fn snapshot(&self) -> Snapshot {
        // Its boards in the referee's alphabet (`.XO`), 19 rows.
        let rows = |points: &[char]| -> Vec<String> {
            let text: String = points
                .iter()
                .map(|&c| match c {
                    'B' => 'X',
                    'W' => 'O',
                    other => other,
                })
                .collect();
            text.as_bytes().chunks(19).map(|row| String::from_utf8_lossy(row).into_owned()).collect()
        };
        let moves = self
            .moves
            .iter()
            .map(|m| RecordEntry {
                number: m.number,
                side: m.colour,
                action: m.point.map_or(RecordAction::Pass, |point| RecordAction::Place { point }),
                t: 0.0,
                captured: vec![],
                struck: false,
            })
            .collect();
        let open =
            |e: &Event| InfractionView { id: e.infraction.unwrap_or_default(), status: e.status, event: e.clone() };
        Snapshot {
            table: "test".into(),
            game: "test".into(),
            phase: self.phase,
            legal: rows(&self.legal),
            physical: rows(&self.physical),
            differences: vec![],
            moves,
            to_move: self.to_move(),
            to_move_uncertain: false,
            move_number: u32::try_from(self.moves.len()).unwrap(),
            open_infractions: self.alerts.iter().map(open).collect(),
            decided_infractions: vec![],
            warnings: self.warnings,
            captures: ByColor::default(),
            dead: vec![],
            result: None,
            colours_corrected: false,
            players_swapped: false,
        }
    }

    fn hand_result(&self) -> Option<&str> {
        self.result.as_deref()
    }

    fn record(&self, info: &GameInfo) -> GameRecord {
        // The test referee's own small record: its moves, its alerts as the root comment.
        let mut record = GameRecord::new(19, 19);
        record.info.black_name.clone_from(&info.black_name);
        record.info.white_name.clone_from(&info.white_name);
        record.info.result = self.result.clone();
        record.root_comment = Some(self.comments.join("\n")).filter(|c| !c.is_empty());
        for m in &self.moves {
            let mv = m.point.map_or(Move::Pass, Move::Place);
            record.moves.push(RecordedMove { color: m.colour, mv, comment: None });
        }
        record
    }
}

pub struct SimpleReferees;
impl RefereeFactory for SimpleReferees {
    fn new_game(&self, _game: &tengen_server::store::GameRow) -> Box<dyn TableReferee> {
        Box::new(SimpleReferee::new())
    }
}

pub fn test_engines() -> Engines {
    Engines { analyzers: Arc::new(PixelBoards), referees: Arc::new(SimpleReferees), clock: Arc::new(SystemClock) }
}

/// A clock that moves on by `step_ms` every time it is read: the real referee's stabiliser
/// (several frames over at least a second) is satisfied by a few posts, without waiting.
pub struct SteppingClock {
    now_ms: std::sync::atomic::AtomicI64,
    step_ms: i64,
}

impl Clock for SteppingClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.fetch_add(self.step_ms, std::sync::atomic::Ordering::SeqCst)
    }
}

/// Pixel boards read exactly, judged by the real referee (`tengen-referee`), on a stepping clock.
pub fn real_referee_engines() -> Engines {
    Engines {
        analyzers: Arc::new(PixelBoards),
        referees: Arc::new(tengen_server::adapters::RefereeAdapters),
        clock: Arc::new(SteppingClock { now_ms: std::sync::atomic::AtomicI64::new(1_000_000), step_ms: 250 }),
    }
}

/// Pixels a side of one point in a [`board_png`] frame: 19 × 4 = 76 pixels a side, above the
/// smallest frame the service accepts.
pub const POINT_PX: u32 = 4;

/// A 19×19-point PNG "frame" (each point a square of `POINT_PX` pixels): `stones` are
/// (col, row, 'B'|'W'|'?').
pub fn board_png(stones: &[(u32, u32, char)]) -> Vec<u8> {
    let side = 19 * POINT_PX;
    let mut img = image::RgbImage::from_pixel(side, side, image::Rgb([128, 128, 128]));
    for &(c, r, s) in stones {
        let colour = match s {
            'B' => [0, 0, 0],
            'W' => [255, 255, 255],
            _ => [255, 0, 0],
        };
        for (dx, dy) in (0..POINT_PX).flat_map(|dx| (0..POINT_PX).map(move |dy| (dx, dy))) {
            img.put_pixel(c * POINT_PX + dx, r * POINT_PX + dy, image::Rgb(colour));
        }
    }
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// A fresh temporary folder.
pub fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("tengen-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub const ARBITER: &str = "arbiter-token-for-tests";
pub const CAMERA: &str = "camera-token-for-tests";

pub fn test_config(data_dir: PathBuf, tables: &[&str]) -> tengen_server::Config {
    tengen_server::Config {
        listen: "127.0.0.1:0".into(),
        data_dir,
        arbiter_token: Some(ARBITER.into()),
        camera_token: Some(CAMERA.into()),
        max_camera_fps: 1000.0,
        tables: tables
            .iter()
            .map(|id| tengen_server::TableConfig {
                name: Some(format!("Table {id}")),
                ..tengen_server::TableConfig::posting(*id)
            })
            .collect(),
        ..tengen_server::Config::default()
    }
}

/// A service on a data folder of its own, started with [`test_config`]; stopping it removes the
/// folder.
pub struct TestService {
    pub server: tengen_server::RunningServer,
    pub dir: PathBuf,
    config: tengen_server::Config,
}

impl TestService {
    /// The service of these tables with the test doubles ([`test_engines`]).
    pub async fn start(name: &str, tables: &[&str]) -> Self {
        Self::start_with(name, tables, test_engines(), |_| {}).await
    }

    /// The service of these tables with `engines`, its configuration changed by `adjust`.
    pub async fn start_with(
        name: &str,
        tables: &[&str],
        engines: Engines,
        adjust: impl FnOnce(&mut tengen_server::Config),
    ) -> Self {
        let dir = temp_dir(name);
        let mut config = test_config(dir.clone(), tables);
        adjust(&mut config);
        let server = tengen_server::start(config.clone(), engines).await.unwrap();
        Self { server, dir, config }
    }

    pub fn hub(&self) -> Arc<tengen_server::Hub> {
        Arc::clone(&self.server.hub)
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        self.server.addr
    }

    /// Shuts the service down (its store closed) and starts it again on the same folder.
    pub async fn restart(self, engines: Engines) -> Self {
        self.server.shutdown().await.unwrap();
        let server = tengen_server::start(self.config.clone(), engines).await.unwrap();
        Self { server, ..self }
    }

    /// Shuts the service down, waiting for its store to close, and removes its folder.
    pub async fn stop(self) {
        self.server.shutdown().await.unwrap();
        let _ = std::fs::remove_dir_all(self.dir);
    }

    /// Stops the service at once and removes its folder.
    pub fn stop_now(self) {
        self.server.shutdown_now();
        let _ = std::fs::remove_dir_all(self.dir);
    }
}

/// GET `path` from a real listener, expecting 200 and JSON.
pub async fn get_json(addr: std::net::SocketAddr, path: &str) -> serde_json::Value {
    let (status, _, body) = http(addr, "GET", path, &[], b"").await;
    assert_eq!(status, 200, "{path}");
    serde_json::from_slice(&body).unwrap()
}

/// POSTs a pixel-board PNG (see [`board_png`]) as `table`'s camera; returns the HTTP status.
pub async fn post_png(addr: std::net::SocketAddr, table: &str, stones: &[(u32, u32, char)]) -> u16 {
    let auth = format!("Bearer {CAMERA}");
    http(
        addr,
        "POST",
        &format!("/api/tables/{table}/frames"),
        &[("Authorization", &auth), ("Content-Type", "image/png")],
        &board_png(stones),
    )
    .await
    .0
}

/// POSTs an arbiter action to `table` with the arbiter's token: (status, body).
pub async fn post_arbiter(addr: std::net::SocketAddr, table: &str, action: &serde_json::Value) -> (u16, Vec<u8>) {
    let auth = format!("Bearer {ARBITER}");
    let (status, _, body) = http(
        addr,
        "POST",
        &format!("/api/tables/{table}/arbiter"),
        &[("Authorization", &auth), ("Content-Type", "application/json")],
        action.to_string().as_bytes(),
    )
    .await;
    (status, body)
}

/// The service's events (the first thousand), oldest first.
pub async fn all_events(addr: std::net::SocketAddr) -> Vec<serde_json::Value> {
    get_json(addr, "/api/events?limit=1000").await["events"].as_array().unwrap().clone()
}

/// Raises an alert at a table as its camera shows it: a stone played, then taken off the board
/// (for [`SimpleReferee`], a stone that vanishes from the record).
pub async fn raise_alert(addr: std::net::SocketAddr, table: &str) {
    post_png(addr, table, &[(3, 3, 'B')]).await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    post_png(addr, table, &[]).await;
}

/// Stones of a game in progress after `n` moves (distinct points, rows 0, 3, 6, …; the test
/// referee does not capture).
pub fn position(n: usize) -> Vec<(u32, u32, char)> {
    (0..n)
        .map(|i| {
            let i = u32::try_from(i).unwrap();
            (i % 19, (i / 19) * 3, if i % 2 == 0 { 'B' } else { 'W' })
        })
        .collect()
}

/// Waits up to `secs` until `table` has analysed more frames than the `before` it had.
pub async fn analysed(table: &Arc<tengen_server::table::TableHandle>, before: u64, secs: u64) -> bool {
    wait_until(secs, || {
        let table = Arc::clone(table);
        async move { table.metrics.latency.count() > before }
    })
    .await
}

/// The address a server started in a child process writes to `dir/addr`, waited for up to
/// `secs` (`what` names the child when it does not start).
pub fn child_address(dir: &std::path::Path, secs: u64, what: &str) -> std::net::SocketAddr {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join("addr")) {
            return text.trim().parse().unwrap();
        }
        assert!(std::time::Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Opens the event stream at `path` over a raw loopback connection, resuming after
/// `last_event_id` when given.
pub async fn open_sse(addr: std::net::SocketAddr, path: &str, last_event_id: Option<&str>) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n");
    if let Some(id) = last_event_id {
        request.push_str(&format!("Last-Event-ID: {id}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

/// Minimal HTTP/1.1 client over a TcpStream for tests against a real listener.
pub async fn http(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request =
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    // Read to the end of the body: Content-Length when given (some servers keep the
    // connection open), else until the peer closes.
    let mut response = Vec::new();
    let read = async {
        let mut buf = [0u8; 8192];
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                return;
            }
            response.extend_from_slice(&buf[..n]);
            if let Some(split) = response.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&response[..split]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:").and_then(|v| v.trim().parse::<usize>().ok()));
                if length.is_some_and(|len| response.len() >= split + 4 + len) {
                    return;
                }
            }
        }
    };
    // Generous: a record is rebuilt by replaying its whole log, on a loaded machine too.
    tokio::time::timeout(std::time::Duration::from_secs(30), read).await.expect("response in time");
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&response[..split]).to_string();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut body = response[split + 4..].to_vec();
    if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    (status, head, body)
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(line_end) = data.windows(2).position(|w| w == b"\r\n") else { return out };
        let size = usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap().trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[line_end + 2..line_end + 2 + size]);
        data = &data[line_end + 4 + size..];
    }
}

/// Polls `check` every 20 ms for up to `secs`.
pub async fn wait_until<F, Fut>(secs: u64, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(secs);
    while tokio::time::Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}

/// Reads SSE lines from a raw loopback connection until `want` data events were seen (or 15 s
/// passed), then drops the connection: a client cut off.
pub async fn read_sse(
    addr: std::net::SocketAddr,
    path: &str,
    last_event_id: Option<i64>,
    want: usize,
) -> Vec<(Option<i64>, String, serde_json::Value)> {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let stream = open_sse(addr, path, last_event_id.map(|id| id.to_string()).as_deref()).await;
    let mut lines = BufReader::new(stream).lines();
    let mut out = vec![];
    let (mut id, mut name) = (None, String::new());
    let read = async {
        while let Ok(Some(line)) = lines.next_line().await {
            // Chunked framing lines are hex sizes; SSE fields are what matter.
            if let Some(v) = line.strip_prefix("id: ").or_else(|| line.strip_prefix("id:")) {
                id = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("event: ").or_else(|| line.strip_prefix("event:")) {
                name = v.trim().to_owned();
            } else if let Some(v) = line.strip_prefix("data: ").or_else(|| line.strip_prefix("data:")) {
                if name == "event" {
                    out.push((id, name.clone(), serde_json::from_str(v).unwrap()));
                    if out.len() >= want {
                        return;
                    }
                }
                id = None;
            }
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(15), read).await;
    out
}
