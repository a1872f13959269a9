//! The labelled photo collection that `tengen eval photos` and `tengen fit reader` share: finding
//! the photos and their labels, naming each photo's source, decoding and locating each photo once,
//! and turning labelled photos into the reader's training frames.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use tengen_vision::evaluate::{parse_corners_label, parse_grid, reading_grid, score, Grid};
use tengen_vision::fit::LabelledFrame;
use tengen_vision::fit::OcclusionSample;
use tengen_vision::fit::{class_of, mirrored, misplaced_grids, patch_inputs, PatchModelFile, PatchSample};
use tengen_vision::grey;
use tengen_vision::locate::refine_corners;
use tengen_vision::read_board_detailed;
use tengen_vision::{decode_rgb, DecodedFrame};
use tengen_vision::{locate, GridGeometry, LocateOptions, PatchModel, ReaderConfig};

/// Photos whose labels are known to be wrong (the labels move stones the photos show unchanged).
pub const EXCLUDED: [&str; 2] = ["t2/skip/t2_053.jpg", "t2/skip/t2_054.jpg"];

/// One labelled photo, decoded and located once.
pub struct Photo {
    /// Path relative to the collection's folder, with `/`.
    pub rel: String,
    /// Full path.
    pub path: PathBuf,
    /// The source it belongs to (see [`source_of`]).
    pub source: String,
    /// The decoded pixels, or why they could not be decoded.
    pub frame: Result<DecodedFrame, String>,
    /// Milliseconds to decode.
    pub decode_ms: f64,
    /// The board found by the search (no clicks), or why none was.
    pub located: Result<GridGeometry, String>,
    /// Milliseconds the search took.
    pub locate_ms: f64,
    /// True point states (`.grid.txt`), as seen.
    pub truth: Option<Grid>,
    /// Labelled outer intersections (`.corners.json` or `.grid.json`), TL, TR, BR, BL as seen.
    pub corners: Option<[[f64; 2]; 4]>,
}

impl Photo {
    /// The grid the labels give, when the photo has labelled corners: the labelled outer
    /// intersections are clicks (goban-watcher's are right to about 0.2 cell, roboflow's sit
    /// 0.1–0.2 cell inside the crossings), so they are refined to the lines as `calibrate
    /// --corners` refines a person's clicks; where that refinement is refused they are kept.
    pub fn label_geometry(&self) -> Option<GridGeometry> {
        let (Ok(frame), Some(corners)) = (&self.frame, self.corners) else { return None };
        refine_corners(&grey(&frame.rgb), corners, None).ok().map(|given| given.located.geometry)
    }
}

