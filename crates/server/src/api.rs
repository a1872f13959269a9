//! The HTTP edge: routes, authentication, size limits, JSON errors, the SSE stream, and the
//! embedded dashboard. Every write needs a token; reads are open (the spectator view).
//! The API is documented in `API.md` next to this crate's manifest.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::broadcast;

use crate::auth::{bearer_token, constant_time_eq};
use crate::engine::{Clock, Corners, RefereeError};
use crate::imaging::{check_frame, FrameError};
use crate::model::{ArbiterAction, GameView, StoredEvent};
use crate::store::{GameRow, Store, StoreError};
use crate::table::{BusMessage, Frame, TableError, TableHandle, TableSummary};

/// Largest JSON body accepted.
pub const MAX_JSON_BYTES: usize = 64 * 1024;
/// Most events one `/api/events` page returns.
pub const MAX_EVENTS_PAGE: usize = 1000;

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
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// Start of the process (for /healthz).
    pub started: Instant,
}

/// An API error: an HTTP status with a JSON body `{"error": code, "message": text}`.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed.
    #[error("{message}")]
    BadRequest {
        /// Machine code.
        code: &'static str,
        /// What is wrong.
        message: String,
    },
    /// 401: no token where one is needed.
    #[error("missing token: send Authorization: Bearer <token>")]
    MissingToken,
    /// 403: the token is wrong for this action.
    #[error("wrong token for this action")]
    WrongToken,
    /// 404: no such table, game, event or image.
    #[error("{0}")]
    NotFound(String),
    /// 409: the action does not fit the game's state.
    #[error("{0}")]
    Conflict(String),
    /// 413: the body is too large.
    #[error("body larger than {0} bytes")]
    TooLarge(usize),
    /// 415: wrong content type.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 422: well-formed but unusable (a corrupt image, an invalid action).
    #[error("{message}")]
    Unprocessable {
        /// Machine code.
        code: &'static str,
        /// What is wrong.
        message: String,
    },
    /// 429: the camera posts faster than allowed.
    #[error("too many frames: slow down")]
    RateLimited,
    /// 500/503: the service failed.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Self::BadRequest { code, .. } => (StatusCode::BAD_REQUEST, code),
            Self::MissingToken => (StatusCode::UNAUTHORIZED, "missing_token"),
            Self::WrongToken => (StatusCode::FORBIDDEN, "wrong_token"),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            Self::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            Self::TooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
            Self::UnsupportedMediaType(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
            Self::Unprocessable { code, .. } => (StatusCode::UNPROCESSABLE_ENTITY, code),
            Self::RateLimited => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            Self::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let mut response =
            (status, Json(json!({ "error": code, "message": self.to_string() }))).into_response();
        if matches!(self, Self::MissingToken) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        Self::Internal(err.to_string())
    }
}

impl From<TableError> for ApiError {
    fn from(err: TableError) -> Self {
        match err {
            TableError::Referee(RefereeError::NotFound(m)) => Self::NotFound(m),
            TableError::Referee(RefereeError::Conflict(m)) => Self::Conflict(m),
            TableError::Referee(RefereeError::Invalid(m)) => {
                Self::Unprocessable { code: "invalid_action", message: m }
            }
            TableError::Store(e) => Self::Internal(e.to_string()),
            TableError::Stopped => Self::Internal("the table's pipeline has stopped".into()),
        }
    }
}

type ApiResult<T> = Result<T, ApiError>;
type AppState = Arc<Hub>;

/// The whole HTTP application.
pub fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route("/", get(crate::dashboard::index))
        .route("/dashboard.js", get(crate::dashboard::script))
        .route("/dashboard.css", get(crate::dashboard::style))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/api/tables", get(list_tables))
        .route("/api/tables/{table}", get(table_detail))
        .route("/api/tables/{table}/frames", post(post_frame))
        .route("/api/tables/{table}/frame", get(latest_frame))
        .route("/api/tables/{table}/arbiter", post(post_arbiter))
        .route("/api/tables/{table}/calibration", get(get_calibration).put(put_calibration))
        .route("/api/tables/{table}/games", get(table_games))
        .route("/api/tables/{table}/sgf", get(table_sgf))
        .route("/api/games/{game}", get(game_detail))
        .route("/api/games/{game}/sgf", get(game_sgf))
        .route("/api/events", get(list_events))
        .route("/api/events/{id}/{image}", get(evidence_image))
        .route("/api/stream", get(stream))
        .fallback(|| async { ApiError::NotFound("no such route".into()) })
        .with_state(hub)
}

fn table<'a>(hub: &'a Hub, id: &str) -> ApiResult<&'a Arc<TableHandle>> {
    hub.tables.get(id).ok_or_else(|| ApiError::NotFound(format!("unknown table {id:?}")))
}

