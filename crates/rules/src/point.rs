//! An intersection and the two ways it is written: SGF ("pd", from the top-left) and the
//! people's form ("Q16": letters without I, row 1 at the bottom, as printed on a board).

/// An intersection: `col` from the left, `row` from the top (SGF orientation), both 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Point {
    /// Column, 0 = leftmost.
    pub col: u8,
    /// Row, 0 = top (as in SGF; people count rows from the bottom, see [`Point::to_human`]).
    pub row: u8,
}

/// A coordinate that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoordError {
    /// The text is not a coordinate in the expected notation.
    #[error("`{0}` is not a coordinate (expected SGF like `pd` or human like `Q16`)")]
    Malformed(String),
    /// The coordinate lies outside the board.
    #[error("`{text}` lies outside a {width}x{height} board")]
    OffBoard {
        /// The coordinate as written.
        text: String,
        /// Board width.
        width: u8,
        /// Board height.
        height: u8,
    },
}

/// Column letters people use: A–T without I.
const HUMAN_COLUMNS: &[u8] = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";

impl Point {
    /// A point from column and row.
    pub const fn new(col: u8, row: u8) -> Self {
        Point { col, row }
    }

    /// SGF notation, e.g. `pd` (column letter, then row letter, both from `a` at top-left).
    pub fn to_sgf(self) -> String {
        let mut s = String::with_capacity(2);
        s.push(char::from(b'a' + self.col));
        s.push(char::from(b'a' + self.row));
        s
    }

    /// Human notation on a board `height` rows tall, e.g. `Q16` (row 1 at the bottom).
    pub fn to_human(self, height: u8) -> String {
        let letter = HUMAN_COLUMNS.get(usize::from(self.col)).copied().unwrap_or(b'?');
        format!("{}{}", char::from(letter), u32::from(height) - u32::from(self.row))
    }

    /// Reads SGF notation (`pd`); `tt` and the empty string are passes, not points, and fail here.
    pub fn from_sgf(text: &str, width: u8, height: u8) -> Result<Self, CoordError> {
        let bytes = text.as_bytes();
        if bytes.len() != 2 || !bytes.iter().all(u8::is_ascii_lowercase) {
            return Err(CoordError::Malformed(text.to_string()));
        }
        let (col, row) = (bytes[0] - b'a', bytes[1] - b'a');
        if col >= width || row >= height {
            return Err(CoordError::OffBoard { text: text.to_string(), width, height });
        }
        Ok(Point { col, row })
    }

    /// Reads human notation (`Q16`, case-insensitive, no `I` column).
    pub fn from_human(text: &str, width: u8, height: u8) -> Result<Self, CoordError> {
        let trimmed = text.trim();
        let mut chars = trimmed.chars();
        let letter = chars.next().ok_or_else(|| CoordError::Malformed(text.to_string()))?;
        let upper = letter.to_ascii_uppercase();
        let col = HUMAN_COLUMNS
            .iter()
            .position(|&c| char::from(c) == upper)
            .ok_or_else(|| CoordError::Malformed(text.to_string()))?;
        let number: u32 = chars.as_str().parse().map_err(|_| CoordError::Malformed(text.to_string()))?;
        let off_board = || CoordError::OffBoard { text: text.to_string(), width, height };
        if col >= usize::from(width) || number == 0 || number > u32::from(height) {
            return Err(off_board());
        }
        let row = u32::from(height) - number;
        Ok(Point { col: col as u8, row: row as u8 })
    }

    /// Reads either notation: SGF when the text is two lowercase letters, human otherwise.
    pub fn parse(text: &str, width: u8, height: u8) -> Result<Self, CoordError> {
        let t = text.trim();
        if t.len() == 2 && t.bytes().all(|b| b.is_ascii_lowercase()) {
            Point::from_sgf(t, width, height)
        } else {
            Point::from_human(t, width, height)
        }
    }
}

