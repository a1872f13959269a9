//! The working image for board location: a downscaled, lightly smoothed grey copy of the frame,
//! and a "thin dark line" response at every pixel with the line's orientation.
//!
//! The response compares a pixel with its two neighbours across a candidate line, as a Weber
//! ratio: `(min(I(p+u), I(p−u)) − I(p)) / (min(..) + c)`. Taking the minimum of both sides makes
//! step edges (stone rims, board edge, sleeves) score zero, and the ratio makes it indifferent to
//! uneven light and colour casts.

use image::{GrayImage, RgbImage};

/// Offsets across a line for eight normal directions (0°, 26.6°, 45°, …, 153.4°).
pub(crate) const NORMAL_OFFSETS: [(i32, i32); 8] = [(2, 0), (2, 1), (2, 2), (1, 2), (0, 2), (-1, 2), (-2, 2), (-2, 1)];

/// Added to the denominator of the Weber ratio so near-black areas do not amplify noise.
const WEBER_OFFSET: f32 = 12.0;

/// A grey image in f32, row-major.
#[derive(Debug, Clone)]
pub(crate) struct Plane {
    pub width: usize,
    pub height: usize,
    pub data: Vec<f32>,
}

impl Plane {
    pub fn new(width: usize, height: usize) -> Self {
        Self { width, height, data: vec![0.0; width * height] }
    }

    #[inline]
    pub fn get(&self, x: i32, y: i32) -> f32 {
        if x < 0 || y < 0 || x as usize >= self.width || y as usize >= self.height {
            return 0.0;
        }
        self.data[y as usize * self.width + x as usize]
    }

    /// Nearest-neighbour sample at a fractional position; 0 outside.
    #[inline]
    pub fn sample(&self, x: f64, y: f64) -> f32 {
        self.get((x + 0.5).floor() as i32, (y + 0.5).floor() as i32)
    }
}

/// Grey from RGB weighting red and green up: board lines are black on yellowish wood, and the
/// blue channel of wood is dark and noisy, so it adds little contrast.
pub(crate) fn gray_from_rgb(rgb: &RgbImage) -> GrayImage {
    let (w, h) = rgb.dimensions();
    let mut out = GrayImage::new(w, h);
    for (dst, src) in out.as_mut().iter_mut().zip(rgb.as_raw().chunks_exact(3)) {
        let v = (u32::from(src[0]) * 2 + u32::from(src[1]) * 2 + u32::from(src[2])) / 5;
        *dst = v as u8;
    }
    out
}

/// Box-downscales by an integer factor then smooths with a [1 2 1] kernel, which tames JPEG and
/// salt-and-pepper noise while keeping one-pixel lines visible.
pub(crate) fn working_plane(gray: &GrayImage, factor: usize) -> Plane {
    let (w, h) = (gray.width() as usize, gray.height() as usize);
    let (ww, wh) = (w / factor, h / factor);
    let mut plane = Plane::new(ww, wh);
    let raw = gray.as_raw();
    let norm = 1.0 / (factor * factor) as f32;
    for y in 0..wh {
        for x in 0..ww {
            let mut sum = 0u32;
            for dy in 0..factor {
                let row = (y * factor + dy) * w + x * factor;
                for &v in &raw[row..row + factor] {
                    sum += u32::from(v);
                }
            }
            plane.data[y * ww + x] = sum as f32 * norm;
        }
    }
    smooth_121(&plane)
}

fn smooth_121(src: &Plane) -> Plane {
    let (w, h) = (src.width, src.height);
    let mut tmp = Plane::new(w, h);
    for y in 0..h {
        let row = &src.data[y * w..(y + 1) * w];
        for x in 0..w {
            let l = row[x.saturating_sub(1)];
            let r = row[(x + 1).min(w - 1)];
            tmp.data[y * w + x] = 0.25 * (l + r) + 0.5 * row[x];
        }
    }
    let mut out = Plane::new(w, h);
    for y in 0..h {
        let up = y.saturating_sub(1);
        let down = (y + 1).min(h - 1);
        for x in 0..w {
            out.data[y * w + x] = 0.25 * (tmp.data[up * w + x] + tmp.data[down * w + x]) + 0.5 * tmp.data[y * w + x];
        }
    }
    out
}

/// Line response of a working plane: the strongest Weber darkness over the eight normal
/// directions, and the line's orientation. Across a line every offset responds except the one
/// along it, so the orientation comes from the *deficits* `max − r_d`, averaged as doubled
/// angles: they point along the line. Their coherence is near 1 on a line and near 0 at
/// crossings and blobs.
#[derive(Debug, Clone)]
pub(crate) struct LineResponse {
    /// Strength per pixel, 0 where there is no thin dark line.
    pub strength: Plane,
    /// Σ (max − r_d) cos 2φ_d per pixel.
    pub cos2: Plane,
    /// Σ (max − r_d) sin 2φ_d per pixel.
    pub sin2: Plane,
    /// Σ (max − r_d) per pixel.
    pub total: Plane,
}

