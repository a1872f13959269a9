//! `tengen score`: replays a record, removes the chains marked dead and counts by area (Art. 9),
//! then prints the result with komi (Art. 11) in the exact, points and customary forms.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use tengen_rules::{count_area, Komi, Penalties, Point, Stone};
use tengen_sgf::GameRecord;

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
    let rec =
        tengen_sgf::read_game(&bytes).with_context(|| format!("cannot read the record {}", args.file.display()))?;
    print!("{}: {}", args.file.display(), report(&rec, args.dead.as_deref(), args.komi)?);
    Ok(ExitCode::SUCCESS)
}

/// The count and the result of a record, as the lines `tengen score` prints.
fn report(rec: &GameRecord, dead_arg: Option<&str>, komi_arg: Option<f64>) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut game = rec.start_game()?;
    for (i, m) in rec.moves.iter().enumerate() {
        if let Err(illegal) = game.play(m.color, m.mv) {
            writeln!(out, "note: move {} is illegal ({}): void, counted as a pass", i + 1, illegal.reason.describe())?;
            game.void_move(&illegal);
        }
    }
    let board = game.board();
    let (width, height) = (board.width(), board.height());
    let mut dead = Vec::new();
    for text in dead_arg.iter().flat_map(|d| d.split(',')).map(str::trim).filter(|t| !t.is_empty()) {
        let p = Point::parse(text, width, height).with_context(|| format!("--dead {text}"))?;
        if board.get(p) == Stone::Empty {
            bail!(
                "--dead {text}: no stone at {} (SGF {}) after move {}",
                p.to_human(height),
                p.to_sgf(),
                rec.moves.len()
            );
        }
        dead.push(p);
    }
    let komi = match komi_arg.or(rec.komi) {
        Some(k) if k.is_finite() => Komi { points: k },
        Some(k) => bail!("komi {k} is not a number"),
        None => Komi::default(),
    };
    let count = count_area(board, &dead);
    let result = count.result(komi, Penalties::default());

    writeln!(out, "{width}x{height} board, {} moves replayed", rec.moves.len())?;
    if dead.is_empty() {
        writeln!(out, "dead stones: none marked")?;
    } else {
        let chains: Vec<String> = dead.iter().map(|p| p.to_human(height)).collect();
        writeln!(
            out,
            "dead stones removed: {} black, {} white (chains at {})",
            count.dead_black,
            count.dead_white,
            chains.join(", ")
        )?;
    }
    for (name, stones, territory, area) in [
        ("Black", count.black_stones, count.black_territory, count.black_area()),
        ("White", count.white_stones, count.white_territory, count.white_area()),
    ] {
        writeln!(out, "{name}: {stones} stones + {territory} territory + {} shared / 2 = {area}", count.shared)?;
    }
    writeln!(out, "shared points (dame, seki): {}", count.shared)?;
    writeln!(out, "par {}; komi {} points ({} stones)", count.par(), komi.points, komi.stones())?;
    writeln!(out, "result: {}", result.exact())?;
    writeln!(
        out,
        "  (exact, in stones: Black's area against the par {} plus komi {} stones; Art. 9, 11)",
        count.par(),
        komi.stones()
    )?;
    writeln!(out, "points: {}", result.points())?;
    writeln!(out, "  (the same margin in points, one stone = two points, as a record's RE writes it)")?;
    writeln!(out, "customary: {}", result.customary())?;
    let quarter = (result.black_margin_stones.abs().fract() - 0.25).abs() < 1e-9
        || (result.black_margin_stones.abs().fract() - 0.75).abs() < 1e-9;
    if quarter {
        writeln!(out, "  (as it is announced: a margin of ¼ or ¾ stone is said as ½ by custom, Art. 11)")?;
    } else {
        writeln!(out, "  (as it is announced in China, Art. 11)")?;
    }
    if let Some(recorded) = &rec.info.result {
        writeln!(out, "recorded RE: {recorded}")?;
        if recorded.trim() != result.points() {
            writeln!(
                out,
                "  (the record's own result differs from this count: {})",
                why_recorded_differs(recorded, dead.is_empty(), rec.komi, komi)
            )?;
        }
    }
    Ok(out)
}

