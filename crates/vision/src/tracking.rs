//! Tracking a located board from frame to frame: a cheap check that the previous grid still
//! fits the new frame (sampling the predicted lines), and, only when it does not, a local
//! re-fit or a full search. Reports [`TrackStatus::Stable`], [`TrackStatus::Moved`] (with the
//! new geometry, so the referee can raise `board_moved`) or [`TrackStatus::Lost`].

use image::{GrayImage, RgbImage};
use tengen_rules::BOARD_LINES;

use crate::locate::{locate_gray, refine_gray, LocateOptions, Located};
use crate::GridGeometry;

/// Thresholds of the tracker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackerConfig {
    /// The grid still fits when the line score is at least this fraction of the score it had
    /// when it was located (stones added since lower it a little; a shift drops it to noise).
    pub stable_ratio: f64,
    /// A re-fitted grid counts as moved when some intersection moved by more than this (cells).
    pub moved_cells: f64,
}

impl Default for TrackerConfig {
    fn default() -> Self {
        Self { stable_ratio: 0.6, moved_cells: 0.25 }
    }
}

/// What the tracker concluded about a new frame.
#[derive(Debug, Clone, PartialEq)]
pub enum TrackStatus {
    /// The grid is where it was.
    Stable {
        /// Line score now over the reference score.
        fit_ratio: f64,
    },
    /// The board (or camera) moved; here is where the grid is now.
    Moved {
        /// The newly located board.
        located: Located,
        /// Largest displacement of an intersection, in cells of the old grid.
        shift_cells: f64,
    },
    /// The grid cannot be found in this frame (covered, out of view, or gone).
    Lost {
        /// Why the search failed.
        reason: String,
    },
}

/// Follows one board across frames.
#[derive(Debug, Clone)]
pub struct Tracker {
    geometry: GridGeometry,
    reference_score: f64,
    config: TrackerConfig,
    options: LocateOptions,
}

impl Tracker {
    /// Starts tracking a board located in `frame` (the frame sets the reference line score).
    pub fn new(geometry: GridGeometry, frame: &GrayImage, config: TrackerConfig, options: LocateOptions) -> Self {
        let reference_score = line_score(frame, &geometry).max(1e-6);
        Self { geometry, reference_score, config, options }
    }

    /// The geometry currently tracked.
    pub fn geometry(&self) -> &GridGeometry {
        &self.geometry
    }

    /// Checks a new frame. Cheap when the grid still fits (a few thousand pixel reads).
    pub fn check(&mut self, frame: &GrayImage) -> TrackStatus {
        let score = line_score(frame, &self.geometry);
        let fit_ratio = score / self.reference_score;
        if fit_ratio >= self.config.stable_ratio {
            return TrackStatus::Stable { fit_ratio };
        }
        // The grid does not fit as well: a hand over the board, or a move. A local re-fit from the
        // old grid settles small moves and occlusion; a full search settles large moves.
        let relocated = refine_gray(frame, &self.geometry).or_else(|_| locate_gray(frame, &self.options));
        match relocated {
            Ok(located) => {
                let shift = max_shift_cells(&self.geometry, &located.geometry);
                if shift <= self.config.moved_cells {
                    TrackStatus::Stable { fit_ratio }
                } else {
                    self.reference_score = line_score(frame, &located.geometry).max(1e-6);
                    self.geometry = located.geometry.clone();
                    TrackStatus::Moved { located, shift_cells: shift }
                }
            }
            Err(e) => TrackStatus::Lost { reason: e.to_string() },
        }
    }
}

