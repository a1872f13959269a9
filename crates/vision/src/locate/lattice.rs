//! First hypothesis of the grid from line evidence alone: Hough lines, two line families with
//! their vanishing points, a projective rectification that makes each family parallel and
//! axis-aligned, and a 19-tooth comb search for the spacing and extent of each family. The result
//! is a homography from board (column, row) to working-image pixels, good to a fraction of a cell.

use nalgebra::{Matrix3, Vector3};
use tengen_rules::BOARD_LINES;

use super::response::{LineResponse, Plane};
use crate::work::WorkMeter;

/// Hough angle bins over 180°.
const THETA_BINS: usize = 360;
/// Pixels vote only for angles within this many bins of their own normal estimate (±12°).
const VOTE_SPREAD_BINS: i32 = 24;
/// Hough peaks kept for family and vanishing-point analysis.
const MAX_PEAKS: usize = 160;
/// A line agrees with a vanishing point when its direction is off by less than this (radians).
const VP_ANGLE_TOLERANCE: f64 = 0.02;
/// Pixels whose orientation is this uncertain (crossings, blobs, noise) do not vote.
const MIN_COHERENCE: f32 = 0.3;
/// Faintest Weber contrast taken as line evidence (faint lines of blurred frames reach 0.03).
const MIN_LINE_STRENGTH: f32 = 0.02;
/// A straightness sample counts as present at this fraction of the pixel's own strength.
const STRAIGHT_FRACTION: f32 = 0.35;
/// Straightness samples (of 8) that must be present.
const STRAIGHT_MIN_PRESENT: usize = 6;
/// Hough peaks must reach this fraction of the strongest.
const PEAK_FLOOR: f32 = 0.15;
/// Fewer peaks than this above [`PEAK_FLOOR`] means one line dominates: look again above
/// [`LOW_PEAK_FLOOR`].
const MIN_PEAKS_BEFORE_RETRY: usize = 20;
/// The lower floor of that second look.
const LOW_PEAK_FLOOR: f32 = 0.04;
/// Angle clusters considered as line families (pairs among them are tried).
const MAX_ANGLE_PEAKS: usize = 4;
/// Bins of the rectified 1-D evidence histograms.
const HIST_BINS: usize = 1024;
/// Samples one comb search takes at most: spacings from 4 bins in half-bin steps, every offset,
/// 19 teeth.
const COMB_WORK: u64 = (2 * HIST_BINS / (BOARD_LINES - 1)) as u64 * HIST_BINS as u64 * BOARD_LINES as u64;

/// Fraction of the image's bright end a line's surroundings must reach in [`lit_pixels`]
/// (a priori: the refinement's `BOARD_BRIGHTNESS_FRACTION`, 0.45, with the image's bright end
/// standing in for the board's brightness, which is not known before a lattice is).
pub(crate) const LIT_FRACTION: f32 = 0.45;
/// Distance, in working pixels, at which a line's two sides are read.
const LIT_SIDE_PX: f32 = 3.0;

/// The image's bright end: its 90th brightness percentile (wood, white stones, paper).
pub(crate) fn bright_end(plane: &Plane) -> f32 {
    let mut hist = [0usize; 256];
    for &v in &plane.data {
        hist[(v.max(0.0) as usize).min(255)] += 1;
    }
    f32::from(top_tenth_level(&hist, plane.data.len()))
}

/// The level at which the brightest tenth of `total` samples, counted in `hist`, begins (0
/// when the histogram holds fewer).
pub(crate) fn top_tenth_level(hist: &[usize; 256], total: usize) -> u8 {
    let target = total / 10;
    let mut acc = 0;
    for (level, &n) in hist.iter().enumerate().rev() {
        acc += n;
        if acc >= target {
            return level as u8;
        }
    }
    0
}

/// A Hough line `x cosθ + y sinθ = ρ` in working pixels about the image centre.
#[derive(Debug, Clone, Copy)]
struct HoughLine {
    theta: f64,
    rho: f64,
    votes: f32,
}

/// A homogeneous line in normalised coordinates (origin at the image centre, unit = `norm`).
fn homogeneous(line: &HoughLine, norm: f64) -> Vector3<f64> {
    Vector3::new(line.theta.cos(), line.theta.sin(), -line.rho / norm)
}

