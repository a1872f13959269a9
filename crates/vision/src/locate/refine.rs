//! Refinement of a grid hypothesis against the image: find each of the 361 intersections near
//! where the current geometry predicts it (two independent 1-D searches for the two lines that
//! cross there, so a stone on one arm costs only that arm), fit the homography to all of them by
//! RANSAC + least squares, correct an off-by-one extent, estimate radial distortion, and put
//! (0, 0) at the top-left as seen.

use nalgebra::Matrix3;
use tengen_rules::BOARD_LINES;

use super::response::LineResponse;
use crate::homography::{self, PointPair};
use crate::work::WorkMeter;
use crate::{GridGeometry, LensDistortion};

/// Mean line strength an arm needs to count as a seen line.
const ARM_MIN_STRENGTH: f32 = 0.02;
/// Arm length on each side of an intersection, in cells (stops short of a neighbour's stone).
const ARM_HALF_LENGTH_CELLS: f64 = 0.42;
/// Line evidence counts only beside surfaces at least this bright relative to the board.
const BOARD_BRIGHTNESS_FRACTION: f32 = 0.45;
/// |cos| between a pixel's line normal and a grid line's normal for the pixel to count as lying
/// along that line (cos 20°).
const ORIENTED_AGREEMENT: f64 = 0.94;
/// RANSAC inlier distance, in cells.
const INLIER_CELLS: f64 = 0.15;
/// Longest cell searched, as a fraction of the working image's longer side: at least four cells
/// across the image. A board needs 40 intersections in view, which larger cells cannot give;
/// the search window of such a cell would cover most of the image.
const MAX_CELL_FRACTION: f64 = 0.25;

/// The line response of the working image and how it maps to full-resolution pixels.
pub(crate) struct Working {
    pub resp: LineResponse,
    /// The working grey image the response was computed from.
    pub plane: super::response::Plane,
    /// Integer downscale factor: full = factor·work + (factor − 1)/2.
    pub factor: usize,
}

impl Working {
    pub fn to_work(&self, full: [f64; 2]) -> [f64; 2] {
        let k = self.factor as f64;
        [(full[0] - (k - 1.0) / 2.0) / k, (full[1] - (k - 1.0) / 2.0) / k]
    }

    pub fn to_full(&self, work: [f64; 2]) -> [f64; 2] {
        let k = self.factor as f64;
        [work[0] * k + (k - 1.0) / 2.0, work[1] * k + (k - 1.0) / 2.0]
    }

    fn strength(&self, p: [f64; 2]) -> f32 {
        self.resp.strength.sample(p[0], p[1])
    }
}

/// One intersection seen in the image.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FoundIntersection {
    pub col: usize,
    pub row: usize,
    /// Full-resolution pixel position (distorted, as in the image).
    pub pixel: [f64; 2],
}

fn sub(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0] - b[0], a[1] - b[1]]
}

fn norm(a: [f64; 2]) -> f64 {
    (a[0] * a[0] + a[1] * a[1]).sqrt()
}

/// Local frame of the grid at a board position, in working pixels.
struct LocalFrame {
    centre: [f64; 2],
    /// Unit vector along the row line (towards increasing column) and cell length along it.
    along_row: [f64; 2],
    cell_along_row: f64,
    /// Unit vector along the column line (towards increasing row) and cell length along it.
    along_col: [f64; 2],
    cell_along_col: f64,
}

fn local_frame(work: &Working, geom: &GridGeometry, col: f64, row: f64) -> Option<LocalFrame> {
    let centre = work.to_work(geom.project(col, row));
    let dr = sub(work.to_work(geom.project(col + 0.5, row)), work.to_work(geom.project(col - 0.5, row)));
    let dc = sub(work.to_work(geom.project(col, row + 0.5)), work.to_work(geom.project(col, row - 0.5)));
    let (lr, lc) = (norm(dr), norm(dc));
    if !(lr > 1e-6 && lc > 1e-6 && centre[0].is_finite() && centre[1].is_finite()) {
        return None;
    }
    Some(LocalFrame {
        centre,
        along_row: [dr[0] / lr, dr[1] / lr],
        cell_along_row: lr,
        along_col: [dc[0] / lc, dc[1] / lc],
        cell_along_col: lc,
    })
}

