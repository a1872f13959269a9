//! The point reader's fitted model — the classifier's per-class priors and the confidence
//! calibration — and the procedure that fits it from labelled frames. The model the reader uses
//! by default is `models/point-reader.toml`, written by `tengen fit reader` (see
//! `models/point-reader.md`); nothing in it is set by hand.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use tengen_rules::{PointState, BOARD_LINES};
use thiserror::Error;

use crate::classify::{feature_vector, StoneClass, DIMS};
use crate::features::PointFeatures;

/// What one class (empty, black, white) looks like, relative to the local board colour.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClassPrior {
    /// Typical class mean of a frame, per feature (brightness, dark tail, neutrality,
    /// green/red, line contrast).
    pub mean: [f64; DIMS],
    /// Spread of a point of this class around `mean` across frames (frame-to-frame spread of
    /// the class mean combined with the spread within a frame): the classifier's starting width.
    pub sd: [f64; DIMS],
    /// Spread of a point around its own frame's class mean: once a frame has re-estimated the
    /// mean, its class may not grow wider than this (a wider class swallows deep shadows).
    pub within_sd: [f64; DIMS],
}

/// The fitted reader model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReaderModel {
    /// Priors of empty, black and white, in that order.
    pub classes: [ClassPrior; 3],
    /// Platt scaling of the classifier's log-odds margin: a point's confidence is
    /// `1 / (1 + exp(−(slope × margin + offset)))`.
    pub confidence_slope: f64,
    /// See `confidence_slope`.
    pub confidence_offset: f64,
}

/// The model file as written by `tengen fit reader`: the model plus where it came from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReaderModelFile {
    /// The command that wrote the file.
    pub command: String,
    /// Labelled frames used per source.
    pub frames_per_source: Vec<(String, usize)>,
    /// The model.
    pub model: ReaderModel,
}

/// A model file compiled in from the repository (`models/`), read; `valid` says what it must be.
#[allow(
    clippy::expect_used,
    reason = "a file compiled in from the repository, not input; each model's test embedded_model_parses keeps it valid"
)]
pub(crate) fn embedded_file<F: serde::de::DeserializeOwned>(text: &str, valid: &str) -> F {
    toml::from_str(text).expect(valid)
}

static EMBEDDED: LazyLock<ReaderModel> = LazyLock::new(|| {
    embedded_file::<ReaderModelFile>(
        include_str!("../../../models/point-reader.toml"),
        "models/point-reader.toml is a valid reader model",
    )
    .model
});

impl ReaderModel {
    /// The model shipped in `models/point-reader.toml`.
    pub fn embedded() -> Self {
        *EMBEDDED
    }

    /// A point's calibrated confidence from the classifier's log-odds margin (0 when the
    /// margin is not a number: nothing measurable is "unknown", not a guess).
    pub fn confidence(&self, margin: f32) -> f32 {
        let z = self.confidence_slope * f64::from(margin) + self.confidence_offset;
        if z.is_finite() {
            (1.0 / (1.0 + (-z).exp())) as f32
        } else {
            0.0
        }
    }
}

impl Default for ReaderModel {
    fn default() -> Self {
        Self::embedded()
    }
}

/// One labelled frame for fitting: the measured features of every point and the true states,
/// both in the reading's orientation.
#[derive(Debug, Clone)]
pub struct LabelledFrame {
    /// The source the frame belongs to (each source weighs the same in the fit).
    pub source: String,
    /// Per-point features, `[row][col]`.
    pub features: Vec<[PointFeatures; BOARD_LINES]>,
    /// The frame's board colour (RGB, `BoardColour::global`), which the classifier needs.
    pub board: [f32; 3],
    /// True states, `[row][col]`.
    pub truth: [[PointState; BOARD_LINES]; BOARD_LINES],
}

/// Why a model could not be fitted.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum FitError {
    /// No frame has enough points of this class to measure it.
    #[error("no labelled frame has {MIN_POINTS} or more points of class {0:?}")]
    NoFramesOf(StoneClass),
}

/// A frame measures a class only from this many points of it (a mean of one or two points says
/// more about those stones than about the class).
const MIN_POINTS: usize = 3;

