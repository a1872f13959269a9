//! The board's outline: the lit surface (light wood, pale stones) against a darker surround,
//! as a quadrilateral, and a first lattice placed inside it. On a crowded board few of the
//! board's lines show between the stones, and a comb over line pixels locks onto the gaps
//! between stones or the table's grain; the outline gives the board's perspective and extent
//! without any line, and the 19 lines are centred in it (a board's grid is centred on the
//! board), leaving only the width of the margin and the phase to the line evidence.

use super::lattice::{accumulator_peaks, bright_end, LIT_FRACTION};
use super::refine::{self, Working};
use crate::homography::{self, PointPair};
use crate::work::WorkMeter;
use crate::GridGeometry;
use tengen_rules::BOARD_LINES;

/// Widest and narrowest margin searched beyond the outer lines, in cells (a priori: boards
/// are made with margins from a fifth of a cell, thin vinyl boards, to over two cells, wide
/// table boards; the stress suite's narrow and wide margins are 0.2–0.3 and 1.6–2.3 cells).
pub(crate) const MARGIN_RANGE_CELLS: (f64, f64) = (0.1, 2.6);
/// Step of the margin search, in cells.
const MARGIN_STEP_CELLS: f64 = 0.1;
/// Phase offsets searched per cell (eighths of a cell over [−½, ½)): the lit outline may take in
/// the board's side face on the near side, which moves the grid's centre in it (a priori: the
/// refinement's first search radius, 0.42 cell, forgives the remaining sixteenth).
const PHASE_STEPS: i32 = 8;

/// Floors tried after the lit looks' own ([`LIT_FRACTION`]) when its region is not a whole
/// board's (see [`board_outline`]), as fractions of the image's bright end (a priori: a mid-grey table or cloth
/// reaches 0.45 of the bright end and joins the board into one region that runs to the frame's
/// border; light wood stands at about 0.8–0.9 of it, so floors up to 0.75 still keep the wood).
const RAISED_FRACTIONS: [f32; 3] = [0.55, 0.65, 0.75];
/// A region's outline is taken as the board's without trying the raised floors only when the
/// region stays inside the frame and the quadrilateral's area is within this ratio of the
/// region's own area, counted row by row between its extreme pixels (a priori: a board's lit
/// surface fills its outline but for its side face; a region of table and board that runs out
/// of the frame gives a quadrilateral of stray sides).
const FILL_RATIO_RANGE: (f64, f64) = (0.8, 1.25);

/// The outline of the board as a quadrilateral, corners clockwise as seen starting nearest the
/// top-left, in working pixels: the largest region lit above [`LIT_FRACTION`] of the image's
/// bright end, or when that region runs out of the frame or its outline does not fill it (a table
/// as light as that joins it), the first of the raised floors whose region is a whole board's;
/// when none is, the first region's outline as it is. `None` when no region holds a
/// readable board or no outline has four sides.
pub(crate) fn board_outline(work: &Working, meter: &WorkMeter) -> Option<[[f64; 2]; 4]> {
    let bright = bright_end(&work.plane);
    let first = lit_region_outline(work, LIT_FRACTION * bright, meter);
    if first.as_ref().is_some_and(|o| o.whole) {
        return first.map(|o| o.quad);
    }
    RAISED_FRACTIONS
        .iter()
        .filter_map(|&f| lit_region_outline(work, f * bright, meter))
        .find(|o| o.whole)
        .or(first)
        .map(|o| o.quad)
}

/// The outline of one lit region and whether it is a whole board's: the region stays inside the
/// frame and its outline fills it (see [`FILL_RATIO_RANGE`]).
struct RegionOutline {
    quad: [[f64; 2]; 4],
    /// The quadrilateral's area is within [`FILL_RATIO_RANGE`] of the region's.
    fills: bool,
    whole: bool,
}

/// Most further lit regions tried as pieces of the largest one's board (a priori: a few dark
/// chains of stones across a crowded board split its lit surface into a few large pieces).
const MAX_PIECES: usize = 3;
/// A further lit region is tried as a piece of the board only when it holds at least this share
/// of the largest region's pixels (a priori: a piece cut off by a chain of dark stones holds a
/// sizeable part of the board's lit surface; small lit things on the table, glints and grain, do
/// not).
const MIN_PIECE_SHARE: usize = 4;

