//! Chinese-rules Go engine (2002 rules of the Chinese Weiqi Association): the board, chains and
//! liberties, captures, forbidden points, basic ko, whole-board repetition flags, area counting
//! with komi and warnings, and a dead-stone suggestion.
//!
//! Pure data in, data out: no I/O, no clocks, no async. Illegal moves are verdicts
//! ([`Illegal`]), never panics, so a referee can record them as infractions and go on.

mod board;
mod coord;
mod dead;
mod game;
mod score;
mod zobrist;

pub use board::{Board, Stone};
pub use coord::{Color, CoordError, Move, Point, MAX_BOARD_SIZE};
pub use dead::{pass_alive_chains, suggest_dead, DeadSuggestion};
pub use game::{Game, Illegal, IllegalReason, MoveOutcome, Repetition, SetupError};
pub use score::{count_area, AreaCount, GameResult, Komi, Penalties, ResultError};
