//! Where the board's grid lies in an image: a homography from board coordinates to pixels plus
//! radial lens distortion. The contract between board location and point reading.

use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};
use tengen_rules::BOARD_LINES;

use crate::homography::{self, PointPair};

/// One-parameter division model of radial distortion, the usual model for cheap lenses:
/// a distorted pixel `d` relates to its undistorted position `u` by
/// `u = c + (d - c) / (1 + k1 * r²)` with `r = |d - c| / scale`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LensDistortion {
    /// Radial coefficient; 0 means no distortion.
    pub k1: f64,
    /// Centre of distortion in pixels (usually the image centre).
    pub centre: [f64; 2],
    /// Normalising radius in pixels (usually half the image diagonal).
    pub scale: f64,
}

impl LensDistortion {
    /// No distortion, for an image of the given size.
    pub fn none(width: u32, height: u32) -> Self {
        let (w, h) = (f64::from(width), f64::from(height));
        Self { k1: 0.0, centre: [w / 2.0, h / 2.0], scale: (w * w + h * h).sqrt() / 2.0 }
    }

    /// Maps an undistorted pixel position to where the lens puts it in the image.
    pub fn distort(&self, undistorted: [f64; 2]) -> [f64; 2] {
        if self.k1 == 0.0 {
            return undistorted;
        }
        // Invert the division model exactly: the distorted radius r_d solves
        // (k1/s²)·r_u·r_d² − r_d + r_u = 0; the root that tends to r_u as k1 → 0 is
        // r_d = 2·r_u / (1 + √(1 − 4·k1·r_u²/s²)). Past the model's fold (positive k1, far out)
        // the discriminant is negative and the radius is clamped to the fold.
        let [cx, cy] = self.centre;
        let (ux, uy) = (undistorted[0] - cx, undistorted[1] - cy);
        let ru2 = (ux * ux + uy * uy) / (self.scale * self.scale);
        let disc = (1.0 - 4.0 * self.k1 * ru2).max(0.0);
        let factor = 2.0 / (1.0 + disc.sqrt());
        [cx + ux * factor, cy + uy * factor]
    }

    /// Maps an image pixel to its undistorted position.
    pub fn undistort(&self, distorted: [f64; 2]) -> [f64; 2] {
        let [cx, cy] = self.centre;
        let (dx, dy) = (distorted[0] - cx, distorted[1] - cy);
        let r2 = (dx * dx + dy * dy) / (self.scale * self.scale);
        let f = 1.0 + self.k1 * r2;
        [cx + dx / f, cy + dy / f]
    }
}

/// The board's grid in an image: board coordinates (column, row), both 0..=18 with (0,0) the
/// top-left intersection as seen, map to undistorted pixels by `homography`, then through `lens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridGeometry {
    /// Row-major 3×3 homography from board (col, row, 1) to undistorted pixels.
    pub homography: [[f64; 3]; 3],
    /// Radial distortion of the camera.
    pub lens: LensDistortion,
}

impl GridGeometry {
    /// The grid spanned by the four outermost intersections TL, TR, BR, BL as seen (pixels),
    /// with no judgement of its size or shape; `None` when the corners are degenerate. For
    /// corners a person gave, `locate::from_corners` also checks that they make a usable board.
    pub fn from_corners(corners: [[f64; 2]; 4], lens: LensDistortion) -> Option<Self> {
        let last = (BOARD_LINES - 1) as f64;
        let board = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
        let pairs: Vec<PointPair> =
            board.iter().zip(&corners).map(|(&from, &to)| PointPair { from, to: lens.undistort(to) }).collect();
        let h = homography::fit(&pairs)?;
        Some(Self { homography: to_rows(&h), lens })
    }

    /// The homography as a matrix.
    pub fn matrix(&self) -> Matrix3<f64> {
        let h = &self.homography;
        Matrix3::new(h[0][0], h[0][1], h[0][2], h[1][0], h[1][1], h[1][2], h[2][0], h[2][1], h[2][2])
    }

    /// Image pixel of a board position (fractional coordinates allowed, e.g. between lines).
    pub fn project(&self, col: f64, row: f64) -> [f64; 2] {
        let p = self.matrix() * Vector3::new(col, row, 1.0);
        self.lens.distort([p.x / p.z, p.y / p.z])
    }

    /// The same grid moved by `offset` pixels, lens centre included: a grid found in a cut-out
    /// of a frame, as seen in the frame (`offset`: the cut's top-left corner in the frame).
    pub fn translated(&self, offset: [f64; 2]) -> Self {
        let t = Matrix3::new(1.0, 0.0, offset[0], 0.0, 1.0, offset[1], 0.0, 0.0, 1.0);
        let mut lens = self.lens;
        lens.centre = [lens.centre[0] + offset[0], lens.centre[1] + offset[1]];
        Self { homography: to_rows(&(t * self.matrix())), lens }
    }

    /// The grid a misplaced location would give: its four outermost intersections put where this
    /// grid sees the board points `corner + offset` (offsets in grid spacings, TL, TR, BR, BL),
    /// with the same lens. `None` when the moved corners are degenerate.
    pub fn with_corners_moved(&self, offsets: [[f64; 2]; 4]) -> Option<Self> {
        let last = (BOARD_LINES - 1) as f64;
        let board = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
        let moved = std::array::from_fn(|i| self.project(board[i][0] + offsets[i][0], board[i][1] + offsets[i][1]));
        Self::from_corners(moved, self.lens)
    }

    /// The four outermost intersections in image pixels: TL, TR, BR, BL as seen.
    pub fn corners(&self) -> [[f64; 2]; 4] {
        let last = (BOARD_LINES - 1) as f64;
        [self.project(0.0, 0.0), self.project(last, 0.0), self.project(last, last), self.project(0.0, last)]
    }
}

/// A homography matrix as the rows `GridGeometry` keeps.
pub(crate) fn to_rows(h: &Matrix3<f64>) -> [[f64; 3]; 3] {
    [[h[(0, 0)], h[(0, 1)], h[(0, 2)]], [h[(1, 0)], h[(1, 1)], h[(1, 2)]], [h[(2, 0)], h[(2, 1)], h[(2, 2)]]]
}
