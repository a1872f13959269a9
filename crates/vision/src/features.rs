//! Per-point measurements on a rectified board, all relative to the local board colour so that
//! light level, shadows and colour casts divide out: stone-disc brightness and neutrality, and the
//! visibility of the grid-line cross that only an empty point shows.

use tengen_rules::BOARD_LINES;

use crate::board_field::brighter_than_the_wood;
use crate::rectify::{CameraFoot, RectifiedBoard};

/// Radius of the sampled stone disc, in grid spacings (a stone's radius is about 0.48).
const DISC_RADIUS: f64 = 0.3;
/// Half-size of the box sampled at each cell centre for the board colour, in grid spacings.
const CELL_BOX: f64 = 0.12;
/// Distances along each grid-line arm where the line is sampled, in grid spacings.
const ARM_STEPS: [f64; 3] = [0.18, 0.26, 0.34];
/// Sideways offset of the off-line reference samples next to an arm, in grid spacings.
const ARM_SIDE: f64 = 0.2;

/// Smallest denominator of the line contrast, as a fraction of the local board luminance.
const WEBER_FLOOR: f32 = 1.0;

/// Disc positions tried around a point's expected stone top, in grid spacings (centre first).
/// Only the centre: trying discs shifted by 0.2 spacing (for stones knocked off their point) was
/// measured to turn bright wood grain and glare next to empty points into white stones on the
/// imago and gomrade photos (t3: 0 → 23 wrong points per frame), so a knocked stone is read
/// only as far as it still covers the centred disc (offsets up to about 0.2 spacing).
const SEARCH_SHIFTS: [(f64, f64); 1] = [(0.0, 0.0)];
/// Evidence margin by which a shifted disc must beat the centred one.
const CENTRE_PREFERENCE: f32 = 0.1;

/// Cells per side of the board-colour map: one per cell centre, including the margin cells.
pub const CELLS: usize = BOARD_LINES + 1;

/// Relative luminance (Rec. 601 weights) of an RGB sample.
pub fn luma(rgb: [f32; 3]) -> f32 {
    0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]
}

/// The colour of the board at each cell centre (between four intersections, where no stone on
/// an intersection reaches), and a robust whole-board estimate.
#[derive(Debug, Clone)]
pub struct BoardColour {
    /// Mean RGB at cell centre (i, j) = board position (i - 0.5, j - 0.5), i, j in 0..=19;
    /// index `j * CELLS + i`. NaN where outside the image.
    pub cells: Vec<[f32; 3]>,
    /// Per-channel median over all cells on the board: the frame's board colour.
    pub global: [f32; 3],
    /// Whether each cell looks like bare board (close to the frame's board colour).
    pub board_like: Vec<bool>,
    /// Colour distance of each cell from the board colour (0 = identical).
    pub distance: Vec<f32>,
    /// Fraction of each cell's grid-line edges that are visibly there (NaN for margin corner
    /// cells, which have none). A hand or sleeve hides them; glare and shadows do not.
    pub lattice: Vec<f32>,
    /// [`BoardColour::local`] of every intersection, `row * 19 + col`, measured once (the
    /// classical features and the learned reader's patches both need it); empty when the
    /// colours were not measured by [`BoardColour::measure`] (then `local` computes each).
    pub(crate) local_colours: Vec<[f32; 3]>,
}

/// How different a cell may be from the frame's board colour in chromaticity (log channel-ratio
/// distance) and still count as bare board; wood grain and mild shading stay well inside.
const BOARD_CHROMA_TOLERANCE: f32 = 0.18;
/// Brightness range, relative to the frame's board colour, of bare board (shadows and lamps).
const BOARD_LUMA_RANGE: (f32, f32) = (0.45, 1.7);

