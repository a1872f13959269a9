//! A small learned point reader (issue 9 item 5): each point's patch of the rectified board,
//! normalised against the frame's own local board colour so a colour cast divides out, plus the
//! classical reader's features, posteriors and the frame's re-estimated classes, fed to a tiny
//! MLP (inputs → hidden ReLU → 3 softmax). Training (Adam, fixed seed, every source weighing
//! the same) is here too, so `tengen fit patch-reader` and the leave-one-source-out evaluation
//! fit the same way. Pure: data in, data out; f32, no dependencies beyond serde.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use tengen_rules::{PointState, BOARD_LINES};

use crate::classify::{feature_vector, DIMS};
use crate::features::{BoardColour, PointFeatures};
use crate::geometry::GridGeometry;
use crate::rectify::{CameraFoot, RectifiedBoard};

/// Samples per side of a point's patch.
pub const PATCH_SIDE: usize = 7;
/// Half-width of the patch around the stone's visible centre, in grid spacings (a stone's
/// radius is about 0.48: the patch holds the stone and a rim of its surroundings).
const PATCH_REACH: f64 = 0.6;
/// Log ratios are clamped to this (a black stone under a dim lamp can be 1/50 of the board).
const RATIO_CLAMP: f32 = 4.0;
/// Inputs besides the patch: the classical features (5) and three more measurements, the
/// classical posteriors (3), the point's z-score against each of the frame's classes (15) and
/// how far the frame's black and white classes lie from its empty class (10).
const CONTEXT: usize = DIMS + 3 + 3 + 3 * DIMS + 2 * DIMS;
/// Length of a point's input vector.
pub const INPUTS: usize = PATCH_SIDE * PATCH_SIDE * 3 + CONTEXT;
/// Classes, in the classical reader's order: empty, black, white.
pub const CLASSES: usize = 3;

/// The fitted network and its input standardisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchModel {
    /// Hidden units.
    pub hidden: usize,
    /// Per-input mean and standard deviation of the training data (inputs are standardised).
    pub input_mean: Vec<f32>,
    /// See `input_mean`.
    pub input_sd: Vec<f32>,
    /// First layer, `hidden × INPUTS`, row-major.
    pub w1: Vec<f32>,
    /// First layer's bias.
    pub b1: Vec<f32>,
    /// Output layer, `CLASSES × hidden`, row-major.
    pub w2: Vec<f32>,
    /// Output layer's bias.
    pub b2: Vec<f32>,
}

/// Why a model file or a fit was refused.
#[derive(Debug, thiserror::Error)]
pub enum PatchModelError {
    /// The layer sizes disagree with each other or with [`INPUTS`].
    #[error("patch model shapes do not fit: {0}")]
    Shape(String),
    /// The file is not a model.
    #[error("patch model file: {0}")]
    Parse(String),
    /// Nothing to fit on.
    #[error("no training samples")]
    NoSamples,
}

impl PatchModel {
    /// Checks the layer sizes.
    pub fn validate(&self) -> Result<(), PatchModelError> {
        let h = self.hidden;
        let ok = self.input_mean.len() == INPUTS
            && self.input_sd.len() == INPUTS
            && self.w1.len() == h * INPUTS
            && self.b1.len() == h
            && self.w2.len() == CLASSES * h
            && self.b2.len() == CLASSES
            && h > 0;
        if ok {
            Ok(())
        } else {
            Err(PatchModelError::Shape(format!("hidden {h}, inputs {} (expected {INPUTS})", self.input_mean.len())))
        }
    }

    /// Class probabilities (empty, black, white) of one input vector.
    pub fn probabilities(&self, x: &[f32]) -> [f32; CLASSES] {
        let mut z = vec![0.0f32; INPUTS];
        for (k, zk) in z.iter_mut().enumerate() {
            *zk = (x[k] - self.input_mean[k]) / self.input_sd[k];
        }
        let mut hidden = vec![0.0f32; self.hidden];
        forward_hidden(self, &z, &mut hidden);
        softmax(&logits(self, &hidden))
    }

    /// Reads a model from its JSON file text.
    pub fn from_json(text: &str) -> Result<Self, PatchModelError> {
        let file: PatchModelFile = serde_json::from_str(text).map_err(|e| PatchModelError::Parse(e.to_string()))?;
        file.model.validate()?;
        Ok(file.model)
    }

