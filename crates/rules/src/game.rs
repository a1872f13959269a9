//! A game under Chinese practice: turn order, basic ko (Art. 20.1), illegal moves as verdicts
//! (Art. 5, 19), whole-board repetition flags (Art. 6) and no-result cycles (Art. 20.3).
//!
//! Every position is indexed by its stone count and Zobrist hash (equal boards have equal counts,
//! and between captures every count is new, so the chains are short). A hash hit is confirmed
//! against the stored board — a checkpoint kept every few positions, brought forward by replaying
//! the moves since — so a collision can never raise a false flag, while ordinary moves copy no
//! board at all.

use crate::board::{Board, PlaceError};
use crate::color::Color;
use crate::moves::Move;
use crate::point::Point;
use crate::stone::Stone;
use crate::zobrist::WHITE_TO_MOVE;

/// Why a move is illegal. The game is unchanged; under Art. 18.3/19 the caller may record the
/// attempt as void, counting as a pass ([`Game::void_move`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum IllegalReason {
    /// The point already holds a stone (Art. 2).
    Occupied,
    /// The stone would have no liberty and captures nothing (Art. 5, forbidden point).
    Suicide,
    /// Immediate recapture of a single-stone ko (Art. 20.1; retaking without a threat, Art. 18.3).
    Ko,
    /// The point is not on this board.
    OffBoard,
}

impl IllegalReason {
    /// The article that makes it illegal.
    pub fn article(self) -> &'static str {
        match self {
            IllegalReason::Occupied => "2",
            IllegalReason::Suicide => "19",
            IllegalReason::Ko => "18.3",
            IllegalReason::OffBoard => "1",
        }
    }

    /// A short English description.
    pub fn describe(self) -> &'static str {
        match self {
            IllegalReason::Occupied => "point already occupied",
            IllegalReason::Suicide => "forbidden point: the stone would have no liberty (suicide)",
            IllegalReason::Ko => "immediate recapture of a ko",
            IllegalReason::OffBoard => "point outside the board",
        }
    }
}

/// An illegal move, with its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{color} at {point:?}: {}", reason.describe())]
pub struct Illegal {
    /// Who tried to move.
    pub color: Color,
    /// Where.
    pub point: Point,
    /// Why it is illegal.
    pub reason: IllegalReason,
}

/// A recurrence of an earlier whole-board position (Art. 6): legal, flagged for the arbiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Repetition {
    /// The move number after which the same board first stood (0 = the start position).
    pub first_seen_after_move: u32,
    /// Whether the same player was to move then too.
    pub same_player_to_move: bool,
}

/// What a legal move did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MoveOutcome {
    /// The move number this move received (1-based; passes and void moves count).
    pub move_number: u32,
    /// Stones removed by this move (Art. 4).
    pub captured: Vec<Point>,
    /// The player moved out of turn: two moves in a row, or an unrecorded pass (Art. 17.2).
    pub out_of_turn: bool,
    /// The board after this move occurred before (Art. 6).
    pub repetition: Option<Repetition>,
    /// The same position with the same player to move has now occurred three times since the
    /// last pass: a cycle such as triple ko or eternal life (Art. 20.3, no result).
    pub no_result: bool,
    /// The point the opponent may not retake at once (a ko was just taken).
    pub ko_point: Option<Point>,
}

/// A setup that cannot stand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The board size is not supported.
    #[error("unsupported board size {width}x{height} (1 to 19 on each side)")]
    BadSize {
        /// Requested width.
        width: u8,
        /// Requested height.
        height: u8,
    },
    /// A setup point is outside the board.
    #[error("setup point {point:?} is outside the board")]
    OffBoard {
        /// The point.
        point: Point,
    },
    /// After setup, a chain has no liberty (it could not stand on a real board, Art. 3).
    #[error("setup leaves the chain at {point:?} without liberties")]
    NoLiberties {
        /// A point of the chain.
        point: Point,
    },
}

const NO_POSITION: u32 = u32::MAX;

/// Positions between stored board checkpoints; a hash hit replays at most this many moves.
const CHECKPOINT_EVERY: usize = 32;

/// One position of the game's history.
#[derive(Clone)]
struct Position {
    hash: u64,
    to_move: Color,
    /// Move number after which this position stood.
    after_move: u32,
    /// Earlier position with the same number of stones, or `NO_POSITION`.
    previous_same_stones: u32,
}

