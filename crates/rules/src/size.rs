//! Board sizes: the largest board the rules engine takes, and the tournament board that
//! cameras read, the referee judges and the service shows.

/// The largest board side the rules engine supports (a tournament board).
pub const MAX_BOARD_SIZE: u8 = 19;

/// Lines each way on the tournament board (19×19): what the vision reads, the referee judges
/// and the service shows.
pub const BOARD_LINES: usize = MAX_BOARD_SIZE as usize;

/// Intersections on the tournament board.
pub const BOARD_POINTS: usize = BOARD_LINES * BOARD_LINES;
