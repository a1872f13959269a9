//! Corners given by a person (`calibrate --corners`, the dashboard's clicks, a calibration
//! file) as a starting point: the grid they span is refined to the board's lines, and how far
//! each corner moved is reported. A careful click is about a fifth of a cell off; a grid trusted
//! as exact at that error puts the reader's patches beside the points and collapses the reading.

use super::refine::{self, Working};
// The refined grid must pass the search's own gates: on a crowded oblique board the line
// searches can lock onto the gaps between stones, half a cell off, and such a fit agrees with
// few intersections and fits them loosely.
use super::{from_corners, FitQuality, GeometrySource, LocateError, Located, MAX_RMS_CELLS, MIN_INLIERS};
use crate::work::{WorkLimit, WorkMeter};
use crate::{GridGeometry, LensDistortion};

/// Search radii of the refinement passes, in cells. The first is half a cell: a corner given
/// up to half a cell off still has its own line nearer than any neighbour, and a wider search
/// would reach the neighbouring line. Each later pass narrows to the settled grid's accuracy.
const PASS_RADII: [f64; 5] = [0.5, 0.42, 0.3, 0.2, 0.12];
/// Largest move of a corner, in cells of the given grid at that corner, for the refinement to
/// be believed: a click half a cell off in each direction needs 0.71, and under perspective the
/// corner's cell is smaller than the mean one the click error is stated in. A whole cell or
/// more is a snap onto another line.
const MAX_MOVE_CELLS: f64 = 1.0;

/// What became of given corners.
#[derive(Debug, Clone, PartialEq)]
pub enum Refinement {
    /// The grid was fitted to the lines; how far each corner (TL, TR, BR, BL) moved, in cells.
    Refined {
        /// Move of each corner, in cells of the grid at that corner.
        moved_cells: [f64; 4],
    },
    /// The lines near the given grid did not settle it, and the board searched from scratch
    /// is the clicked one ([`refine_or_find_corners`]); how far each corner moved, in cells.
    Found {
        /// Move of each corner, in cells of the given grid at that corner.
        moved_cells: [f64; 4],
    },
    /// The corners were kept as given, and why.
    Kept {
        /// Why the refinement was not taken.
        reason: String,
    },
}

/// Given corners and the grid located from them.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenCorners {
    /// The refined grid (or the given one, when the refinement was not taken).
    pub located: Located,
    /// What the refinement did.
    pub refinement: Refinement,
}

/// The grid spanned by `corners` (TL, TR, BR, BL outer intersections, pixels as seen) refined to
/// the lines of `gray`. `lens` is the known distortion; when `None` it is estimated. Errors only
/// for corners that span no board; a refinement that fails keeps the corners as given.
pub fn refine_corners(
    gray: &image::GrayImage,
    corners: [[f64; 2]; 4],
    lens: Option<LensDistortion>,
) -> Result<GivenCorners, LocateError> {
    let (width, height) = gray.dimensions();
    let given = from_corners(corners, lens.unwrap_or_else(|| LensDistortion::none(width, height)))?;
    Ok(refine_given(gray, &given.geometry, lens.is_none()))
}

/// [`refine_corners`], and when the lines near the given grid do not settle it, the board
/// searched from scratch (as [`super::locate`] searches a frame without clicks) if it is the
/// clicked one: what a person's clicks (`calibrate --corners`, the dashboard's) give. The fits
/// keep [`refine_corners`] for the labelled grids they train on (models/locate.md: taking the
/// search there changed every fold's training data and lost a left-out source).
pub fn refine_or_find_corners(
    rgb: &image::RgbImage,
    corners: [[f64; 2]; 4],
    lens: Option<LensDistortion>,
) -> Result<GivenCorners, LocateError> {
    let refined = refine_corners(&crate::grey(rgb), corners, lens)?;
    let Refinement::Kept { reason } = &refined.refinement else {
        return Ok(refined);
    };
    let given = refined.located.geometry.clone();
    // The lines near the given grid did not settle it (a crowded board hides most of them):
    // the board searched from scratch is taken instead when it is the clicked board, every
    // corner within the move a refinement may make, numbered as the person numbered it.
    let options = super::LocateOptions { lens, ..super::LocateOptions::default() };
    match super::locate(rgb, &options).ok().and_then(|found| as_clicked(&given, found)) {
        Some((located, moved_cells)) => Ok(GivenCorners { located, refinement: Refinement::Found { moved_cells } }),
        None => Ok(GivenCorners {
            located: refined.located.clone(),
            refinement: Refinement::Kept { reason: reason.clone() },
        }),
    }
}

