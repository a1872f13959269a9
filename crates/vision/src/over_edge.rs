//! Hands that reach only over the board's edge: what lies *across* the edge. Such a hand hides
//! too few cell centres for the cell test and is skin-, sleeve- or shadow-coloured, but beyond
//! the edge the table departs from its typical look all along the arm and its shadow, and where
//! the hand lies over the wood, the margin between the first line and the board's physical edge
//! departs in chroma (a shadow changes brightness, not the log ratios), or the board's edge itself
//! is hidden (the step from margin wood to table is gone: something lies across it). The margin
//! is judged just inside the edge measured on this frame, so that its samples never land on the
//! table beside the board (a bowl there is no hand). The run's lengths and departure are
//! weighed by a fitted model (`OcclusionModel.edge`). Where the edge's step is measured whole
//! beyond a first-line point, nothing on that point reaches over the edge ([`EdgeScan`]).

use image::RgbImage;
use tengen_rules::BOARD_LINES;

use crate::features::median;
use crate::geometry::GridGeometry;
use crate::rectify::{bilinear, CameraFoot};

/// Positions along an edge, a quarter spacing apart from the first to the last line.
const POSITION_STEP: f64 = 0.25;
/// Positions per edge.
const POSITIONS: usize = 73;
/// The board's edge is searched between these depths outside the first line, in spacings (a
/// priori: boards have margins of about 0.5–1.2 spacings; 2 leaves room for a grid a little off).
const EDGE_SEARCH: (f64, f64) = (0.3, 2.0);
/// Depth step of the edge search, in spacings.
const EDGE_SEARCH_STEP: f64 = 0.02;
/// Half width of the windows compared on either side of a candidate edge, in spacings.
const EDGE_WINDOW: f64 = 0.1;
/// The margin is judged no nearer the first line than this (a line's width and blur) ...
const MARGIN_START: f64 = 0.25;
/// ... and no nearer the measured edge than this (the edge's own blur and the search's step).
const EDGE_GUARD: f64 = 0.12;
/// Samples across the margin, just inside the edge (whatever crosses the edge covers the margin
/// there, however short of the first line it stops) ...
const MARGIN_SAMPLES: usize = 2;
/// ... spread over this depth (two samples, so that one noisy pixel is not a hand).
const MARGIN_SPAN: f64 = 0.1;
/// Samples outwards past the edge (and past where a first-line stone's top can reach) ...
const OUTER_SAMPLES: usize = 9;
/// ... this far apart, in spacings.
const OUTER_STEP: f64 = 0.15;
/// How far a first-line stone reaches outwards from its point, before its top's lean (radius
/// 0.48, 0.1 off its point, 0.1 blur).
const STONE_REACH: f64 = 0.68;
/// A go stone's thickness, in grid spacings.
const STONE_THICKNESS: f64 = 0.42;
/// A first-line stone hides the margin along the edge this far from its point (radius, off
/// its point and blur).
const STONE_ALONG: f64 = 0.6;
/// The edge is taken only when at least this share of its measured positions lie within
/// `EDGE_WINDOW` of their median (a priori: a hand or a bowl crosses less than half an edge; a
/// grid placed among the stones, whose steps are stones' rims at any depth, fails it) ...
const EDGE_AGREE_SHARE: f64 = 0.5;
/// ... and at least this many positions were measured (one or two agree by chance).
const EDGE_MIN_POSITIONS: usize = 3;
/// Where a first-line stone's top shows more than this far from its point (spacings, either
/// way), the view is steep there and the reader's "empty" on a first-line point is no proof
/// that its margin is bare (a priori: a stone's radius; the disc the reader samples at the
/// point then misses the stone's top altogether, and at 55–60° first-line white stones are read
/// empty), so the margin there is not judged.
const STEEP_LEAN: f64 = 0.48;
/// A table board's greatest thickness, in spacings (a priori: 60 mm, the thickest table goban,
/// over a 22 mm spacing). On the near side the board's side face shows below its edge as far
/// as a point this deep projects, so the samples beyond the edge start past it.
const BOARD_THICKNESS: f64 = 2.7;
/// Robust-spread floors of the log colour: chroma (ln r/g, ln b/g) and ln luminance (a priori:
/// JPEG and sensor noise on a smooth surface).
const SPREAD_FLOOR: [f32; 3] = [0.03, 0.03, 0.05];
/// A sample departs from its edge's typical colour at the same depth beyond this many spreads.
const DEPART: f32 = 3.0;
/// The board's edge counts as hidden at a position where its step (log colour, either side of
/// the measured edge) is below this share of the step along its own stretch of the edge (a
/// priori: most of the step is gone). A shadow scales both sides alike and leaves the log step
/// whole, a first-line stone ends inside the edge and leaves the table beside it, but skin or a
/// sleeve across the edge covers both sides. How little of the step is left is the edge model's
/// to weigh (the least share over the run, `EdgeRun::least_share`), not this gate's. Also where
/// the edge counts as whole beyond a crossed point (`EdgeScan::edge_whole_beyond`).
const HIDDEN_STEP_SHARE: f32 = 0.5;
/// The step a position is compared with: the median over this many nearest positions of the
/// same edge whose margin is free and whose table beyond does not depart (a priori: two
/// spacings' worth of positions; the light along an edge changes over a few spacings, fading
/// towards a corner, while a hand crosses it over one to four).
const LOCAL_STEP_POSITIONS: usize = 8;
/// Fewest such positions on an edge for its step to be a reference at all.
const LOCAL_STEP_MIN: usize = 3;
/// The step share's floor (a priori: a step below a twentieth of the edge's is as good as none,
/// the windows' noise).
pub const STEP_SHARE_FLOOR: f32 = 0.05;
/// A margin sample darker than this mean level (of 255) gives no chroma (a priori from the
/// sensor: with about 2 levels of sensor and JPEG noise per channel, the log ratio of two
/// channels near level v wanders by about 2√2 / v, which below 32 levels exceeds three of the
/// chroma spread floors, 0.09: its "colour" there is noise).
const CHROMA_LUMA_FLOOR: f32 = 32.0;