/// The initial grid hypothesis and how convincing it was.
#[derive(Debug, Clone)]
pub(crate) struct LatticeGuess {
    /// Board (col, row, 1) → working pixels.
    pub homography: Matrix3<f64>,
    /// Comb evidence over background for the weaker family (≥ 1; larger is clearer).
    pub contrast: f64,
}

/// Why no lattice hypothesis could be formed.
#[derive(Debug, Clone)]
pub(crate) enum LatticeFailure {
    TooFewLines,
    NoTwoFamilies,
    NoVanishingPoint,
    NoRegularSpacing,
}

impl LatticeFailure {
    pub fn describe(&self) -> &'static str {
        match self {
            Self::TooFewLines => "too few straight dark lines",
            Self::NoTwoFamilies => "lines do not form two families",
            Self::NoVanishingPoint => "line families do not converge consistently",
            Self::NoRegularSpacing => "no 19 evenly spaced lines in each direction",
        }
    }
}

/// Lattice hypotheses, best first. Every stage is bounded by the working image's size; the work
/// is charged to `meter`, and when it refuses, the hypotheses found so far are returned (the
/// caller checks the meter).
pub(crate) fn guess(resp: &LineResponse, meter: &WorkMeter) -> Result<Vec<LatticeGuess>, LatticeFailure> {
    let (w, h) = (resp.strength.width, resp.strength.height);
    guess_from(&line_pixels(resp, meter), w, h, usize::MAX, meter)
}

/// The thin, straight line pixels of a line response (charged to `meter`).
pub(crate) fn line_pixels(resp: &LineResponse, meter: &WorkMeter) -> Vec<LinePixel> {
    let (w, h) = (resp.strength.width, resp.strength.height);
    let threshold = strength_threshold(resp);
    // Each candidate pixel costs up to 24 straightness samples.
    meter.charge(25 * (w * h) as u64);
    thin_line_pixels(resp, threshold)
}

/// The line pixels with a lit surface on at least one side: brighter than [`LIT_FRACTION`] of
/// the image's bright end, [`LIT_SIDE_PX`] across the line. A board's lines are drawn on light
/// wood; a dark table's grain is not.
pub(crate) fn lit_pixels(pixels: &[LinePixel], plane: &Plane) -> Vec<LinePixel> {
    let floor = LIT_FRACTION * bright_end(plane);
    pixels
        .iter()
        .filter(|p| {
            let (nx, ny) = (p.normal.cos() * LIT_SIDE_PX, p.normal.sin() * LIT_SIDE_PX);
            let side = |s: f32| plane.sample(f64::from(p.x + s * nx), f64::from(p.y + s * ny));
            side(1.0).max(side(-1.0)) >= floor
        })
        .copied()
        .collect()
}

/// Lattice hypotheses from line pixels of a `w`×`h` working image, trying at most
/// `max_family_pairs` pairs of line families (strongest first).
pub(crate) fn guess_from(
    pixels: &[LinePixel],
    w: usize,
    h: usize,
    max_family_pairs: usize,
    meter: &WorkMeter,
) -> Result<Vec<LatticeGuess>, LatticeFailure> {
    if pixels.len() < 200 {
        return Err(LatticeFailure::TooFewLines);
    }
    if !meter.charge(pixels.len() as u64 * (2 * VOTE_SPREAD_BINS as u64 + 1)) {
        return Err(LatticeFailure::TooFewLines);
    }
    let lines = hough_lines(pixels, w, h);
    if lines.len() < 8 {
        return Err(LatticeFailure::TooFewLines);
    }
    let centre = [w as f64 / 2.0, h as f64 / 2.0];
    let norm = (w.max(h) as f64) / 2.0;
    let mut family_pairs = families(&lines);
    family_pairs.truncate(max_family_pairs);
    if family_pairs.is_empty() {
        return Err(LatticeFailure::NoTwoFamilies);
    }
    let mut guesses = Vec::new();
    let mut last_failure = LatticeFailure::NoVanishingPoint;
    for (fam_a, fam_b) in family_pairs {
        // Vanishing points: pairs of up to 40 lines, each scored over its family; then the comb
        // over every line pixel and two fixed-size 1-D searches.
        let pairs_work = |n: usize| (n.min(40) * n.min(40) * n) as u64;
        if !meter.charge(pairs_work(fam_a.len()) + pairs_work(fam_b.len()) + pixels.len() as u64 + 2 * COMB_WORK) {
            break;
        }
        let (Some(v1), Some(v2)) = (vanishing_point(&fam_a, norm), vanishing_point(&fam_b, norm)) else {
            continue;
        };
        match comb_lattice(pixels, v1, v2, centre, norm) {
            Some(g) => guesses.push(g),
            None => last_failure = LatticeFailure::NoRegularSpacing,
        }
    }
    if guesses.is_empty() {
        return Err(last_failure);
    }
    guesses.sort_by(|a, b| b.contrast.total_cmp(&a.contrast));
    // Different angle clusters often yield the same lattice; keep one of each.
    let mut distinct: Vec<LatticeGuess> = Vec::new();
    for g in guesses {
        if !distinct.iter().any(|d| same_lattice(&d.homography, &g.homography)) {
            distinct.push(g);
        }
    }
    Ok(distinct)
}

