//! `tengen replay FRAMES_DIR --out game.sgf --events events.jsonl [--calibration FILE]`: runs
//! vision and the referee over a folder of frames (sorted by name, one every 1/fps seconds) and
//! writes the game record (events as SGF comments) and the events (JSON lines).

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use tengen_referee::{Event, EventKind, Observation, PointObservation, RecordAction, Referee, RefereeConfig, StabiliserConfig, StartPosition};
use tengen_rules::{Color, Move, Point, PointState, Stone, BOARD_LINES};
use tengen_sgf::{write_game, GameRecord, RecordedMove};
use tengen_vision::image_io::decode_rgb;
use tengen_vision::tracking::{max_shift_cells, TrackStatus, Tracker, TrackerConfig};
use tengen_vision::{locate, read_board, BoardReading, GridGeometry, LocateOptions, ReaderConfig};

/// Arguments of `tengen replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// Folder of frames (JPEG or PNG), in time order when sorted by name.
    frames_dir: PathBuf,
    /// Where to write the game record (SGF).
    #[arg(long)]
    out: PathBuf,
    /// Where to write the events (JSON lines).
    #[arg(long)]
    events: PathBuf,
    /// Camera calibration (TOML, see calibration/README.md): fixes where the board is.
    #[arg(long)]
    calibration: Option<PathBuf>,
    /// Frames per second of the sequence (sets the time of each frame). When the folder holds
    /// a `sequence.json` with `frames[].file` and `frames[].time_s` (the project's samples), the
    /// times come from there instead, and each frame is seen again at this rate until the next.
    #[arg(long, default_value_t = 2.0)]
    fps: f64,
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
    /// Start from an empty board instead of adopting the first stable board (handicap).
    #[arg(long)]
    empty_start: bool,
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

/// A grid relocated more than this (in cells) from the last one raises `board_moved`.
const MOVED_CELLS: f64 = 0.25;

fn frame_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the folder {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension().and_then(|e| e.to_str()).is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "jpg" | "jpeg" | "png"))
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
    let value: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let mut times = BTreeMap::new();
    for frame in value.get("frames").and_then(serde_json::Value::as_array).into_iter().flatten() {
        if let (Some(file), Some(t)) = (frame.get("file").and_then(serde_json::Value::as_str), frame.get("time_s").and_then(serde_json::Value::as_f64)) {
            times.insert(file.to_string(), t);
        }
    }
    Ok(times)
}

fn observation(t: f64, reading: &BoardReading, frame_ref: String) -> Observation {
    let mut points = [[PointObservation::default(); BOARD_LINES]; BOARD_LINES];
    for (r, row) in reading.points.iter().enumerate().take(BOARD_LINES) {
        for (c, p) in row.iter().enumerate().take(BOARD_LINES) {
            points[r][c] = PointObservation { reading: p.state, confidence: p.confidence };
        }
    }
    Observation { t, points, occluded: reading.occluded, frame_ref: Some(frame_ref) }
}

/// The game record: start stones as setup, the moves, events as comments, the result.
fn record(referee: &Referee, events: &[Event], komi: f64) -> GameRecord {
    let mut rec = GameRecord::new(BOARD_LINES as u8, BOARD_LINES as u8);
    rec.komi = Some(komi);
    rec.rules = Some("Chinese".into());
    let (start, first) = referee.start_position();
    for p in Point::all() {
        match start.get(p) {
            Stone::Of(Color::Black) => rec.setup_black.push(p),
            Stone::Of(Color::White) => rec.setup_white.push(p),
            Stone::Empty => {}
        }
    }
    if !start.is_empty() {
        rec.first_player = Some(first);
    }
    // Comments by move number: everything but the moves themselves.
    let mut notes: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for e in events.iter().filter(|e| !matches!(e.kind, EventKind::Move | EventKind::Capture)) {
        let article = e.article.as_deref().map(|a| format!(" (Art. {a})")).unwrap_or_default();
        let id = e.infraction.map(|i| format!(" #{i}")).unwrap_or_default();
        let status = if e.kind.is_infraction() { format!(" [{:?}]", e.status).to_lowercase() } else { String::new() };
        notes.entry(e.move_number.unwrap_or(0)).or_default().push(format!("{}{id}{status}{article}: {}", e.kind.name(), e.message.en));
    }
    rec.root_comment = notes.remove(&0).map(|n| n.join("\n"));
    let mut carried: Vec<String> = Vec::new();
    for entry in referee.record() {
        if entry.struck {
            carried.push(format!("move {} struck from the record by the arbiter", entry.number));
            continue;
        }
        let mv = match &entry.action {
            RecordAction::Place { point } => Move::Place(*point),
            RecordAction::Pass => Move::Pass,
            RecordAction::Void { point, reason } => {
                carried.push(format!("void move at {} ({reason:?}): counts as a pass", point.human()));
                Move::Pass
            }
            RecordAction::Setup { missed, .. } => {
                // FF[4] readers of this project refuse setup after the first move: say it instead.
                carried.push(format!("resync: about {missed} moves were not seen; the board as seen was adopted here"));
                continue;
            }
            RecordAction::Turn => continue,
        };
        let mut comment: Vec<String> = std::mem::take(&mut carried);
        comment.extend(notes.remove(&entry.number).unwrap_or_default());
        rec.moves.push(RecordedMove { color: entry.side, mv, comment: (!comment.is_empty()).then(|| comment.join("\n")) });
    }
    if let Some(r) = referee.state().result {
        rec.result = Some(r.points);
    }
    rec
}

