//! The physical board content to render: 19×19 points, each empty, black or white (the
//! rules crate's [`Stone`]).

use tengen_rules::board_text::{format_rows, parse_rows};
use tengen_rules::{Point, Stone, BOARD_LINES};

use crate::SynthError;

/// A 19×19 board position. Row 0 is the top row of the diagram (the far side, "19" to people),
/// column 0 the left column ("A").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Position {
    points: [[Stone; BOARD_LINES]; BOARD_LINES],
}

impl Position {
    /// The empty board.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Builds a position from 19 rows of 19 characters `.XO` (top row first; board text as in
    /// `tengen_rules::board_text`). Whitespace between characters is ignored, so `". . X"` and
    /// `"..X"` both work.
    pub fn from_rows<S: AsRef<str>>(rows: &[S]) -> Result<Self, SynthError> {
        let cells: Vec<Stone> =
            parse_rows(rows, BOARD_LINES, BOARD_LINES).map_err(|e| SynthError::BadPosition(e.to_string()))?;
        let mut position = Position::empty();
        for (i, stone) in cells.into_iter().enumerate() {
            position.points[i / BOARD_LINES][i % BOARD_LINES] = stone;
        }
        Ok(position)
    }

    /// Parses a grid file: 19 non-empty lines of `.XO` (lines starting with `#` are comments).
    pub fn parse_grid(text: &str) -> Result<Self, SynthError> {
        let rows: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        Self::from_rows(&rows)
    }

    /// The 19 rows as strings of `.XO`, top row first.
    pub fn to_rows(&self) -> Vec<String> {
        format_rows(self.points.as_flattened(), BOARD_LINES)
    }

    /// The point at (column, row); out-of-range coordinates read as empty.
    pub fn get(&self, col: usize, row: usize) -> Stone {
        self.points.get(row).and_then(|r| r.get(col)).copied().unwrap_or(Stone::Empty)
    }

    /// Sets the point at (column, row); out-of-range coordinates are ignored.
    pub fn set(&mut self, col: usize, row: usize, stone: Stone) {
        if let Some(cell) = self.points.get_mut(row).and_then(|r| r.get_mut(col)) {
            *cell = stone;
        }
    }

    /// Returns a copy with one point changed.
    pub fn with(mut self, col: usize, row: usize, stone: Stone) -> Self {
        self.set(col, row, stone);
        self
    }

    /// Places a stone at a human coordinate such as `"Q16"` (letters without I, row 1 at the
    /// bottom).
    pub fn with_at(self, coordinate: &str, stone: Stone) -> Result<Self, SynthError> {
        let p = Point::from_human(coordinate, BOARD_LINES as u8, BOARD_LINES as u8)
            .map_err(|e| SynthError::BadPosition(e.to_string()))?;
        Ok(self.with(usize::from(p.col), usize::from(p.row), stone))
    }

    /// Number of stones on the board.
    pub fn stone_count(&self) -> usize {
        self.points.iter().flatten().filter(|s| **s != Stone::Empty).count()
    }

    /// A game-like random position with about `stones` stones (alternating colours, clustered
    /// near earlier stones and the corners as in real games, no chain left without liberties),
    /// drawn from `seed`.
    pub fn random(seed: u64, stones: usize) -> Position {
        let mut rng = crate::noise::Rng::derive(seed, 0x9051);
        let mut position = Position::empty();
        let mut placed: Vec<(usize, usize)> = Vec::new();
        let target = stones.min(BOARD_LINES * BOARD_LINES * 3 / 5);
        let mut attempts = 0;
        while placed.len() < target && attempts < target * 50 + 100 {
            attempts += 1;
            let (col, row) = if placed.is_empty() || rng.unit() < 0.2 {
                // Openings: third and fourth lines are favoured.
                let line = |rng: &mut crate::noise::Rng| {
                    let v = [2usize, 3, 3, 4, 5, 8, 9, 12, 14, 15, 15, 16][(rng.unit() * 12.0) as usize % 12];
                    v.min(BOARD_LINES - 1)
                };
                (line(&mut rng), line(&mut rng))
            } else {
                let (c, r) = placed[(rng.unit() * placed.len() as f64) as usize % placed.len()];
                let dc = (rng.normal() * 1.6).round() as i64;
                let dr = (rng.normal() * 1.6).round() as i64;
                let (c, r) = (c as i64 + dc, r as i64 + dr);
                if c < 0 || r < 0 || c >= BOARD_LINES as i64 || r >= BOARD_LINES as i64 {
                    continue;
                }
                (c as usize, r as usize)
            };
            if position.get(col, row) != Stone::Empty {
                continue;
            }
            let stone = if placed.len() & 1 == 0 { Stone::BLACK } else { Stone::WHITE };
            position.set(col, row, stone);
            if position.every_chain_breathes_near(col, row) {
                placed.push((col, row));
            } else {
                position.set(col, row, Stone::Empty);
            }
        }
        position
    }