/// True when two lattices put their four corners within a third of a cell of each other.
fn same_lattice(a: &Matrix3<f64>, b: &Matrix3<f64>) -> bool {
    let last = (BOARD_LINES - 1) as f64;
    let project = |h: &Matrix3<f64>, c: f64, r: f64| {
        let v = h * Vector3::new(c, r, 1.0);
        [v.x / v.z, v.y / v.z]
    };
    let cell = {
        let (p, q) = (project(a, 9.0, 9.0), project(a, 10.0, 9.0));
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt()
    };
    [(0.0, 0.0), (last, 0.0), (last, last), (0.0, last)].iter().all(|&(c, r)| {
        let (p, q) = (project(a, c, r), project(b, c, r));
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt() < cell / 3.0
    })
}

/// A line pixel: position, strength and normal angle.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinePixel {
    pub x: f32,
    pub y: f32,
    strength: f32,
    pub normal: f32,
}

fn strength_threshold(resp: &LineResponse) -> f32 {
    // The strongest ~12 % of pixels that have a line orientation, never below a faint absolute
    // contrast. Pixels without one (noise specks, crossings, blobs) would otherwise crowd the
    // faint lines of blurred frames out of the selection.
    let mut hist = [0usize; 256];
    for (i, &v) in resp.strength.data.iter().enumerate() {
        if v > 0.0 && resp.coherence(i) >= MIN_COHERENCE {
            hist[((v * 255.0) as usize).min(255)] += 1;
        }
    }
    let target = resp.strength.data.len() / 8;
    let mut acc = 0;
    let mut level = 255;
    while level > 0 {
        acc += hist[level];
        if acc >= target {
            break;
        }
        level -= 1;
    }
    (level as f32 / 255.0).max(MIN_LINE_STRENGTH)
}

/// Pixels above the threshold that are the maximum across their line (one pixel wide lines).
fn thin_line_pixels(resp: &LineResponse, threshold: f32) -> Vec<LinePixel> {
    let s = &resp.strength;
    let (w, h) = (s.width, s.height);
    let mut out = Vec::new();
    for y in 1..h.saturating_sub(1) {
        for x in 1..w.saturating_sub(1) {
            let v = s.data[y * w + x];
            if v < threshold {
                continue;
            }
            let (a, coherence) = resp.orientation(y * w + x);
            if coherence < MIN_COHERENCE {
                continue;
            }
            let (dx, dy) = (a.cos().round() as i32, a.sin().round() as i32);
            let (xi, yi) = (x as i32, y as i32);
            if v < s.get(xi + dx, yi + dy) || v < s.get(xi - dx, yi - dy) {
                continue;
            }
            if !is_straight(s, x as f32, y as f32, a, v) {
                continue;
            }
            out.push(LinePixel { x: x as f32, y: y as f32, strength: v, normal: a });
        }
    }
    out
}

/// Straightness test that tells grid lines from the curved rims and shadows of stones: the
/// response must continue along the pixel's own direction, within ±1 pixel, at most of the
/// distances 3, 5, 7, 9 on both sides (an arc of a stone's radius leaves that band by 7 px).
fn is_straight(s: &super::response::Plane, x: f32, y: f32, normal: f32, v: f32) -> bool {
    let (nx, ny) = (normal.cos(), normal.sin());
    let (tx, ty) = (-ny, nx);
    let mut present = 0;
    for t in [-9.0f32, -7.0, -5.0, -3.0, 3.0, 5.0, 7.0, 9.0] {
        let (px, py) = (x + tx * t, y + ty * t);
        let mut best = 0.0f32;
        for o in [-1.0f32, 0.0, 1.0] {
            best = best.max(s.sample(f64::from(px + nx * o), f64::from(py + ny * o)));
        }
        if best >= STRAIGHT_FRACTION * v {
            present += 1;
        }
    }
    present >= STRAIGHT_MIN_PRESENT
}

