//! What the `ai/` set's test and the replay bench share: where the set is, and its files.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The `ai/` set of real games (../shared/datasets/games/ai).
pub fn ai_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/games/ai")
}

/// The `.sgf` files below `dir`, sorted by path.
pub fn sgf_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("sgf")) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