    /// The model shipped in `models/patch-reader.json` (`tengen fit patch-reader` on every
    /// source with point labels and the rendered frames).
    pub fn embedded() -> &'static PatchModel {
        &EMBEDDED
    }

    /// Moves the model to the heap for the life of the program, so that [`crate::ReaderConfig`]
    /// (which is `Copy`) can carry it.
    pub fn leak(self) -> &'static PatchModel {
        Box::leak(Box::new(self))
    }
}

#[allow(
    clippy::expect_used,
    reason = "a file compiled in from the repository, not input; the test embedded_model_parses keeps it valid"
)]
static EMBEDDED: LazyLock<PatchModel> = LazyLock::new(|| {
    PatchModel::from_json(include_str!("../../../models/patch-reader.json"))
        .expect("models/patch-reader.json is a valid patch reader model")
});

/// The model file: the network and how it was made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PatchModelFile {
    /// The command that wrote it.
    pub command: String,
    /// Training points per source (after leaving out points hidden by a rendered hand).
    pub points_per_source: Vec<(String, usize)>,
    /// The network.
    pub model: PatchModel,
}

/// The network laid out for reading many points: the first layer transposed (input-major), so
/// that each standardised input is added into every hidden unit at once — independent sums the
/// compiler vectorises — with no allocation per point. Each hidden unit still adds its products
/// in input order from the same start, so the probabilities are bit for bit those of
/// [`PatchModel::probabilities`] (`tests::the_runner_gives_the_same_bits`).
#[derive(Debug, Clone)]
pub struct PatchRunner<'a> {
    model: &'a PatchModel,
    /// First layer, `INPUTS × hidden`, row-major (input k's weights to every hidden unit).
    w1_by_input: Vec<f32>,
    /// Scratch: the hidden units' sums.
    hidden: Vec<f32>,
}

impl PatchModel {
    /// The network prepared for reading many points (see [`PatchRunner`]).
    pub fn runner(&self) -> PatchRunner<'_> {
        let h = self.hidden;
        let mut w1_by_input = vec![0.0f32; INPUTS * h];
        for (j, row) in self.w1.chunks_exact(INPUTS).enumerate() {
            for (k, &w) in row.iter().enumerate() {
                w1_by_input[k * h + j] = w;
            }
        }
        PatchRunner { model: self, w1_by_input, hidden: vec![0.0; h] }
    }
}

impl PatchRunner<'_> {
    /// Class probabilities (empty, black, white) of one input vector.
    pub fn probabilities(&mut self, x: &[f32]) -> [f32; CLASSES] {
        let m = self.model;
        // `Sum` for floats starts from −0.0; so do these sums.
        self.hidden.iter_mut().for_each(|s| *s = -0.0);
        for (k, (weights, &xk)) in self.w1_by_input.chunks_exact(m.hidden).zip(x).enumerate() {
            let z = (xk - m.input_mean[k]) / m.input_sd[k];
            for (s, &w) in self.hidden.iter_mut().zip(weights) {
                *s += w * z;
            }
        }
        for (s, &b) in self.hidden.iter_mut().zip(&m.b1) {
            *s = (*s + b).max(0.0);
        }
        softmax(&logits(m, &self.hidden))
    }
}

fn forward_hidden(m: &PatchModel, z: &[f32], hidden: &mut [f32]) {
    for (j, h) in hidden.iter_mut().enumerate() {
        let row = &m.w1[j * INPUTS..(j + 1) * INPUTS];
        let s: f32 = row.iter().zip(z).map(|(w, x)| w * x).sum::<f32>() + m.b1[j];
        *h = s.max(0.0);
    }
}

fn logits(m: &PatchModel, hidden: &[f32]) -> [f32; CLASSES] {
    let mut out = [0.0f32; CLASSES];
    for (k, o) in out.iter_mut().enumerate() {
        let row = &m.w2[k * m.hidden..(k + 1) * m.hidden];
        *o = row.iter().zip(hidden).map(|(w, h)| w * h).sum::<f32>() + m.b2[k];
    }
    out
}

fn softmax(l: &[f32; CLASSES]) -> [f32; CLASSES] {
    let top = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e = l.map(|v| (v - top).exp());
    let s: f32 = e.iter().sum();
    e.map(|v| v / s)
}