fn hough_lines(pixels: &[LinePixel], w: usize, h: usize) -> Vec<HoughLine> {
    let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
    let max_rho = ((w * w + h * h) as f32).sqrt() / 2.0 + 2.0;
    let rho_bins = (2.0 * max_rho).ceil() as usize + 1;
    let mut acc = vec![0f32; THETA_BINS * rho_bins];
    let step = std::f32::consts::PI / THETA_BINS as f32;
    let table: Vec<(f32, f32)> = (0..THETA_BINS).map(|t| ((t as f32 * step).cos(), (t as f32 * step).sin())).collect();
    for p in pixels {
        let (x, y) = (p.x - cx, p.y - cy);
        let mut normal = p.normal;
        if normal < 0.0 {
            normal += std::f32::consts::PI;
        }
        let centre_bin = (normal / step).round() as i32;
        for k in -VOTE_SPREAD_BINS..=VOTE_SPREAD_BINS {
            let t = (centre_bin + k).rem_euclid(THETA_BINS as i32) as usize;
            let (c, s) = table[t];
            let rho = x * c + y * s + max_rho;
            let r = rho as usize;
            if r < rho_bins {
                acc[t * rho_bins + r] += p.strength;
            }
        }
    }
    // Peaks: local maxima over ±3° and ±4 px (θ wraps with ρ mirrored; ignore that seam), above
    // a fraction of the strongest. One dominant straight edge (a table edge, the border of a
    // rotated frame) can put every grid line under that fraction: then look again lower down.
    let max = acc.iter().copied().fold(0.0f32, f32::max);
    if max <= 0.0 {
        return Vec::new();
    }
    let mut peaks = hough_peaks(&acc, rho_bins, max * PEAK_FLOOR, max_rho, step);
    if peaks.len() < MIN_PEAKS_BEFORE_RETRY {
        peaks = hough_peaks(&acc, rho_bins, max * LOW_PEAK_FLOOR, max_rho, step);
    }
    peaks.sort_by(|a, b| b.votes.total_cmp(&a.votes));
    peaks.truncate(MAX_PEAKS);
    peaks
}

/// Local maxima over ±3° and ±4 px of the accumulator at or above `floor`.
fn hough_peaks(acc: &[f32], rho_bins: usize, floor: f32, max_rho: f32, step: f32) -> Vec<HoughLine> {
    accumulator_peaks(acc, THETA_BINS, rho_bins, (6, 4), 4, floor)
        .into_iter()
        .map(|(t, r, v)| HoughLine { theta: (t as f32 * step) as f64, rho: (r as f32 - max_rho) as f64, votes: v })
        .collect()
}

/// The cells of a Hough accumulator (`angles` rows of `rho_bins`) that are local maxima over
/// ±`reach` (angle bins, ρ bins), above zero and at or above `floor`, leaving out `rho_margin`
/// bins at each end of ρ: (angle bin, ρ bin, votes) in scan order. θ wraps with ρ mirrored;
/// that seam is ignored. Of equal neighbours the first in scan order is the maximum.
pub(super) fn accumulator_peaks<T: Copy + PartialOrd + Default>(
    acc: &[T],
    angles: usize,
    rho_bins: usize,
    reach: (i32, i32),
    rho_margin: usize,
    floor: T,
) -> Vec<(usize, usize, T)> {
    let mut peaks = Vec::new();
    for t in 0..angles {
        for r in rho_margin..rho_bins.saturating_sub(rho_margin) {
            let v = acc[t * rho_bins + r];
            if v < floor || v <= T::default() {
                continue;
            }
            let mut is_max = true;
            'scan: for dt in -reach.0..=reach.0 {
                let tt = t as i32 + dt;
                if tt < 0 || tt >= angles as i32 {
                    continue;
                }
                for dr in -reach.1..=reach.1 {
                    let rr = r as i32 + dr;
                    if rr < 0 || rr >= rho_bins as i32 {
                        continue;
                    }
                    let o = acc[tt as usize * rho_bins + rr as usize];
                    if o > v || (o == v && (dt, dr) < (0, 0)) {
                        is_max = false;
                        break 'scan;
                    }
                }
            }
            if is_max {
                peaks.push((t, r, v));
            }
        }
    }
    peaks
}

