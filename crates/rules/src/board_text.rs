//! The board text codec: a board as rows of characters, top row first, one character a point —
//! `.` empty, `X` black, `O` white, `?` unknown. Readers also take `+` for empty and `B`/`W`
//! (either case) for the stones, the alphabet some tools and older logs use.

/// A value that is written as one character of board text ([`crate::Stone`],
/// [`crate::PointState`]).
pub trait BoardChar: Sized {
    /// The character written for it.
    fn to_char(self) -> char;
    /// The value a character stands for, `None` when it stands for none.
    fn from_char(c: char) -> Option<Self>;
}

impl BoardChar for crate::Stone {
    fn to_char(self) -> char {
        crate::Stone::to_char(self)
    }
    fn from_char(c: char) -> Option<Self> {
        crate::Stone::from_char(c)
    }
}

impl BoardChar for crate::PointState {
    fn to_char(self) -> char {
        crate::PointState::to_char(self)
    }
    fn from_char(c: char) -> Option<Self> {
        crate::PointState::from_char(c)
    }
}

/// Why board text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardTextError {
    /// The text has the wrong number of rows.
    #[error("the board has {found} rows, expected {expected}")]
    Rows {
        /// Rows given.
        found: usize,
        /// Rows the board has.
        expected: usize,
    },
    /// A row has the wrong number of points.
    #[error("row {row} has {found} points, expected {expected}")]
    RowLength {
        /// The row, 0 = top.
        row: usize,
        /// Points given in it.
        found: usize,
        /// Points a row has.
        expected: usize,
    },
    /// A character stands for no point.
    #[error("row {row}, column {col}: `{ch}` is not one of {alphabet}")]
    Char {
        /// The row, 0 = top.
        row: usize,
        /// The column, 0 = left.
        col: usize,
        /// The character.
        ch: char,
        /// The characters allowed, for the message.
        alphabet: &'static str,
    },
}

/// Reads `height` rows of `width` characters, row-major from the top-left. Whitespace inside
/// a row is skipped, so `". . X"` reads as `"..X"`.
pub fn parse_rows<T: BoardChar, S: AsRef<str>>(
    rows: &[S],
    width: usize,
    height: usize,
) -> Result<Vec<T>, BoardTextError> {
    if rows.len() != height {
        return Err(BoardTextError::Rows { found: rows.len(), expected: height });
    }
    let alphabet = if T::from_char('?').is_some() { ". X O ?" } else { ". X O" };
    let mut cells = Vec::with_capacity(width * height);
    for (row, text) in rows.iter().enumerate() {
        let start = cells.len();
        for (col, ch) in text.as_ref().chars().filter(|c| !c.is_whitespace()).enumerate() {
            if col >= width {
                let found = text.as_ref().chars().filter(|c| !c.is_whitespace()).count();
                return Err(BoardTextError::RowLength { row, found, expected: width });
            }
            cells.push(T::from_char(ch).ok_or(BoardTextError::Char { row, col, ch, alphabet })?);
        }
        if cells.len() - start != width {
            return Err(BoardTextError::RowLength { row, found: cells.len() - start, expected: width });
        }
    }
    Ok(cells)
}

/// Writes row-major cells as rows of `width` characters, top row first.
pub fn format_rows<T: BoardChar + Copy>(cells: &[T], width: usize) -> Vec<String> {
    cells.chunks(width.max(1)).map(|row| row.iter().map(|&c| c.to_char()).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PointState, Stone};

    #[test]
    fn rows_round_trip_and_bad_text_says_where() {
        let cells: Vec<PointState> = parse_rows(&["X.?", "o+B"], 3, 2).expect("valid");
        assert_eq!(format_rows(&cells, 3), vec!["X.?", "O.X"]);
        assert_eq!(
            parse_rows::<Stone, _>(&["X.?", "..."], 3, 2),
            Err(BoardTextError::Char { row: 0, col: 2, ch: '?', alphabet: ". X O" })
        );
        assert_eq!(
            parse_rows::<Stone, _>(&["X.", "..."], 3, 2),
            Err(BoardTextError::RowLength { row: 0, found: 2, expected: 3 })
        );
        assert_eq!(
            parse_rows::<Stone, _>(&["X...", "..."], 3, 2),
            Err(BoardTextError::RowLength { row: 0, found: 4, expected: 3 })
        );
        assert_eq!(parse_rows::<Stone, _>(&["..."], 3, 2), Err(BoardTextError::Rows { found: 1, expected: 2 }));
        let spaced: Vec<Stone> = parse_rows(&[". X O"], 3, 1).expect("spaces skipped");
        assert_eq!(spaced, vec![Stone::Empty, Stone::BLACK, Stone::WHITE]);
    }
}
