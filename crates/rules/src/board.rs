//! The physical position: stones on a padded array, chains as circular lists with
//! pseudo-liberty counts, captures, and an incremental Zobrist hash.
//!
//! Pseudo-liberties count (stone, empty neighbour) pairs rather than distinct empty points:
//! a chain has no liberty exactly when the count is zero, and it updates in O(1) per stone,
//! which is what makes play + capture fast.

use crate::board_text::{format_rows, parse_rows};
use crate::color::{ByColor, Color};
use crate::grid::Grid;
use crate::point::Point;
use crate::size::MAX_BOARD_SIZE;
use crate::stone::Stone;
use crate::zobrist::{BLACK_KEYS, WHITE_KEYS};

/// Cells in the padded array: a 19-wide board uses a stride of 20 (one shared border column)
/// and 21 rows (a border row above and below), plus one cell for the last right border.
pub(crate) const CELLS: usize = (MAX_BOARD_SIZE as usize + 2) * (MAX_BOARD_SIZE as usize + 1) + 1;

const EMPTY: u8 = 0;
const BLACK: u8 = 1;
const WHITE: u8 = 2;
const BORDER: u8 = 3;

#[inline]
fn cell_of(color: Color) -> u8 {
    match color {
        Color::Black => BLACK,
        Color::White => WHITE,
    }
}

#[inline]
fn key(cell: u8, idx: usize) -> u64 {
    if cell == BLACK {
        BLACK_KEYS[idx]
    } else {
        WHITE_KEYS[idx]
    }
}

/// A Go board of up to 19×19 (rectangular boards allowed) with chains and a position hash.
///
/// `Board` only knows stones: whose turn it is, ko and history live in [`crate::Game`].
#[derive(Clone)]
pub struct Board {
    width: u8,
    height: u8,
    stride: usize,
    cells: [u8; CELLS],
    /// Representative cell of the chain each stone belongs to.
    head: [u16; CELLS],
    /// Next stone in the same chain (a circular list).
    next: [u16; CELLS],
    /// Pseudo-liberties, valid at chain heads.
    libs: [u16; CELLS],
    /// Stones in the chain, valid at chain heads.
    size: [u16; CELLS],
    hash: u64,
    /// Stones on the board (both colours); positions can only repeat at equal counts.
    stones: u16,
    /// Cells captured by the last `place`, reused to avoid allocating per move.
    captured: Vec<u16>,
}

/// Why a stone could not be placed on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlaceError {
    Occupied,
    Suicide,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "Board {}x{}", self.width, self.height)?;
        for row in self.rows() {
            writeln!(f, "{row}")?;
        }
        Ok(())
    }
}

impl PartialEq for Board {
    /// Boards are equal when they have the same size and the same stones.
    fn eq(&self, other: &Self) -> bool {
        self.width == other.width
            && self.height == other.height
            && self.cells[..self.used()] == other.cells[..other.used()]
    }
}
impl Eq for Board {}

impl Board {
    /// An empty board; `None` when a side is 0 or larger than 19.
    pub fn new(width: u8, height: u8) -> Option<Self> {
        if width == 0 || height == 0 || width > MAX_BOARD_SIZE || height > MAX_BOARD_SIZE {
            return None;
        }
        Some(Board::blank(width, height))
    }

    /// An empty board of sides already checked to lie in 1..=19.
    fn blank(width: u8, height: u8) -> Self {
        let stride = usize::from(width) + 1;
        let mut board = Board {
            width,
            height,
            stride,
            cells: [BORDER; CELLS],
            head: [0; CELLS],
            next: [0; CELLS],
            libs: [0; CELLS],
            size: [0; CELLS],
            hash: 0,
            stones: 0,
            captured: Vec::with_capacity(64),
        };
        for row in 0..height {
            for col in 0..width {
                let idx = board.index(Point::new(col, row));
                board.cells[idx] = EMPTY;
            }
        }
        board
    }

    /// A board from rows of board text ([`crate::board_text`]), top row first: `.` (or `+`)
    /// empty, `X` black, `O` white. `None` on malformed text or when a chain has no liberty.
    pub fn from_rows<S: AsRef<str>>(rows: &[S]) -> Option<Self> {
        let height = u8::try_from(rows.len()).ok()?;
        let width = rows.first()?.as_ref().chars().filter(|c| !c.is_whitespace()).count();
        let mut board = Board::new(u8::try_from(width).ok()?, height)?;
        let stones: Vec<Stone> = parse_rows(rows, width, usize::from(height)).ok()?;
        for (i, stone) in stones.into_iter().enumerate() {
            board.set_raw(Point::new((i % width) as u8, (i / width) as u8), stone);
        }
        board.rebuild_chains();
        board.chains_without_liberties().is_empty().then_some(board)
    }