/// A point of the tournament board written as text, for `#[serde(with = "tengen_rules::point_text")]`
/// (and its `option` and `vec` forms): it reads either notation ("pd" or "Q16"), so text from
/// people and old logs is read once, where it comes in, and it writes SGF ("pd"), the form the
/// record and the logs use, which reads back the same point.
#[cfg(feature = "serde")]
pub mod text {
    use serde::{de::Error as _, Deserialize, Deserializer, Serialize, Serializer};

    use super::Point;

    /// A point as text: the item of the `option` and `vec` forms.
    struct Text(Point);

    impl Serialize for Text {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(&self.0.to_sgf())
        }
    }

    impl<'de> Deserialize<'de> for Text {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let text = String::deserialize(deserializer)?;
            Point::parse_on_board(&text).map(Text).map_err(D::Error::custom)
        }
    }

    /// Writes a point as SGF text.
    pub fn serialize<S: Serializer>(point: &Point, serializer: S) -> Result<S::Ok, S::Error> {
        Text(*point).serialize(serializer)
    }

    /// Reads a point in either notation.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Point, D::Error> {
        Text::deserialize(deserializer).map(|t| t.0)
    }

    /// The same for an optional point (`null` or absent, with `#[serde(default)]`, is `None`).
    pub mod option {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        use super::{Point, Text};

        /// Writes the point as SGF text, or `null`.
        pub fn serialize<S: Serializer>(point: &Option<Point>, serializer: S) -> Result<S::Ok, S::Error> {
            point.map(Text).serialize(serializer)
        }

        /// Reads a point in either notation, or `null`.
        pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Point>, D::Error> {
            Option::<Text>::deserialize(deserializer).map(|p| p.map(|t| t.0))
        }
    }

    /// The same for a list of points.
    pub mod vec {
        use serde::{Deserialize, Deserializer, Serializer};

        use super::{Point, Text};

        /// Writes the points as SGF texts.
        pub fn serialize<S: Serializer>(points: &[Point], serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_seq(points.iter().map(|&p| Text(p)))
        }

        /// Reads points in either notation; one that is not a point of the board refuses all.
        pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Point>, D::Error> {
            Vec::<Text>::deserialize(deserializer).map(|v| v.into_iter().map(|t| t.0).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_round_trip_in_both_notations() {
        let p = Point::new(15, 3);
        assert_eq!(p.to_sgf(), "pd");
        assert_eq!(p.to_human(19), "Q16");
        assert_eq!(Point::from_sgf("pd", 19, 19), Ok(p));
        assert_eq!(Point::from_human("q16", 19, 19), Ok(p));
        assert_eq!(Point::parse("Q16", 19, 19), Ok(p));
        assert_eq!(Point::new(8, 18).to_human(19), "J1");
        assert!(Point::from_human("I5", 19, 19).is_err());
        assert!(Point::from_sgf("tt", 19, 19).is_err());
        assert!(Point::from_human("T20", 19, 19).is_err());
        assert!(Point::from_sgf("ha", 7, 7).is_err());
    }

    #[cfg(feature = "serde")]
    #[test]
    fn the_text_form_reads_either_notation_and_writes_sgf() {
        #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Form {
            #[serde(with = "super::text")]
            one: Point,
            #[serde(default, with = "super::text::option")]
            maybe: Option<Point>,
            #[serde(with = "super::text::vec")]
            many: Vec<Point>,
        }
        let q16 = Point::new(15, 3);
        let read: Form = serde_json::from_str(r#"{"one":"Q16","many":["pd","q16","A1"]}"#).expect("points");
        assert_eq!(read, Form { one: q16, maybe: None, many: vec![q16, q16, Point::new(0, 18)] });
        let written = serde_json::to_string(&read).expect("json");
        assert_eq!(written, r#"{"one":"pd","maybe":null,"many":["pd","pd","as"]}"#);
        assert_eq!(serde_json::from_str::<Form>(&written).ok(), Some(read));
        assert!(
            serde_json::from_str::<Form>(r#"{"one":"pd","maybe":"tt","many":[]}"#).is_err(),
            "a pass is not a point"
        );
        let off = serde_json::from_str::<Form>(r#"{"one":"pd","many":["pd","Z99"]}"#).expect_err("off the board");
        assert!(off.to_string().contains("Z99"), "{off}");
    }
}
