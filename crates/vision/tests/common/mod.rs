//! Shared by the real-photo tests: where the photos are, and the JPEGs under a folder.

use std::path::{Path, PathBuf};

/// `../shared/datasets/photos` beside the repository, when it is there; when not, says that the
/// test using it is skipped.
pub fn photos() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/photos");
    if !dir.is_dir() {
        println!("SKIP: ../shared/datasets/photos not present");
    }
    dir.is_dir().then_some(dir)
}

/// The roboflow-corners training images (labelled corners and hands), when the photos are there.
#[allow(dead_code)] // each test binary compiles this module; not all of them use every helper
pub fn roboflow_training_images() -> Option<PathBuf> {
    photos().map(|root| root.join("roboflow-corners/train/images"))
}

/// Every `.jpg` under `dir`, at any depth, sorted.
pub fn jpegs_under(dir: &Path) -> Vec<PathBuf> {
    files_under(dir, "jpg")
}

/// Every file named `*.<extension>` under `dir`, at any depth, sorted.
#[allow(dead_code)] // each test binary compiles this module; not all of them use every helper
pub fn files_under(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == extension) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
