//! The referee dashboard: static HTML, CSS and JavaScript embedded in the binary (no build
//! step), talking to the JSON API and the SSE stream.

use axum::http::header;
use axum::response::IntoResponse;

const INDEX_HTML: &str = include_str!("dashboard/index.html");
const DASHBOARD_JS: &str = include_str!("dashboard/dashboard.js");
const DASHBOARD_CSS: &str = include_str!("dashboard/dashboard.css");

/// `GET /`: the dashboard page.
pub async fn index() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], INDEX_HTML)
}

/// `GET /dashboard.js`.
pub async fn script() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], DASHBOARD_JS)
}

/// `GET /dashboard.css`.
pub async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], DASHBOARD_CSS)
}
