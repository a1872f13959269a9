//! `tengen sgf check`: replays game records under Chinese practice and prints one line per
//! finding (illegal move, repetition, no result, alternation, parse error) and a summary; the
//! exit status says whether anything was found, so scripts can use it.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use tengen_sgf::{check_bytes, Finding, FindingKind};

/// Arguments of `tengen sgf`.
#[derive(clap::Args)]
pub struct SgfArgs {
    #[command(subcommand)]
    command: SgfCommand,
}

#[derive(clap::Subcommand)]
enum SgfCommand {
    /// Replay records under Chinese practice (basic ko, no suicide, repetitions flagged) and
    /// report findings.
    ///
    /// Exit status: 0 when every record is clean, 1 when anything was found (an illegal move, a
    /// repetition, a no-result cycle, two moves in a row, a record that cannot be read), 2 when
    /// the check could not run (a path that does not exist).
    Check(CheckArgs),
}

/// Arguments of `tengen sgf check`.
#[derive(clap::Args)]
struct CheckArgs {
    /// SGF files, or directories walked recursively for `*.sgf` (sorted).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// One JSON object per line: findings, then a summary.
    #[arg(long)]
    json: bool,
}

/// Totals over every file checked.
#[derive(Default)]
struct Summary {
    files: usize,
    games: usize,
    moves: usize,
    illegal_moves: usize,
    repetitions: usize,
    no_result: usize,
    alternation: usize,
    parse_errors: usize,
}

impl Summary {
    fn add(&mut self, f: &Finding) {
        match f.kind {
            FindingKind::IllegalMove => self.illegal_moves += 1,
            FindingKind::Repetition => self.repetitions += 1,
            FindingKind::NoResult => self.no_result += 1,
            FindingKind::Alternation => self.alternation += 1,
            FindingKind::ParseError => self.parse_errors += 1,
        }
    }
}

/// Runs `tengen sgf`.
pub fn run(args: SgfArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        SgfCommand::Check(check) => run_check(check),
    }
}

/// Every file to check: given files as they are, directories walked for `.sgf` files, sorted.
fn collect_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found).with_context(|| format!("cannot walk {}", path.display()))?;
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    // Iterative, so deep directory trees cannot overflow the stack.
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("sgf")) {
                out.push(path);
            }
        }
    }
    Ok(())
}

fn run_check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let files = collect_files(&args.paths)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match check_all(&files, args.json, &mut out).and_then(|found| out.flush().map(|()| found)) {
        Ok(0) => Ok(ExitCode::SUCCESS),
        Ok(_) => Ok(ExitCode::from(1)),
        // `tengen sgf check DIR | head` stopped reading: the findings are not all known.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::from(1)),
        Err(e) => Err(e).context("writing the report"),
    }
}

/// "1 file", "2 files".
fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Checks every file, writes the findings and the summary, and returns how many findings there
/// were.
fn check_all(files: &[PathBuf], json: bool, out: &mut impl Write) -> std::io::Result<usize> {
    let mut summary = Summary::default();
    for path in files {
        summary.files += 1;
        let display = path.display().to_string();
        let check = match std::fs::read(path) {
            Ok(bytes) => check_bytes(&bytes),
            Err(e) => tengen_sgf::FileCheck {
                findings: vec![Finding {
                    move_number: 0,
                    kind: FindingKind::ParseError,
                    reason: format!("cannot read the file: {e}"),
                    article: String::new(),
                }],
                ..Default::default()
            },
        };
        summary.games += check.games;
        summary.moves += check.moves;
        for f in &check.findings {
            summary.add(f);
            if json {
                let value = serde_json::json!({
                    "file": display,
                    "move": if f.kind == FindingKind::ParseError { serde_json::Value::Null } else { f.move_number.into() },
                    "kind": f.kind.name(),
                    "reason": f.reason,
                    "article": if f.article.is_empty() { serde_json::Value::Null } else { f.article.clone().into() },
                });
                writeln!(out, "{value}")?;
            } else if f.kind == FindingKind::ParseError {
                writeln!(out, "{display}: {}: {}", f.kind.name(), f.reason)?;
            } else {
                writeln!(
                    out,
                    "{display}: move {}: {}: {} (Art. {})",
                    f.move_number,
                    f.kind.name(),
                    f.reason,
                    f.article
                )?;
            }
        }
    }
    let s = &summary;
    if json {
        let value = serde_json::json!({"summary": {
            "files": s.files, "games": s.games, "moves": s.moves,
            "illegal_moves": s.illegal_moves, "repetitions": s.repetitions, "no_result": s.no_result,
            "alternation": s.alternation, "parse_errors": s.parse_errors,
        }});
        writeln!(out, "{value}")?;
    } else {
        writeln!(
            out,
            "{}, {}, {}: {}, {}, {} no result, {}, {}",
            plural(s.files, "file", "files"),
            plural(s.games, "game", "games"),
            plural(s.moves, "move", "moves"),
            plural(s.illegal_moves, "illegal move", "illegal moves"),
            plural(s.repetitions, "repetition", "repetitions"),
            s.no_result,
            plural(s.alternation, "alternation", "alternations"),
            plural(s.parse_errors, "parse error", "parse errors"),
        )?;
    }
    Ok(s.illegal_moves + s.repetitions + s.no_result + s.alternation + s.parse_errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_and_summary() -> anyhow::Result<()> {
        let dir = std::env::temp_dir().join(format!("tengen-sgf-check-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub"))?;
        // Suicide at move 4 (void, Art. 19); then Black twice in a row at move 6.
        std::fs::write(dir.join("a.sgf"), "(;SZ[9];B[ab];W[];B[ba];W[aa];B[cc];B[dd])")?;
        std::fs::write(dir.join("sub/b.sgf"), "not a record")?;
        std::fs::write(dir.join("sub/ignored.txt"), "(;B[aa])")?;
        let files = collect_files(std::slice::from_ref(&dir))?;
        assert_eq!(files.len(), 2, "only .sgf files, recursively");
        let mut out = Vec::new();
        assert_eq!(check_all(&files, true, &mut out)?, 3, "three findings");
        let text = String::from_utf8(out)?;
        let lines: Vec<serde_json::Value> = text.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0]["kind"], "illegal_move");
        assert_eq!(lines[0]["move"], 4);
        assert_eq!(lines[0]["article"], "19");
        assert_eq!(lines[1]["kind"], "alternation");
        assert_eq!(lines[1]["move"], 6);
        assert_eq!(lines[2]["kind"], "parse_error");
        assert!(lines[2]["file"].as_str().is_some_and(|f| f.ends_with("b.sgf")));
        let s = &lines[3]["summary"];
        assert_eq!(s["files"], 2);
        assert_eq!(s["games"], 1);
        assert_eq!(s["moves"], 6);
        assert_eq!(s["illegal_moves"], 1);
        assert_eq!(s["alternation"], 1);
        assert_eq!(s["parse_errors"], 1);
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
