//! Scoring readings against ground truth: per-point confusion, exact boards, the best of the 8
//! board symmetries when a photo's "up" cannot be known, corner error in grid cells, and
//! confidence calibration bins. Pure: grids in, scores out (the `eval` command does the files).

use serde::{Deserialize, Serialize};
use tengen_rules::board_text::parse_rows;
use tengen_rules::{BoardTextError, PointState, BOARD_LINES};
use thiserror::Error;

use crate::geometry::GridGeometry;
use crate::locate::{locate, refine_or_find_corners, LocateError, LocateOptions, Located};
use crate::reading::{read_board_detailed, BoardReading, ReaderConfig, ReadingDetails};

/// What the stateless vision makes of one frame: the board located from scratch, then read.
#[derive(Debug, Clone)]
pub struct FrameAnalysis {
    /// The located grid.
    pub located: Located,
    /// The reading with its per-point details.
    pub details: ReadingDetails,
}

/// The whole stateless vision on one frame, as every evaluation scores it (photos, rendered
/// sets, the stress suite): locate from scratch, then read every point with that geometry.
/// One function, so that every figure measures the same pipeline.
pub fn analyse_frame(
    image: &image::RgbImage,
    locate_options: &LocateOptions,
    reader: &ReaderConfig,
) -> Result<FrameAnalysis, LocateError> {
    let located = locate(image, locate_options)?;
    let details = read_board_detailed(image, &located.geometry, reader);
    Ok(FrameAnalysis { located, details })
}

/// The same with corners given by a person instead of the search (issue 9 item 4): the grid
/// they span refined to the lines as `calibrate --corners` refines it (lens estimated), then read.
pub fn analyse_frame_from_corners(
    image: &image::RgbImage,
    corners: [[f64; 2]; 4],
    reader: &ReaderConfig,
) -> Result<FrameAnalysis, LocateError> {
    let located = refine_or_find_corners(image, corners, None)?.located;
    let details = read_board_detailed(image, &located.geometry, reader);
    Ok(FrameAnalysis { located, details })
}

/// Corners as a careful person clicks them: each of the four moved `cells` of its own cell
/// (the shorter of the two grid spacings at that corner, as the image shows them: a person
/// aims at what they see, and on a steep view the far corners' cells are a fraction of the
/// near ones'), in a direction fixed by `name` and the corner, so that a run is repeatable and
/// no two corners move the same way.
pub fn displaced_corners(corners: &[[f64; 2]; 4], cells: f64, name: &str) -> [[f64; 2]; 4] {
    let mean_side = (0..4)
        .map(|k| (corners[k][0] - corners[(k + 1) % 4][0]).hypot(corners[k][1] - corners[(k + 1) % 4][1]))
        .sum::<f64>()
        / 4.0;
    let mean_cell = mean_side / (BOARD_LINES - 1) as f64;
    let grid = GridGeometry::from_corners(*corners, crate::LensDistortion::none(1, 1));
    let last = (BOARD_LINES - 1) as f64;
    // Each corner's grid position and the steps to its two neighbours along the edges.
    let at = [[0.0, 0.0, 1.0, 1.0], [last, 0.0, -1.0, 1.0], [last, last, -1.0, -1.0], [0.0, last, 1.0, -1.0]];
    let local_cell = |k: usize| -> f64 {
        let Some(g) = &grid else { return mean_cell };
        let [c, r, dc, dr] = at[k];
        let p = g.project(c, r);
        let along = |q: [f64; 2]| (q[0] - p[0]).hypot(q[1] - p[1]);
        let cell = along(g.project(c + dc, r)).min(along(g.project(c, r + dr)));
        if cell.is_finite() && cell > 0.0 {
            cell
        } else {
            mean_cell
        }
    };
    // FNV-1a of the name: a fixed, well-spread start angle per frame.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    #[allow(clippy::cast_precision_loss)]
    let start = (hash % 3600) as f64 / 3600.0 * std::f64::consts::TAU;
    std::array::from_fn(|k| {
        // Corners 137.5° apart: no two move the same way.
        #[allow(clippy::cast_precision_loss)]
        let a = start + k as f64 * 2.4;
        let step = cells * local_cell(k);
        [corners[k][0] + step * a.cos(), corners[k][1] + step * a.sin()]
    })
}