/// The likely reasons a record's RE differs from the count, most likely first.
fn why_recorded_differs(recorded: &str, no_dead_marked: bool, recorded_komi: Option<f64>, komi: Komi) -> String {
    let mut reasons = Vec::new();
    let upper = recorded.to_ascii_uppercase();
    if ["+R", "+T", "+F"].iter().any(|end| upper.contains(end)) {
        reasons.push("the game ended by resignation, time or forfeit, not by counting".to_owned());
    }
    if no_dead_marked {
        reasons.push("no dead stones were marked (--dead), so stones left dead on the board count as alive".to_owned());
    }
    if recorded_komi.is_some_and(|k| (k - komi.points).abs() > 1e-9) {
        reasons.push(format!(
            "the count uses komi {} points, the record {}",
            komi.points,
            recorded_komi.unwrap_or_default()
        ));
    }
    if reasons.is_empty() {
        reasons.push("the record's scorer marked other dead stones or counted under other rules".to_owned());
    }
    reasons.join("; or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5×5: Black holds columns A–C, White D–E; White's stone at A3 is dead.
    const GAME: &str = "(;SZ[5]KM[0];B[ca];W[da];B[cb];W[db];B[cc];W[dc];B[cd];W[dd];B[ce];W[de];B[];W[ac])";

    #[test]
    fn counts_removes_dead_chains_and_prints_three_forms() -> anyhow::Result<()> {
        let rec = tengen_sgf::read_game(GAME.as_bytes())?;
        let text = report(&rec, Some("A3"), None)?;
        assert!(text.contains("dead stones removed: 0 black, 1 white (chains at A3)"), "{text}");
        assert!(text.contains("Black: 5 stones + 10 territory + 0 shared / 2 = 15"), "{text}");
        assert!(text.contains("White: 5 stones + 5 territory + 0 shared / 2 = 10"), "{text}");
        assert!(text.contains("result: Black wins by 2½ stones"), "{text}");
        assert!(text.contains("points: B+5"), "{text}");
        assert!(text.contains("customary: 黑勝2又1/2子"), "{text}");
        // The same chain named in SGF notation; komi from the command line.
        let text = report(&rec, Some("ac"), Some(3.5))?;
        assert!(text.contains("result: Black wins by ¾ stone"), "{text}");
        assert!(text.contains("points: B+1.5"), "{text}");
        assert!(text.contains("customary: 黑勝1/2子"), "{text}");
        // Without marking the dead stone it stands on Black's side: its neighbours are shared.
        let text = report(&rec, None, None)?;
        assert!(text.contains("dead stones: none marked"), "{text}");
        // Every form says what it is; a quarter margin says why it is announced as a half.
        let rec = tengen_sgf::read_game(
            b"(;SZ[5]KM[0]RE[W+0.5];B[ca];W[da];B[cb];W[db];B[cc];W[dc];B[cd];W[dd];B[ce];W[de];B[];W[ac])",
        )?;
        let text = report(&rec, Some("A3"), Some(3.5))?;
        assert!(text.contains("said as ½ by custom"), "{text}");
        assert!(text.contains("one stone = two points"), "{text}");
        assert!(text.contains("recorded RE: W+0.5\n  (the record's own result differs from this count"), "{text}");
        assert!(text.contains("komi 3.5 points, the record 0"), "{text}");
        let text = report(&rec, None, Some(0.0))?;
        assert!(text.contains("no dead stones were marked"), "{text}");
        assert!(report(&rec, Some("B2"), None).is_err(), "no stone at B2");
        assert!(report(&rec, Some("Z9"), None).is_err(), "off the board");
        Ok(())
    }
}
