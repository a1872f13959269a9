//! Rectification: resample the board region of a frame into board coordinates, touching only the
//! pixels around the grid (never the whole image), and estimate stone-top parallax from the pose.

use image::RgbImage;
use nalgebra::Vector3;
use tengen_rules::BOARD_LINES;

use crate::geometry::GridGeometry;

/// Board cells of margin sampled outside the outermost lines (the wooden border, where an arm
/// that reaches over the edge is first seen).
pub const MARGIN_CELLS: usize = 1;

/// Largest supersampling factor per axis when one rectified sample covers many pixels.
const MAX_SUPERSAMPLE: usize = 4;

/// The board resampled on a regular lattice in board coordinates: `samples_per_cell` samples per
/// grid spacing, covering board coordinates `-MARGIN_CELLS ..= 18 + MARGIN_CELLS` on both axes.
/// Each sample is the mean linear-ish RGB (0..255 as f32) of its footprint in the image.
#[derive(Debug, Clone)]
pub struct RectifiedBoard {
    /// Samples per grid spacing.
    pub samples_per_cell: usize,
    /// Samples per side.
    pub side: usize,
    /// Row-major RGB samples; samples outside the image are NaN.
    pub rgb: Vec<[f32; 3]>,
    /// Mean number of image pixels per grid spacing (a rough scale of the board in the frame).
    pub pixels_per_cell: f64,
}

