//! Evidence an arbiter can read at a glance: the region of the frame around the points an
//! alert concerns, zoomed, with each point ringed. The board's four corners (from the vision)
//! give the homography from grid to pixels; without them the whole board is shown as before.

use image::{DynamicImage, Rgb, RgbImage};
use tengen_rules::Point;
use tengen_vision::{GridGeometry, LensDistortion};

use crate::engine::Corners;
use crate::imaging::{evidence_crop, EVIDENCE_QUALITY};
use crate::store::Evidence;

/// Grid cells shown around the points on each side.
const CONTEXT_CELLS: f64 = 2.5;
/// The crop is scaled so that one grid cell is about this many pixels.
const CELL_PIXELS: f64 = 48.0;
/// Longest side of a zoomed crop.
const MAX_SIDE: f64 = 720.0;
/// The ring drawn around each point (high-visibility orange, as the dashboard's alert squares).
const RING: Rgb<u8> = Rgb([255, 123, 0]);

/// Maps grid positions (column, row; 0–18 as seen) to pixels of the frame: the grid the four
/// corners span (no lens model: the corners are where the board is seen).
struct GridToImage(GridGeometry);

impl GridToImage {
    fn new(corners: &Corners) -> Option<Self> {
        // The lens model's size only normalises its radius; with no distortion it is unused.
        GridGeometry::from_corners(*corners, LensDistortion::none(1, 1)).map(GridToImage)
    }

    fn pixel(&self, col: f64, row: f64) -> Option<[f64; 2]> {
        let p = self.0.project(col, row);
        p.iter().all(|v| v.is_finite()).then_some(p)
    }
}

/// Crops the frame around `points` and rings them; `None` when the frame cannot be decoded or
/// the geometry is unusable (the caller then falls back to the whole board).
pub fn zoomed_crop(encoded: &[u8], corners: &Corners, points: &[Point]) -> Option<Vec<u8>> {
    if points.is_empty() {
        return None;
    }
    let map = GridToImage::new(corners)?;
    let image = image::load_from_memory(encoded).ok()?.to_rgb8();
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let grid_box = points.iter().fold((f64::MAX, f64::MAX, f64::MIN, f64::MIN), |(c0, r0, c1, r1), p| {
        let (c, r) = (f64::from(p.col), f64::from(p.row));
        (c0.min(c), r0.min(r), c1.max(c), r1.max(r))
    });
    let (c0, r0) = ((grid_box.0 - CONTEXT_CELLS).max(-0.8), (grid_box.1 - CONTEXT_CELLS).max(-0.8));
    let (c1, r1) = ((grid_box.2 + CONTEXT_CELLS).min(18.8), (grid_box.3 + CONTEXT_CELLS).min(18.8));
    let window = [map.pixel(c0, r0)?, map.pixel(c1, r0)?, map.pixel(c1, r1)?, map.pixel(c0, r1)?];
    let x0 = window.iter().map(|p| p[0]).fold(f64::MAX, f64::min).clamp(0.0, w - 1.0);
    let y0 = window.iter().map(|p| p[1]).fold(f64::MAX, f64::min).clamp(0.0, h - 1.0);
    let x1 = window.iter().map(|p| p[0]).fold(f64::MIN, f64::max).clamp(x0 + 1.0, w);
    let y1 = window.iter().map(|p| p[1]).fold(f64::MIN, f64::max).clamp(y0 + 1.0, h);
    // One cell in pixels near the points, for the zoom and the ring size.
    let (mc, mr) = ((grid_box.0 + grid_box.2) / 2.0, (grid_box.1 + grid_box.3) / 2.0);
    let (a, b) = (map.pixel(mc, mr)?, map.pixel(mc + 1.0, mr)?);
    let cell = ((b[0] - a[0]).hypot(b[1] - a[1])).max(2.0);
    let scale = (CELL_PIXELS / cell).min(MAX_SIDE / (x1 - x0).max(y1 - y0)).max(0.1);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (left, top, width, height) = (x0 as u32, y0 as u32, ((x1 - x0) as u32).max(1), ((y1 - y0) as u32).max(1));
    let cropped = image::imageops::crop_imm(&image, left, top, width, height).to_image();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (zw, zh) = (((f64::from(width) * scale) as u32).max(1), ((f64::from(height) * scale) as u32).max(1));
    let mut zoomed = image::imageops::resize(&cropped, zw, zh, image::imageops::FilterType::CatmullRom);
    let radius = cell * scale * 0.58;
    let thickness = (radius * 0.16).max(2.0);
    for point in points {
        let Some(p) = map.pixel(f64::from(point.col), f64::from(point.row)) else {
            continue;
        };
        ring(&mut zoomed, (p[0] - f64::from(left)) * scale, (p[1] - f64::from(top)) * scale, radius, thickness);
    }
    let mut out = Vec::new();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, EVIDENCE_QUALITY);
    DynamicImage::ImageRgb8(zoomed).to_rgb8().write_with_encoder(encoder).ok()?;
    Some(out)
}