/// Searches across a line through `centre` running along `dir`, for offsets along the unit normal
/// within ±`radius`; returns the offset of the strongest line and its mean strength. `None` also
/// when the meter refuses the work (the caller checks the meter).
fn search_line(
    work: &Working,
    centre: [f64; 2],
    dir: [f64; 2],
    half_length: f64,
    radius: f64,
    meter: &WorkMeter,
) -> Option<(f64, f32)> {
    let normal = [-dir[1], dir[0]];
    // Callers keep both within the working image's size; the casts saturate whatever comes.
    let steps = radius.ceil().max(1.0) as i32;
    let n_samples = half_length.floor().max(1.0) as i32;
    let samples = (2 * i64::from(steps) + 1) * (2 * i64::from(n_samples) + 1);
    if !meter.charge(samples.unsigned_abs()) {
        return None;
    }
    let mut profile = Vec::with_capacity((2 * steps + 1) as usize);
    for s in -steps..=steps {
        let off = f64::from(s);
        let base = [centre[0] + normal[0] * off, centre[1] + normal[1] * off];
        let mut sum = 0.0f32;
        for t in -n_samples..=n_samples {
            let t = f64::from(t);
            sum += work.strength([base[0] + dir[0] * t, base[1] + dir[1] * t]);
        }
        profile.push(sum / (2 * n_samples + 1) as f32);
    }
    let (best, &peak) = profile.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
    if peak < ARM_MIN_STRENGTH {
        return None;
    }
    let mut sorted = profile.clone();
    sorted.sort_by(f32::total_cmp);
    let median = sorted[sorted.len() / 2];
    if peak < 2.0 * median {
        return None;
    }
    // Sub-pixel: parabola through the peak and its neighbours.
    let mut offset = best as f64 - f64::from(steps);
    if best > 0 && best + 1 < profile.len() {
        let (a, b, c) = (f64::from(profile[best - 1]), f64::from(peak), f64::from(profile[best + 1]));
        let denom = a - 2.0 * b + c;
        if denom.abs() > 1e-9 {
            offset += (0.5 * (a - c) / denom).clamp(-0.5, 0.5);
        }
    }
    Some((offset, peak))
}

/// Finds every intersection that is visible within `radius_cells` of its predicted position.
///
/// The work is bounded by the working image's size whatever the geometry: an intersection whose
/// cell is longer than [`MAX_CELL_FRACTION`] of the image's longer side (a wild hypothesis, or a
/// corrupt frame's noise taken for lines), or whose search window lies wholly outside the image,
/// is not searched. Stops early when the meter refuses more work.
pub(crate) fn find_intersections(
    work: &Working,
    geom: &GridGeometry,
    radius_cells: f64,
    meter: &WorkMeter,
) -> Vec<FoundIntersection> {
    let mut found = Vec::new();
    for row in 0..BOARD_LINES {
        for col in 0..BOARD_LINES {
            if meter.check().is_err() {
                return found;
            }
            if let Some(p) = crossing_at(work, geom, col as f64, row as f64, radius_cells, meter) {
                found.push(FoundIntersection { col, row, pixel: work.to_full(p) });
            }
        }
    }
    found
}