/// Candidate pairs of line families by angle: local maxima of a histogram of Hough-peak angles
/// (weighted by votes², so long straight lines outweigh many short ones, such as the rims of
/// stones lined up diagonally), paired whenever they are at least 30° apart. The comb search
/// decides between the pairs.
fn families(lines: &[HoughLine]) -> Vec<(Vec<HoughLine>, Vec<HoughLine>)> {
    const BINS: usize = 180;
    let mut hist = [0f64; BINS];
    for l in lines {
        let b = (l.theta.to_degrees().round() as usize) % BINS;
        hist[b] += f64::from(l.votes).powi(2);
    }
    // Smooth over ±10° (circular) with a triangular kernel: a box kernel turns one strong angle
    // into a flat plateau whose ends count as further peaks and crowd out a weaker real family.
    let smooth: Vec<f64> = (0..BINS)
        .map(|i| {
            (-10i32..=10).map(|d| f64::from(11 - d.abs()) * hist[(i as i32 + d).rem_euclid(BINS as i32) as usize]).sum()
        })
        .collect();
    let circ = |a: usize, b: usize| {
        let d = (a as i32 - b as i32).rem_euclid(BINS as i32);
        d.min(BINS as i32 - d)
    };
    let mut peaks: Vec<usize> = (0..BINS)
        .filter(|&i| smooth[i] > 0.0)
        .filter(|&i| smooth[i] >= smooth[(i + 1) % BINS] && smooth[i] >= smooth[(i + BINS - 1) % BINS])
        .collect();
    peaks.sort_by(|&a, &b| smooth[b].total_cmp(&smooth[a]));
    let mut distinct: Vec<usize> = Vec::new();
    for p in peaks {
        if distinct.iter().all(|&q| circ(p, q) >= 8) {
            distinct.push(p);
        }
        if distinct.len() == MAX_ANGLE_PEAKS {
            break;
        }
    }
    let mut out = Vec::new();
    for (i, &first) in distinct.iter().enumerate() {
        for &second in &distinct[i + 1..] {
            if circ(first, second) < 30 {
                continue;
            }
            let mut fa = Vec::new();
            let mut fb = Vec::new();
            for l in lines {
                let b = (l.theta.to_degrees().round() as usize) % BINS;
                let (da, db) = (circ(b, first), circ(b, second));
                if da <= db && da <= 25 {
                    fa.push(*l);
                } else if db < da && db <= 25 {
                    fb.push(*l);
                }
            }
            if fa.len() >= 4 && fb.len() >= 4 {
                out.push((fa, fb));
            }
        }
    }
    out
}

/// Sine of the angle between line `l` (homogeneous, normalised) and the direction from a point
/// of it to the vanishing point `v`.
fn vp_disagreement(line: &HoughLine, l: &Vector3<f64>, v: &Vector3<f64>, norm: f64) -> f64 {
    let q = [line.rho / norm * line.theta.cos(), line.rho / norm * line.theta.sin()];
    let dir = [v.x - q[0] * v.z, v.y - q[1] * v.z];
    let len = (dir[0] * dir[0] + dir[1] * dir[1]).sqrt();
    if len < 1e-12 {
        return 0.0;
    }
    l.dot(v).abs() / len
}

/// RANSAC over line pairs for the point all lines of a family pass through (possibly at
/// infinity), refined by least squares over the agreeing lines. Homogeneous, normalised.
fn vanishing_point(family: &[HoughLine], norm: f64) -> Option<Vector3<f64>> {
    let homs: Vec<Vector3<f64>> = family.iter().map(|l| homogeneous(l, norm)).collect();
    let n = family.len().min(40);
    let mut best: Option<(f64, Vector3<f64>)> = None;
    for i in 0..n {
        for j in i + 1..n {
            let v = homs[i].cross(&homs[j]);
            let len = v.norm();
            if len < 1e-12 {
                continue;
            }
            let v = v / len;
            let score: f64 = family
                .iter()
                .zip(&homs)
                .filter(|(l, h)| vp_disagreement(l, h, &v, norm) < VP_ANGLE_TOLERANCE)
                .map(|(l, _)| f64::from(l.votes))
                .sum();
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((score, v));
            }
        }
    }
    let (_, v) = best?;
    // Least squares: smallest eigenvector of Σ w l lᵀ over agreeing lines.
    let mut m = Matrix3::zeros();
    let mut agreeing = 0;
    for (l, h) in family.iter().zip(&homs) {
        if vp_disagreement(l, h, &v, norm) < VP_ANGLE_TOLERANCE {
            m += h * h.transpose() * f64::from(l.votes);
            agreeing += 1;
        }
    }
    if agreeing < 3 {
        return Some(v);
    }
    let eig = nalgebra::SymmetricEigen::new(m);
    let (k, _) = eig.eigenvalues.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1))?;
    let refined: Vector3<f64> = eig.eigenvectors.column(k).into_owned();
    Some(refined / refined.norm())
}

