//! Which 19 lines of a fitted lattice are the board, from the crossings seen where the lattice
//! is extended some lines beyond the 19 on every side. A board's lines cross only on the board;
//! a table's grain, the board's side face or its shadow may look like more lines of one family,
//! but they do not cross the other family. A first lattice that took the table's grain for rows
//! is several lines off (more than the line-evidence extent correction reaches), and the lines
//! it leaves out hold many crossings while the lines it takes in beyond the board hold none.
//!
//! The constants are a priori, not fitted: a crossing is searched as closely as the refinement's
//! second pass, and a shift must be decisive (the lines gained hold 3× the crossings of the lines
//! given up), so stray crossings (noise, a hand, stones' rims) never move a grid.

use tengen_rules::BOARD_LINES;

use super::refine::{crossing_at, Working};
use crate::work::WorkMeter;
use crate::GridGeometry;

/// Search radius of each crossing beyond the 19 lines, in cells: a fitted lattice extrapolated
/// a few lines stays within a fraction of a cell of them.
const CROSSING_RADIUS_CELLS: f64 = 0.25;
/// The lines a shift gains must hold this many times the crossings of the lines it gives up.
const DECISIVE_RATIO: usize = 3;

/// Crossings seen on the lattice of a geometry extended `reach` lines beyond the 19 on every
/// side.
pub(crate) struct CrossingMap {
    reach: i32,
    side: usize,
    seen: Vec<bool>,
}

impl CrossingMap {
    /// Searches every point of the extended lattice (`(19 + 2 reach)²` crossings, each two
    /// short line searches, charged to `meter`).
    pub fn measure(work: &Working, geom: &GridGeometry, reach: i32, meter: &WorkMeter) -> Self {
        let side = BOARD_LINES + 2 * reach.max(0) as usize;
        let mut seen = vec![false; side * side];
        for (i, slot) in seen.iter_mut().enumerate() {
            let (c, r) = ((i % side) as i32 - reach, (i / side) as i32 - reach);
            *slot = crossing_at(work, geom, f64::from(c), f64::from(r), CROSSING_RADIUS_CELLS, meter).is_some();
        }
        Self { reach: reach.max(0), side, seen }
    }

    /// Crossings inside the 19×19 window shifted by (`dc`, `dr`) lines (each within ±reach).
    pub fn window(&self, dc: i32, dr: i32) -> usize {
        let lines = BOARD_LINES as i32;
        let mut n = 0;
        for r in dr..dr + lines {
            for c in dc..dc + lines {
                let (x, y) = (c + self.reach, r + self.reach);
                if x >= 0 && y >= 0 && (x as usize) < self.side && (y as usize) < self.side {
                    n += usize::from(self.seen[y as usize * self.side + x as usize]);
                }
            }
        }
        n
    }

    /// Crossings on each extended line of one family (`columns`: lines of constant column),
    /// indexed from −reach.
    fn per_line(&self, columns: bool) -> Vec<usize> {
        let mut counts = vec![0; self.side];
        for (i, &seen) in self.seen.iter().enumerate() {
            let line = if columns { i % self.side } else { i / self.side };
            counts[line] += usize::from(seen);
        }
        counts
    }

    /// The shift of one family (`columns`: the column lines) that the crossings decide: the 19
    /// lines holding the most crossings, taken only when the lines it gains hold at least
    /// [`DECISIVE_RATIO`] times the crossings of the lines it gives up (and of the lines it
    /// moves). Otherwise 0: the extent is left to the line evidence.
    pub fn decisive_shift(&self, columns: bool) -> i32 {
        let counts = self.per_line(columns);
        let lines = BOARD_LINES as i32;
        let sum = |from: i32, to: i32| -> usize { (from..to).map(|k| counts[(k + self.reach) as usize]).sum() };
        let mut best: (i32, usize) = (0, sum(0, lines));
        for shift in -self.reach..=self.reach {
            let n = sum(shift, shift + lines);
            if n > best.1 || (n == best.1 && shift.abs() < best.0.abs()) {
                best = (shift, n);
            }
        }
        let shift = best.0;
        let (gained, lost) = if shift > 0 {
            (sum(lines, lines + shift), sum(0, shift))
        } else {
            (sum(shift, 0), sum(lines + shift, lines))
        };
        let moved = shift.unsigned_abs() as usize;
        if shift != 0 && gained >= DECISIVE_RATIO * lost.max(moved) {
            shift
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map whose crossings are seen where `seen(c, r)` says, in board coordinates.
    fn map(reach: i32, seen: impl Fn(i32, i32) -> bool) -> CrossingMap {
        let side = BOARD_LINES + 2 * reach as usize;
        let seen = (0..side * side).map(|i| seen((i % side) as i32 - reach, (i / side) as i32 - reach)).collect();
        CrossingMap { reach, side, seen }
    }

    /// Every other point of the 19×19 window starting at (`c0`, `r0`): a board with stones.
    fn board_at(c0: i32, r0: i32) -> impl Fn(i32, i32) -> bool {
        move |c, r| (c0..c0 + 19).contains(&c) && (r0..r0 + 19).contains(&r) && (c + r) % 2 == 0
    }

    #[test]
    fn a_lattice_several_lines_off_moves_onto_the_crossings() {
        let m = map(6, board_at(0, -4));
        assert_eq!((m.decisive_shift(true), m.decisive_shift(false)), (0, -4));
        let m = map(6, board_at(5, 2));
        assert_eq!((m.decisive_shift(true), m.decisive_shift(false)), (5, 2));
        assert!(m.window(5, 2) > m.window(0, 0));
    }

    #[test]
    fn a_lattice_on_the_board_stays_despite_stray_crossings() {
        let board = board_at(0, 0);
        // Strays beyond the board: a few per line, fewer than a third of a board line's.
        let m = map(6, |c, r| board(c, r) || (c == -1 && r % 7 == 0) || (r == 20 && c % 5 == 0));
        assert_eq!((m.decisive_shift(true), m.decisive_shift(false)), (0, 0));
    }

    #[test]
    fn an_undecided_extent_does_not_move() {
        // Crossings on 20 lines: the two 19-line windows tie, nothing is decisive.
        let m = map(6, |c, r| (0..20).contains(&c) && (0..19).contains(&r));
        assert_eq!(m.decisive_shift(true), 0);
        // More crossings one line out than on the first line, but not decisively more.
        let m =
            map(6, |c, r| (0..19).contains(&r) && ((1..19).contains(&c) || (c == 19 && r < 12) || (c == 0 && r < 8)));
        assert_eq!(m.decisive_shift(true), 0);
    }
}