/// A game: the legal board, whose turn it is, the ko point, and the history of positions.
#[derive(Clone)]
pub struct Game {
    board: Board,
    to_move: Color,
    ko: Option<usize>,
    move_number: u32,
    /// Index (into `positions`) of the first position after the latest pass.
    since_pass: u32,
    consecutive_passes: u32,
    positions: Vec<Position>,
    /// `transitions[k]` leads from position `k` to `k + 1`: a stone (colour, cell) or a pass.
    transitions: Vec<Option<(Color, u16)>>,
    /// Cells of positions 0, `CHECKPOINT_EVERY`, 2 × `CHECKPOINT_EVERY` …, `cells_len` bytes each.
    checkpoints: Vec<u8>,
    cells_len: usize,
    /// Latest position holding each number of stones, or `NO_POSITION`.
    latest_by_stones: Vec<u32>,
}

impl std::fmt::Debug for Game {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Game after move {}, {} to move\n{:?}", self.move_number, self.to_move, self.board)
    }
}

impl Game {
    /// A new game on an empty board, Black to move.
    pub fn new(width: u8, height: u8) -> Result<Self, SetupError> {
        let board = Board::new(width, height).ok_or(SetupError::BadSize { width, height })?;
        Ok(Self::from_board(board, Color::Black))
    }

    /// A game starting from a given board (handicap stones, a recorded position).
    pub fn from_board(board: Board, to_move: Color) -> Self {
        let cells_len = board.raw_cells().len();
        let mut game = Game {
            board,
            to_move,
            ko: None,
            move_number: 0,
            since_pass: 0,
            consecutive_passes: 0,
            positions: Vec::with_capacity(400),
            transitions: Vec::with_capacity(400),
            checkpoints: Vec::with_capacity(16 * cells_len),
            cells_len,
            latest_by_stones: Vec::new(),
        };
        game.latest_by_stones = vec![NO_POSITION; game.board.area() + 1];
        game.record_position(None);
        game
    }

    /// The legal board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// Whose turn it is.
    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// Moves played so far (passes and void moves included).
    pub fn move_number(&self) -> u32 {
        self.move_number
    }

    /// Passes in a row at the end of the record; two end play (Art. 7.3).
    pub fn consecutive_passes(&self) -> u32 {
        self.consecutive_passes
    }

    /// The point where the player to move may not recapture at once, if any.
    pub fn ko_point(&self) -> Option<Point> {
        self.ko.map(|idx| self.board.point_of(idx))
    }

    /// Setup stones (SGF `AB`/`AW`/`AE`) placed mid-record; fails, leaving the game unchanged,
    /// when a point is off the board or a chain is left without liberties.
    pub fn setup(&mut self, black: &[Point], white: &[Point], empty: &[Point]) -> Result<(), SetupError> {
        let mut board = self.board.clone();
        for (points, stone) in
            [(empty, Stone::Empty), (black, Stone::Of(Color::Black)), (white, Stone::Of(Color::White))]
        {
            for &p in points {
                if !board.contains(p) {
                    return Err(SetupError::OffBoard { point: p });
                }
                board.set_raw(p, stone);
            }
        }
        board.rebuild_chains();
        if let Some(&point) = board.chains_without_liberties().first() {
            return Err(SetupError::NoLiberties { point });
        }
        self.board = board;
        self.ko = None;
        // A setup changes the position outside play: earlier positions no longer repeat it.
        self.positions.clear();
        self.transitions.clear();
        self.checkpoints.clear();
        self.latest_by_stones.fill(NO_POSITION);
        self.since_pass = 0;
        self.record_position(None);
        Ok(())
    }

    /// Sets whose turn it is (SGF `PL`, or an arbiter's decision).
    pub fn set_to_move(&mut self, color: Color) {
        self.to_move = color;
    }

    /// Checks a move without playing it.
    pub fn check(&self, color: Color, mv: Move) -> Result<(), Illegal> {
        let Move::Place(point) = mv else { return Ok(()) };
        if !self.board.contains(point) {
            return Err(Illegal { color, point, reason: IllegalReason::OffBoard });
        }
        let idx = self.board.index(point);
        if self.ko == Some(idx) && color == self.to_move {
            return Err(Illegal { color, point, reason: IllegalReason::Ko });
        }
        self.board.is_legal_placement(color, point).then_some(()).ok_or_else(|| {
            let reason =
                if self.board.get(point) == Stone::Empty { IllegalReason::Suicide } else { IllegalReason::Occupied };
            Illegal { color, point, reason }
        })
    }

