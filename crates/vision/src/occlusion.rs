//! Occlusion: decide whether a hand, arm, sleeve or object covers part of the board, and which
//! points it makes unreliable. Stones sit on intersections and never cover the centre of a cell
//! (the gap between four intersections), so a connected patch of cell centres that are not board
//! coloured — large, or entering from the edge — is something else lying over the board.

use std::collections::VecDeque;

use image::RgbImage;
use tengen_rules::BOARD_LINES;

use crate::features::{luma, BoardColour, PointFeatures, CELLS};
use crate::geometry::GridGeometry;
use crate::rectify::{bilinear, CameraFoot};

/// Tuning of the occlusion detector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OcclusionConfig {
    /// A cell centre further than this from the board colour (in units of the bare-board
    /// tolerance) is foreign.
    pub foreign_distance: f32,
    /// Smallest patch of foreign cells (inside the board) that counts as an occluder; smaller
    /// patches are stray stones knocked between points, crumbs or glare spots.
    pub min_cells: usize,
    /// A patch touching the board's outer margin counts from this size (arms enter from an edge).
    pub min_edge_cells: usize,
    /// A cell with at least this fraction of its grid-line edges visible is not covered.
    pub min_lattice: f32,
    /// Around an occluder, a point whose colour lies further than this (standard deviations)
    /// from its class is taken as covered too.
    pub grow_misfit: f32,
    /// Around an occluder, a point read with less confidence than this is taken as covered too.
    pub grow_confidence: f64,
    /// A point closer than this to the board colour (in bare-board tolerances) ...
    pub covered_colour_distance: f32,
    /// ... whose grid-line contrast is below this is covered by something board-coloured.
    pub covered_max_lines: f32,
    /// ... and below this fraction of the frame's typical visible line contrast (a shaken
    /// photo's faint lines are blurred, not covered) ...
    pub covered_line_fraction: f32,
    /// ... and whose disc is smoother than this (10–90 % luminance spread over the board's
    /// luminance; a stone's top beside its shadow spans more) ...
    pub covered_max_spread: f32,
    /// Connected covered points from which they count as an occluder.
    pub min_covered_points: usize,
    /// An edge point read white is a finger or arm crossing the board edge when the darkest
    /// place on rays leaving it outwards keeps more than this fraction of its luminance (see
    /// [`edges_crossed_by_skin`]) ...
    pub skin_edge_strong_ratio: f32,
    /// ... or more than this fraction, next to such a point.
    pub skin_edge_weak_ratio: f32,
    /// An edge point yellower than its local board by more than this (the neutral feature, ln of
    /// the blue/red ratio over the board's) is wood, not a white stone or skin, however bright:
    /// both of those are greyer than wood. The empty class's prior is 0.02 ± 0.08, so −0.14 is
    /// two bare-wood spreads below it; edge crossings by hands measured −0.01 … 0.70.
    pub skin_edge_min_neutral: f32,
    /// Crossed edge points from which the whole frame counts as occluded (fewer are only read
    /// `?`, with the doubtful points around them).
    pub min_crossed_points: usize,
    /// How far (in points) doubtful readings around a crossed edge point are hidden with it: a
    /// finger lying over the board from the edge covers about two points.
    pub crossing_reach: usize,
}

impl Default for OcclusionConfig {
    fn default() -> Self {
        Self {
            foreign_distance: 2.0,
            min_cells: 4,
            min_edge_cells: 2,
            min_lattice: 0.5,
            grow_misfit: 2.0,
            grow_confidence: 0.999,
            covered_colour_distance: 0.8,
            covered_max_lines: 0.03,
            covered_line_fraction: 0.15,
            covered_max_spread: 1.0,
            min_covered_points: 3,
            skin_edge_strong_ratio: 0.9,
            skin_edge_weak_ratio: 0.72,
            skin_edge_min_neutral: -0.14,
            min_crossed_points: 2,
            crossing_reach: 2,
        }
    }
}

