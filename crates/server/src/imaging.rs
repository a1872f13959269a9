//! Image handling at the edge: cheap checks of uploaded frames (format, header, truncation)
//! and the evidence crops (the board cut out of a frame, scaled down, JPEG).

use std::io::Cursor;

use image::{GrayImage, ImageFormat, ImageReader, RgbImage};

use crate::engine::Corners;

/// Longest side of an evidence crop in pixels.
pub const EVIDENCE_MAX_SIDE: u32 = 640;
/// JPEG quality of evidence crops.
pub const EVIDENCE_QUALITY: u8 = 80;
/// Largest frame side accepted (beyond 8K something is wrong).
pub const MAX_FRAME_SIDE: u32 = 8192;

/// The two encodings cameras may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameFormat {
    /// JPEG.
    Jpeg,
    /// PNG.
    Png,
}

impl FrameFormat {
    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
        }
    }
}

/// Why an uploaded frame was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    /// Neither JPEG nor PNG by its first bytes.
    #[error("not a JPEG or PNG image")]
    UnknownFormat,
    /// The image header cannot be parsed.
    #[error("corrupt image header: {0}")]
    CorruptHeader(String),
    /// The image ends before its end marker (a cut upload).
    #[error("truncated image: the end marker is missing")]
    Truncated,
    /// Zero or absurd dimensions.
    #[error("image size {0}×{1} is out of range")]
    BadSize(u32, u32),
}

/// Recognises the format by its magic bytes.
pub fn sniff(bytes: &[u8]) -> Option<FrameFormat> {
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(FrameFormat::Jpeg)
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(FrameFormat::Png)
    } else {
        None
    }
}

/// Checks a frame cheaply (no full decode): format, header, size and the end marker, so a
/// corrupt or cut upload gets an immediate 4xx instead of failing later in the pipeline.
pub fn check_frame(bytes: &[u8]) -> Result<(FrameFormat, u32, u32), FrameError> {
    let format = sniff(bytes).ok_or(FrameError::UnknownFormat)?;
    let complete = match format {
        // Some encoders pad after EOI; accept the marker within the last few bytes.
        FrameFormat::Jpeg => bytes.len() >= 4 && bytes[bytes.len().saturating_sub(16)..]
            .windows(2)
            .any(|w| w == [0xFF, 0xD9]),
        FrameFormat::Png => bytes.len() >= 12 && bytes[bytes.len() - 12..].starts_with(&[0, 0, 0, 0])
            && &bytes[bytes.len() - 8..bytes.len() - 4] == b"IEND",
    };
    if !complete {
        return Err(FrameError::Truncated);
    }
    let image_format = match format {
        FrameFormat::Jpeg => ImageFormat::Jpeg,
        FrameFormat::Png => ImageFormat::Png,
    };
    let (w, h) = ImageReader::with_format(Cursor::new(bytes), image_format)
        .into_dimensions()
        .map_err(|e| FrameError::CorruptHeader(e.to_string()))?;
    if w == 0 || h == 0 || w > MAX_FRAME_SIDE || h > MAX_FRAME_SIDE {
        return Err(FrameError::BadSize(w, h));
    }
    Ok((format, w, h))
}

/// The grey version of a frame, bit for bit what `image::imageops::grayscale` gives (Rec. 709
/// weights, integer arithmetic, truncated), in one tight pass over the bytes: the generic
/// per-pixel version cost about as much as decoding the JPEG did.
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
        *o = luma(px[0], px[1], px[2]);
    }
}

/// The grey level of one pixel, as [`grey`] gives it.
#[inline]
pub fn luma(r: u8, g: u8, b: u8) -> u8 {
    luma_u32(u32::from(r), u32::from(g), u32::from(b))
}