/// Fits the reader model: per class, the mean of the frames' class means and the spreads
/// between and within frames, every source weighing the same (a source with many frames of one
/// board and lamp must not become "the" look of a class); then the Platt calibration on the
/// classifier's margins with those priors.
pub fn fit(frames: &[LabelledFrame]) -> Result<ReaderModel, FitError> {
    let mut classes = [ClassPrior { mean: [0.0; DIMS], sd: [0.0; DIMS], within_sd: [0.0; DIMS] }; 3];
    for (k, class) in StoneClass::ALL.into_iter().enumerate() {
        classes[k] = fit_class(frames, class)?;
    }
    let mut model = ReaderModel { classes, confidence_slope: 1.0, confidence_offset: 0.0 };
    let mut samples = Vec::new();
    for frame in frames {
        let classified = crate::classify::classify(&frame.features, &model.classes, frame.board, 1.0);
        for (row, line) in frame.truth.iter().enumerate() {
            for (col, &truth) in line.iter().enumerate() {
                if truth == PointState::Unknown || !frame.features[row][col].valid {
                    continue;
                }
                let p = classified.posteriors[row][col];
                let best = (0..3).fold(0, |b, k| if p[k] > p[b] { k } else { b });
                let weight = 1.0 / frames_of(frames, &frame.source) as f64;
                samples.push((
                    f64::from(classified.margin[row][col]),
                    state_of(StoneClass::ALL[best]) == truth,
                    weight,
                ));
            }
        }
    }
    let (slope, offset) = fit_logistic(&samples);
    model.confidence_slope = slope;
    model.confidence_offset = offset;
    Ok(model)
}

fn state_of(class: StoneClass) -> PointState {
    match class {
        StoneClass::Empty => PointState::Empty,
        StoneClass::Black => PointState::Black,
        StoneClass::White => PointState::White,
    }
}

fn frames_of(frames: &[LabelledFrame], source: &str) -> usize {
    frames.iter().filter(|f| f.source == source).count().max(1)
}

/// One class's prior from the frames that show at least `MIN_POINTS` of it.
fn fit_class(frames: &[LabelledFrame], class: StoneClass) -> Result<ClassPrior, FitError> {
    let wanted = state_of(class);
    // (source, frame mean, frame variance) per measuring frame.
    let mut measured: Vec<(&str, [f64; DIMS], [f64; DIMS])> = Vec::new();
    for frame in frames {
        let xs: Vec<[f64; DIMS]> = frame
            .truth
            .iter()
            .zip(&frame.features)
            .flat_map(|(t, f)| t.iter().zip(f.iter()))
            .filter(|(t, f)| **t == wanted && f.valid)
            .map(|(_, f)| feature_vector(f))
            .collect();
        if xs.len() < MIN_POINTS {
            continue;
        }
        let n = xs.len() as f64;
        let mut mean = [0.0; DIMS];
        let mut var = [0.0; DIMS];
        for d in 0..DIMS {
            mean[d] = xs.iter().map(|x| x[d]).sum::<f64>() / n;
            var[d] = xs.iter().map(|x| (x[d] - mean[d]).powi(2)).sum::<f64>() / (n - 1.0);
        }
        measured.push((frame.source.as_str(), mean, var));
    }
    if measured.is_empty() {
        return Err(FitError::NoFramesOf(class));
    }
    // Each source weighs 1, shared among its measuring frames.
    let weight_of = |source: &str| 1.0 / measured.iter().filter(|m| m.0 == source).count() as f64;
    let total: f64 = measured.iter().map(|m| weight_of(m.0)).sum();
    let mut prior = ClassPrior { mean: [0.0; DIMS], sd: [0.0; DIMS], within_sd: [0.0; DIMS] };
    for d in 0..DIMS {
        let mean = measured.iter().map(|m| weight_of(m.0) * m.1[d]).sum::<f64>() / total;
        let between = measured.iter().map(|m| weight_of(m.0) * (m.1[d] - mean).powi(2)).sum::<f64>() / total;
        let within = measured.iter().map(|m| weight_of(m.0) * m.2[d]).sum::<f64>() / total;
        prior.mean[d] = mean;
        prior.sd[d] = (between + within).sqrt();
        prior.within_sd[d] = within.sqrt();
    }
    Ok(prior)
}

