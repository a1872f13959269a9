//! `tengen serve`: the referee service and its dashboard. Runs with nothing set up (embedded
//! default configuration, SQLite under ./tengen-data/, tokens generated and printed); `--demo`
//! also plays the project's sample sequences (embedded in the binary) as live cameras.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use tengen_server::{CameraConfig, Config, TableConfig};

/// Arguments of `tengen serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// TOML configuration (tables, cameras, calibrations, komi, tokens); see
    /// crates/server/README.md. Without it: four tables whose cameras post frames.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on, e.g. 0.0.0.0:8080; port 0 picks a free port.
    #[arg(long)]
    listen: Option<String>,
    /// Also serve HTTPS here, e.g. 0.0.0.0:8443: phones used as cameras need it (a
    /// self-signed certificate is made on first start and its fingerprint printed).
    #[arg(long)]
    https_listen: Option<String>,
    /// Folder of the SQLite database.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Token for arbiter actions (generated and printed when neither given nor configured).
    /// Visible to every user of the machine in `ps`: prefer TENGEN_ARBITER_TOKEN or
    /// --arbiter-token-file.
    #[arg(long)]
    arbiter_token: Option<String>,
    /// File whose first line is the arbiter token.
    #[arg(long, conflicts_with = "arbiter_token")]
    arbiter_token_file: Option<PathBuf>,
    /// Token cameras post frames with (generated and printed when neither given nor configured).
    /// Visible in `ps`: prefer TENGEN_CAMERA_TOKEN or --camera-token-file.
    #[arg(long)]
    camera_token: Option<String>,
    /// File whose first line is the camera token.
    #[arg(long, conflicts_with = "camera_token")]
    camera_token_file: Option<PathBuf>,
    /// Join a hall of nodes on NATS JetStream, e.g. nats://10.0.0.1:4222 (docs/cluster.md): the
    /// tables' logs live in the hall's stream and each table is analysed by one node.
    #[arg(long, requires = "node")]
    nats: Option<String>,
    /// This node's name in the hall (with --nats): letters, digits, '-' and '_'.
    #[arg(long, requires = "nats")]
    node: Option<String>,
    /// Play every sample sequence as a live camera on its own table, looping (each finished
    /// game held until its alerts are decided, at most --demo-hold seconds), beside table `1`
    /// that waits for your own camera.
    #[arg(long)]
    demo: bool,
    /// Folder of sample sequences (one sub-folder of frames per sequence); by default the
    /// project's samples built into the binary, unpacked under the data folder.
    #[arg(long)]
    samples: Option<PathBuf>,
    /// Frames per second of the demo cameras (the samples' own rate).
    #[arg(long, default_value_t = 2.5)]
    demo_fps: f64,
    /// Seconds a finished demo game with undecided alerts is held before the next one starts.
    #[arg(long, default_value_t = 300.0)]
    demo_hold: f64,
}

/// The project's sample sequences, built into the binary by `build.rs`.
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/samples.rs"));
}