/// Rectifies the line pixels with the two vanishing points and finds 19 evenly spaced lines in
/// each family with a comb search.
fn comb_lattice(
    pixels: &[LinePixel],
    v1: Vector3<f64>,
    v2: Vector3<f64>,
    centre: [f64; 2],
    norm: f64,
) -> Option<LatticeGuess> {
    // Columns of M: v2 ↦ X direction, v1 ↦ Y direction, image centre ↦ origin. Lines through v1
    // become X = const, lines through v2 become Y = const.
    let m = Matrix3::from_columns(&[v2, v1, Vector3::new(0.0, 0.0, 1.0)]);
    let rect = m.try_inverse()?;
    let mut xs: Vec<(f64, f32)> = Vec::new();
    let mut ys: Vec<(f64, f32)> = Vec::new();
    let mut positive = 0usize;
    let mut transformed = Vec::with_capacity(pixels.len());
    for p in pixels {
        let pn = Vector3::new((f64::from(p.x) - centre[0]) / norm, (f64::from(p.y) - centre[1]) / norm, 1.0);
        let r = rect * pn;
        if r.z > 0.0 {
            positive += 1;
        }
        transformed.push((p, pn, r));
    }
    // Keep the side of the horizon where most line pixels lie.
    let sign = if positive * 2 >= pixels.len() { 1.0 } else { -1.0 };
    for (p, pn, r) in transformed {
        if r.z * sign <= 1e-9 {
            continue;
        }
        let (x, y) = (r.x / r.z, r.y / r.z);
        // Which family is this pixel's orientation closer to? Compare its normal with the normal
        // of the direction towards each vanishing point.
        let normal = [f64::from(p.normal).cos(), f64::from(p.normal).sin()];
        let agree = |v: &Vector3<f64>| {
            let d = [v.x - pn.x * v.z, v.y - pn.y * v.z];
            let len = (d[0] * d[0] + d[1] * d[1]).sqrt();
            if len < 1e-12 {
                return 0.0;
            }
            // |cos| between the pixel's normal and the line direction: 0 when they agree.
            1.0 - ((normal[0] * d[0] + normal[1] * d[1]) / len).abs()
        };
        let (a1, a2) = (agree(&v1), agree(&v2));
        // cos 25° ≈ 0.906: require the orientation within about 25° of the family.
        if a1 > a2 && a1 > 0.58 {
            xs.push((x, p.strength));
        } else if a2 > a1 && a2 > 0.58 {
            ys.push((y, p.strength));
        }
    }
    let (ox, sx, cx) = comb_1d(&mut xs)?;
    let (oy, sy, cy) = comb_1d(&mut ys)?;
    // board (c, r) → rectified (ox + c sx, oy + r sy) → normalised image (M) → working pixels.
    let a = Matrix3::new(sx, 0.0, ox, 0.0, sy, oy, 0.0, 0.0, 1.0);
    let to_pixels = Matrix3::new(norm, 0.0, centre[0], 0.0, norm, centre[1], 0.0, 0.0, 1.0);
    let h = to_pixels * m * a;
    Some(LatticeGuess { homography: h / h[(2, 2)], contrast: cx.min(cy) })
}