/// The searched grid renumbered the way the given one is (of the board's 8 symmetries, the one
/// whose corners lie nearest the given corners), with each corner's move in cells; `None` when a
/// corner would move more than [`MAX_MOVE_CELLS`].
fn as_clicked(given: &GridGeometry, found: Located) -> Option<(Located, [f64; 4])> {
    refine::board_symmetries()
        .into_iter()
        .map(|p| {
            let geometry = refine::reindex(&found.geometry, &p);
            let moved = corner_moves(given, &geometry);
            (moved.iter().copied().fold(0.0, f64::max), geometry, moved)
        })
        .filter(|(worst, _, _)| worst.is_finite())
        .min_by(|x, y| x.0.total_cmp(&y.0))
        .filter(|(worst, _, _)| *worst <= MAX_MOVE_CELLS)
        .map(|(_, geometry, moved)| {
            let quality = FitQuality { source: GeometrySource::GivenCorners, ..found.quality.clone() };
            (Located { geometry, quality }, moved)
        })
}

/// A given grid (from corners or a calibration file, within half a cell of the lines) refined
/// to the lines of `gray`, keeping its indexing and extent; `estimate_lens` fits the radial
/// distortion too. A refinement that fails keeps `given` and says why.
pub fn refine_given(gray: &image::GrayImage, given: &GridGeometry, estimate_lens: bool) -> GivenCorners {
    // Within the default work budget: a refinement cut short keeps the corners as given.
    let meter = WorkMeter::new(&WorkLimit::default());
    match refine_geometry(&super::working(gray, &meter), given, estimate_lens, &meter) {
        Ok((located, moved_cells)) => GivenCorners { located, refinement: Refinement::Refined { moved_cells } },
        Err(reason) => GivenCorners { located: as_given(given), refinement: Refinement::Kept { reason } },
    }
}

/// A given grid taken as it is.
fn as_given(geometry: &GridGeometry) -> Located {
    let quality = FitQuality {
        source: GeometrySource::GivenCorners,
        // The four given corners.
        inlier_intersections: 4,
        rms_error_cells: 0.0,
        extent_contrast: 0.0,
        cell_px: refine::median_cell(geometry),
        work_steps: 0,
    };
    Located { geometry: geometry.clone(), quality }
}