#[inline]
fn luma_u32(r: u32, g: u32, b: u32) -> u8 {
    // Same weights and rounding as `image`'s rgb → luma (2126, 7152, 722 over 10000); the
    // division as a multiply-shift, exact for every sum up to 255 × 10000.
    let l = u64::from(2126 * r + 7152 * g + 722 * b);
    #[allow(clippy::cast_possible_truncation)]
    let l = ((l * 3_518_437_209) >> 45) as u8;
    l
}

/// Cuts the board (with a margin) out of an encoded frame and returns a small JPEG; the whole
/// frame when the corners are unknown. `None` when the frame cannot be decoded.
pub fn evidence_crop(encoded: &[u8], corners: Option<&Corners>) -> Option<Vec<u8>> {
    let image = image::load_from_memory(encoded).ok()?;
    let (w, h) = (image.width(), image.height());
    let cropped = match corners {
        Some(c) => {
            let xs = c.iter().map(|p| p[0]);
            let ys = c.iter().map(|p| p[1]);
            let (x0, x1) = (xs.clone().fold(f64::MAX, f64::min), xs.fold(f64::MIN, f64::max));
            let (y0, y1) = (ys.clone().fold(f64::MAX, f64::min), ys.fold(f64::MIN, f64::max));
            // A margin of one grid spacing keeps edge stones whole.
            let margin = ((x1 - x0).max(y1 - y0) / 18.0).max(0.0);
            let clamp = |v: f64, max: u32| -> u32 {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let v = v.max(0.0).min(f64::from(max)) as u32;
                v
            };
            let (left, top) = (clamp(x0 - margin, w), clamp(y0 - margin, h));
            let (right, bottom) = (clamp(x1 + margin, w), clamp(y1 + margin, h));
            if right <= left + 8 || bottom <= top + 8 {
                image
            } else {
                image.crop_imm(left, top, right - left, bottom - top)
            }
        }
        None => image,
    };
    let small = if cropped.width().max(cropped.height()) > EVIDENCE_MAX_SIDE {
        cropped.resize(EVIDENCE_MAX_SIDE, EVIDENCE_MAX_SIDE, image::imageops::FilterType::Triangle)
    } else {
        cropped
    };
    let mut out = Vec::new();
    let encoder =
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, EVIDENCE_QUALITY);
    small.to_rgb8().write_with_encoder(encoder).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbImage::from_pixel(w, h, image::Rgb([200, 160, 90]));
        let mut out = Vec::new();
        let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 80);
        img.write_with_encoder(enc).expect("encode");
        out
    }

    #[test]
    fn good_corrupt_and_truncated_frames_are_told_apart() {
        let good = jpeg(64, 48);
        assert_eq!(check_frame(&good), Ok((FrameFormat::Jpeg, 64, 48)));
        assert_eq!(check_frame(b"hello world"), Err(FrameError::UnknownFormat));
        assert_eq!(check_frame(&good[..good.len() / 2]), Err(FrameError::Truncated));
        let mut corrupt = good.clone();
        for b in corrupt.iter_mut().skip(3).take(200) {
            *b = 0x11;
        }
        assert!(matches!(check_frame(&corrupt), Err(FrameError::CorruptHeader(_))));
        let mut png = Vec::new();
        image::RgbImage::new(5, 5)
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .expect("png");
        assert_eq!(check_frame(&png), Ok((FrameFormat::Png, 5, 5)));
        assert_eq!(check_frame(&png[..png.len() - 3]), Err(FrameError::Truncated));
    }

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

    #[test]
    fn evidence_crop_is_a_small_jpeg_of_the_board() {
        let frame = jpeg(1920, 1080);
        let corners = [[500.0, 100.0], [1400.0, 100.0], [1400.0, 1000.0], [500.0, 1000.0]];
        let crop = evidence_crop(&frame, Some(&corners)).expect("crop");
        let img = image::load_from_memory(&crop).expect("decodes");
        assert!(img.width() <= EVIDENCE_MAX_SIDE && img.height() <= EVIDENCE_MAX_SIDE);
        assert!(img.width() > 500);
        assert!(evidence_crop(b"junk", None).is_none());
    }
}