/// A board located afresh is indexed from the top-left corner *as seen*, so a hand-held camera
/// that turns (imago t1: the EXIF tag flips mid-game) would turn the whole board. Turns the
/// reading by the quarter turn that agrees best with the last reading, when that is clearly
/// better than not turning; returns the number of quarter turns applied.
fn align_quarter_turns(reading: &mut BoardReading, last: &BoardReading) -> Option<usize> {
    // Agreement: each stone of the last reading found again counts for, each one now read as
    // something else (another colour, or empty) against; new stones are moves and count neither.
    let agreement = |points: &[[tengen_vision::PointReading; BOARD_LINES]; BOARD_LINES]| -> i64 {
        let mut score = 0;
        for (row, last_row) in points.iter().zip(&last.points) {
            for (p, q) in row.iter().zip(last_row) {
                if !matches!(q.state, PointState::Black | PointState::White) || p.state == PointState::Unknown {
                    continue;
                }
                score += if p.state == q.state { 1 } else { -1 };
            }
        }
        score
    };
    let mut turned = reading.points;
    let mut best = (0, agreement(&reading.points));
    let unturned = best.1;
    for turns in 1..4 {
        turned = quarter_turn(&turned);
        let score = agreement(&turned);
        if score > best.1 {
            best = (turns, score);
        }
    }
    // At least one stone more found again (and one fewer lost): an empty board gives no reason
    // to turn, and a turn must beat staying put, not tie with it.
    if best.0 == 0 || best.1 < unturned + 2 {
        return None;
    }
    turn_reading(reading, best.0);
    Some(best.0)
}

/// Turns a reading (points and occluded points) by quarter turns clockwise.
fn turn_reading(reading: &mut BoardReading, turns: usize) {
    for _ in 0..turns % 4 {
        reading.points = quarter_turn(&reading.points);
        // (col, row) → the same quarter turn as the points.
        reading.occluded_points = reading.occluded_points.iter().map(|&(c, r)| (18 - r, c)).collect();
    }
}

