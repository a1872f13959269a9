//! The `tengen` command: one subcommand per module, each module owns its arguments and output.

use clap::{Parser, Subcommand};

mod calibration_file;
mod cmd_calibrate;
mod cmd_detect;
mod cmd_eval;
mod cmd_fit;
mod cmd_referee;
mod cmd_render;
mod cmd_replay;
mod cmd_score;
mod cmd_serve;
mod cmd_sgf;
mod eval_stress;
mod photo_set;
mod stress_compare;

/// Tengen: a board-camera referee for Go under the Chinese rules.
#[derive(Parser)]
#[command(name = "tengen", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the referee service and dashboard (embedded defaults; `--demo` plays the samples).
    Serve(cmd_serve::ServeArgs),
    /// Read one image and print the board it shows.
    Detect(cmd_detect::DetectArgs),
    /// Locate the board in an image and write a calibration file.
    Calibrate(cmd_calibrate::CalibrateArgs),
    /// Run vision and referee over a folder of frames; write the SGF and the events.
    Replay(cmd_replay::ReplayArgs),
    /// Run the referee over board readings (JSON lines) and print events.
    Referee(cmd_referee::RefereeArgs),
    /// Render a synthetic camera frame with ground truth.
    Render(cmd_render::RenderArgs),
    /// Game records: check them under Chinese practice.
    Sgf(cmd_sgf::SgfArgs),
    /// Count a finished game by area and print the result.
    Score(cmd_score::ScoreArgs),
    /// Measure the vision on photo sets with ground truth.
    Eval(cmd_eval::EvalArgs),
    /// Fit the vision's models from labelled data (`fit reader DIR`).
    Fit(cmd_fit::FitArgs),
}

fn main() -> std::process::ExitCode {
    use std::io::IsTerminal as _;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never in a log file or a journal.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Serve(args) => cmd_serve::run(args),
        Command::Detect(args) => cmd_detect::run(args),
        Command::Calibrate(args) => cmd_calibrate::run(args),
        Command::Replay(args) => cmd_replay::run(args),
        Command::Referee(args) => cmd_referee::run(args),
        Command::Render(args) => cmd_render::run(args),
        Command::Sgf(args) => cmd_sgf::run(args),
        Command::Score(args) => cmd_score::run(args),
        Command::Eval(args) => cmd_eval::run(args),
        Command::Fit(args) => cmd_fit::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("tengen: {err:#}");
            std::process::ExitCode::from(2)
        }
    }
}