impl RectifiedBoard {
    /// Resamples the board region of `image` through `geometry`.
    pub fn new(image: &RgbImage, geometry: &GridGeometry, samples_per_cell: usize) -> Self {
        let spc = samples_per_cell.max(2);
        let span = BOARD_LINES - 1 + 2 * MARGIN_CELLS;
        let side = span * spc + 1;
        let step = 1.0 / spc as f64;
        let origin = -(MARGIN_CELLS as f64);
        // Image position of every lattice node, then each sample averages a footprint spanned by
        // the local lattice vectors (a box filter, so thin grid lines survive downsampling).
        // Project every other node exactly (lens distortion is iterative, so this is the costly
        // part) and place the ones between by linear interpolation: over 1/8 of a cell the
        // perspective and lens curvature move a node by far less than a pixel.
        let mut nodes = vec![[0.0f64; 2]; side * side];
        for j in (0..side).step_by(2) {
            let v = origin + j as f64 * step;
            for i in (0..side).step_by(2) {
                let u = origin + i as f64 * step;
                nodes[j * side + i] = geometry.project(u, v);
            }
        }
        let mid = |a: [f64; 2], b: [f64; 2]| [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
        for j in (0..side).step_by(2) {
            for i in (1..side - 1).step_by(2) {
                nodes[j * side + i] = mid(nodes[j * side + i - 1], nodes[j * side + i + 1]);
            }
        }
        for j in (1..side - 1).step_by(2) {
            for i in 0..side {
                nodes[j * side + i] = mid(nodes[(j - 1) * side + i], nodes[(j + 1) * side + i]);
            }
        }
        let corners = geometry.corners();
        let diag = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
        let pixels_per_cell = (diag(corners[0], corners[1])
            + diag(corners[1], corners[2])
            + diag(corners[2], corners[3])
            + diag(corners[3], corners[0]))
            / (4.0 * (BOARD_LINES - 1) as f64);
        let footprint = pixels_per_cell / spc as f64;
        // When one sample covers many pixels, box-average the board's region first (one
        // sequential pass, cache-friendly) and sample that: scattered supersampling of the full
        // frame costs far more than the decode it is compared with.
        let factor = (footprint / 1.5).floor().clamp(1.0, 16.0) as u32;
        let source = if factor > 1 { Some(Downscaled::new(image, &nodes, factor)) } else { None };
        let lookup = |x: f64, y: f64| match &source {
            Some(d) => d.bilinear(x, y),
            None => bilinear(image, x, y),
        };
        let effective = footprint / f64::from(factor);
        let sub = (effective / 2.5).ceil().clamp(1.0, MAX_SUPERSAMPLE as f64) as usize;
        let mut rgb = Vec::with_capacity(side * side);
        for j in 0..side {
            for i in 0..side {
                let p = nodes[j * side + i];
                if sub == 1 {
                    rgb.push(lookup(p[0], p[1]));
                    continue;
                }
                let (i0, i1) = (i.saturating_sub(1), (i + 1).min(side - 1));
                let (j0, j1) = (j.saturating_sub(1), (j + 1).min(side - 1));
                let du = lattice_step(nodes[j * side + i0], nodes[j * side + i1], i1 - i0);
                let dv = lattice_step(nodes[j0 * side + i], nodes[j1 * side + i], j1 - j0);
                let mut acc = [0.0f32; 3];
                let mut n = 0.0f32;
                for b in 0..sub {
                    let fb = (b as f64 + 0.5) / sub as f64 - 0.5;
                    for a in 0..sub {
                        let fa = (a as f64 + 0.5) / sub as f64 - 0.5;
                        let s = lookup(p[0] + fa * du[0] + fb * dv[0], p[1] + fa * du[1] + fb * dv[1]);
                        if s[0].is_finite() {
                            acc[0] += s[0];
                            acc[1] += s[1];
                            acc[2] += s[2];
                            n += 1.0;
                        }
                    }
                }
                rgb.push(if n > 0.0 { [acc[0] / n, acc[1] / n, acc[2] / n] } else { [f32::NAN; 3] });
            }
        }
        Self { samples_per_cell: spc, side, rgb, pixels_per_cell }
    }

    /// Lattice index of a board coordinate (fractional).
    pub fn index_of(&self, board: f64) -> f64 {
        (board + MARGIN_CELLS as f64) * self.samples_per_cell as f64
    }

    /// Bilinear lookup at fractional lattice position; NaN outside.
    pub fn at(&self, x: f64, y: f64) -> [f32; 3] {
        let max = (self.side - 1) as f64;
        if !(x >= 0.0 && y >= 0.0 && x <= max && y <= max) {
            return [f32::NAN; 3];
        }
        // Non-negative (checked above), so truncation is the floor (no libm call).
        let (x0, y0) = (x as usize, y as usize);
        let (x1, y1) = ((x0 + 1).min(self.side - 1), (y0 + 1).min(self.side - 1));
        let (fx, fy) = ((x - x0 as f64) as f32, (y - y0 as f64) as f32);
        let s = |xx: usize, yy: usize| self.rgb[yy * self.side + xx];
        let (a, b, c, d) = (s(x0, y0), s(x1, y0), s(x0, y1), s(x1, y1));
        blend([a, b, c, d], fx, fy)
    }

    /// Bilinear lookup at a board coordinate.
    pub fn at_board(&self, col: f64, row: f64) -> [f32; 3] {
        self.at(self.index_of(col), self.index_of(row))
    }
}

/// A box-downscaled copy of the part of a frame that holds the board.
struct Downscaled {
    /// Original-image position of the region's top-left pixel.
    origin: [u32; 2],
    factor: u32,
    width: u32,
    height: u32,
    rgb: Vec<[f32; 3]>,
}

impl Downscaled {
    fn new(image: &RgbImage, nodes: &[[f64; 2]], factor: u32) -> Self {
        let (w, h) = image.dimensions();
        let (mut x0, mut y0, mut x1, mut y1) = (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
        for p in nodes.iter().filter(|p| p[0].is_finite() && p[1].is_finite()) {
            x0 = x0.min(p[0]);
            y0 = y0.min(p[1]);
            x1 = x1.max(p[0]);
            y1 = y1.max(p[1]);
        }
        let clamp = |v: f64, max: u32| v.clamp(0.0, f64::from(max)) as u32;
        let (x0, y0) = (clamp(x0.floor() - f64::from(factor), w), clamp(y0.floor() - f64::from(factor), h));
        let (x1, y1) = (clamp(x1.ceil() + f64::from(factor), w), clamp(y1.ceil() + f64::from(factor), h));
        let width = (x1.saturating_sub(x0)) / factor;
        let height = (y1.saturating_sub(y0)) / factor;
        let raw = image.as_raw();
        let stride = w as usize * 3;
        let mut rgb = vec![[0.0f32; 3]; (width * height) as usize];
        let norm = 1.0 / (factor * factor) as f32;
        // The region's bytes in one row, and one block's bytes in it.
        let (start, block) = (x0 as usize * 3, factor as usize * 3);
        let span = width as usize * block;
        // Column sums of a block-row first (byte by byte down `factor` rows: a straight add of
        // two byte arrays that the compiler vectorises), then each block's columns summed per
        // channel. The same integer sums as adding pixel by pixel, read once, in order. A
        // column holds at most 16 × 255 (`factor` ≤ 16), so u16 cannot overflow.
        let mut column_sums = vec![0u16; span];
        for by in 0..height {
            column_sums.iter_mut().for_each(|c| *c = 0);
            for yy in 0..factor {
                let y = (y0 + by * factor + yy) as usize;
                let line = &raw[y * stride + start..y * stride + start + span];
                for (c, &b) in column_sums.iter_mut().zip(line) {
                    *c += u16::from(b);
                }
            }
            let out = &mut rgb[(by * width) as usize..((by + 1) * width) as usize];
            for (o, columns) in out.iter_mut().zip(column_sums.chunks_exact(block)) {
                let mut sum = [0u32; 3];
                for px in columns.chunks_exact(3) {
                    sum[0] += u32::from(px[0]);
                    sum[1] += u32::from(px[1]);
                    sum[2] += u32::from(px[2]);
                }
                *o = [sum[0] as f32 * norm, sum[1] as f32 * norm, sum[2] as f32 * norm];
            }
        }
        Self { origin: [x0, y0], factor, width, height, rgb }
    }

    /// Bilinear lookup at an original-image position; NaN outside the region.
    fn bilinear(&self, x: f64, y: f64) -> [f32; 3] {
        let f = f64::from(self.factor);
        // Block (i, j) is centred on original pixel origin + i·f + (f − 1)/2.
        let u = (x - f64::from(self.origin[0]) - (f - 1.0) / 2.0) / f;
        let v = (y - f64::from(self.origin[1]) - (f - 1.0) / 2.0) / f;
        if self.width == 0
            || self.height == 0
            || !(u >= 0.0 && v >= 0.0 && u <= f64::from(self.width - 1) && v <= f64::from(self.height - 1))
        {
            return [f32::NAN; 3];
        }
        // Non-negative (checked above), so truncation is the floor (no libm call).
        let (x0, y0) = (u as usize, v as usize);
        let (x1, y1) = ((x0 + 1).min(self.width as usize - 1), (y0 + 1).min(self.height as usize - 1));
        let (fx, fy) = ((u - x0 as f64) as f32, (v - y0 as f64) as f32);
        let w = self.width as usize;
        let (a, b, c, d) = (self.rgb[y0 * w + x0], self.rgb[y0 * w + x1], self.rgb[y1 * w + x0], self.rgb[y1 * w + x1]);
        blend([a, b, c, d], fx, fy)
    }
}

fn lattice_step(a: [f64; 2], b: [f64; 2], steps: usize) -> [f64; 2] {
    let n = steps.max(1) as f64;
    [(b[0] - a[0]) / n, (b[1] - a[1]) / n]
}

/// Bilinear RGB lookup in an image; NaN outside it.
pub fn bilinear(image: &RgbImage, x: f64, y: f64) -> [f32; 3] {
    let (w, h) = image.dimensions();
    if !(x >= 0.0 && y >= 0.0 && x <= f64::from(w) - 1.0 && y <= f64::from(h) - 1.0) {
        return [f32::NAN; 3];
    }
    // Non-negative (checked above), so truncation is the floor (no libm call).
    let (x0, y0) = (x as u32, y as u32);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let (fx, fy) = ((x - f64::from(x0)) as f32, (y - f64::from(y0)) as f32);
    let raw = image.as_raw();
    let stride = w as usize * 3;
    let px = |xx: u32, yy: u32| {
        let o = yy as usize * stride + xx as usize * 3;
        [f32::from(raw[o]), f32::from(raw[o + 1]), f32::from(raw[o + 2])]
    };
    let (a, b, c, d) = (px(x0, y0), px(x1, y0), px(x0, y1), px(x1, y1));
    blend([a, b, c, d], fx, fy)
}

/// Bilinear blend of four RGB neighbours (top-left, top-right, bottom-left, bottom-right) at
/// fractional offsets `fx`, `fy` from the top-left one.
#[inline]
fn blend([a, b, c, d]: [[f32; 3]; 4], fx: f32, fy: f32) -> [f32; 3] {
    let mut out = [0.0; 3];
    for k in 0..3 {
        let top = a[k] + (b[k] - a[k]) * fx;
        let bottom = c[k] + (d[k] - c[k]) * fx;
        out[k] = top + (bottom - top) * fy;
    }
    out
}

/// Where the camera stands relative to the board, in board units (one unit = one grid spacing),
/// recovered from the homography assuming square pixels and the principal point at the lens
/// centre. Used only to predict where a stone's top appears on an oblique view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraFoot {
    /// Board position (col, row) straight below the camera.
    pub foot: [f64; 2],
    /// Camera height above the board plane, in grid spacings.
    pub height: f64,
}

impl CameraFoot {
    /// Estimates the camera position from a grid geometry; `None` when the pose is degenerate.
    pub fn estimate(geometry: &GridGeometry) -> Option<Self> {
        let [cx, cy] = geometry.lens.centre;
        let m = geometry.matrix();
        // Move the principal point to the origin.
        let h = |r: usize, c: usize| match r {
            0 => m[(0, c)] - cx * m[(2, c)],
            1 => m[(1, c)] - cy * m[(2, c)],
            _ => m[(2, c)],
        };
        let diag = 2.0 * geometry.lens.scale;
        let ortho = -(h(0, 0) * h(0, 1) + h(1, 0) * h(1, 1)) / (h(2, 0) * h(2, 1));
        let equal = -(h(0, 0).powi(2) + h(1, 0).powi(2) - h(0, 1).powi(2) - h(1, 1).powi(2))
            / (h(2, 0).powi(2) - h(2, 1).powi(2));
        let plausible = |f2: f64| f2.is_finite() && f2 > (0.3 * diag).powi(2) && f2 < (5.0 * diag).powi(2);
        let f = match (plausible(ortho), plausible(equal)) {
            (true, true) => (ortho.sqrt() + equal.sqrt()) / 2.0,
            (true, false) => ortho.sqrt(),
            (false, true) => equal.sqrt(),
            // A near-frontal view does not constrain the focal length; a typical webcam field of
            // view (about 55° on the diagonal) is close enough for the small parallax there.
            (false, false) => diag,
        };
        let col = |c: usize| Vector3::new(h(0, c) / f, h(1, c) / f, h(2, c));
        let (a1, a2, a3) = (col(0), col(1), col(2));
        let norm = (a1.norm() + a2.norm()) / 2.0;
        if !(norm.is_finite() && norm > 0.0) {
            return None;
        }
        let mut lambda = 1.0 / norm;
        if a3.z * lambda < 0.0 {
            lambda = -lambda;
        }
        let (r1, r2, t) = (a1 * lambda, a2 * lambda, a3 * lambda);
        let r3 = r1.cross(&r2);
        let centre = Vector3::new(-r1.dot(&t), -r2.dot(&t), -r3.dot(&t));
        let height = centre.z.abs();
        if !(height.is_finite() && height > 1.0) {
            return None;
        }
        Some(Self { foot: [centre.x, centre.y], height })
    }

    /// Board position where the camera sees a point raised `raise` grid spacings above
    /// board position `at` (the stone's top lies further from the camera's foot than its base).
    pub fn raised(&self, at: [f64; 2], raise: f64) -> [f64; 2] {
        let k = raise / (self.height - raise).max(1e-3);
        [at[0] + (at[0] - self.foot[0]) * k, at[1] + (at[1] - self.foot[1]) * k]
    }
}