/// The crossing of the two lines through board point (`col`, `row`) (which may lie beyond the
/// 19 lines), searched within `radius_cells` of where `geom` puts it, in working pixels; `None`
/// when either line is not seen there or the point is not searchable (see
/// [`find_intersections`]).
pub(crate) fn crossing_at(
    work: &Working,
    geom: &GridGeometry,
    col: f64,
    row: f64,
    radius_cells: f64,
    meter: &WorkMeter,
) -> Option<[f64; 2]> {
    let (width, height) = (work.resp.strength.width as f64, work.resp.strength.height as f64);
    let max_cell = MAX_CELL_FRACTION * width.max(height);
    let f = local_frame(work, geom, col, row)?;
    let cell = f.cell_along_row.min(f.cell_along_col);
    if cell < 3.0 || f.cell_along_row.max(f.cell_along_col) > max_cell {
        return None;
    }
    let radius = (radius_cells * cell).max(1.5);
    let reach = radius + ARM_HALF_LENGTH_CELLS * f.cell_along_row.max(f.cell_along_col);
    let [x, y] = f.centre;
    if x < -reach || y < -reach || x > width + reach || y > height + reach {
        return None;
    }
    // The row line runs along `along_row`; the column line along `along_col`.
    let (off_r, _) = search_line(work, f.centre, f.along_row, ARM_HALF_LENGTH_CELLS * f.cell_along_row, radius, meter)?;
    let (off_c, _) = search_line(work, f.centre, f.along_col, ARM_HALF_LENGTH_CELLS * f.cell_along_col, radius, meter)?;
    // Solve n_r·d = off_r, n_c·d = off_c for the displacement d.
    let n_r = [-f.along_row[1], f.along_row[0]];
    let n_c = [-f.along_col[1], f.along_col[0]];
    let det = n_r[0] * n_c[1] - n_r[1] * n_c[0];
    if det.abs() < 0.2 {
        return None;
    }
    let dx = (off_r * n_c[1] - n_r[1] * off_c) / det;
    let dy = (n_r[0] * off_c - off_r * n_c[0]) / det;
    Some([f.centre[0] + dx, f.centre[1] + dy])
}

/// A fitted grid and the evidence behind it.
#[derive(Debug, Clone)]
pub(crate) struct Fit {
    pub geometry: GridGeometry,
    pub inliers: Vec<FoundIntersection>,
    pub rms_cells: f64,
}

/// Median cell size in full-resolution pixels.
pub(crate) fn median_cell(geom: &GridGeometry) -> f64 {
    let mut sizes = Vec::new();
    for r in (0..BOARD_LINES).step_by(3) {
        for c in (0..BOARD_LINES - 1).step_by(3) {
            let a = geom.project(c as f64, r as f64);
            sizes.push(norm(sub(geom.project(c as f64 + 1.0, r as f64), a)));
            sizes.push(norm(sub(geom.project(r as f64, c as f64 + 1.0), geom.project(r as f64, c as f64))));
        }
    }
    sizes.sort_by(f64::total_cmp);
    sizes.get(sizes.len() / 2).copied().unwrap_or(0.0)
}

/// The farthest any of the 361 points moves from `from` to `to`, in cells of `from` at that point
/// (the shorter of its two spacings there, so that the far side of a steep view counts as much).
pub(crate) fn largest_move_cells(from: &GridGeometry, to: &GridGeometry) -> f64 {
    let mut largest = 0.0f64;
    for row in 0..BOARD_LINES {
        for col in 0..BOARD_LINES {
            let (c, r) = (col as f64, row as f64);
            let at = from.project(c, r);
            let step = |dc: f64, dr: f64| norm(sub(from.project(c + dc, r + dr), at));
            let cell = step(if col + 1 < BOARD_LINES { 1.0 } else { -1.0 }, 0.0)
                .min(step(0.0, if row + 1 < BOARD_LINES { 1.0 } else { -1.0 }));
            let moved = norm(sub(to.project(c, r), at)) / cell.max(1e-9);
            // A point that does not project (NaN) counts as moved without bound.
            largest = if moved.is_nan() { f64::INFINITY } else { largest.max(moved) };
        }
    }
    largest
}

