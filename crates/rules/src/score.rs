//! Area counting (數子法, Art. 9), komi (Art. 11), warnings (Art. 24) and the result in the
//! three forms an arbiter writes: exact stones, points, and the customary Chinese half-stone form.

use crate::board::Board;
use crate::color::{ByColor, Color};
use crate::point::Point;
use crate::stone::Stone;

/// Komi, held in points (7½ points = 3¾ stones, the default since 2001).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Komi {
    /// Points White receives; in stones that is half as many.
    pub points: f64,
}

impl Default for Komi {
    fn default() -> Self {
        Komi { points: 7.5 }
    }
}

impl Komi {
    /// Komi given in stones (3.75 stones = 7.5 points).
    pub fn from_stones(stones: f64) -> Self {
        Komi { points: stones * 2.0 }
    }

    /// Komi in stones.
    pub fn stones(self) -> f64 {
        self.points / 2.0
    }
}

/// Confirmed warnings per side (Art. 24): each costs its side one stone; two lose the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Penalties {
    /// Confirmed warnings against each side.
    pub warnings: ByColor<u32>,
}

/// The count of a final position with the dead stones removed.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AreaCount {
    /// Intersections on the board.
    pub board_points: usize,
    /// Black's live stones.
    pub black_stones: usize,
    /// White's live stones.
    pub white_stones: usize,
    /// Empty points surrounded by Black only.
    pub black_territory: usize,
    /// Empty points surrounded by White only.
    pub white_territory: usize,
    /// Empty points touching both colours or neither (dame, seki liberties): half to each.
    pub shared: usize,
    /// Black stones removed as dead.
    pub dead_black: usize,
    /// White stones removed as dead.
    pub dead_white: usize,
}

impl AreaCount {
    /// Black's area: stones + territory + half the shared points.
    pub fn black_area(&self) -> f64 {
        (self.black_stones + self.black_territory) as f64 + self.shared as f64 / 2.0
    }

    /// White's area: stones + territory + half the shared points.
    pub fn white_area(&self) -> f64 {
        (self.white_stones + self.white_territory) as f64 + self.shared as f64 / 2.0
    }

    /// The par (歸本數): half the board, 180.5 on 19×19.
    pub fn par(&self) -> f64 {
        self.board_points as f64 / 2.0
    }

    /// The result under `komi` with `penalties` (Art. 9, 11, 24).
    pub fn result(&self, komi: Komi, penalties: Penalties) -> GameResult {
        GameResult::from_count(self, komi, penalties)
    }
}

/// Counts a position by area after removing the chains through `dead` (Art. 8, 9).
pub fn count_area(board: &Board, dead: &[Point]) -> AreaCount {
    let mut board = board.clone();
    let (mut dead_black, mut dead_white) = (0, 0);
    for &p in dead {
        match board.get(p) {
            Stone::Of(Color::Black) => dead_black += board.remove_chain_at(p),
            Stone::Of(Color::White) => dead_white += board.remove_chain_at(p),
            Stone::Empty => {}
        }
    }
    let ByColor { black: black_stones, white: white_stones } = board.stone_counts();
    let (mut black_territory, mut white_territory, mut shared) = (0, 0, 0);
    let mut seen = vec![false; board.area()];
    let slot = |p: Point| usize::from(p.row) * usize::from(board.width()) + usize::from(p.col);
    for start in board.points() {
        if board.get(start) != Stone::Empty || seen[slot(start)] {
            continue;
        }
        // Flood one empty region and note which colours border it.
        let (mut size, mut touches_black, mut touches_white) = (0, false, false);
        let mut stack = vec![start];
        seen[slot(start)] = true;
        while let Some(q) = stack.pop() {
            size += 1;
            for n in board.adjacent(q) {
                match board.get(n) {
                    Stone::Empty if !seen[slot(n)] => {
                        seen[slot(n)] = true;
                        stack.push(n);
                    }
                    Stone::Of(Color::Black) => touches_black = true,
                    Stone::Of(Color::White) => touches_white = true,
                    Stone::Empty => {}
                }
            }
        }
        match (touches_black, touches_white) {
            (true, false) => black_territory += size,
            (false, true) => white_territory += size,
            _ => shared += size,
        }
    }
    AreaCount {
        board_points: board.area(),
        black_stones,
        white_stones,
        black_territory,
        white_territory,
        shared,
        dead_black,
        dead_white,
    }
}

