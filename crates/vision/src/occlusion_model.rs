//! The cell-centre test's decision fitted from data: whether a patch of foreign cell centres is
//! a hand, from the patch measured against the frame's own statistics (its colour departure over
//! the frame's typical cell's, its size and place, the share of cells whose lines are hidden), by
//! a logistic model whose weights are `models/occlusion.toml`, written by `tengen fit occlusion`
//! (see `models/point-reader.md`, "Occlusion model"). Nothing in the weights is set by hand.
//! A crowded board under a coloured lamp has big patches that stray from the board colour only
//! as far as its typical cell does; a hand strays far beyond it. A second logistic model decides
//! the same for the covered-point test's group (board-coloured points without lines), against
//! how often the frame's bare board shows no lines anyway. A third decides whether a run across
//! the board's outer edge (see `over_edge`) is a hand reaching over it.

use std::sync::LazyLock;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::over_edge::STEP_SHARE_FLOOR;

/// Number of features the model weighs.
pub const FEATURES: usize = 6;

/// What each feature is, in order (written into the model file for its reader).
pub const FEATURE_NAMES: [&str; FEATURES] = [
    "ln(1 + cells in the largest foreign patch)",
    "ln(patch colour distance / frame's typical cell distance)",
    "ln(1 + cells) × max(0, ln relative distance)",
    "the largest foreign patch reaches the outer cells",
    "share of inner cells whose grid lines are hidden",
    "ln(frame's typical cell colour distance)",
];

/// Number of features the covered-group model weighs.
pub const COVERED_FEATURES: usize = 4;

/// What each feature of the covered-group model is, in order.
pub const COVERED_FEATURE_NAMES: [&str; COVERED_FEATURES] = [
    "ln(1 + points in the largest covered group)",
    "ln(share of the frame's other bare-board points without lines + 1/200)",
    "the largest covered group reaches the outer lines",
    "ln(median line contrast of the frame's other bare-board points + 1/100)",
];

/// Number of features the edge-run model weighs.
pub const EDGE_FEATURES: usize = 4;

/// What each feature of the edge-run model is, in order.
pub const EDGE_FEATURE_NAMES: [&str; EDGE_FEATURES] = [
    "ln(run length along the edge, spacings)",
    "ln(length of its margin departing in chroma or its edge hidden, spacings)",
    "ln(1 + median chroma departure of its margin, spreads)",
    "ln(least share of its stretch's edge step left over the run)",
];

/// Shortest run across the edge the edge-run model judges, in spacings (a priori: two positions
/// a quarter spacing apart; a finger is about half a spacing wide). Also the floor of the
/// margin length's logarithm.
pub const EDGE_MIN_RUN: f32 = 0.5;

/// Offset that keeps the colour-distance logarithms finite on a frame of perfectly even wood.
const DISTANCE_FLOOR: f32 = 0.05;

/// Offset of the lineless share's logarithm: about one point of a board's bare points (a
/// priori: a share below one point in 200 is as good as none).
const LINELESS_FLOOR: f64 = 0.005;

/// Offset of the bare-board line contrast's logarithm (a priori: a contrast of 1 % is as good
/// as no line; the covered test itself counts lines from 3 %).
const BARE_LINES_FLOOR: f64 = 0.01;

/// What the occlusion tests found in one frame (the model's input, and the report's evidence).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OcclusionEvidence {
    /// Cells of the foreign-cell patches big enough for the cell-centre test, with their fringe.
    pub foreign_cells: usize,
    /// Points of the board-coloured-without-lines groups big enough for that test.
    pub covered_points: usize,
    /// Edge points crossed by skin.
    pub crossed_points: usize,
    /// Cells in the largest patch of foreign cells, whatever its size.
    pub largest_patch: usize,
    /// Median colour distance of that patch's cells from the board colour.
    pub patch_distance: f32,
    /// Median colour distance of the frame's inner cells from the board colour: how far bare
    /// wood, shadows and the stones' edges stray under this light and camera.
    pub typical_distance: f32,
    /// Whether that patch reaches the cells along the outer lines.
    pub patch_at_edge: bool,
    /// Points in the largest board-coloured group without lines, whatever its size.
    pub largest_covered: usize,
    /// Whether that group reaches the outer lines.
    pub covered_at_edge: bool,
    /// Share of the inner cells whose grid-line edges are hidden (a crowded board hides most).
    pub hidden_lines: f32,
    /// Share of the frame's board-coloured points read empty that show no lines, outside the
    /// covered groups big enough to count: how often bare board hides its lines in this frame
    /// anyway (faint lines under a coloured lamp, a steep view) — the covered groups' base rate.
    pub lineless_share: f32,
    /// Median line contrast of those points (the frame's bare board, leaving out the covered
    /// groups): how visible this frame's lines are where nothing lies on them.
    pub bare_lines: f32,
    /// Length of the longest run across the board's outer edge, in spacings (0 when none).
    pub edge_run: f32,
    /// How much of that run has its margin departing in chroma or the edge hidden, in spacings.
    pub edge_margin: f32,
    /// Median chroma departure of that run's margin, in spreads.
    pub edge_chroma: f32,
    /// The least share of the edge's step (against its own stretch of the edge) left over that
    /// run: near 0 where something covers the edge, near 1 where the edge shows whole.
    pub edge_share: f32,
    /// What the hand-set tests alone decided (any of the three firing).
    pub rules_fired: bool,
    /// Whether the board-coloured-without-lines test or the edge-crossing test (whose hand-set
    /// decisions stand) counts the frame as occluded.
    pub other_tests_fired: bool,
}