/// The source a photo belongs to, by its path under the collection: one per imago sequence
/// (`imago-tests/t1`), one per goban-watcher game (`goban-watcher-dev/1`), and
/// `gomrade-singles` and `roboflow-corners` whole — the units that share a board, lamp and camera.
pub fn source_of(rel: &str) -> String {
    let parts: Vec<&str> = rel.split('/').collect();
    match parts.as_slice() {
        [set @ ("imago-tests" | "goban-watcher-dev"), unit, _, ..] => format!("{set}/{unit}"),
        [set, _, ..] => (*set).to_string(),
        _ => String::new(),
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ["jpg", "jpeg", "png"].contains(&e.to_ascii_lowercase().as_str()))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// A label file beside an image: `IMAGE.suffix`.
pub fn sidecar(image: &Path, suffix: &str) -> PathBuf {
    let mut s = image.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// The four labelled outer intersections of a `.corners.json` or `.grid.json` file.
pub fn read_corners(path: &Path) -> anyhow::Result<[[f64; 2]; 4]> {
    let text = std::fs::read_to_string(path)?;
    parse_corners_label(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Every photo under `dir` with a point or corner label (except [`EXCLUDED`]), decoded and
/// searched once; returns them with the excluded names.
pub fn collect(dir: &Path) -> anyhow::Result<(Vec<Photo>, Vec<String>)> {
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    let mut photos = Vec::new();
    let mut excluded = Vec::new();
    for path in files {
        let rel = path.strip_prefix(dir).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        if EXCLUDED.iter().any(|e| rel.ends_with(e)) {
            excluded.push(rel);
            continue;
        }
        let grid_path = sidecar(&path, ".grid.txt");
        let truth = if grid_path.exists() {
            Some(
                parse_grid(&std::fs::read_to_string(&grid_path)?)
                    .with_context(|| format!("parsing {}", grid_path.display()))?,
            )
        } else {
            None
        };
        let corners_file = [".corners.json", ".grid.json"].into_iter().map(|s| sidecar(&path, s)).find(|p| p.exists());
        let corners = corners_file.map(|p| read_corners(&p)).transpose()?;
        if truth.is_none() && corners.is_none() {
            continue;
        }
        let t = Instant::now();
        let frame =
            std::fs::read(&path).map_err(|e| e.to_string()).and_then(|b| decode_rgb(&b).map_err(|e| e.to_string()));
        let decode_ms = ms(t);
        let t = Instant::now();
        let located = match &frame {
            Ok(f) => locate(&f.rgb, &LocateOptions::default()).map(|l| l.geometry).map_err(|e| e.to_string()),
            Err(e) => Err(format!("unreadable image: {e}")),
        };
        let locate_ms = ms(t);
        tracing::debug!(photo = %rel, found = located.is_ok(), "collected");
        photos.push(Photo { source: source_of(&rel), rel, path, frame, decode_ms, located, locate_ms, truth, corners });
    }
    Ok((photos, excluded))
}

/// Our own labels of which roboflow-corners frames show a hand (the dataset has none): see the
/// file for how they were made.
pub const ROBOFLOW_HANDS: &str = include_str!("../../../tests/labels/roboflow-corners-hands.txt");

/// Our own labels of which imago-tests frames show a hand: see the file for where they come from.
pub const IMAGO_HANDS: &str = include_str!("../../../tests/labels/imago-hands.txt");

/// What a photo shows besides the board, from our hand labels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HandLabel {
    /// A hand over grid points.
    Hand,
    /// A hand over the board's margin only.
    Margin,
}

/// The label a label file gives `key` (its first word), if any.
fn label_in(file: &str, key: &str) -> Option<HandLabel> {
    file.lines()
        .map(|l| l.split('#').next().unwrap_or("").split_whitespace().collect::<Vec<_>>())
        .find(|words| words.first() == Some(&key))
        .and_then(|words| match words.get(1).copied() {
            Some("hand") => Some(HandLabel::Hand),
            Some("margin") => Some(HandLabel::Margin),
            _ => None,
        })
}

/// The hand label of a photo, when its folder has labels (`None`: no labels for it): roboflow
/// by source frame (its three augmentations share it), imago by frame, and goban-watcher-dev and
/// gomrade-singles frames as showing no hand (see `tests/labels/imago-hands.txt`).
pub fn hand_label(rel: &str) -> Option<Option<HandLabel>> {
    let name = Path::new(rel).file_name()?.to_str()?;
    if rel.contains("roboflow-corners") {
        let source = name.split_once("_jpg")?.0;
        Some(label_in(ROBOFLOW_HANDS, source))
    } else if rel.contains("imago-tests") {
        let stem = Path::new(name).file_stem()?.to_str()?;
        Some(label_in(IMAGO_HANDS, stem))
    } else if rel.contains("goban-watcher-dev") || rel.contains("gomrade-singles") {
        Some(None)
    } else {
        None
    }
}

/// The occlusion model's samples from the photos: every located photo with a hand label, on its
/// labelled grid where it has one (else the searched grid), read with `config`; frames whose
/// hand covers only the margin are left out (they say nothing either way).
pub fn occlusion_samples(photos: &[Photo], config: &ReaderConfig) -> Vec<OcclusionSample> {
    photos
        .iter()
        .filter_map(|photo| {
            let hand = hand_label(&photo.rel)?;
            if hand == Some(HandLabel::Margin) {
                return None;
            }
            let frame = photo.frame.as_ref().ok()?;
            let geometry = photo.label_geometry().or_else(|| photo.located.clone().ok())?;
            let details = read_board_detailed(&frame.rgb, &geometry, config);
            Some(OcclusionSample {
                source: photo.source.clone(),
                name: photo.rel.clone(),
                evidence: details.occlusion,
                hand: hand == Some(HandLabel::Hand),
            })
        })
        .collect()
}

/// The occlusion model's samples from rendered frames (`eval_stress::occlusion_training`), as
/// one source, `rendered`.
pub fn rendered_occlusion_samples(config: &ReaderConfig) -> anyhow::Result<Vec<OcclusionSample>> {
    Ok(crate::eval_stress::occlusion_training(RENDERED_MAX_SIDE, config)?
        .into_iter()
        .map(|f| OcclusionSample {
            source: "rendered".to_string(),
            name: format!("{}{}", f.bucket, if f.hand { " + hand" } else { "" }),
            evidence: f.evidence,
            hand: f.hand,
        })
        .collect())
}

/// Largest side of the rendered training frames (the occlusion tests work in grid cells, so a
/// smaller frame than the suite's 1080p serves and renders four times faster).
const RENDERED_MAX_SIDE: u32 = 960;

/// The reader's training frames: every photo with point labels, measured on its labelled grid
/// when it has one (the reader is fitted on where the points are, not on the search's mistakes),
/// else on the grid the search found. Labels are as seen, so a labelled grid is read as is; a
/// searched grid may be turned, so the labels are turned to the symmetry that fits the reading.
pub fn labelled_frames(photos: &[Photo]) -> Vec<LabelledFrame> {
    let config = ReaderConfig::default();
    photos
        .iter()
        .filter_map(|photo| {
            let truth = photo.truth?;
            let frame = photo.frame.as_ref().ok()?;
            let (geometry, labelled) = match photo.label_geometry() {
                Some(g) => (g, true),
                None => (photo.located.clone().ok()?, false),
            };
            let details = read_board_detailed(&frame.rgb, &geometry, &config);
            let truth_seen = if labelled {
                truth
            } else {
                let s = score(&reading_grid(&details.reading), &truth, true);
                s.symmetry.inverse().apply(&truth)
            };
            Some(LabelledFrame {
                source: photo.source.clone(),
                features: details.features,
                board: details.colour.global,
                truth: truth_seen,
            })
        })
        .collect()
}

/// The learned point reader's training points from the photos with point labels: read on the
/// labelled grid where there is one, else on the searched grid with the labels turned to the
/// symmetry that fits the reading (as [`labelled_frames`]); each point also mirrored left–right
/// (an augmentation: a mirrored board is as plausible a photo).
pub fn patch_samples(photos: &[Photo]) -> Vec<PatchSample> {
    let config = ReaderConfig::default();
    let mut out = Vec::new();
    for photo in photos {
        let (Some(truth), Ok(frame)) = (photo.truth, photo.frame.as_ref()) else { continue };
        let (geometry, labelled) = match photo.label_geometry() {
            Some(g) => (g, true),
            None => match photo.located.clone() {
                Ok(g) => (g, false),
                Err(_) => continue,
            },
        };
        let truth_seen = if labelled {
            truth
        } else {
            let details = read_board_detailed(&frame.rgb, &geometry, &config);
            let s = score(&reading_grid(&details.reading), &truth, true);
            s.symmetry.inverse().apply(&truth)
        };
        let inputs = patch_inputs(&frame.rgb, &geometry, &config);
        for (class, x) in labelled_inputs(&truth_seen, &inputs) {
            out.push(PatchSample { source: photo.source.clone(), inputs: mirrored(x), class });
            out.push(PatchSample { source: photo.source.clone(), inputs: x.clone(), class });
        }
        for misplaced in misplaced_grids(&geometry, crate::eval_stress::frame_seed(&photo.rel, 0)) {
            let inputs = patch_inputs(&frame.rgb, &misplaced, &config);
            for (class, x) in labelled_inputs(&truth_seen, &inputs) {
                out.push(PatchSample { source: photo.source.clone(), inputs: x.clone(), class });
            }
        }
    }
    out
}

/// Each labelled point's class with its input vector (`inputs` as `patch_inputs` gives them),
/// where the point is labelled and measurable.
fn labelled_inputs<'a>(
    truth: &Grid,
    inputs: &'a [Option<Vec<f32>>],
) -> impl Iterator<Item = (usize, &'a Vec<f32>)> + 'a {
    let classes: Vec<Option<usize>> = truth.iter().flat_map(|line| line.iter().map(|&state| class_of(state))).collect();
    classes.into_iter().zip(inputs).filter_map(|(class, x)| Some((class?, x.as_ref()?)))
}

/// Reads a learned point reader's model file (`tengen fit patch-reader`'s JSON) and keeps it for
/// the life of the program (the reader's settings carry a reference to it).
pub fn load_patch_model(path: &Path) -> anyhow::Result<&'static PatchModel> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(PatchModel::from_json(&text).with_context(|| format!("parsing {}", path.display()))?.leak())
}

/// Writes a learned point reader's model file.
pub fn write_patch_model(path: &Path, file: &PatchModelFile) -> anyhow::Result<()> {
    let text = serde_json::to_string(file).context("writing the patch model as JSON")?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_the_units_that_share_a_board_and_lamp() {
        assert_eq!(source_of("imago-tests/t2/skip/t2_008.jpg"), "imago-tests/t2");
        assert_eq!(source_of("imago-tests/t1/t1_001.jpg"), "imago-tests/t1");
        assert_eq!(source_of("goban-watcher-dev/3/3_jwerth_1.jpg"), "goban-watcher-dev/3");
        assert_eq!(source_of("gomrade-singles/4/4.jpg"), "gomrade-singles");
        assert_eq!(source_of("roboflow-corners/train/images/x.jpg"), "roboflow-corners");
    }
}
