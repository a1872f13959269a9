//! `tengen eval`: measure the vision against ground truth, folder by folder — on labelled photos
//! (`eval photos DIR`) and on frames rendered by tengen-synth (`eval rendered`) — and write a
//! Markdown + JSON report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use serde::Serialize;
use tengen_rules::{PointState, BOARD_LINES};
use tengen_vision::evaluate::{
    corner_error_cells, corner_errors_cells, displaced_corners, parse_grid, reading_grid, score, Calibration,
    Confusion, Grid,
};
use tengen_vision::fit::{fit_occlusion, fit_reader};
use tengen_vision::fit::{fit_patch_reader, PatchFitOptions, PatchSample};
use tengen_vision::locate::refine_or_find_corners;
use tengen_vision::read_board_detailed;
use tengen_vision::OcclusionModel;
use tengen_vision::{locate, GridGeometry, LocateOptions, PatchModel, ReaderConfig, ReaderModel};

use crate::photo_set::{hand_label, HandLabel};

/// Arguments of `tengen eval`.
#[derive(clap::Args)]
pub struct EvalArgs {
    #[command(subcommand)]
    target: EvalTarget,
}

#[derive(clap::Subcommand)]
enum EvalTarget {
    /// Score every image under DIR that has a `.grid.txt` (points) or `.corners.json` (corners).
    Photos {
        /// Folder of photos (searched recursively).
        dir: PathBuf,
        /// Write `eval-photos.md` and `eval-photos.json` into this folder.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Score each source with a reader model fitted on the other sources only
        /// (leave-one-source-out; sources without point labels get the model fitted on all).
        #[arg(long)]
        loso: bool,
        /// Read each photo on its labelled grid where it has one (the reader alone, without the
        /// search's mistakes).
        #[arg(long)]
        label_geometry: bool,
        /// Give each photo's labelled corners moved this many cells (a direction fixed by the
        /// photo and the corner), refined to the lines as `calibrate --corners` does, instead of
        /// searching: what a person's clicks that far off give (photos without labelled corners
        /// are searched as usual).
        #[arg(long, conflicts_with = "label_geometry")]
        corners_off: Option<f64>,
        /// Read with the classical reader alone, without the learned point reader (which by
        /// default is the shipped `models/patch-reader.json`, and with --loso is fitted once per
        /// left-out source as `tengen fit patch-reader --without SOURCE` does).
        #[arg(long)]
        classical: bool,
        /// With --loso, the seed of the learned point reader's fits (default: the shipped
        /// model's). One fit swings with its seed by about a point and a half per point on the
        /// goban-watcher sources (models/patch-reader.md): judge a change of the learned reader
        /// on several seeds, not one.
        #[arg(long, requires = "loso", conflicts_with = "classical")]
        patch_seed: Option<u64>,
    },
    /// Render frames across presets, colour casts and hands and score them against exact truth.
    Rendered {
        /// Frames per preset.
        #[arg(long, default_value_t = 4)]
        per_preset: u64,
        /// Write `eval-rendered.md` and `eval-rendered.json` into this folder.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        stress: crate::eval_stress::StressArgs,
    },
    /// Compare two stress runs (`eval rendered --stress --out DIR`) bucket by bucket; exits
    /// with status 1 when a bucket got worse (fewer found, points right, exact boards or hands
    /// flagged, more clean frames flagged) or is missing from NEW.
    Compare {
        /// The baseline run's folder (holding `eval-stress.json`).
        base: PathBuf,
        /// The new run's folder.
        new: PathBuf,
    },
}

/// Confidence bin edges for the reliability table.
const CONFIDENCE_BINS: [f64; 6] = [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999];

/// Scores of one folder (or condition).
#[derive(Debug, Default, Serialize)]
struct FolderScore {
    images: usize,
    located: usize,
    graded_boards: usize,
    exact_boards: usize,
    confusion: Confusion,
    corner_frames: usize,
    corner_error_sum: f64,
    corner_error_max: f64,
    /// Frames whose worst corner is within 0.25 and 0.5 cell.
    corner_worst_within_quarter: usize,
    corner_worst_within_half: usize,
    /// The same over the frames labelled as showing no hand.
    corner_frames_no_hand: usize,
    corner_no_hand_within_quarter: usize,
    /// Frames with true corners where no board was located.
    corner_missed: usize,
    /// Frames without a hand whose 4 outer crossings could be measured from the pixels
    /// (`locate::crossings`), and how many of them have our worst corner, and the label's
    /// worst corner, within 0.25 cell of those crossings.
    crossing_frames: usize,
    crossing_ours_within_quarter: usize,
    crossing_labels_within_quarter: usize,
    occluded_flagged: usize,
    /// Frames with a hand in the truth (rendered only) and how many of them were flagged.
    hand_frames: usize,
    hand_frames_flagged: usize,
    clean_frames_flagged: usize,
    calibration: Calibration,
    decode_ms: Vec<f64>,
    locate_ms: Vec<f64>,
    read_ms: Vec<f64>,
    failures: Vec<String>,
}

impl FolderScore {
    /// Empty scores with the reliability bins set up.
    fn with_bins() -> Self {
        Self { calibration: Calibration::new(&CONFIDENCE_BINS), ..Self::default() }
    }
}