/// The outline of the largest 4-connected region of the working image at least `floor` bright,
/// joined by further large lit regions within a cell of it when their union fills its outline
/// and that outline is larger (a chain of dark stones across a crowded board splits its lit
/// surface into pieces, and the largest piece alone is a part of the board); `None` when the
/// region is too small to hold a readable board or no four sides are found.
fn lit_region_outline(work: &Working, floor: f32, meter: &WorkMeter) -> Option<RegionOutline> {
    let plane = &work.plane;
    let (w, h) = (plane.width, plane.height);
    meter.charge(4 * (w * h) as u64);
    let lit: Vec<bool> = plane.data.iter().map(|&v| v >= floor).collect();
    // 4-connected lit regions and their sizes (label 0: not lit).
    let mut label = vec![0u32; w * h];
    let mut sizes = vec![0usize];
    let mut stack = Vec::new();
    for start in 0..w * h {
        if !lit[start] || label[start] != 0 {
            continue;
        }
        let next = sizes.len() as u32;
        let mut size = 0;
        label[start] = next;
        stack.push(start);
        while let Some(i) = stack.pop() {
            size += 1;
            let (x, y) = (i % w, i / w);
            let mut visit = |j: usize| {
                if lit[j] && label[j] == 0 {
                    label[j] = next;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(i - 1);
            }
            if x + 1 < w {
                visit(i + 1);
            }
            if y > 0 {
                visit(i - w);
            }
            if y + 1 < h {
                visit(i + w);
            }
        }
        sizes.push(size);
    }
    let mut order: Vec<u32> = (1..sizes.len() as u32).collect();
    order.sort_by_key(|&l| std::cmp::Reverse(sizes[l as usize]));
    let best = *order.first()?;
    let best_size = sizes[best as usize];
    // A readable board has cells of at least 4 px: 18² cells of 16 px².
    if best_size < 18 * 18 * 16 {
        return None;
    }
    let mut chosen = vec![false; sizes.len()];
    chosen[best as usize] = true;
    let mut outline = pieces_outline(&label, w, h, &chosen, meter);
    for &piece in order.iter().skip(1).take(MAX_PIECES) {
        if sizes[piece as usize] * MIN_PIECE_SHARE < best_size {
            break;
        }
        // A piece of the same board is parted from it by stones only: within a cell of it.
        let Some(current) = outline.as_ref() else { break };
        let reach = (0..4)
            .map(|i| {
                let (a, b) = (current.quad[i], current.quad[(i + 1) % 4]);
                (a[0] - b[0]).hypot(a[1] - b[1])
            })
            .fold(0.0, f64::max)
            / PIECE_REACH_DIVISOR;
        if !within_reach(&label, w, h, &chosen, piece, reach, meter) {
            continue;
        }
        chosen[piece as usize] = true;
        let joined = pieces_outline(&label, w, h, &chosen, meter);
        // Joined when the union fills its outline (the frame may cut both) and it is larger.
        let larger = joined.as_ref().is_some_and(|j| j.fills && quad_area(&j.quad) > quad_area(&current.quad));
        if larger {
            outline = joined;
        } else {
            chosen[piece as usize] = false;
        }
    }
    outline
}

/// Pieces are joined only within a cell of the chosen regions, a cell being the current
/// outline's longest side over this (a priori: a board's side holds 18 cells and two margins of
/// about a cell; a chain of stones one stone wide parts two pieces by about a cell, while another
/// board or lit thing on the table lies beyond a strip of table).
const PIECE_REACH_DIVISOR: f64 = 20.0;

/// Whether any pixel of region `piece` lies within `reach` pixels (chessboard distance) of the
/// `chosen` regions.
fn within_reach(label: &[u32], w: usize, h: usize, chosen: &[bool], piece: u32, reach: f64, meter: &WorkMeter) -> bool {
    let r = reach.ceil().max(1.0) as usize;
    meter.charge(2 * (w * h) as u64);
    // Within r of a chosen pixel along the row, then along the column: a square dilation.
    let mut near_row = vec![false; w * h];
    for y in 0..h {
        let row = &label[y * w..(y + 1) * w];
        let mut last: Option<usize> = None;
        for x in 0..w {
            if chosen[row[x] as usize] {
                last = Some(x);
            }
            near_row[y * w + x] = last.is_some_and(|l| x - l <= r);
        }
        let mut next: Option<usize> = None;
        for x in (0..w).rev() {
            if chosen[row[x] as usize] {
                next = Some(x);
            }
            near_row[y * w + x] |= next.is_some_and(|n| n - x <= r);
        }
    }
    for x in 0..w {
        let (mut last, mut next): (Option<usize>, Option<usize>) = (None, None);
        let mut near = vec![false; h];
        for y in 0..h {
            if near_row[y * w + x] {
                last = Some(y);
            }
            near[y] = last.is_some_and(|l| y - l <= r);
        }
        for y in (0..h).rev() {
            if near_row[y * w + x] {
                next = Some(y);
            }
            if (near[y] || next.is_some_and(|n| n - y <= r)) && label[y * w + x] == piece {
                return true;
            }
        }
    }
    false
}

/// The outline of the lit regions whose labels are `chosen`, taken together: their outer
/// boundary (extreme pixels per row and per column, except where the image's border cuts it
/// off) and whether it is a whole board's.
fn pieces_outline(label: &[u32], w: usize, h: usize, chosen: &[bool], meter: &WorkMeter) -> Option<RegionOutline> {
    let member = |l: u32| chosen[l as usize];
    let mut points: Vec<[f64; 2]> = Vec::new();
    let (mut spanned, mut cut_off) = (0usize, false);
    let inside = |x: usize, y: usize| x >= 2 && y >= 2 && x + 2 < w && y + 2 < h;
    for y in 0..h {
        let row = &label[y * w..(y + 1) * w];
        if let (Some(a), Some(b)) = (row.iter().position(|&l| member(l)), row.iter().rposition(|&l| member(l))) {
            spanned += b + 1 - a;
            cut_off |= !inside(a, y) || !inside(b, y);
            points.extend([a, b].into_iter().filter(|&x| inside(x, y)).map(|x| [x as f64, y as f64]));
        }
    }
    for x in 0..w {
        let ys = (0..h).filter(|&y| member(label[y * w + x]));
        let (first, last) = ys.fold((None, None), |(f, _), y| (f.or(Some(y)), Some(y)));
        if let (Some(a), Some(b)) = (first, last) {
            points.extend([a, b].into_iter().filter(|&y| inside(x, y)).map(|y| [x as f64, y as f64]));
        }
    }
    meter.charge(points.len() as u64 * HOUGH_ANGLES as u64 + (w * h) as u64);
    let quad = clockwise_from_top_left(four_sides(&points, w.min(h) as f64)?);
    let fills = (FILL_RATIO_RANGE.0..=FILL_RATIO_RANGE.1).contains(&(quad_area(&quad) / spanned.max(1) as f64));
    Some(RegionOutline { quad, fills, whole: !cut_off && fills })
}

/// Area of a quadrilateral (shoelace; either winding).
fn quad_area(q: &[[f64; 2]; 4]) -> f64 {
    let twice: f64 = (0..4).map(|i| q[i][0] * q[(i + 1) % 4][1] - q[(i + 1) % 4][0] * q[i][1]).sum();
    twice.abs() / 2.0
}

/// Hough angle bins over 180° for the outline's sides.
const HOUGH_ANGLES: usize = 180;
/// Opposite sides are at least this fraction of the image's shorter side apart (a priori: it
/// keeps a second peak of the same side, its other edge or the board's side face, from being
/// taken for the opposite side; a board this look is for fills much of the frame).
const MIN_SIDE_SEPARATION: f64 = 0.2;
/// Fewest boundary points on a side (a priori: a board with cells of the smallest readable
/// size, 4 px, has sides of 72 px; 20 leaves room for a side mostly hidden by stones or cut off).
const MIN_SIDE_POINTS: u32 = 20;

/// The quadrilateral of the four strongest straight sides of the boundary: two pairs of nearly
/// parallel lines (within 30°, seen in perspective), the pairs at least 45° apart. `None` when
/// a side is missing (a board cut off by the frame on a whole side).
fn four_sides(points: &[[f64; 2]], short_side: f64) -> Option<[[f64; 2]; 4]> {
    let rho_step = 2.0;
    let max_rho = points.iter().map(|p| p[0].hypot(p[1])).fold(0.0, f64::max) + 2.0;
    let rho_bins = (2.0 * max_rho / rho_step).ceil() as usize + 1;
    let mut acc = vec![0u32; HOUGH_ANGLES * rho_bins];
    let table: Vec<(f64, f64)> =
        (0..HOUGH_ANGLES).map(|t| (t as f64 * std::f64::consts::PI / HOUGH_ANGLES as f64).sin_cos()).collect();
    for p in points {
        for (t, &(s, c)) in table.iter().enumerate() {
            let r = ((p[0] * c + p[1] * s + max_rho) / rho_step) as usize;
            if r < rho_bins {
                acc[t * rho_bins + r] += 1;
            }
        }
    }
    // Peaks: local maxima over ±5° and ±5 bins.
    let mut peaks: Vec<(u32, usize, f64)> = accumulator_peaks(&acc, HOUGH_ANGLES, rho_bins, (5, 5), 0, MIN_SIDE_POINTS)
        .into_iter()
        .map(|(t, r, v)| (v, t, r as f64 * rho_step - max_rho))
        .collect();
    peaks.sort_by_key(|p| std::cmp::Reverse(p.0));
    let angle_gap = |a: usize, b: usize| {
        let d = (a as i32 - b as i32).rem_euclid(HOUGH_ANGLES as i32);
        d.min(HOUGH_ANGLES as i32 - d)
    };
    // Signed distance between two nearly parallel lines, measured along the first's normal.
    let apart = |a: &(u32, usize, f64), b: &(u32, usize, f64)| {
        let rb = if (a.1 as i32 - b.1 as i32).abs() > HOUGH_ANGLES as i32 / 2 { -b.2 } else { b.2 };
        (a.2 - rb).abs()
    };
    let first = *peaks.first()?;
    let opposite = |of: &(u32, usize, f64)| {
        peaks.iter().find(|p| angle_gap(p.1, of.1) <= 30 && apart(of, p) >= MIN_SIDE_SEPARATION * short_side).copied()
    };
    let second = opposite(&first)?;
    let third = *peaks.iter().find(|p| angle_gap(p.1, first.1) >= 45 && angle_gap(p.1, second.1) >= 45)?;
    let fourth = opposite(&third)?;
    let line = |p: &(u32, usize, f64)| {
        let (s, c) = table[p.1];
        [c, s, -p.2]
    };
    let meet = |a: [f64; 3], b: [f64; 3]| {
        let z = a[0] * b[1] - a[1] * b[0];
        (z.abs() > 1e-9).then(|| [(a[1] * b[2] - a[2] * b[1]) / z, (a[2] * b[0] - a[0] * b[2]) / z])
    };
    let (a, b, c, d) = (line(&first), line(&third), line(&second), line(&fourth));
    Some([meet(a, b)?, meet(b, c)?, meet(c, d)?, meet(d, a)?])
}

/// The corners turning clockwise as seen (image y down), starting with the one nearest the
/// image's top-left.
fn clockwise_from_top_left(q: [[f64; 2]; 4]) -> [[f64; 2]; 4] {
    let turn = (q[1][0] - q[0][0]) * (q[2][1] - q[1][1]) - (q[1][1] - q[0][1]) * (q[2][0] - q[1][0]);
    let q = if turn < 0.0 { [q[0], q[3], q[2], q[1]] } else { q };
    let start = (0..4).min_by(|&a, &b| (q[a][0] + q[a][1]).total_cmp(&(q[b][0] + q[b][1]))).unwrap_or(0);
    std::array::from_fn(|k| q[(start + k) % 4])
}

/// A first lattice inside the outline, in full-resolution pixels: 19 lines of each family
/// centred in it, the margin and phase of each family chosen by the oriented line evidence
/// along the 19 lines. `None` when the outline spans no homography.
pub(crate) fn lattice_in_outline(
    work: &Working,
    outline: &[[f64; 2]; 4],
    lens: crate::LensDistortion,
    meter: &WorkMeter,
) -> Option<GridGeometry> {
    let square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    let full: Vec<PointPair> =
        square.iter().zip(outline).map(|(&from, &to)| PointPair { from, to: work.to_full(to) }).collect();
    let to_image = homography::fit(&full)?;
    let last = (BOARD_LINES - 1) as f64;
    // Board (c, r) → outline (u, v) for a margin and phase per family.
    let geometry = |(mu, pu): (f64, f64), (mv, pv): (f64, f64)| {
        let (su, sv) = (1.0 / (last + 2.0 * mu), 1.0 / (last + 2.0 * mv));
        let a = nalgebra::Matrix3::new(su, 0.0, (mu + pu) * su, 0.0, sv, (mv + pv) * sv, 0.0, 0.0, 1.0);
        let m = to_image * a;
        GridGeometry { homography: refine::to_rows(&(m / m[(2, 2)])), lens }
    };
    let steps = ((MARGIN_RANGE_CELLS.1 - MARGIN_RANGE_CELLS.0) / MARGIN_STEP_CELLS).round() as i32;
    let candidates: Vec<(f64, f64)> = (0..=steps)
        .flat_map(|i| {
            let m = MARGIN_RANGE_CELLS.0 + f64::from(i) * MARGIN_STEP_CELLS;
            (-PHASE_STEPS / 2..PHASE_STEPS / 2).map(move |p| (m, f64::from(p) / f64::from(PHASE_STEPS)))
        })
        .collect();
    meter.charge(2 * candidates.len() as u64 * (BOARD_LINES * 36 * 3) as u64);
    let neutral = (0.6, 0.0);
    let best = |columns: bool| {
        candidates
            .iter()
            .map(|&c| {
                let g = if columns { geometry(c, neutral) } else { geometry(neutral, c) };
                (refine::family_oriented_evidence(work, &g, columns), c)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, c)| c)
    };
    Some(geometry(best(true)?, best(false)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{GrayImage, Luma};

    /// Each corner of `quad` within 4 px of the wood's corner `margin` cells outside the grid.
    fn assert_outlines_the_wood(quad: &[[f64; 2]; 4], truth: &GridGeometry, margin: f64) {
        let wood =
            [[-margin, -margin], [18.0 + margin, -margin], [18.0 + margin, 18.0 + margin], [-margin, 18.0 + margin]];
        for (q, w) in quad.iter().zip(wood) {
            let p = truth.project(w[0], w[1]);
            assert!((q[0] - p[0]).hypot(q[1] - p[1]) < 4.0, "margin {margin}: corner {q:?} vs {p:?}");
        }
    }

    #[test]
    fn the_outline_is_the_boards_wood_and_the_lattice_sits_centred_in_it() {
        for margin in [0.4, 0.9, 1.6] {
            let (img, truth) = super::super::board_on_a_dark_table(margin);
            let meter = WorkMeter::unlimited();
            let work = super::super::working(&img, &meter);
            let quad = board_outline(&work, &meter).expect("an outline");
            assert_outlines_the_wood(&quad, &truth, margin);
            let lattice = lattice_in_outline(&work, &quad, truth.lens, &meter).expect("a lattice");
            for (c, r) in [(0.0, 0.0), (18.0, 0.0), (18.0, 18.0), (0.0, 18.0), (9.0, 9.0)] {
                let (a, b) = (lattice.project(c, r), truth.project(c, r));
                assert!((a[0] - b[0]).hypot(a[1] - b[1]) < 0.3 * 24.0, "margin {margin}: ({c}, {r}) {a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn a_table_lit_like_the_board_at_the_first_floor_is_left_out_by_a_raised_one() {
        // A mid-grey table (100 of the wood's 200) is above 0.45 of the bright end: at the first
        // floor it joins the board into one region running to the frame's border.
        let margin = 0.9;
        let (img, truth) = super::super::board_on_a_table(margin, 100);
        let meter = WorkMeter::unlimited();
        let work = super::super::working(&img, &meter);
        let bright = bright_end(&work.plane);
        assert!(lit_region_outline(&work, LIT_FRACTION * bright, &meter).is_none_or(|o| !o.whole));
        let quad = board_outline(&work, &meter).expect("an outline at a raised floor");
        assert_outlines_the_wood(&quad, &truth, margin);
    }

    #[test]
    fn a_board_split_by_a_chain_of_dark_stones_is_outlined_whole() {
        // A column of dark stones from the top edge to the bottom edge splits the lit wood into
        // two pieces; the larger alone is a whole-looking part of the board.
        let margin = 0.9;
        let (mut img, truth) = super::super::board_on_a_dark_table(margin);
        let (cell, origin) = (24.0, 70.0);
        for (x, y, p) in img.enumerate_pixels_mut() {
            let (u, v) = ((f64::from(x) - origin) / cell, (f64::from(y) - origin) / cell);
            if (u - 12.0).abs() < 0.46 && (-margin..=18.0 + margin).contains(&v) {
                *p = Luma([30]);
            }
        }
        let meter = WorkMeter::unlimited();
        let work = super::super::working(&img, &meter);
        let quad = board_outline(&work, &meter).expect("an outline");
        assert_outlines_the_wood(&quad, &truth, margin);
    }

    #[test]
    fn a_region_cut_off_by_the_frame_on_every_side_has_no_outline() {
        let img = GrayImage::from_fn(300, 300, |x, y| Luma([if (x / 7 + y / 5) % 2 == 0 { 30 } else { 60 }]));
        let meter = WorkMeter::unlimited();
        let work = super::super::working(&img, &meter);
        // Every pixel is lit (the floor is 0.45 of the lighter grey): the region reaches the
        // frame's border on every side, so no side of it is seen.
        assert!(board_outline(&work, &meter).is_none());
    }
}