    /// The 19×19 board holding a grid's stones, as they are: chains without liberties stay (a
    /// physical board can hold them; see [`Board::chains_without_liberties`]).
    pub fn from_stones(grid: &Grid<Stone>) -> Self {
        let mut board = Board::blank(MAX_BOARD_SIZE, MAX_BOARD_SIZE);
        for (p, stone) in grid.iter() {
            board.set_raw(p, stone);
        }
        board.rebuild_chains();
        board
    }

    /// Width in columns.
    #[inline]
    pub fn width(&self) -> u8 {
        self.width
    }

    /// Height in rows.
    #[inline]
    pub fn height(&self) -> u8 {
        self.height
    }

    /// Number of intersections.
    pub fn area(&self) -> usize {
        usize::from(self.width) * usize::from(self.height)
    }

    /// Zobrist hash of the stones (incremental; equal boards have equal hashes).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Stones on the board, both colours together.
    #[inline]
    pub fn stone_total(&self) -> usize {
        usize::from(self.stones)
    }

    /// Whether the point lies on this board.
    #[inline]
    pub fn contains(&self, p: Point) -> bool {
        p.col < self.width && p.row < self.height
    }

    #[inline]
    pub(crate) fn index(&self, p: Point) -> usize {
        (usize::from(p.row) + 1) * self.stride + usize::from(p.col) + 1
    }

    #[inline]
    pub(crate) fn point_of(&self, idx: usize) -> Point {
        let row = idx / self.stride - 1;
        let col = idx % self.stride - 1;
        Point::new(col as u8, row as u8)
    }

    /// Cells of the padded array in use (for snapshots and comparisons).
    #[inline]
    pub(crate) fn used(&self) -> usize {
        (usize::from(self.height) + 2) * self.stride + 1
    }

    /// The raw cell bytes in use, for position snapshots.
    #[inline]
    pub(crate) fn raw_cells(&self) -> &[u8] {
        &self.cells[..self.used()]
    }

    #[inline]
    fn neighbours(&self, idx: usize) -> [usize; 4] {
        [idx - self.stride, idx - 1, idx + 1, idx + self.stride]
    }

    /// What stands on a point (empty for a point off the board).
    #[inline]
    pub fn get(&self, p: Point) -> Stone {
        if !self.contains(p) {
            return Stone::Empty;
        }
        match self.cells[self.index(p)] {
            BLACK => Stone::Of(Color::Black),
            WHITE => Stone::Of(Color::White),
            _ => Stone::Empty,
        }
    }