/// The occluders found in one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct OcclusionMask {
    /// Cells (index `j * CELLS + i`, cell centre at board position (i − 0.5, j − 0.5)) covered.
    pub cells: Vec<bool>,
    /// Points made unreliable, `[row][col]`.
    pub points: [[bool; BOARD_LINES]; BOARD_LINES],
    /// Whether anything covers the board.
    pub occluded: bool,
    /// Cells in the largest patch of foreign cells, whatever its size (0 when none).
    pub largest_patch: usize,
    /// Median colour distance of that patch's cells from the board colour (0 when none).
    pub patch_distance: f32,
    /// Whether that patch reaches the cells along the outer lines (hands come from an edge).
    pub patch_at_edge: bool,
}

/// Whether a cell's visible-line fraction is below `min`; a cell without lines (NaN) counts as
/// hidden, so its colour alone decides.
fn lattice_hidden(lattice: f32, min: f32) -> bool {
    !matches!(lattice.partial_cmp(&min), Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal))
}

/// Luminance (0–255) from which a cell much brighter than the board counts as a lamp's glare.
pub const GLARE_LUMA: f32 = 200.0;
/// Luminance (0–255) from which a disc's median is clipped at the sensor's top (8-bit range less
/// a few levels of JPEG ringing): its colour and texture are gone, so it is evidence of nothing —
/// an overexposed white stone on an overexposed board (roboflow 27) looks exactly like skin there.
pub const CLIPPED_LUMA: f32 = 250.0;
/// How much brighter than the board a glare patch is, at least.
const GLARE_GAIN: f32 = 1.2;

/// A blown-out lamp reflection: it hides the lines like a hand but is static, so it makes
/// points unreadable (the classifier's confidence drops there) without counting as an occluder.
fn is_glare(colour: &BoardColour, k: usize) -> bool {
    is_glare_luma(luma(colour.cells[k]), colour)
}

/// Whether a patch of luminance `l` (0–255) on this board is a lamp's glare: near the sensor's
/// top and clearly brighter than the board. Both are needed: under a bright lamp the board
/// itself sits near the top of the range (roboflow 95: wood at 190, an overexposed forearm over
/// it at 210–250), and what is as bright as the board there is a covering, not a reflection.
pub fn is_glare_luma(l: f32, colour: &BoardColour) -> bool {
    l >= GLARE_LUMA && l >= GLARE_GAIN * luma(colour.global)
}

/// How far a stone may lie off its point, in grid spacings (1–2 mm on a 22 mm spacing).
const STONE_PLACEMENT: f64 = 0.1;

/// Cells whose centre a stone on one of the cell's four corner points can cover in the image
/// (index `j * CELLS + i`): the stone's disc (radius 0.48 spacing, plus 0.1 for a stone lying
/// off its point) swept from its base to its top as the camera sees it. On an overhead or typical view a cell centre, 0.71 spacing from
/// each corner, stays clear; on a steep view (50–60° from vertical) the tops of the stones
/// nearer the camera lean over the cell centres behind them — a white stone's top there hides
/// the lines with a colour unlike the board, as a hand does. `stones` is `[row][col]`, the
/// points read as stones.
pub fn cells_under_stones(camera: Option<&CameraFoot>, stones: &[[bool; BOARD_LINES]]) -> Vec<bool> {
    cells_within(camera, stones, STONE_RADIUS + STONE_PLACEMENT)
}

/// Cells whose centre the silhouette of a stone on one of the cell's corner points covers on
/// this view, were there a stone (radius 0.48 spacing, on its point): none on an overhead or
/// typical view; the cells behind the stones on a steep one. Index `j * CELLS + i`.
pub fn cells_under_any_top(camera: Option<&CameraFoot>) -> Vec<bool> {
    cells_within(camera, &[[true; BOARD_LINES]; BOARD_LINES], STONE_RADIUS)
}

