//! Image handling at the edge: cheap checks of uploaded frames (format, header, truncation)
//! and the evidence crops (the board cut out of a frame, scaled down, JPEG).

use crate::engine::Corners;
pub use tengen_vision::{FrameCheckError as FrameError, FrameFormat, FrameLimits};

/// Longest side of an evidence crop in pixels.
pub const EVIDENCE_MAX_SIDE: u32 = 640;
/// JPEG quality of evidence crops.
pub const EVIDENCE_QUALITY: u8 = 80;

/// Checks a frame before anything is decoded — format, size within the one [`FrameLimits`] the
/// vision decodes with, bit depth, and the whole file structure (a JPEG's every block) — so a
/// corrupt, cut or oversized frame from any source gets an immediate refusal instead of
/// failing later in the pipeline. Returns the format and stored width and height.
pub fn check_frame(bytes: &[u8]) -> Result<(FrameFormat, u32, u32), FrameError> {
    let info = tengen_vision::check_frame(bytes, &FrameLimits::default())?;
    Ok((info.format, info.width, info.height))
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
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, EVIDENCE_QUALITY);
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
        let good = jpeg(96, 64);
        assert_eq!(check_frame(&good), Ok((FrameFormat::Jpeg, 96, 64)));
        assert_eq!(check_frame(b"hello world"), Err(FrameError::UnknownFormat));
        assert!(matches!(check_frame(&good[..good.len() / 2]), Err(FrameError::Truncated(_))));
        let mut corrupt = good.clone();
        for b in corrupt.iter_mut().skip(3).take(200) {
            *b = 0x11;
        }
        assert!(matches!(check_frame(&corrupt), Err(FrameError::Corrupt(_) | FrameError::Truncated(_))));
        let mut png = Vec::new();
        image::RgbImage::new(64, 64)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .expect("png");
        assert_eq!(check_frame(&png), Ok((FrameFormat::Png, 64, 64)));
        assert!(matches!(check_frame(&png[..png.len() - 3]), Err(FrameError::Truncated(_))));
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