fn check_token(headers: &HeaderMap, expected: &[&str]) -> ApiResult<()> {
    let value = headers.get(header::AUTHORIZATION).map(|v| v.to_str().unwrap_or(""));
    let token = bearer_token(value).ok_or(ApiError::MissingToken)?;
    // Compare against every accepted token so the time does not reveal which one matched.
    let matched = expected
        .iter()
        .fold(false, |acc, t| acc | constant_time_eq(token.as_bytes(), t.as_bytes()));
    if matched {
        Ok(())
    } else {
        Err(ApiError::WrongToken)
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

async fn read_body(headers: &HeaderMap, body: Body, limit: usize) -> ApiResult<Vec<u8>> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(ApiError::TooLarge(limit));
    }
    match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => Ok(bytes.to_vec()),
        Err(err) => {
            // to_bytes fails on the limit or on a broken connection; the message tells which.
            let text = err.to_string();
            if text.contains("length limit") {
                Err(ApiError::TooLarge(limit))
            } else {
                Err(ApiError::BadRequest { code: "bad_body", message: text })
            }
        }
    }
}

async fn read_json<T: serde::de::DeserializeOwned>(headers: &HeaderMap, body: Body) -> ApiResult<T> {
    let kind = content_type(headers);
    if kind != "application/json" {
        return Err(ApiError::UnsupportedMediaType(format!(
            "expected Content-Type: application/json, got {:?}",
            kind
        )));
    }
    let bytes = read_body(headers, body, MAX_JSON_BYTES).await?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::BadRequest { code: "bad_json", message: format!("bad JSON: {e}") })
}

async fn healthz(State(hub): State<AppState>) -> Response {
    match hub.store.last_event_id().await {
        Ok(last) => Json(json!({
            "status": "ok",
            "tables": hub.tables.len(),
            "last_event_id": last,
            "uptime_secs": hub.started.elapsed().as_secs(),
        }))
        .into_response(),
        Err(err) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "error", "error": "store", "message": err.to_string() })),
        )
            .into_response(),
    }
}

async fn metrics(State(hub): State<AppState>) -> Response {
    let text = crate::metrics::render(hub.tables.iter().map(|(id, t)| (id.as_str(), &t.metrics)));
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

async fn list_tables(State(hub): State<AppState>) -> Json<Vec<TableSummary>> {
    Json(hub.tables.values().filter_map(|t| t.summary()).collect())
}

/// A table in full.
#[derive(Serialize)]
struct TableDetail {
    #[serde(flatten)]
    summary: TableSummary,
    game_info: GameRow,
    view: GameView,
    calibration: Option<Corners>,
    last_reading: Option<String>,
    latency_p50_ms: Option<f64>,
    latency_p99_ms: Option<f64>,
}

async fn table_detail(
    State(hub): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<TableDetail>> {
    let table = table(&hub, &id)?;
    let live = table.live().ok_or_else(|| ApiError::Internal("table state poisoned".into()))?;
    let summary = table.summary().ok_or_else(|| ApiError::Internal("table state poisoned".into()))?;
    Ok(Json(TableDetail {
        summary,
        game_info: live.game,
        view: live.view,
        calibration: live.calibration,
        last_reading: live.last_reading,
        latency_p50_ms: table.metrics.recent_quantile(0.5).map(|s| s * 1000.0),
        latency_p99_ms: table.metrics.recent_quantile(0.99).map(|s| s * 1000.0),
    }))
}

async fn post_frame(
    State(hub): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let table = table(&hub, &id)?;
    let mut accepted = vec![hub.camera_token.as_str()];
    if let Some(own) = &table.camera_token {
        accepted = vec![own.as_str()];
    }
    check_token(&headers, &accepted)?;
    let kind = content_type(&headers);
    if !matches!(kind.as_str(), "image/jpeg" | "image/png") {
        return Err(ApiError::UnsupportedMediaType(format!(
            "expected Content-Type image/jpeg or image/png, got {kind:?}"
        )));
    }
    let reject = |e: ApiError| {
        table.metrics.frames_rejected.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        e
    };
    if !table.allow_post() {
        return Err(reject(ApiError::RateLimited));
    }
    let bytes = read_body(&headers, body, hub.max_frame_bytes).await.map_err(reject)?;
    let (format, width, height) = check_frame(&bytes).map_err(|e| {
        reject(match e {
            FrameError::UnknownFormat => ApiError::Unprocessable {
                code: "not_an_image",
                message: e.to_string(),
            },
            _ => ApiError::Unprocessable { code: "corrupt_image", message: e.to_string() },
        })
    })?;
    if format.mime() != kind {
        return Err(reject(ApiError::UnsupportedMediaType(format!(
            "the body is {} but Content-Type says {kind}",
            format.mime()
        ))));
    }
    table.offer_frame(Frame {
        bytes: Arc::new(bytes),
        format,
        received: Instant::now(),
        at_ms: hub.clock.now_ms(),
    });
    let dropped = table.metrics.frames_dropped.load(std::sync::atomic::Ordering::Relaxed);
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "accepted": true, "width": width, "height": height, "dropped_total": dropped })),
    )
        .into_response())
}

