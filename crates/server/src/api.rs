//! The HTTP edge: routes, authentication, size limits, JSON errors, the SSE stream, and the
//! embedded dashboard. Every write needs a token; reads are open (the spectator view).
//! The API is documented in `API.md` next to this crate's manifest.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use tokio::sync::broadcast;

use crate::auth::{bearer_token, constant_time_eq};
use crate::commands::TableCommand;
use crate::engine::{Clock, Corners};
use crate::error::{Error, ErrorKind};
use crate::imaging::{check_frame, FrameError};
use crate::json::{
    ArbiterAction, ArbiterReply, Calibration, CalibrationBody, EventsPage, EventsQuery, FrameAccepted, GameDetail,
    Health, Role, StoredEvent, StreamQuery, TableDetail, TableSummary,
};
use crate::store::{EventFilter, GameRow, Store};
use crate::table::{BusMessage, Frame, TableHandle};

/// Largest JSON body accepted.
pub const MAX_JSON_BYTES: usize = 64 * 1024;
/// Most events one `/api/events` page returns.
pub const MAX_EVENTS_PAGE: usize = 1000;
/// Events an SSE client's backfill reads from the store at a time: a client resuming far back
/// holds one page in memory, not the rest of the log.
pub const SSE_BACKFILL_PAGE: usize = 100;

/// Everything the handlers share.
pub struct Hub {
    /// Tables by id.
    pub tables: BTreeMap<String, Arc<TableHandle>>,
    /// The store.
    pub store: Store,
    /// The in-process bus.
    pub bus: broadcast::Sender<BusMessage>,
    /// Token for arbiter actions and calibration.
    pub arbiter_token: String,
    /// Token for cameras (tables may have their own).
    pub camera_token: String,
    /// Largest frame accepted.
    pub max_frame_bytes: usize,
    /// Time a client has to send a request body.
    pub body_timeout: Duration,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// Start of the process (for /healthz).
    pub started: Instant,
    /// The HTTPS port (phone cameras), when the service serves HTTPS.
    pub https_port: Option<u16>,
    /// The hall this node belongs to (cluster mode).
    pub cluster: Option<Arc<crate::cluster::Cluster>>,
}

impl Hub {
    /// The events `filter` asks for, in order: from the SQLite log of one process, or in
    /// cluster mode from the hall's stream (every table's, with the same ids on every node).
    pub async fn events_after(&self, filter: EventFilter) -> Result<Vec<StoredEvent>, crate::store::StoreError> {
        match &self.cluster {
            Some(cluster) => cluster.events_after(&filter).await,
            None => self.store.events_after(filter).await,
        }
    }

    /// The id a new SSE client starts after, and the largest one a client may resume after.
    pub async fn last_event_id(&self) -> Result<i64, crate::store::StoreError> {
        match &self.cluster {
            Some(cluster) => cluster.last_event_id().await,
            None => self.store.last_event_id().await,
        }
    }
}

pub(crate) type ApiResult<T> = Result<T, Error>;
pub(crate) type AppState = Arc<Hub>;

/// The whole HTTP application.
pub fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route("/", get(crate::dashboard::index))
        .route("/dashboard.js", get(crate::dashboard::script))
        .route("/dashboard.css", get(crate::dashboard::style))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .nest("/api/tables/{table}", table_routes())
        .route("/api/tables", get(list_tables))
        .nest("/api/games/{game}", game_routes())
        .route("/api/events", get(list_events))
        .route("/api/events/{id}/{image}", get(evidence_image))
        .route("/api/stream", get(stream))
        .route("/api/auth", get(check_arbiter_token))
        .merge(crate::rounds::routes())
        .merge(crate::phone::routes())
        .fallback(|| async { Error::not_found("no such route") })
        .method_not_allowed_fallback(|| async {
            Error::new(ErrorKind::MethodNotAllowed, "method_not_allowed", "method not allowed here")
        })
        .layer(axum::middleware::map_response(security_headers))
        .with_state(hub)
}