    /// All points of the board, row by row from the top.
    pub fn points(&self) -> impl Iterator<Item = Point> + '_ {
        (0..self.height).flat_map(move |r| (0..self.width).map(move |c| Point::new(c, r)))
    }

    /// The orthogonal neighbours of a point that lie on the board.
    pub fn adjacent(&self, p: Point) -> impl Iterator<Item = Point> + '_ {
        let (c, r) = (i16::from(p.col), i16::from(p.row));
        [(c, r - 1), (c - 1, r), (c + 1, r), (c, r + 1)]
            .into_iter()
            .filter(move |&(c, r)| c >= 0 && r >= 0 && c < i16::from(self.width) && r < i16::from(self.height))
            .map(|(c, r)| Point::new(c as u8, r as u8))
    }

    /// Stones of each colour.
    pub fn stone_counts(&self) -> ByColor<usize> {
        let used = &self.cells[..self.used()];
        ByColor::new(used.iter().filter(|&&c| c == BLACK).count(), used.iter().filter(|&&c| c == WHITE).count())
    }

    /// The board as rows of board text (`.XO`), top row first.
    pub fn rows(&self) -> Vec<String> {
        let stones: Vec<Stone> = self.points().map(|p| self.get(p)).collect();
        format_rows(&stones, usize::from(self.width))
    }

    /// The stones of the chain through `p` (empty when `p` is empty).
    pub fn chain(&self, p: Point) -> Vec<Point> {
        if !matches!(self.get(p), Stone::Of(_)) {
            return Vec::new();
        }
        let start = self.index(p);
        let mut out = Vec::with_capacity(usize::from(self.size[usize::from(self.head[start])]));
        let mut s = start;
        loop {
            out.push(self.point_of(s));
            s = usize::from(self.next[s]);
            if s == start {
                break;
            }
        }
        out
    }

    /// The distinct liberties of the chain through `p`.
    pub fn liberties(&self, p: Point) -> Vec<Point> {
        let mut libs: Vec<Point> = Vec::new();
        for s in self.chain(p) {
            for n in self.adjacent(s) {
                if self.get(n) == Stone::Empty && !libs.contains(&n) {
                    libs.push(n);
                }
            }
        }
        libs
    }

    /// One point of every chain that has no liberty (a legal game never leaves one, but a
    /// physical board seen by the camera can: a missed capture).
    pub fn chains_without_liberties(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for p in self.points() {
            let idx = self.index(p);
            if matches!(self.cells[idx], BLACK | WHITE) && usize::from(self.head[idx]) == idx && self.libs[idx] == 0 {
                out.push(p);
            }
        }
        out
    }

    /// Whether placing `color` at `p` would be legal on this board alone (ignoring ko and turn).
    pub fn is_legal_placement(&self, color: Color, p: Point) -> bool {
        self.contains(p) && self.check_placement(cell_of(color), self.index(p)).is_ok()
    }

    /// How many of `idx`'s neighbours belong to the chain headed by `h`.
    #[inline]
    fn adjacency(&self, idx: usize, h: u16) -> u16 {
        let mut n = 0;
        for nb in self.neighbours(idx) {
            if matches!(self.cells[nb], BLACK | WHITE) && self.head[nb] == h {
                n += 1;
            }
        }
        n
    }

    /// Legality of a placement on the bare board: occupied, or suicide (Art. 5).
    #[inline]
    pub(crate) fn check_placement(&self, me: u8, idx: usize) -> Result<(), PlaceError> {
        if self.cells[idx] != EMPTY {
            return Err(PlaceError::Occupied);
        }
        for nb in self.neighbours(idx) {
            let c = self.cells[nb];
            if c == EMPTY {
                return Ok(());
            }
            if c == BORDER {
                continue;
            }
            let h = self.head[nb];
            let remaining = self.libs[usize::from(h)] - self.adjacency(idx, h);
            // A friendly chain with another liberty keeps the new stone alive; an enemy chain
            // whose last liberty this is gets captured, which gives the stone a liberty.
            if (c == me) == (remaining > 0) {
                return Ok(());
            }
        }
        Err(PlaceError::Suicide)
    }

    /// Places a stone, removes captured enemy chains (Art. 4), and returns the number captured.
    /// The captured cells are available from `last_captured_cells` until the next call.
    #[inline]
    pub(crate) fn place(&mut self, color: Color, idx: usize) -> Result<usize, PlaceError> {
        let me = cell_of(color);
        self.check_placement(me, idx)?;
        self.captured.clear();
        self.put_stone(me, idx);
        let opp = BLACK + WHITE - me;
        for nb in self.neighbours(idx) {
            if self.cells[nb] == opp {
                let h = usize::from(self.head[nb]);
                if self.libs[h] == 0 {
                    self.remove_chain(h);
                }
            }
        }
        Ok(self.captured.len())
    }

    /// Puts a stone on an empty cell, updating neighbours' liberties and merging chains.
    #[inline]
    fn put_stone(&mut self, me: u8, idx: usize) {
        self.cells[idx] = me;
        self.hash ^= key(me, idx);
        self.stones += 1;
        let i16x = idx as u16;
        self.head[idx] = i16x;
        self.next[idx] = i16x;
        self.size[idx] = 1;
        let mut own_libs = 0u16;
        for nb in self.neighbours(idx) {
            match self.cells[nb] {
                EMPTY => own_libs += 1,
                BLACK | WHITE => {
                    let h = usize::from(self.head[nb]);
                    self.libs[h] -= 1;
                }
                _ => {}
            }
        }
        self.libs[idx] = own_libs;
        for nb in self.neighbours(idx) {
            if self.cells[nb] == me {
                let a = self.head[idx];
                let b = self.head[nb];
                if a != b {
                    self.merge(a, b);
                }
            }
        }
    }

    /// Merges two chains, relabelling the smaller one.
    #[inline]
    fn merge(&mut self, a: u16, b: u16) {
        let (big, small) = if self.size[usize::from(a)] >= self.size[usize::from(b)] { (a, b) } else { (b, a) };
        let (bigu, smallu) = (usize::from(big), usize::from(small));
        let mut s = smallu;
        loop {
            self.head[s] = big;
            s = usize::from(self.next[s]);
            if s == smallu {
                break;
            }
        }
        self.next.swap(bigu, smallu);
        self.libs[bigu] += self.libs[smallu];
        self.size[bigu] += self.size[smallu];
    }

    /// Removes a whole chain, giving its neighbours their liberties back.
    fn remove_chain(&mut self, h: usize) {
        let mut s = h;
        loop {
            let c = self.cells[s];
            self.hash ^= key(c, s);
            self.cells[s] = EMPTY;
            self.stones -= 1;
            self.captured.push(s as u16);
            for nb in self.neighbours(s) {
                if matches!(self.cells[nb], BLACK | WHITE) {
                    let nh = usize::from(self.head[nb]);
                    self.libs[nh] += 1;
                }
            }
            s = usize::from(self.next[s]);
            if s == h {
                break;
            }
        }
    }

    /// Cells captured by the last placement.
    #[inline]
    pub(crate) fn last_captured_cells(&self) -> &[u16] {
        &self.captured
    }

    /// Pseudo-liberties and size of the chain containing `idx`.
    #[inline]
    pub(crate) fn chain_stats(&self, idx: usize) -> (u16, u16) {
        let h = usize::from(self.head[idx]);
        (self.libs[h], self.size[h])
    }

    /// Sets a point without maintaining chains; call `rebuild_chains` afterwards.
    pub(crate) fn set_raw(&mut self, p: Point, stone: Stone) {
        let idx = self.index(p);
        let old = self.cells[idx];
        if old == BLACK || old == WHITE {
            self.hash ^= key(old, idx);
        }
        let new = match stone {
            Stone::Empty => EMPTY,
            Stone::Of(c) => cell_of(c),
        };
        self.cells[idx] = new;
        if new != EMPTY {
            self.hash ^= key(new, idx);
        }
    }

    /// Recomputes chains and liberties from the cells (after setup or raw edits).
    pub(crate) fn rebuild_chains(&mut self) {
        let used = self.used();
        let cells = self.cells;
        for idx in 0..used {
            if matches!(self.cells[idx], BLACK | WHITE) {
                self.cells[idx] = EMPTY;
            }
        }
        self.hash = 0;
        self.stones = 0;
        for (idx, &c) in cells.iter().enumerate().take(used) {
            if c == BLACK || c == WHITE {
                self.put_stone(c, idx);
            }
        }
    }

    /// A board of this size holding the given raw cells (from `raw_cells`), chains rebuilt.
    pub(crate) fn with_raw_cells(&self, cells: &[u8]) -> Board {
        let mut board = self.clone();
        board.cells[..cells.len()].copy_from_slice(cells);
        board.rebuild_chains();
        board
    }

    /// Removes the chain through `p` (dead stones at counting); returns how many stones.
    pub fn remove_chain_at(&mut self, p: Point) -> usize {
        if !matches!(self.get(p), Stone::Of(_)) {
            return 0;
        }
        let idx = self.index(p);
        let h = usize::from(self.head[idx]);
        self.captured.clear();
        self.remove_chain(h);
        self.captured.len()
    }

    /// Recomputes the hash from scratch (tests check it against the incremental one).
    pub fn recompute_hash(&self) -> u64 {
        let mut h = 0;
        for idx in 0..self.used() {
            let c = self.cells[idx];
            if c == BLACK || c == WHITE {
                h ^= key(c, idx);
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &[&str]) -> Board {
        Board::from_rows(rows).expect("valid test board")
    }

    #[test]
    fn capture_in_the_corner_and_liberties_come_back() {
        let mut b = board(&[".X...", "XO...", ".X...", ".....", "....."]);
        // The white stone at B4 (SGF "bb") has one liberty left, C4.
        assert_eq!(b.liberties(Point::new(1, 1)), vec![Point::new(2, 1)]);
        let idx = b.index(Point::new(2, 1));
        assert_eq!(b.place(Color::Black, idx), Ok(1));
        assert_eq!(b.get(Point::new(1, 1)), Stone::Empty);
        assert_eq!(b.liberties(Point::new(1, 0)).len(), 3);
        assert_eq!(b.hash(), b.recompute_hash());
    }

    #[test]
    fn suicide_is_refused_but_capturing_is_not() {
        let b = board(&[".X...", "X....", ".....", ".....", "....."]);
        assert_eq!(b.check_placement(WHITE, b.index(Point::new(0, 0))), Err(PlaceError::Suicide));
        assert_eq!(b.check_placement(BLACK, b.index(Point::new(0, 0))), Ok(()));
        // Multi-stone suicide.
        let b = board(&["OO.X", "XXXX", "....", "...."]);
        assert_eq!(
            b.check_placement(WHITE, b.index(Point::new(2, 0))),
            Err(PlaceError::Suicide),
            "d4 joins a chain with liberties"
        );
        let b = board(&["OO.XO", "XXXXO", "OOOOO", ".....", "....."]);
        assert_eq!(b.check_placement(WHITE, b.index(Point::new(2, 0))), Ok(()), "captures the black chain");
        let b = board(&["OO.X.", "XXXXX", ".....", ".....", "....."]);
        assert_eq!(b.check_placement(WHITE, b.index(Point::new(2, 0))), Err(PlaceError::Suicide));
    }

    #[test]
    fn filling_the_last_liberty_captures_the_whole_chain() {
        let mut b = board(&["XO.OX", "XO.OX", "XOOOX", "XXXXX", "....."]);
        let captured = b.place(Color::Black, b.index(Point::new(2, 0))).expect("legal");
        assert_eq!(captured, 0, "white still has c4");
        let captured = b.place(Color::Black, b.index(Point::new(2, 1))).expect("legal: captures");
        assert_eq!(captured, 7);
        assert_eq!(b.chains_without_liberties(), vec![]);
    }
}