/// Largest distance between corresponding intersections of two grids, in cells of `a`, over
/// the four board symmetries that keep the image orientation (a relocated board may be indexed
/// from another corner).
pub fn max_shift_cells(a: &GridGeometry, b: &GridGeometry) -> f64 {
    let last = (BOARD_LINES - 1) as f64;
    let cell = crate::locate::refine::median_cell(a).max(1e-9);
    let mut best = f64::INFINITY;
    for rot in 0..4 {
        let mut worst: f64 = 0.0;
        for r in (0..BOARD_LINES).step_by(6) {
            for c in (0..BOARD_LINES).step_by(6) {
                let (c, r) = (c as f64, r as f64);
                let (bc, br) = match rot {
                    0 => (c, r),
                    1 => (last - r, c),
                    2 => (last - c, last - r),
                    _ => (r, last - c),
                };
                let (p, q) = (a.project(c, r), b.project(bc, br));
                worst = worst.max(((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt());
            }
        }
        best = best.min(worst);
    }
    best / cell
}

/// Mean Weber darkness of the predicted grid lines at the midpoints between intersections
/// (where stones cover least), against the board 0.3 cell to either side. A grid that fits
/// scores well above zero; a shifted grid scores near zero.
pub fn line_score(frame: &GrayImage, geometry: &GridGeometry) -> f64 {
    line_score_by(frame.dimensions(), geometry, |x, y| f64::from(frame.get_pixel(x, y).0[0]))
}

/// [`line_score`] straight from a colour frame: each sampled pixel's grey is computed as
/// `image`'s grayscale computes it (Rec. 709 weights 2126/7152/722 over 10 000), so the
/// score is the same to the last bit, without greying the whole frame — the check samples only
/// a few thousand pixels, and a grey 1080p frame costs more than the check and the read together.
pub fn line_score_rgb(frame: &RgbImage, geometry: &GridGeometry) -> f64 {
    line_score_by(frame.dimensions(), geometry, |x, y| f64::from(crate::grey::luma(frame.get_pixel(x, y).0)))
}

/// The line score over a frame of `(width, height)` whose grey at an in-bounds pixel is `grey`.
fn line_score_by(dimensions: (u32, u32), geometry: &GridGeometry, grey: impl Fn(u32, u32) -> f64) -> f64 {
    let (w, h) = dimensions;
    let pixel = |x: f64, y: f64| -> Option<f64> {
        let (xi, yi) = (x.round(), y.round());
        if xi < 0.0 || yi < 0.0 || xi >= f64::from(w) || yi >= f64::from(h) {
            return None;
        }
        Some(grey(xi as u32, yi as u32))
    };
    let mut total = 0.0;
    let mut count = 0usize;
    for fixed in 0..BOARD_LINES {
        for step in 0..BOARD_LINES - 1 {
            let (f, s) = (fixed as f64, step as f64);
            for along_rows in [true, false] {
                // Segment of a row line (along_rows) or of a column line, between two intersections.
                let (a, b) = if along_rows {
                    (geometry.project(s, f), geometry.project(s + 1.0, f))
                } else {
                    (geometry.project(f, s), geometry.project(f, s + 1.0))
                };
                let mid = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
                let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
                let len = (dx * dx + dy * dy).sqrt();
                if len < 4.0 {
                    continue;
                }
                let normal = [-dy / len, dx / len];
                let reach = (0.08 * len).max(1.0).ceil() as i32;
                let mut darkest = f64::INFINITY;
                for t in -reach..=reach {
                    let t = f64::from(t);
                    if let Some(v) = pixel(mid[0] + normal[0] * t, mid[1] + normal[1] * t) {
                        darkest = darkest.min(v);
                    }
                }
                let side =
                    |sign: f64| pixel(mid[0] + normal[0] * sign * 0.3 * len, mid[1] + normal[1] * sign * 0.3 * len);
                let (Some(l), Some(r)) = (side(1.0), side(-1.0)) else { continue };
                if !darkest.is_finite() {
                    continue;
                }
                let board = l.min(r);
                total += ((board - darkest) / (board + 12.0)).max(0.0);
                count += 1;
            }
        }
    }
    if count == 0 {
        0.0
    } else {
        total / count as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LensDistortion;

    #[test]
    fn the_colour_frame_score_equals_the_grey_frame_score_to_the_bit() {
        // A board-like frame with dark lines, plus noise in every channel.
        let geometry = GridGeometry {
            homography: [[10.0, 1.0, 12.0], [-0.5, 10.5, 15.0], [0.0, 0.0, 1.0]],
            lens: LensDistortion::none(220, 220),
        };
        let mut seed = 7u32;
        let frame = RgbImage::from_fn(220, 220, |x, y| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let noise = (seed >> 24) as u8 / 8;
            let on_line = (x + y) % 10 == 0;
            let base: [u8; 3] = if on_line { [40, 35, 30] } else { [220, 180, 120] };
            image::Rgb(base.map(|c| c.saturating_add(noise)))
        });
        let grey = image::imageops::grayscale(&frame);
        for (p, g) in frame.pixels().zip(grey.pixels()) {
            assert_eq!(crate::grey::luma(p.0), g.0[0]);
        }
        let score = line_score(&grey, &geometry);
        assert!(score.is_finite());
        assert_eq!(line_score_rgb(&frame, &geometry).to_bits(), score.to_bits());
        // Every 8-bit grey is reproduced exactly.
        for v in 0..=255u8 {
            assert_eq!(crate::grey::luma([v, v, v]), v);
        }
    }
}
