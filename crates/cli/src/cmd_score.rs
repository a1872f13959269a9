//! `tengen score`: replays a record, removes the chains marked dead and counts by area (Art. 9),
//! then prints the result with komi (Art. 11) in the exact, points and customary forms.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use tengen_rules::{count_area, Komi, Penalties, Point, Stone};

/// Arguments of `tengen score`.
#[derive(clap::Args)]
pub struct ScoreArgs {
    /// The SGF record (its main line is replayed; illegal moves are void, as in `sgf check`).
    file: PathBuf,
    /// Chains marked dead, comma-separated, each named by one of its points in SGF ("pd") or
    /// human ("Q16") notation.
    #[arg(long, value_name = "POINTS")]
    dead: Option<String>,
    /// Komi in points (7.5 = 3¾ stones). Default: the record's KM, else 7.5.
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    komi: Option<f64>,
}

/// Runs `tengen score`.
pub fn run(args: ScoreArgs) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let rec = tengen_sgf::read_game(&bytes).with_context(|| format!("cannot read the record {}", args.file.display()))?;
    let mut game = rec.start_game()?;
    for (i, m) in rec.moves.iter().enumerate() {
        if let Err(illegal) = game.play(m.color, m.mv) {
            eprintln!("note: move {} is illegal ({}): void, counted as a pass", i + 1, illegal.reason.describe());
            game.void_move(&illegal);
        }
    }
    let board = game.board();
    let (width, height) = (board.width(), board.height());
    let mut dead = Vec::new();
    for text in args.dead.iter().flat_map(|d| d.split(',')).map(str::trim).filter(|t| !t.is_empty()) {
        let p = Point::parse(text, width, height).with_context(|| format!("--dead {text}"))?;
        if board.get(p) == Stone::Empty {
            bail!("--dead {text}: no stone at {} (SGF {}) after move {}", p.to_human(height), p.to_sgf(), rec.moves.len());
        }
        dead.push(p);
    }
    let komi = match args.komi.or(rec.komi) {
        Some(k) if k.is_finite() => Komi { points: k },
        Some(k) => bail!("komi {k} is not a number"),
        None => Komi::default(),
    };
    let count = count_area(board, &dead);
    let result = count.result(komi, Penalties::default());

    println!("{}: {}x{} board, {} moves replayed", args.file.display(), width, height, rec.moves.len());
    if dead.is_empty() {
        println!("dead stones: none marked");
    } else {
        let chains: Vec<String> = dead.iter().map(|p| p.to_human(height)).collect();
        println!(
            "dead stones removed: {} black, {} white (chains at {})",
            count.dead_black,
            count.dead_white,
            chains.join(", ")
        );
    }
    println!(
        "Black: {} stones + {} territory + {} shared / 2 = {}",
        count.black_stones,
        count.black_territory,
        count.shared,
        count.black_area()
    );
    println!(
        "White: {} stones + {} territory + {} shared / 2 = {}",
        count.white_stones,
        count.white_territory,
        count.shared,
        count.white_area()
    );
    println!("shared points (dame, seki): {}", count.shared);
    println!("par {}; komi {} points ({} stones)", count.par(), komi.points, komi.stones());
    println!("result: {}", result.exact());
    println!("points: {}", result.points());
    println!("customary: {}", result.customary());
    if let Some(recorded) = &rec.result {
        println!("recorded RE: {recorded}");
    }
    Ok(ExitCode::SUCCESS)
}