/// Runs `tengen eval`.
pub fn run(args: EvalArgs) -> anyhow::Result<ExitCode> {
    match args.target {
        EvalTarget::Photos { dir, out, loso, label_geometry, corners_off, classical, patch_seed } => {
            let start = match (label_geometry, corners_off) {
                (true, _) => GridStart::Labels,
                (false, Some(cells)) => GridStart::LabelsOff(cells),
                (false, None) => GridStart::Search,
            };
            let patch_fit = (!classical).then(|| PatchFitOptions::with_seed(patch_seed));
            eval_photos(&dir, out.as_deref(), loso, start, patch_fit)
        }
        EvalTarget::Rendered { stress, out, .. } if stress.stress => crate::eval_stress::run(&stress, out.as_deref()),
        EvalTarget::Rendered { per_preset, out, .. } => eval_rendered(per_preset, out.as_deref()),
        EvalTarget::Compare { base, new } => crate::stress_compare::run(&base, &new),
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Where a photo's grid comes from in `eval photos`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum GridStart {
    /// The search, no clicks.
    Search,
    /// The labelled grid, refined to the lines (the reader alone).
    Labels,
    /// The labelled corners moved this many cells, then refined: a person's clicks.
    LabelsOff(f64),
}

// Several parallel 19×19 arrays are indexed together, hence index loops.
#[allow(clippy::needless_range_loop)]
fn eval_photos(
    dir: &Path,
    out: Option<&Path>,
    loso: bool,
    start: GridStart,
    patch_fit: Option<PatchFitOptions>,
) -> anyhow::Result<ExitCode> {
    let (photos, excluded) = crate::photo_set::collect(dir)?;
    let mut models = reader_models(&photos, loso)?;
    match patch_fit {
        None => models.patch_all = None,
        Some(options) if loso => models.fit_patch_readers(&photos, &options)?,
        Some(_) => {}
    }
    let mut folders: BTreeMap<String, FolderScore> = BTreeMap::new();
    let mut sequence_frames = Vec::new();
    for photo in &photos {
        let (rel, path, truth, true_corners) = (&photo.rel, &photo.path, photo.truth, photo.corners);
        let config = ReaderConfig {
            model: models.for_source(&photo.source),
            occlusion_model: Some(models.occlusion_for(&photo.source)),
            patch_model: models.patch_for(&photo.source),
            ..ReaderConfig::default()
        };
        let folder = Path::new(rel).parent().map(|p| p.to_string_lossy().to_string()).unwrap_or_default();
        let score_of = folders.entry(folder).or_insert_with(FolderScore::with_bins);
        score_of.images += 1;
        let frame = match &photo.frame {
            Ok(f) => f,
            Err(e) => {
                score_of.failures.push(format!("{rel}: unreadable image: {e}"));
                continue;
            }
        };
        score_of.decode_ms.push(photo.decode_ms);
        let geometry = match (start, &photo.corners) {
            (GridStart::Labels, _) => photo.label_geometry().ok_or("no labelled grid".to_string()),
            (GridStart::LabelsOff(cells), Some(corners)) => {
                let given = displaced_corners(corners, cells, rel);
                refine_or_find_corners(&frame.rgb, given, None)
                    .map(|g| g.located.geometry)
                    .map_err(|e| format!("given corners refused: {e}"))
            }
            (GridStart::LabelsOff(_) | GridStart::Search, _) => photo.located.clone(),
        };
        // The reader alone falls back to the search where a photo has no labelled grid; given
        // corners that are refused count as a board not located (a person would see the refusal).
        let geometry = if start == GridStart::Labels { geometry.or_else(|_| photo.located.clone()) } else { geometry };
        let geometry = match geometry {
            Ok(g) => g,
            Err(e) => {
                score_of.failures.push(format!("{rel}: board not located: {e}"));
                if true_corners.is_some() {
                    // An unlocated board counts in the corner rates as a miss.
                    score_of.corner_missed += 1;
                    if hand_label(&path.to_string_lossy()).is_some_and(|h| h != Some(HandLabel::Hand)) {
                        score_of.corner_frames_no_hand += 1;
                    }
                }
                if let Some(truth) = truth {
                    // Unlocated boards count: every point unknown.
                    score_of.graded_boards += 1;
                    let unknown = [[PointState::Unknown; BOARD_LINES]; BOARD_LINES];
                    score_of.confusion.merge(&score(&unknown, &truth, false).confusion);
                }
                continue;
            }
        };
        score_of.locate_ms.push(photo.locate_ms);
        score_of.located += 1;
        let t = Instant::now();
        let details = read_board_detailed(&frame.rgb, &geometry, &config);
        score_of.read_ms.push(ms(t));
        let hand = hand_label(&path.to_string_lossy());
        if details.reading.occluded {
            score_of.occluded_flagged += 1;
            if hand != Some(Some(HandLabel::Hand)) {
                score_of
                    .failures
                    .push(format!("{rel}: flagged occluded ({} points)", details.reading.occluded_points.len()));
            }
        }
        match hand {
            Some(Some(HandLabel::Hand)) => {
                score_of.hand_frames += 1;
                score_of.hand_frames_flagged += usize::from(details.reading.occluded);
                if !details.reading.occluded {
                    score_of.failures.push(format!("{rel}: a hand over the board, not flagged"));
                }
            }
            Some(_) => score_of.clean_frames_flagged += usize::from(details.reading.occluded),
            None => {}
        }
        if let Some(c) = true_corners {
            let e = corner_error_cells(&geometry.corners(), &c);
            let worst = corner_errors_cells(&geometry.corners(), &c).into_iter().fold(0.0, f64::max);
            score_of.corner_frames += 1;
            score_of.corner_error_sum += e;
            score_of.corner_error_max = score_of.corner_error_max.max(e);
            score_of.corner_worst_within_quarter += usize::from(worst <= 0.25);
            score_of.corner_worst_within_half += usize::from(worst <= 0.5);
            if hand.is_some_and(|h| h != Some(HandLabel::Hand)) {
                score_of.corner_frames_no_hand += 1;
                score_of.corner_no_hand_within_quarter += usize::from(worst <= 0.25);
                // An independent referee for the labels: the outer crossings measured locally.
                let measured = tengen_vision::locate::crossings::measure_corners(&frame.rgb, &geometry);
                if let [Some(a), Some(b), Some(c2), Some(d)] = measured {
                    let crossings = [a, b, c2, d];
                    let worst_of =
                        |found: &[[f64; 2]; 4]| corner_errors_cells(found, &crossings).into_iter().fold(0.0, f64::max);
                    score_of.crossing_frames += 1;
                    score_of.crossing_ours_within_quarter += usize::from(worst_of(&geometry.corners()) <= 0.25);
                    score_of.crossing_labels_within_quarter += usize::from(worst_of(&c) <= 0.25);
                }
            }
            if worst > 0.5 {
                score_of.failures.push(format!("{rel}: worst corner {worst:.2} cells off"));
            }
        }
        if let Some(truth) = truth {
            let read = reading_grid(&details.reading);
            // A photo has no canonical "up": score the best of the 8 board symmetries.
            let s = score(&read, &truth, true);
            score_of.graded_boards += 1;
            score_of.exact_boards += usize::from(s.exact);
            score_of.confusion.merge(&s.confusion);
            let truth_seen = s.symmetry.inverse().apply(&truth);
            if let Some((sequence, number)) = sequence_position(rel) {
                // Moves are diffs between frames: compare them in stored pixel order, because
                // the EXIF orientation may change within a sequence (imago t1).
                let raw_label = std::fs::read_to_string(crate::photo_set::sidecar(path, ".grid.raw.txt"))
                    .ok()
                    .and_then(|t| parse_grid(&t).ok());
                sequence_frames.push(SequenceFrame {
                    sequence,
                    number,
                    read: to_stored(&s.symmetry.apply(&read), frame.exif_orientation),
                    truth: to_stored(&truth, frame.exif_orientation),
                    raw_label_agrees: raw_label.map(|raw| raw == to_stored(&truth, frame.exif_orientation)),
                });
            }
            for r in 0..BOARD_LINES {
                for c in 0..BOARD_LINES {
                    let p = details.reading.points[r][c];
                    if p.best_guess != PointState::Unknown {
                        score_of.calibration.add(f64::from(p.confidence), p.best_guess == truth_seen[r][c]);
                    }
                }
            }
            if !s.exact {
                score_of.failures.push(format!(
                    "{rel}: {} wrong, {} unknown{}",
                    s.confusion.wrong(),
                    s.confusion.unknown(),
                    if s.symmetry == tengen_vision::evaluate::Symmetry::IDENTITY {
                        String::new()
                    } else {
                        format!(" (scored under {:?})", s.symmetry)
                    }
                ));
            }
        }
    }
    let title = format!(
        "Vision on labelled photos: `tengen eval photos {}{}{}`",
        dir.display(),
        if loso { " --loso" } else { "" },
        match start {
            GridStart::Search => String::new(),
            GridStart::Labels => " --label-geometry".to_string(),
            GridStart::LabelsOff(cells) => format!(" --corners-off {cells}"),
        }
    );
    let moves = move_pairs(&sequence_frames);
    let mut notes = vec![
        models.describe(),
        match start {
            GridStart::Labels => "Read on the labelled grid where a photo has one (`.grid.json`, `.corners.json`): the reader alone; corner figures are then the labels' own.".to_string(),
            GridStart::LabelsOff(cells) => format!("Read on the grid that corners given {cells} cell off the labelled ones span, refined to the lines as `calibrate --corners` refines clicks (each corner moved in a direction fixed by the photo's name and the corner); photos without labelled corners are searched (no clicks). A refusal counts as a board not located."),
            GridStart::Search => "Read on the grid the search found (no clicks).".to_string(),
        },
        "Points are scored as the best of the 8 board symmetries: a photo has no canonical \"up\".".to_string(),
        format!("Excluded (mislabelled): {}.", if excluded.is_empty() { "none found".to_string() } else { excluded.join(", ") }),
        "A board that is not located counts as 361 unknown points.".to_string(),
        "Occlusion: frames are scored against our own hand labels (tests/labels/roboflow-corners-hands.txt, tests/labels/imago-hands.txt; goban-watcher-dev and gomrade-singles are taken to show no hand), and every flagged frame without a hand is listed.".to_string(),
        "Corners: the worst of the 4 corners per frame, in grid cells; a frame where no board was located counts as a miss. The last column checks both our corners and the labels against the outer line crossings measured locally from the pixels (`locate::crossings`, independent of the locator's fit), on the frames where all four can be measured: the roboflow labels sit about 0.1 cell inside the crossings (see the locate notes).".to_string(),
    ];
    notes.extend(moves.notes());
    for (sequence, pairs) in &moves.sequences {
        if let Some(f) = folders.get_mut(sequence) {
            f.failures.extend(pairs.wrong.iter().cloned());
        }
    }
    finish(&title, &notes, &folders, out, "eval-photos")
}

/// The reader model each source is scored with.
struct ReaderModels {
    /// Per left-out source, the model fitted on the others (empty: every source uses `all`).
    left_out: BTreeMap<String, ReaderModel>,
    /// The model for sources without a fold of their own.
    all: ReaderModel,
    /// Per left-out source, the occlusion model fitted on the other sources and the rendered
    /// frames (empty: every source uses `occlusion_all`).
    occlusion_left_out: BTreeMap<String, OcclusionModel>,
    /// The occlusion model for sources without a fold of their own.
    occlusion_all: OcclusionModel,
    /// Per left-out source, the learned point reader fitted without it (with `--patch-reader`).
    patch_left_out: BTreeMap<String, &'static PatchModel>,
    /// The learned point reader for sources without a fold of their own (`None`: the classical
    /// reader decides).
    patch_all: Option<&'static PatchModel>,
    /// The seed of the learned reader's fits, when this run fitted them.
    patch_seed: Option<u64>,
    loso: bool,
}

impl ReaderModels {
    fn patch_for(&self, source: &str) -> Option<&'static PatchModel> {
        self.patch_left_out.get(source).copied().or(self.patch_all)
    }

    /// Fits the learned point reader on every source and once per source with point labels,
    /// without it, as `tengen fit patch-reader [--without SOURCE]` does.
    fn fit_patch_readers(
        &mut self,
        photos: &[crate::photo_set::Photo],
        options: &PatchFitOptions,
    ) -> anyhow::Result<()> {
        self.patch_seed = Some(options.seed);
        let (photo_samples, rendered) = crate::cmd_fit::patch_training_samples(photos)?;
        let fit_without = |left_out: Option<&str>| -> anyhow::Result<&'static PatchModel> {
            let samples: Vec<PatchSample> = photo_samples
                .iter()
                .filter(|s| Some(s.source.as_str()) != left_out)
                .chain(&rendered)
                .cloned()
                .collect();
            let started = Instant::now();
            let model = fit_patch_reader(&samples, options)
                .with_context(|| format!("fitting the patch reader without {left_out:?}"))?;
            eprintln!(
                "patch reader without {left_out:?}: {} points, {:.1} s",
                samples.len(),
                started.elapsed().as_secs_f64()
            );
            Ok(model.leak())
        };
        self.patch_all = Some(fit_without(None)?);
        let sources: std::collections::BTreeSet<&str> = photo_samples.iter().map(|s| s.source.as_str()).collect();
        for source in sources {
            self.patch_left_out.insert(source.to_string(), fit_without(Some(source))?);
        }
        Ok(())
    }

    fn for_source(&self, source: &str) -> ReaderModel {
        self.left_out.get(source).copied().unwrap_or(self.all)
    }

    fn occlusion_for(&self, source: &str) -> OcclusionModel {
        self.occlusion_left_out.get(source).copied().unwrap_or(self.occlusion_all)
    }

    fn describe(&self) -> String {
        let patch = match (self.patch_all.is_some(), self.patch_left_out.is_empty()) {
            (false, _) => String::new(),
            (true, true) => " The learned point reader (the shipped `models/patch-reader.json`, fitted on every source, in sample) is multiplied with the classical reader on the points the occlusion mask leaves.".to_string(),
            (true, false) => format!(
                " The learned point reader is multiplied with the classical reader on the points the occlusion mask leaves: for each of {} the one fitted without it (`tengen fit patch-reader --without SOURCE`, seed {:#x}), for the rest the one fitted on all.",
                self.patch_left_out.keys().cloned().collect::<Vec<_>>().join(", "),
                self.patch_seed.unwrap_or(PatchFitOptions::default().seed)
            ),
        };
        self.describe_classical() + &patch
    }

    fn describe_classical(&self) -> String {
        if self.loso {
            format!(
                "Leave one source out: each of {} is read with a reader model fitted on the other sources only (`reader_model::fit`, as `tengen fit reader` does); sources without point labels (roboflow-corners) are read with the model fitted on all of them, which never saw them. The occlusion decision of each of {} is the model fitted on the other sources' hand labels and the rendered frames (`tengen fit occlusion --without SOURCE`).",
                self.left_out.keys().cloned().collect::<Vec<_>>().join(", "),
                self.occlusion_left_out.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        } else {
            "In sample: every photo is read with the shipped models (`models/point-reader.toml`, `models/occlusion.toml`).".to_string()
        }
    }
}