/// Fits the homography to found intersections (undistorted with `lens`) by RANSAC.
pub(crate) fn fit(found: &[FoundIntersection], lens: LensDistortion, cell_px: f64) -> Option<Fit> {
    if found.len() < 8 {
        return None;
    }
    let pairs: Vec<PointPair> =
        found.iter().map(|f| PointPair { from: [f.col as f64, f.row as f64], to: lens.undistort(f.pixel) }).collect();
    let result = homography::ransac(&pairs, (INLIER_CELLS * cell_px).max(1.0), 150)?;
    let h = result.homography;
    let geometry = GridGeometry { homography: to_rows(&h), lens };
    let inliers: Vec<FoundIntersection> =
        found.iter().zip(&result.inliers).filter(|(_, &i)| i).map(|(f, _)| *f).collect();
    let cell = median_cell(&geometry).max(1e-9);
    Some(Fit { geometry, inliers, rms_cells: result.rms_error / cell })
}

pub(crate) use crate::geometry::to_rows;

/// Composes the geometry with a board-coordinate map `p` (new board → old board).
pub(crate) fn reindex(geom: &GridGeometry, p: &Matrix3<f64>) -> GridGeometry {
    let h = geom.matrix() * p;
    let h = if h[(2, 2)].abs() > 1e-12 { h / h[(2, 2)] } else { h };
    GridGeometry { homography: to_rows(&h), lens: geom.lens }
}

/// Line strength at board point (c, r) on a line of one family (`columns`: the line of constant
/// column through it), tolerating ±1 working pixel across the line.
/// Lines count only where the surface beside them is about as bright as the board: a dark
/// cloth or table next to the board has texture that looks like faint lines.
fn point_evidence(work: &Working, geom: &GridGeometry, columns: bool, c: f64, r: f64, board_level: f32) -> Option<f64> {
    let f = local_frame(work, geom, c, r)?;
    let dir = if columns { f.along_col } else { f.along_row };
    let normal = [-dir[1], dir[0]];
    let beside = 0.3 * if columns { f.cell_along_row } else { f.cell_along_col };
    let side =
        |sign: f64| work.plane.sample(f.centre[0] + normal[0] * beside * sign, f.centre[1] + normal[1] * beside * sign);
    if side(1.0).max(side(-1.0)) < BOARD_BRIGHTNESS_FRACTION * board_level {
        return Some(0.0);
    }
    let mut best = 0.0f32;
    for s in [-1.0, 0.0, 1.0] {
        best = best.max(work.strength([f.centre[0] + normal[0] * s, f.centre[1] + normal[1] * s]));
    }
    Some(f64::from(best))
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// The board points (c, r) sampled along line `index` of one family (`columns`: line col =
/// index): every half cell between the outermost perpendicular lines, starting a quarter cell in.
fn samples_along(columns: bool, index: f64) -> impl Iterator<Item = (f64, f64)> {
    let last = (BOARD_LINES - 1) as f64;
    (0..36).map(|i| 0.25 + 0.5 * f64::from(i)).filter(move |&t| t < last).map(move |t| {
        if columns {
            (index, t)
        } else {
            (t, index)
        }
    })
}

/// Mean line strength along board line `index` of one family (`columns`: line col = index),
/// sampled between the outermost perpendicular lines, tolerating ±1 working pixel.
pub(crate) fn line_evidence(work: &Working, geom: &GridGeometry, columns: bool, index: f64, board_level: f32) -> f64 {
    mean(samples_along(columns, index).filter_map(|(c, r)| point_evidence(work, geom, columns, c, r, board_level)))
}

/// Distance, in cells, beyond an outer line at which the board's margin is read (a priori: a
/// board's margin is wider than half a cell).
const MARGIN_CELLS: f64 = 0.5;

/// The first outer line (`"top"`, `"right"`, `"bottom"`, `"left"` as indexed) beyond which, half
/// a cell out, the surface is darker than a board ([`BOARD_BRIGHTNESS_FRACTION`] of the board's
/// brightness at the cell centres) at most of the 18 points read (one per cell along the line);
/// `None` when every outer line has board beyond it. Points outside the image are not read.
pub(crate) fn dark_beyond_outer_line(work: &Working, geom: &GridGeometry) -> Option<&'static str> {
    let board_level = board_brightness(work, geom);
    let last = (BOARD_LINES - 1) as f64;
    let (w, h) = (work.plane.width as f64, work.plane.height as f64);
    for name in ["top", "right", "bottom", "left"] {
        let (mut dark, mut read) = (0usize, 0usize);
        // Between the perpendicular lines, which a wrong grid's margin would cross.
        for k in 0..BOARD_LINES - 1 {
            let t = k as f64 + 0.5;
            let (c, r) = match name {
                "top" => (t, -MARGIN_CELLS),
                "right" => (last + MARGIN_CELLS, t),
                "bottom" => (t, last + MARGIN_CELLS),
                _ => (-MARGIN_CELLS, t),
            };
            let p = work.to_work(geom.project(c, r));
            if !(p[0] >= 0.0 && p[1] >= 0.0 && p[0] < w && p[1] < h) {
                continue;
            }
            read += 1;
            dark += usize::from(work.plane.sample(p[0], p[1]) < BOARD_BRIGHTNESS_FRACTION * board_level);
        }
        if read > 0 && dark * 2 > read {
            return Some(name);
        }
    }
    None
}