/// The frame's classes after the classical reader's re-estimation (empty, black, white): means
/// and spreads per feature, as `Classified::class_model` gives them.
pub type ClassModel = [(Vec<f64>, Vec<f64>)];

/// Every point's input vector, `[row * 19 + col]` (`None` where the point is not measurable).
pub fn point_inputs(
    board: &RectifiedBoard,
    colour: &BoardColour,
    camera: Option<&CameraFoot>,
    stone_height: f64,
    features: &[[PointFeatures; BOARD_LINES]],
    posteriors: &[[[f64; 3]; BOARD_LINES]],
    class_model: &ClassModel,
) -> Vec<Option<Vec<f32>>> {
    let measured = FrameMeasurements { board, colour, camera, stone_height, features, posteriors, class_model };
    (0..BOARD_LINES * BOARD_LINES)
        .map(|k| {
            let mut x = Vec::with_capacity(INPUTS);
            measured.point_input(k % BOARD_LINES, k / BOARD_LINES, &mut x).then_some(x)
        })
        .collect()
}

/// What the learned reader's inputs are measured from: one frame's rectified board, colours,
/// camera, classical features, posteriors and re-estimated classes.
#[derive(Debug, Clone, Copy)]
pub struct FrameMeasurements<'a> {
    /// The rectified board.
    pub board: &'a RectifiedBoard,
    /// Its cell and local board colours.
    pub colour: &'a BoardColour,
    /// Where the camera stands (for the stones' raised disc centres).
    pub camera: Option<&'a CameraFoot>,
    /// Height of a stone's visible disc centre, in grid spacings.
    pub stone_height: f64,
    /// The classical features, `[row][col]`.
    pub features: &'a [[PointFeatures; BOARD_LINES]],
    /// The classical posteriors, `[row][col]`.
    pub posteriors: &'a [[[f64; 3]; BOARD_LINES]],
    /// The frame's re-estimated classes.
    pub class_model: &'a ClassModel,
}

impl FrameMeasurements<'_> {
    /// Writes the input vector of point (col, row) into `x` (cleared first); false, with `x`
    /// left empty, where the point is not measurable. A caller reading many points reuses `x`.
    pub fn point_input(&self, col: usize, row: usize, x: &mut Vec<f32>) -> bool {
        x.clear();
        let f = &self.features[row][col];
        if !f.valid {
            return false;
        }
        let step = 2.0 * PATCH_REACH / (PATCH_SIDE - 1) as f64;
        let class_model = self.class_model;
        let mean = |k: usize, d: usize| class_model.get(k).and_then(|c| c.0.get(d)).copied().unwrap_or(0.0);
        let sd = |k: usize, d: usize| class_model.get(k).and_then(|c| c.1.get(d)).copied().unwrap_or(1.0).max(1e-3);
        let base = [col as f64, row as f64];
        let top = self.camera.map_or(base, |cam| cam.raised(base, self.stone_height));
        let local = self.colour.local(col, row);
        for j in 0..PATCH_SIDE {
            for i in 0..PATCH_SIDE {
                let (bx, by) = (top[0] + (i as f64 * step - PATCH_REACH), top[1] + (j as f64 * step - PATCH_REACH));
                let s = self.board.at_board(bx, by);
                for ch in 0..3 {
                    let v = if s[ch].is_finite() { ((s[ch] + 1.0) / (local[ch] + 1.0)).ln() } else { 0.0 };
                    x.push(v.clamp(-RATIO_CLAMP, RATIO_CLAMP));
                }
            }
        }
        let v = feature_vector(f);
        x.extend(v.iter().map(|&a| a as f32));
        x.push(f.spread.min(8.0));
        x.push(f.colour_distance.min(10.0));
        x.push(f.weakest_arm.clamp(-5.0, 5.0));
        x.extend(self.posteriors[row][col].iter().map(|&p| p as f32));
        for k in 0..3 {
            for (d, &a) in v.iter().enumerate() {
                x.push((((a - mean(k, d)) / sd(k, d)) as f32).clamp(-20.0, 20.0));
            }
        }
        for k in 1..3 {
            for d in 0..DIMS {
                x.push((mean(k, d) - mean(0, d)) as f32);
            }
        }
        // A measurement the frame could not make (a class with no members) says nothing.
        x.iter_mut().filter(|v| !v.is_finite()).for_each(|v| *v = 0.0);
        true
    }
}