/// The grid turned a quarter clockwise: the point at (row, col) moves to (col, 18 − row).
fn quarter_turn<T: Copy>(points: &[[T; BOARD_LINES]; BOARD_LINES]) -> [[T; BOARD_LINES]; BOARD_LINES] {
    let mut out = *points;
    for (r, row) in points.iter().enumerate() {
        for (c, &p) in row.iter().enumerate() {
            out[c][BOARD_LINES - 1 - r] = p;
        }
    }
    out
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
    let files = frame_files(&args.frames_dir)?;
    let times = sequence_times(&args.frames_dir)?;
    let calibration = match &args.calibration {
        Some(path) => Some(crate::calibration_file::load(path)?),
        None => None,
    };
    let config = RefereeConfig {
        table: args.table.clone(),
        game: args.game.clone(),
        komi_points: args.komi,
        start: if args.empty_start { StartPosition::Empty } else { StartPosition::AdoptFirstBoard },
        stabiliser: StabiliserConfig {
            frames: args.stable_frames.max(1),
            min_seconds: args.min_stable_seconds.max(0.0),
            ..StabiliserConfig::default()
        },
        ..RefereeConfig::default()
    };
    let mut referee = Referee::new(config);
    let events_file = std::fs::File::create(&args.events).with_context(|| format!("cannot create {}", args.events.display()))?;
    let mut events_out = BufWriter::new(events_file);
    let reader = ReaderConfig::default();
    let bar = ProgressBar::new(files.len() as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} frames {msg} [{elapsed}<{eta}]").unwrap_or_else(|_| ProgressStyle::default_bar()));
    let mut geometry: Option<GridGeometry> = None;
    let mut tracker: Option<Tracker> = None;
    let mut all_events: Vec<Event> = Vec::new();
    let (mut unreadable, mut no_board) = (0usize, 0usize);
    let mut last_reading: Option<BoardReading> = None;
    // Quarter turns that bring a freshly located view back to the first view's indexing.
    let mut view_turns = 0usize;
    for (i, path) in files.iter().enumerate() {
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().to_string());
        let t = times.get(&name).copied().unwrap_or(i as f64 / args.fps);
        bar.inc(1);
        let decoded = match std::fs::read(path).map_err(anyhow::Error::from).and_then(|b| decode_rgb(&b).map_err(anyhow::Error::from)) {
            Ok(d) => d,
            Err(err) => {
                say(&bar, format!("tengen replay: {name}: skipped, cannot read: {err:#}"));
                unreadable += 1;
                continue;
            }
        };
        let rgb = decoded.rgb;
        let size = [rgb.width(), rgb.height()];
        let mut produced = Vec::new();
        let mut located: Option<GridGeometry> = None;
        match &calibration {
            Some(cal) => located = Some(cal.geometry_for(size).with_context(|| format!("{name}: calibration does not fit this frame"))?),
            None if geometry.is_none() || args.relocate => match locate(&rgb, &LocateOptions::default()) {
                Ok(l) => {
                    if !args.relocate {
                        tracker = Some(Tracker::new(l.geometry.clone(), &image::imageops::grayscale(&rgb), TrackerConfig::default(), LocateOptions::default()));
                    }
                    located = Some(l.geometry);
                }
                Err(err) => {
                    if geometry.is_none() {
                        say(&bar, format!("tengen replay: {name}: no board found ({err}); frame skipped"));
                    }
                }
            },
            None => {
                if let Some(tr) = tracker.as_mut() {
                    // A lost grid (covered, out of view) keeps the last geometry: the reading
                    // then sees the hand.
                    if let TrackStatus::Moved { located: moved, shift_cells } = tr.check(&image::imageops::grayscale(&rgb)) {
                        produced.extend(referee.board_moved(t, Some(shift_cells)));
                        geometry = Some(moved.geometry);
                    }
                }
            }
        }
        let relocated = located.is_some();
        if let Some(new) = located {
            if let Some(old) = &geometry {
                let shift = max_shift_cells(old, &new);
                if shift > MOVED_CELLS {
                    produced.extend(referee.board_moved(t, Some(shift)));
                }
            }
            geometry = Some(new);
        }
        let Some(g) = &geometry else {
            no_board += 1;
            continue;
        };
        let mut reading = read_board(&rgb, g, &reader);
        if args.relocate && relocated {
            turn_reading(&mut reading, view_turns);
            if let Some(last) = &last_reading {
                if let Some(turns) = align_quarter_turns(&mut reading, last) {
                    view_turns = (view_turns + turns) % 4;
                    say(&bar, format!("tengen replay: {name}: the view turned; the board keeps its first indexing ({turns} quarter turn(s))"));
                }
            }
        }
        last_reading = Some(reading.clone());
        produced.extend(referee.observe(&observation(t, &reading, name.clone())));
        // A timed sequence (keyframes) shows each frame until the next one: seen by a camera at
        // `fps`, the same still board comes again, as the server's folder camera also does.
        let next_t = files.get(i + 1).and_then(|p| p.file_name()).and_then(|n| times.get(&*n.to_string_lossy()).copied());
        if let Some(next_t) = next_t {
            let mut repeat_t = t + 1.0 / args.fps;
            while repeat_t + 1e-9 < next_t {
                produced.extend(referee.observe(&observation(repeat_t, &reading, name.clone())));
                repeat_t += 1.0 / args.fps;
            }
        }
        for e in &produced {
            serde_json::to_writer(&mut events_out, e)?;
            events_out.write_all(b"\n")?;
            if e.kind.is_infraction() {
                say(&bar, format!("{:>7.1}s  {} (Art. {}): {}", e.t, e.kind.name(), e.article.as_deref().unwrap_or("-"), e.message.en));
            }
        }
        bar.set_message(format!("move {}", referee.move_number()));
        all_events.extend(produced);
    }
    bar.finish_and_clear();
    events_out.flush()?;
    let sgf = write_game(&record(&referee, &all_events, args.komi));
    std::fs::write(&args.out, sgf).with_context(|| format!("cannot write {}", args.out.display()))?;
    let infractions = all_events.iter().filter(|e| e.kind.is_infraction()).filter_map(|e| e.infraction).collect::<std::collections::BTreeSet<u64>>().len();
    eprintln!(
        "tengen replay: {} frames ({unreadable} unreadable, {no_board} before the board was found), {} events, {} moves, {infractions} suspected infractions; wrote {} and {}",
        files.len(),
        all_events.len(),
        referee.move_number(),
        args.out.display(),
        args.events.display()
    );
    Ok(ExitCode::SUCCESS)
}