/// Median brightness of the board at cell centres inside the grid.
fn board_brightness(work: &Working, geom: &GridGeometry) -> f32 {
    let mut values: Vec<f32> = Vec::new();
    for r in (0..BOARD_LINES - 1).step_by(2) {
        for c in (0..BOARD_LINES - 1).step_by(2) {
            let p = work.to_work(geom.project(c as f64 + 0.5, r as f64 + 0.5));
            values.push(work.plane.sample(p[0], p[1]));
        }
    }
    values.sort_by(f32::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Evidence that the perpendicular lines reach line `index`: their strength just before and
/// just after it. Grid lines stop at the outermost line, so a board edge or a table edge that
/// looks like one more line gets no support here.
fn crossing_support(work: &Working, geom: &GridGeometry, columns: bool, index: f64, board_level: f32) -> f64 {
    mean((0..BOARD_LINES).flat_map(|j| {
        let j = j as f64;
        [-0.4, -0.25, 0.25, 0.4].into_iter().filter_map(move |d| {
            let (c, r) = if columns { (index + d, j) } else { (j, index + d) };
            point_evidence(work, geom, !columns, c, r, board_level)
        })
    }))
}

/// Shift (in lines) of each family that best covers the 19 lines with evidence, searched within
/// ±`reach`. Returns (column shift, row shift) and the evidence contrast inside vs. just outside.
pub(crate) fn best_extent(work: &Working, geom: &GridGeometry, reach: i32, meter: &WorkMeter) -> (i32, i32, f64) {
    // Fixed work: per line, 36 evidence samples and 4 × 19 crossing samples, each ±1 pixel.
    let lines = 2 * (BOARD_LINES as u64 + 2 * reach.unsigned_abs() as u64 + 3);
    meter.charge(lines * (36 + 4 * BOARD_LINES as u64) * 4);
    let mut shifts = [0i32; 2];
    let mut contrasts = [0f64; 2];
    let board_level = board_brightness(work, geom);
    for (family, columns) in [true, false].into_iter().enumerate() {
        let lo = -reach - 1;
        let hi = BOARD_LINES as i32 + reach;
        let evidence: Vec<f64> = (lo..=hi)
            .map(|k| {
                let k = f64::from(k);
                line_evidence(work, geom, columns, k, board_level)
                    + 2.0 * crossing_support(work, geom, columns, k, board_level)
            })
            .collect();
        let at = |k: i32| evidence[(k - lo) as usize];
        let mut best = (f64::MIN, 0);
        for s in -reach..=reach {
            let total: f64 = (s..s + BOARD_LINES as i32).map(at).sum();
            if total > best.0 + 1e-9 {
                best = (total, s);
            }
        }
        shifts[family] = best.1;
        let s = best.1;
        let inside = best.0 / BOARD_LINES as f64;
        let outside = (at(s - 1) + at(s + BOARD_LINES as i32)) / 2.0;
        contrasts[family] = inside / outside.max(1e-3);
    }
    (shifts[0], shifts[1], contrasts[0].min(contrasts[1]))
}

/// Line strength at board point (c, r) on a line of one family, counted only where the line
/// response runs along that line (within about 20°), tolerating ±1 working pixel across it. The
/// dark gaps between touching stones run across a row of stones, so they add nothing here.
fn oriented_evidence(work: &Working, geom: &GridGeometry, columns: bool, c: f64, r: f64) -> Option<f64> {
    let f = local_frame(work, geom, c, r)?;
    let dir = if columns { f.along_col } else { f.along_row };
    let normal = [-dir[1], dir[0]];
    let s = &work.resp.strength;
    let mut best = 0.0f32;
    for o in [-1.0, 0.0, 1.0] {
        let (x, y) = ((f.centre[0] + normal[0] * o + 0.5).floor(), (f.centre[1] + normal[1] * o + 0.5).floor());
        if x < 0.0 || y < 0.0 || x as usize >= s.width || y as usize >= s.height {
            continue;
        }
        let i = y as usize * s.width + x as usize;
        let (angle, coherence) = work.resp.orientation(i);
        if coherence < 0.3 {
            continue;
        }
        let agreement = (f64::from(angle).cos() * normal[0] + f64::from(angle).sin() * normal[1]).abs();
        if agreement > ORIENTED_AGREEMENT {
            best = best.max(s.data[i]);
        }
    }
    Some(f64::from(best))
}

/// How evenly oriented line evidence is spread between the even- and odd-numbered lines of each
/// family: the weaker of the two means over the stronger, for the family where that is
/// smallest. A grid fitted at half the true spacing (every other "line" running through the
/// middle of cells, a trap on crowded boards whose rows of stones look like lines) scores far
/// below 1.
pub(crate) fn alternation_balance(work: &Working, geom: &GridGeometry) -> f64 {
    [true, false]
        .into_iter()
        .map(|columns| {
            let (mut even, mut odd) = (0.0, 0.0);
            for k in 0..BOARD_LINES {
                let e = mean(
                    samples_along(columns, k as f64).filter_map(|(c, r)| oriented_evidence(work, geom, columns, c, r)),
                );
                if k % 2 == 0 {
                    even += e;
                } else {
                    odd += e;
                }
            }
            let (even, odd) = (even / BOARD_LINES.div_ceil(2) as f64, odd / (BOARD_LINES / 2) as f64);
            let (lo, hi) = if even < odd { (even, odd) } else { (odd, even) };
            if hi > 0.0 {
                lo / hi
            } else {
                0.0
            }
        })
        .fold(f64::INFINITY, f64::min)
}

/// Lines without line evidence at both ends of a family: for each family, the dead lines
/// (oriented evidence under [`DEAD_LINE_FRACTION`] of the family's upper-quartile line) among its
/// [`OUTER_LINES`] first and among its last, the smaller of the two; the larger over the two
/// families. A lattice stretched past the board (twice the true spacing in one family, centred
/// by the extent) lays its outer lines on the table on both sides; on a board a crowded side
/// hides lines on one side at a time, and lines mostly outside the frame are not counted.
pub(crate) fn dead_lines_at_both_ends(work: &Working, geom: &GridGeometry) -> usize {
    let (width, height) = (work.resp.strength.width as f64, work.resp.strength.height as f64);
    let in_frame = |c: f64, r: f64| {
        let p = work.to_work(geom.project(c, r));
        p[0] >= 0.0 && p[1] >= 0.0 && p[0] < width && p[1] < height
    };
    [true, false]
        .into_iter()
        .map(|columns| {
            // Lines mostly outside the frame say nothing either way (`None`).
            let each: Vec<Option<f64>> = (0..BOARD_LINES)
                .map(|k| {
                    let all = samples_along(columns, k as f64).count();
                    let seen: Vec<(f64, f64)> =
                        samples_along(columns, k as f64).filter(|&(c, r)| in_frame(c, r)).collect();
                    (seen.len() * 2 >= all).then(|| {
                        mean(seen.into_iter().filter_map(|(c, r)| oriented_evidence(work, geom, columns, c, r)))
                    })
                })
                .collect();
            let mut sorted: Vec<f64> = each.iter().flatten().copied().collect();
            if sorted.is_empty() {
                return 0;
            }
            sorted.sort_by(f64::total_cmp);
            // The upper quartile: a stretched lattice may lay over half its lines off the board.
            let floor = sorted[sorted.len() * 3 / 4] * DEAD_LINE_FRACTION;
            let dead = |range: std::ops::Range<usize>| each[range].iter().flatten().filter(|&&e| e < floor).count();
            dead(0..OUTER_LINES).min(dead(BOARD_LINES - OUTER_LINES..BOARD_LINES))
        })
        .max()
        .unwrap_or(0)
}

/// A line is dead under this fraction of its family's upper-quartile line (a priori: a line partly
/// covered by stones keeps far more of its evidence between them).
const DEAD_LINE_FRACTION: f64 = 0.25;
/// How many lines at each end of a family are looked at (a priori: a quarter of the board).
pub(crate) const OUTER_LINES: usize = 5;

/// Oriented line evidence along the 19 lines of one family (`columns`), summed over the lines
/// (each line's mean over its samples).
pub(crate) fn family_oriented_evidence(work: &Working, geom: &GridGeometry, columns: bool) -> f64 {
    (0..BOARD_LINES)
        .map(|k| {
            mean(samples_along(columns, k as f64).filter_map(|(c, r)| oriented_evidence(work, geom, columns, c, r)))
        })
        .sum()
}

/// How much of the line response on each family's 19 lines runs along them: the mean oriented
/// evidence over the mean of all evidence there, for the family where that is smallest. A
/// lattice whose "lines" are diagonals of the board's (they pass through crossings too) scores
/// near 0 on that family.
pub(crate) fn oriented_share(work: &Working, geom: &GridGeometry) -> f64 {
    [true, false]
        .into_iter()
        .map(|columns| {
            let (mut oriented, mut all) = (0.0, 0.0);
            for (c, r) in (0..BOARD_LINES).flat_map(|k| samples_along(columns, k as f64)) {
                oriented += oriented_evidence(work, geom, columns, c, r).unwrap_or(0.0);
                all += point_evidence(work, geom, columns, c, r, 0.0).unwrap_or(0.0);
            }
            if all > 0.0 {
                oriented / all
            } else {
                0.0
            }
        })
        .fold(f64::INFINITY, f64::min)
}

pub(crate) fn translation(dc: f64, dr: f64) -> Matrix3<f64> {
    Matrix3::new(1.0, 0.0, dc, 0.0, 1.0, dr, 0.0, 0.0, 1.0)
}

/// Estimates the division-model coefficient that makes the found intersections most consistent
/// with one homography (golden-section search). Returns the lens if it helps clearly.
pub(crate) fn estimate_lens(found: &[FoundIntersection], base: LensDistortion, cell_px: f64) -> Option<LensDistortion> {
    if found.len() < 80 {
        return None;
    }
    let rms = |k1: f64| -> f64 {
        let lens = LensDistortion { k1, ..base };
        let pairs: Vec<PointPair> = found
            .iter()
            .map(|f| PointPair { from: [f.col as f64, f.row as f64], to: lens.undistort(f.pixel) })
            .collect();
        let Some(h) = homography::fit(&pairs) else { return f64::INFINITY };
        let mut errs: Vec<f64> = pairs.iter().map(|p| homography::reprojection_error(&h, p)).collect();
        errs.sort_by(f64::total_cmp);
        // Trimmed RMS: robust to a few stray detections.
        let keep = errs.len() * 9 / 10;
        (errs[..keep].iter().map(|e| e * e).sum::<f64>() / keep.max(1) as f64).sqrt()
    };
    let (mut a, mut b) = (-0.3f64, 0.3f64);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let (mut fc, mut fd) = (rms(c), rms(d));
    for _ in 0..24 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = rms(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = rms(d);
        }
    }
    let k1 = (a + b) / 2.0;
    let (with, without) = (rms(k1), rms(0.0));
    // Adopt only a clear improvement that matters at the scale of a cell.
    if with < 0.75 * without && without - with > 0.005 * cell_px && k1.abs() > 0.005 {
        Some(LensDistortion { k1, ..base })
    } else {
        None
    }
}

/// The eight numberings of a board's points, as maps new (c, r) → old (c, r) for [`reindex`]:
/// each of the four quarter turns, then the same mirrored across the diagonal.
pub(crate) fn board_symmetries() -> [Matrix3<f64>; 8] {
    let last = (BOARD_LINES - 1) as f64;
    let rot = Matrix3::new(0.0, -1.0, last, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0);
    let flip = Matrix3::new(0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0);
    let mut out = [Matrix3::identity(); 8];
    let mut p = Matrix3::identity();
    for pair in out.chunks_exact_mut(2) {
        pair[0] = p;
        pair[1] = p * flip;
        p *= rot;
    }
    out
}

/// Re-indexes the board so that column 0 is the leftmost and row 0 the top as seen, without
/// mirroring (a camera never mirrors the board).
pub(crate) fn orient_upright(geom: &GridGeometry) -> GridGeometry {
    let last = (BOARD_LINES - 1) as f64;
    let mut best: Option<(f64, GridGeometry)> = None;
    for q in board_symmetries() {
        let g = reindex(geom, &q);
        let mid = last / 2.0;
        let a = sub(g.project(last, mid), g.project(0.0, mid));
        let b = sub(g.project(mid, last), g.project(mid, 0.0));
        let cross = a[0] * b[1] - a[1] * b[0];
        if cross <= 0.0 {
            continue;
        }
        // Prefer columns running most nearly to the right (and rows downwards).
        let score = a[0] / norm(a).max(1e-9) + b[1] / norm(b).max(1e-9);
        if best.as_ref().is_none_or(|(s, _)| score > *s + 1e-9) {
            best = Some((score, g));
        }
    }
    best.map_or_else(|| geom.clone(), |(_, g)| g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::GrayImage;

    /// A light board with dark 2-pixel lines on a 19×19 grid of 30-pixel cells, and its grid.
    fn drawn_board() -> (GrayImage, GridGeometry) {
        super::super::drawn_board((640, 640), [50.0, 50.0], 30.0, f64::INFINITY, 1.0, [200, 50, 200])
    }

    #[test]
    fn an_outer_line_on_the_boards_edge_has_no_margin_beyond_it() {
        let (img, truth) = super::super::board_on_a_dark_table(0.8);
        let work = super::super::working(&img, &WorkMeter::unlimited());
        assert_eq!(dark_beyond_outer_line(&work, &truth), None);
        // A column to the left: the new first column lies beyond the board's wood.
        assert_eq!(dark_beyond_outer_line(&work, &reindex(&truth, &translation(-1.0, 0.0))), Some("left"));
        assert_eq!(dark_beyond_outer_line(&work, &reindex(&truth, &translation(0.0, 1.0))), Some("bottom"));
    }

    #[test]
    fn a_lattice_of_diagonals_has_little_oriented_line_evidence() {
        let (img, truth) = drawn_board();
        let work = super::super::working(&img, &WorkMeter::unlimited());
        // Board (c, r) → (c + r, r): every crossing is still a crossing of this lattice, but its
        // "columns" run diagonally across the board's cells.
        let diagonals = reindex(&truth, &Matrix3::new(1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0));
        let (right, sheared) = (oriented_share(&work, &truth), oriented_share(&work, &diagonals));
        assert!(right > 0.5, "the board's own lattice: {right:.2}");
        assert!(sheared < 0.15, "a lattice of diagonals: {sheared:.2}");
    }
}
