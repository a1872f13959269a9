//! `tengen serve`: the referee service and its dashboard. Runs with nothing set up (embedded
//! default configuration, SQLite under ./tengen-data/, tokens generated and printed); `--demo`
//! also plays the project's sample sequences in `samples/` as live cameras.

use std::path::PathBuf;
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
    /// Play every sample sequence under --samples as a live camera on its own table, looping.
    #[arg(long)]
    demo: bool,
    /// Folder of sample sequences (one sub-folder of frames per sequence).
    #[arg(long, default_value = "samples")]
    samples: PathBuf,
    /// Frames per second of the demo cameras (the samples' own rate).
    #[arg(long, default_value_t = 2.5)]
    demo_fps: f64,
}

/// The sample sequences: sub-folders of `samples` holding JPEG or PNG frames.
fn sample_sequences(samples: &std::path::Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    let entries = std::fs::read_dir(samples)
        .with_context(|| format!("cannot read the samples folder {}", samples.display()))?;
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
fn token(flag: Option<String>, file: Option<&std::path::Path>, env: &str, name: &str) -> anyhow::Result<Option<String>> {
    if let Some(token) = flag {
        eprintln!("tengen: warning: --{name} on the command line is visible to every user in `ps`; use {env} or --{name}-file");
        return Ok(Some(token));
    }
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read the {name} file {}", path.display()))?;
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
    if let Some(token) = token(args.arbiter_token, args.arbiter_token_file.as_deref(), "TENGEN_ARBITER_TOKEN", "arbiter-token")? {
        config.arbiter_token = Some(token);
    }
    if let Some(token) = token(args.camera_token, args.camera_token_file.as_deref(), "TENGEN_CAMERA_TOKEN", "camera-token")? {
        config.camera_token = Some(token);
    }
    if args.demo {
        let sequences = sample_sequences(&args.samples)?;
        anyhow::ensure!(
            !sequences.is_empty(),
            "no sample sequences (folders of frames) under {}",
            args.samples.display()
        );
        if args.config.is_none() {
            // A newcomer's demo: only the demo tables, not the four empty default ones.
            config.tables.clear();
        }
        for (id, path) in sequences {
            if config.tables.iter().any(|t| t.id == id) {
                continue;
            }
            config.tables.push(TableConfig {
                name: Some(id.trim_start_matches("demo-").replace(['-', '_'], " ")),
                id,
                komi: 7.5,
                camera_token: None,
                camera: CameraConfig::Folder { path, fps: args.demo_fps, repeat: true },
                calibration: None,
            });
        }
    }
    config.validate()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let server = tengen_server::start(config.clone(), tengen_server::adapters::standard_engines())
            .await
            .context("cannot start the service")?;
        println!("tengen: serving {} tables on http://{}/ (dashboard)", server.hub.tables.len(), server.addr);
        println!("tengen: listening on {}", server.addr);
        match &config.arbiter_token {
            Some(_) => println!("tengen: arbiter token: (from the configuration)"),
            None => println!("tengen: arbiter token: {}", server.arbiter_token),
        }
        match &config.camera_token {
            Some(_) => println!("tengen: camera token: (from the configuration)"),
            None => println!("tengen: camera token: {}", server.camera_token),
        }
        println!("tengen: log: {}", server.hub.store.path().display());
        println!(
            "tengen: post frames with: curl -H 'Authorization: Bearer <camera token>' -H 'Content-Type: image/jpeg' --data-binary @frame.jpg http://{}/api/tables/<table>/frames",
            server.addr
        );
        // Ctrl-C or SIGTERM (systemd, docker stop). Stopping loses nothing: every event is in
        // the log before it is published, and the next start replays it.
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("cannot listen for SIGTERM")?;
        tokio::select! {
            outcome = tokio::signal::ctrl_c() => outcome.context("cannot wait for Ctrl-C")?,
            _ = terminate.recv() => {}
        }
        println!("tengen: stopping");
        server.shutdown_now();
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