    /// Plays a move for `color` (normally the player to move; out of turn is allowed and
    /// reported, since a camera cannot see passes). An illegal move leaves the game unchanged.
    pub fn play(&mut self, color: Color, mv: Move) -> Result<MoveOutcome, Illegal> {
        let point = match mv {
            Move::Pass => return Ok(self.pass(color)),
            Move::Place(point) => point,
        };
        if !self.board.contains(point) {
            return Err(Illegal { color, point, reason: IllegalReason::OffBoard });
        }
        let idx = self.board.index(point);
        let out_of_turn = color != self.to_move;
        // Ko forbids the immediate recapture by the player whose turn it is.
        if self.ko == Some(idx) && !out_of_turn {
            return Err(Illegal { color, point, reason: IllegalReason::Ko });
        }
        let captured_count = self.board.place(color, idx).map_err(|e| Illegal {
            color,
            point,
            reason: match e {
                PlaceError::Occupied => IllegalReason::Occupied,
                PlaceError::Suicide => IllegalReason::Suicide,
            },
        })?;
        let captured: Vec<Point> = if captured_count == 0 {
            Vec::new()
        } else {
            self.board.last_captured_cells().iter().map(|&c| self.board.point_of(usize::from(c))).collect()
        };
        self.ko = None;
        if captured_count == 1 {
            let (libs, size) = self.board.chain_stats(idx);
            if libs == 1 && size == 1 {
                self.ko = Some(usize::from(self.board.last_captured_cells()[0]));
            }
        }
        self.move_number += 1;
        self.consecutive_passes = 0;
        self.to_move = color.opponent();
        let (repetition, no_result) = self.record_position(Some((color, idx as u16)));
        Ok(MoveOutcome {
            move_number: self.move_number,
            captured,
            out_of_turn,
            repetition,
            no_result,
            ko_point: self.ko_point(),
        })
    }

    /// A pass by `color` (also what a void move counts as, Art. 18.3 and 19).
    pub fn pass(&mut self, color: Color) -> MoveOutcome {
        let out_of_turn = color != self.to_move;
        self.move_number += 1;
        self.consecutive_passes += 1;
        self.ko = None;
        self.to_move = color.opponent();
        self.since_pass = self.positions.len() as u32;
        self.record_position(None);
        MoveOutcome { move_number: self.move_number, out_of_turn, ..MoveOutcome::default() }
    }

    /// Records an illegal move as void: it counts as a pass for that player (Art. 18.3, 19).
    pub fn void_move(&mut self, illegal: &Illegal) -> MoveOutcome {
        self.pass(illegal.color)
    }

    /// Stores the current position, reached by `transition` (`None` at the start or after a
    /// pass); reports whether the board occurred before and whether the (board, player to move)
    /// pair has now occurred three times since the last pass.
    fn record_position(&mut self, transition: Option<(Color, u16)>) -> (Option<Repetition>, bool) {
        let hash = self.board.hash();
        let index = self.positions.len() as u32;
        let slot = self.board.stone_total();
        let previous = std::mem::replace(&mut self.latest_by_stones[slot], index);
        let mut repetition = None;
        let mut same_situation = 0;
        let mut earlier = previous;
        while earlier != NO_POSITION {
            let pos = &self.positions[earlier as usize];
            // Confirm a hash hit against the stored board: a collision is never a repetition.
            if pos.hash == hash && self.board_at(earlier as usize).raw_cells() == self.board.raw_cells() {
                let pos = &self.positions[earlier as usize];
                let same_player = pos.to_move == self.to_move;
                repetition =
                    Some(Repetition { first_seen_after_move: pos.after_move, same_player_to_move: same_player });
                if same_player && earlier >= self.since_pass {
                    same_situation += 1;
                }
            }
            earlier = self.positions[earlier as usize].previous_same_stones;
        }
        if index > 0 {
            self.transitions.push(transition);
        }
        if (index as usize).is_multiple_of(CHECKPOINT_EVERY) {
            self.checkpoints.extend_from_slice(self.board.raw_cells());
        }
        self.positions.push(Position {
            hash,
            to_move: self.to_move,
            after_move: self.move_number,
            previous_same_stones: previous,
        });
        (repetition, same_situation >= 2)
    }

    /// The board of an earlier position: its checkpoint, brought forward by the moves since.
    fn board_at(&self, index: usize) -> Board {
        let checkpoint = index / CHECKPOINT_EVERY;
        let start = checkpoint * self.cells_len;
        let mut board = self.board.with_raw_cells(&self.checkpoints[start..start + self.cells_len]);
        for &(color, cell) in self.transitions[checkpoint * CHECKPOINT_EVERY..index].iter().flatten() {
            // Every recorded transition was legal when played, so replaying it cannot fail.
            let _ = board.place(color, usize::from(cell));
        }
        board
    }