/// The shipped model, or with `loso` one model per source with point labels fitted without it.
fn reader_models(photos: &[crate::photo_set::Photo], loso: bool) -> anyhow::Result<ReaderModels> {
    if !loso {
        return Ok(ReaderModels {
            left_out: BTreeMap::new(),
            all: ReaderModel::embedded(),
            occlusion_left_out: BTreeMap::new(),
            occlusion_all: OcclusionModel::embedded(),
            patch_left_out: BTreeMap::new(),
            patch_all: Some(PatchModel::embedded()),
            patch_seed: None,
            loso,
        });
    }
    let frames = crate::photo_set::labelled_frames(photos);
    let all = fit_reader(&frames).context("fitting the reader on every source")?;
    let mut left_out = BTreeMap::new();
    let sources: std::collections::BTreeSet<&str> = frames.iter().map(|f| f.source.as_str()).collect();
    for source in sources {
        let others: Vec<_> = frames.iter().filter(|f| f.source != source).cloned().collect();
        left_out.insert(
            source.to_string(),
            fit_reader(&others).with_context(|| format!("fitting the reader without {source}"))?,
        );
    }
    let config = ReaderConfig::default();
    let photo_samples = crate::photo_set::occlusion_samples(photos, &config);
    let rendered = crate::photo_set::rendered_occlusion_samples(&config)?;
    let occlusion_all = fit_occlusion(photo_samples.iter().chain(&rendered).cloned().collect::<Vec<_>>().as_slice())
        .context("fitting the occlusion model on every source")?;
    let mut occlusion_left_out = BTreeMap::new();
    let sources: std::collections::BTreeSet<&str> = photo_samples.iter().map(|s| s.source.as_str()).collect();
    for source in sources {
        let others: Vec<_> = photo_samples.iter().filter(|s| s.source != source).chain(&rendered).cloned().collect();
        occlusion_left_out.insert(
            source.to_string(),
            fit_occlusion(&others).with_context(|| format!("fitting the occlusion model without {source}"))?,
        );
    }
    Ok(ReaderModels {
        left_out,
        all,
        occlusion_left_out,
        occlusion_all,
        patch_left_out: BTreeMap::new(),
        patch_all: None,
        patch_seed: None,
        loso,
    })
}