/// The longest stretch of an edge where something runs across it: beyond the edge the table
/// departs from its typical look all along (an arm, its shadow), and somewhere along it the
/// margin inside the edge departs in chroma or the edge itself is hidden (the hand itself over
/// the wood).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EdgeRun {
    /// Its length along the edge, in spacings (0 when none).
    pub length: f32,
    /// How much of it has the margin departing in chroma or the edge hidden, in spacings.
    pub margin: f32,
    /// Median over those positions of the margin's chroma departure (in spreads; the least
    /// departing margin sample of each position).
    pub chroma: f32,
    /// The least share of its own stretch's edge step left over the run (1 when no position of
    /// it measured one; capped at 1, floored at `STEP_SHARE_FLOOR`): how far the edge is hidden.
    pub least_share: f32,
}

/// The log colour (ln r/g, ln b/g, ln luminance) of an RGB sample; NaN outside the image.
fn log_colour(v: [f32; 3]) -> [f32; 3] {
    if v.iter().any(|c| !c.is_finite()) {
        return [f32::NAN; 3];
    }
    let [r, g, b] = v.map(|c| c.max(1.0));
    [(r / g).ln(), (b / g).ln(), ((r + g + b) / 3.0).ln()]
}

/// One edge of the board: where its positions lie and which way is out.
struct Side {
    /// Board position of the first-line point at position `t` (0–18 along the edge).
    at: fn(f64) -> [f64; 2],
    /// Outward unit direction in board coordinates.
    out: [f64; 2],
    /// Whether a first-line point (col, row) lies on this edge, and its position along it.
    along: fn(usize, usize) -> Option<usize>,
}

const LAST: usize = BOARD_LINES - 1;

