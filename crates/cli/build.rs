//! Embeds the project's sample sequences (`samples/*/` frames and `sequence.json`) into the
//! `tengen` binary, so that `tengen serve --demo` runs from any directory, installed or not.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let samples = manifest.join("../../samples");
    println!("cargo:rerun-if-changed={}", samples.display());
    let mut files = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&samples) {
        for entry in entries.flatten() {
            let dir = entry.path();
            println!("cargo:rerun-if-changed={}", dir.display());
            let Ok(inner) = std::fs::read_dir(&dir) else {
                continue;
            };
            for file in inner.flatten().map(|f| f.path()) {
                if wanted(&file) {
                    files.push(file);
                }
            }
        }
    }
    files.sort();
    let mut code = String::from(
        "/// Sample files: (path under `samples/`, bytes).\npub static SAMPLE_FILES: &[(&str, &[u8])] = &[\n",
    );
    for file in &files {
        let Ok(relative) = file.strip_prefix(&samples) else {
            continue;
        };
        let name = relative.to_string_lossy().replace('\\', "/");
        let absolute = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
        let _ = writeln!(code, "    ({name:?}, include_bytes!({:?})),", absolute.to_string_lossy());
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("samples.rs");
    if let Err(err) = std::fs::write(&out, code) {
        panic!("cannot write {}: {err}", out.display());
    }
}

/// Frames and their schedule; not the READMEs or expected records.
fn wanted(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    path.is_file() && (matches!(ext.as_str(), "jpg" | "jpeg" | "png") || name == "sequence.json")
}
