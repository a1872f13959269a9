//! [`Grid`]: one value for every point of the tournament board, without chains or rules — the
//! stones a camera saw, the readings of one frame, the legal position as the dashboard draws
//! it. Row-major from the top-left point as seen (SGF orientation).

use std::fmt;

use crate::board::Board;
use crate::board_text::{format_rows, parse_rows, BoardChar, BoardTextError};
use crate::color::ByColor;
use crate::point::{CoordError, Point};
use crate::size::{BOARD_LINES, BOARD_POINTS};
use crate::stone::Stone;

impl Point {
    /// Index of a point of the tournament board in a row-major array of its 361 points.
    #[inline]
    pub fn index(self) -> usize {
        usize::from(self.row) * BOARD_LINES + usize::from(self.col)
    }

    /// The point of the tournament board at a row-major index (`i` below 361).
    #[inline]
    pub fn from_index(i: usize) -> Point {
        Point::new((i % BOARD_LINES) as u8, (i / BOARD_LINES) as u8)
    }

    /// The people's form on the tournament board, e.g. `Q16`.
    pub fn human(self) -> String {
        self.to_human(BOARD_LINES as u8)
    }

    /// Reads either notation (`pd` or `Q16`) as a point of the tournament board.
    pub fn parse_on_board(text: &str) -> Result<Point, CoordError> {
        Point::parse(text, BOARD_LINES as u8, BOARD_LINES as u8)
    }

    /// All 361 points of the tournament board, row by row from the top.
    pub fn all() -> impl Iterator<Item = Point> {
        (0..BOARD_POINTS).map(Point::from_index)
    }

    /// The orthogonal neighbours of a point on the tournament board.
    pub fn neighbours(self) -> impl Iterator<Item = Point> {
        let (c, r) = (i16::from(self.col), i16::from(self.row));
        let last = BOARD_LINES as i16 - 1;
        [(c, r - 1), (c - 1, r), (c + 1, r), (c, r + 1)]
            .into_iter()
            .filter(move |&(c, r)| (0..=last).contains(&c) && (0..=last).contains(&r))
            .map(|(c, r)| Point::new(c as u8, r as u8))
    }
}

/// A value for each of the 361 points of the tournament board.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Grid<T = Stone> {
    cells: [T; BOARD_POINTS],
}

impl<T: Copy + Default> Default for Grid<T> {
    fn default() -> Self {
        Grid { cells: [T::default(); BOARD_POINTS] }
    }
}

impl<T: Copy> Grid<T> {
    /// Every point holding `value`.
    pub fn filled(value: T) -> Self {
        Grid { cells: [value; BOARD_POINTS] }
    }

    /// Each point's value computed from the point.
    pub fn from_fn(mut value: impl FnMut(Point) -> T) -> Self {
        Grid { cells: std::array::from_fn(|i| value(Point::from_index(i))) }
    }

    /// The value at a point (`p` must lie on the 19×19 board).
    #[inline]
    pub fn get(&self, p: Point) -> T {
        self.cells[p.index()]
    }

    /// Sets the value at a point.
    #[inline]
    pub fn set(&mut self, p: Point, value: T) {
        self.cells[p.index()] = value;
    }

    /// The values row-major from the top-left.
    #[inline]
    pub fn cells(&self) -> &[T; BOARD_POINTS] {
        &self.cells
    }

    /// Each point with its value, row by row from the top.
    pub fn iter(&self) -> impl Iterator<Item = (Point, T)> + '_ {
        self.cells.iter().enumerate().map(|(i, &v)| (Point::from_index(i), v))
    }

    /// The grid with every value transformed.
    pub fn map<U: Copy>(&self, mut f: impl FnMut(T) -> U) -> Grid<U> {
        Grid { cells: std::array::from_fn(|i| f(self.cells[i])) }
    }

    /// Points where the two grids differ.
    pub fn differences(&self, other: &Grid<T>) -> Vec<Point>
    where
        T: PartialEq,
    {
        self.iter().filter(|&(p, v)| other.get(p) != v).map(|(p, _)| p).collect()
    }
}

