//! `tengen replay FRAMES_DIR --out game.sgf --events events.jsonl [--calibration FILE]`: runs
//! vision and the referee over a folder of frames (sorted by name, one every 1/fps seconds) and
//! writes the game record (events as SGF comments) and the events (JSON lines).
//!
//! It is the service's pipeline without the service: the same frame reader
//! (`tengen_vision::FrameReader`), the same observations (confidences in whole tenths, times in
//! whole milliseconds), the same referee and the same record writer, so the same frames at the
//! same times give the same events and record as `tengen serve` (see `docs/design.md`).

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use tengen_referee::{Event, Observation, Referee, RefereeConfig, StabiliserConfig, StartPosition};
use tengen_sgf::{write_game, GameInfo};
use tengen_vision::decode_rgb;
use tengen_vision::{FixedGrid, FrameReadError, FrameReader, Tracking};

/// Arguments of `tengen replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// Folder of frames (JPEG or PNG), in time order when sorted by name.
    frames_dir: PathBuf,
    /// Where to write the game record (SGF).
    #[arg(long, required_unless_present = "schedule")]
    out: Option<PathBuf>,
    /// Where to write the events (JSON lines).
    #[arg(long, required_unless_present = "schedule")]
    events: Option<PathBuf>,
    /// Only print when each frame is seen (seconds, a tab, the file name), one line a frame,
    /// and stop: the schedule a camera posting these frames to `tengen serve` would follow.
    #[arg(long)]
    schedule: bool,
    /// Camera calibration (TOML, see calibration/README.md): fixes where the board is.
    #[arg(long)]
    calibration: Option<PathBuf>,
    /// Frames per second of the camera. Frames are one every 1/fps seconds; when the folder
    /// holds a `sequence.json` with `frames[].file` and `frames[].time_s` (the project's
    /// samples), the times come from there instead, and each frame is seen again at this rate
    /// until the next (as the service's folder camera sends it).
    #[arg(long, default_value_t = 2.0)]
    fps: f64,
    /// Show each frame this many seconds (seen again at --fps until the next): a camera
    /// watching photos taken once per move. Ignored with a `sequence.json`.
    #[arg(long)]
    hold: Option<f64>,
    /// Seconds a board must be seen still (hand-free) before it is accepted.
    #[arg(long, default_value_t = 1.0)]
    min_stable_seconds: f64,
    /// Hand-free frames that must agree before a board is accepted (1 for photos taken once per
    /// move; a single misread point then counts).
    #[arg(long, default_value_t = 4)]
    stable_frames: usize,
    /// Locate the board on every frame (a camera that moves between frames, e.g. hand-held
    /// photos; a view that turns keeps the first frame's indexing, matched on the stones); by
    /// default the board is located once and then tracked (a shifted board raises
    /// `board_moved`).
    #[arg(long)]
    relocate: bool,
    /// What the game starts from: `even` (an empty board, Black first: stones found on it
    /// are an alert, not moves), `handicap:N` (N stones on the standard points, White first)
    /// or `adopt` (the first stable board as found, whatever it holds).
    #[arg(long, default_value = "adopt")]
    start: StartPosition,
    /// Komi in points.
    #[arg(long, default_value_t = 7.5)]
    komi: f64,
    /// Table id written into the events.
    #[arg(long, default_value = "replay")]
    table: String,
    /// Game id written into the events.
    #[arg(long, default_value = "1")]
    game: String,
}

fn frame_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the folder {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "jpg" | "jpeg" | "png"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no JPEG or PNG frames in {}", dir.display());
    }
    Ok(files)
}