/// Refines a geometry known to within half a cell, keeping its indexing (the person's corner
/// order) and extent; returns the refined grid and how far each corner moved, in cells.
fn refine_geometry(
    work: &Working,
    initial: &GridGeometry,
    estimate_lens: bool,
    meter: &WorkMeter,
) -> Result<(Located, [f64; 4]), String> {
    let mut geom = initial.clone();
    let mut last: Option<refine::Fit> = None;
    for (pass, &radius) in PASS_RADII.iter().enumerate() {
        let found = refine::find_intersections(work, &geom, radius, meter);
        meter.check().map_err(|e| e.to_string())?;
        let Some(f) = refine::fit(&found, geom.lens, refine::median_cell(&geom)) else {
            return Err(format!("only {} intersections seen near the given grid", found.len()));
        };
        geom = f.geometry.clone();
        if estimate_lens && pass == 2 {
            if let Some(lens) = refine::estimate_lens(&f.inliers, geom.lens, refine::median_cell(&geom)) {
                if let Some(relens) = refine::fit(&f.inliers, lens, refine::median_cell(&geom)) {
                    geom = relens.geometry;
                }
            }
        }
        last = Some(f);
    }
    let fit = last.ok_or("no refinement pass ran")?;
    if fit.inliers.len() < MIN_INLIERS {
        return Err(format!("only {} intersections agree with the lines (need {MIN_INLIERS})", fit.inliers.len()));
    }
    if fit.rms_cells > MAX_RMS_CELLS {
        return Err(format!("the lines fit poorly ({:.2} cell RMS)", fit.rms_cells));
    }
    let moved = corner_moves(initial, &fit.geometry);
    let worst = moved.iter().copied().fold(0.0, f64::max);
    if moved.iter().any(|m| !m.is_finite()) || worst > MAX_MOVE_CELLS {
        return Err(format!("a corner would move {worst:.2} cell: onto another line"));
    }
    let quality = FitQuality {
        source: GeometrySource::GivenCorners,
        inlier_intersections: fit.inliers.len(),
        rms_error_cells: fit.rms_cells,
        extent_contrast: 0.0,
        cell_px: refine::median_cell(&fit.geometry),
        work_steps: meter.spent(),
    };
    Ok((Located { geometry: fit.geometry, quality }, moved))
}

/// How far each outer corner of `after` lies from that of `before`, in cells of `before` at
/// that corner.
fn corner_moves(before: &GridGeometry, after: &GridGeometry) -> [f64; 4] {
    let last = (tengen_rules::BOARD_LINES - 1) as f64;
    let (a, b) = (before.corners(), after.corners());
    let inward = [[1.0, 1.0], [last - 1.0, 1.0], [last - 1.0, last - 1.0], [1.0, last - 1.0]];
    let board = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
    std::array::from_fn(|k| {
        // The cell at the corner: the diagonal step inwards, over √2.
        let inner = before.project(inward[k][0], inward[k][1]);
        let o = before.project(board[k][0], board[k][1]);
        let cell = ((inner[0] - o[0]).hypot(inner[1] - o[1]) / std::f64::consts::SQRT_2).max(1e-9);
        (b[k][0] - a[k][0]).hypot(b[k][1] - a[k][1]) / cell
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn located(geometry: GridGeometry) -> Located {
        Located { quality: as_given(&geometry).quality, geometry }
    }

    #[test]
    fn the_searched_board_is_renumbered_the_way_the_person_clicked_it() {
        let (_, truth) = super::super::board_on_a_dark_table(0.8);
        let last = (tengen_rules::BOARD_LINES - 1) as f64;
        // The clicks: each corner about a third of a cell off, in the person's order.
        let clicked = truth.corners();
        let offsets = [[8.0, -5.0], [-6.0, 7.0], [5.0, 6.0], [-7.0, -6.0]];
        let corners: [[f64; 2]; 4] =
            std::array::from_fn(|k| [clicked[k][0] + offsets[k][0], clicked[k][1] + offsets[k][1]]);
        let given = from_corners(corners, truth.lens).expect("a board").geometry;
        // The search numbers the same board another way: columns and rows swapped, rows reversed.
        let turned = refine::reindex(&truth, &nalgebra::Matrix3::new(0.0, -1.0, last, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0));
        let (renumbered, moved) = as_clicked(&given, located(turned)).expect("the clicked board");
        for (a, b) in renumbered.geometry.corners().iter().zip(truth.corners()) {
            assert!((a[0] - b[0]).hypot(a[1] - b[1]) < 1e-6, "{a:?} against {b:?}");
        }
        assert!(moved.iter().all(|m| (0.2..0.5).contains(m)), "{moved:?}");
        // A board three lines away is not the clicked one.
        let elsewhere = refine::reindex(&truth, &refine::translation(3.0, 0.0));
        assert!(as_clicked(&given, located(elsewhere)).is_none());
    }
}