impl LineResponse {
    /// Coherence (0..1) of the orientation at a pixel index, without computing the angle.
    pub fn coherence(&self, i: usize) -> f32 {
        let (c, s, t) = (self.cos2.data[i], self.sin2.data[i], self.total.data[i]);
        if t <= 0.5 * self.strength.data[i] || t <= 0.0 {
            return 0.0;
        }
        (c * c + s * s).sqrt() / t
    }

    /// Normal angle in radians (−π/2..π/2) and coherence (0..1) at a pixel index.
    pub fn orientation(&self, i: usize) -> (f32, f32) {
        let (c, s, t) = (self.cos2.data[i], self.sin2.data[i], self.total.data[i]);
        // No clear "along" direction (a dot or a blob): no orientation.
        if t <= 0.5 * self.strength.data[i] || t <= 0.0 {
            return (0.0, 0.0);
        }
        let along = 0.5 * s.atan2(c);
        let mut normal = along + std::f32::consts::FRAC_PI_2;
        if normal > std::f32::consts::FRAC_PI_2 {
            normal -= std::f32::consts::PI;
        }
        (normal, (c * c + s * s).sqrt() / t)
    }
}

pub(crate) fn line_response(plane: &Plane) -> LineResponse {
    let (w, h) = (plane.width, plane.height);
    let mut strength = Plane::new(w, h);
    let mut cos2 = Plane::new(w, h);
    let mut sin2 = Plane::new(w, h);
    let mut total = Plane::new(w, h);
    let margin = 2usize;
    if w <= 2 * margin || h <= 2 * margin {
        return LineResponse { strength, cos2, sin2, total };
    }
    let data = &plane.data;
    let offsets: Vec<isize> = NORMAL_OFFSETS.iter().map(|&(dx, dy)| dy as isize * w as isize + dx as isize).collect();
    let doubled: Vec<(f32, f32)> = (0..NORMAL_OFFSETS.len())
        .map(|d| {
            let a = 2.0 * normal_angle(d as u8);
            (a.cos() as f32, a.sin() as f32)
        })
        .collect();
    for y in margin..h - margin {
        for x in margin..w - margin {
            let i = y * w + x;
            let centre = data[i];
            let mut best = 0.0f32;
            let mut per_dir = [0f32; 8];
            for (d, &off) in offsets.iter().enumerate() {
                let a = data[(i as isize + off) as usize];
                let b = data[(i as isize - off) as usize];
                let side = a.min(b);
                let r = ((side - centre) / (side + WEBER_OFFSET)).max(0.0);
                per_dir[d] = r;
                best = best.max(r);
            }
            let (mut c2, mut s2, mut t) = (0.0f32, 0.0f32, 0.0f32);
            if best > 0.0 {
                for (d, &r) in per_dir.iter().enumerate() {
                    let deficit = best - r;
                    c2 += deficit * doubled[d].0;
                    s2 += deficit * doubled[d].1;
                    t += deficit;
                }
            }
            strength.data[i] = best;
            cos2.data[i] = c2;
            sin2.data[i] = s2;
            total.data[i] = t;
        }
    }
    LineResponse { strength, cos2, sin2, total }
}

/// Angle in radians of the normal of direction index `d`.
pub(crate) fn normal_angle(d: u8) -> f64 {
    let (dx, dy) = NORMAL_OFFSETS[usize::from(d) % NORMAL_OFFSETS.len()];
    f64::from(dy).atan2(f64::from(dx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dark_line_responds_and_an_edge_does_not() {
        let mut plane = Plane::new(40, 40);
        for y in 0..40 {
            for x in 0..40 {
                // Vertical dark line at x = 10, a step edge at x = 30.
                let v = if x == 10 {
                    60.0
                } else if x >= 30 {
                    40.0
                } else {
                    200.0
                };
                plane.data[y * 40 + x] = v;
            }
        }
        let resp = line_response(&plane);
        let on_line = resp.strength.get(10, 20);
        assert!(on_line > 0.5, "{on_line}");
        let (angle, coherence) = resp.orientation(20 * 40 + 10);
        assert!(angle.abs() < 0.1 && coherence > 0.5, "normal {angle} coherence {coherence}");
        for x in 26..36 {
            assert!(resp.strength.get(x, 20) < 0.05, "edge responded at {x}");
        }
    }
}
