//! `tengen detect` end to end: a rendered board is printed right, and bad input (empty file,
//! truncated JPEG, a picture with no board, 1×1 image, a 20000×20000 header) gives a clear
//! message and a non-zero exit — never a panic.

#![allow(clippy::expect_used)] // test set-up failures should fail loudly

use std::path::PathBuf;
use std::process::Command;

fn tengen() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tengen"))
}

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tengen-detect-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("temp file");
    path
}

fn jpeg(image: &image::RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90).encode_image(image).expect("encode");
    out
}

/// Runs detect and returns (exit code, stdout, stderr), checking it did not panic.
fn detect(path: &PathBuf, extra: &[&str]) -> (i32, String, String) {
    let out = tengen().arg("detect").arg(path).args(extra).output().expect("run tengen");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "tengen detect panicked: {stderr}");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).to_string(), stderr)
}

#[test]
fn a_rendered_board_is_printed_as_19_lines_and_as_json() {
    use tengen_rules::Stone;
    use tengen_synth::{render, Position, Scene};
    let position = Position::empty()
        .with(3, 3, Stone::BLACK)
        .with(15, 3, Stone::WHITE)
        .with(3, 15, Stone::WHITE)
        .with(15, 15, Stone::BLACK)
        .with(9, 9, Stone::BLACK);
    let scene = Scene::preset("webcam").expect("preset").with_seed(5);
    let frame = render(&position, &scene).expect("render");
    let path = temp("board.jpg", &frame.jpeg());
    let (code, stdout, stderr) = detect(&path, &[]);
    assert_eq!(code, 0, "detect failed: {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 19);
    assert!(lines.iter().all(|l| l.chars().count() == 19));
    let wrong =
        lines.iter().zip(&frame.truth.grid).flat_map(|(a, b)| a.chars().zip(b.chars())).filter(|(a, b)| a != b).count();
    assert!(wrong <= 1, "{wrong} points differ from the truth:\n{stdout}");

    let (code, stdout, _) = detect(&path, &["--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    assert_eq!(v["grid"].as_array().map(Vec::len), Some(19));
    assert_eq!(v["confidence"].as_array().map(Vec::len), Some(19));
    assert_eq!(v["confidence"][0].as_array().map(Vec::len), Some(19));
    assert_eq!(v["occluded"], serde_json::Value::Bool(false));
    let corners = v["corners"].as_array().expect("corners");
    assert_eq!(corners.len(), 4);
    for (k, c) in corners.iter().enumerate() {
        let (x, y) = (c[0].as_f64().expect("x"), c[1].as_f64().expect("y"));
        let [tx, ty] = frame.truth.corners[k];
        assert!((x - tx).hypot(y - ty) < 4.0, "corner {k} at ({x:.1},{y:.1}), truth ({tx:.1},{ty:.1})");
    }
}

#[test]
fn bad_input_gives_a_clear_error_and_non_zero_exit() {
    let board_like = {
        let img = image::RgbImage::from_fn(320, 240, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 90]));
        jpeg(&img)
    };
    // A picture with no board: soft colour blobs, like a cat on a sofa.
    let no_board = {
        let img = image::RgbImage::from_fn(400, 300, |x, y| {
            let d = ((x as f32 - 200.0).powi(2) + (y as f32 - 150.0).powi(2)).sqrt();
            if d < 90.0 {
                image::Rgb([150, 110, 70])
            } else {
                image::Rgb([60, 70, 120])
            }
        });
        let mut out = Vec::new();
        image::DynamicImage::ImageRgb8(img)
            .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
            .expect("png");
        out
    };
    let one_pixel = jpeg(&image::RgbImage::from_pixel(1, 1, image::Rgb([1, 2, 3])));
    // A small JPEG whose frame header claims 20000×20000.
    let huge_header = {
        let mut bytes = jpeg(&image::RgbImage::from_pixel(16, 16, image::Rgb([9, 9, 9])));
        let sof = bytes.windows(2).position(|w| w == [0xFF, 0xC0]).expect("baseline JPEG has SOF0");
        let dim = 20000u16.to_be_bytes();
        bytes[sof + 5..sof + 7].copy_from_slice(&dim);
        bytes[sof + 7..sof + 9].copy_from_slice(&dim);
        bytes
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty.jpg", Vec::new()),
        ("truncated.jpg", board_like[..board_like.len() / 3].to_vec()),
        ("cat.png", no_board),
        ("one.jpg", one_pixel),
        ("huge.jpg", huge_header),
        ("text.jpg", b"this is not an image".to_vec()),
    ];
    for (name, bytes) in cases {
        let path = temp(name, &bytes);
        let (code, stdout, stderr) = detect(&path, &[]);
        assert_ne!(code, 0, "{name}: exit 0 with output {stdout}");
        assert!(stdout.is_empty(), "{name}: printed a board for bad input: {stdout}");
        assert!(stderr.contains("tengen"), "{name}: unclear message: {stderr}");
        println!("{name}: exit {code}: {}", stderr.trim());
    }
    let (code, _, stderr) = detect(&PathBuf::from("/nonexistent/board.jpg"), &[]);
    assert_ne!(code, 0);
    assert!(stderr.contains("nonexistent"), "missing file not named: {stderr}");
}