impl OcclusionEvidence {
    /// Whether the cell-centre test found a patch big enough to judge (what the model decides
    /// on; a frame without one says nothing to a fit).
    pub fn cells_found(&self) -> bool {
        self.foreign_cells > 0
    }

    /// Whether the covered-point test found a group big enough to judge.
    pub fn covered_found(&self) -> bool {
        self.covered_points > 0
    }

    /// Whether the edge test found a run long enough to judge.
    pub fn edge_found(&self) -> bool {
        self.edge_run >= EDGE_MIN_RUN
    }

    /// The edge-run model's feature vector.
    pub fn edge_features(&self) -> [f64; EDGE_FEATURES] {
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        [
            finite(f64::from(self.edge_run.max(EDGE_MIN_RUN)).ln()),
            finite(f64::from(self.edge_margin.max(EDGE_MIN_RUN)).ln()),
            finite(f64::from(self.edge_chroma.max(0.0)).ln_1p()),
            finite(f64::from(self.edge_share.clamp(STEP_SHARE_FLOOR, 1.0)).ln()),
        ]
    }

    /// The covered-group model's feature vector.
    pub fn covered_features(&self) -> [f64; COVERED_FEATURES] {
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        [
            (1.0 + self.largest_covered as f64).ln(),
            finite((f64::from(self.lineless_share.max(0.0)) + LINELESS_FLOOR).ln()),
            f64::from(u8::from(self.covered_at_edge)),
            finite((f64::from(self.bare_lines.max(0.0)) + BARE_LINES_FLOOR).ln()),
        ]
    }

    /// The model's feature vector.
    pub fn features(&self) -> [f64; FEATURES] {
        let size = (1.0 + self.largest_patch as f64).ln();
        let relative = if self.largest_patch > 0 {
            f64::from((self.patch_distance + DISTANCE_FLOOR) / (self.typical_distance.max(0.0) + DISTANCE_FLOOR)).ln()
        } else {
            0.0
        };
        let typical = f64::from(self.typical_distance.max(0.0) + DISTANCE_FLOOR).ln();
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        [
            size,
            finite(relative),
            finite(size * relative.max(0.0)),
            f64::from(u8::from(self.patch_at_edge)),
            finite(f64::from(self.hidden_lines)),
            finite(typical),
        ]
    }
}

/// The fitted occlusion model: P(hand) = 1 / (1 + exp(−(bias + weights · features))) for the
/// cell-centre test's patch, and a model of the same form for the covered-point test's group.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OcclusionModel {
    /// One weight per feature (see [`FEATURE_NAMES`]).
    pub weights: [f64; FEATURES],
    /// The intercept.
    pub bias: f64,
    /// Whether the covered-point test's group is a hand.
    pub covered: CoveredGroupModel,
    /// Whether the run across the board's edge is a hand.
    pub edge: EdgeRunModel,
}

/// The edge test's decision: P(hand) = 1 / (1 + exp(−(bias + weights · features))), features
/// [`EDGE_FEATURE_NAMES`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EdgeRunModel {
    /// One weight per feature (see [`EDGE_FEATURE_NAMES`]).
    pub weights: [f64; EDGE_FEATURES],
    /// The intercept.
    pub bias: f64,
}