/// One table's resources, under `/api/tables/{table}`.
fn table_routes() -> Router<AppState> {
    Router::new()
        .route("/", get(table_detail))
        .route("/frames", post(post_frame))
        .route("/frame", get(latest_frame))
        .route("/arbiter", post(table_command::<ArbiterAction>))
        .route("/calibration", get(get_calibration).put(table_command::<CalibrationBody>))
        .route("/games", get(table_games))
        .route("/sgf", get(table_sgf))
}

/// One game's resources, under `/api/games/{game}`.
fn game_routes() -> Router<AppState> {
    Router::new().route("/", get(game_detail)).route("/sgf", get(game_sgf))
}

/// The dashboard keeps the arbiter's token in the browser: no script but our own, no framing
/// (clickjacking), no guessing of content types, no referrer leaving the page.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob: mediastream:; \
     object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// Path parameters whose rejection (a game id that is not a number, bytes that are not UTF-8)
/// is the API's JSON error like every other.
pub(crate) struct ApiPath<T>(pub(crate) T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> ApiResult<Self> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(Self(value)),
            Err(rejection) => Err(Error::bad_request("bad_path", rejection.body_text())),
        }
    }
}

pub(crate) fn table<'a>(hub: &'a Hub, id: &str) -> ApiResult<&'a Arc<TableHandle>> {
    hub.tables.get(id).ok_or_else(|| Error::not_found(format!("unknown table {id:?}")))
}

pub(crate) fn check_token(headers: &HeaderMap, expected: &[&str]) -> ApiResult<()> {
    let value = headers.get(header::AUTHORIZATION).map(|v| v.to_str().unwrap_or(""));
    let token = bearer_token(value).ok_or(Error::missing_token())?;
    // Compare against every accepted token so the time does not reveal which one matched.
    let matched = expected.iter().fold(false, |acc, t| acc | constant_time_eq(token.as_bytes(), t.as_bytes()));
    if matched {
        Ok(())
    } else {
        Err(Error::wrong_token())
    }
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Reads a body of at most `limit` bytes within `timeout` (a client trickling a body a byte at
/// a time is cut off, and its connection freed).
async fn read_body(headers: &HeaderMap, body: Body, limit: usize, timeout: Duration) -> ApiResult<Vec<u8>> {
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(Error::too_large(limit));
    }
    let read = tokio::time::timeout(timeout, axum::body::to_bytes(body, limit)).await.map_err(|_| {
        Error::new(
            ErrorKind::Timeout,
            "request_timeout",
            format!("the request body did not arrive within {} s", timeout.as_secs()),
        )
    })?;
    match read {
        Ok(bytes) => Ok(bytes.to_vec()),
        Err(err) => {
            // to_bytes fails on the limit or on a broken connection; the message tells which.
            let text = err.to_string();
            if text.contains("length limit") {
                Err(Error::too_large(limit))
            } else {
                Err(Error::bad_request("bad_body", text))
            }
        }
    }
}

async fn read_json<T: serde::de::DeserializeOwned>(headers: &HeaderMap, body: Body, timeout: Duration) -> ApiResult<T> {
    let kind = content_type(headers);
    if kind != "application/json" {
        return Err(Error::unsupported_media_type(format!("expected Content-Type: application/json, got {:?}", kind)));
    }
    let bytes = read_body(headers, body, MAX_JSON_BYTES, timeout).await?;
    serde_json::from_slice(&bytes).map_err(|e| Error::bad_request("bad_json", format!("bad JSON: {e}")))
}

/// An arbiter's JSON request to a table: the table first (an unknown one is 404 whoever asks),
/// then the arbiter's token, then the body.
async fn arbiter_json<'h, T: serde::de::DeserializeOwned>(
    hub: &'h Hub,
    id: &str,
    headers: &HeaderMap,
    body: Body,
) -> ApiResult<(&'h Arc<TableHandle>, T)> {
    let table = table(hub, id)?;
    check_token(headers, &[hub.arbiter_token.as_str()])?;
    Ok((table, read_json(headers, body, hub.body_timeout).await?))
}