impl BoardColour {
    /// Measures the board colour of a rectified board.
    pub fn measure(board: &RectifiedBoard) -> Self {
        let spc = board.samples_per_cell as f64;
        let half = (CELL_BOX * spc).round().max(0.0) as i64;
        let mut cells = Vec::with_capacity(CELLS * CELLS);
        for j in 0..CELLS {
            for i in 0..CELLS {
                let cx = board.index_of(i as f64 - 0.5);
                let cy = board.index_of(j as f64 - 0.5);
                let mut acc = [0.0f32; 3];
                let mut n = 0.0f32;
                for dy in -half..=half {
                    for dx in -half..=half {
                        let s = board.at(cx + dx as f64, cy + dy as f64);
                        if s[0].is_finite() {
                            for k in 0..3 {
                                acc[k] += s[k];
                            }
                            n += 1.0;
                        }
                    }
                }
                cells.push(if n > 0.0 { [acc[0] / n, acc[1] / n, acc[2] / n] } else { [f32::NAN; 3] });
            }
        }
        // The inner 18×18 cells are the most reliably wood (the margin may be cut by the frame).
        let mut chans: [Vec<f32>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        for j in 1..CELLS - 1 {
            for i in 1..CELLS - 1 {
                let c = cells[j * CELLS + i];
                if c[0].is_finite() {
                    for k in 0..3 {
                        chans[k].push(c[k]);
                    }
                }
            }
        }
        let global = [median(&mut chans[0]), median(&mut chans[1]), median(&mut chans[2])];
        let distance: Vec<f32> = cells.iter().map(|c| colour_distance(*c, global)).collect();
        let board_like = distance.iter().map(|d| *d <= 1.0).collect();
        let global_l = luma(global).max(1.0);
        let mut lattice = Vec::with_capacity(CELLS * CELLS);
        for j in 0..CELLS {
            for i in 0..CELLS {
                lattice.push(cell_lattice(board, i, j, global_l));
            }
        }
        let mut colour = Self { cells, global, board_like, distance, lattice, local_colours: Vec::new() };
        colour.local_colours =
            (0..BOARD_LINES * BOARD_LINES).map(|k| colour.local_from_cells(k % BOARD_LINES, k / BOARD_LINES)).collect();
        colour
    }

    /// Local board colour around intersection (col, row): the median of the plausible-board
    /// cells in the 4×4 cells around it, the 4 nearest counted twice. Cells are not required to
    /// match the frame's board colour closely, so a glare patch or a shadow serves as its own
    /// reference; only what is clearly a stone (very dark, or missing) is left out, because on
    /// oblique views a stone's top can spill over a neighbouring cell centre.
    pub fn local(&self, col: usize, row: usize) -> [f32; 3] {
        match self.local_colours.get(row * BOARD_LINES + col) {
            Some(&c) if col < BOARD_LINES => c,
            _ => self.local_from_cells(col, row),
        }
    }

    /// [`BoardColour::local`] computed from the cells.
    fn local_from_cells(&self, col: usize, row: usize) -> [f32; 3] {
        self.window_median(col, row, 0, &[]).unwrap_or(self.global)
    }

    /// The same colours with each point's reference taken from the wood the board's light field
    /// explains (`board_field`), for the points whose reference has itself turned the colour of
    /// the frame's white stones (`whites`, within the bare-board tolerance of
    /// [`colour_distance`]). A cell is left out of it as a white top leaning over its centre
    /// when a stone on one of its corners can cover the centre on this view (`reachable`,
    /// `j * CELLS + i`), it is brighter than the field by more than the wood varies, and it is
    /// coloured like the whites and no brighter than they are (a lamp's reflection on the wood
    /// can be as white as a stone, but brighter than any). The window widens (up to two cells
    /// a side) until it holds four samples; where it still does not, the reference stays.
    /// `None` where nothing changes.
    ///
    /// The reader classifies against these; the occlusion tests keep [`BoardColour::local`],
    /// where a pale hand or a glare spot is its own reference and so reads unlike any stone.
    pub fn wood_reference(&self, whites: FrameWhites, reachable: &[bool]) -> Option<BoardColour> {
        // Only a reference that has itself turned the colour of the white stones is taken
        // again: elsewhere the tops are a minority of the window, and its median is wood
        // already. Most frames have none, and end here.
        let whitened: Vec<usize> = (0..BOARD_LINES * BOARD_LINES)
            .filter(|&k| colour_distance(self.local(k % BOARD_LINES, k / BOARD_LINES), whites.colour) <= 1.0)
            .collect();
        if whitened.is_empty() || !reachable.iter().any(|r| *r) {
            return None;
        }
        let brighter = brighter_than_the_wood(&self.cells, self.global, PLAUSIBLE_BOARD_LUMA)?;
        let white_tops: Vec<bool> = (0..CELLS * CELLS)
            .map(|k| {
                let cell = self.cells[k];
                brighter[k]
                    && reachable.get(k).copied().unwrap_or(false)
                    && colour_distance(cell, whites.colour) <= 1.0
                    && luma(cell) <= whites.brightest
            })
            .collect();
        let mut wood: Vec<[f32; 3]> =
            (0..BOARD_LINES * BOARD_LINES).map(|k| self.local(k % BOARD_LINES, k / BOARD_LINES)).collect();
        let mut changed = false;
        for k in whitened {
            let (col, row) = (k % BOARD_LINES, k / BOARD_LINES);
            if let Some(c) = (0..=2).find_map(|widen| self.window_median(col, row, widen, &white_tops)) {
                changed |= c != wood[k];
                wood[k] = c;
            }
        }
        changed.then_some(BoardColour { local_colours: wood, ..self.clone() })
    }

    /// The median of the plausible-board cells in the 4×4 cells around (col, row) widened by
    /// `widen` a side, the 4 nearest counted twice, leaving out the cells `left_out` marks
    /// (`j * CELLS + i`; none where it is empty); `None` with fewer than 4 samples.
    fn window_median(&self, col: usize, row: usize, widen: usize, left_out: &[bool]) -> Option<[f32; 3]> {
        let mut chans: [Vec<f32>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        let global_l = luma(self.global).max(1.0);
        // Margin cells (outside the outer lines) are left out: the wood there is narrow and
        // the sample may fall on the board's edge or the table.
        let lo_i = col.saturating_sub(1 + widen).max(1);
        let lo_j = row.saturating_sub(1 + widen).max(1);
        for j in lo_j..(row + 3 + widen).min(CELLS - 1) {
            for i in lo_i..(col + 3 + widen).min(CELLS - 1) {
                let c = self.cells[j * CELLS + i];
                if !c[0].is_finite() || luma(c) / global_l < PLAUSIBLE_BOARD_LUMA {
                    continue;
                }
                if left_out.get(j * CELLS + i).copied().unwrap_or(false) {
                    continue;
                }
                let inner = (col..=col + 1).contains(&i) && (row..=row + 1).contains(&j);
                for _ in 0..if inner { 2 } else { 1 } {
                    for ch in 0..3 {
                        chans[ch].push(c[ch]);
                    }
                }
            }
        }
        if chans[0].len() < 4 {
            return None;
        }
        let [r, g, b] = &mut chans;
        Some([median(r), median(g), median(b)])
    }
}

/// What the frame's own white stones look like (the discs of the points it reads white for sure).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameWhites {
    /// Their median colour.
    pub colour: [f32; 3],
    /// The median over them of their discs' brightest part (90th percentile of luminance):
    /// a white stone's top is no brighter, but a lamp's reflection on the wood can be.
    pub brightest: f32,
}

/// Cells darker than this fraction of the frame's board luminance are taken for a stone (or a
/// deep shadow) and never used as the board reference.
const PLAUSIBLE_BOARD_LUMA: f32 = 0.4;

/// Relative contrast a grid-line segment must show to count as visible.
const LINE_VISIBLE: f32 = 0.05;

/// Fraction of the grid-line segments bounding cell (i, j) that are visible.
fn cell_lattice(board: &RectifiedBoard, i: usize, j: usize, global_l: f32) -> f32 {
    let last = (BOARD_LINES - 1) as f64;
    let (cx, cy) = (i as f64 - 0.5, j as f64 - 0.5);
    let mut seen = 0.0f32;
    let mut total = 0.0f32;
    // (midpoint, line is horizontal)
    let edges = [((cx, cy - 0.5), true), ((cx, cy + 0.5), true), ((cx - 0.5, cy), false), ((cx + 0.5, cy), false)];
    for ((x, y), horizontal) in edges {
        let exists = if horizontal {
            (0.0..=last).contains(&y) && x > 0.0 && x < last
        } else {
            (0.0..=last).contains(&x) && y > 0.0 && y < last
        };
        if !exists {
            continue;
        }
        let mut contrast = 0.0f32;
        let mut n = 0.0f32;
        for t in [-0.15, 0.0, 0.15] {
            let (px, py) = if horizontal { (x + t, y) } else { (x, y + t) };
            let (ox, oy) = if horizontal { (0.0, ARM_SIDE) } else { (ARM_SIDE, 0.0) };
            let on = board.at_board(px, py);
            let a = board.at_board(px + ox, py + oy);
            let b = board.at_board(px - ox, py - oy);
            if on[0].is_finite() && a[0].is_finite() && b[0].is_finite() {
                let local = ((luma(a) + luma(b)) / 2.0).max(global_l * 0.2);
                contrast += ((luma(a) + luma(b)) / 2.0 - luma(on)) / local;
                n += 1.0;
            }
        }
        if n > 0.0 {
            total += 1.0;
            if contrast / n > LINE_VISIBLE {
                seen += 1.0;
            }
        }
    }
    if total > 0.0 {
        seen / total
    } else {
        f32::NAN
    }
}

/// Scaled distance of a colour from the board colour: ≤ 1 means bare board.
pub fn colour_distance(c: [f32; 3], board: [f32; 3]) -> f32 {
    if !c[0].is_finite() || !board[0].is_finite() {
        return f32::INFINITY;
    }
    let eps = 4.0;
    let l = (luma(c) + eps) / (luma(board) + eps);
    let lr = |k: usize| ((c[k] + eps) / (board[k] + eps)).ln();
    let (a, b, g) = (lr(0), lr(2), lr(1));
    // Chromaticity: channel log-ratios with the common (brightness) part removed.
    let mean = (a + b + g) / 3.0;
    let chroma = ((a - mean).powi(2) + (g - mean).powi(2) + (b - mean).powi(2)).sqrt();
    let luma_out = if l < BOARD_LUMA_RANGE.0 {
        (BOARD_LUMA_RANGE.0 / l).ln() / 0.3 + 1.0
    } else if l > BOARD_LUMA_RANGE.1 {
        (l / BOARD_LUMA_RANGE.1).ln() / 0.3 + 1.0
    } else {
        0.0
    };
    (chroma / BOARD_CHROMA_TOLERANCE).max(luma_out)
}

/// Median of a slice (reorders it); NaN when empty.
pub fn median(v: &mut [f32]) -> f32 {
    if v.is_empty() {
        return f32::NAN;
    }
    let mid = v.len() / 2;
    v.select_nth_unstable_by(mid, f32::total_cmp);
    v[mid]
}

/// The measurements of one intersection.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PointFeatures {
    /// ln(median disc luminance / local board luminance): about 0 empty, very negative black,
    /// positive or near 0 white.
    pub brightness: f32,
    /// ln(25th-percentile disc luminance / board luminance): robust to a highlight on black.
    pub dark_tail: f32,
    /// Neutrality: ln((blue/red of disc) / (blue/red of board)). Stones are grey, wood is yellow,
    /// so stones score positive under any single-colour light.
    pub neutral: f32,
    /// ln((green/red of disc) / (green/red of board)): grey stones score clearly positive
    /// against yellow-red wood, skin (reddish) stays near 0 — what tells a fingertip from a white
    /// stone.
    pub green_red: f32,
    /// Chromatic distance of the disc from board colour (≤ 1 would be bare board).
    pub colour_distance: f32,
    /// Grid-line (Weber) contrast of the cross through the intersection: clearly positive only
    /// where the point is empty, in light or in shadow.
    pub lines: f32,
    /// Contrast of the weakest arm of the cross: positive on every arm only when empty.
    /// (Measured, not used by the classifier: it did not separate stone shadows from black
    /// stones better than the mean contrast on the labelled photos.)
    pub weakest_arm: f32,
    /// Spread of disc luminance relative to board luminance (texture: edges, lines, grain).
    pub spread: f32,
    /// Median luminance of the disc in 0–255 (absolute: tells blown-out glare).
    pub luma: f32,
    /// False when part of the point falls outside the image.
    pub valid: bool,
}