/// A 19×19 grid of states, `[row][col]`.
pub type Grid = [[PointState; BOARD_LINES]; BOARD_LINES];

/// Parses grid text with the board text codec ([`tengen_rules::board_text`]): 19 rows of 19
/// points (`.`, `X`, `O`, `?`, and the codec's other spellings), surrounding blank lines ignored.
pub fn parse_grid(text: &str) -> Result<Grid, BoardTextError> {
    let rows: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let cells: Vec<PointState> = parse_rows(&rows, BOARD_LINES, BOARD_LINES)?;
    let mut grid = [[PointState::Empty; BOARD_LINES]; BOARD_LINES];
    for (row, read) in grid.iter_mut().zip(cells.chunks(BOARD_LINES)) {
        row.copy_from_slice(read);
    }
    Ok(grid)
}

/// A corner label that is not the JSON the datasets use.
#[derive(Debug, Error)]
#[error("not a corner label ({{\"corners_px\": [[x, y] × 4]}}): {0}")]
pub struct CornersParseError(#[from] serde_json::Error);

/// The four labelled outer intersections (TL, TR, BR, BL as seen, in pixels) of a
/// `.corners.json` or `.grid.json` label; other fields are ignored.
pub fn parse_corners_label(text: &str) -> Result<[[f64; 2]; 4], CornersParseError> {
    #[derive(Deserialize)]
    struct CornersLabel {
        corners_px: [[f64; 2]; 4],
    }
    Ok(serde_json::from_str::<CornersLabel>(text)?.corners_px)
}

/// The states of a reading as a grid.
pub fn reading_grid(reading: &BoardReading) -> Grid {
    let mut g = [[PointState::Unknown; BOARD_LINES]; BOARD_LINES];
    for (r, row) in reading.points.iter().enumerate() {
        for (c, p) in row.iter().enumerate() {
            g[r][c] = p.state;
        }
    }
    g
}

/// One of the 8 symmetries of the square board: `transpose` first, then `quarter_turns`
/// clockwise rotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symmetry {
    /// Mirror across the main diagonal first.
    pub transpose: bool,
    /// Clockwise quarter turns after that.
    pub quarter_turns: u8,
}

impl Symmetry {
    /// The identity.
    pub const IDENTITY: Symmetry = Symmetry { transpose: false, quarter_turns: 0 };

    /// All 8 symmetries, identity first.
    pub fn all() -> [Symmetry; 8] {
        let mut out = [Self::IDENTITY; 8];
        for (k, s) in out.iter_mut().enumerate() {
            *s = Symmetry { transpose: k >= 4, quarter_turns: (k % 4) as u8 };
        }
        out
    }

    /// The symmetry that undoes this one: a transposed turn is its own inverse (transposing
    /// reverses the sense of a turn), a plain turn of q quarters is undone by 4 − q.
    pub fn inverse(self) -> Symmetry {
        let q = self.quarter_turns % 4;
        let quarter_turns = if self.transpose { q } else { (4 - q) % 4 };
        Symmetry { transpose: self.transpose, quarter_turns }
    }

    /// Applies the symmetry to a grid.
    pub fn apply(self, grid: &Grid) -> Grid {
        let n = BOARD_LINES - 1;
        let mut g = *grid;
        if self.transpose {
            for r in 0..BOARD_LINES {
                for c in 0..BOARD_LINES {
                    g[r][c] = grid[c][r];
                }
            }
        }
        for _ in 0..self.quarter_turns % 4 {
            let src = g;
            for r in 0..BOARD_LINES {
                for c in 0..BOARD_LINES {
                    // Clockwise: new (r, c) comes from old (n - c, r).
                    g[r][c] = src[n - c][r];
                }
            }
        }
        g
    }
}