/// The outcome of a counted game.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GameResult {
    /// The winner; `None` for a draw (jigo).
    pub winner: Option<Color>,
    /// Black's margin in stones after komi and penalties (negative: White ahead).
    pub black_margin_stones: f64,
    /// Black's area after penalties, as compared with the par.
    pub black_count: f64,
    /// A side that lost by a second warning (Art. 24.2), which overrides the count.
    pub lost_by_warnings: Option<Color>,
}

/// A result that cannot be formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultError {
    /// The text is not a result in any form this engine reads.
    #[error("`{0}` is not a result (expected e.g. B+1.5, W+R, 0, Draw)")]
    Malformed(String),
}

impl GameResult {
    /// Applies komi and penalties to a count. Each warning costs the warned side one stone
    /// (罰出一子): Black's count goes down by one for Black's, up by one for White's (the stone
    /// passes to the opponent, as when counting Black's stones only); two warnings lose.
    pub fn from_count(count: &AreaCount, komi: Komi, penalties: Penalties) -> Self {
        let warnings = penalties.warnings;
        let black_count = count.black_area() - f64::from(warnings.black) + f64::from(warnings.white);
        let margin = black_count - count.par() - komi.stones();
        let lost_by_warnings = match (warnings.black >= 2, warnings.white >= 2) {
            (true, false) => Some(Color::Black),
            (false, true) => Some(Color::White),
            _ => None,
        };
        let winner = match lost_by_warnings {
            Some(loser) => Some(loser.opponent()),
            None if margin.abs() < 1e-9 => None,
            None if margin > 0.0 => Some(Color::Black),
            None => Some(Color::White),
        };
        GameResult { winner, black_margin_stones: margin, black_count, lost_by_warnings }
    }

    /// Margin in stones for the winner (0 for a draw).
    pub fn margin_stones(&self) -> f64 {
        self.black_margin_stones.abs()
    }

    /// Exact form in English, e.g. "Black wins by ¾ stone".
    pub fn exact(&self) -> String {
        if let Some(loser) = self.lost_by_warnings {
            return format!(
                "{} wins: {} received a second warning (Art. 24.2)",
                capitalise(loser.opponent().name()),
                loser.name()
            );
        }
        match self.winner {
            None => "Draw (jigo)".to_string(),
            Some(c) => {
                let m = self.margin_stones();
                let unit = if (m - 1.0).abs() < 1e-9 || m < 1.0 { "stone" } else { "stones" };
                format!("{} wins by {} {unit}", capitalise(c.name()), stones_fraction(m))
            }
        }
    }

    /// Points form as in SGF `RE`, e.g. "B+1.5"; "B+F" style for a loss by warnings; "0" for a draw.
    pub fn points(&self) -> String {
        if let Some(loser) = self.lost_by_warnings {
            return format!("{}+F", loser.opponent().sgf_letter());
        }
        match self.winner {
            None => "0".to_string(),
            Some(c) => format!("{}+{}", c.sgf_letter(), trim_number(self.margin_stones() * 2.0)),
        }
    }

    /// The customary Chinese form (Art. 11): quarter margins are spoken as half stones,
    /// e.g. 黑勝1/2子 for both ¾ and ¼ stone.
    pub fn customary(&self) -> String {
        if let Some(loser) = self.lost_by_warnings {
            return format!("{}勝（{}方兩次警告判負）", loser.opponent().chinese(), loser.chinese());
        }
        match self.winner {
            None => "和棋".to_string(),
            Some(c) => {
                let m = self.margin_stones();
                let whole = m.floor();
                let frac = m - whole;
                // ¼ and ¾ are said as ½; whole and half margins are said as they are.
                let halves = if (frac - 0.25).abs() < 1e-9 || (frac - 0.75).abs() < 1e-9 || (frac - 0.5).abs() < 1e-9 {
                    1
                } else {
                    0
                };
                let whole = whole as u64;
                let text = match (whole, halves) {
                    (0, _) => "1/2".to_string(),
                    (w, 0) => w.to_string(),
                    (w, _) => format!("{w}又1/2"),
                };
                format!("{}勝{}子", c.chinese(), text)
            }
        }
    }
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|f| f.to_uppercase().collect::<String>() + chars.as_str()).unwrap_or_default()
}

