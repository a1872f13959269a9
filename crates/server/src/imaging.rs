//! Image handling at the edge: cheap checks of uploaded frames (format, header, truncation)
//! and the evidence crops (the board cut out of a frame, scaled down, JPEG).

use std::io::Cursor;

use image::{ImageFormat, ImageReader};

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
