//! The physical board content to render: 19×19 points, each empty, black or white.

use serde::{Deserialize, Serialize};

use crate::SynthError;

/// Lines on a tournament board in each direction.
pub const BOARD_LINES: usize = 19;

/// What lies on one point of the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Stone {
    /// No stone.
    #[default]
    Empty,
    /// A black stone.
    Black,
    /// A white stone.
    White,
}

impl Stone {
    /// The grid-file character: `.` empty, `X` black, `O` white.
    pub fn to_char(self) -> char {
        match self {
            Stone::Empty => '.',
            Stone::Black => 'X',
            Stone::White => 'O',
        }
    }

    /// Parses a grid-file character (`.`/`+` empty, `X`/`x`/`B`/`b` black, `O`/`o`/`W`/`w` white).
    pub fn from_char(c: char) -> Option<Stone> {
        match c {
            '.' | '+' => Some(Stone::Empty),
            'X' | 'x' | 'B' | 'b' => Some(Stone::Black),
            'O' | 'o' | 'W' | 'w' => Some(Stone::White),
            _ => None,
        }
    }
}

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

    /// Builds a position from 19 rows of 19 characters `.XO` (top row first). Whitespace between
    /// characters is ignored, so `". . X"` and `"..X"` both work.
    pub fn from_rows<S: AsRef<str>>(rows: &[S]) -> Result<Self, SynthError> {
        if rows.len() != BOARD_LINES {
            return Err(SynthError::BadPosition(format!(
                "expected 19 rows, got {}",
                rows.len()
            )));
        }
        let mut position = Position::empty();
        for (row, text) in rows.iter().enumerate() {
            let cells: Vec<char> = text
                .as_ref()
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            if cells.len() != BOARD_LINES {
                return Err(SynthError::BadPosition(format!(
                    "row {} has {} points, expected 19",
                    row + 1,
                    cells.len()
                )));
            }
            for (col, c) in cells.into_iter().enumerate() {
                position.points[row][col] = Stone::from_char(c).ok_or_else(|| {
                    SynthError::BadPosition(format!(
                        "row {} column {}: unknown point {c:?}",
                        row + 1,
                        col + 1
                    ))
                })?;
            }
        }
        Ok(position)
    }

    /// Parses a grid file: 19 non-empty lines of `.XO` (lines starting with `#` are comments).
    pub fn parse_grid(text: &str) -> Result<Self, SynthError> {
        let rows: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        Self::from_rows(&rows)
    }

    /// The 19 rows as strings of `.XO`, top row first.
    pub fn to_rows(&self) -> Vec<String> {
        self.points
            .iter()
            .map(|row| row.iter().map(|s| s.to_char()).collect())
            .collect()
    }

    /// The point at (column, row); out-of-range coordinates read as empty.
    pub fn get(&self, col: usize, row: usize) -> Stone {
        self.points
            .get(row)
            .and_then(|r| r.get(col))
            .copied()
            .unwrap_or(Stone::Empty)
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
        let (col, row) = parse_coordinate(coordinate)?;
        Ok(self.with(col, row, stone))
    }

    /// Number of stones on the board.
    pub fn stone_count(&self) -> usize {
        self.points
            .iter()
            .flatten()
            .filter(|s| **s != Stone::Empty)
            .count()
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
                    let v = [2usize, 3, 3, 4, 5, 8, 9, 12, 14, 15, 15, 16]
                        [(rng.unit() * 12.0) as usize % 12];
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
            let stone = if placed.len() & 1 == 0 {
                Stone::Black
            } else {
                Stone::White
            };
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
        starts
            .into_iter()
            .filter(|&(c, r)| self.get(c, r) != Stone::Empty)
            .all(|(c, r)| self.has_liberty(c, r))
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

/// Parses a human coordinate such as `"Q16"` into (column, row) with row 0 at the top.
pub fn parse_coordinate(text: &str) -> Result<(usize, usize), SynthError> {
    let bad = || SynthError::BadPosition(format!("bad coordinate {text:?} (expected e.g. Q16)"));
    let text = text.trim();
    let mut chars = text.chars();
    let letter = chars.next().ok_or_else(bad)?.to_ascii_uppercase();
    if !letter.is_ascii_uppercase() || letter == 'I' {
        return Err(bad());
    }
    let mut col = (letter as u8 - b'A') as usize;
    if letter > 'I' {
        col -= 1;
    }
    let number: usize = chars.as_str().parse().map_err(|_| bad())?;
    if col >= BOARD_LINES || number == 0 || number > BOARD_LINES {
        return Err(bad());
    }
    Ok((col, BOARD_LINES - number))
}

/// Formats (column, row) with row 0 at the top as a human coordinate such as `"Q16"`.
pub fn format_coordinate(col: usize, row: usize) -> String {
    let letters = b"ABCDEFGHJKLMNOPQRST";
    let letter = letters.get(col).map(|&b| b as char).unwrap_or('?');
    format!("{letter}{}", BOARD_LINES.saturating_sub(row))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_round_trip_and_skip_i() {
        assert_eq!(parse_coordinate("A19").ok(), Some((0, 0)));
        assert_eq!(parse_coordinate("T1").ok(), Some((18, 18)));
        assert_eq!(parse_coordinate("J10").ok(), Some((8, 9)));
        assert!(parse_coordinate("I5").is_err());
        assert!(parse_coordinate("A20").is_err());
        for col in 0..19 {
            for row in 0..19 {
                assert_eq!(
                    parse_coordinate(&format_coordinate(col, row)).ok(),
                    Some((col, row))
                );
            }
        }
    }

    #[test]
    fn grid_round_trip_and_errors() {
        let p = Position::empty()
            .with(3, 3, Stone::Black)
            .with(15, 2, Stone::White);
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
        assert!(
            (140..=150).contains(&p.stone_count()),
            "{}",
            p.stone_count()
        );
        for row in 0..19 {
            for col in 0..19 {
                if p.get(col, row) != Stone::Empty {
                    assert!(
                        p.has_liberty(col, row),
                        "chain at {col},{row} has no liberty"
                    );
                }
            }
        }
    }

    #[test]
    fn rotation_is_clockwise_and_cycles() {
        let p = Position::empty().with(0, 0, Stone::Black);
        assert_eq!(p.rotated(1).get(18, 0), Stone::Black);
        assert_eq!(p.rotated(2).get(18, 18), Stone::Black);
        assert_eq!(p.rotated(4), p);
    }
}
