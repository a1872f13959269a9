//! Chinese-rules Go engine (2002 rules of the Chinese Weiqi Association): the board, chains and
//! liberties, captures, forbidden points, basic ko, whole-board repetition flags, area counting
//! with komi and warnings, and a dead-stone suggestion.
//!
//! It also holds the Go vocabulary every other crate speaks, one type a file: [`Color`] and
//! [`ByColor`], [`Point`] (SGF "pd" and the people's "Q16"; `point_text` is its serde form as
//! text), [`Stone`] and [`PointState`] (what is on a point, or unknown), [`Move`], the board
//! sizes, the board text codec ([`board_text`]) and [`Grid`], a value for each point of the
//! tournament board.
//!
//! Pure data in, data out: no I/O, no clocks, no async. Illegal moves are verdicts
//! ([`Illegal`]), never panics, so a referee can record them as infractions and go on.

mod board;
pub mod board_text;
mod color;
mod dead;
mod game;
mod grid;
mod handicap;
mod moves;
mod point;
mod point_state;
mod score;
mod size;
mod stone;
mod zobrist;

pub use board::Board;
pub use board_text::{BoardChar, BoardTextError};
pub use color::{ByColor, Color};
pub use dead::{pass_alive_chains, suggest_dead, DeadSuggestion};
pub use game::{Game, Illegal, IllegalReason, MoveOutcome, Repetition, SetupError};
pub use grid::Grid;
pub use handicap::{handicap_placements, handicap_points, HandicapError, MAX_HANDICAP, MIN_HANDICAP};
pub use moves::Move;
#[cfg(feature = "serde")]
pub use point::text as point_text;
pub use point::{CoordError, Point};
pub use point_state::PointState;
pub use score::{count_area, AreaCount, GameResult, Komi, Penalties, ResultError};
pub use size::{BOARD_LINES, BOARD_POINTS, MAX_BOARD_SIZE};
pub use stone::Stone;
