//! Per-frame classification of point features into empty / black / white with a probability:
//! a three-class Gaussian model whose class means start from physical priors (relative to the
//! board colour, fitted from labelled frames: `reader_model`) and are then re-estimated on the
//! frame itself (maximum a posteriori EM), so each frame's own stones set the thresholds.

use tengen_rules::BOARD_LINES;

use crate::features::PointFeatures;
use crate::reader_model::ClassPrior;

/// Number of features the model uses.
pub const DIMS: usize = 5;

/// A point's class, as the classifier sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoneClass {
    /// Bare intersection.
    Empty = 0,
    /// Black stone.
    Black = 1,
    /// White stone.
    White = 2,
}

impl StoneClass {
    /// All classes in index order.
    pub const ALL: [StoneClass; 3] = [StoneClass::Empty, StoneClass::Black, StoneClass::White];
}

/// How many points' worth of evidence a prior mean is worth when a frame re-estimates its
/// classes (a priori: a frame's own stones win once there are more than a handful).
const PRIOR_WEIGHT: f64 = 10.0;

/// Feature vector used by the model: brightness, dark tail, neutrality, green/red, line contrast.
pub(crate) fn feature_vector(f: &PointFeatures) -> [f64; DIMS] {
    [f64::from(f.brightness), f64::from(f.dark_tail), f64::from(f.neutral), f64::from(f.green_red), f64::from(f.lines)]
}

/// Index of the brightness feature (the median is already robust to highlights).
const BRIGHTNESS: usize = 0;
/// Index of the black class.
const BLACK: usize = 1;
/// Index of the white class.
const WHITE: usize = 2;
/// Points darker than this (ln ratio to the board, i.e. under 40 % of it) ...
const SURE_BLACK_BRIGHTNESS: f64 = -0.9;
/// ... and showing less line contrast than this seed the frame's black class.
const SURE_BLACK_LINES: f64 = 0.1;
/// Index of the line-contrast feature.
const LINES: usize = 4;
/// Index of the dark-tail feature (the disc's darker quarter against the board).
const DARK_TAIL: usize = 1;
/// Index of the neutrality feature (blue/red against the board's).
const NEUTRAL: usize = 2;
/// Points whose darker quarter is still brighter than the board (ln ratio above this: no line,
/// no shadow, nothing darker than bare board in the disc) and that show less line contrast
/// than [`SURE_BLACK_LINES`] are lighter than the board throughout: this frame's white stones.
const SURE_WHITE_DARK_TAIL: f64 = 0.0;
/// How much greyer than the bare board (neutral feature) white stones must stay when the frame
/// shows none of its own: white stones are grey, wood is yellow. A board whose colour is greyer
/// than this (ln of its brightest over its darkest channel: a white or cream sheet under a
/// near-white lamp) cannot hold the priors' white, measured on wood, so there the frame's own
/// whites set it. Under a coloured lamp every board is far from grey and the priors stand: the
/// features are ratios to the board, in which the lamp cancels and the wood stays yellow.
const WHITE_NEUTRAL_GAP: f64 = 0.15;
/// Sure points of a colour from which they set that class's start (as few as make a median).
const MIN_SURE_POINTS: usize = 3;
/// Indices of the colour features, whose gross misfit means "neither stone nor board".
const COLOUR: [usize; 2] = [2, 3];

/// Smallest standard deviation allowed per feature after re-estimation (keeps a class with a few
/// near-identical members from becoming infinitely sharp).
const SD_FLOOR: [f64; DIMS] = [0.06, 0.08, 0.05, 0.025, 0.04];

/// A colour feature this many standard deviations from the best class marks the point as
/// something else (table cloth, skin, a sleeve): read as unknown.
const OUTLIER_Z: f64 = 6.0;

/// Noise of one 8-bit colour channel in dark parts of a compressed frame (sensor read noise and
/// JPEG chroma quantisation), in levels; the offset 4 in the colour ratios keeps it finite.
const CHANNEL_NOISE: f64 = 4.0;

/// Standard deviation of a log channel ratio (as in the neutral and green/red features) measured
/// on a disc of median luminance `luma`: two noisy channels over about `luma`.
fn colour_ratio_noise(luma: f32) -> f64 {
    std::f64::consts::SQRT_2 * CHANNEL_NOISE / (f64::from(luma).max(0.0) + 4.0)
}

/// EM rounds; the assignment settles within a few.
const ROUNDS: usize = 4;

