//! Exact ground truth for a rendered frame: what is on the board and where the grid is.

use serde::{Deserialize, Serialize};

use tengen_rules::BOARD_LINES;
use tengen_vision::LensDistortion;

/// Everything a test needs to score vision on a rendered frame. All per-point arrays have 361
/// entries in row-major order *as seen*: index = row × 19 + col, row 0 the top row of the image.
///
/// "As seen" means the board coordinates are relabelled by whole quarter turns so that the
/// top-left intersection is the one nearest the image's top-left; `quarter_turns` says how the
/// seen grid relates to the physical position (`grid == physical.rotated(quarter_turns)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroundTruth {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// The 19 rows of the board as seen, `.` empty, `X` black, `O` white.
    pub grid: Vec<String>,
    /// The position as given to the renderer (diagram orientation).
    pub physical_grid: Vec<String>,
    /// Clockwise quarter turns from the physical position to the seen grid.
    pub quarter_turns: u8,
    /// The four outermost intersections in image pixels: TL, TR, BR, BL as seen.
    pub corners: [[f64; 2]; 4],
    /// Image pixel (through the lens) of every intersection, row-major as seen.
    pub intersections: Vec<[f64; 2]>,
    /// Row-major 3×3 homography from seen board coordinates (col, row, 1), both 0..=18, to
    /// undistorted pixels; then apply `lens.distort`.
    pub homography: [[f64; 3]; 3],
    /// Radial lens distortion (division model, as `tengen_vision::LensDistortion`).
    pub lens: LensDistortion,
    /// Image pixel of the visible top centre of each stone (None where empty). On oblique views
    /// this is shifted from the intersection by the stone's height and jitter.
    pub stone_tops: Vec<Option<[f64; 2]>>,
    /// Points hidden (wholly or partly) by a hand or arm.
    pub occluded: Vec<bool>,
    /// Points whose intersection lies inside the image.
    pub in_frame: Vec<bool>,
    /// A hand or arm is visible anywhere in the frame.
    pub hand_present: bool,
    /// A hand or arm is visible over the wooden board.
    pub hand_over_board: bool,
    /// Fraction of the image covered by hands and arms.
    pub hand_fraction: f64,
}

impl GroundTruth {
    /// Index of a seen (col, row) in the per-point arrays.
    pub fn index(col: usize, row: usize) -> usize {
        row * BOARD_LINES + col
    }

    /// The seen point state at (col, row) as a grid character (`.`, `X`, `O`).
    pub fn point(&self, col: usize, row: usize) -> char {
        self.grid.get(row).and_then(|r| r.chars().nth(col)).unwrap_or('.')
    }

    /// Pretty JSON for `*.truth.json` files.
    pub fn to_json(&self) -> String {
        // Serialising plain data cannot fail; fall back to an empty object defensively.
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into())
    }
}