/// A labelled frame of a move-by-move sequence, in stored pixel order.
struct SequenceFrame {
    /// The folder and name prefix (`imago-tests/t2/t2`), shared by the frames of one game.
    sequence: String,
    /// The frame (move) number.
    number: u32,
    read: Grid,
    truth: Grid,
    /// Whether the label turned to stored order equals `.grid.raw.txt`, when there is one.
    raw_label_agrees: Option<bool>,
}

/// A frame's sequence and number from a name like `t2/skip/t2_053.jpg`: frames of one game share
/// the name prefix (the `skip/` subfolder of imago t2 holds frames of the same game).
fn sequence_position(rel: &str) -> Option<(String, u32)> {
    let path = Path::new(rel);
    let stem = path.file_stem()?.to_str()?;
    let (prefix, number) = stem.rsplit_once('_')?;
    let number = number.parse().ok()?;
    let mut folder = path.parent().unwrap_or(Path::new(""));
    if folder.file_name().is_some_and(|n| n == "skip") {
        folder = folder.parent().unwrap_or(Path::new(""));
    }
    Some((format!("{}/{prefix}", folder.to_string_lossy()), number))
}

/// A grid as seen turned back into stored pixel order, undoing the EXIF orientation (1–8).
#[allow(clippy::needless_range_loop)] // (r, c) index two grids through a coordinate map
fn to_stored(seen: &Grid, exif_orientation: u8) -> Grid {
    let n = BOARD_LINES - 1;
    let mut stored = *seen;
    for r in 0..BOARD_LINES {
        for c in 0..BOARD_LINES {
            // Where the seen point (r, c) was in the stored image.
            let (sr, sc) = match exif_orientation {
                2 => (r, n - c),
                3 => (n - r, n - c),
                4 => (n - r, c),
                5 => (c, r),
                6 => (n - c, r),
                7 => (n - c, n - r),
                8 => (c, n - r),
                _ => (r, c),
            };
            stored[sr][sc] = seen[r][c];
        }
    }
    stored
}