/// Posterior probabilities of each class for every point; `[row][col][class]`.
pub type Posteriors = Vec<[[f64; 3]; BOARD_LINES]>;

/// The classification of one frame.
#[derive(Debug, Clone)]
pub struct Classified {
    /// Class posteriors, `[row][col][class]` (uniform where unmeasurable).
    pub posteriors: Posteriors,
    /// Points whose colour fits none of the classes (not a stone, not board), `[row][col]`.
    pub outlier: Vec<[bool; BOARD_LINES]>,
    /// How far (in standard deviations) a point's colour lies from its best class, `[row][col]`.
    pub misfit: Vec<[f32; BOARD_LINES]>,
    /// Log-odds of the best class over the runner-up, `[row][col]` (0 where unmeasurable).
    pub margin: Vec<[f32; BOARD_LINES]>,
    /// The frame's class means and spreads after re-estimation (empty, black, white), for
    /// inspection.
    pub class_model: Vec<(Vec<f64>, Vec<f64>)>,
}

/// Classifies every point of one frame with the given class priors (empty, black, white);
/// `board` is the frame's board colour (RGB, [`crate::features::BoardColour::global`]).
/// `temperature` ≥ 1 softens the posteriors.
pub fn classify(
    features: &[[PointFeatures; BOARD_LINES]],
    classes: &[ClassPrior; 3],
    board: [f32; 3],
    temperature: f64,
) -> Classified {
    classify_with(features, classes, board, temperature, true)
}

/// How far a board colour is from grey: ln(brightest / darkest channel), with the colour
/// ratios' offset of 4 levels.
fn chroma(board: [f32; 3]) -> f64 {
    let channels = board.map(|c| f64::from(c) + 4.0);
    (channels.iter().copied().fold(f64::MIN, f64::max) / channels.iter().copied().fold(f64::MAX, f64::min)).ln()
}

