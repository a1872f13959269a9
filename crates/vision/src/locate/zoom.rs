//! The zoom, for a board small in a large frame: when no look finds a board in the working
//! image, the regions where line pixels run in two directions (a lattice; a table's grain runs
//! in one, stones' rims in none) are cut out of the full-resolution frame with room for the
//! board's margin, and each cut is searched as a frame of its own — at its own resolution (a
//! board 200 px across a 1080p frame has cells of 5 working pixels, of 10 in the cut) and
//! without the rest of the frame's lines voting in its Hough transform and comb.

use super::lattice::{self, LinePixel};
use super::refine::Working;
use crate::GridGeometry;
use tengen_rules::BOARD_LINES;

/// Side of a block of the working image whose line pixels are counted, in working pixels
/// (a priori: two to four cells of a board small enough to need the zoom, whose working cells
/// are 4–8 px, so a block holds several lines of each family).
const BLOCK_PX: usize = 16;
/// Orientation bins over 180° (15° each); a family is two neighbouring bins (30°), so the
/// lines of one family seen in perspective, or across a bin's edge, stay in one family.
const ANGLE_BINS: usize = 12;
/// Fewest bins between the two families' first bins: 30°, as the lattice search pairs its
/// line families (`lattice::families`).
const MIN_FAMILY_BINS_APART: usize = 2;
/// Fewest line pixels of each of two families in a block for it to hold part of a lattice (a
/// priori: a quarter of the block's side; one grid line crossing the block gives its whole side
/// less what stones hide, a table's grain gives one family only, stones' rims are not straight).
const MIN_FAMILY_PX: u32 = (BLOCK_PX / 4) as u32;
/// Lattice blocks at most this many blocks apart belong to one region (a priori: a crowded
/// board hides whole blocks of lines under its stones; a gap of one block bridges them).
const REGION_REACH_BLOCKS: usize = 2;
/// Share of a region's evidence left out at each end of its extent along each axis (a priori:
/// a few weak blocks joined to a board's region hold little of its evidence; the cut's margin
/// makes up for the board's own blocks left out).
const EXTENT_QUANTILE: f64 = 0.05;
/// Longest region, as a fraction of the frame's shorter side (a priori: the zoom is for a board
/// small in its frame; a board spanning half the shorter side of a working image of up to 1000
/// px has cells of 14 working px or more, which the search reads without it).
pub(crate) const MAX_REGION_FRACTION: f64 = 0.5;
/// Room around a region on each side, as a fraction of its size (a priori: the board's margin,
/// up to about 2.5 cells of 18, and outer lines hidden under stones at the region's edge).
const CUT_MARGIN: f64 = 0.3;
/// Share of the frame's lattice evidence (line pixels of the weaker family, summed over its
/// lattice blocks) that the cut must hold (a priori: the zoom is for one small board in a
/// frame otherwise without a lattice; a region holding less is a fragment of a board that
/// fills the frame, whose stones hide most of its lines, or one of several boards).
const MIN_EVIDENCE_SHARE: f64 = 0.5;
/// Smallest region side, in full-resolution pixels: 18 cells of the smallest readable cell
/// (the search's `MIN_CELL_PX`, 4 px).
const MIN_REGION_FULL_PX: f64 = 18.0 * 4.0;

/// A rectangle of the full-resolution frame to search on its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cut {
    /// Left and top, in frame pixels.
    pub x0: u32,
    pub y0: u32,
    /// Width and height, in frame pixels.
    pub width: u32,
    pub height: u32,
    /// Which sides (left, top, right, bottom) lie on the frame's own border.
    pub on_frame_border: [bool; 4],
}