const SIDES: [Side; 4] = [
    Side { at: |t| [t, 0.0], out: [0.0, -1.0], along: |c, r| (r == 0).then_some(c) },
    Side { at: |t| [t, LAST as f64], out: [0.0, 1.0], along: |c, r| (r == LAST).then_some(c) },
    Side { at: |t| [0.0, t], out: [-1.0, 0.0], along: |c, r| (c == 0).then_some(r) },
    Side { at: |t| [LAST as f64, t], out: [1.0, 0.0], along: |c, r| (c == LAST).then_some(r) },
];

/// What the scan of the four edges found: the longest run across any of them, and per edge and
/// position how much of the board's edge step is left.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeScan {
    /// The longest run across any edge.
    pub run: EdgeRun,
    /// Per side (in the order of `SIDES`) and position, the edge's step over the step of its own
    /// stretch; NaN where the edge or its stretch's step was not measured.
    shares: [Vec<f32>; 4],
    /// Per side, the board's edge as a depth outside the first line (spacings; NaN where not
    /// measured).
    depths: [f64; 4],
}

impl EdgeScan {
    /// Whether the board's edge is measured whole beyond the first-line point (col, row): along
    /// the edge, as far either side of the point as the edge lies beyond it (fingers reaching
    /// the point at up to 45° from straight in cross the edge within that), every measured step
    /// keeps at least `HIDDEN_STEP_SHARE` of its stretch's, and some were measured. Whatever
    /// lies on such a point ends inside the board's edge: it does not reach over it (lit wood
    /// read white, a stone), however bright it runs on towards the edge. A corner point needs
    /// this on each of its two edges. `false` for a point off the first line.
    pub fn edge_whole_beyond(&self, col: usize, row: usize) -> bool {
        let edges: Vec<bool> = SIDES
            .iter()
            .zip(self.shares.iter().zip(&self.depths))
            .filter_map(|(side, (share, &depth))| {
                let at = (side.along)(col, row)? as f64;
                let reach = if depth.is_finite() { depth.max(0.0) } else { 0.0 };
                let first = ((at - reach) / POSITION_STEP).floor().max(0.0) as usize;
                let last = (((at + reach) / POSITION_STEP).ceil() as usize).min(POSITIONS - 1);
                let near: Vec<f32> = share[first..=last].iter().copied().filter(|v| v.is_finite()).collect();
                Some(!near.is_empty() && near.iter().all(|&v| v >= HIDDEN_STEP_SHARE))
            })
            .collect();
        !edges.is_empty() && edges.iter().all(|&whole| whole)
    }
}

/// Scans the four edges (see [`EdgeRun`] and [`EdgeScan`]). `stones` is `[row][col]`, the
/// points read as stones: where a first-line stone lies the margin is its, not the board's.
pub fn scan_edges(
    image: &RgbImage,
    geometry: &GridGeometry,
    camera: Option<&CameraFoot>,
    stones: &[[bool; BOARD_LINES]],
) -> EdgeScan {
    let mut best = EdgeRun::default();
    let mut depths = [f64::NAN; 4];
    let shares = std::array::from_fn(|i| {
        let (run, share, depth) = side_run(image, geometry, camera, stones, &SIDES[i]);
        if run.length > best.length || (run.length == best.length && run.chroma > best.chroma) {
            best = run;
        }
        depths[i] = depth;
        share
    });
    EdgeScan { run: best, shares, depths }
}

/// The colour sampled at depth `d` outside the first line at position `t` of `side`.
fn sample(image: &RgbImage, geometry: &GridGeometry, side: &Side, t: f64, d: f64) -> [f32; 3] {
    let p = (side.at)(t);
    let q = geometry.project(p[0] + side.out[0] * d, p[1] + side.out[1] * d);
    log_colour(bilinear(image, q[0], q[1]))
}

