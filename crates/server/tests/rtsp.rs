//! The RTSP camera source against a small RTSP server made here: H.264 (encoded by ffmpeg from
//! rendered board frames) sent as RTP interleaved over TCP, as IP cameras do. The source must
//! deliver frames at the table's rate, notice the camera dropping, and resume when it is back.
//! Needs Debian's `ffmpeg`; without it the test prints one line and passes.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use tengen_server::config::CameraConfig;
use tengen_server::json::CameraStatus;
use tengen_server::rtsp::RtspTransport;
use tengen_server::store::EventFilter;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn have_ffmpeg() -> bool {
    std::process::Command::new("ffmpeg").arg("-version").output().is_ok_and(|o| o.status.success())
}

/// Two seconds of a board camera at 10 frames a second: rendered frames (a stone appears
/// half-way) encoded as an H.264 Annex B stream with an IDR frame every second.
fn h264_stream(dir: &std::path::Path) -> Vec<u8> {
    use tengen_rules::Stone;
    use tengen_synth::{render, Position, Scene};
    let scene = Scene::preset("webcam").expect("preset").with_seed(5);
    let empty = render(&Position::empty(), &scene).expect("render");
    let stone = render(&Position::empty().with(3, 15, Stone::BLACK), &scene).expect("render");
    for i in 0..20 {
        let frame = if i < 10 { &empty } else { &stone };
        let small = image::imageops::resize(&frame.image, 320, 180, image::imageops::FilterType::Triangle);
        small.save(dir.join(format!("{i:03}.png"))).expect("write frame");
    }
    let out = dir.join("stream.264");
    let status = std::process::Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-y", "-framerate", "10", "-i"])
        .arg(dir.join("%03d.png"))
        .args([
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            "-g",
            "10",
            "-bf",
            "0",
            "-x264-params",
            "repeat-headers=1",
            "-f",
            "h264",
        ])
        .arg(&out)
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg encodes the test stream");
    std::fs::read(out).expect("stream")
}

/// NAL units of an Annex B stream (start codes removed).
fn nal_units(stream: &[u8]) -> Vec<&[u8]> {
    let mut starts = Vec::new();
    let mut i = 0;
    while i + 3 <= stream.len() {
        if stream[i..i + 3] == [0, 0, 1] {
            starts.push(i + 3);
            i += 3;
        } else {
            i += 1;
        }
    }
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let mut end = starts.get(k + 1).map_or(stream.len(), |&n| n - 3);
            // A four-byte start code leaves a zero at the end of the previous unit.
            while end > s && stream[end - 1] == 0 {
                end -= 1;
            }
            &stream[s..end]
        })
        .collect()
}

/// Access units: the NAL units of one picture (parameter sets and SEI go with the next slice).
fn pictures(stream: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    for nal in nal_units(stream) {
        let kind = nal[0] & 0x1F;
        current.push(nal.to_vec());
        if kind == 1 || kind == 5 {
            out.push(std::mem::take(&mut current));
        }
    }
    out
}

/// RTP packets (RFC 6184, packetization mode 1) of one picture, each framed for RTSP's
/// interleaved channel 0.
fn rtp_packets(picture: &[Vec<u8>], seq: &mut u16, timestamp: u32) -> Vec<Vec<u8>> {
    const MTU: usize = 1200;
    let mut payloads = Vec::new();
    for nal in picture {
        if nal.len() <= MTU {
            payloads.push(nal.clone());
            continue;
        }
        // FU-A fragments.
        let (indicator, kind) = ((nal[0] & 0xE0) | 28, nal[0] & 0x1F);
        let chunks: Vec<&[u8]> = nal[1..].chunks(MTU).collect();
        for (k, chunk) in chunks.iter().enumerate() {
            let start = if k == 0 { 0x80 } else { 0 };
            let end = if k + 1 == chunks.len() { 0x40 } else { 0 };
            let mut p = vec![indicator, start | end | kind];
            p.extend_from_slice(chunk);
            payloads.push(p);
        }
    }
    let last = payloads.len() - 1;
    payloads
        .into_iter()
        .enumerate()
        .map(|(k, payload)| {
            let marker = if k == last { 0x80 } else { 0 };
            let mut rtp = vec![0x80, marker | 96];
            rtp.extend(seq.to_be_bytes());
            rtp.extend(timestamp.to_be_bytes());
            rtp.extend(0x7e57_c0de_u32.to_be_bytes());
            rtp.extend(payload);
            *seq = seq.wrapping_add(1);
            let mut framed = vec![b'$', 0];
            framed.extend(u16::try_from(rtp.len()).unwrap().to_be_bytes());
            framed.extend(rtp);
            framed
        })
        .collect()
}