    /// Position key including the player to move (situational).
    pub fn situation_hash(&self) -> u64 {
        match self.to_move {
            Color::Black => self.board.hash(),
            Color::White => self.board.hash() ^ WHITE_TO_MOVE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str, g: &Game) -> Point {
        Point::from_sgf(s, g.board().width(), g.board().height()).expect("test point")
    }

    fn play_all(g: &mut Game, moves: &[&str]) -> Vec<MoveOutcome> {
        let mut out = Vec::new();
        for m in moves {
            let color = g.to_move();
            let mv = if m.is_empty() { Move::Pass } else { Move::Place(p(m, g)) };
            out.push(g.play(color, mv).unwrap_or_else(|e| panic!("{m}: {e}")));
        }
        out
    }

    #[test]
    fn ko_cannot_be_retaken_at_once_but_can_after_a_threat() {
        let mut g = Game::from_board(
            Board::from_rows(&[".....", ".XO..", "X.XO.", ".XO..", "....."]).expect("board"),
            Color::White,
        );
        let take = g.play(Color::White, Move::Place(p("bc", &g))).expect("white captures c3");
        assert_eq!(take.captured, vec![p("cc", &g)]);
        assert_eq!(take.ko_point, Some(p("cc", &g)));
        let retake = g.play(Color::Black, Move::Place(p("cc", &g)));
        assert_eq!(retake.map_err(|e| e.reason), Err(IllegalReason::Ko));
        play_all(&mut g, &["ee", "ea"]); // Black threatens elsewhere, White answers.
        let retake = g.play(Color::Black, Move::Place(p("cc", &g))).expect("legal after a threat");
        assert_eq!(retake.captured, vec![p("bc", &g)]);
        assert_eq!(retake.repetition, None, "new stones elsewhere: no repetition");
    }

    #[test]
    fn illegal_moves_leave_the_game_unchanged_and_void_counts_as_pass() {
        let mut g = Game::from_board(Board::from_rows(&[".X.", "X..", "..."]).expect("board"), Color::White);
        let before = g.board().clone();
        let err = g.play(Color::White, Move::Place(p("aa", &g))).expect_err("suicide");
        assert_eq!(err.reason, IllegalReason::Suicide);
        assert_eq!(g.board(), &before);
        assert_eq!(g.to_move(), Color::White);
        g.void_move(&err);
        assert_eq!(g.to_move(), Color::Black);
        assert_eq!(g.move_number(), 1);
        let err = g.play(Color::Black, Move::Place(p("ba", &g))).expect_err("occupied");
        assert_eq!(err.reason, IllegalReason::Occupied);
    }

    #[test]
    fn out_of_turn_is_reported_not_refused() {
        let mut g = Game::new(9, 9).expect("size");
        g.play(Color::Black, Move::Place(Point::new(2, 2))).expect("legal");
        let o = g.play(Color::Black, Move::Place(Point::new(6, 6))).expect("legal but out of turn");
        assert!(o.out_of_turn);
        assert_eq!(g.to_move(), Color::White);
    }

    #[test]
    fn a_pass_does_not_count_as_a_repetition() {
        let mut g = Game::new(9, 9).expect("size");
        let outs = play_all(&mut g, &["cc", "", "", "gg"]);
        assert!(outs.iter().all(|o| o.repetition.is_none()));
        assert_eq!(outs[2].move_number, 3);
    }

    #[test]
    fn stored_boards_are_rebuilt_exactly_from_checkpoints_and_moves() {
        // A long game on a small board, full of captures and passes, crossing many checkpoints.
        let mut g = Game::new(5, 5).expect("size");
        let mut seen = vec![g.board().rows()];
        let mut seed = 7u64;
        while g.positions.len() < 5 * CHECKPOINT_EVERY {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let color = g.to_move();
            let mv = if seed >> 60 == 0 {
                Move::Pass
            } else {
                Move::Place(Point::new(((seed >> 33) % 5) as u8, ((seed >> 45) % 5) as u8))
            };
            if g.play(color, mv).is_ok() {
                seen.push(g.board().rows());
            }
        }
        for (index, rows) in seen.iter().enumerate() {
            assert_eq!(&g.board_at(index).rows(), rows, "position {index}");
        }
    }
}