/// How many consecutive frame pairs of each sequence gave exactly the true move.
#[derive(Default)]
struct MovePairs {
    sequences: BTreeMap<String, PairScore>,
    raw_checked: usize,
    raw_disagreeing: usize,
}

#[derive(Default)]
struct PairScore {
    pairs: usize,
    exact: usize,
    wrong: Vec<String>,
}

impl MovePairs {
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let (pairs, exact) = self.sequences.values().fold((0, 0), |(p, e), s| (p + s.pairs, e + s.exact));
        if pairs > 0 {
            let each: Vec<String> =
                self.sequences.iter().map(|(k, s)| format!("{k} {}/{}", s.exact, s.pairs)).collect();
            notes.push(format!(
                "Move-by-move sequences: {exact}/{pairs} consecutive frame pairs ({}) give exactly the true change (every point that changed, to the right colour, and nothing else; a `?` counts as a change); {}. Pairs with an excluded frame are not scored.",
                pct(exact as u64, pairs as u64),
                each.join(", ")
            ));
        }
        if self.raw_checked > 0 {
            notes.push(format!(
                "EXIF orientation undone for the pairs: {}/{} labels turned to stored order equal their `.grid.raw.txt`.",
                self.raw_checked - self.raw_disagreeing,
                self.raw_checked
            ));
        }
        notes
    }
}

