//! The two colours of stones and players, and [`ByColor`], one value for each side.

use std::fmt;
use std::ops::{Index, IndexMut};

/// The colour of a stone or of a player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Color {
    /// Black, who moves first (Art. 2).
    Black,
    /// White.
    White,
}

impl Color {
    /// Both colours, Black first.
    pub const ALL: [Color; 2] = [Color::Black, Color::White];

    /// The other colour.
    #[inline]
    pub fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// "black" or "white".
    pub fn name(self) -> &'static str {
        match self {
            Color::Black => "black",
            Color::White => "white",
        }
    }

    /// "Black" or "White", to start a sentence.
    pub fn title(self) -> &'static str {
        match self {
            Color::Black => "Black",
            Color::White => "White",
        }
    }

    /// The Chinese name, 黑 or 白.
    pub fn chinese(self) -> &'static str {
        match self {
            Color::Black => "黑",
            Color::White => "白",
        }
    }

    /// The SGF property letter, `B` or `W`.
    pub fn sgf_letter(self) -> char {
        match self {
            Color::Black => 'B',
            Color::White => 'W',
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One value for each side: warnings, captures, stone counts. Indexed by [`Color`]; on the wire
/// it is the pair `[black, white]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ByColor<T> {
    /// Black's value.
    pub black: T,
    /// White's value.
    pub white: T,
}

impl<T> ByColor<T> {
    /// The pair from Black's and White's values.
    pub const fn new(black: T, white: T) -> Self {
        ByColor { black, white }
    }

    /// The pair with each side's value computed from its colour.
    pub fn new_with(mut value: impl FnMut(Color) -> T) -> Self {
        ByColor { black: value(Color::Black), white: value(Color::White) }
    }

    /// One side's value.
    #[inline]
    pub fn get(&self, color: Color) -> &T {
        match color {
            Color::Black => &self.black,
            Color::White => &self.white,
        }
    }

    /// One side's value, to change.
    #[inline]
    pub fn get_mut(&mut self, color: Color) -> &mut T {
        match color {
            Color::Black => &mut self.black,
            Color::White => &mut self.white,
        }
    }

    /// Both values transformed alike.
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> ByColor<U> {
        ByColor { black: f(self.black), white: f(self.white) }
    }

    /// The values by reference.
    pub fn as_ref(&self) -> ByColor<&T> {
        ByColor { black: &self.black, white: &self.white }
    }

    /// Black's then White's value, with their colours.
    pub fn iter(&self) -> impl Iterator<Item = (Color, &T)> {
        [(Color::Black, &self.black), (Color::White, &self.white)].into_iter()
    }

    /// The values swapped between the sides.
    pub fn swapped(self) -> Self {
        ByColor { black: self.white, white: self.black }
    }
}

impl<T> Index<Color> for ByColor<T> {
    type Output = T;
    fn index(&self, color: Color) -> &T {
        self.get(color)
    }
}

impl<T> IndexMut<Color> for ByColor<T> {
    fn index_mut(&mut self, color: Color) -> &mut T {
        self.get_mut(color)
    }
}

#[cfg(feature = "serde")]
impl<T: serde::Serialize> serde::Serialize for ByColor<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.black, &self.white).serialize(serializer)
    }
}

#[cfg(feature = "serde")]
impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for ByColor<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (black, white) = <(T, T)>::deserialize(deserializer)?;
        Ok(ByColor { black, white })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_color_is_indexed_by_colour_and_maps_both_sides() {
        let mut warnings = ByColor::new(1u32, 0);
        warnings[Color::White] += 2;
        assert_eq!((warnings[Color::Black], warnings.white), (1, 2));
        assert_eq!(warnings.map(|w| w * 10), ByColor::new(10, 20));
        assert_eq!(ByColor::new_with(Color::opponent), ByColor::new(Color::White, Color::Black));
        assert_eq!(warnings.swapped(), ByColor::new(2, 1));
        let sides: Vec<_> = warnings.iter().map(|(c, &w)| (c, w)).collect();
        assert_eq!(sides, vec![(Color::Black, 1), (Color::White, 2)]);
    }
}
