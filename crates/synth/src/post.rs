//! Camera effects after the scene is shaded: exposure, colour cast, light gradient, vignetting,
//! blur, camera shake and sensor noise, then quantisation to 8-bit.

use image::RgbImage;

use crate::noise::Rng;
use crate::scene::Scene;

/// Applies exposure, cast, gradient, vignette and blur in place.
pub(crate) fn camera_effects(colour: &mut [[f32; 3]], w: usize, h: usize, scene: &Scene) {
    let light = &scene.light;
    let gains = light.cast.gains();
    let k = light.cast_strength.clamp(0.0, 1.0);
    let exposure = if scene.exposure_jitter > 0.0 {
        let mut rng = Rng::derive(scene.seed ^ 0xE7B0, scene.frame_seed);
        (1.0 + scene.exposure_jitter * rng.normal() as f32).clamp(0.5, 1.5)
    } else {
        1.0
    };
    let gain = [0, 1, 2].map(|c| (1.0 + (gains[c] - 1.0) * k) * light.brightness.max(0.0) * exposure);
    let angle = light.gradient_angle_deg.to_radians();
    let (gx, gy) = (angle.cos(), angle.sin());
    let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
    let half_diag = (cx * cx + cy * cy).sqrt().max(1.0);
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = ((x as f32 + 0.5 - cx) / half_diag, (y as f32 + 0.5 - cy) / half_diag);
            let grad = (1.0 + light.gradient * (dx * gx + dy * gy)).max(0.0);
            let vig = 1.0 - light.vignette * (dx * dx + dy * dy);
            let m = grad * vig;
            let px = &mut colour[y * w + x];
            for c in 0..3 {
                px[c] *= gain[c] * m;
            }
        }
    }
    if scene.blur_sigma > 0.05 {
        gaussian_blur(colour, w, h, scene.blur_sigma);
    }
    let [sx, sy] = scene.shake_px;
    if sx.hypot(sy) > 0.5 {
        shake_blur(colour, w, h, [sx, sy]);
    }
}

/// Camera shake: every pixel averaged along the shake vector (centred), bilinear taps about
/// half a pixel apart so the smear has no gaps.
fn shake_blur(colour: &mut [[f32; 3]], w: usize, h: usize, shake: [f32; 2]) {
    let length = shake[0].hypot(shake[1]).min(200.0);
    let taps = (length * 2.0).ceil() as usize + 1;
    let offsets: Vec<[f32; 2]> = (0..taps)
        .map(|k| {
            let t = k as f32 / (taps - 1) as f32 - 0.5;
            [shake[0] * t, shake[1] * t]
        })
        .collect();
    let source = colour.to_vec();
    let sample = |x: f32, y: f32| -> [f32; 3] {
        let x = x.clamp(0.0, (w - 1) as f32);
        let y = y.clamp(0.0, (h - 1) as f32);
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
        let (fx, fy) = (x - x0 as f32, y - y0 as f32);
        let at = |xx: usize, yy: usize| source[yy * w + xx];
        let (a, b, c, d) = (at(x0, y0), at(x1, y0), at(x0, y1), at(x1, y1));
        std::array::from_fn(|ch| {
            let top = a[ch] + (b[ch] - a[ch]) * fx;
            let bottom = c[ch] + (d[ch] - c[ch]) * fx;
            top + (bottom - top) * fy
        })
    };
    let weight = 1.0 / taps as f32;
    for y in 0..h {
        for x in 0..w {
            let mut acc = [0f32; 3];
            for o in &offsets {
                let s = sample(x as f32 + o[0], y as f32 + o[1]);
                acc = [acc[0] + s[0], acc[1] + s[1], acc[2] + s[2]];
            }
            colour[y * w + x] = acc.map(|v| v * weight);
        }
    }
}

/// Separable Gaussian blur with clamped edges.
fn gaussian_blur(colour: &mut [[f32; 3]], w: usize, h: usize, sigma: f32) {
    let radius = (sigma * 3.0).ceil().max(1.0) as i64;
    let mut kernel: Vec<f32> = (-radius..=radius).map(|i| (-(i * i) as f32 / (2.0 * sigma * sigma)).exp()).collect();
    let sum: f32 = kernel.iter().sum();
    kernel.iter_mut().for_each(|k| *k /= sum);
    let mut tmp = vec![[0f32; 3]; w * h];
    blur_pass(colour, &mut tmp, w, h, &kernel, true);
    blur_pass(&tmp, colour, w, h, &kernel, false);
}

/// One pass of a separable blur, along rows (`along_x`) or columns, edges clamped: `kernel` has
/// an odd length, its middle tap on the pixel itself.
fn blur_pass(src: &[[f32; 3]], dst: &mut [[f32; 3]], w: usize, h: usize, kernel: &[f32], along_x: bool) {
    let radius = (kernel.len() / 2) as i64;
    for y in 0..h {
        for x in 0..w {
            let mut acc = [0f32; 3];
            for (i, k) in kernel.iter().enumerate() {
                let p = if along_x {
                    src[y * w + (x as i64 + i as i64 - radius).clamp(0, w as i64 - 1) as usize]
                } else {
                    src[(y as i64 + i as i64 - radius).clamp(0, h as i64 - 1) as usize * w + x]
                };
                acc = [acc[0] + p[0] * k, acc[1] + p[1] * k, acc[2] + p[2] * k];
            }
            dst[y * w + x] = acc;
        }
    }
}

/// Adds sensor noise (stronger in the shadows' relative terms, like a real sensor's mix of read
/// and shot noise) and quantises with a soft shoulder so glare does not clip hard.
pub(crate) fn to_image(colour: &[[f32; 3]], w: u32, h: u32, scene: &Scene) -> RgbImage {
    let mut rng = Rng::derive(scene.seed, 99 ^ scene.frame_seed.wrapping_mul(0x9E37_79B9));
    let sigma = scene.noise_sigma.max(0.0) / 255.0;
    let mut image = RgbImage::new(w, h);
    for (px, c) in image.pixels_mut().zip(colour.iter()) {
        // Luma noise shared by the channels plus a little chroma noise.
        let luma = if sigma > 0.0 { approx_normal(&mut rng) * sigma * 0.8 } else { 0.0 };
        for (ch, &value) in c.iter().enumerate() {
            let mut v = value;
            if sigma > 0.0 {
                let shot = (0.4 + 0.6 * v.clamp(0.0, 1.0).sqrt()) * 1.1;
                v += (luma + approx_normal(&mut rng) * sigma * 0.45) * shot;
            }
            // Soft shoulder above 0.85 (a rational curve: cheaper than exp, same shape).
            let v = if v > 0.85 { 0.85 + 0.15 * (v - 0.85) / (v - 0.85 + 0.15) } else { v };
            px.0[ch] = (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
        }
    }
    image
}

/// A cheap approximately normal variate (Irwin–Hall of four uniforms).
fn approx_normal(rng: &mut Rng) -> f32 {
    let bits = rng.next_u64();
    let s: u32 = (0..4).map(|i| ((bits >> (i * 16)) & 0xFFFF) as u32).sum();
    ((s as f32 / 65535.0) - 2.0) * 1.732_050_8
}