/// Counts of (true state, read state): rows empty/black/white, columns empty/black/white/unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Confusion(pub [[u64; 4]; 3]);

impl Confusion {
    fn index(s: PointState) -> usize {
        match s {
            PointState::Empty => 0,
            PointState::Black => 1,
            PointState::White => 2,
            PointState::Unknown => 3,
        }
    }

    /// Adds one point.
    pub fn add(&mut self, truth: PointState, read: PointState) {
        let t = Self::index(truth);
        if t < 3 {
            self.0[t][Self::index(read)] += 1;
        }
    }

    /// Adds another confusion table.
    pub fn merge(&mut self, other: &Confusion) {
        for t in 0..3 {
            for r in 0..4 {
                self.0[t][r] += other.0[t][r];
            }
        }
    }

    /// Points counted.
    pub fn total(&self) -> u64 {
        self.0.iter().flatten().sum()
    }

    /// Points read correctly.
    pub fn correct(&self) -> u64 {
        (0..3).map(|k| self.0[k][k]).sum()
    }

    /// Points read as unknown.
    pub fn unknown(&self) -> u64 {
        (0..3).map(|k| self.0[k][3]).sum()
    }

    /// Points read as a wrong definite state.
    pub fn wrong(&self) -> u64 {
        self.total() - self.correct() - self.unknown()
    }
}

/// Score of one reading against its truth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BoardScore {
    /// Per-point confusion under the chosen symmetry.
    pub confusion: Confusion,
    /// Symmetry that was applied to the reading (identity unless best-of-8 was asked for).
    pub symmetry: Symmetry,
    /// Every point right (no wrong and no unknown point).
    pub exact: bool,
}

/// Scores a reading; with `best_of_symmetries` the reading is turned by whichever of the 8
/// symmetries agrees best with the truth (for photos whose "up" cannot be known).
pub fn score(read: &Grid, truth: &Grid, best_of_symmetries: bool) -> BoardScore {
    let candidates: Vec<Symmetry> =
        if best_of_symmetries { Symmetry::all().to_vec() } else { vec![Symmetry::IDENTITY] };
    let mut best: Option<BoardScore> = None;
    for sym in candidates {
        let g = sym.apply(read);
        let mut confusion = Confusion::default();
        for r in 0..BOARD_LINES {
            for c in 0..BOARD_LINES {
                confusion.add(truth[r][c], g[r][c]);
            }
        }
        let exact = confusion.correct() == confusion.total();
        let s = BoardScore { confusion, symmetry: sym, exact };
        if best.is_none_or(|b| s.confusion.correct() > b.confusion.correct()) {
            best = Some(s);
        }
    }
    best.unwrap_or(BoardScore { confusion: Confusion::default(), symmetry: Symmetry::IDENTITY, exact: false })
}

/// Mean distance between found and true board corners (TL, TR, BR, BL), in grid cells (true
/// board side / 18), taking the best of the 4 rotations and 2 mirrorings of the corner order.
pub fn corner_error_cells(found: &[[f64; 2]; 4], truth: &[[f64; 2]; 4]) -> f64 {
    let errors = corner_errors_cells(found, truth);
    errors.iter().sum::<f64>() / 4.0
}

/// The distance of each true corner (TL, TR, BR, BL) from the found one matched to it, in grid
/// cells, under the rotation or mirroring of the corner order with the smallest mean.
pub fn corner_errors_cells(found: &[[f64; 2]; 4], truth: &[[f64; 2]; 4]) -> [f64; 4] {
    let dist = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    let side = (0..4).map(|k| dist(truth[k], truth[(k + 1) % 4])).sum::<f64>() / 4.0;
    let cell = (side / (BOARD_LINES - 1) as f64).max(1e-9);
    let mut best = [f64::INFINITY; 4];
    for shift in 0..4 {
        for mirror in [false, true] {
            let errors: [f64; 4] = std::array::from_fn(|k| {
                let j = if mirror { (4 + shift - k) % 4 } else { (shift + k) % 4 };
                dist(found[j], truth[k]) / cell
            });
            if errors.iter().sum::<f64>() < best.iter().sum::<f64>() {
                best = errors;
            }
        }
    }
    best
}