/// Finds offset and spacing of 19 evenly spaced peaks in weighted 1-D positions. Returns
/// (offset, spacing, contrast) in the positions' units.
fn comb_1d(values: &mut [(f64, f32)]) -> Option<(f64, f64, f64)> {
    if values.len() < 50 {
        return None;
    }
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = values.iter().map(|v| f64::from(v.1)).sum();
    let quantile = |q: f64| {
        let mut acc = 0.0;
        for v in values.iter() {
            acc += f64::from(v.1);
            if acc >= q * total {
                return v.0;
            }
        }
        values[values.len() - 1].0
    };
    let (q_lo, q_hi) = (quantile(0.01), quantile(0.99));
    let span = q_hi - q_lo;
    if span <= 0.0 || !span.is_finite() {
        return None;
    }
    let lo = q_lo - 0.1 * span;
    let hi = q_hi + 0.1 * span;
    let bin = (hi - lo) / HIST_BINS as f64;
    let mut hist = vec![0f64; HIST_BINS];
    for &(x, s) in values.iter() {
        let b = ((x - lo) / bin).floor();
        if b >= 0.0 && (b as usize) < HIST_BINS {
            hist[b as usize] += f64::from(s);
        }
    }
    // Blur by ±2 bins to forgive residual perspective error.
    let blurred: Vec<f64> = (0..HIST_BINS)
        .map(|i| {
            let mut s = 0.0;
            for (d, w) in [(-2i32, 0.25), (-1, 0.75), (0, 1.0), (1, 0.75), (2, 0.25)] {
                let j = i as i32 + d;
                if j >= 0 && (j as usize) < HIST_BINS {
                    s += hist[j as usize] * w;
                }
            }
            s
        })
        .collect();
    let mean = blurred.iter().sum::<f64>() / HIST_BINS as f64;
    let sample = |x: f64| -> f64 {
        if x < 0.0 || x >= (HIST_BINS - 1) as f64 {
            return 0.0;
        }
        let i = x.floor() as usize;
        let f = x - i as f64;
        blurred[i] * (1.0 - f) + blurred[i + 1] * f
    };
    let teeth = (BOARD_LINES - 1) as f64;
    let mut best = (0.0, 0.0, 0.0);
    // Coarse: spacing in 0.5-bin steps, offset in 1-bin steps (the ±2-bin blur forgives the
    // drift of the outer teeth); then refine locally with interpolation.
    let min_spacing = 4.0;
    let max_spacing = (HIST_BINS as f64 - 2.0) / teeth;
    let mut s = min_spacing;
    while s <= max_spacing {
        let last = HIST_BINS as f64 - 1.0 - teeth * s;
        let mut o = 0.0;
        while o <= last {
            let score: f64 = (0..BOARD_LINES).map(|k| sample(o + k as f64 * s)).sum();
            if score > best.0 {
                best = (score, o, s);
            }
            o += 1.0;
        }
        s += 0.5;
    }
    let (mut score, mut o, mut s) = best;
    for _ in 0..3 {
        let (o0, s0) = (o, s);
        for ds in [-0.5, -0.25, -0.125, 0.0, 0.125, 0.25, 0.5] {
            for dof in [-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0] {
                let (oc, sc) = (o0 + dof, s0 + ds);
                let sc_score: f64 = (0..BOARD_LINES).map(|k| sample(oc + k as f64 * sc)).sum();
                if sc_score > score {
                    score = sc_score;
                    o = oc;
                    s = sc;
                }
            }
        }
    }
    if score <= 0.0 || mean <= 0.0 {
        return None;
    }
    // Contrast: mean tooth height over the histogram mean inside the comb's span.
    let span_mean = {
        let (a, b) = (o.max(0.0) as usize, ((o + teeth * s) as usize).min(HIST_BINS - 1));
        if b > a {
            blurred[a..=b].iter().sum::<f64>() / (b - a + 1) as f64
        } else {
            mean
        }
    };
    let contrast = score / BOARD_LINES as f64 / span_mean.max(1e-9);
    Some((lo + (o + 0.5) * bin, s * bin, contrast))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::response::{line_response, Plane};

    #[test]
    fn only_lines_beside_a_lit_surface_count_as_lit() {
        // Left half: a light board with a dark line at x = 20; right half: a dark table with a
        // darker grain line at x = 60.
        let (w, h) = (80, 40);
        let mut plane = Plane::new(w, h);
        for y in 0..h {
            for x in 0..w {
                plane.data[y * w + x] = match x {
                    20 => 60.0,
                    60 => 10.0,
                    x if x < 40 => 200.0,
                    _ => 40.0,
                };
            }
        }
        let resp = line_response(&plane);
        let all = thin_line_pixels(&resp, MIN_LINE_STRENGTH);
        assert!(all.iter().any(|p| p.x == 20.0) && all.iter().any(|p| p.x == 60.0));
        let lit = lit_pixels(&all, &plane);
        assert!(lit.iter().any(|p| p.x == 20.0), "the board's line was dropped");
        assert!(lit.iter().all(|p| p.x != 60.0), "the table's grain was kept");
    }
}