/// Writes the built-in samples under `dir` (a file already there with the same size is kept)
/// and returns `dir`.
fn unpack_samples(dir: &Path) -> anyhow::Result<PathBuf> {
    anyhow::ensure!(!embedded::SAMPLE_FILES.is_empty(), "this build has no samples built in: give --samples DIR");
    for (name, bytes) in embedded::SAMPLE_FILES {
        let path = dir.join(name);
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(dir.to_owned())
}

/// The sample sequences: sub-folders of `samples` holding JPEG or PNG frames.
fn sample_sequences(samples: &std::path::Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    let entries =
        std::fs::read_dir(samples).with_context(|| format!("cannot read the samples folder {}", samples.display()))?;
    for entry in entries {
        let path = entry?.path();
        if !path.is_dir() {
            continue;
        }
        let frames = tengen_server::sources::folder_frames(&path).unwrap_or_default();
        if frames.len() >= 2 {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("sample");
            let id: String = format!("demo-{name}")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' })
                .take(32)
                .collect();
            found.push((id, path));
        }
    }
    found.sort();
    Ok(found)
}

/// A token from, in order: the command line (with a warning: `ps` shows it), a file, the
/// environment variable; `None` leaves the configuration's (or a generated one).
fn token(
    flag: Option<String>,
    file: Option<&std::path::Path>,
    env: &str,
    name: &str,
) -> anyhow::Result<Option<String>> {
    if let Some(token) = flag {
        eprintln!("tengen: warning: --{name} on the command line is visible to every user in `ps`; use {env} or --{name}-file");
        return Ok(Some(token));
    }
    if let Some(path) = file {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read the {name} file {}", path.display()))?;
        let token = text.lines().next().unwrap_or("").trim().to_owned();
        anyhow::ensure!(!token.is_empty(), "the {name} file {} is empty", path.display());
        return Ok(Some(token));
    }
    match std::env::var(env) {
        Ok(token) if !token.trim().is_empty() => Ok(Some(token.trim().to_owned())),
        _ => Ok(None),
    }
}

/// Runs `tengen serve`.
pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    if let Some(dir) = args.data_dir {
        config.data_dir = dir;
    }
    if let Some(https) = args.https_listen {
        config.https_listen = Some(https);
    }
    if let Some(token) =
        token(args.arbiter_token, args.arbiter_token_file.as_deref(), "TENGEN_ARBITER_TOKEN", "arbiter-token")?
    {
        config.arbiter_token = Some(token);
    }
    if let Some(token) =
        token(args.camera_token, args.camera_token_file.as_deref(), "TENGEN_CAMERA_TOKEN", "camera-token")?
    {
        config.camera_token = Some(token);
    }
    if let (Some(nats), Some(node)) = (args.nats, args.node) {
        // The lease, replicas and buffer of the configuration's [cluster], when it has one.
        let cluster = match config.cluster.take() {
            Some(configured) => tengen_server::config::ClusterConfig { nats, node, ..configured },
            None => tengen_server::config::ClusterConfig::new(nats, node),
        };
        config.cluster = Some(cluster);
    }
    if args.demo {
        let samples = match &args.samples {
            Some(dir) => dir.clone(),
            None => unpack_samples(&config.data_dir.join("demo-samples"))?,
        };
        let sequences = sample_sequences(&samples)?;
        anyhow::ensure!(!sequences.is_empty(), "no sample sequences (folders of frames) under {}", samples.display());
        anyhow::ensure!((0.0..=86_400.0).contains(&args.demo_hold), "--demo-hold is 0 to 86400 seconds");
        if args.config.is_none() {
            // A newcomer's demo: the demo tables and one table for their own camera, not the
            // four empty default ones.
            config.tables.truncate(1);
            if let Some(table) = config.tables.first_mut() {
                table.name = Some("Your camera".into());
            }
        }
        for (id, path) in sequences {
            if config.tables.iter().any(|t| t.id == id) {
                continue;
            }
            config.tables.push(TableConfig {
                name: Some(id.trim_start_matches("demo-").replace(['-', '_'], " ")),
                camera: CameraConfig::Folder { path, fps: args.demo_fps, repeat: true, hold_secs: args.demo_hold },
                ..TableConfig::posting(id)
            });
        }
    }
    config.validate()?;
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let server = tengen_server::start(config.clone(), tengen_server::adapters::standard_engines())
            .await
            .context("cannot start the service")?;
        println!("tengen: serving {} tables on http://{}/ (dashboard)", server.hub.tables.len(), server.addr);
        println!("tengen: listening on {}", server.addr);
        if let (Some(https), Some((fingerprint, created))) = (server.https_addr, &server.tls) {
            let made = if *created { "made now, self-signed" } else { "in use" };
            println!("tengen: https for phone cameras on {https} (certificate {made}; SHA-256 {fingerprint})");
            println!("tengen: a table's phone-camera QR code is on its page in the dashboard (arbiter token)");
        }
        match &config.arbiter_token {
            Some(_) => println!("tengen: arbiter token: (from the configuration)"),
            None => println!("tengen: arbiter token: {}", server.arbiter_token),
        }
        match &config.camera_token {
            Some(_) => println!("tengen: camera token: (from the configuration)"),
            None => println!("tengen: camera token: {}", server.camera_token),
        }
        match &server.hub.cluster {
            Some(hall) => println!(
                "tengen: node {} of the hall on NATS ({}), owning tables {}; its SQLite mirror: {}",
                hall.node,
                hall.connection_state(),
                hall.owned_tables().join(", "),
                server.hub.store.path().display()
            ),
            None => println!("tengen: log: {}", server.hub.store.path().display()),
        }
        let posting: Vec<&str> =
            config.tables.iter().filter(|t| matches!(t.camera, CameraConfig::Post)).map(|t| t.id.as_str()).collect();
        let pulled: Vec<&str> =
            config.tables.iter().filter(|t| !matches!(t.camera, CameraConfig::Post)).map(|t| t.id.as_str()).collect();
        if !pulled.is_empty() {
            let what = if args.demo { "sample games looping, each held while it has alerts to decide" } else { "cameras the service pulls" };
            println!("tengen: tables {} ({what})", pulled.join(", "));
        }
        if let Some(first) = posting.first() {
            let own_token = config.tables.iter().any(|t| t.id == *first && t.camera_token.is_some());
            let token = if config.camera_token.is_some() || own_token { "<camera token>".to_owned() } else { server.camera_token.clone() };
            println!("tengen: tables {} wait for cameras that post frames, e.g.:", posting.join(", "));
            println!(
                "tengen:   curl -H 'Authorization: Bearer {token}' -H 'Content-Type: image/jpeg' --data-binary @frame.jpg http://{}/api/tables/{first}/frames",
                server.addr
            );
        }
        // Ctrl-C or SIGTERM (systemd, docker stop). Stopping loses nothing: every event is in
        // the log before it is published, and the next start replays it; a hall node leaves
        // the hall first (docs/cluster.md).
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("cannot listen for SIGTERM")?;
        tokio::select! {
            outcome = tokio::signal::ctrl_c() => outcome.context("cannot wait for Ctrl-C")?,
            _ = terminate.recv() => {}
        }
        println!("tengen: stopping");
        // A hall node hands its tables over before it goes (bounded: NATS may be away, and then
        // the leases simply run out).
        if tokio::time::timeout(std::time::Duration::from_secs(15), server.leave_hall()).await.is_err() {
            eprintln!("tengen: could not leave the hall within 15 s; its tables move when their leases run out");
        }
        server.shutdown_now();
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