/// The input vector of the left–right mirrored patch (an augmentation for training: the
/// context inputs do not change with a mirror).
pub fn mirrored(x: &[f32]) -> Vec<f32> {
    let mut out = x.to_vec();
    for j in 0..PATCH_SIDE {
        for i in 0..PATCH_SIDE {
            for ch in 0..3 {
                out[(j * PATCH_SIDE + i) * 3 + ch] = x[(j * PATCH_SIDE + (PATCH_SIDE - 1 - i)) * 3 + ch];
            }
        }
    }
    out
}

/// One labelled training point.
#[derive(Debug, Clone)]
pub struct PatchSample {
    /// The source it comes from (every source weighs the same in the fit).
    pub source: String,
    /// Its inputs ([`INPUTS`] long).
    pub inputs: Vec<f32>,
    /// 0 empty, 1 black, 2 white.
    pub class: usize,
}

/// The class index of a labelled state (`None` for unknown).
pub fn class_of(state: PointState) -> Option<usize> {
    match state {
        PointState::Empty => Some(0),
        PointState::Black => Some(1),
        PointState::White => Some(2),
        PointState::Unknown => None,
    }
}

/// How far, at most, a training grid's corners are misplaced, in grid spacings: what a careful
/// person's clicks miss by (issue 9: "about 0.2 cell off"), and more than a refined search's
/// corners do. A priori, not fitted.
pub const TRAINING_CORNER_ERROR: f64 = 0.2;
/// Misplaced grids each training frame is also read on.
pub const MISPLACED_GRIDS: usize = 2;

/// The grids a training frame is also read on, so that the network learns to read a point on
/// a grid slightly off — the grid it meets on real boards is clicked by a person or found by a
/// search, never exact: each corner moved by an offset drawn uniformly from the disc of radius
/// [`TRAINING_CORNER_ERROR`] (the same `seed` gives the same grids). Degenerate ones are skipped.
pub fn misplaced_grids(geometry: &GridGeometry, seed: u64) -> Vec<GridGeometry> {
    let mut rng = SplitMix(seed);
    (0..MISPLACED_GRIDS)
        .filter_map(|_| {
            let offsets = std::array::from_fn(|_| {
                let r = TRAINING_CORNER_ERROR * f64::from(rng.unit()).sqrt();
                let angle = std::f64::consts::TAU * f64::from(rng.unit());
                [r * angle.cos(), r * angle.sin()]
            });
            geometry.with_corners_moved(offsets)
        })
        .collect()
}

/// Training settings.
#[derive(Debug, Clone, Copy)]
pub struct PatchFitOptions {
    /// Hidden units.
    pub hidden: usize,
    /// Passes over the data.
    pub epochs: usize,
    /// Minibatch size.
    pub batch: usize,
    /// Adam's step size.
    pub learning_rate: f32,
    /// L2 weight decay (decoupled, on the weights only).
    pub weight_decay: f32,
    /// Seed of the initial weights and the shuffles.
    pub seed: u64,
}

impl Default for PatchFitOptions {
    fn default() -> Self {
        Self { hidden: 32, epochs: 12, batch: 128, learning_rate: 2e-3, weight_decay: 1e-4, seed: 0x07e4_6e11 }
    }
}

impl PatchFitOptions {
    /// The shipped model's settings, with `seed` instead of its seed where one is given (a fit
    /// swings with its seed, so changes are judged over several: `--seed`, `--patch-seed`).
    pub fn with_seed(seed: Option<u64>) -> Self {
        let shipped = Self::default();
        Self { seed: seed.unwrap_or(shipped.seed), ..shipped }
    }
}

/// A small deterministic generator (splitmix64) for the weights and shuffles.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn normal(&mut self) -> f32 {
        let (a, b) = (self.unit().max(1e-7), self.unit());
        (-2.0 * a.ln()).sqrt() * (std::f32::consts::TAU * b).cos()
    }
}

