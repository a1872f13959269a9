//! `tengen referee OBS.jsonl`: runs the referee over board readings, one JSON object per line,
//! and prints its events as JSON lines.
//!
//! A reading line: `{"t": SECONDS, "grid": [19 strings of . X O ?], "confidence": [[19]×19]
//! (optional), "occluded": BOOL (optional), "frame": "name" (optional)}`. A line with an
//! `"action"` key is an arbiter action at time `t` (e.g. `{"t": 90, "action": "pass", "side":
//! "black"}`; see docs/events.md). A bad line is skipped with a warning naming its line number
//! on stderr (nothing else is lost); `--strict` stops at the first bad line instead.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use tengen_referee::{Input, Referee, RefereeConfig, StabiliserConfig, StartPosition};

/// Arguments of `tengen referee`.
#[derive(clap::Args)]
pub struct RefereeArgs {
    /// Readings, one JSON object per line (`-` for standard input).
    obs: PathBuf,
    /// Table id written into every event.
    #[arg(long, default_value = "table")]
    table: String,
    /// Game id written into every event.
    #[arg(long, default_value = "1")]
    game: String,
    /// Komi in points (7.5 = 3¾ stones).
    #[arg(long, default_value_t = 7.5)]
    komi: f64,
    /// What the game starts from: `even` (an empty board, Black first: stones found on it
    /// are an alert, not moves), `handicap:N` (N stones on the standard points, White first)
    /// or `adopt` (the first stable board as found, whatever it holds).
    #[arg(long, default_value = "adopt")]
    start: StartPosition,
    /// Hand-free frames that must agree before a board is accepted.
    #[arg(long, default_value_t = 4)]
    frames: usize,
    /// Seconds captured stones may stay on the board before a missed capture is suspected.
    #[arg(long, default_value_t = 30.0)]
    capture_grace: f64,
    /// Stop at the first bad line instead of skipping it.
    #[arg(long)]
    strict: bool,
    /// Also write the final state (both boards, differences, record, infractions) as JSON here.
    #[arg(long)]
    state: Option<PathBuf>,
}

/// Runs `tengen referee`.
pub fn run(args: RefereeArgs) -> anyhow::Result<ExitCode> {
    let reader: Box<dyn Read> = if args.obs.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(&args.obs).with_context(|| format!("cannot open {}", args.obs.display()))?)
    };
    let config = RefereeConfig {
        table: args.table,
        game: args.game,
        komi_points: args.komi,
        start: args.start,
        stabiliser: StabiliserConfig { frames: args.frames.max(1), ..StabiliserConfig::default() },
        capture_grace_seconds: args.capture_grace,
        ..RefereeConfig::default()
    };
    let mut referee = Referee::new(config);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let (mut lines, mut skipped, mut events) = (0usize, 0usize, 0usize);
    // Lines are read as bytes: a line that is not UTF-8 is a bad line like any other, skipped
    // with its number, not the end of the input.
    for (i, line) in BufReader::new(reader).split(b'\n').enumerate() {
        let number = i + 1;
        let line = line.with_context(|| format!("{}: cannot read line {number}", args.obs.display()))?;
        if line.trim_ascii().is_empty() {
            continue;
        }
        lines += 1;
        let parsed = std::str::from_utf8(&line)
            .context("not UTF-8 text")
            .and_then(|text| Input::from_line(text).map_err(anyhow::Error::from));
        let input = match parsed {
            Ok(input) => input,
            Err(err) if args.strict => bail!("{}:{number}: {err:#}", args.obs.display()),
            Err(err) => {
                eprintln!("tengen referee: {}:{number}: skipped: {err:#}", args.obs.display());
                skipped += 1;
                continue;
            }
        };
        let produced = match &input {
            Input::Arbiter { t, action } => match referee.arbiter(*t, action) {
                Ok(ev) => ev,
                Err(err) => {
                    eprintln!("tengen referee: {}:{number}: arbiter action refused: {err}", args.obs.display());
                    skipped += 1;
                    continue;
                }
            },
            other => referee.feed(other),
        };
        for e in produced {
            serde_json::to_writer(&mut out, &e)?;
            out.write_all(b"\n")?;
            events += 1;
        }
    }
    out.flush()?;
    if let Some(path) = &args.state {
        let json = serde_json::to_string_pretty(&referee.state())?;
        std::fs::write(path, json).with_context(|| format!("cannot write {}", path.display()))?;
    }
    eprintln!(
        "tengen referee: {lines} lines, {skipped} skipped, {events} events, {} moves",
        referee.state().move_number
    );
    Ok(ExitCode::SUCCESS)
}