/// Draws a ring of `radius` and `thickness` pixels centred at (x, y).
fn ring(image: &mut RgbImage, x: f64, y: f64, radius: f64, thickness: f64) {
    let outer = radius + thickness / 2.0;
    let inner = radius - thickness / 2.0;
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (xa, xb, ya, yb) = (
        (x - outer).floor().clamp(0.0, w) as u32,
        (x + outer).ceil().clamp(0.0, w) as u32,
        (y - outer).floor().clamp(0.0, h) as u32,
        (y + outer).ceil().clamp(0.0, h) as u32,
    );
    for py in ya..yb {
        for px in xa..xb {
            let d = (f64::from(px) + 0.5 - x).hypot(f64::from(py) + 0.5 - y);
            if d >= inner && d <= outer {
                image.put_pixel(px, py, RING);
            }
        }
    }
}

/// The evidence of one alert: the stable frame before and the frame after, each zoomed on the
/// alert's points when the board's corners are known, else the whole board.
pub fn alert_evidence(
    before: Option<(&[u8], Option<&Corners>)>,
    after: (&[u8], Option<&Corners>),
    points: &[Point],
) -> Evidence {
    let crop = |bytes: &[u8], corners: Option<&Corners>| {
        corners.and_then(|c| zoomed_crop(bytes, c, points)).or_else(|| evidence_crop(bytes, corners))
    };
    Evidence { before: before.and_then(|(b, c)| crop(b, c)), after: crop(after.0, after.1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crop_is_zoomed_on_the_points_and_rings_them() {
        // A 19×19 board drawn square: corners at 100 and 1000 pixels, a cell is 50 pixels.
        let mut frame = RgbImage::from_pixel(1200, 1100, Rgb([210, 170, 100]));
        for (x, y) in [(100u32, 100u32), (1000, 100), (1000, 1000), (100, 1000)] {
            frame.put_pixel(x, y, Rgb([0, 0, 0]));
        }
        let mut jpeg = Vec::new();
        frame.write_to(&mut std::io::Cursor::new(&mut jpeg), image::ImageFormat::Jpeg).expect("encode");
        let corners: Corners = [[100.0, 100.0], [1000.0, 100.0], [1000.0, 1000.0], [100.0, 1000.0]];
        // S5 is column 17, row 14 from the top.
        let s5 = Point::parse_on_board("S5").expect("a point");
        let crop = zoomed_crop(&jpeg, &corners, &[s5]).expect("a crop");
        let img = image::load_from_memory(&crop).expect("jpeg").to_rgb8();
        // About 2.5 cells each side (less past the board's edge), one cell ≈ 48 pixels.
        assert!((180..=300).contains(&img.width()), "{}", img.width());
        assert!((200..=300).contains(&img.height()), "{}", img.height());
        // The ring: orange pixels around the point, none far from it.
        let orange = |p: &Rgb<u8>| p[0] > 200 && p[1] > 80 && p[1] < 170 && p[2] < 80;
        assert!(img.pixels().filter(|p| orange(p)).count() > 100, "the point is ringed");
        assert!(!orange(img.get_pixel(2, 2)), "the corner of the crop is not ringed");
        // Unusable geometry falls back to the whole-board crop.
        let evidence = alert_evidence(None, (&jpeg, Some(&[[0.0; 2]; 4])), &[s5]);
        assert!(evidence.after.is_some());
    }
}