impl<T: Copy + BoardChar> Grid<T> {
    /// A grid from 19 rows of board text ([`crate::board_text`]), top row first.
    pub fn from_rows<S: AsRef<str>>(rows: &[S]) -> Result<Self, BoardTextError> {
        let cells = parse_rows::<T, S>(rows, BOARD_LINES, BOARD_LINES)?;
        Ok(Grid::from_fn(|p| cells[p.index()]))
    }

    /// The grid as 19 rows of board text, top row first.
    pub fn rows(&self) -> Vec<String> {
        format_rows(&self.cells, BOARD_LINES)
    }
}

impl<T: Copy + BoardChar> fmt::Debug for Grid<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in self.rows() {
            writeln!(f, "{row}")?;
        }
        Ok(())
    }
}

impl Grid<Stone> {
    /// An empty board.
    pub fn empty() -> Self {
        Grid::default()
    }

    /// The stones of a rules board (19×19; a smaller board fills the top-left corner).
    pub fn from_board(board: &Board) -> Self {
        Grid::from_fn(|p| board.get(p))
    }

    /// Stones of each colour.
    pub fn counts(&self) -> ByColor<usize> {
        ByColor::new_with(|c| self.cells.iter().filter(|&&s| s == Stone::Of(c)).count())
    }

    /// Whether no stone is on the board.
    pub fn is_empty(&self) -> bool {
        self.cells.iter().all(|&s| s == Stone::Empty)
    }

    /// Every stone that belongs to a chain without liberties (a flood fill: what a camera can
    /// see on a board and a legal position cannot hold).
    pub fn chains_without_liberties(&self) -> Vec<Point> {
        let mut seen = [false; BOARD_POINTS];
        let mut out = Vec::new();
        for start in Point::all() {
            let Stone::Of(color) = self.get(start) else { continue };
            if seen[start.index()] {
                continue;
            }
            let mut chain = vec![start];
            seen[start.index()] = true;
            let mut has_liberty = false;
            let mut i = 0;
            while i < chain.len() {
                let q = chain[i];
                i += 1;
                for n in q.neighbours() {
                    match self.get(n) {
                        Stone::Empty => has_liberty = true,
                        Stone::Of(c) if c == color && !seen[n.index()] => {
                            seen[n.index()] = true;
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

    /// A rules board with these stones, after removing chains that have no liberty; returns
    /// the board and the removed points.
    pub fn to_legal_board(&self) -> (Board, Vec<Point>) {
        let mut grid = self.clone();
        let mut removed = Vec::new();
        loop {
            let dead = grid.chains_without_liberties();
            if dead.is_empty() {
                break;
            }
            for p in dead {
                grid.set(p, Stone::Empty);
                removed.push(p);
            }
        }
        (Board::from_stones(&grid), removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PointState;

    #[test]
    fn rows_round_trip_and_dead_chains_are_removed_for_the_legal_board() {
        let mut rows = vec![".".repeat(BOARD_LINES); BOARD_LINES];
        rows[0] = format!("XO{}", ".".repeat(BOARD_LINES - 2));
        rows[1] = format!("O{}", ".".repeat(BOARD_LINES - 1));
        let g: Grid = Grid::from_rows(&rows).expect("grid");
        assert_eq!(g.rows(), rows);
        assert_eq!(g.counts(), ByColor::new(1, 2));
        assert_eq!(g.chains_without_liberties(), vec![Point::new(0, 0)]);
        let (board, removed) = g.to_legal_board();
        assert_eq!(removed, vec![Point::new(0, 0)]);
        assert_eq!(board.get(Point::new(0, 0)), Stone::Empty);
        assert_eq!(board.get(Point::new(1, 0)), Stone::WHITE);
        let readings: Grid<PointState> = g.map(PointState::from);
        assert_eq!(readings.get(Point::new(1, 0)), PointState::White);
        assert_eq!(Point::from_index(Point::new(15, 3).index()), Point::new(15, 3));
        assert_eq!(Point::new(0, 0).neighbours().count(), 2);
    }
}
