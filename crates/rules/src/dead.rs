//! Which chains are dead at the end of a game. Life and death is decided by the players'
//! agreement (Art. 8), so this module only *suggests*: Benson's test finds chains that are
//! alive whatever the opponent does, and a simple enclosure heuristic proposes dead chains.

use crate::board::Board;
use crate::color::Color;
use crate::point::Point;
use crate::stone::Stone;

/// A suggestion of dead chains, for the players and the arbiter to confirm (never applied
/// automatically).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeadSuggestion {
    /// One point of each chain suggested dead.
    pub dead_chains: Vec<Point>,
    /// Every stone of those chains.
    pub dead_stones: Vec<Point>,
    /// Chains proven unconditionally alive (Benson), one point each.
    pub pass_alive_chains: Vec<Point>,
}

/// A chain's identity: its smallest point (stable, cheap to compare).
fn chain_key(board: &Board, p: Point) -> Point {
    board.chain(p).into_iter().min().unwrap_or(p)
}

/// Benson's algorithm: the chains of `color` that cannot be captured even if `color` always
/// passes. Returns one point (the smallest) of each such chain.
pub fn pass_alive_chains(board: &Board, color: Color) -> Vec<Point> {
    let w = usize::from(board.width());
    let slot = |p: Point| usize::from(p.row) * w + usize::from(p.col);
    // Chains of `color`.
    let mut chain_id = vec![usize::MAX; board.area()];
    let mut chains: Vec<Vec<Point>> = Vec::new();
    for p in board.points() {
        if board.get(p) == Stone::Of(color) && chain_id[slot(p)] == usize::MAX {
            let stones = board.chain(p);
            for &s in &stones {
                chain_id[slot(s)] = chains.len();
            }
            chains.push(stones);
        }
    }
    // Regions: maximal connected sets of points not holding a `color` stone.
    let mut region_id = vec![usize::MAX; board.area()];
    let mut regions: Vec<Vec<Point>> = Vec::new();
    for p in board.points() {
        if board.get(p) == Stone::Of(color) || region_id[slot(p)] != usize::MAX {
            continue;
        }
        let id = regions.len();
        let mut pts = vec![p];
        region_id[slot(p)] = id;
        let mut i = 0;
        while i < pts.len() {
            let q = pts[i];
            i += 1;
            for n in board.adjacent(q) {
                if board.get(n) != Stone::Of(color) && region_id[slot(n)] == usize::MAX {
                    region_id[slot(n)] = id;
                    pts.push(n);
                }
            }
        }
        regions.push(pts);
    }
    // For each region: the chains bordering it, and the chains to which it is vital (every
    // empty point of the region is a liberty of that chain).
    let mut borders: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
    let mut vital_to: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
    for (r, pts) in regions.iter().enumerate() {
        for &q in pts {
            for n in board.adjacent(q) {
                let c = chain_id[slot(n)];
                if c != usize::MAX && !borders[r].contains(&c) {
                    borders[r].push(c);
                }
            }
        }
        for &c in &borders[r] {
            let vital = pts
                .iter()
                .filter(|&&q| board.get(q) == Stone::Empty)
                .all(|&q| board.adjacent(q).any(|n| chain_id[slot(n)] == c));
            if vital {
                vital_to[r].push(c);
            }
        }
    }
    let mut chain_alive = vec![true; chains.len()];
    let mut region_healthy = vec![true; regions.len()];
    loop {
        let mut changed = false;
        // A chain needs two healthy regions vital to it.
        for (c, alive) in chain_alive.iter_mut().enumerate() {
            if !*alive {
                continue;
            }
            let vital = (0..regions.len()).filter(|&r| region_healthy[r] && vital_to[r].contains(&c)).count();
            if vital < 2 {
                *alive = false;
                changed = true;
            }
        }
        // A region is healthy only while every chain bordering it is still alive.
        for r in 0..regions.len() {
            if region_healthy[r] && borders[r].iter().any(|&c| !chain_alive[c]) {
                region_healthy[r] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    chains
        .iter()
        .zip(&chain_alive)
        .filter(|(_, &alive)| alive)
        .filter_map(|(stones, _)| stones.iter().min().copied())
        .collect()
}

/// Largest room (empty points) an enclosed group can have and still be presumed unable to
/// make two eyes; beyond it the heuristic leaves the group to the players.
const MAX_DEAD_ROOM: usize = 6;

/// Suggests dead chains: a chain that is not pass-alive is proposed dead when the area it can
/// reach through empty points and its own stones is small (at most [`MAX_DEAD_ROOM`] empty
/// points) and is enclosed by opponent stones of which at least one chain is pass-alive or larger
/// than the biggest of its own chains there.
pub fn suggest_dead(board: &Board) -> DeadSuggestion {
    let w = usize::from(board.width());
    let slot = |p: Point| usize::from(p.row) * w + usize::from(p.col);
    let alive_black = pass_alive_chains(board, Color::Black);
    let alive_white = pass_alive_chains(board, Color::White);
    let is_pass_alive = |p: Point, color: Color| {
        let key = chain_key(board, p);
        match color {
            Color::Black => alive_black.contains(&key),
            Color::White => alive_white.contains(&key),
        }
    };
    let mut suggestion =
        DeadSuggestion { pass_alive_chains: [alive_black.clone(), alive_white.clone()].concat(), ..Default::default() };
    let mut visited = vec![false; board.area()];
    for start in board.points() {
        let Stone::Of(color) = board.get(start) else { continue };
        if visited[slot(start)] || is_pass_alive(start, color) {
            continue;
        }
        // Flood through own stones and empty points.
        let mut area = vec![start];
        let mut in_area = vec![false; board.area()];
        in_area[slot(start)] = true;
        let mut i = 0;
        let (mut room, mut enclosers_strong, mut own_largest, mut enemy_largest) = (0usize, false, 0usize, 0usize);
        while i < area.len() {
            let q = area[i];
            i += 1;
            match board.get(q) {
                Stone::Empty => room += 1,
                Stone::Of(_) => own_largest = own_largest.max(board.chain(q).len()),
            }
            for n in board.adjacent(q) {
                match board.get(n) {
                    Stone::Of(c) if c == color.opponent() => {
                        enemy_largest = enemy_largest.max(board.chain(n).len());
                        enclosers_strong |= is_pass_alive(n, c);
                    }
                    _ if !in_area[slot(n)] => {
                        in_area[slot(n)] = true;
                        area.push(n);
                    }
                    _ => {}
                }
            }
        }
        let own_alive_inside = area.iter().any(|&q| board.get(q) == Stone::Of(color) && is_pass_alive(q, color));
        for &q in &area {
            if board.get(q) == Stone::Of(color) {
                visited[slot(q)] = true;
            }
        }
        let dead = !own_alive_inside && room <= MAX_DEAD_ROOM && (enclosers_strong || enemy_largest > own_largest);
        if dead {
            let mut seen_chains: Vec<Point> = Vec::new();
            for &q in &area {
                if board.get(q) == Stone::Of(color) {
                    let key = chain_key(board, q);
                    if !seen_chains.contains(&key) {
                        seen_chains.push(key);
                    }
                    suggestion.dead_stones.push(q);
                }
            }
            suggestion.dead_chains.extend(seen_chains);
        }
    }
    suggestion.dead_chains.sort();
    suggestion.dead_stones.sort();
    suggestion
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benson_finds_a_two_eyed_group_and_not_a_one_eyed_one() {
        let b = Board::from_rows(&[
            ".X.X.O...", //
            "XXXXXO...", //
            "OOOOOO...", //
            ".........", //
            ".........",
        ])
        .expect("board");
        // The black wall has two real eyes (A5, C5); E5 is open to White's side.
        let alive = pass_alive_chains(&b, Color::Black);
        assert_eq!(alive.len(), 1);
        assert_eq!(chain_key(&b, Point::new(1, 0)), alive[0]);
        let one_eye = Board::from_rows(&[".XX.O", "XXXOO", "OOOO.", ".....", "....."]).expect("board");
        assert!(pass_alive_chains(&one_eye, Color::Black).is_empty());
    }

    #[test]
    fn suggests_a_small_enclosed_group_dead_and_keeps_living_groups() {
        let b = Board::from_rows(&[
            ".O.O.X...", //
            "OOOOOX...", //
            "XXXXXX...", //
            "..XXX....", //
            "..XO.X...", //
            "..XXX....", //
            ".........",
        ])
        .expect("board");
        let s = suggest_dead(&b);
        // The lone white stone inside Black's area is dead; the white corner group has two eyes.
        assert_eq!(s.dead_stones, vec![Point::new(3, 4)]);
        assert!(s.pass_alive_chains.contains(&Point::new(0, 1)));
    }
}
