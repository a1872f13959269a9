//! A phone as a table camera, with no app: the service serves a page that opens the phone's
//! camera (getUserMedia) and posts its picture to the table twice a second, with a token that
//! only this table accepts. The dashboard shows each table's link as a QR code (arbiters only:
//! the link carries the token). Browsers give pages a camera only on a secure origin, so phones
//! open it over HTTPS (see `tls`).

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};

use crate::api::{check_token, table, ApiPath, ApiResult, AppState};
use crate::error::Error;
use crate::json::{LinkQuery, PhoneLink};

const PHONE_HTML: &str = include_str!("dashboard/phone.html");
// Script and style in files of their own: the security policy allows no inline ones.
const PHONE_JS: &str = include_str!("dashboard/phone.js");
const PHONE_CSS: &str = include_str!("dashboard/phone.css");

/// The routes of this module.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/phone/{table}", get(page))
        .route(
            "/phone.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")],
                    PHONE_JS,
                )
            }),
        )
        .route(
            "/phone.css",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], PHONE_CSS)
            }),
        )
        .route("/api/tables/{table}/phone", get(link))
}

/// `GET /phone/{table}`: the camera page (the token travels in the fragment, never to a log).
async fn page(State(hub): State<AppState>, ApiPath(id): ApiPath<String>) -> ApiResult<impl IntoResponse> {
    table(&hub, &id)?;
    Ok(([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], PHONE_HTML))
}

/// `GET /api/tables/{table}/phone?origin=…` (arbiter token): the table's camera link and its QR
/// code (SVG).
async fn link(
    State(hub): State<AppState>,
    ApiPath(id): ApiPath<String>,
    Query(query): Query<LinkQuery>,
    headers: HeaderMap,
) -> ApiResult<Json<PhoneLink>> {
    check_token(&headers, &[hub.arbiter_token.as_str()])?;
    let table = table(&hub, &id)?;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(|h| h.rsplit_once(':').map_or(h, |(name, _)| name).to_owned());
    let default = hub.https_port.zip(host).map(|(port, host)| format!("https://{host}:{port}"));
    let origin = match query.origin.or(default) {
        Some(origin) if origin.starts_with("https://") || origin.starts_with("http://") => origin.trim_end_matches('/').to_owned(),
        _ => {
            return Err(Error::unprocessable("no_https", "the service serves no HTTPS (set https_listen) and no ?origin= was given: phones need HTTPS for the camera"))
        }
    };
    let url = format!("{origin}/phone/{}#token={}", table.id, table.phone_token);
    let svg = qrcode::QrCode::new(url.as_bytes())
        .map_err(|e| Error::internal(format!("QR code: {e}")))?
        .render::<qrcode::render::svg::Color<'_>>()
        .min_dimensions(240, 240)
        .build();
    Ok(Json(PhoneLink { secure: origin.starts_with("https://"), url, svg }))
}