    /// Whether the chains through (col, row) and its neighbours all have a liberty.
    fn every_chain_breathes_near(&self, col: usize, row: usize) -> bool {
        let mut starts = vec![(col, row)];
        starts.extend(neighbours(col, row));
        starts.into_iter().filter(|&(c, r)| self.get(c, r) != Stone::Empty).all(|(c, r)| self.has_liberty(c, r))
    }

    fn has_liberty(&self, col: usize, row: usize) -> bool {
        let colour = self.get(col, row);
        let mut seen = vec![false; BOARD_LINES * BOARD_LINES];
        let mut stack = vec![(col, row)];
        seen[row * BOARD_LINES + col] = true;
        while let Some((c, r)) = stack.pop() {
            for (nc, nr) in neighbours(c, r) {
                match self.get(nc, nr) {
                    Stone::Empty => return true,
                    s if s == colour && !seen[nr * BOARD_LINES + nc] => {
                        seen[nr * BOARD_LINES + nc] = true;
                        stack.push((nc, nr));
                    }
                    _ => {}
                }
            }
        }
        false
    }

    /// The position turned `quarter_turns` × 90° clockwise (as seen from above).
    pub fn rotated(&self, quarter_turns: u8) -> Position {
        let mut out = self.clone();
        for _ in 0..quarter_turns % 4 {
            let src = out.clone();
            for row in 0..BOARD_LINES {
                for col in 0..BOARD_LINES {
                    // Clockwise: the left column becomes the top row.
                    out.points[row][col] = src.points[BOARD_LINES - 1 - col][row];
                }
            }
        }
        out
    }
}

fn neighbours(col: usize, row: usize) -> impl Iterator<Item = (usize, usize)> {
    let (c, r) = (col as i64, row as i64);
    [(c - 1, r), (c + 1, r), (c, r - 1), (c, r + 1)]
        .into_iter()
        .filter(|&(c, r)| c >= 0 && r >= 0 && c < BOARD_LINES as i64 && r < BOARD_LINES as i64)
        .map(|(c, r)| (c as usize, r as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_round_trip_and_errors() {
        let p = Position::empty().with(3, 3, Stone::BLACK).with(15, 2, Stone::WHITE);
        let rows = p.to_rows();
        assert_eq!(Position::from_rows(&rows).ok(), Some(p.clone()));
        assert_eq!(Position::parse_grid(&rows.join("\n")).ok(), Some(p));
        assert!(Position::from_rows(&rows[..18]).is_err());
        let mut bad = rows.clone();
        bad[4] = "..........?........".into();
        assert!(Position::from_rows(&bad).is_err());
    }

    #[test]
    fn random_positions_are_deterministic_and_breathe() {
        let p = Position::random(9, 150);
        assert_eq!(p, Position::random(9, 150));
        assert!((140..=150).contains(&p.stone_count()), "{}", p.stone_count());
        for row in 0..19 {
            for col in 0..19 {
                if p.get(col, row) != Stone::Empty {
                    assert!(p.has_liberty(col, row), "chain at {col},{row} has no liberty");
                }
            }
        }
    }

    #[test]
    fn rotation_is_clockwise_and_cycles() {
        let p = Position::empty().with(0, 0, Stone::BLACK);
        assert_eq!(p.rotated(1).get(18, 0), Stone::BLACK);
        assert_eq!(p.rotated(2).get(18, 18), Stone::BLACK);
        assert_eq!(p.rotated(4), p);
    }
}
