//! What a player does on a turn: a stone on a point, or a pass.

use crate::point::Point;

/// What a player does on their turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Move {
    /// A stone on a point.
    Place(Point),
    /// Giving up the turn (虛著, Art. 2).
    Pass,
}
