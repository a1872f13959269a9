//! `tengen fit reader DIR`: fits the point reader's model (class priors and confidence
//! calibration) on every photo with point labels under DIR and writes it as TOML — the file the
//! reader ships with is `models/point-reader.toml`, written by this command.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use tengen_vision::reader_model::{fit, ReaderModelFile};

/// Arguments of `tengen fit`.
#[derive(clap::Args)]
pub struct FitArgs {
    #[command(subcommand)]
    target: FitTarget,
}

#[derive(clap::Subcommand)]
enum FitTarget {
    /// Fit the point reader on labelled photos (`.grid.txt`; read on `.grid.json` /
    /// `.corners.json` grids where given, else on the grid the search finds).
    Reader {
        /// Folder of labelled photos (searched recursively).
        dir: PathBuf,
        /// Where to write the model (TOML).
        #[arg(long, default_value = "models/point-reader.toml")]
        out: PathBuf,
        /// Leave these sources out of the fit (e.g. `imago-tests/t3`: the model
        /// `eval photos --loso` scores that source with).
        #[arg(long)]
        without: Vec<String>,
    },
}

/// Runs `tengen fit`.
pub fn run(args: FitArgs) -> anyhow::Result<ExitCode> {
    let FitTarget::Reader { dir, out, without } = args.target;
    let (photos, _) = crate::photo_set::collect(&dir)?;
    let mut frames = crate::photo_set::labelled_frames(&photos);
    frames.retain(|f| !without.contains(&f.source));
    let model = fit(&frames).context("fitting the reader")?;
    let mut frames_per_source: Vec<(String, usize)> = Vec::new();
    for frame in &frames {
        match frames_per_source.iter_mut().find(|(s, _)| *s == frame.source) {
            Some((_, n)) => *n += 1,
            None => frames_per_source.push((frame.source.clone(), 1)),
        }
    }
    let file = ReaderModelFile {
        command: format!(
            "tengen fit reader {} --out {}{}",
            dir.display(),
            out.display(),
            without.iter().map(|s| format!(" --without {s}")).collect::<String>()
        ),
        frames_per_source,
        model,
    };
    let text = toml::to_string(&file).context("writing the model as TOML")?;
    let header = "# The point reader's model: written by `tengen fit reader` (models/point-reader.md); do not edit.\n";
    std::fs::write(&out, format!("{header}{text}")).with_context(|| format!("writing {}", out.display()))?;
    println!("{} labelled frames from {} sources → {}", frames.len(), file.frames_per_source.len(), out.display());
    for (source, n) in &file.frames_per_source {
        println!("  {source}: {n}");
    }
    Ok(ExitCode::SUCCESS)
}
