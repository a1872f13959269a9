//! The pictures the development examples write: shrunk to fit a screen.

/// The image scaled down (keeping its shape) so that its longer side is at most `max_side`
/// pixels; a smaller image as it is.
pub fn fit_within(img: image::RgbImage, max_side: u32) -> image::RgbImage {
    let (w, h) = img.dimensions();
    if w.max(h) <= max_side {
        return img;
    }
    let k = f64::from(max_side) / f64::from(w.max(h));
    let side = |n: u32| (f64::from(n) * k) as u32;
    image::imageops::resize(&img, side(w), side(h), image::imageops::FilterType::Triangle)
}
