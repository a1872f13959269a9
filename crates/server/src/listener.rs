//! The HTTP listener: accepts connections up to a cap, gives each a deadline for its request
//! headers (which also closes a connection idle between requests), and stops gracefully.
//! Bodies get their own deadline where they are read (`api::read_body`), so a client sending a
//! frame a byte at a time cannot hold a connection for ever either.
//!
//! The same loop serves HTTPS (the phone-camera page), the TLS handshake inside each
//! connection's task.
//!
//! Over the cap a connection is answered `503` with a JSON error and closed at once: the
//! clients already connected (cameras, the dashboard's event stream) keep their service.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, Semaphore};
use tokio_rustls::TlsAcceptor;

/// What the listener allows each client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Connections open at once; more are refused with 503.
    pub max_connections: usize,
    /// Time a client has to send a request's headers, and the longest a connection may sit
    /// idle between requests.
    pub header_timeout: Duration,
    /// Time a client has to send a request's body once its headers are in.
    pub body_timeout: Duration,
}

impl Default for HttpLimits {
    /// 1024 connections (a hall of 100 tables with a camera, a few dashboards and spare),
    /// 10 s for headers, 30 s for a body (an 8 MB frame over a slow venue network).
    fn default() -> Self {
        Self { max_connections: 1024, header_timeout: Duration::from_secs(10), body_timeout: Duration::from_secs(30) }
    }
}

/// The answer to a connection over the cap: the API's JSON error, and the connection closes.
fn over_cap_response() -> Vec<u8> {
    let body = r#"{"error":"too_many_connections","message":"too many connections open; try again shortly"}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n\
         retry-after: 1\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Serves `app` on `listener` until `stop` fires (or its sender is dropped), then waits for the
/// open connections to finish their requests.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: HttpLimits,
    stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    accept_loop(listener, None, app, limits, stop).await
}

/// [`serve`] over TLS (the phone-camera page): the same cap, deadlines and graceful stop; each
/// handshake runs in its connection's own task within the header deadline, so a slow or silent
/// client holds neither the accept loop nor a permit for longer.
pub async fn serve_tls(
    listener: TcpListener,
    tls: TlsAcceptor,
    app: Router,
    limits: HttpLimits,
    stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    accept_loop(listener, Some(tls), app, limits, stop).await
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Router,
    limits: HttpLimits,
    mut stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).keep_alive(true);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stop => break,
        };
        let (mut stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of file descriptors and the like: pause rather than spin.
                tracing::warn!(%err, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tracing::debug!(%peer, "connection refused: too many open");
            // Over TLS the refusal would need a handshake first: the connection is just closed.
            if tls.is_none() {
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(&over_cap_response())).await;
                });
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let (builder, watcher, tls) = (builder.clone(), graceful.watcher(), tls.clone());
        tokio::spawn(async move {
            let ended = match tls {
                None => watcher.watch(builder.serve_connection(TokioIo::new(stream), service)).await,
                Some(tls) => match tokio::time::timeout(limits.header_timeout, tls.accept(stream)).await {
                    Ok(Ok(secured)) => watcher.watch(builder.serve_connection(TokioIo::new(secured), service)).await,
                    Ok(Err(err)) => {
                        tracing::debug!(%peer, %err, "TLS handshake failed");
                        Ok(())
                    }
                    Err(_) => {
                        tracing::debug!(%peer, "TLS handshake timed out");
                        Ok(())
                    }
                },
            };
            if let Err(err) = ended {
                tracing::trace!(%peer, %err, "connection ended");
            }
            drop(permit);
        });
    }
    graceful.shutdown().await;
    Ok(())
}
