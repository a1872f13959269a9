//! The real move-by-move games of `imago-tests` (ground-truth grids of photographed games): fed
//! through the referee frame by frame, every single-stone step must be the right move and no
//! infraction may be raised. Jumps between non-consecutive frames (t2 011→050, …) are many
//! moves at once: the arbiter wants a resync there (the position adopted, the record marked
//! incomplete), never a string of invented infractions.
//!
//! Reads `../shared/datasets/photos/imago-tests`; prints one line and passes when it is absent.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};

use tengen_referee::{Event, EventKind, Observation, Referee, RefereeConfig, Status};
use tengen_rules::{Color, Grid, Point, Stone};

fn dataset() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/photos/imago-tests");
    dir.is_dir().then_some(dir)
}

fn read_grid(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// (name, grid) of a sequence, sorted by frame name, with the excluded frames left out.
fn sequence(dir: &Path, seq: &str, suffix: &str) -> Vec<(String, Vec<String>)> {
    let mut files = Vec::new();
    for sub in [dir.join(seq), dir.join(seq).join("skip")] {
        let Ok(entries) = std::fs::read_dir(&sub) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(suffix) {
                files.push((name, e.path()));
            }
        }
    }
    // README: t2_053 and t2_054 are mislabelled (stones moved that the photos show unchanged).
    files.retain(|(n, _)| !n.starts_with("t2_053") && !n.starts_with("t2_054"));
    files.sort();
    files.into_iter().map(|(n, p)| (n, read_grid(&p))).collect()
}

struct Score {
    steps: usize,
    single_moves: usize,
    moves_right: usize,
    jumps: usize,
    resyncs: usize,
    false_infractions: usize,
}

fn run(seq: &[(String, Vec<String>)]) -> Score {
    let mut referee = Referee::new(RefereeConfig::default());
    let mut t = 0.0;
    let mut score = Score { steps: 0, single_moves: 0, moves_right: 0, jumps: 0, resyncs: 0, false_infractions: 0 };
    let mut previous: Option<Grid> = None;
    for (name, rows) in seq {
        let grid = Grid::<Stone>::from_rows(rows).unwrap_or_else(|_| panic!("{name}: not a 19x19 grid"));
        // A hand frame, then the photo's reading repeated as a camera would see it.
        let mut events: Vec<Event> = Vec::new();
        t += 1.0;
        let hand: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(r, row)| if (8..11).contains(&r) { "?".repeat(19) } else { row.clone() })
            .collect();
        events.extend(referee.observe(&Observation::from_rows(t, &hand, true).expect("rows")));
        for k in 0..5 {
            t += 0.5;
            let mut obs = Observation::from_rows(t, rows, false).expect("rows");
            obs.frame_ref = Some(format!("{name}#{k}"));
            events.extend(referee.observe(&obs));
        }
        let inf: Vec<&Event> =
            events.iter().filter(|e| e.kind.is_infraction() && e.status == Status::Suspected).collect();
        for e in &inf {
            eprintln!("{name}: false infraction {:?}: {}", e.kind, e.message.en);
        }
        score.false_infractions += inf.len();
        if let Some(prev) = &previous {
            score.steps += 1;
            let diff = prev.differences(&grid);
            let added: Vec<(Point, Color)> = diff
                .iter()
                .filter_map(|&p| match (prev.get(p), grid.get(p)) {
                    (Stone::Empty, Stone::Of(c)) => Some((p, c)),
                    _ => None,
                })
                .collect();
            let moves: Vec<(Point, Color)> = events
                .iter()
                .filter(|e| e.kind == EventKind::Move)
                .filter_map(|e| Some((e.points.first()?.point, e.side?)))
                .collect();
            if diff.len() == 1 && added.len() == 1 {
                score.single_moves += 1;
                if moves == added {
                    score.moves_right += 1;
                } else {
                    eprintln!("{name}: expected {added:?}, referee said {moves:?}");
                }
            } else if !diff.is_empty() {
                score.jumps += 1;
                if events.iter().any(|e| e.kind == EventKind::Resync) {
                    score.resyncs += 1;
                } else if moves.len() == added.len() {
                    // A short jump explained move by move also fits.
                    score.resyncs += 1;
                } else {
                    eprintln!("{name}: jump of {} changes neither resynced nor explained", diff.len());
                }
            }
        }
        let state = referee.state();
        assert_eq!(
            Grid::from_rows(&state.physical).ok(),
            Some(grid.clone()),
            "{name}: the physical board follows the photos"
        );
        previous = Some(grid);
    }
    score
}

#[test]
fn imago_sequences_give_the_right_moves_and_no_false_infraction() {
    let Some(dir) = dataset() else {
        println!("imago-tests dataset absent (../shared/datasets/photos/imago-tests): skipped");
        return;
    };
    // t1: the EXIF tag flips mid-sequence, so diff the stored pixel order (README).
    let sets = [("t1", ".grid.raw.txt"), ("t2", ".jpg.grid.txt"), ("t3", ".jpg.grid.txt")];
    let mut total = Score { steps: 0, single_moves: 0, moves_right: 0, jumps: 0, resyncs: 0, false_infractions: 0 };
    for (seq, suffix) in sets {
        let frames = sequence(&dir, seq, suffix);
        assert!(frames.len() >= 10, "{seq}: {} frames", frames.len());
        let s = run(&frames);
        println!(
            "imago {seq}: {} frames, {} steps: {}/{} single moves right, {} jumps ({} resynced or explained), {} false infractions",
            frames.len(),
            s.steps,
            s.moves_right,
            s.single_moves,
            s.jumps,
            s.resyncs,
            s.false_infractions
        );
        total.steps += s.steps;
        total.single_moves += s.single_moves;
        total.moves_right += s.moves_right;
        total.jumps += s.jumps;
        total.resyncs += s.resyncs;
        total.false_infractions += s.false_infractions;
    }
    println!(
        "imago total: {}/{} moves right, {}/{} jumps resynced, {} false infractions",
        total.moves_right, total.single_moves, total.resyncs, total.jumps, total.false_infractions
    );
    assert_eq!(total.moves_right, total.single_moves);
    assert_eq!(total.resyncs, total.jumps);
    assert_eq!(total.false_infractions, 0);
}