/// Worst distance of a located grid's intersections from the true ones, in local cells (the
/// true spacing to the neighbouring intersection), under the best of the 4 rotations of the
/// indexing (a board seen from above has no canonical "up"). `truth` holds the 361 true
/// intersections in pixels, row-major from the seen top-left.
pub fn worst_intersection_error_cells(geometry: &GridGeometry, truth: &[[f64; 2]]) -> f64 {
    let n = BOARD_LINES;
    let last = n - 1;
    if truth.len() != n * n {
        return f64::INFINITY;
    }
    (0..4)
        .map(|rot| {
            let mut worst: f64 = 0.0;
            for r in 0..n {
                for c in 0..n {
                    let (tc, tr) = match rot {
                        0 => (c, r),
                        1 => (last - r, c),
                        2 => (last - c, last - r),
                        _ => (r, last - c),
                    };
                    let t = truth[tr * n + tc];
                    let nb = truth[tr * n + if tc < last { tc + 1 } else { tc - 1 }];
                    let cell = ((nb[0] - t[0]).powi(2) + (nb[1] - t[1]).powi(2)).sqrt().max(1e-9);
                    let p = geometry.project(c as f64, r as f64);
                    worst = worst.max(((p[0] - t[0]).powi(2) + (p[1] - t[1]).powi(2)).sqrt() / cell);
                }
            }
            worst
        })
        .fold(f64::INFINITY, f64::min)
}

/// Reliability bins: for confidence ranges, how many definite points were read and how many
/// were right — a calibrated reader is right about as often as it says.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Calibration {
    /// Lower edges of the bins.
    pub edges: Vec<f64>,
    /// Points per bin.
    pub count: Vec<u64>,
    /// Correct points per bin.
    pub correct: Vec<u64>,
    /// Sum of stated confidences per bin.
    pub confidence_sum: Vec<f64>,
}

impl Calibration {
    /// Bins with the given lower edges (ascending, first 0).
    pub fn new(edges: &[f64]) -> Self {
        let n = edges.len();
        Self { edges: edges.to_vec(), count: vec![0; n], correct: vec![0; n], confidence_sum: vec![0.0; n] }
    }

    /// Adds one point read at `confidence` that was right or wrong (best guess, unknowns too).
    pub fn add(&mut self, confidence: f64, right: bool) {
        let bin = self.edges.iter().rposition(|e| confidence >= *e).unwrap_or(0);
        self.count[bin] += 1;
        self.correct[bin] += u64::from(right);
        self.confidence_sum[bin] += confidence;
    }