/// The region of `fine` whose line pixels form a lattice, as a cut of a `frame_w`×`frame_h`
/// frame, when it is worth a search of its own: it holds most of the frame's lattice evidence
/// and its cut is searched at a finer working scale than the frame (`working_factor`).
pub(crate) fn candidate_cut(
    fine: &Working,
    pixels: &[LinePixel],
    frame_w: u32,
    frame_h: u32,
    working_factor: impl Fn(u32, u32) -> usize,
) -> Result<Cut, String> {
    let (w, h) = (fine.plane.width, fine.plane.height);
    let (bw, bh) = (w.div_ceil(BLOCK_PX), h.div_ceil(BLOCK_PX));
    if bw == 0 || bh == 0 {
        return Err("no working image".into());
    }
    // Only lines on a lit surface: a board's lines are drawn on light wood; a dark table's
    // grain and JPEG blocks are not.
    let pixels = lattice::lit_pixels(pixels, &fine.plane);
    let mut counts = vec![[0u32; ANGLE_BINS]; bw * bh];
    let bin_width = std::f32::consts::PI / ANGLE_BINS as f32;
    for p in &pixels {
        let (bx, by) = ((p.x.max(0.0) as usize / BLOCK_PX).min(bw - 1), (p.y.max(0.0) as usize / BLOCK_PX).min(bh - 1));
        let angle = p.normal.rem_euclid(std::f32::consts::PI);
        counts[by * bw + bx][((angle / bin_width) as usize).min(ANGLE_BINS - 1)] += 1;
    }
    let scores: Vec<u32> = counts.iter().map(two_family_score).collect();

    // Regions: lattice blocks within REGION_REACH_BLOCKS of each other.
    let mut region = vec![usize::MAX; bw * bh];
    let mut regions: Vec<(u32, Vec<usize>)> = Vec::new();
    let reach = REGION_REACH_BLOCKS as isize;
    for start in 0..bw * bh {
        if scores[start] < MIN_FAMILY_PX || region[start] != usize::MAX {
            continue;
        }
        let id = regions.len();
        let (mut sum, mut members) = (0u32, Vec::new());
        let mut stack = vec![start];
        region[start] = id;
        while let Some(i) = stack.pop() {
            let (x, y) = (i % bw, i / bw);
            sum += scores[i];
            members.push(i);
            for dy in -reach..=reach {
                for dx in -reach..=reach {
                    let (nx, ny) = (x as isize + dx, y as isize + dy);
                    if nx < 0 || ny < 0 || nx >= bw as isize || ny >= bh as isize {
                        continue;
                    }
                    let j = ny as usize * bw + nx as usize;
                    if scores[j] >= MIN_FAMILY_PX && region[j] == usize::MAX {
                        region[j] = id;
                        stack.push(j);
                    }
                }
            }
        }
        regions.push((sum, members));
    }
    let Some((_, members)) = regions.iter().max_by_key(|r| r.0) else {
        return Err("no region of crossing lines".into());
    };
    // The region's extent: where the middle of its evidence lies along each axis, so that a few
    // weak blocks joined to it (a bowl's rim, a stone's shadow) do not stretch it.
    let extent = |coord: fn(usize, usize) -> usize| {
        let mut v: Vec<(usize, u32)> = members.iter().map(|&i| (coord(i, bw), scores[i])).collect();
        v.sort_unstable();
        let total: u32 = v.iter().map(|p| p.1).sum();
        let quantile = |q: f64| {
            let mut acc = 0u32;
            v.iter()
                .find(|p| {
                    acc += p.1;
                    f64::from(acc) >= q * f64::from(total)
                })
                .map_or(0, |p| p.0)
        };
        (quantile(EXTENT_QUANTILE), quantile(1.0 - EXTENT_QUANTILE))
    };
    let ((bx0, bx1), (by0, by1)) = (extent(|i, bw| i % bw), extent(|i, bw| i / bw));
    // The region in frame pixels, then grown by the margin and clipped to the frame.
    let a = fine.to_full([(bx0 * BLOCK_PX) as f64, (by0 * BLOCK_PX) as f64]);
    let b = fine.to_full([((bx1 + 1) * BLOCK_PX).min(w) as f64, ((by1 + 1) * BLOCK_PX).min(h) as f64]);
    let (rw, rh) = (b[0] - a[0], b[1] - a[1]);
    if rw.max(rh) < MIN_REGION_FULL_PX {
        return Err(format!("the region of crossing lines, {rw:.0}×{rh:.0} px, is too small for a board"));
    }
    if rw.max(rh) > MAX_REGION_FRACTION * f64::from(frame_w.min(frame_h)) {
        return Err(format!("the region of crossing lines, {rw:.0}×{rh:.0} px, is no small board"));
    }
    let (mx, my) = (CUT_MARGIN * rw, CUT_MARGIN * rh);
    let x0 = (a[0] - mx).max(0.0).floor();
    let y0 = (a[1] - my).max(0.0).floor();
    let x1 = (b[0] + mx).min(f64::from(frame_w)).ceil();
    let y1 = (b[1] + my).min(f64::from(frame_h)).ceil();
    let cut = Cut {
        x0: x0 as u32,
        y0: y0 as u32,
        width: (x1 - x0) as u32,
        height: (y1 - y0) as u32,
        on_frame_border: [x0 <= 0.0, y0 <= 0.0, x1 >= f64::from(frame_w), y1 >= f64::from(frame_h)],
    };
    if working_factor(cut.width, cut.height) >= fine.factor {
        return Err(format!("a cut of {}×{} px would be searched no finer than the frame", cut.width, cut.height));
    }
    // The lattice evidence inside the cut against the whole frame's.
    let inside = |i: usize| {
        let p = fine.to_full([((i % bw) * BLOCK_PX) as f64, ((i / bw) * BLOCK_PX) as f64]);
        p[0] >= x0 && p[1] >= y0 && p[0] < x1 && p[1] < y1
    };
    let lattice = |i: &usize| scores[*i] >= MIN_FAMILY_PX;
    let total: u32 = (0..bw * bh).filter(lattice).map(|i| scores[i]).sum();
    let held: u32 = (0..bw * bh).filter(lattice).filter(|&i| inside(i)).map(|i| scores[i]).sum();
    if f64::from(held) < MIN_EVIDENCE_SHARE * f64::from(total) {
        return Err(format!(
            "the strongest region of crossing lines holds {held} of the frame's {total}: no lone small board"
        ));
    }
    Ok(cut)
}