/// Fits the network: cross-entropy weighted so that every source weighs the same and the
/// classes by the square root of their inverse frequency (stones are rarer than bare points
/// but must not be swamped), Adam on shuffled minibatches, fixed seed: the same samples give
/// the same model.
pub fn fit(samples: &[PatchSample], options: &PatchFitOptions) -> Result<PatchModel, PatchModelError> {
    if samples.is_empty() {
        return Err(PatchModelError::NoSamples);
    }
    if let Some(bad) = samples.iter().find(|s| s.inputs.len() != INPUTS || s.class >= CLASSES) {
        return Err(PatchModelError::Shape(format!("a sample of {} has {} inputs", bad.source, bad.inputs.len())));
    }
    let n = samples.len();
    // Standardisation.
    let mut input_mean = vec![0.0f64; INPUTS];
    let mut input_var = vec![0.0f64; INPUTS];
    for s in samples {
        for (m, &x) in input_mean.iter_mut().zip(&s.inputs) {
            *m += f64::from(x);
        }
    }
    input_mean.iter_mut().for_each(|m| *m /= n as f64);
    for s in samples {
        for ((v, &x), m) in input_var.iter_mut().zip(&s.inputs).zip(&input_mean) {
            *v += (f64::from(x) - m).powi(2);
        }
    }
    let input_sd: Vec<f32> = input_var.iter().map(|v| ((v / n as f64).sqrt() as f32).max(1e-3)).collect();
    let input_mean: Vec<f32> = input_mean.iter().map(|&m| m as f32).collect();
    let z: Vec<Vec<f32>> = samples
        .iter()
        .map(|s| s.inputs.iter().zip(&input_mean).zip(&input_sd).map(|((x, m), sd)| (x - m) / sd).collect())
        .collect();
    // Weights: each source the same total, classes by 1/sqrt(frequency) within the whole set.
    let mut sources: Vec<(&str, usize)> = Vec::new();
    for s in samples {
        match sources.iter_mut().find(|(name, _)| *name == s.source) {
            Some((_, c)) => *c += 1,
            None => sources.push((s.source.as_str(), 1)),
        }
    }
    let mut class_count = [0usize; CLASSES];
    samples.iter().for_each(|s| class_count[s.class] += 1);
    let class_weight = class_count.map(|c| if c > 0 { 1.0 / (c as f32 / n as f32).sqrt() } else { 0.0 });
    let mut weight: Vec<f32> = samples
        .iter()
        .map(|s| {
            let per_source = sources.iter().find(|(name, _)| *name == s.source).map_or(1, |(_, c)| *c);
            class_weight[s.class] / per_source as f32
        })
        .collect();
    let mean_weight = weight.iter().sum::<f32>() / n as f32;
    weight.iter_mut().for_each(|w| *w /= mean_weight);

    let h = options.hidden.max(1);
    let mut rng = SplitMix(options.seed);
    let scale1 = (2.0 / INPUTS as f32).sqrt();
    let scale2 = (1.0 / h as f32).sqrt();
    let mut model = PatchModel {
        hidden: h,
        input_mean,
        input_sd,
        w1: (0..h * INPUTS).map(|_| rng.normal() * scale1).collect(),
        b1: vec![0.0; h],
        w2: (0..CLASSES * h).map(|_| rng.normal() * scale2).collect(),
        b2: vec![0.0; CLASSES],
    };
    let mut adam = Adam::new(&model);
    let mut order: Vec<usize> = (0..n).collect();
    let mut grad = Gradient::zeros(&model);
    let mut hidden = vec![0.0f32; h];
    let mut dh = vec![0.0f32; h];
    for _ in 0..options.epochs {
        for k in (1..n).rev() {
            let j = (rng.next() % (k as u64 + 1)) as usize;
            order.swap(k, j);
        }
        for batch in order.chunks(options.batch.max(1)) {
            grad.clear();
            let mut total = 0.0f32;
            for &i in batch {
                let x = &z[i];
                forward_hidden(&model, x, &mut hidden);
                let p = softmax(&logits(&model, &hidden));
                let w = weight[i];
                total += w;
                // d(loss)/d(logit) = p − onehot, weighted.
                let dl: [f32; CLASSES] =
                    std::array::from_fn(|k| w * (p[k] - f32::from(u8::from(k == samples[i].class))));
                dh.iter_mut().for_each(|d| *d = 0.0);
                for (k, &g) in dl.iter().enumerate() {
                    grad.b2[k] += g;
                    for j in 0..h {
                        grad.w2[k * h + j] += g * hidden[j];
                        dh[j] += g * model.w2[k * h + j];
                    }
                }
                for j in 0..h {
                    if hidden[j] <= 0.0 {
                        continue;
                    }
                    let g = dh[j];
                    grad.b1[j] += g;
                    let row = &mut grad.w1[j * INPUTS..(j + 1) * INPUTS];
                    for (r, &xv) in row.iter_mut().zip(x) {
                        *r += g * xv;
                    }
                }
            }
            if total > 0.0 {
                grad.scale(1.0 / total);
                adam.step(&mut model, &grad, options);
            }
        }
    }
    Ok(model)
}