/// Scores the inferred move of every pair of consecutive frames (n, n+1) of a sequence.
fn move_pairs(frames: &[SequenceFrame]) -> MovePairs {
    let mut out = MovePairs::default();
    for f in frames {
        if let Some(agrees) = f.raw_label_agrees {
            out.raw_checked += 1;
            out.raw_disagreeing += usize::from(!agrees);
        }
    }
    let mut by_sequence: BTreeMap<&str, Vec<&SequenceFrame>> = BTreeMap::new();
    for f in frames {
        by_sequence.entry(&f.sequence).or_default().push(f);
    }
    for (sequence, mut list) in by_sequence {
        list.sort_by_key(|f| f.number);
        for pair in list.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if b.number != a.number + 1 {
                continue;
            }
            let changes = |from: &Grid, to: &Grid| -> Vec<(usize, usize, PointState)> {
                (0..BOARD_LINES)
                    .flat_map(|r| (0..BOARD_LINES).map(move |c| (r, c)))
                    .filter(|&(r, c)| from[r][c] != to[r][c])
                    .map(|(r, c)| (r, c, to[r][c]))
                    .collect()
            };
            let (seen, truth) = (changes(&a.read, &b.read), changes(&a.truth, &b.truth));
            let folder = sequence.rsplit_once('/').map_or(sequence, |(f, _)| f).to_string();
            let score = out.sequences.entry(folder).or_default();
            score.pairs += 1;
            if seen == truth {
                score.exact += 1;
            } else {
                score.wrong.push(format!(
                    "move pair {}→{}: {} point(s) changed in the readings, {} in the truth",
                    a.number,
                    b.number,
                    seen.len(),
                    truth.len()
                ));
            }
        }
    }
    out
}

#[allow(clippy::needless_range_loop)]
fn eval_rendered(per_preset: u64, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    use tengen_rules::Stone;
    use tengen_synth::{render, ColourCast, Hand, Position, Scene, Side, PRESETS};
    let config = ReaderConfig::default();
    let mut folders: BTreeMap<String, FolderScore> = BTreeMap::new();
    let casts = [ColourCast::Neutral, ColourCast::Blue, ColourCast::Green, ColourCast::Yellow];
    for (pi, preset) in PRESETS.iter().enumerate() {
        for variant in 0..per_preset {
            let seed = 1000 + pi as u64 * 100 + variant;
            let Some(mut scene) = Scene::preset(preset) else { continue };
            scene = scene.with_seed(seed);
            scene.light.cast = casts[(variant as usize + pi) % casts.len()];
            if scene.light.cast != ColourCast::Neutral {
                scene.light.cast_strength = scene.light.cast_strength.max(0.5);
            }
            // Every third frame has a hand reaching in from a side.
            let with_hand = variant % 3 == 2;
            if with_hand {
                let side = [Side::South, Side::East, Side::North, Side::West][(variant as usize / 3) % 4];
                scene =
                    scene.with_hand(Hand::reaching(side, 4.0 + (seed % 11) as f64, 0.3 + 0.1 * (variant % 4) as f64));
            }
            let mut rng = tengen_synth::noise::Rng::new(seed);
            let mut position = Position::empty();
            for k in 0..(30 + 20 * (variant % 5)) {
                let c = (rng.unit() * BOARD_LINES as f64) as usize % BOARD_LINES;
                let r = (rng.unit() * BOARD_LINES as f64) as usize % BOARD_LINES;
                position.set(c, r, if k % 2 == 0 { Stone::BLACK } else { Stone::WHITE });
            }
            let frame = render(&position, &scene)?;
            let truth_info = &frame.truth;
            let score_of = folders
                .entry(format!("{preset}{}", if with_hand { " + hand" } else { "" }))
                .or_insert_with(FolderScore::with_bins);
            score_of.images += 1;
            let t = Instant::now();
            let located = locate(&frame.image, &LocateOptions::default());
            score_of.locate_ms.push(ms(t));
            // Reading is scored through the exact geometry so it measures the reader alone;
            // location is scored by its corner error.
            let geometry = GridGeometry { homography: truth_info.homography, lens: truth_info.lens };
            match located {
                Ok(l) => {
                    score_of.located += 1;
                    let e = corner_error_cells(&l.geometry.corners(), &truth_info.corners);
                    score_of.corner_frames += 1;
                    score_of.corner_error_sum += e;
                    score_of.corner_error_max = score_of.corner_error_max.max(e);
                }
                Err(e) => score_of.failures.push(format!("seed {seed}: not located: {e}")),
            }
            let t = Instant::now();
            let details = read_board_detailed(&frame.image, &geometry, &config);
            score_of.read_ms.push(ms(t));
            let truth = parse_grid(&truth_info.grid.join("\n"))?;
            let mut read = reading_grid(&details.reading);
            crate::eval_stress::excuse_hidden_unknowns(&mut read, &truth, truth_info);
            let s = score(&read, &truth, false);
            score_of.graded_boards += 1;
            score_of.exact_boards += usize::from(s.exact);
            score_of.confusion.merge(&s.confusion);
            for r in 0..BOARD_LINES {
                for c in 0..BOARD_LINES {
                    let p = details.reading.points[r][c];
                    if p.best_guess != PointState::Unknown && !truth_info.occluded[r * BOARD_LINES + c] {
                        score_of.calibration.add(f64::from(p.confidence), p.best_guess == truth[r][c]);
                    }
                }
            }
            if details.reading.occluded {
                score_of.occluded_flagged += 1;
            }
            if truth_info.hand_over_board {
                score_of.hand_frames += 1;
                score_of.hand_frames_flagged += usize::from(details.reading.occluded);
            } else {
                score_of.clean_frames_flagged += usize::from(details.reading.occluded);
            }
            if !s.exact {
                score_of.failures.push(format!(
                    "seed {seed} cast {:?}: {} wrong, {} unknown",
                    scene.light.cast,
                    s.confusion.wrong(),
                    s.confusion.unknown()
                ));
            }
        }
    }
    let title = format!("Vision on rendered frames: `tengen eval rendered --per-preset {per_preset}`");
    let notes = vec![
        "Reading is scored through the renderer's exact geometry (it measures the reader alone); location by its corner error.".to_string(),
        "Points the truth marks hidden by a hand count as right when read `?`; a definite reading there is scored.".to_string(),
    ];
    finish(&title, &notes, &folders, out, "eval-rendered")
}

