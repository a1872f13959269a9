//! What a camera makes of one point: empty, a black or a white stone, or unknown (covered by a
//! hand, off the frame, too doubtful to say).

use crate::color::Color;
use crate::stone::Stone;

/// What one point was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum PointState {
    /// No stone.
    #[cfg_attr(feature = "serde", serde(alias = "Empty"))]
    Empty,
    /// A black stone.
    #[cfg_attr(feature = "serde", serde(alias = "Black"))]
    Black,
    /// A white stone.
    #[cfg_attr(feature = "serde", serde(alias = "White"))]
    White,
    /// Cannot be read: covered, off the grid, a stone between points, too doubtful (`?`).
    // Older logs and readings named it "occluded" (the service) or "Unknown" (the vision).
    #[default]
    #[cfg_attr(feature = "serde", serde(alias = "Unknown", alias = "occluded"))]
    Unknown,
}

impl PointState {
    /// The stone this reading names, `None` for unknown.
    #[inline]
    pub fn stone(self) -> Option<Stone> {
        match self {
            PointState::Empty => Some(Stone::Empty),
            PointState::Black => Some(Stone::BLACK),
            PointState::White => Some(Stone::WHITE),
            PointState::Unknown => None,
        }
    }

    /// The colour of the stone read, `None` for empty or unknown.
    #[inline]
    pub fn color(self) -> Option<Color> {
        self.stone().and_then(Stone::color)
    }

    /// Whether the point could not be read.
    #[inline]
    pub fn is_unknown(self) -> bool {
        self == PointState::Unknown
    }

    /// The board-text character: `.` empty, `X` black, `O` white, `?` unknown.
    pub fn to_char(self) -> char {
        self.stone().map_or('?', Stone::to_char)
    }

    /// Reads a board-text character: those of [`Stone::from_char`], and `?` unknown.
    pub fn from_char(c: char) -> Option<PointState> {
        if c == '?' {
            return Some(PointState::Unknown);
        }
        Stone::from_char(c).map(PointState::from)
    }
}

impl From<Stone> for PointState {
    fn from(stone: Stone) -> Self {
        match stone {
            Stone::Empty => PointState::Empty,
            Stone::Of(Color::Black) => PointState::Black,
            Stone::Of(Color::White) => PointState::White,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_round_trips_through_its_character_and_stone() {
        for state in [PointState::Empty, PointState::Black, PointState::White, PointState::Unknown] {
            assert_eq!(PointState::from_char(state.to_char()), Some(state));
            if let Some(stone) = state.stone() {
                assert_eq!(PointState::from(stone), state);
                assert_eq!(Stone::from_char(stone.to_char()), Some(stone));
            }
        }
        assert_eq!(PointState::from_char('B'), Some(PointState::Black));
        assert_eq!(PointState::from_char('w'), Some(PointState::White));
        assert_eq!(PointState::from_char('+'), Some(PointState::Empty));
        assert_eq!(PointState::from_char('Z'), None);
        assert_eq!(Stone::from_char('?'), None);
    }
}