/// Weighted maximum-likelihood fit of P(right) = 1 / (1 + exp(−(a × margin + b))) by Newton's
/// method, with a weak ridge so a perfectly separated set still gives finite constants.
fn fit_logistic(samples: &[(f64, bool, f64)]) -> (f64, f64) {
    let (mut a, mut b) = (0.1f64, 0.0f64);
    for _ in 0..100 {
        let (mut ga, mut gb, mut haa, mut hab, mut hbb) = (-1e-3 * a, -1e-3 * b, 1e-3, 0.0, 1e-3);
        for &(m, right, w) in samples {
            let p = 1.0 / (1.0 + (-(a * m + b)).exp());
            let y = if right { 1.0 } else { 0.0 };
            ga += w * (y - p) * m;
            gb += w * (y - p);
            let h = w * p * (1.0 - p);
            haa += h * m * m;
            hab += h * m;
            hbb += h;
        }
        let det = haa * hbb - hab * hab;
        if det.abs() < 1e-12 {
            break;
        }
        let (da, db) = ((hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det);
        a += da;
        b += db;
        if da.abs() < 1e-9 && db.abs() < 1e-9 {
            break;
        }
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_model_parses() {
        let m = ReaderModel::embedded();
        assert!(m.classes[1].mean[0] < m.classes[0].mean[0], "black is darker than the board");
        assert!(m.confidence_slope > 0.0);
    }

    fn point(brightness: f32, lines: f32, neutral: f32) -> PointFeatures {
        PointFeatures {
            brightness,
            dark_tail: brightness - 0.1,
            neutral,
            green_red: neutral / 2.0,
            lines,
            luma: 120.0,
            valid: true,
            ..Default::default()
        }
    }

    /// Two sources with different looks of the same classes: the fit lands between them (each
    /// source weighs the same however many frames it has) and the frame-to-frame spread shows.
    #[test]
    fn each_source_weighs_the_same() {
        let frame = |source: &str, shift: f32| {
            let mut features = vec![[point(0.0 + shift, 0.3, 0.0); BOARD_LINES]; BOARD_LINES];
            let mut truth = [[PointState::Empty; BOARD_LINES]; BOARD_LINES];
            for c in 0..6 {
                features[3][c] = point(-1.2 + shift + c as f32 * 0.01, 0.05, 0.5);
                truth[3][c] = PointState::Black;
                features[9][c] = point(0.4 + shift - c as f32 * 0.01, -0.05, 0.5);
                truth[9][c] = PointState::White;
            }
            LabelledFrame { source: source.to_string(), features, board: [196.0, 158.0, 105.0], truth }
        };
        let mut frames = vec![frame("a", 0.0)];
        frames.extend((0..9).map(|_| frame("b", 0.2)));
        let model = fit(&frames).unwrap();
        assert!((model.classes[1].mean[0] - (-1.2 + 0.1 + 0.025)).abs() < 0.01, "{:?}", model.classes[1].mean);
        assert!(model.classes[1].sd[0] > model.classes[1].within_sd[0]);
    }

    /// Readings right with probability 1 / (1 + exp(−(0.5 m − 1))) give back about 0.5 and −1.
    #[test]
    fn platt_fit_recovers_the_calibration() {
        let mut samples = Vec::new();
        for i in 0..4000 {
            let margin = f64::from(i % 200) / 10.0;
            let p = 1.0 / (1.0 + (-(0.5 * margin - 1.0)).exp());
            // A deterministic stand-in for a coin flip with probability p.
            let u = (f64::from(i) * 0.618_033_988_75).fract();
            samples.push((margin, u < p, 1.0));
        }
        let (slope, offset) = fit_logistic(&samples);
        assert!((slope - 0.5).abs() < 0.1 && (offset + 1.0).abs() < 0.3, "{slope} {offset}");
    }

    #[test]
    fn a_class_nobody_shows_is_an_error() {
        let frame = LabelledFrame {
            source: "a".into(),
            features: vec![[point(0.0, 0.3, 0.0); BOARD_LINES]; BOARD_LINES],
            board: [196.0, 158.0, 105.0],
            truth: [[PointState::Empty; BOARD_LINES]; BOARD_LINES],
        };
        assert_eq!(fit(&[frame]), Err(FitError::NoFramesOf(StoneClass::Black)));
    }
}