/// The covered-point test's decision: P(hand) = 1 / (1 + exp(−(bias + weights · features))),
/// features [`COVERED_FEATURE_NAMES`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CoveredGroupModel {
    /// One weight per feature (see [`COVERED_FEATURE_NAMES`]).
    pub weights: [f64; COVERED_FEATURES],
    /// The intercept.
    pub bias: f64,
}

/// The model file as written by `tengen fit occlusion`: the model plus where it came from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OcclusionModelFile {
    /// The command that wrote the file.
    pub command: String,
    /// Frames used per source, with how many of them show a hand.
    pub frames_per_source: Vec<(String, usize, usize)>,
    /// The features, in the order of the weights.
    pub features: Vec<String>,
    /// The covered-group model's features, in the order of its weights.
    pub covered_features: Vec<String>,
    /// The edge-run model's features, in the order of its weights.
    pub edge_features: Vec<String>,
    /// The model.
    pub model: OcclusionModel,
}

static EMBEDDED: LazyLock<OcclusionModel> = LazyLock::new(|| {
    crate::reader_model::embedded_file::<OcclusionModelFile>(
        include_str!("../../../models/occlusion.toml"),
        "models/occlusion.toml is a valid occlusion model",
    )
    .model
});

impl OcclusionModel {
    /// The model shipped in `models/occlusion.toml`.
    pub fn embedded() -> Self {
        *EMBEDDED
    }

    /// Probability that a hand covers the board, given a frame's evidence.
    pub fn probability(&self, evidence: &OcclusionEvidence) -> f64 {
        logistic(self.bias, &self.weights, &evidence.features())
    }

    /// Whether the cell-centre test's patch counts as a hand: there is one and a hand is more
    /// likely than not.
    pub fn patch_is_hand(&self, evidence: &OcclusionEvidence) -> bool {
        evidence.cells_found() && self.probability(evidence) > 0.5
    }

    /// Probability that the covered-point test's group is a hand.
    pub fn covered_probability(&self, evidence: &OcclusionEvidence) -> f64 {
        logistic(self.covered.bias, &self.covered.weights, &evidence.covered_features())
    }

    /// Whether the covered-point test's group counts as a hand: there is one and a hand is more
    /// likely than not.
    pub fn covered_is_hand(&self, evidence: &OcclusionEvidence) -> bool {
        evidence.covered_found() && self.covered_probability(evidence) > 0.5
    }

    /// Probability that the run across the board's edge is a hand.
    pub fn edge_probability(&self, evidence: &OcclusionEvidence) -> f64 {
        logistic(self.edge.bias, &self.edge.weights, &evidence.edge_features())
    }

    /// Whether the run across the board's edge counts as a hand: there is one long enough and a
    /// hand is more likely than not.
    pub fn edge_is_hand(&self, evidence: &OcclusionEvidence) -> bool {
        evidence.edge_found() && self.edge_probability(evidence) > 0.5
    }

    /// Whether the frame counts as occluded: the patch or the edge run is a hand, or another
    /// test fired.
    pub fn occluded(&self, evidence: &OcclusionEvidence) -> bool {
        self.patch_is_hand(evidence) || self.edge_is_hand(evidence) || evidence.other_tests_fired
    }
}

/// 1 / (1 + exp(−(bias + weights · x))).
fn logistic(bias: f64, weights: &[f64], x: &[f64]) -> f64 {
    let z = bias + weights.iter().zip(x).map(|(w, v)| w * v).sum::<f64>();
    1.0 / (1.0 + (-z).exp())
}

impl Default for OcclusionModel {
    fn default() -> Self {
        Self::embedded()
    }
}

/// One frame for fitting: its source, its evidence and whether a hand covers grid points.
#[derive(Debug, Clone, PartialEq)]
pub struct OcclusionSample {
    /// The source it belongs to (each source weighs the same within its class).
    pub source: String,
    /// The frame's name, for reports.
    pub name: String,
    /// What the tests found.
    pub evidence: OcclusionEvidence,
    /// Whether a hand covers grid points.
    pub hand: bool,
}

/// Why the model could not be fitted.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum OcclusionFitError {
    /// The frames hold no hand or no clean frame.
    #[error("the frames need both hands and clean boards: {hands} with a hand, {clean} without")]
    OneClass {
        /// Frames with a hand.
        hands: usize,
        /// Frames without.
        clean: usize,
    },
}

/// Ridge on the weights (not the bias), against the summed sample weight of 2: keeps a
/// separable set's weights finite and the model smooth between the few real hands.
const RIDGE: f64 = 0.01;

