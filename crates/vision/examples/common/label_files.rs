//! The labelled-photo files the development examples share: finding images below a folder and
//! reading the points of their label sidecars (`<image>.grid.json`, `<image>.corners.json`).

// Each example includes this file and uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Every file below `dir` whose extension (any case) is one of `extensions`, depth first.
pub fn walk_images(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk_images(&p, extensions, out);
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e.to_ascii_lowercase().as_str()))
        {
            out.push(p);
        }
    }
}

/// The sidecar of an image: its whole file name with `suffix` appended.
pub fn sidecar(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A JSON `[x, y]` pair.
pub fn pair(v: &serde_json::Value) -> Option<[f64; 2]> {
    Some([v.get(0)?.as_f64()?, v.get(1)?.as_f64()?])
}

/// The 361 labelled intersections of a `.grid.json` (`points_px`, 19 rows of 19 pairs).
pub fn grid_points(v: &serde_json::Value) -> Option<Vec<[f64; 2]>> {
    Some(
        v.get("points_px")?
            .as_array()?
            .iter()
            .flat_map(|row| row.as_array().into_iter().flatten())
            .filter_map(pair)
            .collect(),
    )
}
