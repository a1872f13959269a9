//! Decoding camera frames from encoded bytes (JPEG, PNG) safely: the EXIF orientation is applied
//! so pixels are "as seen", and hostile or broken input is a clear error, never a panic or a
//! huge allocation. Shared by the CLI and the server; takes bytes, never touches files.

use std::io::Cursor;

use image::{DynamicImage, GrayImage, ImageDecoder, ImageReader, RgbImage};
use thiserror::Error;

use crate::frame_check::{check_frame, FrameCheckError};
use crate::frame_check::{FrameFormat, FrameLimits};

/// Why a frame could not be decoded.
#[derive(Debug, Error)]
pub enum ImageIoError {
    /// The bytes are not a frame we accept (format, size, bit depth or structure); nothing was
    /// decoded.
    #[error(transparent)]
    Refused(#[from] FrameCheckError),
    /// The decoder failed on data that looked whole (the decoder's message says where).
    #[error("corrupt image: {0}")]
    Corrupt(String),
}

/// A decoded frame with the orientation that was applied to it.
#[derive(Debug, Clone)]
pub struct DecodedFrame {
    /// Pixels as seen (EXIF orientation applied), 8-bit RGB.
    pub rgb: RgbImage,
    /// EXIF orientation tag value (1..=8) found in the file; 1 when absent.
    pub exif_orientation: u8,
}

/// Decodes JPEG or PNG bytes into RGB pixels as seen, with the default limits.
pub fn decode_rgb(bytes: &[u8]) -> Result<DecodedFrame, ImageIoError> {
    decode_rgb_with(bytes, FrameLimits::default())
}

/// Decodes JPEG or PNG bytes into RGB pixels as seen, refusing anything [`check_frame`]
/// refuses under `limits` before any pixel memory is allocated.
pub fn decode_rgb_with(bytes: &[u8], limits: FrameLimits) -> Result<DecodedFrame, ImageIoError> {
    let info = check_frame(bytes, &limits)?;
    let format = match info.format {
        FrameFormat::Jpeg => image::ImageFormat::Jpeg,
        FrameFormat::Png => image::ImageFormat::Png,
    };
    let mut decoder = ImageReader::with_format(Cursor::new(bytes), format)
        .into_decoder()
        .map_err(|e| ImageIoError::Corrupt(e.to_string()))?;
    // The check read the same header; a decoder that disagrees is not trusted with memory.
    if decoder.dimensions() != (info.width, info.height) {
        return Err(ImageIoError::Corrupt("the header's size changed between reads".into()));
    }
    let mut decoder_limits = image::Limits::default();
    decoder_limits.max_image_width = Some(limits.max_side);
    decoder_limits.max_image_height = Some(limits.max_side);
    // Output RGB8 plus decoder working memory; generous but bounded.
    decoder_limits.max_alloc = Some(limits.max_pixels.saturating_mul(8));
    decoder.set_limits(decoder_limits).map_err(|e| ImageIoError::Corrupt(e.to_string()))?;
    // A missing or unreadable orientation tag means "as stored" — not a reason to drop a frame.
    let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut image = DynamicImage::from_decoder(decoder).map_err(|e| ImageIoError::Corrupt(e.to_string()))?;
    image.apply_orientation(orientation);
    Ok(DecodedFrame { rgb: image.into_rgb8(), exif_orientation: exif_value(orientation) })
}

/// Decodes straight to 8-bit grey (as seen), for callers that need no colour.
pub fn decode_gray(bytes: &[u8]) -> Result<GrayImage, ImageIoError> {
    let frame = decode_rgb(bytes)?;
    Ok(DynamicImage::ImageRgb8(frame.rgb).into_luma8())
}

fn exif_value(orientation: image::metadata::Orientation) -> u8 {
    use image::metadata::Orientation as O;
    match orientation {
        O::NoTransforms => 1,
        O::FlipHorizontal => 2,
        O::Rotate180 => 3,
        O::FlipVertical => 4,
        O::Rotate90FlipH => 5,
        O::Rotate90 => 6,
        O::Rotate270FlipH => 7,
        O::Rotate270 => 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `img` encoded as `format` (empty when it cannot be: the decoding test then fails).
    fn encoded(img: RgbImage, format: image::ImageFormat) -> Vec<u8> {
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut out), format)
            .map_err(|e| e.to_string())
            .unwrap_or_default();
        out
    }

