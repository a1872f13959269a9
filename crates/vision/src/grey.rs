//! The grey version of a colour frame, bit for bit what `image::imageops::grayscale` gives
//! (Rec. 709 weights 2126/7152/722 over 10 000, integer arithmetic, rounded down), in one
//! tight pass over the bytes: the generic per-pixel version costs about as much as decoding
//! the JPEG does, and the trackers and the board search grey every frame they look at.

use image::{GrayImage, RgbImage};

/// The whole frame in grey.
pub fn grey(rgb: &RgbImage) -> GrayImage {
    let (w, h) = rgb.dimensions();
    grey_within(rgb, 0, 0, w, h)
}

/// Like [`grey`] but only inside the pixel rectangle `[x0, x1) × [y0, y1)` (clamped to the
/// frame); the rest is black. For callers that look only near a known board.
pub fn grey_within(rgb: &RgbImage, x0: u32, y0: u32, x1: u32, y1: u32) -> GrayImage {
    let (w, h) = rgb.dimensions();
    let (x1, y1) = (x1.min(w), y1.min(h));
    let mut out = GrayImage::new(w, h);
    if x0 >= x1 || y0 >= y1 {
        return out;
    }
    let (src, dst) = (rgb.as_raw(), &mut *out);
    let (w, x0, x1) = (w as usize, x0 as usize, x1 as usize);
    for y in y0 as usize..y1 as usize {
        grey_row(&src[(y * w + x0) * 3..(y * w + x1) * 3], &mut dst[y * w + x0..y * w + x1]);
    }
    out
}

/// Grey of one run of RGB pixels, sixteen at a time (the fixed-size blocks let the compiler
/// use vector instructions).
fn grey_row(rgb: &[u8], out: &mut [u8]) {
    const LANES: usize = 16;
    let mut blocks = out.chunks_exact_mut(LANES);
    let mut pixels = rgb.chunks_exact(LANES * 3);
    for (o, px) in (&mut blocks).zip(&mut pixels) {
        let (mut r, mut g, mut b) = ([0u32; LANES], [0u32; LANES], [0u32; LANES]);
        for k in 0..LANES {
            r[k] = u32::from(px[3 * k]);
            g[k] = u32::from(px[3 * k + 1]);
            b[k] = u32::from(px[3 * k + 2]);
        }
        for k in 0..LANES {
            o[k] = luma_u32(r[k], g[k], b[k]);
        }
    }
    for (o, px) in blocks.into_remainder().iter_mut().zip(pixels.remainder().chunks_exact(3)) {
        *o = luma([px[0], px[1], px[2]]);
    }
}

/// The grey level of one pixel, as [`grey`] gives it.
#[inline]
pub fn luma([r, g, b]: [u8; 3]) -> u8 {
    luma_u32(u32::from(r), u32::from(g), u32::from(b))
}

#[inline]
fn luma_u32(r: u32, g: u32, b: u32) -> u8 {
    // The division by 10 000 as a multiply-shift, exact for every sum up to 255 × 10 000.
    let l = u64::from(2126 * r + 7152 * g + 722 * b);
    #[allow(clippy::cast_possible_truncation)]
    let l = ((l * 3_518_437_209) >> 45) as u8;
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grey_is_bit_for_bit_the_image_crate_grey() {
        let mut rgb = RgbImage::new(67, 41);
        let mut seed = 7u32;
        for p in rgb.pixels_mut() {
            for c in &mut p.0 {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *c = (seed >> 24) as u8;
            }
        }
        rgb.put_pixel(0, 0, image::Rgb([255, 255, 255]));
        let expected = image::imageops::grayscale(&rgb);
        assert_eq!(grey(&rgb), expected);
        let part = grey_within(&rgb, 10, 5, 30, 200);
        for (x, y, p) in part.enumerate_pixels() {
            let inside = (10..30).contains(&x) && (5..41).contains(&y);
            assert_eq!(p.0[0], if inside { expected.get_pixel(x, y).0[0] } else { 0 }, "({x}, {y})");
        }
        assert_eq!(grey_within(&rgb, 40, 5, 30, 9), GrayImage::new(67, 41));
        // The multiply-shift division is exact over every weighted sum a pixel can give.
        for l in 0..=255 * 10_000u64 {
            assert_eq!((l * 3_518_437_209) >> 45, l / 10_000, "{l}");
        }
    }
}
