//! Development aid: prints the per-frame class model (means, spreads) the classifier settles on
//! for one photo, located automatically. `class_model IMAGE`
use tengen_vision::stages::classify;
use tengen_vision::{read_board_detailed, ReaderConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: class_model IMAGE")?;
    let frame = tengen_vision::decode_rgb(&std::fs::read(path)?)?;
    let found = tengen_vision::locate(&frame.rgb, &tengen_vision::LocateOptions::default())?;
    let details = read_board_detailed(&frame.rgb, &found.geometry, &ReaderConfig::default());
    let c = classify(&details.features, &tengen_vision::ReaderModel::embedded().classes, details.colour.global, 1.0);
    for (k, name) in ["empty", "black", "white"].iter().enumerate() {
        let (m, s) = &c.class_model[k];
        println!(
            "{name:6} mean {:?}\n       sd   {:?}",
            m.iter().map(|v| (v * 100.0).round() / 100.0).collect::<Vec<_>>(),
            s.iter().map(|v| (v * 100.0).round() / 100.0).collect::<Vec<_>>()
        );
    }
    Ok(())
}