    fn png_bytes(width: u32, height: u32) -> Vec<u8> {
        encoded(RgbImage::from_pixel(width, height, image::Rgb([200, 150, 90])), image::ImageFormat::Png)
    }

    fn jpeg_bytes(width: u32, height: u32) -> Vec<u8> {
        let img = RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 80]));
        encoded(img, image::ImageFormat::Jpeg)
    }

    #[test]
    fn decodes_png_and_jpeg() {
        let png = decode_rgb(&png_bytes(96, 64)).map(|f| f.rgb.dimensions());
        assert_eq!(png.ok(), Some((96, 64)));
        let jpg = decode_rgb(&jpeg_bytes(100, 64)).map(|f| (f.rgb.dimensions(), f.exif_orientation));
        assert_eq!(jpg.ok(), Some(((100, 64), 1)));
    }

    #[test]
    fn empty_input_is_an_error() {
        assert!(matches!(decode_rgb(&[]), Err(ImageIoError::Refused(FrameCheckError::Empty))));
    }

    #[test]
    fn garbage_is_unknown_format() {
        assert!(matches!(
            decode_rgb(b"this is not an image at all"),
            Err(ImageIoError::Refused(FrameCheckError::UnknownFormat))
        ));
    }

    #[test]
    fn truncated_jpeg_is_an_error_not_a_panic() {
        let full = jpeg_bytes(256, 256);
        for cut in [2, 20, 200, full.len() / 2, full.len() - 10] {
            let result = decode_rgb(&full[..cut]);
            assert!(result.is_err(), "cut at {cut} of {} decoded", full.len());
        }
    }

    #[test]
    fn tiny_image_is_refused() {
        assert!(matches!(decode_rgb(&png_bytes(1, 1)), Err(ImageIoError::Refused(FrameCheckError::TooSmall { .. }))));
    }

    #[test]
    fn huge_header_is_refused_before_allocation() {
        // A valid PNG signature and IHDR announcing 20000×20000, with no pixel data behind it.
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(b"IHDR");
        ihdr.extend_from_slice(&20000u32.to_be_bytes());
        ihdr.extend_from_slice(&20000u32.to_be_bytes());
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
        png.extend_from_slice(&13u32.to_be_bytes());
        png.extend_from_slice(&ihdr);
        png.extend_from_slice(&crc32(&ihdr).to_be_bytes());
        // An IDAT (an empty zlib stream) and IEND, so the decoder has a complete header to read.
        for (kind, data) in [(&b"IDAT"[..], &[0x78u8, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01][..]), (b"IEND", &[])] {
            let mut chunk = kind.to_vec();
            chunk.extend_from_slice(data);
            png.extend_from_slice(&(data.len() as u32).to_be_bytes());
            png.extend_from_slice(&chunk);
            png.extend_from_slice(&crc32(&chunk).to_be_bytes());
        }
        let result = decode_rgb(&png);
        assert!(
            matches!(result, Err(ImageIoError::Refused(FrameCheckError::TooLarge { width: 20000, height: 20000, .. }))),
            "{result:?}"
        );
    }

    #[test]
    fn huge_jpeg_header_is_refused() {
        // Patch the SOF0 frame size of a small JPEG to 20000×20000.
        let mut jpg = jpeg_bytes(64, 64);
        let sof = jpg.windows(2).position(|w| w == [0xFF, 0xC0]);
        let Some(at) = sof else { panic!("encoder wrote no SOF0") };
        jpg[at + 5..at + 7].copy_from_slice(&20000u16.to_be_bytes());
        jpg[at + 7..at + 9].copy_from_slice(&20000u16.to_be_bytes());
        assert!(matches!(decode_rgb(&jpg), Err(ImageIoError::Refused(FrameCheckError::TooLarge { .. }))));
    }

    fn crc32(data: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }
}
