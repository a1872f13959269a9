//! `tengen fit reader DIR`: fits the point reader's model (class priors and confidence
//! calibration) on every photo with point labels under DIR and writes it as TOML — the file the
//! reader ships with is `models/point-reader.toml`, written by this command. `tengen fit
//! occlusion DIR` fits the occlusion decision (`models/occlusion.toml`) on the photos with hand
//! labels under DIR and on frames rendered with fixed seeds. `tengen fit patch-reader DIR` fits
//! the learned point reader (`models/patch-reader.md`) on every labelled photo and on frames
//! rendered with seeds of their own.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use tengen_vision::fit::ReaderModelFile;
use tengen_vision::fit::{fit_patch_reader as fit_patch, PatchFitOptions, PatchModelFile, PatchSample};
use tengen_vision::fit::{OcclusionModelFile, COVERED_FEATURE_NAMES, EDGE_FEATURE_NAMES, FEATURE_NAMES};
use tengen_vision::ReaderConfig;

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
    /// Fit the occlusion decision on the photos with hand labels (roboflow-corners and imago
    /// by our label files, goban-watcher-dev and gomrade-singles as showing none) and on frames
    /// rendered with fixed seeds (every stress factor, with and without a hand).
    Occlusion {
        /// Folder of labelled photos (searched recursively).
        dir: PathBuf,
        /// Where to write the model (TOML).
        #[arg(long, default_value = "models/occlusion.toml")]
        out: PathBuf,
        /// Leave these sources out of the fit (e.g. `roboflow-corners`: the model `eval photos
        /// --loso` scores that source with).
        #[arg(long)]
        without: Vec<String>,
        /// Also write every frame's features, label and fitted probability to this file (TSV).
        #[arg(long)]
        dump: Option<PathBuf>,
    },
    /// Fit the learned point reader (a small network on each point's patch) on every photo with
    /// point labels under DIR and on frames rendered over every stress factor with seeds of their
    /// own (`fit-patch:` + the bucket's name), every source weighing the same.
    PatchReader {
        /// Folder of labelled photos (searched recursively).
        dir: PathBuf,
        /// Where to write the model (JSON).
        #[arg(long, default_value = "models/patch-reader.json")]
        out: PathBuf,
        /// Leave these sources out of the fit (the model `eval photos --loso --patch-reader`
        /// scores that source with).
        #[arg(long)]
        without: Vec<String>,
        /// The seed of the network's initial weights and shuffles (default: the shipped
        /// model's). A fit's figures swing with its seed (models/patch-reader.md): fit with
        /// several and judge each with `eval rendered --stress --patch-model FILE`.
        #[arg(long)]
        seed: Option<u64>,
    },
}

/// Runs `tengen fit`.
pub fn run(args: FitArgs) -> anyhow::Result<ExitCode> {
    match args.target {
        FitTarget::Reader { dir, out, without } => fit_reader(&dir, &out, &without),
        FitTarget::Occlusion { dir, out, without, dump } => fit_occlusion(&dir, &out, &without, dump.as_deref()),
        FitTarget::PatchReader { dir, out, without, seed } => fit_patch_reader(&dir, &out, &without, seed),
    }
}

/// Rendered frames per stress bucket in the patch reader's training set.
pub const PATCH_FRAMES_PER_BUCKET: usize = 2;
/// Largest side of those frames (the patch is sampled in grid spacings, so a frame smaller than
/// the suite's 1080p serves and renders faster).
pub const PATCH_MAX_SIDE: u32 = 1280;

/// The patch reader's training points: every labelled photo's (mirrored too) and the rendered
/// frames' (`eval_stress::patch_training`).
pub fn patch_training_samples(
    photos: &[crate::photo_set::Photo],
) -> anyhow::Result<(Vec<PatchSample>, Vec<PatchSample>)> {
    let photo_samples = crate::photo_set::patch_samples(photos);
    let rendered =
        crate::eval_stress::patch_training(PATCH_MAX_SIDE, PATCH_FRAMES_PER_BUCKET, &ReaderConfig::default())?;
    Ok((photo_samples, rendered))
}

