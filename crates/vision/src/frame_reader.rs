//! Reading one camera's frames one after another: the stateful side of the vision, the same
//! for the service and for `tengen replay`. Pure: decoded frames in, readings out; no clock,
//! no files (see `docs/design.md`, "One pipeline").
//!
//! The board is located once and then tracked. Tracking is a cheap check of the previous grid's
//! lines. When they fit less well (a hand over the board, or a bump), the frame is read with
//! the tracked grid first: a reading that sees a hand is taken as it is (the referee waits for
//! hands to leave), and only every [`RECHECK_COVERED_EVERY`]th frame of a covered stretch, or a
//! frame that fits badly with no hand seen, pays for a local re-fit that tells a bump from a
//! hand. Only a board that moved, or a frame that fits neither way without a hand in it, pays
//! for a new search, and the move is reported (the referee raises `board_moved`).
//!
//! A still board is not read again: the mean brightness of a small patch at each of the 361
//! intersections is compared with the last clean frame that was read (lines fitting, no hand),
//! and when no patch changed by [`STILL_PATCH_LEVELS`] or more (a stone, a hand, a shadow, a
//! bump all change many) that reading stands, at most [`READ_AT_LEAST_EVERY`] frames in a row.
//!
//! A camera that moves between frames (hand-held photos) is read with
//! [`Tracking::LocateEveryFrame`]: every frame is located afresh, and a view that turned keeps
//! the first frame's indexing, matched on the stones.
//!
//! Every board search a frame starts runs within a [`WorkLimit`] (the default budget, or the
//! caller's with its cancel flag: the service raises it at its deadline), so a hostile frame
//! cannot hold the reader, whoever drives it.

use image::RgbImage;
use tengen_rules::{PointState, BOARD_LINES, BOARD_POINTS};

use crate::calibration::{Calibration, CalibrationError};
use crate::grey::grey;
use crate::locate::{
    from_corners, locate, refine_given, refine_gray, refine_or_find_corners, LocateError, LocateOptions,
};
use crate::reading::{read_board, BoardReading, PointReading, ReaderConfig};
use crate::tracking::{line_score, line_score_rgb, max_shift_cells, TrackerConfig};
use crate::work::WorkLimit;
use crate::{GridGeometry, LensDistortion};

/// A patch mean that moves by this many grey levels (0–255) or more, beyond the whole frame's
/// change of exposure, means the board changed there. A stone on an empty point moves its
/// patch by 50–150 levels (black on wood, or white over dark grid lines); camera noise averaged
/// over the patch moves it by one or two.
pub const STILL_PATCH_LEVELS: f32 = 12.0;

/// A still board is still read afresh at least every this many frames (at 2 fps: every 4 s).
pub const READ_AT_LEAST_EVERY: u32 = 8;

/// In a stretch of frames where a hand covers the board, the first and then every this many
/// frames are re-fitted to catch a bump under the hand (at 2 fps: every two seconds); the
/// others are read with the tracked grid. A re-fit costs about two decodes, and hands cover a
/// board for much of a game's frames.
pub const RECHECK_COVERED_EVERY: u32 = 4;

/// Where the grid is known from, when it is not searched for.
#[derive(Debug, Clone, PartialEq)]
pub enum FixedGrid {
    /// The four corner intersections in pixels (top-left, top-right, bottom-right, bottom-left),
    /// no lens distortion: what an arbiter clicks on the dashboard.
    Corners([[f64; 2]; 4]),
    /// A calibration file (corners or homography, lens), scaled to each frame's size.
    Calibration(Box<Calibration>),
}

impl FixedGrid {
    /// The grid in a frame of `width` × `height` pixels, as given (see
    /// [`FixedGrid::refined_for`]).
    pub fn geometry_for(&self, width: u32, height: u32) -> Result<GridGeometry, FrameReadError> {
        match self {
            FixedGrid::Corners(corners) => from_corners(*corners, LensDistortion::none(width, height))
                .map(|l| l.geometry)
                .map_err(FrameReadError::BoardNotFound),
            FixedGrid::Calibration(calibration) => {
                calibration.geometry_for([width, height]).map_err(FrameReadError::Calibration)
            }
        }
    }
}