/// The mean colour of the disc (radius [`DISC_RADIUS`]) a reader samples around `top`, a board
/// position, and the 90th percentile of its luminance (its brightest part, but for a speck);
/// `None` where half of it falls outside the image.
pub fn disc_colour(board: &RectifiedBoard, top: [f64; 2]) -> Option<([f32; 3], f32)> {
    let offsets = disc_offsets(board);
    let (cx, cy) = (board.index_of(top[0]), board.index_of(top[1]));
    let mut acc = [0.0f32; 3];
    let mut lumas = Vec::with_capacity(offsets.len());
    for (dx, dy) in &offsets {
        let s = board.at(cx + dx, cy + dy);
        if s[0].is_finite() {
            for k in 0..3 {
                acc[k] += s[k];
            }
            lumas.push(luma(s));
        }
    }
    if lumas.is_empty() || lumas.len() * 2 < offsets.len() {
        return None;
    }
    let n = lumas.len() as f32;
    lumas.sort_unstable_by(f32::total_cmp);
    let bright = lumas[(lumas.len() * 9 / 10).min(lumas.len() - 1)];
    Some((acc.map(|a| a / n), bright))
}

/// The sample offsets (in rectified samples) of a disc of radius [`DISC_RADIUS`], the one every
/// point's measurement and [`disc_colour`] sample.
fn disc_offsets(board: &RectifiedBoard) -> Vec<(f64, f64)> {
    let r = DISC_RADIUS * board.samples_per_cell as f64;
    let ri = r.ceil() as i64;
    (-ri..=ri)
        .flat_map(|dy| (-ri..=ri).map(move |dx| (dx as f64, dy as f64)))
        .filter(|(fx, fy)| fx * fx + fy * fy <= r * r)
        .collect()
}