    /// Adds another set of bins with the same edges.
    pub fn merge(&mut self, other: &Calibration) {
        for k in 0..self.count.len().min(other.count.len()) {
            self.count[k] += other.count[k];
            self.correct[k] += other.correct[k];
            self.confidence_sum[k] += other.confidence_sum[k];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Grid {
        let mut g = [[PointState::Empty; BOARD_LINES]; BOARD_LINES];
        g[0][1] = PointState::Black;
        g[3][15] = PointState::White;
        g[18][0] = PointState::Black;
        g
    }

    #[test]
    fn symmetries_are_a_group_of_eight_distinct_maps() {
        let g = sample();
        let images: Vec<Grid> = Symmetry::all().iter().map(|s| s.apply(&g)).collect();
        for a in 0..8 {
            for b in a + 1..8 {
                assert_ne!(images[a], images[b], "symmetries {a} and {b} coincide");
            }
        }
        let turn = Symmetry { transpose: false, quarter_turns: 1 };
        assert_eq!(turn.apply(&turn.apply(&turn.apply(&turn.apply(&g)))), g);
    }

    #[test]
    fn every_symmetry_is_undone_by_its_inverse() {
        let g = sample();
        for s in Symmetry::all() {
            assert_eq!(s.inverse().apply(&s.apply(&g)), g, "{s:?}");
            assert_eq!(s.apply(&s.inverse().apply(&g)), g, "{s:?}");
        }
    }

    #[test]
    fn best_symmetry_recovers_a_turned_reading() {
        let truth = sample();
        let turned = Symmetry { transpose: true, quarter_turns: 3 }.apply(&truth);
        assert!(!score(&turned, &truth, false).exact);
        let s = score(&turned, &truth, true);
        assert!(s.exact);
        assert_eq!(s.confusion.correct(), 361);
    }

    #[test]
    fn confusion_counts_unknown_apart_from_wrong() {
        let truth = sample();
        let mut read = truth;
        read[0][1] = PointState::Unknown;
        read[3][15] = PointState::Black;
        let s = score(&read, &truth, false);
        assert_eq!((s.confusion.correct(), s.confusion.unknown(), s.confusion.wrong()), (359, 1, 1));
        assert!(!s.exact);
    }

    #[test]
    fn grid_text_round_trips_and_rejects_garbage() {
        let text = "...................\n".repeat(19);
        assert!(parse_grid(&text).is_ok());
        assert_eq!(parse_grid("..."), Err(BoardTextError::Rows { found: 1, expected: BOARD_LINES }));
        let bad = text.replacen('.', "Z", 1);
        assert!(matches!(parse_grid(&bad), Err(BoardTextError::Char { row: 0, col: 0, ch: 'Z', .. })));
    }

    #[test]
    fn corner_error_is_zero_for_reordered_corners_and_scales_in_cells() {
        let truth = [[0.0, 0.0], [180.0, 0.0], [180.0, 180.0], [0.0, 180.0]];
        let rotated = [truth[1], truth[2], truth[3], truth[0]];
        assert!(corner_error_cells(&rotated, &truth) < 1e-9);
        let shifted = truth.map(|p| [p[0] + 10.0, p[1]]);
        assert!((corner_error_cells(&shifted, &truth) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn displaced_corners_move_each_corner_the_given_cells_a_different_way_every_time_alike() {
        // A square board of 180 px: 10 px a cell.
        let truth = [[0.0, 0.0], [180.0, 0.0], [180.0, 180.0], [0.0, 180.0]];
        let moved = displaced_corners(&truth, 0.4, "gw/1_jwerth_blue_1.jpg");
        assert_eq!(moved, displaced_corners(&truth, 0.4, "gw/1_jwerth_blue_1.jpg"));
        let steps: Vec<[f64; 2]> = (0..4).map(|k| [moved[k][0] - truth[k][0], moved[k][1] - truth[k][1]]).collect();
        for step in &steps {
            assert!((step[0].hypot(step[1]) - 4.0).abs() < 1e-9, "{step:?}");
        }
        for a in 0..4 {
            for b in a + 1..4 {
                assert!((steps[a][0] - steps[b][0]).hypot(steps[a][1] - steps[b][1]) > 1.0, "{steps:?}");
            }
        }
        assert_ne!(moved, displaced_corners(&truth, 0.4, "gw/1_jwerth_blue_2.jpg"));
        // Seen at a slant (the far side half as wide and the board half as deep), the far
        // corners move by their own, smaller cells.
        let slanted = [[45.0, 0.0], [135.0, 0.0], [180.0, 90.0], [0.0, 90.0]];
        let moved = displaced_corners(&slanted, 0.5, "slant");
        let step = |k: usize| (moved[k][0] - slanted[k][0]).hypot(moved[k][1] - slanted[k][1]);
        assert!(step(0) < step(3) && step(1) < step(2), "{moved:?}");
        assert!(step(0) < 0.5 * 5.0 + 1e-9, "{}", step(0));
    }
}