/// Cells whose centre lies within `reach` of a stone on one of its corner points (`stones`,
/// `[row][col]`) swept from its base to its top as the camera sees it.
fn cells_within(camera: Option<&CameraFoot>, stones: &[[bool; BOARD_LINES]], reach: f64) -> Vec<bool> {
    let mut out = vec![false; CELLS * CELLS];
    let Some(camera) = camera else { return out };
    for (k, o) in out.iter_mut().enumerate() {
        let (i, j) = (k % CELLS, k / CELLS);
        let centre = [i as f64 - 0.5, j as f64 - 0.5];
        *o = (j.saturating_sub(1)..=j.min(BOARD_LINES - 1)).any(|row| {
            (i.saturating_sub(1)..=i.min(BOARD_LINES - 1)).any(|col| {
                stones.get(row).is_some_and(|r| r[col]) && {
                    let base = [col as f64, row as f64];
                    segment_distance(centre, base, camera.raised(base, STONE_THICKNESS)) < reach
                }
            })
        });
    }
    out
}

/// Distance from `q` to the segment a–b (board coordinates).
fn segment_distance(q: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let ab = [b[0] - a[0], b[1] - a[1]];
    let len2 = ab[0] * ab[0] + ab[1] * ab[1];
    let t = if len2 > 1e-12 { (((q[0] - a[0]) * ab[0] + (q[1] - a[1]) * ab[1]) / len2).clamp(0.0, 1.0) } else { 0.0 };
    let p = [a[0] + t * ab[0], a[1] + t * ab[1]];
    ((q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2)).sqrt()
}

/// Finds occluders from the cell-centre colours of a frame. Cells marked in `under_stones`
/// (see [`cells_under_stones`]; empty: none) are not evidence: a stone may cover them.
pub fn detect(colour: &BoardColour, under_stones: &[bool], config: &OcclusionConfig) -> OcclusionMask {
    // Foreign: unlike the board in colour, with the grid lines around it hidden. Glare and
    // shadows change the colour but leave the lines; cells outside the frame are not evidence.
    // A blown-out reflection has a fringe: the cells around its core, still brighter than the
    // board but under the glare level, are the same reflection's halo (roboflow 34).
    let glare_core: Vec<bool> = (0..CELLS * CELLS).map(|k| is_glare(colour, k)).collect();
    let board_l = luma(colour.global);
    let glare_fringe = |k: usize| {
        let (i, j) = ((k % CELLS) as i64, (k / CELLS) as i64);
        luma(colour.cells[k]) >= GLARE_GAIN * board_l
            && (-1..=1).any(|dj| {
                (-1..=1).any(|di| {
                    let (ni, nj) = (i + di, j + dj);
                    ni >= 0
                        && nj >= 0
                        && ni < CELLS as i64
                        && nj < CELLS as i64
                        && glare_core[nj as usize * CELLS + ni as usize]
                })
            })
    };
    let foreign: Vec<bool> = (0..CELLS * CELLS)
        .map(|k| {
            let d = colour.distance[k];
            let lattice = colour.lattice[k];
            let (i, j) = (k % CELLS, k / CELLS);
            // Margin cells lie on the narrow wooden border (or past it when the grid is a little
            // off); they are not evidence of a hand by themselves.
            let inner = i > 0 && j > 0 && i < CELLS - 1 && j < CELLS - 1;
            inner
                && !under_stones.get(k).copied().unwrap_or(false)
                && d.is_finite()
                && d > config.foreign_distance
                && lattice_hidden(lattice, config.min_lattice)
                && !glare_fringe(k)
        })
        .collect();
    let mut seen = vec![false; CELLS * CELLS];
    let mut cells = vec![false; CELLS * CELLS];
    let mut queue = VecDeque::new();
    let mut component = Vec::new();
    let (mut largest_patch, mut patch_distance, mut patch_at_edge) = (0, 0.0, false);
    for start in 0..CELLS * CELLS {
        if !foreign[start] || seen[start] {
            continue;
        }
        component.clear();
        seen[start] = true;
        queue.push_back(start);
        let mut touches_edge = false;
        while let Some(k) = queue.pop_front() {
            component.push(k);
            let (i, j) = (k % CELLS, k / CELLS);
            if i <= 1 || j <= 1 || i >= CELLS - 2 || j >= CELLS - 2 {
                touches_edge = true;
            }
            // 8-connected: a forearm crosses cells diagonally.
            for dj in -1i64..=1 {
                for di in -1i64..=1 {
                    let (ni, nj) = (i as i64 + di, j as i64 + dj);
                    if ni < 0 || nj < 0 || ni >= CELLS as i64 || nj >= CELLS as i64 {
                        continue;
                    }
                    let n = nj as usize * CELLS + ni as usize;
                    if foreign[n] && !seen[n] {
                        seen[n] = true;
                        queue.push_back(n);
                    }
                }
            }
        }
        if component.len() > largest_patch {
            largest_patch = component.len();
            patch_at_edge = touches_edge;
            let mut d: Vec<f32> = component.iter().map(|&k| colour.distance[k]).collect();
            patch_distance = crate::features::median(&mut d);
        }
        let big = component.len() >= config.min_cells || (touches_edge && component.len() >= config.min_edge_cells);
        if big {
            for &k in &component {
                cells[k] = true;
            }
        }
    }
    // A hand's edge, its shadow and the fingers' blur reach a little beyond the foreign cells.
    let core = cells.clone();
    for j in 0..CELLS {
        for i in 0..CELLS {
            if core[j * CELLS + i] {
                for nj in j.saturating_sub(1)..(j + 2).min(CELLS) {
                    for ni in i.saturating_sub(1)..(i + 2).min(CELLS) {
                        cells[nj * CELLS + ni] = true;
                    }
                }
            }
        }
    }
    let mut points = [[false; BOARD_LINES]; BOARD_LINES];
    for (row, line) in points.iter_mut().enumerate() {
        for (col, p) in line.iter_mut().enumerate() {
            // The four cells around intersection (col,row) are i in col..=col+1, j in row..=row+1.
            *p = (row..=row + 1).any(|j| (col..=col + 1).any(|i| cells[j * CELLS + i]));
        }
    }
    let occluded = core.iter().any(|c| *c);
    OcclusionMask { cells, points, occluded, largest_patch, patch_distance, patch_at_edge }
}