fn fit_patch_reader(
    dir: &std::path::Path,
    out: &std::path::Path,
    without: &[String],
    seed: Option<u64>,
) -> anyhow::Result<ExitCode> {
    let (photos, _) = crate::photo_set::collect(dir)?;
    let (mut samples, rendered) = patch_training_samples(&photos)?;
    samples.retain(|s| !without.contains(&s.source));
    samples.extend(rendered);
    let model = fit_patch(&samples, &PatchFitOptions::with_seed(seed)).context("fitting the patch reader")?;
    let points_per_source = count_per_source(samples.iter().map(|s| s.source.as_str()));
    let mut command = command_line("patch-reader", dir, out, without);
    if let Some(seed) = seed {
        command.push_str(&format!(" --seed {seed}"));
    }
    let file = PatchModelFile { command, points_per_source, model };
    crate::photo_set::write_patch_model(out, &file)?;
    println!("{} training points from {} sources → {}", samples.len(), file.points_per_source.len(), out.display());
    for (source, n) in &file.points_per_source {
        println!("  {source}: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

fn fit_occlusion(
    dir: &std::path::Path,
    out: &std::path::Path,
    without: &[String],
    dump: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let (photos, _) = crate::photo_set::collect(dir)?;
    // The tests' evidence does not depend on the decision, so any model reads it.
    let config = ReaderConfig::default();
    let mut samples = crate::photo_set::occlusion_samples(&photos, &config);
    samples.retain(|s| !without.contains(&s.source));
    samples.extend(crate::photo_set::rendered_occlusion_samples(&config)?);
    let model = tengen_vision::fit::fit_occlusion(&samples).context("fitting the occlusion model")?;
    let mut frames_per_source: Vec<(String, usize, usize)> = Vec::new();
    for s in &samples {
        match frames_per_source.iter_mut().find(|(name, _, _)| *name == s.source) {
            Some((_, n, h)) => {
                *n += 1;
                *h += usize::from(s.hand);
            }
            None => frames_per_source.push((s.source.clone(), 1, usize::from(s.hand))),
        }
    }
    let file = OcclusionModelFile {
        command: command_line("occlusion", dir, out, without),
        frames_per_source,
        features: FEATURE_NAMES.iter().map(|s| (*s).to_string()).collect(),
        covered_features: COVERED_FEATURE_NAMES.iter().map(|s| (*s).to_string()).collect(),
        edge_features: EDGE_FEATURE_NAMES.iter().map(|s| (*s).to_string()).collect(),
        model,
    };
    write_model(
        out,
        "# The occlusion model: written by `tengen fit occlusion` (models/point-reader.md); do not edit.\n",
        &file,
    )?;
    println!("{} frames from {} sources → {}", samples.len(), file.frames_per_source.len(), out.display());
    for (source, n, hands) in &file.frames_per_source {
        println!("  {source}: {n} ({hands} with a hand)");
    }
    println!("  cell patch: weights {:?}, bias {:.4}", model.weights, model.bias);
    println!("  covered group: weights {:?}, bias {:.4}", model.covered.weights, model.covered.bias);
    println!("  edge run: weights {:?}, bias {:.4}", model.edge.weights, model.edge.bias);
    if let Some(path) = dump {
        let mut tsv = format!(
            "source\tname\thand\tp\tp_covered\tp_edge\trules\tcells\tcovered\tcrossed\tedge_run\tedge_margin\tedge_chroma\tedge_share\t{}\t{}\n",
            FEATURE_NAMES.join("\t"),
            COVERED_FEATURE_NAMES.join("\t")
        );
        for s in &samples {
            let x = s.evidence.features();
            let xc = s.evidence.covered_features();
            tsv.push_str(&format!(
                "{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}\t{}\t{}\t{}\t{}\t{:.2}\t{:.2}\t{:.2}\t{:.3}\t{}\t{}\n",
                s.source,
                s.name,
                u8::from(s.hand),
                model.probability(&s.evidence),
                model.covered_probability(&s.evidence),
                model.edge_probability(&s.evidence),
                u8::from(s.evidence.rules_fired),
                s.evidence.foreign_cells,
                s.evidence.covered_points,
                s.evidence.crossed_points,
                s.evidence.edge_run,
                s.evidence.edge_margin,
                s.evidence.edge_chroma,
                s.evidence.edge_share,
                x.iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>().join("\t"),
                xc.iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>().join("\t")
            ));
        }
        std::fs::write(path, tsv).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn fit_reader(dir: &std::path::Path, out: &std::path::Path, without: &[String]) -> anyhow::Result<ExitCode> {
    let (photos, _) = crate::photo_set::collect(dir)?;
    let mut frames = crate::photo_set::labelled_frames(&photos);
    frames.retain(|f| !without.contains(&f.source));
    let model = tengen_vision::fit::fit_reader(&frames).context("fitting the reader")?;
    let frames_per_source = count_per_source(frames.iter().map(|f| f.source.as_str()));
    let file = ReaderModelFile { command: command_line("reader", dir, out, without), frames_per_source, model };
    write_model(
        out,
        "# The point reader's model: written by `tengen fit reader` (models/point-reader.md); do not edit.\n",
        &file,
    )?;
    println!("{} labelled frames from {} sources → {}", frames.len(), file.frames_per_source.len(), out.display());
    for (source, n) in &file.frames_per_source {
        println!("  {source}: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The command that writes a model, as the model file records it.
/// How many of the items come from each source, in the order the sources first appear (the
/// model files record what they were fitted on).
fn count_per_source<'a>(sources: impl Iterator<Item = &'a str>) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for source in sources {
        match counts.iter_mut().find(|(name, _)| name == source) {
            Some((_, n)) => *n += 1,
            None => counts.push((source.to_string(), 1)),
        }
    }
    counts
}

fn command_line(target: &str, dir: &std::path::Path, out: &std::path::Path, without: &[String]) -> String {
    let without: String = without.iter().map(|s| format!(" --without {s}")).collect();
    format!("tengen fit {target} {} --out {}{without}", dir.display(), out.display())
}

/// Writes a model file as TOML under its header line.
fn write_model(out: &std::path::Path, header: &str, file: &impl serde::Serialize) -> anyhow::Result<()> {
    let text = toml::to_string(file).context("writing the model as TOML")?;
    std::fs::write(out, format!("{header}{text}")).with_context(|| format!("writing {}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tengen fit ARGS…` parsed as the binary parses it.
    #[derive(clap::Parser)]
    struct FitCommand {
        #[command(flatten)]
        args: FitArgs,
    }

    #[test]
    fn a_patch_reader_fit_takes_a_seed_and_defaults_to_the_shipped_one() {
        use clap::Parser;
        let parse = |extra: &[&str]| FitCommand::try_parse_from([&["fit", "patch-reader", "DIR"], extra].concat());
        let seed_of = |extra: &[&str]| match parse(extra) {
            Ok(FitCommand { args: FitArgs { target: FitTarget::PatchReader { seed, .. } } }) => Ok(seed),
            Ok(_) => Err("another target".to_string()),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(seed_of(&["--seed", "3"]), Ok(Some(3)));
        assert_eq!(seed_of(&[]), Ok(None));
        assert!(seed_of(&["--seed", "x"]).is_err());
        // The seed belongs to the learned reader's fit only.
        assert!(FitCommand::try_parse_from(["fit", "reader", "DIR", "--seed", "3"]).is_err());
    }
}