/// The board's physical edge along `side`, as a depth outside the first line (spacings): per
/// position without a first-line stone, the depth of the strongest colour step between two
/// windows; the median over the positions (a hand over a few of them does not move it). `None`
/// when no position sees the step inside the image.
fn measured_edge(image: &RgbImage, geometry: &GridGeometry, side: &Side, open: &[bool]) -> Option<f64> {
    let n = ((EDGE_SEARCH.1 - EDGE_SEARCH.0 + 2.0 * EDGE_WINDOW) / EDGE_SEARCH_STEP).round() as usize + 1;
    let w = (EDGE_WINDOW / EDGE_SEARCH_STEP).round() as usize;
    let mut depths: Vec<f32> = Vec::new();
    for (k, _) in open.iter().enumerate().filter(|(k, o)| **o && k % 2 == 0) {
        let t = k as f64 * POSITION_STEP;
        let profile: Vec<[f32; 3]> = (0..n)
            .map(|i| sample(image, geometry, side, t, EDGE_SEARCH.0 - EDGE_WINDOW + i as f64 * EDGE_SEARCH_STEP))
            .collect();
        if profile.iter().any(|c| !c[2].is_finite()) {
            continue;
        }
        let mean = |a: usize, b: usize| {
            let mut m = [0.0f32; 3];
            for c in &profile[a..b] {
                for (mm, v) in m.iter_mut().zip(c) {
                    *mm += v;
                }
            }
            m.map(|v| v / (b - a) as f32)
        };
        let best = (w..n - w)
            .map(|i| {
                let (a, b) = (mean(i - w, i), mean(i, i + w));
                let step: f32 = a.iter().zip(&b).map(|(x, y)| (x - y).powi(2)).sum();
                (step, i)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, i)) = best {
            depths.push((EDGE_SEARCH.0 - EDGE_WINDOW + i as f64 * EDGE_SEARCH_STEP) as f32);
        }
    }
    let d = median(&mut depths.clone());
    let agree = depths.iter().filter(|x| (**x - d).abs() <= EDGE_WINDOW as f32 + 1e-4).count();
    let agreed = depths.len() >= EDGE_MIN_POSITIONS && agree as f64 >= EDGE_AGREE_SHARE * depths.len() as f64;
    (d.is_finite() && agreed).then_some(f64::from(d))
}

/// The board's edge step at position `t` of `side`: the distance in log colour between the means
/// of the two windows either side of the measured edge at depth `edge` (NaN outside the image).
fn edge_step(image: &RgbImage, geometry: &GridGeometry, side: &Side, t: f64, edge: f64) -> f32 {
    let n = (EDGE_WINDOW / EDGE_SEARCH_STEP).round() as usize;
    let window = |sign: f64| {
        let mut m = [0.0f32; 3];
        for i in 0..n {
            let c = sample(image, geometry, side, t, edge + sign * (i as f64 + 0.5) * EDGE_SEARCH_STEP);
            for (mm, v) in m.iter_mut().zip(c) {
                *mm += v / n as f32;
            }
        }
        m
    };
    let (inside, outside) = (window(-1.0), window(1.0));
    inside.iter().zip(&outside).map(|(a, b)| (a - b).powi(2)).sum::<f32>().sqrt()
}

/// Median and robust spread (1.4826 × MAD, floored) of each channel over the finite values.
fn typical(values: impl Iterator<Item = [f32; 3]>) -> ([f32; 3], [f32; 3]) {
    let v: Vec<[f32; 3]> = values.filter(|c| c.iter().all(|x| x.is_finite())).collect();
    let mut centre = [f32::NAN; 3];
    let mut spread = [f32::NAN; 3];
    for ch in 0..3 {
        let mut xs: Vec<f32> = v.iter().map(|c| c[ch]).collect();
        let m = median(&mut xs);
        let mut dev: Vec<f32> = xs.iter().map(|x| (x - m).abs()).collect();
        centre[ch] = m;
        spread[ch] = (1.4826 * median(&mut dev)).max(SPREAD_FLOOR[ch]);
    }
    (centre, spread)
}

