//! An independent check of located corners, for evaluation and tests: each of the two outer
//! lines through a corner measured straight from the pixels (bilinear grey, no line-response
//! filter, no homography) over the first three cells from the corner, and the two intersected.
//! It needs the located grid only to know where to look (within ±0.45 cell of it).

use image::RgbImage;
use tengen_rules::BOARD_LINES;

use crate::GridGeometry;

/// Least darkness (grey levels below the profile's upper quartile) for a profile to count.
const MIN_RIDGE_DEPTH: f64 = 8.0;
/// Profiles this far from the line through the others (in cells, at least a pixel) are dropped.
const OUTLIER_CELLS: f64 = 0.04;
/// Fewest profiles for a line to be measured.
const MIN_PROFILES: usize = 5;

/// Bilinear grey sample of an RGB image (mean of the channels); `None` outside.
fn grey_at(img: &RgbImage, x: f64, y: f64) -> Option<f64> {
    let (x0, y0) = (x.floor(), y.floor());
    if x0 < 0.0 || y0 < 0.0 || x0 + 1.0 >= f64::from(img.width()) || y0 + 1.0 >= f64::from(img.height()) {
        return None;
    }
    let (fx, fy) = (x - x0, y - y0);
    let g = |xx: f64, yy: f64| {
        let p = img.get_pixel(xx as u32, yy as u32);
        (f64::from(p[0]) + f64::from(p[1]) + f64::from(p[2])) / 3.0
    };
    Some(
        g(x0, y0) * (1.0 - fx) * (1.0 - fy)
            + g(x0 + 1.0, y0) * fx * (1.0 - fy)
            + g(x0, y0 + 1.0) * (1.0 - fx) * fy
            + g(x0 + 1.0, y0 + 1.0) * fx * fy,
    )
}

/// One outer line near a corner, straight from the image pixels:
/// across-line grey profiles at points 0.35…3 cells from the corner along the line, the centroid
/// of darkness of each profile's ridge, and a straight line through them (two rounds rejecting
/// profiles off by more than a pixel or 0.04 cell). Returns the line as (point, unit direction) in pixels.
fn local_line(
    img: &RgbImage,
    geom: &GridGeometry,
    corner: [f64; 2],
    along_columns: bool,
) -> Option<([f64; 2], [f64; 2])> {
    let last = (BOARD_LINES - 1) as f64;
    let inward = |v: f64| if v == 0.0 { 1.0 } else { -1.0 };
    let mut points: Vec<[f64; 2]> = Vec::new();
    // Profiles further than this from the fitted line are dropped (pixels; at least one).
    let mut tolerance: f64 = 1.0;
    for k in 0..14 {
        let t = 0.35 + 0.2 * f64::from(k);
        // A point on the outer line, t cells from the corner along it.
        let (c, r) = if along_columns {
            (corner[0], corner[1] + inward(corner[1]) * t)
        } else {
            (corner[0] + inward(corner[0]) * t, corner[1])
        };
        if !(0.0..=last).contains(&c) || !(0.0..=last).contains(&r) {
            continue;
        }
        let p = geom.project(c, r);
        let ahead = if along_columns { geom.project(c, r + 0.05) } else { geom.project(c + 0.05, r) };
        let d = [ahead[0] - p[0], ahead[1] - p[1]];
        let len = (d[0] * d[0] + d[1] * d[1]).sqrt();
        if len.is_nan() || len <= 1e-9 {
            continue;
        }
        let n = [-d[1] / len, d[0] / len];
        let across = if along_columns { geom.project(c + 0.5, r) } else { geom.project(c, r + 0.5) };
        let cell = 2.0 * ((across[0] - p[0]).powi(2) + (across[1] - p[1]).powi(2)).sqrt();
        let half = 0.45 * cell;
        let step = 0.25;
        let offsets = (0..).map(|i| -half + step * f64::from(i)).take_while(|&o| o <= half);
        // A profile leaving the image is skipped, not the line.
        let Some(profile) =
            offsets.map(|o| grey_at(img, p[0] + n[0] * o, p[1] + n[1] * o).map(|v| (o, v))).collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        if profile.len() < 3 {
            continue;
        }
        let mut sorted: Vec<f64> = profile.iter().map(|v| v.1).collect();
        sorted.sort_by(f64::total_cmp);
        let background = sorted[sorted.len() * 3 / 4];
        let (imin, &(omin, vmin)) = profile.iter().enumerate().min_by(|a, b| a.1 .1.total_cmp(&b.1 .1))?;
        if background - vmin < MIN_RIDGE_DEPTH {
            continue;
        }
        // Darkness centroid within ±0.12 cell of the darkest sample.
        let w = (0.12 * cell / step).round() as usize;
        let (mut sw, mut so) = (0.0, 0.0);
        for &(off, v) in &profile[imin.saturating_sub(w)..(imin + w + 1).min(profile.len())] {
            let dark = (background - v).max(0.0);
            sw += dark;
            so += dark * off;
        }
        let centre = if sw > 0.0 { so / sw } else { omin };
        points.push([p[0] + n[0] * centre, p[1] + n[1] * centre]);
        tolerance = tolerance.max(OUTLIER_CELLS * cell);
    }
    let fit_line = |pts: &[[f64; 2]]| -> Option<([f64; 2], [f64; 2])> {
        if pts.len() < MIN_PROFILES {
            return None;
        }
        let m = pts.len() as f64;
        let (mx, my) = (pts.iter().map(|p| p[0]).sum::<f64>() / m, pts.iter().map(|p| p[1]).sum::<f64>() / m);
        let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
        for p in pts {
            let (dx, dy) = (p[0] - mx, p[1] - my);
            sxx += dx * dx;
            sxy += dx * dy;
            syy += dy * dy;
        }
        let angle = 0.5 * (2.0 * sxy).atan2(sxx - syy);
        Some(([mx, my], [angle.cos(), angle.sin()]))
    };
    let mut line = fit_line(&points)?;
    for _ in 0..2 {
        let (q, d) = line;
        points.retain(|p| ((p[0] - q[0]) * d[1] - (p[1] - q[1]) * d[0]).abs() < tolerance);
        line = fit_line(&points)?;
    }
    Some(line)
}