/// A go stone's radius, in grid spacings (22 mm stones on a 22–24 mm spacing).
const STONE_RADIUS: f64 = 0.48;
/// A go stone's thickness, in grid spacings (about 9–10 mm).
const STONE_THICKNESS: f64 = 0.42;
/// Blur allowance beyond a stone's silhouette, in grid spacings.
const SILHOUETTE_BLUR: f64 = 0.3;
/// Rays tried around the outward direction of an edge point, in radians (±34°).
const RAY_ANGLES: [f64; 5] = [-0.6, -0.3, 0.0, 0.3, 0.6];
/// Where the rays start, inside a stone's disc, in grid spacings.
const RAY_START: f64 = 0.3;

/// Edge points read as white whose colour runs on past the board's edge without the dark
/// outline a stone has: a finger or an arm crossing the edge, not a stone.
///
/// A white stone is a lit convex disc: along every ray leaving it there is a darker band — its
/// contact shadow and rim, or the wood or table around it, which is darker than a white stone.
/// Pale skin reads like a white stone in colour, but a finger or forearm that reaches over the
/// board edge continues outwards, so rays leaving it outwards stay about as bright as the disc.
/// Each ray is followed in the full-resolution image (the rim is a pixel or two wide) from inside
/// the disc to past the farthest the stone's silhouette can reach on this view (its radius plus
/// the outward parallax of its top). A point is crossed when even the darkest place on the
/// darkest ray keeps `strong_ratio` of the disc's luminance — the same surface goes on — or,
/// next to such a point (within `reach` points), `weak_ratio` (a hand's creases and shadows).
/// An edge point whose colour fits no class (`foreign`: neither stone nor board) is evidence of
/// the same strength that something lies there; it is crossed too when a weak crossing is near.
pub fn edges_crossed_by_skin(
    image: &RgbImage,
    geometry: &GridGeometry,
    camera: Option<&CameraFoot>,
    features: &[[PointFeatures; BOARD_LINES]],
    white: &[[bool; BOARD_LINES]],
    foreign: &[[bool; BOARD_LINES]],
    config: &OcclusionConfig,
) -> Vec<(usize, usize)> {
    let last = BOARD_LINES - 1;
    // (col, row, darkest outward luminance over the disc's).
    let mut candidates = Vec::new();
    for row in 0..BOARD_LINES {
        for col in 0..BOARD_LINES {
            if !(row == 0 || col == 0 || row == last || col == last) || !white[row][col] || !features[row][col].valid {
                continue;
            }
            // Bright but yellower than the board: lit wood (the margin, or a board whose local
            // colour is greyed by the stones around), read white on brightness alone.
            if features[row][col].neutral < config.skin_edge_min_neutral {
                continue;
            }
            let disc = features[row][col].luma.max(1.0);
            // A corner point has two outward directions; the more continuous one counts.
            let mut outwards = Vec::with_capacity(2);
            if row == 0 {
                outwards.push((0.0, -1.0));
            }
            if row == last {
                outwards.push((0.0, 1.0));
            }
            if col == 0 {
                outwards.push((-1.0, 0.0));
            }
            if col == last {
                outwards.push((1.0, 0.0));
            }
            let base = [col as f64, row as f64];
            let ratio = outwards
                .iter()
                .map(|&outward| darkest_outwards(image, geometry, camera, base, outward) / disc)
                .filter(|r| r.is_finite())
                .fold(f32::NAN, f32::max);
            if ratio > config.skin_edge_weak_ratio {
                candidates.push((col, row, ratio));
            }
        }
    }
    let near = |a: (usize, usize), b: (usize, usize)| a.0.abs_diff(b.0).max(a.1.abs_diff(b.1)) <= config.crossing_reach;
    let foreign_edge: Vec<(usize, usize)> = (0..BOARD_LINES)
        .flat_map(|row| (0..BOARD_LINES).map(move |col| (col, row)))
        .filter(|&(col, row)| (row == 0 || col == 0 || row == last || col == last) && foreign[row][col])
        .collect();
    let strong: Vec<(usize, usize)> = candidates
        .iter()
        .filter(|c| c.2 > config.skin_edge_strong_ratio)
        .map(|c| (c.0, c.1))
        .chain(foreign_edge.iter().copied())
        .collect();
    let mut crossed: Vec<(usize, usize)> =
        candidates.iter().map(|c| (c.0, c.1)).filter(|&p| strong.iter().any(|&s| near(p, s))).collect();
    for &f in &foreign_edge {
        if !crossed.contains(&f) && crossed.iter().any(|&c| near(c, f)) {
            crossed.push(f);
        }
    }
    crossed.sort_unstable_by_key(|&(col, row)| (row, col));
    crossed
}

