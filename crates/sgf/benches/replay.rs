//! Replay benchmark: moves per second of the rules core over the real games of
//! ../shared/datasets/games/ai (parse excluded: every record is read first, then only the replay
//! — play, captures, ko check, repetition check — is timed), side by side in the same run with the
//! `goban` crate replaying the same moves.
//!
//! Run: `cargo bench -p tengen-sgf --bench replay` (one core; prints one line and exits when the
//! data is absent).

use std::hint::black_box;
use std::time::{Duration, Instant};

use goban::rules::game::Game as PeerGame;
use goban::rules::{GobanSizes, IllegalRules, Move as PeerMove, Rule, CHINESE};
use tengen_rules::{Game, Move};
use tengen_sgf::{check_game, read_collection, GameRecord};

#[path = "../tests/common/mod.rs"]
mod common;
use common::sgf_files;

const ROUNDS: usize = 5;

/// Best of `ROUNDS` timings of `f`, which returns the number of moves it replayed.
fn best_of(mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut moves = 0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        moves = black_box(f());
        best = best.min(start.elapsed());
    }
    (best, moves)
}

/// Tengen's replay: what `tengen sgf check` does per move (play, captures, ko, repetition and
/// no-result checks; an illegal move is voided as a pass).
fn replay_tengen(games: &[&GameRecord]) -> usize {
    let mut moves = 0;
    let mut flags = 0usize;
    for rec in games {
        let Ok(mut game): Result<Game, _> = rec.start_game() else { continue };
        for m in &rec.moves {
            match game.play(m.color, m.mv) {
                Ok(outcome) => flags += usize::from(outcome.repetition.is_some()) + usize::from(outcome.no_result),
                Err(illegal) => {
                    game.void_move(&illegal);
                }
            }
        }
        moves += rec.moves.len();
    }
    black_box(flags);
    moves
}

/// The peer: `goban` 0.18 with `try_play` (legality checked) under the given rule.
fn replay_goban(games: &[&GameRecord], rule: Rule, refusals: &mut Vec<(usize, Move)>) -> usize {
    let mut moves = 0;
    for rec in games {
        let mut game = PeerGame::new(GobanSizes::Nineteen, rule);
        for (i, m) in rec.moves.iter().enumerate() {
            if game.passes() >= 2 {
                game.resume();
            }
            let mv = match m.mv {
                Move::Place(p) => PeerMove::Play(p.row, p.col),
                Move::Pass => PeerMove::Pass,
            };
            // Every move of the common set is legal. goban refuses a few (it sets a ko point after
            // any single-stone capture, even when the capturing stone is not itself in atari, and
            // keeps it across a pass): count them and place the stone unchecked, so both engines
            // replay the same sequence.
            if game.try_play(mv).is_err() {
                refusals.push((i + 1, m.mv));
                game.play(mv);
            }
        }
        moves += rec.moves.len();
        black_box(game.last_hash());
    }
    moves
}

fn rate(moves: usize, t: Duration) -> f64 {
    moves as f64 / t.as_secs_f64()
}

fn main() -> anyhow::Result<()> {
    let dir = common::ai_dir();
    if !dir.is_dir() {
        println!("SKIP: {} absent", dir.display());
        return Ok(());
    }
    let files = sgf_files(&dir);
    let contents = files.iter().map(std::fs::read).collect::<Result<Vec<_>, _>>()?;
    let bytes_read: usize = contents.iter().map(Vec::len).sum();
    let start = Instant::now();
    let mut records = Vec::new();
    for bytes in &contents {
        let coll = read_collection(bytes)?;
        for rec in coll.games() {
            records.push(rec?);
        }
    }
    let parse = start.elapsed();
    println!(
        "parsed {} files ({:.1} MB, already in memory) into {} games in {:.3} s ({:.1} MB/s; not part of the replay figures)",
        files.len(),
        bytes_read as f64 / 1e6,
        records.len(),
        parse.as_secs_f64(),
        bytes_read as f64 / 1e6 / parse.as_secs_f64()
    );

    let all: Vec<&GameRecord> = records.iter().collect();
    // The common set both engines can replay move for move: 19×19, no setup, strictly
    // alternating, no illegal move and no repetition (goban refuses superko moves).
    let common: Vec<&GameRecord> = records
        .iter()
        .filter(|r| r.width == 19 && r.height == 19 && r.setup_black.is_empty() && r.setup_white.is_empty())
        .filter(|r| {
            r.first_player.is_none() || r.moves.first().map(|m| Some(m.color) == r.first_player).unwrap_or(true)
        })
        .filter(|r| r.moves.first().is_none_or(|m| m.color == tengen_rules::Color::Black))
        .filter(|r| check_game(r).is_ok_and(|rep| rep.findings.is_empty()))
        .collect();

    // Profiling aid: REPLAY_PROFILE=N replays all games N times with tengen only.
    if let Some(rounds) = std::env::var("REPLAY_PROFILE").ok().and_then(|v| v.parse::<usize>().ok()) {
        let start = Instant::now();
        let mut moves = 0;
        for _ in 0..rounds {
            moves += replay_tengen(&all);
        }
        println!("profile: {:.2} M moves/s", rate(moves, start.elapsed()) / 1e6);
        return Ok(());
    }
    let (t_all, m_all) = best_of(|| replay_tengen(&all));
    let (t_common, m_common) = best_of(|| replay_tengen(&common));
    let basic_ko =
        Rule { komi: 7.5, flag_illegal: IllegalRules::KO | IllegalRules::SUICIDE, flag_score: CHINESE.flag_score };
    let mut refused_basic = Vec::new();
    let mut refused_chinese = Vec::new();
    let (t_goban_basic, _) = best_of(|| {
        refused_basic.clear();
        replay_goban(&common, basic_ko, &mut refused_basic)
    });
    let (t_goban_chinese, _) = best_of(|| {
        refused_chinese.clear();
        replay_goban(&common, CHINESE, &mut refused_chinese)
    });

    println!("best of {ROUNDS} rounds, one thread:");
    println!(
        "tengen-rules, all {} games:            {:>10} moves in {:.3} s = {:>6.2} M moves/s",
        all.len(),
        m_all,
        t_all.as_secs_f64(),
        rate(m_all, t_all) / 1e6
    );
    println!(
        "tengen-rules, common {} games:         {:>10} moves in {:.3} s = {:>6.2} M moves/s",
        common.len(),
        m_common,
        t_common.as_secs_f64(),
        rate(m_common, t_common) / 1e6
    );
    println!(
        "goban 0.18 (ko + suicide), common:      {:>10} moves in {:.3} s = {:>6.2} M moves/s",
        m_common,
        t_goban_basic.as_secs_f64(),
        rate(m_common, t_goban_basic) / 1e6
    );
    println!(
        "goban 0.18 (CHINESE: + superko), common: {:>9} moves in {:.3} s = {:>6.2} M moves/s",
        m_common,
        t_goban_chinese.as_secs_f64(),
        rate(m_common, t_goban_chinese) / 1e6
    );
    println!(
        "goban refused {} (ko + suicide) and {} (CHINESE) legal moves of the common set (false ko after a plain single-stone capture); they were placed unchecked",
        refused_basic.len(),
        refused_chinese.len()
    );
    println!(
        "ratio tengen / goban: {:.2}x vs ko+suicide, {:.2}x vs CHINESE (ko + superko + suicide; tengen flags repetitions instead of refusing them)",
        t_goban_basic.as_secs_f64() / t_common.as_secs_f64(),
        t_goban_chinese.as_secs_f64() / t_common.as_secs_f64()
    );
    Ok(())
}