/// Gradients (or Adam moments) of every parameter.
struct Gradient {
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
}

impl Gradient {
    fn zeros(m: &PatchModel) -> Self {
        Self {
            w1: vec![0.0; m.w1.len()],
            b1: vec![0.0; m.b1.len()],
            w2: vec![0.0; m.w2.len()],
            b2: vec![0.0; m.b2.len()],
        }
    }

    fn clear(&mut self) {
        for v in [&mut self.w1, &mut self.b1, &mut self.w2, &mut self.b2] {
            v.iter_mut().for_each(|x| *x = 0.0);
        }
    }

    fn scale(&mut self, k: f32) {
        for v in [&mut self.w1, &mut self.b1, &mut self.w2, &mut self.b2] {
            v.iter_mut().for_each(|x| *x *= k);
        }
    }
}

struct Adam {
    m: Gradient,
    v: Gradient,
    t: i32,
}

impl Adam {
    fn new(model: &PatchModel) -> Self {
        Self { m: Gradient::zeros(model), v: Gradient::zeros(model), t: 0 }
    }

    fn step(&mut self, model: &mut PatchModel, g: &Gradient, o: &PatchFitOptions) {
        const B1: f32 = 0.9;
        const B2: f32 = 0.999;
        const EPS: f32 = 1e-8;
        self.t += 1;
        let c1 = 1.0 - B1.powi(self.t);
        let c2 = 1.0 - B2.powi(self.t);
        let (lr, wd) = (o.learning_rate, o.weight_decay);
        let update = |p: &mut [f32], gr: &[f32], m: &mut [f32], v: &mut [f32], decay: f32| {
            for (((pk, &gk), mk), vk) in p.iter_mut().zip(gr).zip(m.iter_mut()).zip(v.iter_mut()) {
                *mk = B1 * *mk + (1.0 - B1) * gk;
                *vk = B2 * *vk + (1.0 - B2) * gk * gk;
                let step = (*mk / c1) / ((*vk / c2).sqrt() + EPS);
                *pk -= lr * (step + decay * *pk);
            }
        };
        update(&mut model.w1, &g.w1, &mut self.m.w1, &mut self.v.w1, wd);
        update(&mut model.b1, &g.b1, &mut self.m.b1, &mut self.v.b1, 0.0);
        update(&mut model.w2, &g.w2, &mut self.m.w2, &mut self.v.w2, wd);
        update(&mut model.b2, &g.b2, &mut self.m.b2, &mut self.v.b2, 0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Synthetic points: the class shows only in a few patch inputs, shifted per class, under
    /// noise; two sources of different size.
    fn synthetic(n: usize, seed: u64) -> Vec<PatchSample> {
        let mut rng = SplitMix(seed);
        (0..n)
            .map(|i| {
                let class = i % 3;
                let mut inputs: Vec<f32> = (0..INPUTS).map(|_| rng.normal()).collect();
                let shift = [0.0, -2.0, 1.5][class];
                for x in inputs.iter_mut().take(24) {
                    *x += shift;
                }
                PatchSample { source: if i % 4 == 0 { "a".into() } else { "b".into() }, inputs, class }
            })
            .collect()
    }

    fn accuracy(model: &PatchModel, samples: &[PatchSample]) -> f64 {
        let right = samples
            .iter()
            .filter(|s| {
                let p = model.probabilities(&s.inputs);
                (0..3).fold(0, |b, k| if p[k] > p[b] { k } else { b }) == s.class
            })
            .count();
        right as f64 / samples.len() as f64
    }

    #[test]
    fn misplaced_grids_move_every_corner_within_the_error_and_repeat_with_the_seed() {
        let exact = GridGeometry::from_corners(
            [[100.0, 80.0], [900.0, 90.0], [950.0, 850.0], [60.0, 830.0]],
            crate::geometry::LensDistortion::none(1000, 900),
        )
        .unwrap();
        let grids = misplaced_grids(&exact, 7);
        assert_eq!(grids.len(), MISPLACED_GRIDS);
        assert_eq!(grids, misplaced_grids(&exact, 7));
        assert_ne!(grids, misplaced_grids(&exact, 8));
        // The cells here are 42–50 pixels, so a corner moved by at most 0.2 spacing moves at
        // most 0.2 × 50 pixels in the image.
        for g in &grids {
            let moved: Vec<f64> = exact
                .corners()
                .iter()
                .zip(g.corners())
                .map(|(a, b)| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt())
                .collect();
            assert!(moved.iter().any(|&d| d > 0.5), "a corner moved {moved:?}");
            assert!(moved.iter().all(|&d| d <= TRAINING_CORNER_ERROR * 50.0 + 1e-9), "{moved:?}");
        }
    }

    #[test]
    fn training_separates_the_classes_on_held_out_points() {
        let train = synthetic(3000, 1);
        let test = synthetic(300, 2);
        let options = PatchFitOptions { epochs: 8, ..PatchFitOptions::default() };
        let untrained = fit(&train, &PatchFitOptions { epochs: 0, ..options }).unwrap();
        let model = fit(&train, &options).unwrap();
        // Chance is a third; an untrained network is near it.
        assert!(accuracy(&untrained, &test) < 0.7, "untrained {}", accuracy(&untrained, &test));
        assert!(accuracy(&model, &test) > 0.9, "trained {}", accuracy(&model, &test));
    }

    #[test]
    fn the_same_samples_give_the_same_model_and_the_file_round_trips() {
        let train = synthetic(200, 3);
        let options = PatchFitOptions { epochs: 2, hidden: 8, ..PatchFitOptions::default() };
        let a = fit(&train, &options).unwrap();
        let b = fit(&train, &options).unwrap();
        assert_eq!(a, b);
        let file = PatchModelFile { command: "test".into(), points_per_source: vec![("a".into(), 200)], model: a };
        let text = serde_json::to_string(&file).unwrap();
        let back = PatchModel::from_json(&text).unwrap();
        assert_eq!(back, file.model);
        let x = &train[0].inputs;
        assert_eq!(back.probabilities(x), file.model.probabilities(x));
    }

    #[test]
    fn the_runner_gives_the_same_bits() {
        // The shipped model and a freshly fitted one, on varied inputs (the input means, zeros,
        // random vectors wide enough to switch hidden units on and off).
        let fitted = fit(&synthetic(200, 5), &PatchFitOptions { epochs: 1, hidden: 8, ..PatchFitOptions::default() });
        let Ok(fitted) = fitted else { panic!("the fit failed") };
        let mut rng = SplitMix(11);
        for model in [PatchModel::embedded(), &fitted] {
            let mut inputs = vec![model.input_mean.clone(), vec![0.0; INPUTS]];
            for _ in 0..200 {
                inputs.push((0..INPUTS).map(|_| 4.0 * rng.normal()).collect());
            }
            let mut runner = model.runner();
            for x in &inputs {
                let (a, b) = (model.probabilities(x), runner.probabilities(x));
                assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn embedded_model_parses() {
        let model = PatchModel::embedded();
        model.validate().expect("the shipped model has the right shape");
        let p = model.probabilities(&model.input_mean);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{p:?}");
    }

    #[test]
    fn a_model_of_the_wrong_shape_is_refused() {
        let train = synthetic(30, 4);
        let mut model = fit(&train, &PatchFitOptions { epochs: 1, hidden: 4, ..PatchFitOptions::default() }).unwrap();
        model.w1.pop();
        assert!(model.validate().is_err());
        assert!(fit(&[], &PatchFitOptions::default()).is_err());
    }

    #[test]
    fn mirroring_twice_is_the_identity_and_keeps_the_context() {
        let x: Vec<f32> = (0..INPUTS).map(|k| k as f32).collect();
        let m = mirrored(&x);
        assert_ne!(m, x);
        assert_eq!(mirrored(&m), x);
        assert_eq!(m[PATCH_SIDE * PATCH_SIDE * 3..], x[PATCH_SIDE * PATCH_SIDE * 3..]);
    }
}
