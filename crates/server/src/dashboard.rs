//! The referee dashboard: static HTML, CSS and JavaScript embedded in the binary (no build
//! step), talking to the JSON API and the SSE stream.

use axum::http::header;
use axum::response::IntoResponse;

const INDEX_HTML: &str = include_str!("dashboard/index.html");
/// The script as served: strict mode, the language tables (data, edited by translators as JSON,
/// which is also a JavaScript expression), then the code.
const DASHBOARD_JS: &str = concat!(
    "\"use strict\";\nconst I18N = ",
    include_str!("dashboard/i18n.json"),
    ";\n",
    include_str!("dashboard/dashboard.js")
);
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    /// The language tables are JSON (a translator's edit that breaks it would break the whole
    /// dashboard) and every language names every message English has.
    #[test]
    fn every_language_table_is_json_with_every_message() {
        let tables: BTreeMap<String, BTreeMap<String, String>> =
            serde_json::from_str(include_str!("dashboard/i18n.json")).expect("i18n.json is JSON");
        let english = tables.get("en").expect("English is the fallback language");
        assert!(english.len() > 100, "the English table holds the dashboard's messages");
        for (language, table) in &tables {
            let missing: Vec<_> = english.keys().filter(|key| !table.contains_key(*key)).collect();
            assert!(missing.is_empty(), "{language} lacks {missing:?}");
            assert!(table.values().all(|text| !text.trim().is_empty()), "{language} has an empty message");
        }
        assert!(super::DASHBOARD_JS.starts_with("\"use strict\";\nconst I18N = {"));
    }
}
