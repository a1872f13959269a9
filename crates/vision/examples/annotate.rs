//! Development aid: draws a coordinate ruler, or a grid geometry from four corners and the reading
//! of it, onto an image and writes a PNG to look at.
//! `annotate IN OUT.png [TLx TLy TRx TRy BRx BRy BLx BLy [GRID.txt]]`; with a grid file, prints
//! the features of every point with its true state (for studying the classifier).

use std::error::Error;

use image::{Rgb, RgbImage};
use nalgebra::{DMatrix, Matrix3};
use tengen_vision::GridGeometry;

#[path = "common/picture.rs"]
mod picture;

fn homography_from_corners(corners: [[f64; 2]; 4]) -> Option<Matrix3<f64>> {
    let board = [[0.0, 0.0], [18.0, 0.0], [18.0, 18.0], [0.0, 18.0]];
    let mut a = DMatrix::<f64>::zeros(8, 8);
    let mut b = nalgebra::DVector::<f64>::zeros(8);
    for k in 0..4 {
        let [x, y] = board[k];
        let [u, v] = corners[k];
        let r = 2 * k;
        a.row_mut(r).copy_from_slice(&[x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y]);
        a.row_mut(r + 1).copy_from_slice(&[0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y]);
        b[r] = u;
        b[r + 1] = v;
    }
    let h = a.lu().solve(&b)?;
    Some(Matrix3::new(h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], 1.0))
}

fn decode(path: &str) -> Result<RgbImage, Box<dyn Error>> {
    use image::ImageDecoder;
    let mut decoder = image::ImageReader::open(path)?.with_guessed_format()?.into_decoder()?;
    let orientation = decoder.orientation()?;
    let mut img = image::DynamicImage::from_decoder(decoder)?;
    img.apply_orientation(orientation);
    Ok(img.to_rgb8())
}

fn put(img: &mut RgbImage, x: i64, y: i64, c: [u8; 3]) {
    if x >= 0 && y >= 0 && (x as u32) < img.width() && (y as u32) < img.height() {
        img.put_pixel(x as u32, y as u32, Rgb(c));
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        return Err("usage: annotate IN OUT.png [8 corner coordinates [GRID.txt]]".into());
    }
    let img = decode(&args[1])?;
    let mut out = img.clone();
    let (w, h) = img.dimensions();
    if args.len() >= 11 {
        let v: Vec<f64> = args[3..11].iter().map(|s| s.parse::<f64>()).collect::<Result<_, _>>()?;
        let corners = [[v[0], v[1]], [v[2], v[3]], [v[4], v[5]], [v[6], v[7]]];
        let m = homography_from_corners(corners).ok_or("degenerate corners")?;
        let mut homography = [[0.0; 3]; 3];
        for (r, row) in homography.iter_mut().enumerate() {
            for (c, x) in row.iter_mut().enumerate() {
                *x = m[(r, c)];
            }
        }
        let geom = GridGeometry { homography, lens: tengen_vision::LensDistortion::none(w, h) };
        let config = tengen_vision::ReaderConfig::default();
        let reading = tengen_vision::read_board(&img, &geom, &config);
        tengen_vision::draw_reading(&mut out, &geom, &reading);
        println!("{}", reading.grid_text());
        if let Some(path) = args.get(11) {
            let truth = std::fs::read_to_string(path)?;
            let feats = tengen_vision::stages::debug_features(&img, &geom, &config);
            for (row, line) in truth.lines().enumerate().take(19) {
                for (col, ch) in line.chars().enumerate().take(19) {
                    let f = feats[row][col];
                    let got = reading.points[row][col];
                    eprintln!(
                        "F {ch} {} r{row} c{col} bright {:.3} tail {:.3} neutral {:.3} cdist {:.2} lines {:.3} spread {:.3} conf {:.3}",
                        got.state.to_char(), f.brightness, f.dark_tail, f.neutral, f.colour_distance, f.lines, f.spread, got.confidence
                    );
                }
            }
        }
    } else {
        for x in (0..w).step_by(50) {
            for y in 0..h {
                if y % 4 == 0 || x % 100 == 0 {
                    put(&mut out, i64::from(x), i64::from(y), if x % 100 == 0 { [255, 0, 0] } else { [0, 255, 255] });
                }
            }
        }
        for y in (0..h).step_by(50) {
            for x in 0..w {
                if x % 4 == 0 || y % 100 == 0 {
                    put(&mut out, i64::from(x), i64::from(y), if y % 100 == 0 { [255, 0, 0] } else { [0, 255, 255] });
                }
            }
        }
    }
    // CROP="x y w h" cuts a region (image pixels) and enlarges it to fill the output size.
    let out = match std::env::var("CROP")
        .ok()
        .map(|c| c.split_whitespace().filter_map(|v| v.parse::<u32>().ok()).collect::<Vec<_>>())
    {
        Some(v) if v.len() == 4 && v[2] > 0 && v[3] > 0 => {
            let cut = image::imageops::crop_imm(&out, v[0], v[1], v[2], v[3]).to_image();
            let scale = (1000.0 / f64::from(v[2].max(v[3]))).max(1.0);
            let size = |n: u32| (f64::from(n) * scale) as u32;
            image::imageops::resize(&cut, size(cut.width()), size(cut.height()), image::imageops::FilterType::Nearest)
        }
        _ => out,
    };
    picture::fit_within(out, 1400).save(&args[2])?;
    Ok(())
}