/// Measures every intersection; indexed `[row][col]`.
pub fn measure_points(
    board: &RectifiedBoard,
    colour: &BoardColour,
    camera: Option<&CameraFoot>,
    stone_height: f64,
) -> Vec<[PointFeatures; BOARD_LINES]> {
    let mut out = vec![[PointFeatures::default(); BOARD_LINES]; BOARD_LINES];
    measure_points_where(board, colour, camera, stone_height, &mut out, |_, _| true);
    out
}

/// Measures the intersections (col, row) that `wanted` names into `out`, `[row][col]`, and
/// leaves the others as they are (a point's measurement depends on its own reference alone).
pub fn measure_points_where(
    board: &RectifiedBoard,
    colour: &BoardColour,
    camera: Option<&CameraFoot>,
    stone_height: f64,
    out: &mut [[PointFeatures; BOARD_LINES]],
    wanted: impl Fn(usize, usize) -> bool,
) {
    let disc_offsets = disc_offsets(board);
    let mut lums = Vec::with_capacity(disc_offsets.len());
    // The samples of the best disc so far (kept across points: no allocation per point).
    let mut best_disc = Vec::with_capacity(disc_offsets.len());
    for (row, out_row) in out.iter_mut().enumerate() {
        for (col, feat) in out_row.iter_mut().enumerate() {
            if !wanted(col, row) {
                continue;
            }
            let base = [col as f64, row as f64];
            let top = camera.map_or(base, |cam| cam.raised(base, stone_height));
            let local = colour.local(col, row);
            let board_l = luma(local).max(1.0);
            // A stone knocked off its point still covers most of a disc shifted towards it: take
            // the candidate disc with the strongest departure from the board (the centre wins
            // ties, and an empty point's candidates all look like board).
            let mut best: Option<(f32, [f32; 3], bool)> = None;
            for (sx, sy) in SEARCH_SHIFTS {
                let (cx, cy) = (board.index_of(top[0] + sx), board.index_of(top[1] + sy));
                lums.clear();
                let mut acc = [0.0f32; 3];
                let mut complete = true;
                for &(dx, dy) in &disc_offsets {
                    let s = board.at(cx + dx, cy + dy);
                    if !s[0].is_finite() {
                        complete = false;
                        continue;
                    }
                    for k in 0..3 {
                        acc[k] += s[k];
                    }
                    lums.push(luma(s));
                }
                if lums.len() < disc_offsets.len() / 2 {
                    continue;
                }
                let n = lums.len() as f32;
                let mean = [acc[0] / n, acc[1] / n, acc[2] / n];
                lums.sort_unstable_by(f32::total_cmp);
                let med = lums[lums.len() / 2];
                let evidence = ((med + 1.0) / board_l).ln().abs() + 0.25 * colour_distance(mean, local).min(4.0);
                let centre_bonus = if sx == 0.0 && sy == 0.0 { CENTRE_PREFERENCE } else { 0.0 };
                if best.as_ref().is_none_or(|b| evidence + centre_bonus > b.0) {
                    let complete = complete || lums.len() * 10 >= disc_offsets.len() * 7;
                    best = Some((evidence + centre_bonus, mean, complete));
                    best_disc.clear();
                    best_disc.extend_from_slice(&lums);
                }
            }
            let Some((_, mean, valid)) = best else {
                *feat = PointFeatures { valid: false, ..PointFeatures::default() };
                continue;
            };
            lums.clear();
            lums.extend_from_slice(&best_disc);
            let med = lums[lums.len() / 2];
            let q25 = lums[lums.len() / 4];
            let q90 = lums[(lums.len() * 9) / 10];
            let q10 = lums[lums.len() / 10];
            let lines = line_contrast(board, col, row, board_l * WEBER_FLOOR);
            let eps = 4.0;
            let neutral = ((mean[2] + eps) / (mean[0] + eps)).ln() - ((local[2] + eps) / (local[0] + eps)).ln();
            let green_red = ((mean[1] + eps) / (mean[0] + eps)).ln() - ((local[1] + eps) / (local[0] + eps)).ln();
            *feat = PointFeatures {
                brightness: ((med + 1.0) / board_l).ln(),
                dark_tail: ((q25 + 1.0) / board_l).ln(),
                neutral,
                green_red,
                colour_distance: colour_distance(mean, local),
                lines: lines.0,
                weakest_arm: lines.1,
                spread: (q90 - q10) / board_l,
                luma: med,
                valid,
            };
        }
    }
}

