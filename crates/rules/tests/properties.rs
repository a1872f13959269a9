//! Invariants of the rules core over random games: stones are conserved through captures, the
//! incremental hash equals a recompute, the chains agree with a slow liberty count, and area
//! counting always shares out the whole board.

#![allow(clippy::expect_used)] // set-up failures in tests should fail loudly

use proptest::prelude::*;
use tengen_rules::{count_area, Board, ByColor, Color, Game, Move, Point, Stone};

/// Plays random (col, row) attempts; illegal ones are skipped, as a referee would refuse them.
fn random_game(size: u8, attempts: &[(u8, u8)]) -> (Game, Vec<(Game, Color, Point, usize)>) {
    let mut game = Game::new(size, size).expect("size");
    let mut log = Vec::new();
    for &(c, r) in attempts {
        let p = Point::new(c % size, r % size);
        let color = game.to_move();
        let before = game.clone();
        if let Ok(outcome) = game.play(color, Move::Place(p)) {
            log.push((before, color, p, outcome.captured.len()));
        }
    }
    (game, log)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn stones_are_conserved_through_captures(size in 2u8..=9, attempts in prop::collection::vec((0u8..19, 0u8..19), 1..250)) {
        let (_, log) = random_game(size, &attempts);
        for (before, color, _p, captured) in log {
            let ByColor { black: b0, white: w0 } = before.board().stone_counts();
            let mut after = before.clone();
            after.play(color, Move::Place(_p)).expect("was legal");
            let ByColor { black: b1, white: w1 } = after.board().stone_counts();
            match color {
                Color::Black => prop_assert_eq!((b1, w1 + captured), (b0 + 1, w0)),
                Color::White => prop_assert_eq!((w1, b1 + captured), (w0 + 1, b0)),
            }
        }
    }

    #[test]
    fn incremental_hash_equals_recompute_and_no_chain_is_left_without_liberties(
        size in 2u8..=19, attempts in prop::collection::vec((0u8..19, 0u8..19), 1..400)
    ) {
        let (game, _) = random_game(size, &attempts);
        let board = game.board();
        prop_assert_eq!(board.hash(), board.recompute_hash());
        prop_assert!(board.chains_without_liberties().is_empty());
        // Rebuilding from the rows gives the same stones and the same hash.
        let rebuilt = Board::from_rows(&board.rows()).expect("a legal position rebuilds");
        prop_assert_eq!(&rebuilt, board);
        prop_assert_eq!(rebuilt.hash(), board.hash());
        // Fast legality agrees with a slow definition of suicide.
        for p in board.points() {
            if board.get(p) != Stone::Empty { continue; }
            for color in [Color::Black, Color::White] {
                let slow = slow_is_legal(board, color, p);
                prop_assert_eq!(board.is_legal_placement(color, p), slow, "{:?} at {:?}\n{:?}", color, p, board);
            }
        }
    }

    #[test]
    fn black_and_white_areas_share_out_the_whole_board(
        size in 2u8..=13, attempts in prop::collection::vec((0u8..19, 0u8..19), 1..300), dead_pick in 0usize..50
    ) {
        let (game, _) = random_game(size, &attempts);
        let board = game.board();
        let stones: Vec<Point> = board.points().filter(|&p| board.get(p) != Stone::Empty).collect();
        let dead: Vec<Point> = stones.get(dead_pick % stones.len().max(1)).copied().into_iter().collect();
        let count = count_area(board, &dead);
        prop_assert!((count.black_area() + count.white_area() - board.area() as f64).abs() < 1e-9);
    }
}

/// Suicide by definition: after placing and removing opponent chains without liberties, the
/// new stone's chain must have a liberty.
fn slow_is_legal(board: &Board, color: Color, p: Point) -> bool {
    let mut rows: Vec<Vec<char>> = board.rows().iter().map(|r| r.chars().collect()).collect();
    let mine = if color == Color::Black { 'X' } else { 'O' };
    let theirs = if color == Color::Black { 'O' } else { 'X' };
    rows[usize::from(p.row)][usize::from(p.col)] = mine;
    let (w, h) = (i32::from(board.width()), i32::from(board.height()));
    let has_liberty = |rows: &Vec<Vec<char>>, start: (i32, i32)| {
        let colour = rows[start.1 as usize][start.0 as usize];
        let mut seen = vec![start];
        let mut i = 0;
        while i < seen.len() {
            let (c, r) = seen[i];
            i += 1;
            for (dc, dr) in [(0, 1), (1, 0), (0, -1), (-1, 0)] {
                let (nc, nr) = (c + dc, r + dr);
                if nc < 0 || nr < 0 || nc >= w || nr >= h {
                    continue;
                }
                let v = rows[nr as usize][nc as usize];
                if v == '.' {
                    return true;
                }
                if v == colour && !seen.contains(&(nc, nr)) {
                    seen.push((nc, nr));
                }
            }
        }
        false
    };
    let (pc, pr) = (i32::from(p.col), i32::from(p.row));
    let captures = [(0, 1), (1, 0), (0, -1), (-1, 0)].iter().any(|(dc, dr)| {
        let (nc, nr) = (pc + dc, pr + dr);
        nc >= 0
            && nr >= 0
            && nc < w
            && nr < h
            && rows[nr as usize][nc as usize] == theirs
            && !has_liberty(&rows, (nc, nr))
    });
    captures || has_liberty(&rows, (pc, pr))
}