/// [`classify`], with the frame's colour noise measured (`measure_noise`) or taken to be the
/// priors' (to show in the tests what the measurement changes).
fn classify_with(
    features: &[[PointFeatures; BOARD_LINES]],
    classes: &[ClassPrior; 3],
    board: [f32; 3],
    temperature: f64,
    measure_noise: bool,
) -> Classified {
    let points: Vec<(usize, usize, [f64; DIMS])> = features
        .iter()
        .enumerate()
        .flat_map(|(r, row)| {
            row.iter().enumerate().filter(|(_, f)| f.valid).map(move |(c, f)| (r, c, feature_vector(f)))
        })
        .collect();
    let mut priors = *classes;
    // Under a strong colour cast one channel of the wood drops to a few levels and the colour
    // ratios of bare board scatter far beyond the priors' spreads (which were measured under
    // white light): measure that scatter on this frame's board-bright points and widen every
    // class's colour spread by it, so brightness and lines decide where colour says little.
    let excess = if measure_noise { colour_noise_excess(&points, &classes[0]) } else { [0.0; DIMS] };
    for prior in &mut priors {
        for &d in &COLOUR {
            prior.sd[d] = prior.sd[d].hypot(excess[d]);
            prior.within_sd[d] = prior.within_sd[d].hypot(excess[d]);
        }
    }
    let widened = priors;
    let classes = &widened;
    // Start black where this frame's unmistakable black stones are (much darker than the board,
    // no lines): under a dim lamp they can be far darker than the prior, and stones' shadows
    // must not capture the class instead.
    let mut sure_black: Vec<(f64, f64)> = points
        .iter()
        .filter(|(_, _, x)| x[BRIGHTNESS] < SURE_BLACK_BRIGHTNESS && x[LINES] < SURE_BLACK_LINES)
        .map(|(_, _, x)| (x[BRIGHTNESS], x[DARK_TAIL]))
        .collect();
    if sure_black.len() >= MIN_SURE_POINTS {
        sure_black.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mid = sure_black[sure_black.len() / 2];
        priors[BLACK].mean[BRIGHTNESS] = mid.0.min(classes[BLACK].mean[BRIGHTNESS]);
        priors[BLACK].mean[DARK_TAIL] = mid.1.min(classes[BLACK].mean[DARK_TAIL]);
    }
    // On a grey board, start white where this frame's white stones are (lighter than the board
    // throughout, no lines, no redder than it): the priors' white is grey against yellow wood,
    // but on a white or cream sheet the stones are as grey as the board, and a class started on
    // wood's whites never reaches them. Their own colour then says how much greyer than the
    // board this frame's whites are. On yellow wood the priors hold (and bare wood under glare,
    // lineless and bright, must not become the frame's white).
    let white_neutral_gap =
        if chroma(board) < WHITE_NEUTRAL_GAP { seed_white(&points, &mut priors) } else { WHITE_NEUTRAL_GAP };
    let mut means: [[f64; DIMS]; 3] = [priors[0].mean, priors[1].mean, priors[2].mean];
    let mut sds: [[f64; DIMS]; 3] = [classes[0].sd, classes[1].sd, classes[2].sd];
    let mut weights = [0.6, 0.2, 0.2];
    let mut post = vec![[0.0f64; 3]; points.len()];
    for round in 0..=ROUNDS {
        // E-step.
        let logs = ClassLogs::new(&sds, &weights);
        for (p, (_, _, x)) in post.iter_mut().zip(&points) {
            *p = posterior_and_margin(x, &means, &sds, &logs, 1.0).0;
        }
        if round == ROUNDS {
            break;
        }
        // M-step with the priors as pseudo-observations.
        for k in 0..3 {
            let prior = &priors[k];
            let wsum: f64 = post.iter().map(|p| p[k]).sum();
            for d in 0..DIMS {
                let sx: f64 = post.iter().zip(&points).map(|(p, (_, _, x))| p[k] * x[d]).sum();
                let mean = (PRIOR_WEIGHT * prior.mean[d] + sx) / (PRIOR_WEIGHT + wsum);
                let sxx: f64 = post.iter().zip(&points).map(|(p, (_, _, x))| p[k] * (x[d] - mean).powi(2)).sum();
                let var = (PRIOR_WEIGHT * prior.within_sd[d].powi(2) + sxx) / (PRIOR_WEIGHT + wsum);
                means[k][d] = mean;
                // The mean has moved to this frame, so the frame-to-frame spread no longer
                // applies: a class may sharpen but not grow wider than the spread within a frame,
                // or a few doubtful points (stone shadows) widen it until it swallows them.
                sds[k][d] = var.sqrt().clamp(SD_FLOOR[d], prior.within_sd[d].max(SD_FLOOR[d]));
            }
            weights[k] = (wsum + 2.0) / (points.len() as f64 + 6.0);
        }
        enforce_order(&mut means, white_neutral_gap);
    }
    let mut out = vec![[[1.0 / 3.0; 3]; BOARD_LINES]; BOARD_LINES];
    let mut outlier = vec![[false; BOARD_LINES]; BOARD_LINES];
    let mut misfit = vec![[0.0f32; BOARD_LINES]; BOARD_LINES];
    let mut margin = vec![[0.0f32; BOARD_LINES]; BOARD_LINES];
    let logs = ClassLogs::new(&sds, &weights);
    for (r, c, x) in &points {
        let (p, m) = posterior_and_margin(x, &means, &sds, &logs, temperature);
        margin[*r][*c] = m as f32;
        let best = (0..3).fold(0, |b, k| if p[k] > p[b] { k } else { b });
        // "Unlike any class" is judged against the class's full physical spread (a frame with a
        // few stones of a colour narrows the class far below it) widened by the noise of a
        // colour ratio taken on dark pixels (a deep shadow between two stones has a noisy hue).
        let noise = colour_ratio_noise(features[*r][*c].luma);
        let z = COLOUR
            .iter()
            .map(|&d| {
                let sd = sds[best][d].max(classes[best].sd[d]);
                ((x[d] - means[best][d]) / (sd * sd + noise * noise).sqrt()).abs()
            })
            .fold(0.0, f64::max);
        outlier[*r][*c] = z > OUTLIER_Z;
        misfit[*r][*c] = z as f32;
        out[*r][*c] = p;
    }
    let class_model = (0..3).map(|k| (means[k].to_vec(), sds[k].to_vec())).collect();
    Classified { posteriors: out, outlier, misfit, margin, class_model }
}