fn pct(n: u64, d: u64) -> String {
    if d == 0 {
        "–".into()
    } else {
        format!("{:.3} %", 100.0 * n as f64 / d as f64)
    }
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

fn finish(
    title: &str,
    notes: &[String],
    folders: &BTreeMap<String, FolderScore>,
    out: Option<&Path>,
    stem: &str,
) -> anyhow::Result<ExitCode> {
    let mut md = String::new();
    let _ = writeln!(md, "# {title}\n");
    for n in notes {
        let _ = writeln!(md, "- {n}");
    }
    let _ = writeln!(
        md,
        "\n| folder | images | located | per-point accuracy | wrong | unknown | exact boards | corner error (cells, mean / max) | flagged occluded | hand frames flagged | clean frames flagged | decode / locate / read ms (median) |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut total = FolderScore::with_bins();
    for (name, f) in folders {
        row(&mut md, name, f);
        total.images += f.images;
        total.located += f.located;
        total.graded_boards += f.graded_boards;
        total.exact_boards += f.exact_boards;
        total.confusion.merge(&f.confusion);
        total.corner_frames += f.corner_frames;
        total.corner_error_sum += f.corner_error_sum;
        total.corner_error_max = total.corner_error_max.max(f.corner_error_max);
        total.occluded_flagged += f.occluded_flagged;
        total.hand_frames += f.hand_frames;
        total.hand_frames_flagged += f.hand_frames_flagged;
        total.clean_frames_flagged += f.clean_frames_flagged;
        total.calibration.merge(&f.calibration);
        total.decode_ms.extend(&f.decode_ms);
        total.locate_ms.extend(&f.locate_ms);
        total.read_ms.extend(&f.read_ms);
    }
    row(&mut md, "**all**", &total);
    if folders.values().any(|f| f.corner_frames + f.corner_missed > 0) {
        let _ = writeln!(md, "\n## Corners (worst of the 4 per frame)\n");
        let _ = writeln!(md, "| folder | frames | not located | worst ≤ 0.25 cell | worst ≤ 0.5 cell | frames without a hand: worst ≤ 0.25 cell | without a hand, 4 crossings measured: ours / labels ≤ 0.25 cell of them |\n|---|---|---|---|---|---|---|");
        for (name, f) in folders.iter().filter(|(_, f)| f.corner_frames + f.corner_missed > 0) {
            let all = (f.corner_frames + f.corner_missed) as u64;
            let _ = writeln!(
                md,
                "| {name} | {all} | {} | {}/{all} ({}) | {}/{all} ({}) | {} | {} |",
                f.corner_missed,
                f.corner_worst_within_quarter,
                pct(f.corner_worst_within_quarter as u64, all),
                f.corner_worst_within_half,
                pct(f.corner_worst_within_half as u64, all),
                if f.corner_frames_no_hand > 0 {
                    format!(
                        "{}/{} ({})",
                        f.corner_no_hand_within_quarter,
                        f.corner_frames_no_hand,
                        pct(f.corner_no_hand_within_quarter as u64, f.corner_frames_no_hand as u64)
                    )
                } else {
                    "–".into()
                },
                if f.crossing_frames > 0 {
                    format!(
                        "{}/{} / {}/{}",
                        f.crossing_ours_within_quarter,
                        f.crossing_frames,
                        f.crossing_labels_within_quarter,
                        f.crossing_frames
                    )
                } else {
                    "–".into()
                }
            );
        }
    }
    let _ = writeln!(md, "\n## Confusion (rows truth, columns read)\n");
    let _ = writeln!(md, "| folder | truth | read . | read X | read O | read ? |\n|---|---|---|---|---|---|");
    for (name, f) in folders.iter().chain(std::iter::once((&"**all**".to_string(), &total))) {
        for (k, label) in ["empty", "black", "white"].iter().enumerate() {
            let c = f.confusion.0[k];
            let _ = writeln!(md, "| {name} | {label} | {} | {} | {} | {} |", c[0], c[1], c[2], c[3]);
        }
    }
    let _ = writeln!(md, "\n## Confidence calibration (best guess of every readable point, all folders)\n");
    let _ = writeln!(md, "| stated confidence ≥ | points | mean stated | observed accuracy |\n|---|---|---|---|");
    let cal = &total.calibration;
    for k in 0..cal.edges.len() {
        if cal.count[k] > 0 {
            let _ = writeln!(
                md,
                "| {} | {} | {:.4} | {} |",
                cal.edges[k],
                cal.count[k],
                cal.confidence_sum[k] / cal.count[k] as f64,
                pct(cal.correct[k], cal.count[k])
            );
        }
    }
    let _ = writeln!(md, "\n## Imperfect frames and why\n");
    for (name, f) in folders {
        for line in &f.failures {
            let _ = writeln!(md, "- {name}: {line}");
        }
    }
    print!("{md}");
    if let Some(dir) = out {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join(format!("{stem}.md")), &md)?;
        #[derive(Serialize)]
        struct Report<'a> {
            title: &'a str,
            notes: &'a [String],
            folders: &'a BTreeMap<String, FolderScore>,
            total: &'a FolderScore,
        }
        let json = serde_json::to_string_pretty(&Report { title, notes, folders, total: &total })?;
        std::fs::write(dir.join(format!("{stem}.json")), json)?;
        eprintln!("wrote {}/{stem}.md and .json", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn row(md: &mut String, name: &str, f: &FolderScore) {
    let c = &f.confusion;
    let corner = if f.corner_frames > 0 {
        format!(
            "{:.3} / {:.3} ({} frames)",
            f.corner_error_sum / f.corner_frames as f64,
            f.corner_error_max,
            f.corner_frames
        )
    } else {
        "–".into()
    };
    let hands = if f.hand_frames > 0 { format!("{}/{}", f.hand_frames_flagged, f.hand_frames) } else { "–".into() };
    let clean = if f.hand_frames > 0 || f.clean_frames_flagged > 0 {
        format!("{}/{}", f.clean_frames_flagged, f.images - f.hand_frames)
    } else {
        "–".into()
    };
    let _ = writeln!(
        md,
        "| {name} | {} | {} | {} ({}/{}) | {} | {} | {} | {corner} | {} | {hands} | {clean} | {:.1} / {:.1} / {:.1} |",
        f.images,
        f.located,
        pct(c.correct(), c.total()),
        c.correct(),
        c.total(),
        c.wrong(),
        c.unknown(),
        if f.graded_boards > 0 {
            format!("{}/{} ({})", f.exact_boards, f.graded_boards, pct(f.exact_boards as u64, f.graded_boards as u64))
        } else {
            "–".into()
        },
        f.occluded_flagged,
        median(&f.decode_ms),
        median(&f.locate_ms),
        median(&f.read_ms),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tengen eval ARGS…` parsed as the binary parses it.
    #[derive(clap::Parser)]
    struct EvalCommand {
        #[command(flatten)]
        args: EvalArgs,
    }

    #[test]
    fn a_patch_seed_needs_the_folds_that_fit_with_it() {
        use clap::Parser;
        let parse = |extra: &[&str]| EvalCommand::try_parse_from([&["eval", "photos", "DIR"], extra].concat());
        let Ok(EvalCommand { args: EvalArgs { target: EvalTarget::Photos { patch_seed, .. } } }) =
            parse(&["--loso", "--patch-seed", "3"])
        else {
            panic!("--loso --patch-seed 3 is refused")
        };
        assert_eq!(patch_seed, Some(3));
        // Without --loso the shipped model reads, so no seed is used; --classical fits no network.
        assert!(parse(&["--patch-seed", "3"]).is_err());
        assert!(parse(&["--loso", "--classical", "--patch-seed", "3"]).is_err());
    }

    #[test]
    fn hand_labels_match_whole_source_numbers_and_only_in_their_folder() {
        let at = |name: &str| hand_label(&format!("../shared/datasets/photos/roboflow-corners/train/images/{name}"));
        assert_eq!(at("8_jpg.rf.5939f9b0.jpg"), Some(Some(HandLabel::Hand)));
        assert_eq!(at("75_jpg.rf.0.jpg"), Some(Some(HandLabel::Margin)));
        assert_eq!(at("80_jpg.rf.0.jpg"), Some(None), "80 is not 8");
        // Every labelled line names a source number and a known label.
        assert_eq!(hand_label("imago-tests/t3/t3_005.jpg"), Some(Some(HandLabel::Hand)));
        assert_eq!(hand_label("imago-tests/t3/t3_004.jpg"), Some(None));
        for line in crate::photo_set::ROBOFLOW_HANDS
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
        {
            let words: Vec<&str> = line.split_whitespace().collect();
            assert!(words[0].parse::<u32>().is_ok() && ["hand", "margin"].contains(&words[1]), "{line}");
        }
    }

    #[test]
    fn grids_turn_back_to_stored_order_for_every_exif_orientation() {
        // The image crate shows a stored 19×19 picture under each EXIF orientation; reading it
        // as a grid and turning it back must give the stored grid.
        let mut stored = [[PointState::Empty; BOARD_LINES]; BOARD_LINES];
        stored[0][1] = PointState::Black;
        stored[2][5] = PointState::White;
        stored[18][17] = PointState::Black;
        let picture = image::RgbImage::from_fn(19, 19, |x, y| match stored[y as usize][x as usize] {
            PointState::Black => image::Rgb([0, 0, 0]),
            PointState::White => image::Rgb([255, 255, 255]),
            _ => image::Rgb([128, 128, 128]),
        });
        for o in 1..=8u8 {
            let mut shown = image::DynamicImage::ImageRgb8(picture.clone());
            shown.apply_orientation(image::metadata::Orientation::from_exif(o).expect("1-8"));
            let shown = shown.into_rgb8();
            let seen: Grid = std::array::from_fn(|r| {
                std::array::from_fn(|c| match shown.get_pixel(c as u32, r as u32).0[0] {
                    0 => PointState::Black,
                    255 => PointState::White,
                    _ => PointState::Empty,
                })
            });
            assert_eq!(to_stored(&seen, o), stored, "orientation {o}");
        }
    }
}