/// 0.75 → "¾", 2.25 → "2¼", 3.0 → "3".
fn stones_fraction(m: f64) -> String {
    let whole = m.floor();
    let quarters = ((m - whole) * 4.0).round() as u8;
    let frac = match quarters {
        1 => "¼",
        2 => "½",
        3 => "¾",
        _ => "",
    };
    match (whole as u64, frac) {
        (0, "") => "0".to_string(),
        (0, f) => f.to_string(),
        (w, f) => format!("{w}{f}"),
    }
}

fn trim_number(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_with_black_area(black: f64) -> AreaCount {
        // A 19×19 count whose black area is `black` (using shared points for halves).
        let shared = if black.fract() != 0.0 { 1 } else { 0 };
        let black_stones = (black - shared as f64 / 2.0) as usize;
        AreaCount {
            board_points: 361,
            black_stones,
            white_stones: 361 - black_stones - shared,
            black_territory: 0,
            white_territory: 0,
            shared,
            dead_black: 0,
            dead_white: 0,
        }
    }

    #[test]
    fn article_11_examples() {
        let k = Komi::default();
        for (black_area, forms) in [
            (185.0, ("Black wins by ¾ stone", "B+1.5", "黑勝1/2子")),
            (184.0, ("White wins by ¼ stone", "W+0.5", "白勝1/2子")),
            (184.5, ("Black wins by ¼ stone", "B+0.5", "黑勝1/2子")),
            (190.0, ("Black wins by 5¾ stones", "B+11.5", "黑勝5又1/2子")),
        ] {
            let r = count_with_black_area(black_area).result(k, Penalties::default());
            assert_eq!((r.exact().as_str(), r.points().as_str(), r.customary().as_str()), forms, "{black_area}");
        }
    }

    #[test]
    fn draws_with_integer_komi_and_warnings() {
        let r = count_with_black_area(180.5).result(Komi { points: 0.0 }, Penalties::default());
        assert_eq!(r.winner, None);
        assert_eq!(r.points(), "0");
        assert_eq!(r.customary(), "和棋");
        // One warning against Black turns a ¾-stone win into a ¼-stone loss.
        let r = count_with_black_area(185.0).result(Komi::default(), Penalties { warnings: ByColor::new(1, 0) });
        assert_eq!(r.points(), "W+0.5");
        // A second warning loses whatever the count.
        let r = count_with_black_area(250.0).result(Komi::default(), Penalties { warnings: ByColor::new(2, 0) });
        assert_eq!(r.winner, Some(Color::White));
        assert_eq!(r.points(), "W+F");
    }

    #[test]
    fn seki_liberties_are_shared() {
        // Black's outer chain and White's inner chain share c4 and c3 and neither can fill
        // them (seki): the two points count half to each side (Art. 9).
        let b = Board::from_rows(&["XO.XO.", "XO.XO.", "XOOXO.", "XXXXO."]).expect("board");
        let c = count_area(&b, &[]);
        assert_eq!((c.black_stones, c.white_stones), (10, 8));
        assert_eq!((c.black_territory, c.white_territory, c.shared), (0, 4, 2));
        assert_eq!((c.black_area(), c.white_area()), (11.0, 13.0));
        let r = c.result(Komi { points: 0.0 }, Penalties::default());
        assert_eq!(
            (r.exact().as_str(), r.points().as_str(), r.customary().as_str()),
            ("White wins by 1 stone", "W+2", "白勝1子")
        );
    }

    #[test]
    fn dame_between_the_sides_is_shared() {
        let b = Board::from_rows(&[".XO.O", "XXOOO", "OOXX.", ".OX..", "OOX.."]).expect("board");
        let c = count_area(&b, &[]);
        assert_eq!((c.black_territory, c.white_territory, c.shared), (1, 2, 5));
        assert!((c.black_area() + c.white_area() - 25.0).abs() < 1e-9);
    }

    #[test]
    fn dead_stones_are_removed_before_counting() {
        let b = Board::from_rows(&["..O..", ".XO..", "XXO..", ".XO.X", ".XO.."]).expect("board");
        let alive = count_area(&b, &[]);
        assert_eq!((alive.black_territory, alive.white_territory, alive.shared), (2, 0, 12));
        let dead = count_area(&b, &[Point::new(4, 3)]);
        assert_eq!(dead.dead_black, 1);
        assert_eq!((dead.black_territory, dead.white_territory, dead.shared), (2, 10, 3));
        assert!((dead.black_area() + dead.white_area() - 25.0).abs() < 1e-9);
    }
}