/// A camera's RTSP server: answers OPTIONS, DESCRIBE, SETUP (TCP interleaved only) and PLAY,
/// then loops the stream at 10 frames a second. While `up` is false it drops every connection.
struct Camera {
    port: u16,
    up: Arc<AtomicBool>,
}

impl Camera {
    async fn start(stream: Vec<u8>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let pictures = Arc::new(pictures(&stream));
        assert!(pictures.len() >= 20, "{} pictures", pictures.len());
        let flag = Arc::clone(&up);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                if flag.load(Ordering::SeqCst) {
                    tokio::spawn(session(socket, port, Arc::clone(&pictures), Arc::clone(&flag)));
                }
            }
        });
        Camera { port, up }
    }

    fn url(&self) -> String {
        format!("rtsp://127.0.0.1:{}/live", self.port)
    }
}

async fn session(socket: TcpStream, port: u16, pictures: Arc<Vec<Vec<Vec<u8>>>>, up: Arc<AtomicBool>) {
    let (mut reader, mut writer) = socket.into_split();
    let base = format!("rtsp://127.0.0.1:{port}/live/");
    let mut buffer = Vec::new();
    // The handshake: one request at a time, until PLAY.
    loop {
        let mut chunk = [0u8; 4096];
        let Ok(n) = reader.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buffer.extend_from_slice(&chunk[..n]);
        let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let request = String::from_utf8_lossy(&buffer[..end]).to_string();
        buffer.drain(..end + 4);
        let method = request.split_whitespace().next().unwrap_or_default().to_owned();
        let cseq = request
            .lines()
            .find_map(|l| l.strip_prefix("CSeq:").or_else(|| l.strip_prefix("Cseq:")))
            .map(str::trim)
            .unwrap_or("0")
            .to_owned();
        let (status, headers, body) = match method.as_str() {
            "OPTIONS" => ("200 OK", "Public: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN\r\n".to_owned(), String::new()),
            "DESCRIBE" => {
                let sdp = "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=tengen test camera\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\n\
                           m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1\r\na=control:track1\r\n";
                ("200 OK", format!("Content-Type: application/sdp\r\nContent-Base: {base}\r\n"), sdp.to_owned())
            }
            "SETUP" if request.contains("RTP/AVP/TCP") => (
                "200 OK",
                "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\nSession: 7357;timeout=60\r\n".to_owned(),
                String::new(),
            ),
            "SETUP" => ("461 Unsupported Transport", String::new(), String::new()),
            "PLAY" => (
                "200 OK",
                format!("Session: 7357\r\nRange: npt=0.000-\r\nRTP-Info: url={base}track1;seq=0;rtptime=0\r\n"),
                String::new(),
            ),
            _ => ("405 Method Not Allowed", String::new(), String::new()),
        };
        let response =
            format!("RTSP/1.0 {status}\r\nCSeq: {cseq}\r\n{headers}Content-Length: {}\r\n\r\n{body}", body.len());
        if writer.write_all(response.as_bytes()).await.is_err() {
            return;
        }
        if method == "PLAY" {
            break;
        }
    }
    // RTCP receiver reports and keep-alives from the client are read and ignored.
    tokio::spawn(async move {
        let mut sink = [0u8; 4096];
        while reader.read(&mut sink).await.is_ok_and(|n| n > 0) {}
    });
    let (mut seq, mut timestamp) = (0u16, 0u32);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        for picture in pictures.iter() {
            tick.tick().await;
            if !up.load(Ordering::SeqCst) {
                // The camera drops: the connection goes with it.
                return;
            }
            for packet in rtp_packets(picture, &mut seq, timestamp) {
                if writer.write_all(&packet).await.is_err() {
                    return;
                }
            }
            timestamp = timestamp.wrapping_add(9000);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rtsp_camera_delivers_frames_at_the_table_rate_and_comes_back_after_dropping() {
    if !have_ffmpeg() {
        println!("skipped: ffmpeg is not installed (apt-get install ffmpeg)");
        return;
    }
    let dir = temp_dir("rtsp");
    let camera = Camera::start(h264_stream(&dir)).await;
    let mut config = test_config(dir.join("data"), &["cam"]);
    config.camera_timeout_secs = 2.0;
    config.tables[0].camera =
        CameraConfig::Rtsp { url: camera.url(), fps: 4.0, transport: RtspTransport::Tcp, max_width: None };
    let server = tengen_server::start(config, test_engines()).await.unwrap();
    let table = Arc::clone(&server.hub.tables["cam"]);
    let received = |t: &tengen_server::table::TableHandle| t.metrics.frames_received.load(Ordering::Relaxed);

    // Frames arrive, as JPEGs of the camera's picture.
    let t = Arc::clone(&table);
    assert!(
        wait_until(20, || {
            let t = Arc::clone(&t);
            async move { received(&t) >= 4 }
        })
        .await,
        "frames arrive"
    );
    let frame = table.live().unwrap().last_frame.expect("a frame");
    let decoded = image::load_from_memory_with_format(&frame.bytes, image::ImageFormat::Jpeg).expect("a JPEG");
    assert_eq!((decoded.width(), decoded.height()), (320, 180));
    // At the table's rate (4 a second), not the stream's (10).
    let before = received(&table);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let in_three_seconds = received(&table) - before;
    assert!((6..=16).contains(&in_three_seconds), "{in_three_seconds} frames in 3 s at 4 fps");

    // The camera drops: the table reports it lost.
    camera.up.store(false, Ordering::SeqCst);
    let t = Arc::clone(&table);
    assert!(
        wait_until(20, || {
            let t = Arc::clone(&t);
            async move { t.live().is_some_and(|l| l.camera == CameraStatus::Lost) }
        })
        .await,
        "the dropped camera is reported lost"
    );
    let while_down = received(&table);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(received(&table), while_down, "nothing arrives while the camera is down");

    // It comes back: the source reconnects by itself and frames flow again.
    camera.up.store(true, Ordering::SeqCst);
    let t = Arc::clone(&table);
    assert!(
        wait_until(30, || {
            let t = Arc::clone(&t);
            async move { received(&t) >= while_down + 4 && t.live().is_some_and(|l| l.camera == CameraStatus::Live) }
        })
        .await,
        "frames flow again after the camera is back"
    );
    // The table's state changes before its event is in the log: wait for both events.
    let hub = Arc::clone(&server.hub);
    let logged = wait_until(10, || {
        let hub = Arc::clone(&hub);
        async move {
            let events = hub
                .store
                .events_after(EventFilter { table: Some("cam".into()), ..EventFilter::first(1000) })
                .await
                .unwrap_or_default();
            let has = |kind: &str| events.iter().any(|e| e.event.kind.name() == kind);
            has("camera_lost") && has("camera_back")
        }
    })
    .await;
    assert!(logged, "camera_lost and camera_back are in the log");
    server.shutdown_now();
    let _ = std::fs::remove_dir_all(dir);
}
