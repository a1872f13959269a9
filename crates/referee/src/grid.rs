//! The 19×19 grid of stones the referee compares: physical (seen) and legal (ruled) boards.

use serde::{Deserialize, Serialize};
use tengen_rules::{Board, Color, Point, Stone};

/// Lines on a tournament board.
pub const SIZE: usize = 19;
/// Intersections on a tournament board.
pub const POINTS: usize = SIZE * SIZE;

/// A point in both notations people and records use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointRef {
    /// Human notation, letters without I, row 1 at the bottom: "Q16".
    pub human: String,
    /// SGF notation, from the top-left: "pd".
    pub sgf: String,
}

impl PointRef {
    /// Both notations of a point on the 19×19 board.
    pub fn of(p: Point) -> Self {
        PointRef { human: p.to_human(SIZE as u8), sgf: p.to_sgf() }
    }
}

/// Index of a point in a row-major 361-cell array.
#[inline]
pub fn index(p: Point) -> usize {
    usize::from(p.row) * SIZE + usize::from(p.col)
}

/// The point at a row-major index.
#[inline]
pub fn point_at(i: usize) -> Point {
    Point::new((i % SIZE) as u8, (i / SIZE) as u8)
}

/// All 361 points, row by row from the top.
pub fn all_points() -> impl Iterator<Item = Point> {
    (0..POINTS).map(point_at)
}

/// Stones on a 19×19 board, without chains or rules: what a camera saw or what the rules say.
#[derive(Clone, PartialEq, Eq)]
pub struct Grid {
    cells: [Stone; POINTS],
}

impl std::fmt::Debug for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for row in self.rows() {
            writeln!(f, "{row}")?;
        }
        Ok(())
    }
}

impl Default for Grid {
    fn default() -> Self {
        Grid { cells: [Stone::Empty; POINTS] }
    }
}

/// The character a stone is written with in grid rows: `.` empty, `X` black, `O` white.
pub fn stone_char(s: Stone) -> char {
    match s {
        Stone::Empty => '.',
        Stone::Of(Color::Black) => 'X',
        Stone::Of(Color::White) => 'O',
    }
}

impl Grid {
    /// An empty grid.
    pub fn empty() -> Self {
        Grid::default()
    }

    /// The stones of a rules board (must be 19×19; other sizes leave the rest empty).
    pub fn from_board(board: &Board) -> Self {
        let mut g = Grid::empty();
        for p in board.points() {
            if usize::from(p.col) < SIZE && usize::from(p.row) < SIZE {
                g.set(p, board.get(p));
            }
        }
        g
    }

    /// A grid from 19 rows of `.XO` (also `+` empty, `B`/`W`); `None` when malformed.
    pub fn from_rows<S: AsRef<str>>(rows: &[S]) -> Option<Self> {
        if rows.len() != SIZE {
            return None;
        }
        let mut g = Grid::empty();
        for (r, line) in rows.iter().enumerate() {
            let chars: Vec<char> = line.as_ref().chars().collect();
            if chars.len() != SIZE {
                return None;
            }
            for (c, ch) in chars.into_iter().enumerate() {
                let s = match ch {
                    '.' | '+' => Stone::Empty,
                    'X' | 'x' | 'B' | 'b' => Stone::Of(Color::Black),
                    'O' | 'o' | 'W' | 'w' => Stone::Of(Color::White),
                    _ => return None,
                };
                g.set(Point::new(c as u8, r as u8), s);
            }
        }
        Some(g)
    }

    /// What stands on a point.
    #[inline]
    pub fn get(&self, p: Point) -> Stone {
        self.cells[index(p)]
    }

    /// Puts a stone (or emptiness) on a point.
    #[inline]
    pub fn set(&mut self, p: Point, s: Stone) {
        self.cells[index(p)] = s;
    }

    /// Rows of `.XO`, top row first.
    pub fn rows(&self) -> Vec<String> {
        (0..SIZE).map(|r| (0..SIZE).map(|c| stone_char(self.cells[r * SIZE + c])).collect()).collect()
    }