/// The line pixels of the weaker of a block's two strongest families at least 30° apart.
fn two_family_score(bins: &[u32; ANGLE_BINS]) -> u32 {
    let family = |i: usize| bins[i] + bins[(i + 1) % ANGLE_BINS];
    let mut best = 0;
    for i in 0..ANGLE_BINS {
        for j in i + 1..ANGLE_BINS {
            let apart = (j - i).min(ANGLE_BINS - (j - i));
            if apart >= MIN_FAMILY_BINS_APART {
                best = best.max(family(i).min(family(j)));
            }
        }
    }
    best
}

/// The side of the cut (`"left"`, `"top"`, `"right"`, `"bottom"`) that a grid found in it comes
/// within a cell of, where the cut is not the frame's own border: there the lattice may go on
/// beyond the cut (a part of a larger board, or of its neighbour), so the grid is not trusted.
/// The grid is in the cut's pixels.
pub(crate) fn reaches_inner_border(cut: &Cut, grid: &GridGeometry) -> Option<&'static str> {
    let last = BOARD_LINES as f64;
    let ring = (-1..=BOARD_LINES as i32).flat_map(|t| {
        let t = f64::from(t);
        [(-1.0, t), (last, t), (t, -1.0), (t, last)]
    });
    let (w, h) = (f64::from(cut.width), f64::from(cut.height));
    for (c, r) in ring {
        let p = grid.project(c, r);
        let beyond = [p[0] < 0.0, p[1] < 0.0, p[0] >= w, p[1] >= h];
        for (side, name) in ["left", "top", "right", "bottom"].into_iter().enumerate() {
            if beyond[side] && !cut.on_frame_border[side] {
                return Some(name);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::lattice;
    use crate::locate::refine::Working;
    use crate::locate::response;
    use crate::work::WorkMeter;
    use crate::LensDistortion;
    use image::GrayImage;

    /// A small straight-on board (cells of `cell` px) drawn at `origin` on a plain table.
    fn small_board(frame: (u32, u32), origin: [f64; 2], cell: f64) -> GrayImage {
        crate::locate::drawn_board(frame, origin, cell, 0.8, 0.6, [90, 60, 210]).0
    }

    fn factor_of(w: u32, h: u32) -> usize {
        crate::locate::working_factor(w, h)
    }

    fn working(gray: &GrayImage, factor: usize) -> Working {
        let plane = response::working_plane(gray, factor);
        Working { resp: response::line_response(&plane), plane, factor }
    }

    #[test]
    fn a_small_board_gives_one_cut_around_it_and_a_plain_frame_none() {
        let (frame, origin, cell) = ((1600, 1000), [900.0, 420.0], 12.0);
        let gray = small_board(frame, origin, cell);
        let fine = working(&gray, 2);
        let pixels = lattice::line_pixels(&fine.resp, &WorkMeter::unlimited());
        let cut = candidate_cut(&fine, &pixels, frame.0, frame.1, factor_of).expect("a cut");
        let span = 18.0 * cell;
        // The whole grid is inside the cut, with room beyond it.
        assert!(f64::from(cut.x0) < origin[0] - cell && f64::from(cut.y0) < origin[1] - cell, "{cut:?}");
        assert!(f64::from(cut.x0 + cut.width) > origin[0] + span + cell, "{cut:?}");
        assert!(f64::from(cut.y0 + cut.height) > origin[1] + span + cell, "{cut:?}");
        assert_eq!(cut.on_frame_border, [false; 4]);

        let plain = GrayImage::from_pixel(frame.0, frame.1, image::Luma([120]));
        let fine = working(&plain, 2);
        let pixels = lattice::line_pixels(&fine.resp, &WorkMeter::unlimited());
        assert!(candidate_cut(&fine, &pixels, frame.0, frame.1, factor_of).is_err());
    }

    #[test]
    fn parallel_lines_alone_are_no_lattice() {
        // A table's grain: dark lines of one direction only.
        let gray = GrayImage::from_fn(1600, 1000, |x, _| image::Luma([if x % 12 < 2 { 60 } else { 200 }]));
        let fine = working(&gray, 2);
        let pixels = lattice::line_pixels(&fine.resp, &WorkMeter::unlimited());
        assert!(!pixels.is_empty());
        assert!(candidate_cut(&fine, &pixels, 1600, 1000, factor_of).is_err());
    }

    #[test]
    fn a_grid_at_an_inner_border_of_the_cut_is_not_trusted() {
        let cut = Cut { x0: 0, y0: 0, width: 300, height: 300, on_frame_border: [true, false, false, false] };
        let lens = LensDistortion::none(300, 300);
        let at = |x: f64, y: f64| GridGeometry { homography: [[12.0, 0.0, x], [0.0, 12.0, y], [0.0, 0.0, 1.0]], lens };
        assert_eq!(reaches_inner_border(&cut, &at(40.0, 40.0)), None);
        // Within a cell of the left side, which is the frame's border: still trusted.
        assert_eq!(reaches_inner_border(&cut, &at(5.0, 40.0)), None);
        assert_eq!(reaches_inner_border(&cut, &at(40.0, 5.0)), Some("top"));
        assert_eq!(reaches_inner_border(&cut, &at(40.0, 75.0)), Some("bottom"));
    }

    #[test]
    fn a_translated_grid_projects_each_point_moved_by_the_offset() {
        let lens = LensDistortion { k1: -0.1, centre: [150.0, 120.0], scale: 190.0 };
        let grid = GridGeometry { homography: [[12.0, 1.0, 30.0], [0.5, 11.0, 25.0], [0.0001, 0.0, 1.0]], lens };
        let moved = grid.translated([400.0, 250.0]);
        for (c, r) in [(0.0, 0.0), (18.0, 0.0), (9.0, 9.0), (3.5, 17.0)] {
            let (a, b) = (grid.project(c, r), moved.project(c, r));
            assert!((b[0] - a[0] - 400.0).abs() < 1e-9 && (b[1] - a[1] - 250.0).abs() < 1e-9, "{a:?} {b:?}");
        }
    }
}