/// Robust spread (1.4826 × median absolute deviation) of each colour feature over the points
/// whose brightness is within one prior spread of bare board — mostly bare board, whatever the
/// stones' colours — beyond the empty prior's own spread within a frame (0 where it is no wider:
/// under white light the priors already hold it). Fewer than `MIN_NOISE_POINTS` such points say
/// nothing.
fn colour_noise_excess(points: &[(usize, usize, [f64; DIMS])], empty: &ClassPrior) -> [f64; DIMS] {
    let mut excess = [0.0; DIMS];
    let board_bright: Vec<&[f64; DIMS]> = points
        .iter()
        .map(|(_, _, x)| x)
        .filter(|x| (x[BRIGHTNESS] - empty.mean[BRIGHTNESS]).abs() < empty.within_sd[BRIGHTNESS])
        .collect();
    if board_bright.len() < MIN_NOISE_POINTS {
        return excess;
    }
    for &d in &COLOUR {
        let mut v: Vec<f64> = board_bright.iter().map(|x| x[d]).collect();
        let m = median_f64(&mut v);
        let mut dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
        let spread = 1.4826 * median_f64(&mut dev);
        excess[d] = (spread * spread - empty.within_sd[d] * empty.within_sd[d]).max(0.0).sqrt();
    }
    excess
}

/// Points a frame needs at the board's brightness to measure its colour noise (a priori: a
/// median absolute deviation of fewer than a couple of dozen points is itself noise).
const MIN_NOISE_POINTS: usize = 20;

fn median_f64(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mid = v.len() / 2;
    v.select_nth_unstable_by(mid, f64::total_cmp);
    v[mid]
}

/// Moves the white class's start (brightness, dark tail, colour) to the median of the frame's
/// sure white points — lighter than the board throughout, without lines, and no redder than
/// the board in either colour ratio (a grey stone is not; skin is) — when it has enough of
/// them, and returns how much greyer than the bare board the white class must stay:
/// [`WHITE_NEUTRAL_GAP`], or less where the frame's own whites are less grey than that against
/// their board (a white or cream sheet).
fn seed_white(points: &[(usize, usize, [f64; DIMS])], priors: &mut [ClassPrior; 3]) -> f64 {
    let sure_white: Vec<&[f64; DIMS]> = points
        .iter()
        .map(|(_, _, x)| x)
        .filter(|x| {
            x[DARK_TAIL] > SURE_WHITE_DARK_TAIL
                && x[LINES] < SURE_BLACK_LINES
                && x[NEUTRAL] >= 0.0
                && x[COLOUR[1]] >= 0.0
        })
        .collect();
    if sure_white.len() < MIN_SURE_POINTS {
        return WHITE_NEUTRAL_GAP;
    }
    for d in [BRIGHTNESS, DARK_TAIL, NEUTRAL, COLOUR[1]] {
        let mut v: Vec<f64> = sure_white.iter().map(|x| x[d]).collect();
        priors[WHITE].mean[d] = median_f64(&mut v);
    }
    (priors[WHITE].mean[NEUTRAL] - priors[0].mean[NEUTRAL]).clamp(0.0, WHITE_NEUTRAL_GAP)
}

/// Keeps the re-estimated classes physically ordered: black darker than empty, white greyer
/// than empty (by `white_neutral_gap`) and without lines, so a frame with no stones of one
/// colour cannot hand that class to another population.
fn enforce_order(means: &mut [[f64; DIMS]; 3], white_neutral_gap: f64) {
    let empty = means[0];
    means[BLACK][BRIGHTNESS] = means[BLACK][BRIGHTNESS].min(empty[BRIGHTNESS] - 0.6);
    means[BLACK][DARK_TAIL] = means[BLACK][DARK_TAIL].min(empty[DARK_TAIL] - 0.6);
    means[WHITE][NEUTRAL] = means[WHITE][NEUTRAL].max(empty[NEUTRAL] + white_neutral_gap);
    means[WHITE][BRIGHTNESS] = means[WHITE][BRIGHTNESS].max(empty[BRIGHTNESS] + 0.05);
    means[BLACK][LINES] = means[BLACK][LINES].min(empty[LINES] - 0.08);
    means[WHITE][LINES] = means[WHITE][LINES].min(empty[LINES] - 0.08);
}

/// The logarithms of the class weights and spreads, taken once per pass over the points
/// rather than once per point (the same values).
struct ClassLogs {
    weight: [f64; 3],
    sd: [[f64; DIMS]; 3],
}

impl ClassLogs {
    fn new(sds: &[[f64; DIMS]; 3], weights: &[f64; 3]) -> Self {
        Self { weight: weights.map(f64::ln), sd: sds.map(|row| row.map(f64::ln)) }
    }
}

