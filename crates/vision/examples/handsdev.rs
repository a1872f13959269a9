//! Development aid for the hand tests on frames saved by `tengen eval rendered --stress
//! --save-frames DIR`: per frame, whether a hand truly covers points (from its `.truth.json`),
//! whether the vision flags it, and the occlusion evidence with each fitted model's probability
//! — to see why a hand frame is missed or a clean one flagged.
//! `handsdev DIR [NAME_FILTER]`; the frame is located from scratch, as the suite does.

use std::error::Error;
use std::path::PathBuf;

use tengen_vision::evaluate::analyse_frame;
use tengen_vision::{LocateOptions, OcclusionModel, ReaderConfig};

#[path = "common/label_files.rs"]
mod label_files;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(args.get(1).ok_or("usage: handsdev DIR [NAME_FILTER]")?);
    let filter = args.get(2).cloned().unwrap_or_default();
    let mut files = Vec::new();
    label_files::walk_images(&dir, &["jpg"], &mut files);
    files.sort();
    let config = ReaderConfig::default();
    let model = config.occlusion_model.unwrap_or_else(OcclusionModel::embedded);
    for path in files.iter().filter(|p| p.display().to_string().contains(&filter)) {
        let stem = path.display().to_string();
        let stem = stem.trim_end_matches(".jpg");
        let truth: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{stem}.truth.json"))?)?;
        let flags = |key: &str| -> Vec<bool> {
            truth[key].as_array().map(|a| a.iter().map(|v| v.as_bool().unwrap_or(false)).collect()).unwrap_or_default()
        };
        let covered = flags("occluded").iter().zip(flags("in_frame")).filter(|(o, f)| **o && *f).count();
        let over_board = truth["hand_over_board"].as_bool().unwrap_or(false);
        let kind = if covered > 0 {
            "HAND"
        } else if over_board {
            "margin"
        } else {
            "clean"
        };
        let image = image::open(path)?.into_rgb8();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match analyse_frame(&image, &LocateOptions::default(), &config) {
            Err(e) => println!("{name} {kind}: not located: {e}"),
            Ok(a) => {
                let e = &a.details.occlusion;
                println!(
                    "{name} {kind} covered={covered} flagged={} | cells: found={} patch={} dist={:.2} typ={:.2} edge={} p={:.3} | covered: pts={} largest={} at_edge={} lineless={:.3} bare={:.3} p={:.3} | crossed={} | run={:.2} margin={:.2} chroma={:.1} share={:.2} p={:.3}",
                    a.details.reading.occluded,
                    e.foreign_cells,
                    e.largest_patch,
                    e.patch_distance,
                    e.typical_distance,
                    e.patch_at_edge,
                    model.probability(e),
                    e.covered_points,
                    e.largest_covered,
                    e.covered_at_edge,
                    e.lineless_share,
                    e.bare_lines,
                    model.covered_probability(e),
                    e.crossed_points,
                    e.edge_run,
                    e.edge_margin,
                    e.edge_chroma,
                    e.edge_share,
                    model.edge_probability(e),
                );
            }
        }
    }
    Ok(())
}