impl FixedGrid {
    /// The grid in `rgb`: the given grid refined to the frame's lines (a person's clicks are
    /// about a fifth of a cell off), or as given when the refinement fails. Clicked corners
    /// also get their lens distortion estimated, and when the lines near them do not settle
    /// them, the board the search finds is taken if it is the clicked one
    /// ([`refine_or_find_corners`]); a calibration file's grid and lens are kept.
    pub fn refined_for(&self, rgb: &RgbImage) -> Result<GridGeometry, FrameReadError> {
        if let FixedGrid::Corners(corners) = self {
            return refine_or_find_corners(rgb, *corners, None)
                .map(|given| given.located.geometry)
                .map_err(FrameReadError::BoardNotFound);
        }
        let (w, h) = rgb.dimensions();
        let given = self.geometry_for(w, h)?;
        Ok(refine_given(&grey(rgb), &given, false).located.geometry)
    }
}

/// How the board is followed from frame to frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tracking {
    /// Locate once, then track (a fixed camera over a board: the tournament set-up).
    #[default]
    Track,
    /// Locate every frame (a camera that moves between frames, e.g. hand-held photos).
    LocateEveryFrame,
}

/// Why a frame gave no reading.
#[derive(Debug, thiserror::Error)]
pub enum FrameReadError {
    /// No board was found in the frame (and none is known from earlier frames).
    #[error("board not found: {0}")]
    BoardNotFound(LocateError),
    /// The calibration does not fit the frame (another aspect ratio, a degenerate grid).
    #[error("the calibration does not fit this frame: {0}")]
    Calibration(CalibrationError),
}

/// One frame's reading with where the grid was.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameReading {
    /// The 361 points and the occlusion.
    pub reading: BoardReading,
    /// Where the grid lay in this frame.
    pub geometry: GridGeometry,
    /// The board (or camera) moved since the previous frame: largest shift of an intersection,
    /// in cells. The referee raises `board_moved` and restarts its stable window.
    pub moved_cells: Option<f64>,
    /// The reading is the last clean frame's, kept because nothing on the board changed.
    pub kept: bool,
    /// Quarter turns applied to bring a view that turned back to the first view's indexing
    /// ([`Tracking::LocateEveryFrame`] only; 0 otherwise).
    pub turned: usize,
}

impl FrameReading {
    /// Each point's state, row-major from the top-left as seen.
    pub fn states(&self) -> impl Iterator<Item = PointState> + '_ {
        self.reading.points.iter().flatten().map(|p| p.state)
    }

    /// Each point's confidence in 0..=1, row-major.
    pub fn confidences(&self) -> impl Iterator<Item = f32> + '_ {
        self.reading.points.iter().flatten().map(|p| p.confidence.clamp(0.0, 1.0))
    }

    /// The mean of the points' confidences: the frame's confidence.
    pub fn confidence(&self) -> f32 {
        #[allow(clippy::cast_precision_loss)]
        let mean = self.confidences().sum::<f32>() / BOARD_POINTS as f32;
        mean
    }
}

/// What a still board is compared with.
#[derive(Debug, Clone)]
struct LastRead {
    patches: Vec<f32>,
    reading: FrameReading,
    /// Frames since it was read that kept its reading.
    kept: u32,
}

/// The grid found earlier and how well its lines showed then.
#[derive(Debug, Clone)]
struct TrackedGrid {
    geometry: GridGeometry,
    reference_score: f64,
}

/// Reads the frames of one camera in order (see the module documentation).
#[derive(Debug, Clone)]
pub struct FrameReader {
    fixed: Option<FixedGrid>,
    tracking: Tracking,
    tracked: Option<TrackedGrid>,
    config: ReaderConfig,
    /// Consecutive poorly fitting frames in which the reader saw a hand.
    covered_streak: u32,
    /// Whether the tracked grid's lines fitted the last frame read with it.
    lines_fit: bool,
    /// The last frame read with the tracked grid: its intersection patches and its reading.
    last_read: Option<LastRead>,
    /// [`Tracking::LocateEveryFrame`]: the last reading, and the quarter turns that bring a
    /// freshly located view back to the first view's indexing.
    last_located: Option<(BoardReading, GridGeometry)>,
    view_turns: usize,
    /// The fixed grid refined to the lines of the first frame of this size read with it.
    fixed_refined: Option<([u32; 2], GridGeometry)>,
}

impl FrameReader {
    /// A reader that searches for the board, or takes it from `fixed`.
    pub fn new(fixed: Option<FixedGrid>, tracking: Tracking) -> Self {
        FrameReader {
            fixed,
            tracking,
            tracked: None,
            config: ReaderConfig::default(),
            covered_streak: 0,
            lines_fit: false,
            last_read: None,
            last_located: None,
            view_turns: 0,
            fixed_refined: None,
        }
    }

