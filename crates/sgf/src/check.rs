//! Replaying a record under Chinese practice (basic ko, no suicide, repetitions flagged and never
//! refused) and reporting what an arbiter would want to see. Illegal moves are void and count as
//! a pass (Art. 18.3, 19); the replay goes on.

use tengen_rules::{Color, Game, Move};

use crate::{GameRecord, SgfError};

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// A move the rules forbid: occupied point, forbidden point (suicide), ko retaken at once.
    IllegalMove,
    /// A whole-board position that occurred before (Art. 6): legal, flagged.
    Repetition,
    /// The same position with the same player to move a third time since the last pass: a
    /// cycle such as triple ko or eternal life (Art. 20.3).
    NoResult,
    /// The same colour moves twice: a double move or an unrecorded pass (Art. 17.2).
    Alternation,
    /// The record (or the file) could not be read.
    ParseError,
}

impl FindingKind {
    /// The name used in `tengen sgf check --json`.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::IllegalMove => "illegal_move",
            FindingKind::Repetition => "repetition",
            FindingKind::NoResult => "no_result",
            FindingKind::Alternation => "alternation",
            FindingKind::ParseError => "parse_error",
        }
    }
}

/// One thing the replay found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based number of the move in the main line (0 for a whole-record finding).
    pub move_number: usize,
    /// What kind of finding.
    pub kind: FindingKind,
    /// Human explanation, coordinates in both notations.
    pub reason: String,
    /// Article of the rules, e.g. "19" (empty for parse errors).
    pub article: String,
}

/// The replay of one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// Moves replayed (the main line, passes included).
    pub moves: usize,
    /// Findings in move order.
    pub findings: Vec<Finding>,
}

impl CheckReport {
    /// Findings of one kind.
    pub fn of_kind(&self, kind: FindingKind) -> impl Iterator<Item = &Finding> + '_ {
        self.findings.iter().filter(move |f| f.kind == kind)
    }
}

fn describe_move(color: Color, mv: Move, height: u8) -> String {
    match mv {
        Move::Place(p) => format!("{} {} ({}[{}])", color, p.to_human(height), color.sgf_letter(), p.to_sgf()),
        Move::Pass => format!("{color} pass"),
    }
}

/// Replays the main line of a record from its setup and reports every finding.
pub fn check_game(rec: &GameRecord) -> Result<CheckReport, SgfError> {
    let mut game: Game = rec.start_game()?;
    let mut findings = Vec::new();
    let mut previous: Option<(Color, Move)> = None;
    for (i, m) in rec.moves.iter().enumerate() {
        let number = i + 1;
        let expected = game.to_move();
        if m.color != expected {
            let before = previous.map(|(c, mv)| describe_move(c, mv, rec.height)).unwrap_or_default();
            findings.push(Finding {
                move_number: number,
                kind: FindingKind::Alternation,
                reason: format!(
                    "{} after {before}: {} moves twice in a row — a double move or an unrecorded pass",
                    describe_move(m.color, m.mv, rec.height),
                    m.color
                ),
                article: "17.2".into(),
            });
        }
        match game.play(m.color, m.mv) {
            Ok(outcome) => {
                if let Some(rep) = outcome.repetition {
                    let when = if rep.first_seen_after_move == 0 {
                        "at the start".to_string()
                    } else {
                        format!("after move {}", rep.first_seen_after_move)
                    };
                    findings.push(Finding {
                        move_number: number,
                        kind: FindingKind::Repetition,
                        reason: format!(
                            "{} recreates the whole-board position {when}",
                            describe_move(m.color, m.mv, rec.height)
                        ),
                        article: "6".into(),
                    });
                }
                if outcome.no_result {
                    findings.push(Finding {
                        move_number: number,
                        kind: FindingKind::NoResult,
                        reason: format!(
                            "{}: the same position with the same player to move has occurred three times since the last pass (triple ko, eternal life...): no result",
                            describe_move(m.color, m.mv, rec.height)
                        ),
                        article: "20.3".into(),
                    });
                }
            }
            Err(illegal) => {
                findings.push(Finding {
                    move_number: number,
                    kind: FindingKind::IllegalMove,
                    reason: format!(
                        "{}: {} — void, counts as a pass",
                        describe_move(m.color, m.mv, rec.height),
                        illegal.reason.describe()
                    ),
                    article: illegal.reason.article().to_string(),
                });
                game.void_move(&illegal);
            }
        }
        previous = Some((m.color, m.mv));
    }
    Ok(CheckReport { moves: rec.moves.len(), findings })
}

/// The replay of every game of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileCheck {
    /// Game trees found (read or not).
    pub games: usize,
    /// Moves replayed over all games.
    pub moves: usize,
    /// Findings of all games in file order; unreadable files and games give `ParseError`s
    /// with move number 0. In files with several games, reasons start with "game N: ".
    pub findings: Vec<Finding>,
}

fn parse_finding(err: &SgfError) -> Finding {
    Finding { move_number: 0, kind: FindingKind::ParseError, reason: err.to_string(), article: String::new() }
}

/// Reads and replays every game of a file's bytes; never fails (unreadable input is a finding).
pub fn check_bytes(bytes: &[u8]) -> FileCheck {
    let coll = match crate::read_collection(bytes) {
        Ok(c) => c,
        Err(e) => return FileCheck { games: 0, moves: 0, findings: vec![parse_finding(&e)] },
    };
    let games = coll.games();
    let several = games.len() > 1;
    let mut out = FileCheck { games: games.len(), ..FileCheck::default() };
    for (i, game) in games.into_iter().enumerate() {
        let result = game.and_then(|rec| check_game(&rec));
        let mut findings = match result {
            Ok(report) => {
                out.moves += report.moves;
                report.findings
            }
            Err(e) => vec![parse_finding(&e)],
        };
        if several {
            for f in &mut findings {
                f.reason = format!("game {}: {}", i + 1, f.reason);
            }
        }
        out.findings.extend(findings);
    }
    out
}