fn intersect(a: ([f64; 2], [f64; 2]), b: ([f64; 2], [f64; 2])) -> Option<[f64; 2]> {
    let ((p, d), (q, e)) = (a, b);
    let det = d[0] * e[1] - d[1] * e[0];
    if det.abs() < 0.2 {
        return None;
    }
    let t = ((q[0] - p[0]) * e[1] - (q[1] - p[1]) * e[0]) / det;
    Some([p[0] + t * d[0], p[1] + t * d[1]])
}

/// The four outermost line crossings TL, TR, BR, BL (indexing of `geometry`) measured locally
/// from the image, each `None` when either of its outer lines could not be measured (a stone
/// or a hand on it, the image edge, too faint).
pub fn measure_corners(img: &RgbImage, geom: &GridGeometry) -> [Option<[f64; 2]>; 4] {
    let last = (BOARD_LINES - 1) as f64;
    let ideal = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
    ideal.map(|c| intersect(local_line(img, geom, c, false)?, local_line(img, geom, c, true)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LensDistortion;

    /// A light board with dark 2-pixel lines on a 19×19 grid of 30-pixel cells, slightly turned.
    fn drawn_grid() -> (RgbImage, GridGeometry) {
        let angle: f64 = 0.05;
        let (c, s) = (angle.cos(), angle.sin());
        let cell = 30.0;
        let origin = [60.0, 50.0];
        let to_board = |x: f64, y: f64| {
            let (dx, dy) = (x - origin[0], y - origin[1]);
            ((c * dx + s * dy) / cell, (-s * dx + c * dy) / cell)
        };
        let img = RgbImage::from_fn(680, 680, |x, y| {
            let (u, v) = to_board(f64::from(x), f64::from(y));
            let near = |t: f64| (t - t.round()).abs() * cell < 1.0 && (-0.05..=18.05).contains(&t);
            let on_line = (near(u) && (-0.05..=18.05).contains(&v)) || (near(v) && (-0.05..=18.05).contains(&u));
            if on_line {
                image::Rgb([60, 50, 40])
            } else {
                image::Rgb([220, 190, 140])
            }
        });
        // The same grid, shifted by a third of a cell: where a locator that is a little off
        // would put it. The measurement must find the drawn lines, not echo the guess.
        let shift = cell / 3.0;
        let h = [[c * cell, -s * cell, origin[0] + shift], [s * cell, c * cell, origin[1] - shift], [0.0, 0.0, 1.0]];
        (img, GridGeometry { homography: h, lens: LensDistortion::none(680, 680) })
    }

    #[test]
    fn measures_the_drawn_crossings_not_the_guess() {
        let (img, guess) = drawn_grid();
        let truth = GridGeometry {
            homography: [
                [guess.homography[0][0], guess.homography[0][1], 60.0],
                [guess.homography[1][0], guess.homography[1][1], 50.0],
                [0.0, 0.0, 1.0],
            ],
            lens: guess.lens,
        };
        let measured = measure_corners(&img, &guess);
        for (m, t) in measured.iter().zip(truth.corners()) {
            let Some(m) = m else { panic!("a corner was not measured") };
            let err = ((m[0] - t[0]).powi(2) + (m[1] - t[1]).powi(2)).sqrt();
            assert!(err < 0.6, "measured {m:?}, drawn {t:?}: {err:.2} px off");
        }
    }

    #[test]
    fn a_blank_image_measures_nothing() {
        let (_, guess) = drawn_grid();
        let blank = RgbImage::from_pixel(680, 680, image::Rgb([200, 180, 150]));
        assert!(measure_corners(&blank, &guess).iter().all(Option::is_none));
    }
}