    /// Sets (or clears) the fixed grid; the next frame starts afresh.
    pub fn set_fixed(&mut self, fixed: Option<FixedGrid>) {
        self.fixed = fixed;
        self.tracked = None;
        self.last_read = None;
        self.fixed_refined = None;
    }

    /// Whether the next frame will need a full board search (nothing fixed or tracked yet).
    pub fn needs_search(&self) -> bool {
        self.fixed.is_none() && self.tracked.is_none()
    }

    /// Reads the next frame; a board search it needs runs within the default work budget.
    pub fn read(&mut self, rgb: &RgbImage) -> Result<FrameReading, FrameReadError> {
        self.read_within(rgb, &WorkLimit::default())
    }

    /// Reads the next frame; a board search it needs runs within `work` (a search cut short is
    /// [`LocateError::Stopped`], and the reader then starts afresh on the next frame).
    pub fn read_within(&mut self, rgb: &RgbImage, work: &WorkLimit) -> Result<FrameReading, FrameReadError> {
        if self.tracking == Tracking::LocateEveryFrame && self.fixed.is_none() {
            return self.read_located(rgb, work);
        }
        let fixed = self.fixed_geometry(rgb)?;
        let Some(geometry) = fixed.as_ref().or(self.tracked.as_ref().map(|t| &t.geometry)).cloned() else {
            return self.search(rgb, None, None, work);
        };
        let patches = intersection_patches(rgb, &geometry);
        if let Some(last) = self.last_read.as_mut() {
            if still(&patches, &last.patches) && last.kept + 1 < READ_AT_LEAST_EVERY {
                last.kept += 1;
                return Ok(FrameReading { moved_cells: None, kept: true, ..last.reading.clone() });
            }
        }
        let reading = match &fixed {
            Some(g) => Ok(fresh(read_board(rgb, g, &self.config), g.clone(), None)),
            None => self.read_tracked(rgb, work),
        };
        // Only a clean reading is kept: the same grid as the patches, lines that fit (no hand,
        // no bump in doubt: those frames are all read, and re-fitted as they need).
        let clean =
            fixed.is_some() || (self.lines_fit && self.tracked.as_ref().is_some_and(|t| t.geometry == geometry));
        self.last_read = match &reading {
            Ok(r) if clean && !r.reading.occluded => Some(LastRead { patches, reading: r.clone(), kept: 0 }),
            _ => None,
        };
        reading
    }

    /// The fixed grid for this frame, if any: refined to the lines once per frame size (the
    /// camera is fixed; a refinement per frame would cost a search's worth of time each).
    fn fixed_geometry(&mut self, rgb: &RgbImage) -> Result<Option<GridGeometry>, FrameReadError> {
        let Some(fixed) = &self.fixed else { return Ok(None) };
        let (w, h) = rgb.dimensions();
        if let Some((size, geometry)) = &self.fixed_refined {
            if *size == [w, h] {
                return Ok(Some(geometry.clone()));
            }
        }
        let geometry = fixed.refined_for(rgb)?;
        self.fixed_refined = Some(([w, h], geometry.clone()));
        Ok(Some(geometry))
    }

    /// Reads a frame with the tracked grid (checking first that its lines still fit), or
    /// locates the board again when it moved.
    fn read_tracked(&mut self, rgb: &RgbImage, work: &WorkLimit) -> Result<FrameReading, FrameReadError> {
        let mut previous = None;
        if let Some(tracked) = &self.tracked {
            // The line check reads a few thousand pixels: grey just those, not the frame.
            let fit = line_score_rgb(rgb, &tracked.geometry) / tracked.reference_score;
            let reading = read_board(rgb, &tracked.geometry, &self.config);
            self.lines_fit = fit >= TrackerConfig::default().stable_ratio;
            if self.lines_fit {
                self.covered_streak = 0;
                return Ok(fresh(reading, tracked.geometry.clone(), None));
            }
            // The lines fit less well: a hand over the board, or a bump. Within a stretch of
            // covered frames, most are taken as read (see RECHECK_COVERED_EVERY).
            if reading.occluded && !self.covered_streak.is_multiple_of(RECHECK_COVERED_EVERY) {
                self.covered_streak += 1;
                return Ok(fresh(reading, tracked.geometry.clone(), None));
            }
            // A local re-fit from the old grid tells a hand from a bump; a hand that hides too
            // much to re-fit is seen by the reader.
            let gray = grey(rgb);
            let not_moved = match refine_gray(&gray, &tracked.geometry) {
                Ok(refit) => {
                    max_shift_cells(&tracked.geometry, &refit.geometry) <= TrackerConfig::default().moved_cells
                }
                Err(_) => reading.occluded,
            };
            if not_moved {
                self.covered_streak = if reading.occluded { self.covered_streak + 1 } else { 0 };
                return Ok(fresh(reading, tracked.geometry.clone(), None));
            }
            previous = Some((tracked.geometry.clone(), gray));
        }
        self.covered_streak = 0;
        match previous {
            Some((geometry, gray)) => self.search(rgb, Some(geometry), Some(gray), work),
            None => self.search(rgb, None, None, work),
        }
    }

