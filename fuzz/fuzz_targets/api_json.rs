//! The HTTP API's JSON bodies: the input is sent as the body of each JSON-taking route (arbiter
//! actions, calibration) of a running service (in-process, a store in a temporary folder, the
//! real referee). Every answer must be a documented status with the API's JSON error body, or
//! a success; no panic, no 500.
#![no_main]

use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

struct Service {
    runtime: tokio::runtime::Runtime,
    router: axum::Router,
}

const ARBITER: &str = "fuzz-arbiter-token";

fn service() -> &'static Service {
    static SERVICE: OnceLock<Service> = OnceLock::new();
    SERVICE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let dir = std::env::temp_dir().join(format!("tengen-fuzz-api-{}", std::process::id()));
        let config = tengen_server::Config {
            listen: "127.0.0.1:0".into(),
            data_dir: dir,
            arbiter_token: Some(ARBITER.into()),
            camera_token: Some("fuzz-camera-token".into()),
            tables: vec![tengen_server::TableConfig::posting("1")],
            ..tengen_server::Config::default()
        };
        let server = runtime
            .block_on(tengen_server::start(config, tengen_server::adapters::standard_engines()))
            .expect("service starts");
        let router = tengen_server::router(Arc::clone(&server.hub));
        // The listener stays up for the process's life; requests go straight to the router.
        std::mem::forget(server);
        Service { runtime, router }
    })
}

fuzz_target!(|data: &[u8]| {
    let service = service();
    for (method, path) in [("POST", "/api/tables/1/arbiter"), ("PUT", "/api/tables/1/calibration")] {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {ARBITER}"))
            .body(Body::from(data.to_vec()))
            .expect("request");
        let response = service.runtime.block_on(service.router.clone().oneshot(request)).expect("infallible");
        let status = response.status();
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path} answered 500");
        let body = service.runtime.block_on(axum::body::to_bytes(response.into_body(), 1 << 20)).expect("body");
        let json: serde_json::Value = serde_json::from_slice(&body).expect("every answer is JSON");
        if !status.is_success() {
            assert!(json.get("error").and_then(|e| e.as_str()).is_some(), "{path} {status}: {json}");
        }
    }
});