async fn latest_frame(State(hub): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let table = table(&hub, &id)?;
    let frame = table
        .live()
        .and_then(|l| l.last_frame)
        .ok_or_else(|| ApiError::NotFound("no frame received yet".into()))?;
    Ok((
        [(header::CONTENT_TYPE, frame.format.mime()), (header::CACHE_CONTROL, "no-store")],
        frame.bytes.as_ref().clone(),
    )
        .into_response())
}

async fn post_arbiter(
    State(hub): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<serde_json::Value>> {
    let table = table(&hub, &id)?;
    check_token(&headers, &[hub.arbiter_token.as_str()])?;
    let action: ArbiterAction = read_json(&headers, body).await?;
    validate_action(&action)?;
    let events = table.arbiter(action).await?;
    Ok(Json(json!({ "events": events })))
}

fn validate_action(action: &ArbiterAction) -> ApiResult<()> {
    let invalid = |m: String| ApiError::Unprocessable { code: "invalid_action", message: m };
    match action {
        ArbiterAction::MarkDead { points } => {
            if points.len() > tengen_rules::BOARD_POINTS {
                return Err(invalid("too many points".into()));
            }
            for p in points {
                if tengen_rules::Point::parse_on_board(p).is_err() {
                    return Err(invalid(format!("{p:?} is not a point (use \"pd\" or \"Q16\")")));
                }
            }
        }
        ArbiterAction::CorrectRecord { move_number, point } => {
            if *move_number == 0 {
                return Err(invalid("move numbers start at 1".into()));
            }
            if let Some(p) = point {
                if tengen_rules::Point::parse_on_board(p).is_err() {
                    return Err(invalid(format!("{p:?} is not a point")));
                }
            }
        }
        ArbiterAction::SetResult { result } if result.trim().is_empty() || result.len() > 64 => {
            return Err(invalid("a result is 1-64 characters".into()));
        }
        ArbiterAction::SetColours { black, white, .. }
            if black.as_ref().is_some_and(|b| b.len() > 100)
                || white.as_ref().is_some_and(|w| w.len() > 100) =>
        {
            return Err(invalid("names are at most 100 characters".into()));
        }
        ArbiterAction::NewGame { komi: Some(k) } if !k.is_finite() || k.abs() > 100.0 => {
            return Err(invalid("komi out of range".into()));
        }
        _ => {}
    }
    Ok(())
}

async fn get_calibration(
    State(hub): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    let table = table(&hub, &id)?;
    let corners = table.live().and_then(|l| l.calibration);
    Ok(Json(json!({ "table": id, "corners": corners })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CalibrationBody {
    corners: Option<Corners>,
}

async fn put_calibration(
    State(hub): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<serde_json::Value>> {
    let table = table(&hub, &id)?;
    check_token(&headers, &[hub.arbiter_token.as_str()])?;
    let body: CalibrationBody = read_json(&headers, body).await?;
    if let Some(c) = &body.corners {
        if c.iter().flatten().any(|v| !v.is_finite() || *v < 0.0 || *v > 100_000.0) {
            return Err(ApiError::Unprocessable {
                code: "invalid_calibration",
                message: "corners are four [x, y] pixel pairs".into(),
            });
        }
    }
    table.calibrate(body.corners).await?;
    Ok(Json(json!({ "table": id, "corners": body.corners })))
}

async fn table_games(
    State(hub): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Vec<GameRow>>> {
    table(&hub, &id)?;
    Ok(Json(hub.store.games(&id).await?))
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
async fn game_record(hub: &crate::Hub, table_name: &str, game: &GameRow) -> ApiResult<String> {
    let referee = crate::replay_referee(hub, game).await?;
    Ok(tengen_sgf::write_game(&referee.record(&crate::sgf::record_header(game, table_name))))
}

async fn table_sgf(State(hub): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let table = table(&hub, &id)?;
    let live = table.live().ok_or_else(|| ApiError::Internal("table state poisoned".into()))?;
    let sgf = game_record(&hub, &table.name, &live.game).await?;
    Ok(sgf_response(&table.id, live.game.id, sgf))
}

async fn game_detail(
    State(hub): State<AppState>,
    Path(game): Path<i64>,
) -> ApiResult<Json<serde_json::Value>> {
    let row = hub.store.game(game).await?.ok_or_else(|| ApiError::NotFound(format!("no game {game}")))?;
    let live = hub.tables.get(&row.table).and_then(|t| t.live()).filter(|l| l.game.id == game);
    Ok(Json(json!({ "game": row, "live": live.is_some(), "view": live.map(|l| l.view) })))
}

async fn game_sgf(State(hub): State<AppState>, Path(game): Path<i64>) -> ApiResult<Response> {
    let row = hub.store.game(game).await?.ok_or_else(|| ApiError::NotFound(format!("no game {game}")))?;
    let table = table(&hub, &row.table)?;
    let sgf = game_record(&hub, &table.name, &row).await?;
    Ok(sgf_response(&table.id, game, sgf))
}

#[derive(Deserialize)]
struct EventsQuery {
    #[serde(default)]
    after: Option<i64>,
    #[serde(default)]
    table: Option<String>,
    #[serde(default)]
    game: Option<i64>,
    #[serde(default)]
    limit: Option<usize>,
}

async fn list_events(
    State(hub): State<AppState>,
    query: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<serde_json::Value>> {
    let Query(q) = query.map_err(|e| ApiError::BadRequest { code: "bad_query", message: e.body_text() })?;
    if let Some(t) = &q.table {
        table(&hub, t)?;
    }
    let limit = q.limit.unwrap_or(200).clamp(1, MAX_EVENTS_PAGE);
    let after = q.after.unwrap_or(0);
    let events = hub.store.events_after(after, q.table, q.game, limit).await?;
    let next = events.last().map_or(after, |e| e.id);
    Ok(Json(json!({ "events": events, "next": next, "more": events.len() == limit })))
}

async fn evidence_image(
    State(hub): State<AppState>,
    Path((id, image)): Path<(i64, String)>,
) -> ApiResult<Response> {
    let after = match image.as_str() {
        "before.jpg" => false,
        "after.jpg" => true,
        _ => return Err(ApiError::NotFound("use before.jpg or after.jpg".into())),
    };
    let bytes = hub
        .store
        .evidence(id, after)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no {image} for event {id}")))?;
    Ok((
        [(header::CONTENT_TYPE, "image/jpeg"), (header::CACHE_CONTROL, "public, max-age=86400")],
        bytes,
    )
        .into_response())
}

#[derive(Deserialize)]
struct StreamQuery {
    #[serde(default)]
    table: Option<String>,
    #[serde(default)]
    after: Option<i64>,
}

struct StreamState {
    hub: AppState,
    rx: broadcast::Receiver<BusMessage>,
    pending: VecDeque<SseEvent>,
    last_id: i64,
    table: Option<String>,
}

fn sse_event(event: &StoredEvent) -> SseEvent {
    SseEvent::default()
        .event("event")
        .id(event.id.to_string())
        .data(serde_json::to_string(event).unwrap_or_default())
}

fn sse_table(summary: &TableSummary) -> SseEvent {
    SseEvent::default().event("table").data(serde_json::to_string(summary).unwrap_or_default())
}

impl StreamState {
    async fn backfill(&mut self) {
        // Events missed (a resume, or a lagging client): from the store, which has them all.
        loop {
            match self.hub.store.events_after(self.last_id, self.table.clone(), None, MAX_EVENTS_PAGE).await {
                Ok(events) => {
                    let full = events.len() == MAX_EVENTS_PAGE;
                    for event in &events {
                        self.pending.push_back(sse_event(event));
                        self.last_id = event.id;
                    }
                    if !full {
                        return;
                    }
                }
                Err(err) => {
                    tracing::warn!(%err, "SSE backfill failed");
                    return;
                }
            }
        }
    }

    async fn next(mut self) -> Option<(Result<SseEvent, Infallible>, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((Ok(event), self));
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
                Err(broadcast::error::RecvError::Lagged(_)) => self.backfill().await,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

async fn stream(
    State(hub): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<StreamQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Response> {
    let Query(q) = query.map_err(|e| ApiError::BadRequest { code: "bad_query", message: e.body_text() })?;
    if let Some(t) = &q.table {
        table(&hub, t)?;
    }
    let header_id = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    // Subscribe before reading the store so nothing falls between the two.
    let rx = hub.bus.subscribe();
    let resume = header_id.or(q.after);
    let last_id = match resume {
        Some(id) => id,
        None => hub.store.last_event_id().await?,
    };
    let mut state = StreamState { hub: Arc::clone(&hub), rx, pending: VecDeque::new(), last_id, table: q.table };
    for summary in hub.tables.values().filter_map(|t| t.summary()) {
        if state.table.as_ref().is_none_or(|t| *t == summary.id) {
            state.pending.push_back(sse_table(&summary));
        }
    }
    if resume.is_some() {
        state.backfill().await;
    }
    let stream = futures_util::stream::unfold(state, StreamState::next);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response())
}