/// Departure of `x` from `centre` in spreads, the largest over `channels`; NaN when unknown.
fn departure(x: [f32; 3], (centre, spread): &([f32; 3], [f32; 3]), channels: std::ops::Range<usize>) -> f32 {
    let mut largest = 0.0f32;
    for c in channels {
        let d = (x[c] - centre[c]).abs() / spread[c];
        if d.is_nan() {
            return f32::NAN;
        }
        largest = largest.max(d);
    }
    largest
}

/// The longest run along one side, each position's step share (NaN where not measured) and the
/// depth of the board's edge (NaN where not measured).
fn side_run(
    image: &RgbImage,
    geometry: &GridGeometry,
    camera: Option<&CameraFoot>,
    stones: &[[bool; BOARD_LINES]],
    side: &Side,
) -> (EdgeRun, Vec<f32>, f64) {
    // Positions whose margin no first-line stone reaches.
    let mut stone_at = Vec::new();
    for (row, line) in stones.iter().enumerate() {
        for (col, &s) in line.iter().enumerate() {
            if let Some(a) = (side.along)(col, row).filter(|_| s) {
                stone_at.push(a as f64);
            }
        }
    }
    let free: Vec<bool> = (0..POSITIONS)
        .map(|k| {
            let t = k as f64 * POSITION_STEP;
            stone_at.iter().all(|&a| (a - t).abs() > STONE_ALONG)
        })
        .collect();
    let Some(edge) = measured_edge(image, geometry, side, &free) else {
        return (EdgeRun::default(), vec![f32::NAN; POSITIONS], f64::NAN);
    };
    let margin_end = edge - EDGE_GUARD;
    let margin_open = margin_end - MARGIN_SPAN >= MARGIN_START;
    let margin_depths: Vec<f64> =
        (0..MARGIN_SAMPLES).map(|i| margin_end - MARGIN_SPAN * i as f64 / (MARGIN_SAMPLES - 1) as f64).collect();
    // How far a point raised by `h` (negative: below the board's surface) shows outwards.
    let outward = |t: f64, h: f64| {
        let p = (side.at)(t);
        camera.map_or(0.0, |cam| {
            let q = cam.raised(p, h);
            (q[0] - p[0]) * side.out[0] + (q[1] - p[1]) * side.out[1]
        })
    };
    // Outer samples start past the edge and its side face on the near side, and past the
    // farthest a first-line stone's top leans on the far side.
    let outer_start = |t: f64| {
        let lean = outward(t, STONE_THICKNESS).max(0.0);
        let face = outward(t, -BOARD_THICKNESS).max(0.0);
        (edge + EDGE_GUARD + face.min(3.0)).max(STONE_REACH + lean.min(2.0))
    };
    // Positions where the view is steep: their margin is not judged.
    let steep: Vec<bool> =
        (0..POSITIONS).map(|k| outward(k as f64 * POSITION_STEP, STONE_THICKNESS).abs() > STEEP_LEAN).collect();
    let outer: Vec<Vec<[f32; 3]>> = (0..POSITIONS)
        .map(|k| {
            let t = k as f64 * POSITION_STEP;
            let start = outer_start(t);
            (0..OUTER_SAMPLES).map(|i| sample(image, geometry, side, t, start + i as f64 * OUTER_STEP)).collect()
        })
        .collect();
    let margin: Vec<Vec<[f32; 3]>> = (0..POSITIONS)
        .map(|k| {
            let t = k as f64 * POSITION_STEP;
            margin_depths.iter().map(|&d| sample(image, geometry, side, t, d)).collect()
        })
        .collect();
    let outer_typical: Vec<_> = (0..OUTER_SAMPLES).map(|i| typical(outer.iter().map(|o| o[i]))).collect();
    // A margin sample too dark for its log ratios to be a colour gives no chroma.
    let dark = CHROMA_LUMA_FLOOR.ln();
    let margin: Vec<Vec<[f32; 3]>> = margin
        .into_iter()
        .map(|m| m.into_iter().map(|c| if c[2] < dark { [f32::NAN; 3] } else { c }).collect())
        .collect();
    let margin_typical: Vec<_> = (0..MARGIN_SAMPLES)
        .map(|i| typical(margin.iter().zip(&free).filter(|(_, f)| **f).map(|(m, _)| m[i])))
        .collect();
    // Whether the table beyond the edge departs at each position (all outer samples but one,
    // never the innermost).
    let outer_departs: Vec<bool> = outer
        .iter()
        .map(|o| {
            let d: Vec<f32> = o.iter().zip(&outer_typical).map(|(x, t)| departure(*x, t, 0..3)).collect();
            let departing = d.iter().filter(|v| **v > DEPART).count();
            d[0] > DEPART && departing + 1 >= OUTER_SAMPLES
        })
        .collect();
    // Each position's step against the step of its own stretch of the edge, where nothing lies
    // across it; where the step is mostly gone, something covers the edge, whatever the reader
    // made of the first-line point beside it (fingers over the first line read as stones).
    let steps: Vec<f32> =
        (0..POSITIONS).map(|k| edge_step(image, geometry, side, k as f64 * POSITION_STEP, edge)).collect();
    let undisturbed: Vec<usize> =
        (0..POSITIONS).filter(|&k| free[k] && !outer_departs[k] && steps[k].is_finite()).collect();
    let share: Vec<f32> = (0..POSITIONS)
        .map(|k| {
            if undisturbed.len() < LOCAL_STEP_MIN || !steps[k].is_finite() {
                return f32::NAN;
            }
            let mut near = undisturbed.clone();
            near.sort_by_key(|&j| j.abs_diff(k));
            let mut local: Vec<f32> = near.iter().take(LOCAL_STEP_POSITIONS).map(|&j| steps[j]).collect();
            let reference = median(&mut local);
            if reference > 0.0 {
                steps[k] / reference
            } else {
                f32::NAN
            }
        })
        .collect();
    // Per position: whether the table departs there, and where the margin is open and departs
    // in chroma, or the edge is hidden, how far the margin departs in chroma (the least
    // departing of its samples; 0 where unknown).
    let judged: Vec<(bool, Option<f32>)> = (0..POSITIONS)
        .map(|k| {
            if !outer_departs[k] {
                return (false, None);
            }
            if steep[k] {
                return (true, None);
            }
            let chroma: Vec<f32> = margin[k].iter().zip(&margin_typical).map(|(x, t)| departure(*x, t, 0..2)).collect();
            let chroma = if chroma.iter().any(|v| v.is_nan()) {
                f32::NAN
            } else {
                chroma.into_iter().fold(f32::INFINITY, f32::min)
            };
            let margin_departs = margin_open && free[k] && chroma > DEPART;
            let hidden = share[k] < HIDDEN_STEP_SHARE;
            (true, (margin_departs || hidden).then_some(if chroma.is_finite() { chroma } else { 0.0 }))
        })
        .collect();
    let mut best = EdgeRun::default();
    let mut k = 0;
    while k < POSITIONS {
        if !judged[k].0 {
            k += 1;
            continue;
        }
        let start = k;
        while k < POSITIONS && judged[k].0 {
            k += 1;
        }
        let mut chroma: Vec<f32> = judged[start..k].iter().filter_map(|j| j.1).collect();
        if chroma.is_empty() {
            continue;
        }
        let least_share = share[start..k].iter().filter(|v| v.is_finite()).fold(1.0f32, |a, &b| a.min(b));
        let run = EdgeRun {
            length: ((k - start) as f64 * POSITION_STEP) as f32,
            margin: (chroma.len() as f64 * POSITION_STEP) as f32,
            chroma: median(&mut chroma),
            least_share: least_share.max(STEP_SHARE_FLOOR),
        };
        if run.length > best.length || (run.length == best.length && run.chroma > best.chroma) {
            best = run;
        }
    }
    (best, share, edge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::LensDistortion;
    use image::Rgb;

    /// A top-down board, 20 pixels per spacing, with a margin of `margin` spacings and 60
    /// pixels of table around it; `paint` may cover any place (board coordinates).
    fn scene(margin: f64, paint: impl Fn(f64, f64) -> Option<[u8; 3]>) -> (RgbImage, GridGeometry) {
        let (px, border) = (20.0, 60.0 + margin * 20.0);
        let size = (18.0 * px + 2.0 * border) as u32;
        let image = RgbImage::from_fn(size, size, |x, y| {
            let (col, row) = ((f64::from(x) - border) / px, (f64::from(y) - border) / px);
            let board = (-margin..=18.0 + margin).contains(&col) && (-margin..=18.0 + margin).contains(&row);
            let on_line = board
                && (0.0..=18.0).contains(&col)
                && (0.0..=18.0).contains(&row)
                && ((col - col.round()).abs() < 0.05 || (row - row.round()).abs() < 0.05);
            Rgb(paint(col, row).unwrap_or(if on_line {
                [60, 45, 30]
            } else if board {
                [200, 160, 100]
            } else {
                [60, 90, 70]
            }))
        });
        let geometry = GridGeometry {
            homography: [[px, 0.0, border], [0.0, px, border], [0.0, 0.0, 1.0]],
            lens: LensDistortion::none(size, size),
        };
        (image, geometry)
    }

    fn no_stones() -> Vec<[bool; BOARD_LINES]> {
        vec![[false; BOARD_LINES]; BOARD_LINES]
    }

    #[test]
    fn the_edge_is_measured_where_the_wood_meets_the_table() {
        for margin in [0.7, 1.1] {
            let (image, geometry) = scene(margin, |_, _| None);
            let free = vec![true; POSITIONS];
            let edge = measured_edge(&image, &geometry, &SIDES[2], &free).expect("an edge");
            assert!((edge - margin).abs() < 0.08, "margin {margin}: edge at {edge}");
        }
    }

    #[test]
    fn an_edge_whose_positions_disagree_is_not_taken() {
        // Wood out to 0.5, 1.1 or 1.7 spacings by turns along the left edge (as where a grid
        // lies among the stones): no depth holds for half the positions.
        let (image, geometry) = scene(0.5, |col, row| {
            let reach = 0.5 + 0.6 * (row.rem_euclid(1.5) / 0.5).floor();
            (col < -0.5 && col >= -reach && (0.0..=18.0).contains(&row)).then_some([200, 160, 100])
        });
        let free = vec![true; POSITIONS];
        assert_eq!(measured_edge(&image, &geometry, &SIDES[2], &free), None);
        let (image, geometry) = scene(0.5, |_, _| None);
        assert!(measured_edge(&image, &geometry, &SIDES[2], &free).is_some());
    }

    #[test]
    fn a_hand_over_the_margin_and_table_is_a_run_and_a_clean_board_has_none() {
        let (image, geometry) = scene(0.7, |_, _| None);
        assert_eq!(scan_edges(&image, &geometry, None, &no_stones()).run.length, 0.0);
        // Skin over rows 5–8 from the left, its tip 0.3 spacing outside the first line.
        let (image, geometry) =
            scene(0.7, |col, row| (col < -0.3 && (5.0..=8.0).contains(&row)).then_some([215, 160, 140]));
        let run = scan_edges(&image, &geometry, None, &no_stones()).run;
        assert!((2.5..=3.5).contains(&run.length), "{run:?}");
        assert!(run.chroma > DEPART && (2.5..=3.5).contains(&run.margin), "{run:?}");
    }

    #[test]
    fn an_object_on_the_table_beside_the_edge_is_no_run() {
        // A bowl on the table beside the left edge, its foot touching the board's edge: the
        // table beyond changes, the margin does not.
        let (image, geometry) = scene(0.7, |col, row| {
            let d = ((col + 2.5).powi(2) + (row - 9.0).powi(2)).sqrt();
            (col < -0.7 && d < 1.8).then_some([30, 30, 35])
        });
        assert_eq!(scan_edges(&image, &geometry, None, &no_stones()).run.length, 0.0);
    }

    #[test]
    fn first_line_stones_leave_their_margin_out() {
        // White stones along the left edge, rows 5–8, and a bowl beyond them: no open margin.
        let (image, geometry) = scene(0.7, |col, row| {
            let stone = (5.0..=8.0).contains(&row.round()) && (col.powi(2) + (row - row.round()).powi(2)).sqrt() < 0.48;
            let bowl = col < -0.7 && (4.0..=9.0).contains(&row);
            if stone {
                Some([230, 230, 232])
            } else if bowl {
                Some([30, 30, 35])
            } else {
                None
            }
        });
        let mut stones = no_stones();
        for row in stones.iter_mut().take(9).skip(5) {
            row[0] = true;
        }
        assert_eq!(scan_edges(&image, &geometry, None, &stones).run.length, 0.0);
    }

    #[test]
    fn fingers_over_the_first_line_read_as_stones_still_cross_the_edge() {
        // Skin over rows 5–8 from the left, its tips 0.3 spacing inside the first line, where
        // the reader takes the covered first-line points for stones: no margin there is free,
        // but the board's edge under the fingers is hidden.
        let (image, geometry) =
            scene(0.7, |col, row| (col < 0.3 && (5.0..=8.0).contains(&row)).then_some([215, 160, 140]));
        let mut stones = no_stones();
        for row in stones.iter_mut().take(9).skip(5) {
            row[0] = true;
        }
        let run = scan_edges(&image, &geometry, None, &stones).run;
        assert!((2.5..=3.5).contains(&run.length), "{run:?}");
        assert!((2.0..=3.5).contains(&run.margin), "{run:?}");
    }

    #[test]
    fn the_edge_is_whole_beyond_lit_wood_and_hidden_beyond_fingers() {
        // Pale lit wood over the first-line points of rows 5–8 on the left, out to the board's
        // edge and no further; skin over rows 11–14 running on across the edge onto the table.
        let (image, geometry) = scene(0.7, |col, row| {
            let lit = (-0.7..0.4).contains(&col) && (4.6..=8.4).contains(&row);
            let skin = col < 0.3 && (10.6..=14.4).contains(&row);
            if skin {
                Some([215, 160, 140])
            } else if lit {
                Some([235, 225, 200])
            } else {
                None
            }
        });
        let scan = scan_edges(&image, &geometry, None, &no_stones());
        for row in 5..=8 {
            assert!(scan.edge_whole_beyond(0, row), "lit wood, row {row}");
        }
        for row in 11..=14 {
            assert!(!scan.edge_whole_beyond(0, row), "fingers, row {row}");
        }
        // Off the first line, nothing is said; on an edge never measured, neither.
        assert!(!scan.edge_whole_beyond(5, 5));
        let (dark, geometry) = scene(0.7, |col, _| (col < 0.0).then_some([200, 160, 100]));
        assert!(!scan_edges(&dark, &geometry, None, &no_stones()).edge_whole_beyond(0, 9));
    }

    #[test]
    fn a_near_black_margin_gives_no_chroma() {
        // A near-black board (a few levels, whose log ratios are noise) with a bowl on the table
        // beside rows 5–8 and the margin's few levels tinted there: no colour crosses the edge,
        // and its step to the table stays whole.
        let (image, geometry) = scene(0.7, |col, row| {
            let beside = (5.0..=8.0).contains(&row);
            if col < -0.7 {
                beside.then_some([30, 30, 35])
            } else if (-0.7..=18.7).contains(&row) {
                Some(if beside && col < 0.0 { [2, 8, 3] } else { [8, 4, 3] })
            } else {
                None
            }
        });
        assert_eq!(scan_edges(&image, &geometry, None, &no_stones()).run.length, 0.0);
    }
}