    /// A full search settles where the board is now (no grid yet, or it moved from `previous`).
    fn search(
        &mut self,
        rgb: &RgbImage,
        previous: Option<GridGeometry>,
        gray: Option<image::GrayImage>,
        work: &WorkLimit,
    ) -> Result<FrameReading, FrameReadError> {
        self.last_read = None;
        let gray = gray.unwrap_or_else(|| grey(rgb));
        // The same search `tengen eval` measures (the colour frame's greys), not one of our own;
        // the luma stays the tracker's reference for the grid's line score.
        match locate(rgb, &LocateOptions { work: work.clone(), ..LocateOptions::default() }) {
            Ok(located) => {
                let reference_score = line_score(&gray, &located.geometry).max(1e-6);
                let shift = previous.as_ref().map(|old| max_shift_cells(old, &located.geometry));
                let moved = shift.filter(|&s| s > TrackerConfig::default().moved_cells);
                let reading = fresh(read_board(rgb, &located.geometry, &self.config), located.geometry.clone(), moved);
                self.tracked = Some(TrackedGrid { geometry: located.geometry, reference_score });
                Ok(reading)
            }
            Err(err) => {
                self.tracked = None;
                Err(FrameReadError::BoardNotFound(err))
            }
        }
    }

    /// [`Tracking::LocateEveryFrame`]: locates the board afresh (keeping the last grid when it
    /// is not found), reports a move, and turns the reading back to the first view's indexing.
    fn read_located(&mut self, rgb: &RgbImage, work: &WorkLimit) -> Result<FrameReading, FrameReadError> {
        let located = locate(rgb, &LocateOptions { work: work.clone(), ..LocateOptions::default() });
        let previous = self.last_located.as_ref().map(|(_, g)| g.clone());
        let (geometry, relocated) = match (located, previous.clone()) {
            (Ok(l), _) => (l.geometry, true),
            (Err(_), Some(g)) => (g, false),
            (Err(err), None) => return Err(FrameReadError::BoardNotFound(err)),
        };
        let moved = match (&previous, relocated) {
            (Some(old), true) => {
                Some(max_shift_cells(old, &geometry)).filter(|&s| s > TrackerConfig::default().moved_cells)
            }
            _ => None,
        };
        let mut reading = read_board(rgb, &geometry, &self.config);
        let mut turned = 0;
        if relocated {
            turn_reading(&mut reading, self.view_turns);
            if let Some((last, _)) = &self.last_located {
                if let Some(turns) = align_quarter_turns(&mut reading, last) {
                    self.view_turns = (self.view_turns + turns) % 4;
                    turned = turns;
                }
            }
        }
        self.last_located = Some((reading.clone(), geometry.clone()));
        Ok(FrameReading { reading, geometry, moved_cells: moved, kept: false, turned })
    }
}

fn fresh(reading: BoardReading, geometry: GridGeometry, moved_cells: Option<f64>) -> FrameReading {
    FrameReading { reading, geometry, moved_cells, kept: false, turned: 0 }
}

/// Whether no intersection patch changed between two frames. A change of the camera's exposure
/// moves every patch alike, so the patches are compared after taking out the median change (a
/// large one, a light switched on, still counts as a change).
fn still(patches: &[f32], reference: &[f32]) -> bool {
    if patches.len() != reference.len() {
        return false;
    }
    let mut changes: Vec<f32> = patches.iter().zip(reference).map(|(a, b)| a - b).filter(|d| !d.is_nan()).collect();
    if changes.is_empty() {
        return false;
    }
    let middle = changes.len() / 2;
    let (_, &mut exposure, _) = changes.select_nth_unstable_by(middle, f32::total_cmp);
    exposure.abs() < STILL_PATCH_LEVELS
        && patches
            .iter()
            .zip(reference)
            .all(|(a, b)| ((a - b) - exposure).abs() < STILL_PATCH_LEVELS || (a.is_nan() && b.is_nan()))
}