/// The darkest luminance met along any of the rays leaving `base` outwards, over the stretch a
/// stone's silhouette can cover (NaN when every ray leaves the image).
fn darkest_outwards(
    image: &RgbImage,
    geometry: &GridGeometry,
    camera: Option<&CameraFoot>,
    base: [f64; 2],
    outward: (f64, f64),
) -> f32 {
    let shift = camera.map_or(0.0, |cam| {
        let top = cam.raised(base, STONE_THICKNESS);
        ((top[0] - base[0]) * outward.0 + (top[1] - base[1]) * outward.1).max(0.0)
    });
    // A far camera foot (a near-degenerate homography) cannot stretch the walk past 2 spacings.
    let reach = (STONE_RADIUS + shift + SILHOUETTE_BLUR).min(2.0);
    // One-pixel steps (the spacing in pixels from two neighbouring projected points), at most
    // 200 per spacing so that a degenerate geometry cannot make the walk endless.
    let a = geometry.project(base[0], base[1]);
    let b = geometry.project(base[0] + outward.0, base[1] + outward.1);
    let pixels = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt().max(1.0);
    let step = (1.0 / pixels).clamp(0.005, 0.05);
    let mut darkest = f32::NAN;
    for angle in RAY_ANGLES {
        let (s, c) = angle.sin_cos();
        let dir = (outward.0 * c - outward.1 * s, outward.0 * s + outward.1 * c);
        let mut r = RAY_START;
        while r <= reach {
            let p = geometry.project(base[0] + dir.0 * r, base[1] + dir.1 * r);
            let v = bilinear(image, p[0], p[1]);
            if v[0].is_finite() {
                // `f32::min` ignores the NaN start value.
                darkest = darkest.min(luma(v));
            }
            r += step;
        }
    }
    darkest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::LensDistortion;
    use image::Rgb;

    /// A top-down board, 20 pixels per spacing, 40 pixels of table around the outer lines.
    fn scene(paint: impl Fn(f64, f64) -> Option<[u8; 3]>) -> (RgbImage, GridGeometry) {
        let (px, margin) = (20.0, 40.0);
        let size = (18.0 * px + 2.0 * margin) as u32;
        let image = RgbImage::from_fn(size, size, |x, y| {
            let (col, row) = ((f64::from(x) - margin) / px, (f64::from(y) - margin) / px);
            let board = (-0.6..=18.6).contains(&col) && (-0.6..=18.6).contains(&row);
            Rgb(paint(col, row).unwrap_or(if board { [190, 150, 95] } else { [235, 235, 240] }))
        });
        let geometry = GridGeometry {
            homography: [[px, 0.0, margin], [0.0, px, margin], [0.0, 0.0, 1.0]],
            lens: LensDistortion::none(size, size),
        };
        (image, geometry)
    }

    fn white_at(points: &[(usize, usize)]) -> (Vec<[PointFeatures; BOARD_LINES]>, Vec<[bool; BOARD_LINES]>) {
        let mut features = vec![[PointFeatures::default(); BOARD_LINES]; BOARD_LINES];
        let mut white = vec![[false; BOARD_LINES]; BOARD_LINES];
        for &(col, row) in points {
            features[row][col] = PointFeatures { luma: 225.0, valid: true, ..PointFeatures::default() };
            white[row][col] = true;
        }
        (features, white)
    }

    #[test]
    fn white_stones_on_the_edge_are_not_crossings_even_against_a_white_table() {
        // Stones on the left edge, rows 4–6, each a pale disc with its darker rim.
        let (image, geometry) = scene(|col, row| {
            let d = ((col - 0.0).powi(2) + (row - row.round()).powi(2)).sqrt();
            ((4.0..=6.0).contains(&row.round()) && d <= 0.48).then_some(if d > 0.42 {
                [110, 110, 115]
            } else {
                [228, 228, 232]
            })
        });
        let (features, white) = white_at(&[(0, 4), (0, 5), (0, 6)]);
        let none = vec![[false; BOARD_LINES]; BOARD_LINES];
        let crossed =
            edges_crossed_by_skin(&image, &geometry, None, &features, &white, &none, &OcclusionConfig::default());
        assert!(crossed.is_empty(), "{crossed:?}");
    }

    #[test]
    fn a_hand_reaching_over_the_edge_is_a_crossing() {
        // A pale hand three spacings wide from the left over rows 4–7, ending 0.6 inside the
        // board. (A single thin finger is narrower than the fan of rays; see the model card.)
        let (image, geometry) = scene(|col, row| (col < 0.6 && (4.0..=7.0).contains(&row)).then_some([232, 222, 226]));
        let (features, white) = white_at(&[(0, 5), (0, 6), (0, 12)]);
        let none = vec![[false; BOARD_LINES]; BOARD_LINES];
        let crossed =
            edges_crossed_by_skin(&image, &geometry, None, &features, &white, &none, &OcclusionConfig::default());
        // Row 12 has no hand over it: bare wood beside a (pretend) white reading.
        assert_eq!(crossed, vec![(0, 5), (0, 6)]);
    }

    /// A frame's cell colours: bare wood everywhere except `patch` (cell, colour), whose grid
    /// lines are hidden.
    fn cells_with(patch: &[((usize, usize), [f32; 3])]) -> BoardColour {
        let board = [152.0, 111.0, 60.0];
        let mut cells = vec![board; CELLS * CELLS];
        let mut lattice = vec![1.0; CELLS * CELLS];
        for &((i, j), c) in patch {
            cells[j * CELLS + i] = c;
            lattice[j * CELLS + i] = 0.25;
        }
        let distance: Vec<f32> = cells.iter().map(|c| crate::features::colour_distance(*c, board)).collect();
        let board_like = distance.iter().map(|d| *d <= 1.0).collect();
        BoardColour { cells, global: board, board_like, distance, lattice, local_colours: Vec::new() }
    }

    #[test]
    fn a_glare_spot_and_its_fringe_are_not_a_hand() {
        // Roboflow 34's corner: a blown-out core with a ring of paler-than-board cells around it.
        let fringe = [202.0, 177.0, 155.0];
        let core = [227.0, 226.0, 220.0];
        let patch =
            [((4, 6), core), ((3, 5), fringe), ((4, 5), fringe), ((5, 5), fringe), ((3, 6), fringe), ((5, 6), fringe)];
        assert!(!detect(&cells_with(&patch), &[], &OcclusionConfig::default()).occluded);
        // The same pale patch without a blown-out core is something lying on the board.
        let patch: Vec<_> = patch.iter().map(|&(k, _)| (k, fringe)).collect();
        assert!(detect(&cells_with(&patch), &[], &OcclusionConfig::default()).occluded);
    }

    #[test]
    fn stone_tops_lean_over_cell_centres_only_on_a_steep_view() {
        // A board 18 spacings wide seen from a camera whose foot lies `foot_distance` spacings
        // below the board's centre at height 40: the steeper the view, the farther its foot.
        let stones = {
            let mut s = vec![[false; BOARD_LINES]; BOARD_LINES];
            s[5][9] = true;
            s
        };
        let under = |foot_row: f64| {
            let camera = CameraFoot { foot: [9.0, foot_row], height: 40.0 };
            let cells = cells_under_stones(Some(&camera), &stones);
            (0..CELLS * CELLS).filter(|&k| cells[k]).map(|k| (k % CELLS, k / CELLS)).collect::<Vec<_>>()
        };
        // Overhead (foot under the board's centre): the stone at (9, 5) stays on its point.
        assert!(under(9.0).is_empty());
        // About 20° from vertical: still clear.
        assert!(under(9.0 + 40.0 * 0.36).is_empty());
        // About 55°: the top leans away from the camera (towards row 0) over the two cells
        // behind the point, between rows 4 and 5.
        assert_eq!(under(9.0 + 40.0 * 1.43), vec![(9, 5), (10, 5)]);
        // Without a camera pose nothing is left out.
        assert!(cells_under_stones(None, &stones).iter().all(|c| !c));
    }

    #[test]
    fn bright_wood_yellower_than_the_board_is_not_a_crossing() {
        // The same pale patch running off the edge, but the points read white are yellower than
        // their local board (a lit margin, or a board greyed by stones around): wood, not skin.
        let (image, geometry) = scene(|col, row| (col < 0.6 && (4.0..=7.0).contains(&row)).then_some([232, 222, 226]));
        let (mut features, white) = white_at(&[(0, 5), (0, 6)]);
        for row in [5, 6] {
            features[row][0].neutral = -0.3;
        }
        let none = vec![[false; BOARD_LINES]; BOARD_LINES];
        let crossed =
            edges_crossed_by_skin(&image, &geometry, None, &features, &white, &none, &OcclusionConfig::default());
        assert!(crossed.is_empty(), "{crossed:?}");
    }
}