/// Fits the three models by weighted maximum likelihood (Newton's method with a weak ridge). Hands
/// and clean frames weigh the same in total (a missed hand costs what a false alarm does), and
/// within each, every source weighs the same (a source with many frames of one board and lamp
/// must not become "the" look of a hand or of a clean board). Each model sees only the frames
/// where its test found something to judge (see [`OcclusionEvidence::cells_found`],
/// [`OcclusionEvidence::covered_found`] and [`OcclusionEvidence::edge_found`]).
pub fn fit(samples: &[OcclusionSample]) -> Result<OcclusionModel, OcclusionFitError> {
    let (weights, bias) = fit_logistic(samples, OcclusionEvidence::cells_found, OcclusionEvidence::features)?;
    let (covered_weights, covered_bias) =
        fit_logistic(samples, OcclusionEvidence::covered_found, OcclusionEvidence::covered_features)?;
    let (edge_weights, edge_bias) =
        fit_logistic(samples, OcclusionEvidence::edge_found, OcclusionEvidence::edge_features)?;
    Ok(OcclusionModel {
        weights,
        bias,
        covered: CoveredGroupModel { weights: covered_weights, bias: covered_bias },
        edge: EdgeRunModel { weights: edge_weights, bias: edge_bias },
    })
}

/// One logistic model over the samples `found` keeps, with features `features`.
fn fit_logistic<const N: usize>(
    samples: &[OcclusionSample],
    found: fn(&OcclusionEvidence) -> bool,
    features: fn(&OcclusionEvidence) -> [f64; N],
) -> Result<([f64; N], f64), OcclusionFitError> {
    let samples: Vec<&OcclusionSample> = samples.iter().filter(|s| found(&s.evidence)).collect();
    let hands = samples.iter().filter(|s| s.hand).count();
    let clean = samples.len() - hands;
    if hands == 0 || clean == 0 {
        return Err(OcclusionFitError::OneClass { hands, clean });
    }
    let class_sources = |hand: bool| -> Vec<&str> {
        let mut v: Vec<&str> = samples.iter().filter(|s| s.hand == hand).map(|s| s.source.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (hand_sources, clean_sources) = (class_sources(true), class_sources(false));
    let weight = |s: &&OcclusionSample| {
        let in_source = samples.iter().filter(|o| o.hand == s.hand && o.source == s.source).count() as f64;
        let sources = if s.hand { hand_sources.len() } else { clean_sources.len() } as f64;
        1.0 / (in_source * sources)
    };
    let rows: Vec<([f64; N], f64, f64)> =
        samples.iter().map(|s| (features(&s.evidence), if s.hand { 1.0 } else { 0.0 }, weight(s))).collect();
    let n = N + 1;
    let mut beta = DVector::<f64>::zeros(n);
    for _ in 0..100 {
        let mut gradient = DVector::<f64>::zeros(n);
        let mut hessian = DMatrix::<f64>::zeros(n, n);
        for k in 1..n {
            gradient[k] -= RIDGE * beta[k];
            hessian[(k, k)] += RIDGE;
        }
        for (x, y, w) in &rows {
            let mut v = DVector::<f64>::zeros(n);
            v[0] = 1.0;
            for (d, value) in x.iter().enumerate() {
                v[d + 1] = *value;
            }
            let p = 1.0 / (1.0 + (-beta.dot(&v)).exp());
            gradient += &v * (w * (y - p));
            hessian += &v * v.transpose() * (w * p * (1.0 - p));
        }
        let Some(step) = hessian.lu().solve(&gradient) else { break };
        beta += &step;
        if step.amax() < 1e-9 {
            break;
        }
    }
    let mut weights = [0.0; N];
    for (d, w) in weights.iter_mut().enumerate() {
        *w = beta[d + 1];
    }
    Ok((weights, beta[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_model_parses() {
        let m = OcclusionModel::embedded();
        assert!(m.weights.iter().chain([&m.bias]).all(|w| w.is_finite()));
        // A clean frame with nothing found is not occluded.
        assert!(!m.occluded(&OcclusionEvidence { typical_distance: 0.3, ..OcclusionEvidence::default() }));
        // What the other tests found still counts.
        assert!(m.occluded(&OcclusionEvidence { other_tests_fired: true, ..OcclusionEvidence::default() }));
    }

    fn frame(patch: usize, distance: f32, typical: f32) -> OcclusionEvidence {
        OcclusionEvidence {
            foreign_cells: if patch >= 4 { patch + 8 } else { 0 },
            largest_patch: patch,
            patch_distance: distance,
            typical_distance: typical,
            hidden_lines: 0.1,
            ..OcclusionEvidence::default()
        }
    }

    /// A frame whose covered-point test found a group of `points`, with `lineless` of the
    /// frame's other bare points showing no lines (and lines as faint as that share says).
    fn covered(frame: OcclusionEvidence, points: usize, lineless: f32) -> OcclusionEvidence {
        OcclusionEvidence {
            covered_points: points,
            largest_covered: points,
            lineless_share: lineless,
            bare_lines: 0.25 - lineless.min(0.2),
            ..frame
        }
    }

    /// A frame whose edge test found a run of `length` spacings departing `chroma` spreads.
    fn edge(frame: OcclusionEvidence, length: f32, chroma: f32) -> OcclusionEvidence {
        OcclusionEvidence { edge_run: length, edge_margin: length / 2.0, edge_chroma: chroma, edge_share: 1.0, ..frame }
    }

    /// Hands are patches far outside the frame's own colour spread; a crowded board under a
    /// coloured lamp has big patches only as far from the board as its typical cell. The fit
    /// learns the difference, whatever the sizes.
    #[test]
    fn the_fit_separates_a_far_patch_from_a_noisy_frame() {
        let mut samples = Vec::new();
        for k in 0..20 {
            let size = 5 + k * 3;
            samples.push(OcclusionSample {
                source: "hands".into(),
                name: String::new(),
                evidence: covered(frame(size, 4.0, 0.25), 3 + k, 0.001 * (k % 4) as f32),
                hand: true,
            });
            samples.push(OcclusionSample {
                source: "cast".into(),
                name: String::new(),
                evidence: covered(frame(size * 3, 3.0, 2.0), 3 + k % 5, 0.05 + 0.02 * k as f32),
                hand: false,
            });
            samples.push(OcclusionSample {
                source: "plain".into(),
                name: String::new(),
                evidence: frame(k % 3, 0.5, 0.2),
                hand: false,
            });
            // Runs across the edge: a hand's margin departs far in chroma, a stray run's little.
            samples.push(OcclusionSample {
                source: "edge".into(),
                name: String::new(),
                evidence: edge(frame(0, 0.0, 0.2), 0.5 + 0.25 * (k % 6) as f32, 8.0 + k as f32),
                hand: true,
            });
            samples.push(OcclusionSample {
                source: "edge".into(),
                name: String::new(),
                evidence: edge(frame(0, 0.0, 0.2), 0.5 + 0.25 * (k % 3) as f32, 3.0 + 0.1 * k as f32),
                hand: false,
            });
        }
        let model = fit(&samples).unwrap();
        assert!(model.occluded(&frame(12, 5.0, 0.3)));
        assert!(!model.occluded(&frame(150, 3.5, 2.2)));
        assert!(!model.occluded(&frame(0, 0.0, 0.2)));
        // A covered group where the frame's bare board shows its lines is a hand; where much of
        // it shows none (faint lines under a lamp), a group of the same size is not.
        assert!(model.covered_is_hand(&covered(frame(0, 0.0, 0.2), 6, 0.002)));
        assert!(!model.covered_is_hand(&covered(frame(0, 0.0, 0.2), 6, 0.3)));
        assert!(!model.covered_is_hand(&frame(0, 0.0, 0.2)));
        // A run whose margin departs far in chroma is a hand; a short faint one, or none, is not.
        assert!(model.occluded(&edge(frame(0, 0.0, 0.2), 1.0, 15.0)));
        assert!(!model.edge_is_hand(&edge(frame(0, 0.0, 0.2), 0.5, 3.5)));
        assert!(!model.edge_is_hand(&edge(frame(0, 0.0, 0.2), 0.25, 30.0)));
        // Frames without a patch to judge are left out of the fit.
        let only_plain: Vec<_> = samples.iter().filter(|s| s.source == "plain").cloned().collect();
        assert!(fit(&only_plain).is_err());
    }

    #[test]
    fn one_class_is_an_error() {
        let s = OcclusionSample { source: "a".into(), name: String::new(), evidence: frame(12, 0.5, 0.2), hand: false };
        assert_eq!(fit(&[s]), Err(OcclusionFitError::OneClass { hands: 0, clean: 1 }));
    }
}
