//! What the server's benchmarks share: the camera's POST of one frame, a frame's JPEG encoding
//! and the process's memory as Linux reports it.

use std::sync::Arc;

/// The camera token every benchmark's service is started with.
pub const CAMERA_TOKEN: &str = "bench-camera-token";

/// Encodes a frame as a camera would send it (JPEG, quality 85).
pub fn encode_jpeg(img: &image::RgbImage) -> Arc<Vec<u8>> {
    let mut out = Vec::new();
    let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
    img.write_with_encoder(enc).unwrap();
    Arc::new(out)
}

/// Posts one frame to a table over a fresh connection; the HTTP status, or 0 when the
/// connection failed or the answer was not HTTP.
pub async fn post_frame(addr: std::net::SocketAddr, table: &str, content_type: &str, body: &[u8]) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
        return 0;
    };
    let head = format!(
        "POST /api/tables/{table}/frames HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {CAMERA_TOKEN}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    if stream.write_all(head.as_bytes()).await.is_err() || stream.write_all(body).await.is_err() {
        return 0;
    }
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    String::from_utf8_lossy(&response).split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// A memory figure of this process from /proc/self/status, in MiB (0 where unavailable):
/// `"VmRSS:"` is the resident memory now, `"VmHWM:"` its peak so far.
pub fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}