/// Grid-line contrast of the cross at an intersection, from the arms that stay on the grid
/// (an edge point has three, a corner two): (mean over arms, weakest arm). Each arm's contrast is
/// (off-line − on-line) luminance over the brighter of the off-line surface and `floor`.
fn line_contrast(board: &RectifiedBoard, col: usize, row: usize, floor: f32) -> (f32, f32) {
    let last = BOARD_LINES - 1;
    let mut sum = 0.0f32;
    let mut n = 0.0f32;
    let mut weakest = f32::INFINITY;
    let dirs: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
    for (dx, dy) in dirs {
        let nc = col as i32 + dx;
        let nr = row as i32 + dy;
        if nc < 0 || nr < 0 || nc > last as i32 || nr > last as i32 {
            continue;
        }
        let mut arm = 0.0f32;
        let mut arm_n = 0.0f32;
        for t in ARM_STEPS {
            let (x, y) = (col as f64 + dx as f64 * t, row as f64 + dy as f64 * t);
            let on = board.at_board(x, y);
            // Perpendicular offsets on both sides of the arm.
            let (px, py) = (-(dy as f64) * ARM_SIDE, dx as f64 * ARM_SIDE);
            let a = board.at_board(x + px, y + py);
            let b = board.at_board(x - px, y - py);
            if on[0].is_finite() && a[0].is_finite() && b[0].is_finite() {
                let off = (luma(a) + luma(b)) / 2.0;
                arm += (off - luma(on)) / off.max(floor);
                arm_n += 1.0;
            }
        }
        if arm_n > 0.0 {
            sum += arm;
            n += arm_n;
            weakest = weakest.min(arm / arm_n);
        }
    }
    if n > 0.0 {
        (sum / n, weakest)
    } else {
        (0.0, 0.0)
    }
}