/// Frame times from a `sequence.json` beside the frames, if there is one (file name → seconds).
fn sequence_times(dir: &Path) -> anyhow::Result<BTreeMap<String, f64>> {
    let path = dir.join("sequence.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(BTreeMap::new()) };
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let mut times = BTreeMap::new();
    for frame in value.get("frames").and_then(serde_json::Value::as_array).into_iter().flatten() {
        if let (Some(file), Some(t)) = (
            frame.get("file").and_then(serde_json::Value::as_str),
            frame.get("time_s").and_then(serde_json::Value::as_f64),
        ) {
            times.insert(file.to_string(), t);
        }
    }
    Ok(times)
}

/// When each frame is seen: (file, time in seconds), a frame shown for a while seen again at
/// the camera's rate until the next. Times are whole milliseconds, as the service's clock gives
/// them.
fn schedule(files: &[PathBuf], times: &BTreeMap<String, f64>, fps: f64, hold: Option<f64>) -> Vec<(usize, f64)> {
    let name = |p: &PathBuf| p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let start = |i: usize| -> f64 {
        match (times.get(&name(&files[i])), hold) {
            (Some(&t), _) => t,
            (None, Some(h)) if times.is_empty() => i as f64 * h,
            (None, _) => i as f64 / fps,
        }
    };
    let mut seen = Vec::new();
    for i in 0..files.len() {
        let t = start(i);
        seen.push((i, t));
        let shown_until =
            if i + 1 < files.len() && (!times.is_empty() || hold.is_some()) { Some(start(i + 1)) } else { None };
        if let Some(next) = shown_until {
            let mut repeat = t + 1.0 / fps;
            while repeat + 1e-9 < next {
                seen.push((i, repeat));
                repeat += 1.0 / fps;
            }
        }
    }
    seen
}

/// A time in seconds as the service's clock gives it: whole milliseconds.
fn whole_ms(t: f64) -> f64 {
    #[allow(clippy::cast_possible_truncation)]
    let ms = (t * 1000.0).round() as i64;
    #[allow(clippy::cast_precision_loss)]
    let t = ms as f64 / 1000.0;
    t
}

/// Prints a line above the progress bar, or on stderr when the bar is hidden (not a terminal).
fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// Runs `tengen replay`.
pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    if !(args.fps.is_finite() && args.fps > 0.0) {
        bail!("--fps must be a positive number");
    }
    if args.hold.is_some_and(|h| !(h.is_finite() && h > 0.0)) {
        bail!("--hold must be a positive number of seconds");
    }
    let files = frame_files(&args.frames_dir)?;
    let times = sequence_times(&args.frames_dir)?;
    let seen = schedule(&files, &times, args.fps, args.hold);
    if args.schedule {
        for &(i, t) in &seen {
            println!("{}\t{}", whole_ms(t), files[i].file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (Some(out), Some(events_path)) = (&args.out, &args.events) else { bail!("--out and --events are required") };
    let fixed = match &args.calibration {
        Some(path) => Some(FixedGrid::Calibration(Box::new(crate::calibration_file::load(path)?))),
        None => None,
    };
    let config = RefereeConfig {
        table: args.table.clone(),
        game: args.game.clone(),
        komi_points: args.komi,
        start: args.start,
        stabiliser: StabiliserConfig {
            frames: args.stable_frames.max(1),
            min_seconds: args.min_stable_seconds.max(0.0),
            ..StabiliserConfig::default()
        },
        ..RefereeConfig::default()
    };
    let mut referee = Referee::new(config);
    let events_file =
        std::fs::File::create(events_path).with_context(|| format!("cannot create {}", events_path.display()))?;
    let mut events_out = BufWriter::new(events_file);
    let bar = ProgressBar::new(seen.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} frames {msg} [{elapsed}<{eta}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut reader = FrameReader::new(fixed, if args.relocate { Tracking::LocateEveryFrame } else { Tracking::Track });
    let mut all_events: Vec<Event> = Vec::new();
    let (mut unreadable, mut no_board) = (0usize, 0usize);
    let mut decoded: Option<(usize, Option<image::RgbImage>)> = None;
    for &(i, t) in &seen {
        let path = &files[i];
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().to_string());
        let t = whole_ms(t);
        bar.inc(1);
        if decoded.as_ref().is_none_or(|(d, _)| *d != i) {
            let rgb = match std::fs::read(path)
                .map_err(anyhow::Error::from)
                .and_then(|b| decode_rgb(&b).map_err(anyhow::Error::from))
            {
                Ok(d) => Some(d.rgb),
                Err(err) => {
                    say(&bar, format!("tengen replay: {name}: skipped, cannot read: {err:#}"));
                    unreadable += 1;
                    None
                }
            };
            decoded = Some((i, rgb));
        }
        let Some((_, Some(rgb))) = &decoded else { continue };
        let frame = match reader.read(rgb) {
            Ok(frame) => frame,
            Err(err @ FrameReadError::Calibration(_)) => bail!("{name}: {err}"),
            Err(err @ FrameReadError::BoardNotFound(_)) => {
                if no_board == 0 || reader.needs_search() {
                    say(&bar, format!("tengen replay: {name}: {err}; frame skipped"));
                }
                no_board += 1;
                continue;
            }
        };
        if frame.turned > 0 {
            say(
                &bar,
                format!(
                    "tengen replay: {name}: the view turned; the board keeps its first indexing ({} quarter turn(s))",
                    frame.turned
                ),
            );
        }
        let mut produced = match frame.moved_cells {
            Some(shift) => referee.board_moved(t, Some(shift)),
            None => Vec::new(),
        };
        let observation = Observation::from_points(
            t,
            frame.states().zip(frame.confidences()),
            frame.reading.occluded,
            Some(name.clone()),
        );
        produced.extend(referee.observe(&observation));
        for e in &produced {
            serde_json::to_writer(&mut events_out, e)?;
            events_out.write_all(b"\n")?;
            if e.kind.is_infraction() {
                say(
                    &bar,
                    format!(
                        "{:>7.1}s  {} (Art. {}): {}",
                        e.t,
                        e.kind.name(),
                        e.article.as_deref().unwrap_or("-"),
                        e.message.en
                    ),
                );
            }
        }
        bar.set_message(format!("move {}", referee.move_number()));
        all_events.extend(produced);
    }
    bar.finish_and_clear();
    events_out.flush()?;
    let sgf = write_game(&referee.game_record(&all_events, &GameInfo::default()));
    std::fs::write(out, sgf).with_context(|| format!("cannot write {}", out.display()))?;
    let infractions = all_events
        .iter()
        .filter(|e| e.kind.is_infraction())
        .filter_map(|e| e.infraction)
        .collect::<std::collections::BTreeSet<u64>>()
        .len();
    eprintln!(
        "tengen replay: {} frames seen ({} files, {unreadable} unreadable, {no_board} frames without a board), {} events, {} moves, {infractions} suspected infractions; wrote {} and {}",
        seen.len(),
        files.len(),
        all_events.len(),
        referee.move_number(),
        out.display(),
        events_path.display()
    );
    Ok(ExitCode::SUCCESS)
}