async fn healthz(State(hub): State<AppState>) -> Response {
    match hub.store.last_event_id().await {
        Ok(last) => Json(Health::Ok {
            tables: hub.tables.len(),
            last_event_id: last,
            uptime_secs: hub.started.elapsed().as_secs(),
            cluster: hub.cluster.as_ref().map(|hall| hall.health()),
        })
        .into_response(),
        Err(err) => (StatusCode::SERVICE_UNAVAILABLE, Json(Health::Error { error: "store", message: err.to_string() }))
            .into_response(),
    }
}

async fn metrics(State(hub): State<AppState>) -> Response {
    let mut text = crate::metrics::render(hub.tables.iter().map(|(id, t)| (id.as_str(), &t.metrics)));
    if let Some(cluster) = &hub.cluster {
        crate::metrics::render_cluster(&mut text, &cluster.health());
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

async fn list_tables(State(hub): State<AppState>) -> Json<Vec<TableSummary>> {
    Json(hub.tables.values().filter_map(|t| t.summary()).collect())
}

async fn table_detail(State(hub): State<AppState>, ApiPath(id): ApiPath<String>) -> ApiResult<Json<TableDetail>> {
    let table = table(&hub, &id)?;
    table.detail().map(Json).ok_or_else(|| Error::internal("table state poisoned"))
}

async fn post_frame(
    State(hub): State<AppState>,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let table = table(&hub, &id)?;
    let mut accepted = vec![hub.camera_token.as_str()];
    if let Some(own) = &table.camera_token {
        accepted = vec![own.as_str()];
    }
    // The phone page's token is good for this table only.
    accepted.push(table.phone_token.as_str());
    check_token(&headers, &accepted)?;
    let kind = content_type(&headers);
    if !matches!(kind.as_str(), "image/jpeg" | "image/png") {
        return Err(Error::unsupported_media_type(format!(
            "expected Content-Type image/jpeg or image/png, got {kind:?}"
        )));
    }
    let reject = |e: Error| {
        table.metrics.frames_rejected.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        e
    };
    if !table.allow_post() {
        return Err(reject(Error::new(ErrorKind::RateLimited, "rate_limited", "too many frames: slow down")));
    }
    if let Some(why) = hub.cluster.as_ref().filter(|_| table.is_running()).and_then(|c| c.frames_refused(&id)) {
        // In a hall with NATS away: a frame that would be read and logged now could not be kept.
        return Err(reject(Error::new(ErrorKind::Unavailable, "log_buffer_full", why)));
    }
    let bytes = read_body(&headers, body, hub.max_frame_bytes, hub.body_timeout).await.map_err(reject)?;
    if let Some(limit) = hub.cluster.as_ref().map(|c| c.max_payload()).filter(|l| *l > 0 && bytes.len() > *l) {
        // Cluster mode: a frame travels to its table's node as one NATS message.
        return Err(reject(Error::new(
            ErrorKind::TooLarge,
            "too_large",
            format!("frame of {} bytes is larger than the hall's NATS payload limit ({limit} bytes): raise max_payload in the NATS server's configuration", bytes.len()),
        )));
    }
    // The structural check walks every block of a JPEG: off the async workers.
    let (bytes, checked) = tokio::task::spawn_blocking(move || {
        let checked = check_frame(&bytes);
        (bytes, checked)
    })
    .await
    .map_err(|e| Error::internal(e.to_string()))?;
    let (format, width, height) = checked.map_err(|e| {
        let code = match e {
            FrameError::UnknownFormat | FrameError::Empty => "not_an_image",
            FrameError::TooLarge { .. } | FrameError::TooSmall { .. } | FrameError::Unsupported(_) => {
                "unsupported_frame"
            }
            FrameError::Truncated(_) | FrameError::Corrupt(_) => "corrupt_image",
        };
        // The hall sees a camera sending frames the service cannot use.
        table.camera_failed(&format!("frame refused: {e}"));
        reject(Error::unprocessable(code, e.to_string()))
    })?;
    if format.mime() != kind {
        return Err(reject(Error::unsupported_media_type(format!(
            "the body is {} but Content-Type says {kind}",
            format.mime()
        ))));
    }
    table.offer_frame(Frame { bytes: Arc::new(bytes), format, received: Instant::now(), at_ms: hub.clock.now_ms() });
    let dropped = table.metrics.frames_dropped.load(std::sync::atomic::Ordering::Relaxed);
    Ok((StatusCode::ACCEPTED, Json(FrameAccepted { accepted: true, width, height, dropped_total: dropped }))
        .into_response())
}

async fn latest_frame(State(hub): State<AppState>, ApiPath(id): ApiPath<String>) -> ApiResult<Response> {
    let table = table(&hub, &id)?;
    let frame = table.live().and_then(|l| l.last_frame).ok_or_else(|| Error::not_found("no frame received yet"))?;
    Ok((
        [(header::CONTENT_TYPE, frame.format.mime()), (header::CACHE_CONTROL, "no-store")],
        frame.bytes.as_ref().clone(),
    )
        .into_response())
}

/// `GET /api/auth`: whether the bearer token is the arbiter's (the dashboard checks a token
/// when it is entered, before any action depends on it). Changes nothing.
async fn check_arbiter_token(State(hub): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Role>> {
    check_token(&headers, &[hub.arbiter_token.as_str()])?;
    Ok(Json(Role { role: "arbiter" }))
}

/// `POST /api/tables/{table}/arbiter` and `PUT /api/tables/{table}/calibration`: an arbiter's
/// command on a table, carried out by the node of the hall that analyses the table — forwarded
/// there, or here by the same `commands::carry_out` that a forwarded command meets.
async fn table_command<B: CommandBody>(
    State(hub): State<AppState>,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let (table, body): (_, B) = arbiter_json(&hub, &id, &headers, body).await?;
    let command = body.into_command()?;
    if let Some(cluster) = elsewhere(&hub, table) {
        return crate::commands::forward(cluster, &id, &command).await;
    }
    Ok(Json(crate::commands::carry_out(table, &hub.store, command).await?).into_response())
}

/// A request body that asks a table for one command.
trait CommandBody: serde::de::DeserializeOwned {
    /// The command, or why the body does not make one.
    fn into_command(self) -> ApiResult<TableCommand>;
}

impl CommandBody for ArbiterAction {
    fn into_command(self) -> ApiResult<TableCommand> {
        Ok(TableCommand::Arbiter { action: self })
    }
}

impl CommandBody for CalibrationBody {
    fn into_command(self) -> ApiResult<TableCommand> {
        let Some(corners) = self.corners else {
            return Err(Error::unprocessable(
                "invalid_calibration",
                "\"corners\" is required: four [x, y] pixel pairs, or null to clear the calibration",
            ));
        };
        Ok(TableCommand::Calibrate { corners })
    }
}

/// The hall, when `table` is analysed on another node of it (a command goes there).
fn elsewhere<'h>(hub: &'h Hub, table: &TableHandle) -> Option<&'h Arc<crate::cluster::Cluster>> {
    hub.cluster.as_ref().filter(|_| !table.is_running())
}

/// Applies an arbiter's action at a table running here (posted here, or sent by another node).
pub(crate) async fn apply_arbiter(table: &TableHandle, action: ArbiterAction) -> ApiResult<ArbiterReply> {
    validate_action(&action)?;
    let events = table.arbiter(action).await?;
    Ok(ArbiterReply { events })
}

fn validate_action(action: &ArbiterAction) -> ApiResult<()> {
    let invalid = |m: String| Error::unprocessable("invalid_action", m);
    match action {
        // The points themselves are read once, where the table turns the action into the
        // referee's (`json::RefereeRequest`).
        ArbiterAction::MarkDead { points } if points.len() > tengen_rules::BOARD_POINTS => {
            return Err(invalid("too many points".into()));
        }
        ArbiterAction::CorrectRecord { move_number: 0, .. } => {
            return Err(invalid("move numbers start at 1".into()));
        }
        ArbiterAction::SetResult { result } if result.trim().is_empty() || result.len() > 64 => {
            return Err(invalid("a result is 1-64 characters".into()));
        }
        ArbiterAction::SetColours { black, white, .. }
            if black.as_ref().is_some_and(|b| b.len() > 100) || white.as_ref().is_some_and(|w| w.len() > 100) =>
        {
            return Err(invalid("names are at most 100 characters".into()));
        }
        ArbiterAction::NewGame { komi: Some(k), .. } if !k.is_finite() || k.abs() > 100.0 => {
            return Err(invalid("komi out of range".into()));
        }
        ArbiterAction::NewGame { start: Some(start), .. } if start.checked().is_err() => {
            return Err(invalid("a handicap is 2 to 9 stones".into()));
        }
        _ => {}
    }
    Ok(())
}

async fn get_calibration(State(hub): State<AppState>, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Calibration>> {
    let table = table(&hub, &id)?;
    let corners = table.live().and_then(|l| l.calibration);
    Ok(Json(Calibration { table: id, corners }))
}

/// Checks corners before they are stored: finite pixels inside the latest frame (either way
/// round, an EXIF-rotated camera swaps the sides) or, before any frame, inside the largest frame
/// accepted; and a quadrilateral the vision can read a board in (convex, TL TR BR BL in order,
/// not degenerate, cells of a few pixels at least).
fn validate_corners(corners: &Corners, frame_size: Option<(u32, u32)>) -> ApiResult<()> {
    let invalid = |message: String| Error::unprocessable("invalid_calibration", message);
    if corners.iter().flatten().any(|v| !v.is_finite()) {
        return Err(invalid("corners are four [x, y] pixel pairs".into()));
    }
    let max_side = f64::from(crate::imaging::FrameLimits::default().max_side);
    let (w, h) = frame_size.map_or((max_side, max_side), |(w, h)| (f64::from(w), f64::from(h)));
    let inside = |w: f64, h: f64| corners.iter().all(|&[x, y]| (0.0..=w).contains(&x) && (0.0..=h).contains(&y));
    if !(inside(w, h) || inside(h, w)) {
        return Err(invalid(format!("corners must lie inside the {w}×{h} frame")));
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let lens = tengen_vision::LensDistortion::none(w as u32, h as u32);
    tengen_vision::locate::from_corners(*corners, lens).map(|_| ()).map_err(|e| invalid(e.to_string()))
}

/// Sets or clears the calibration of a table running here (checked against its latest frame).
pub(crate) async fn apply_calibration(table: &TableHandle, corners: Option<Corners>) -> ApiResult<Calibration> {
    if let Some(c) = &corners {
        let frame_size = table
            .live()
            .and_then(|l| l.last_frame)
            .and_then(|f| crate::imaging::check_frame(&f.bytes).ok())
            .map(|(_, w, h)| (w, h));
        validate_corners(c, frame_size)?;
    }
    table.calibrate(corners).await?;
    Ok(Calibration { table: table.id.clone(), corners })
}

async fn table_games(State(hub): State<AppState>, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Vec<GameRow>>> {
    let table = table(&hub, &id)?;
    mirror_table(&hub, table).await?;
    Ok(Json(hub.store.games(&id).await?))
}

/// In a hall, brings this node's mirror of `table` up to the hall's log when the table runs on
/// another node (its games, players and inputs are in the stream, not yet in the mirror), so the
/// games of every table are served from every node. The import only reads the stream; a node
/// that takes the table later goes on from where it stopped.
async fn mirror_table(hub: &Hub, table: &TableHandle) -> ApiResult<()> {
    if let Some(cluster) = elsewhere(hub, table) {
        cluster.import_table(&hub.store, &table.id).await?;
    }
    Ok(())
}

/// A game's row from this node's mirror; in a hall, the game's table (named by the game's
/// record in the hall's log) is mirrored first when it runs on another node.
async fn find_game(hub: &Hub, game: i64) -> ApiResult<GameRow> {
    if let Some(cluster) = &hub.cluster {
        if let Some(table) = cluster.table_of_game(game).await?.and_then(|t| hub.tables.get(&t)) {
            mirror_table(hub, table).await?;
        }
    }
    hub.store.game(game).await?.ok_or_else(|| Error::not_found(format!("no game {game}")))
}

fn sgf_response(name: &str, game: i64, sgf: String) -> Response {
    let disposition = format!("attachment; filename=\"tengen-{name}-game{game}.sgf\"");
    (
        [
            (header::CONTENT_TYPE, "application/x-go-sgf; charset=utf-8".to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        sgf,
    )
        .into_response()
}

/// A game's record, from its referee rebuilt by replaying the log (the referee is
/// deterministic: the live game's record is the one its log gives).
pub(crate) async fn game_record(hub: &crate::Hub, table_name: &str, game: &GameRow) -> ApiResult<String> {
    let referee = crate::replay_referee(hub, game).await?;
    Ok(tengen_sgf::write_game(&referee.record(&crate::sgf::game_info(game, table_name))))
}

async fn table_sgf(State(hub): State<AppState>, ApiPath(id): ApiPath<String>) -> ApiResult<Response> {
    let table = table(&hub, &id)?;
    if let Some(cluster) = elsewhere(&hub, table) {
        // Only the table's node has its game in its mirror: it writes the record.
        let record: crate::json::TableRecord = crate::commands::ask(cluster, &id, &TableCommand::Record).await?;
        return Ok(sgf_response(&table.id, record.game, record.sgf));
    }
    let record = live_record(table, &hub.store).await?;
    Ok(sgf_response(&table.id, record.game, record.sgf))
}

/// The record of the game at a table running here, from its log.
pub(crate) async fn live_record(table: &TableHandle, store: &Store) -> ApiResult<crate::json::TableRecord> {
    let live = table.live().ok_or_else(|| Error::internal("table state poisoned"))?;
    let referee = crate::replay_game(table, store, &live.game).await?;
    let sgf = tengen_sgf::write_game(&referee.record(&crate::sgf::game_info(&live.game, &table.name)));
    Ok(crate::json::TableRecord { game: live.game.id, sgf })
}

async fn game_detail(State(hub): State<AppState>, ApiPath(game): ApiPath<i64>) -> ApiResult<Json<GameDetail>> {
    let row = find_game(&hub, game).await?;
    // A table running elsewhere shows its game as its node last told.
    let live = hub.tables.get(&row.table).and_then(|t| t.detail()).filter(|d| d.game_info.id == game);
    Ok(Json(GameDetail { game: row, live: live.is_some(), view: live.map(|d| d.view) }))
}

async fn game_sgf(State(hub): State<AppState>, ApiPath(game): ApiPath<i64>) -> ApiResult<Response> {
    let row = find_game(&hub, game).await?;
    let table = table(&hub, &row.table)?;
    let sgf = game_record(&hub, &table.name, &row).await?;
    Ok(sgf_response(&table.id, game, sgf))
}

async fn list_events(
    State(hub): State<AppState>,
    query: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<EventsPage>> {
    let Query(q) = query.map_err(|e| Error::bad_request("bad_query", e.body_text()))?;
    if let Some(t) = &q.table {
        table(&hub, t)?;
    }
    let limit = q.limit.unwrap_or(200).clamp(1, MAX_EVENTS_PAGE);
    let after = q.after.unwrap_or(0);
    let events = hub.events_after(EventFilter { after, table: q.table, game: q.game, limit }).await?;
    let next = events.last().map_or(after, |e| e.id);
    let more = events.len() == limit;
    Ok(Json(EventsPage { events, next, more }))
}

async fn evidence_image(
    State(hub): State<AppState>,
    ApiPath((id, image)): ApiPath<(i64, String)>,
) -> ApiResult<Response> {
    let after = match image.as_str() {
        "before.jpg" => false,
        "after.jpg" => true,
        _ => return Err(Error::not_found("use before.jpg or after.jpg")),
    };
    // This node's own (one process; in a hall, the images of the records this node logged while
    // it runs), else the hall's object store.
    let mut bytes = hub.store.evidence(id, after).await?;
    if let (None, Some(cluster)) = (&bytes, &hub.cluster) {
        bytes = cluster
            .evidence_image(id, after)
            .await
            .map_err(|e| Error::new(ErrorKind::Unavailable, "evidence_store_unreachable", e.to_string()))?;
    }
    let bytes = bytes.ok_or_else(|| Error::not_found(format!("no {image} for event {id}")))?;
    Ok(([(header::CONTENT_TYPE, "image/jpeg"), (header::CACHE_CONTROL, "public, max-age=86400")], bytes)
        .into_response())
}

struct StreamState {
    hub: AppState,
    rx: broadcast::Receiver<BusMessage>,
    pending: VecDeque<SseEvent>,
    last_id: i64,
    table: Option<String>,
    /// Events after `last_id` are still to be read from the store (a resume, or a client that
    /// fell behind the bus), one page at a time as the client takes them.
    backfilling: bool,
}

fn sse_event(event: &StoredEvent) -> SseEvent {
    SseEvent::default().event("event").id(event.id.to_string()).data(serde_json::to_string(event).unwrap_or_default())
}

fn sse_table(summary: &TableSummary) -> SseEvent {
    SseEvent::default().event("table").data(serde_json::to_string(summary).unwrap_or_default())
}

impl StreamState {
    /// Reads the next page of missed events from the store, which has them all. Live events
    /// wait on the bus meanwhile (a client that falls behind it is backfilled again).
    async fn backfill_page(&mut self) {
        let page = EventFilter { after: self.last_id, table: self.table.clone(), game: None, limit: SSE_BACKFILL_PAGE };
        match self.hub.events_after(page).await {
            Ok(events) => {
                self.backfilling = events.len() == SSE_BACKFILL_PAGE;
                for event in &events {
                    self.pending.push_back(sse_event(event));
                    self.last_id = event.id;
                }
            }
            Err(err) => {
                tracing::warn!(%err, "SSE backfill failed");
                self.backfilling = false;
            }
        }
    }

    async fn next(mut self) -> Option<(Result<SseEvent, Infallible>, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((Ok(event), self));
            }
            if self.backfilling {
                self.backfill_page().await;
                continue;
            }
            match self.rx.recv().await {
                Ok(BusMessage::Event(event)) => {
                    let wanted = self.table.as_ref().is_none_or(|t| *t == event.table);
                    if wanted && event.id > self.last_id {
                        self.last_id = event.id;
                        self.pending.push_back(sse_event(&event));
                    }
                }
                Ok(BusMessage::Table(summary)) => {
                    if self.table.as_ref().is_none_or(|t| *t == summary.id) {
                        self.pending.push_back(sse_table(&summary));
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => self.backfilling = true,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// An event id a client resumes after (`Last-Event-ID`, `?after=`): decimal digits naming an
/// id the log has reached (0 = from the start). Anything else is refused rather than guessed
/// at: a garbage id used to give a stream with no backfill, `-1` the whole log.
fn resume_id(text: &str, last: i64, what: &str) -> ApiResult<i64> {
    let bad = |why: String| Error::bad_request("bad_last_event_id", format!("{what} {text:?}: {why}"));
    let text = text.trim();
    if text.is_empty() || text.len() > 18 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("not an event id (decimal digits)".into()));
    }
    let id: i64 = text.parse().map_err(|_| bad("not an event id".into()))?;
    if id > last {
        return Err(bad(format!("the log ends at event {last}")));
    }
    Ok(id)
}

async fn stream(
    State(hub): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<StreamQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Response> {
    let Query(q) = query.map_err(|e| Error::bad_request("bad_query", e.body_text()))?;
    if let Some(t) = &q.table {
        table(&hub, t)?;
    }
    // Subscribe before reading the store so nothing falls between the two.
    let rx = hub.bus.subscribe();
    let last = hub.last_event_id().await?;
    let header_id = match headers.get("last-event-id") {
        Some(value) => {
            let text =
                value.to_str().map_err(|_| Error::bad_request("bad_last_event_id", "Last-Event-ID is not text"))?;
            Some(resume_id(text, last, "Last-Event-ID")?)
        }
        None => None,
    };
    let resume = match header_id {
        Some(id) => Some(id),
        None => q.after.as_deref().map(|a| resume_id(a, last, "after")).transpose()?,
    };
    let mut state = StreamState {
        hub: Arc::clone(&hub),
        rx,
        pending: VecDeque::new(),
        last_id: resume.unwrap_or(last),
        table: q.table,
        backfilling: resume.is_some(),
    };
    for summary in hub.tables.values().filter_map(|t| t.summary()) {
        if state.table.as_ref().is_none_or(|t| *t == summary.id) {
            state.pending.push_back(sse_table(&summary));
        }
    }
    let stream = futures_util::stream::unfold(state, StreamState::next);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response())
}