/// The mean grey level (Rec. 709, 0–255) of a small patch, ±0.12 cell, around each of the 361
/// intersections as the grid projects them, row-major. A stone covers ±0.45 cell, a hand
/// many cells, so either changes the patches it lands on. NaN for a patch outside the frame.
fn intersection_patches(rgb: &RgbImage, geometry: &GridGeometry) -> Vec<f32> {
    let (w, h) = rgb.dimensions();
    let raw = rgb.as_raw();
    let last = (BOARD_LINES - 1) as f64;
    let cell = {
        let c = geometry.corners();
        let d = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
        (d(c[0], c[1]) + d(c[1], c[2]) + d(c[2], c[3]) + d(c[3], c[0])) / (4.0 * last)
    };
    // Five by five samples spread over the patch (at most every pixel).
    let step = (0.06 * cell).max(1.0);
    let mut patches = Vec::with_capacity(BOARD_POINTS);
    for row in 0..BOARD_LINES {
        for col in 0..BOARD_LINES {
            let p = geometry.project(col as f64, row as f64);
            let mut sum = 0u32;
            let mut n = 0u32;
            for dy in -2i32..=2 {
                for dx in -2i32..=2 {
                    let (x, y) = ((p[0] + f64::from(dx) * step).round(), (p[1] + f64::from(dy) * step).round());
                    if x < 0.0 || y < 0.0 || x >= f64::from(w) || y >= f64::from(h) {
                        continue;
                    }
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let i = (y as usize * w as usize + x as usize) * 3;
                    sum += 2126 * u32::from(raw[i]) + 7152 * u32::from(raw[i + 1]) + 722 * u32::from(raw[i + 2]);
                    n += 1;
                }
            }
            #[allow(clippy::cast_precision_loss)]
            patches.push(if n == 25 { sum as f32 / (n as f32 * 10_000.0) } else { f32::NAN });
        }
    }
    patches
}

/// A board located afresh is indexed from the top-left corner *as seen*, so a hand-held camera
/// that turns (imago t1: the EXIF tag flips mid-game) would turn the whole board. Turns the
/// reading by the quarter turn that agrees best with the last reading, when that is clearly
/// better than not turning; returns the number of quarter turns applied.
fn align_quarter_turns(reading: &mut BoardReading, last: &BoardReading) -> Option<usize> {
    // Agreement: each stone of the last reading found again counts for, each one now read as
    // something else (another colour, or empty) against; new stones are moves and count neither.
    let agreement = |points: &[[PointReading; BOARD_LINES]; BOARD_LINES]| -> i64 {
        let mut score = 0;
        for (row, last_row) in points.iter().zip(&last.points) {
            for (p, q) in row.iter().zip(last_row) {
                if !matches!(q.state, PointState::Black | PointState::White) || p.state == PointState::Unknown {
                    continue;
                }
                score += if p.state == q.state { 1 } else { -1 };
            }
        }
        score
    };
    let mut turned = reading.points;
    let mut best = (0, agreement(&reading.points));
    let unturned = best.1;
    for turns in 1..4 {
        turned = quarter_turn(&turned);
        let score = agreement(&turned);
        if score > best.1 {
            best = (turns, score);
        }
    }
    // At least one stone more found again (and one fewer lost): an empty board gives no reason
    // to turn, and a turn must beat staying put, not tie with it.
    if best.0 == 0 || best.1 < unturned + 2 {
        return None;
    }
    turn_reading(reading, best.0);
    Some(best.0)
}

/// Turns a reading (points and occluded points) by quarter turns clockwise.
fn turn_reading(reading: &mut BoardReading, turns: usize) {
    for _ in 0..turns % 4 {
        reading.points = quarter_turn(&reading.points);
        // (col, row) → the same quarter turn as the points.
        let last = (BOARD_LINES - 1) as u8;
        reading.occluded_points = reading.occluded_points.iter().map(|&(c, r)| (last - r, c)).collect();
    }
}

/// The grid turned a quarter clockwise: the point at (row, col) moves to (col, 18 − row).
fn quarter_turn<T: Copy>(points: &[[T; BOARD_LINES]; BOARD_LINES]) -> [[T; BOARD_LINES]; BOARD_LINES] {
    let mut out = *points;
    for (r, row) in points.iter().enumerate() {
        for (c, &p) in row.iter().enumerate() {
            out[c][BOARD_LINES - 1 - r] = p;
        }
    }
    out
}