    /// Stones of each colour: (black, white).
    pub fn counts(&self) -> (usize, usize) {
        let b = self.cells.iter().filter(|s| **s == Stone::Of(Color::Black)).count();
        let w = self.cells.iter().filter(|s| **s == Stone::Of(Color::White)).count();
        (b, w)
    }

    /// Whether no stone is on the board.
    pub fn is_empty(&self) -> bool {
        self.cells.iter().all(|s| *s == Stone::Empty)
    }

    /// Points where the two grids differ.
    pub fn differences(&self, other: &Grid) -> Vec<Point> {
        all_points().filter(|&p| self.get(p) != other.get(p)).collect()
    }

    /// A rules board with these stones, after removing chains that have no liberty (stones a
    /// camera can see but a legal position cannot hold); returns the board and the removed points.
    pub fn to_legal_board(&self) -> (Board, Vec<Point>) {
        let mut grid = self.clone();
        let mut removed = Vec::new();
        loop {
            let dead = chains_without_liberties(&grid);
            if dead.is_empty() {
                break;
            }
            for p in dead {
                grid.set(p, Stone::Empty);
                removed.push(p);
            }
        }
        let board = match Board::from_rows(&grid.rows()) {
            Some(b) => b,
            // Unreachable: every chain left has a liberty and the rows are well formed.
            None => Board::new(SIZE as u8, SIZE as u8).unwrap_or_else(unreachable_board),
        };
        (board, removed)
    }
}

#[allow(clippy::panic)]
fn unreachable_board() -> Board {
    panic!("a 19x19 board is always supported")
}

/// Every stone that belongs to a chain without liberties on this grid (flood fill).
pub fn chains_without_liberties(grid: &Grid) -> Vec<Point> {
    let mut seen = [false; POINTS];
    let mut out = Vec::new();
    for start in all_points() {
        let Stone::Of(color) = grid.get(start) else { continue };
        if seen[index(start)] {
            continue;
        }
        let mut chain = vec![start];
        seen[index(start)] = true;
        let mut has_liberty = false;
        let mut i = 0;
        while i < chain.len() {
            let q = chain[i];
            i += 1;
            for n in neighbours(q) {
                match grid.get(n) {
                    Stone::Empty => has_liberty = true,
                    Stone::Of(c) if c == color && !seen[index(n)] => {
                        seen[index(n)] = true;
                        chain.push(n);
                    }
                    Stone::Of(_) => {}
                }
            }
        }
        if !has_liberty {
            out.extend(chain);
        }
    }
    out
}

/// Orthogonal neighbours on the 19×19 board.
pub fn neighbours(p: Point) -> impl Iterator<Item = Point> {
    let (c, r) = (i16::from(p.col), i16::from(p.row));
    [(c, r - 1), (c - 1, r), (c + 1, r), (c, r + 1)]
        .into_iter()
        .filter(|&(c, r)| c >= 0 && r >= 0 && c < SIZE as i16 && r < SIZE as i16)
        .map(|(c, r)| Point::new(c as u8, r as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_dead_chains_are_removed_for_the_legal_board() {
        let mut rows = vec![".".repeat(SIZE); SIZE];
        rows[0] = format!("XO{}", ".".repeat(SIZE - 2));
        rows[1] = format!("O{}", ".".repeat(SIZE - 1));
        let g = Grid::from_rows(&rows).expect("grid");
        assert_eq!(g.rows(), rows);
        assert_eq!(chains_without_liberties(&g), vec![Point::new(0, 0)]);
        let (board, removed) = g.to_legal_board();
        assert_eq!(removed, vec![Point::new(0, 0)]);
        assert_eq!(board.get(Point::new(0, 0)), Stone::Empty);
        assert_eq!(board.get(Point::new(1, 0)), Stone::Of(Color::White));
        assert_eq!(PointRef::of(Point::new(15, 3)), PointRef { human: "Q16".into(), sgf: "pd".into() });
    }
}
