//! What stands on a point of a board the rules judge: nothing, or a stone of a colour.

use crate::color::Color;

/// What stands on a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(from = "StoneName", into = "StoneName"))]
pub enum Stone {
    /// No stone.
    #[default]
    Empty,
    /// A stone of this colour.
    Of(Color),
}

impl Stone {
    /// A black stone.
    pub const BLACK: Stone = Stone::Of(Color::Black);
    /// A white stone.
    pub const WHITE: Stone = Stone::Of(Color::White);

    /// The stone's colour, `None` on an empty point.
    #[inline]
    pub fn color(self) -> Option<Color> {
        match self {
            Stone::Empty => None,
            Stone::Of(c) => Some(c),
        }
    }

    /// The board-text character: `.` empty, `X` black, `O` white (see [`crate::board_text`]).
    pub fn to_char(self) -> char {
        match self {
            Stone::Empty => '.',
            Stone::Of(Color::Black) => 'X',
            Stone::Of(Color::White) => 'O',
        }
    }

    /// Reads a board-text character: `.`/`+` empty, `X`/`B` black, `O`/`W` white (either case).
    pub fn from_char(c: char) -> Option<Stone> {
        match c {
            '.' | '+' => Some(Stone::Empty),
            'X' | 'x' | 'B' | 'b' => Some(Stone::BLACK),
            'O' | 'o' | 'W' | 'w' => Some(Stone::WHITE),
            _ => None,
        }
    }
}

impl From<Color> for Stone {
    fn from(color: Color) -> Self {
        Stone::Of(color)
    }
}

impl From<Option<Color>> for Stone {
    fn from(color: Option<Color>) -> Self {
        color.map_or(Stone::Empty, Stone::Of)
    }
}

/// A stone's name on the wire: "empty", "black" or "white" (older files wrote them
/// capitalised).
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StoneName {
    #[serde(alias = "Empty")]
    Empty,
    #[serde(alias = "Black")]
    Black,
    #[serde(alias = "White")]
    White,
}

#[cfg(feature = "serde")]
impl From<StoneName> for Stone {
    fn from(name: StoneName) -> Self {
        match name {
            StoneName::Empty => Stone::Empty,
            StoneName::Black => Stone::BLACK,
            StoneName::White => Stone::WHITE,
        }
    }
}

#[cfg(feature = "serde")]
impl From<Stone> for StoneName {
    fn from(stone: Stone) -> Self {
        match stone {
            Stone::Empty => StoneName::Empty,
            Stone::Of(Color::Black) => StoneName::Black,
            Stone::Of(Color::White) => StoneName::White,
        }
    }
}