/// Posteriors and the log-odds margin of the best class over the runner-up (finite even when
/// the posteriors round to 0 and 1).
fn posterior_and_margin(
    x: &[f64; DIMS],
    means: &[[f64; DIMS]; 3],
    sds: &[[f64; DIMS]; 3],
    logs: &ClassLogs,
    temperature: f64,
) -> ([f64; 3], f64) {
    let mut logp = [0.0f64; 3];
    for k in 0..3 {
        let mut l = logs.weight[k];
        for d in 0..DIMS {
            let mut z = (x[d] - means[k][d]) / sds[k][d];
            // One-sided where only one direction is evidence against the class: a black stone
            // darker than its class is still black, a white one brighter still white.
            if (k == BLACK && d <= 1 && z < 0.0) || (k == WHITE && d == BRIGHTNESS && z > 0.0) {
                z = 0.0;
            }
            // Student-like tails: one wild colour or brightness value (glare, a shadow) must not
            // be decisive. Gaussian tails where physics is strict: visible lines rule a stone
            // out, a black stone is dark and a white one bright whatever the light.
            l += if d == LINES || (d == BRIGHTNESS && k != 0) { -0.5 * z * z } else { -2.0 * (1.0 + z * z / 3.0).ln() }
                - logs.sd[k][d];
        }
        logp[k] = l / temperature;
    }
    let max = logp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut p = [0.0; 3];
    let mut sum = 0.0;
    for k in 0..3 {
        p[k] = (logp[k] - max).exp();
        sum += p[k];
    }
    for v in &mut p {
        *v /= sum;
    }
    let mut sorted = logp;
    sorted.sort_by(|a, b| b.total_cmp(a));
    (p, sorted[0] - sorted[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader_model::ReaderModel;

    /// A light wood board's colour, as the default rendered hall shows it.
    const WOOD: [f32; 3] = [196.0, 158.0, 105.0];
    /// A white paper sheet's colour, as `board/paper` shows it.
    const WHITE_SHEET: [f32; 3] = [229.0, 225.0, 207.0];

    /// A point with the given brightness and colour (neutral, green/red) and lines.
    fn point(brightness: f32, neutral: f32, green_red: f32, lines: f32) -> PointFeatures {
        PointFeatures {
            brightness,
            dark_tail: brightness - 0.15,
            neutral,
            green_red,
            lines,
            luma: 120.0,
            valid: true,
            ..Default::default()
        }
    }

    /// A crowded frame: rows 0–5 black, rows 6–11 white, the rest bare board, as on a
    /// goban-watcher end position under a blue lamp: bare board whose colour features stray
    /// `scatter` either way (a deterministic saw-tooth; one channel of the wood is only a few
    /// levels), faint lines, and white stones only a little brighter than the board.
    fn crowded_frame(scatter: f32, white: f32, lines: f32) -> Vec<[PointFeatures; BOARD_LINES]> {
        let mut features = vec![[PointFeatures::default(); BOARD_LINES]; BOARD_LINES];
        for (r, row) in features.iter_mut().enumerate() {
            for (c, f) in row.iter_mut().enumerate() {
                let k = (r * BOARD_LINES + c) as f32;
                let saw = |period: f32| 2.0 * ((k * 0.618 / period).fract() - 0.5);
                *f = match r {
                    0..=5 => point(-1.4 + 0.1 * saw(1.0), 0.6, 0.25, 0.02),
                    6..=11 => point(white + 0.1 * saw(1.0), 0.5, 0.22, -0.05),
                    _ => point(-0.02 + 0.08 * saw(1.0), scatter * saw(0.7), scatter * saw(0.9), lines),
                };
            }
        }
        features
    }

    /// Points read as another class than the frame's layout says.
    fn wrong_reads(classified: &Classified) -> usize {
        let mut wrong = 0;
        for r in 0..BOARD_LINES {
            for c in 0..BOARD_LINES {
                let expected = match r {
                    0..=5 => 1,
                    6..=11 => 2,
                    _ => 0,
                };
                let p = classified.posteriors[r][c];
                let read = (0..3).fold(0, |b, k| if p[k] > p[b] { k } else { b });
                wrong += usize::from(read != expected);
            }
        }
        wrong
    }

    /// A frame on a white paper sheet, as `board/paper` renders it: black stones in rows 0–5,
    /// white stones in rows 6–11 only a little brighter than the sheet and no greyer than it
    /// (lighter than the board throughout, no lines), bare sheet with clear printed lines.
    fn white_sheet_frame() -> Vec<[PointFeatures; BOARD_LINES]> {
        let feature = |brightness: f32, dark_tail: f32, neutral: f32, green_red: f32, lines: f32| PointFeatures {
            brightness,
            dark_tail,
            neutral,
            green_red,
            lines,
            luma: 230.0,
            valid: true,
            ..Default::default()
        };
        let mut features = vec![[PointFeatures::default(); BOARD_LINES]; BOARD_LINES];
        for (r, row) in features.iter_mut().enumerate() {
            for (c, f) in row.iter_mut().enumerate() {
                let k = (r * BOARD_LINES + c) as f32;
                let saw = 0.02 * 2.0 * ((k * 0.618).fract() - 0.5);
                *f = match r {
                    0..=5 => feature(-2.2 + saw, -2.4 + saw, 0.13, 0.02, 0.04),
                    6..=11 => feature(0.06 + saw, 0.03 + saw, 0.07 + saw, 0.01, -0.04 + saw),
                    _ => feature(-0.10 + saw, -0.31 + saw, -0.02 + saw, -0.01, 0.40 + saw),
                };
            }
        }
        features
    }

    /// On a white sheet the white stones are as grey as the board: the priors' white (grey
    /// against yellow wood) never reaches them and they read empty; started from the frame's own
    /// sure whites, every point reads right.
    #[test]
    fn white_stones_on_a_white_sheet_read_white() {
        let model = ReaderModel::embedded();
        let classified = classify(&white_sheet_frame(), &model.classes, WHITE_SHEET, 1.0);
        assert_eq!(wrong_reads(&classified), 0);
    }

    /// Yellow wood with a few white stones and a glare spot: the glare's bare points are lighter
    /// than the board and show no lines, like a white stone on a sheet. On wood the priors' white
    /// stands, so the glare stays off the white class; started from the frame's sure whites
    /// (glare and stones together) it would read white.
    #[test]
    fn glare_on_yellow_wood_does_not_become_the_frames_white() {
        let model = ReaderModel::embedded();
        let mut frame = white_sheet_frame();
        for (r, row) in frame.iter_mut().enumerate() {
            for (c, f) in row.iter_mut().enumerate() {
                match (r, c) {
                    // White stones on wood: brighter and much greyer than the board.
                    (6, 0..=3) => (f.brightness, f.dark_tail, f.neutral, f.green_red) = (0.36, 0.33, 0.53, 0.20),
                    // The rest of rows 6–11: bare wood under glare, as bright as the board around
                    // it, its lines washed out.
                    (6..=11, _) => {
                        (f.brightness, f.dark_tail, f.neutral, f.green_red, f.lines) = (0.01, 0.01, 0.0, 0.0, 0.01)
                    }
                    _ => {}
                }
            }
        }
        let glare_read_white = |board: [f32; 3]| {
            let classified = classify(&frame, &model.classes, board, 1.0);
            (6..=11)
                .flat_map(|r| (0..BOARD_LINES).map(move |c| (r, c)))
                .filter(|&(r, c)| !(r == 6 && c <= 3))
                .filter(|&(r, c)| {
                    let p = classified.posteriors[r][c];
                    p[2] > p[0] && p[2] > p[1]
                })
                .count()
        };
        assert_eq!(glare_read_white(WOOD), 0);
        assert!(glare_read_white(WHITE_SHEET) > 50, "the sure-white start does take the glare");
    }

    #[test]
    fn white_light_leaves_the_colour_spreads_as_the_priors_have_them() {
        let model = ReaderModel::embedded();
        let features = crowded_frame(0.01, 0.4, 0.1);
        let points: Vec<(usize, usize, [f64; DIMS])> = features
            .iter()
            .enumerate()
            .flat_map(|(r, row)| row.iter().enumerate().map(move |(c, f)| (r, c, feature_vector(f))))
            .collect();
        assert_eq!(colour_noise_excess(&points, &model.classes[0]), [0.0; DIMS]);
    }

    /// Bare board whose colour strays ±0.5 (as under a blue lamp), with faint lines, beside
    /// white stones only 1.2× its brightness: read empty by its brightness once the frame's own
    /// colour scatter is measured; with the priors' white-light colour spreads a tenth of the
    /// board reads as stones.
    #[test]
    fn bare_board_under_a_strong_cast_reads_empty_by_brightness() {
        let model = ReaderModel::embedded();
        let frame = crowded_frame(0.5, 0.2, 0.03);
        assert_eq!(wrong_reads(&classify_with(&frame, &model.classes, WOOD, 1.0, true)), 0);
        assert!(wrong_reads(&classify_with(&frame, &model.classes, WOOD, 1.0, false)) > 20);
    }
}
