//! The typed game record: game information, setup and the main line of one game tree, read
//! leniently (Fox komi, `tt` passes, compressed point lists) and checked strictly where a wrong
//! reading would change the game (setup after the first move, board size, move count).

use std::collections::BTreeMap;

use tengen_rules::{Color, Game, Move, Point, SetupError, MAX_BOARD_SIZE};

use crate::{Collection, SgfError};

/// The most moves a main line may hold: the limit of Fuego (and so of Little Go), far above the
/// longest real games (a few hundred moves); a longer record is corrupt or machine-generated.
pub const MAX_MOVES: usize = 1394;

/// One move of the main line, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedMove {
    /// Who moved (as written; may break alternation, see Art. 17.2).
    pub color: Color,
    /// A stone or a pass (`B[]`, and `B[tt]` on boards up to 19×19).
    pub mv: Move,
    /// The node's comment (`C`), e.g. an event the referee raised.
    pub comment: Option<String>,
}

/// Who played, where, when and how it ended: the game information a record carries beyond the
/// board and the rules of play (the root's `PB` `PW` `BR` `WR` `EV` `RO` `DT` `GN` `HA` `RE`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameInfo {
    /// Black player's name (`PB`).
    pub black_name: Option<String>,
    /// White player's name (`PW`).
    pub white_name: Option<String>,
    /// Black player's rank (`BR`), e.g. "3d".
    pub black_rank: Option<String>,
    /// White player's rank (`WR`).
    pub white_rank: Option<String>,
    /// Event (`EV`).
    pub event: Option<String>,
    /// Round (`RO`), e.g. "3" or "3 (final)".
    pub round: Option<String>,
    /// Date (`DT`), e.g. "2026-11-18".
    pub date: Option<String>,
    /// Game name (`GN`).
    pub game_name: Option<String>,
    /// Handicap (`HA`).
    pub handicap: Option<u8>,
    /// Result as written (`RE`), e.g. "B+R", "W+0.5", "B+3/4".
    pub result: Option<String>,
}

/// A game record: the game information the project uses, the setup and the main line.
#[derive(Debug, Clone, PartialEq)]
pub struct GameRecord {
    /// Board width (`SZ`, default 19).
    pub width: u8,
    /// Board height.
    pub height: u8,
    /// Komi in points (`KM`; Fox's `KM[750]`/`KM[375]` read as 7.5).
    pub komi: Option<f64>,
    /// Rule set as written (`RU`), e.g. "Chinese".
    pub rules: Option<String>,
    /// The players, the occasion, the handicap and the result.
    pub info: GameInfo,
    /// Comment of the root node (`C`).
    pub root_comment: Option<String>,
    /// Black setup stones before the first move (`AB`, minus later `AE`/`AW` on the same point).
    pub setup_black: Vec<Point>,
    /// White setup stones before the first move.
    pub setup_white: Vec<Point>,
    /// Who moves first when written (`PL`).
    pub first_player: Option<Color>,
    /// The main line.
    pub moves: Vec<RecordedMove>,
    /// Oddities read past: unreadable komi, a declared handicap without stones...
    pub warnings: Vec<String>,
}

impl GameRecord {
    /// An empty record on a board of this size.
    pub fn new(width: u8, height: u8) -> Self {
        GameRecord {
            width,
            height,
            komi: None,
            rules: None,
            info: GameInfo::default(),
            root_comment: None,
            setup_black: Vec::new(),
            setup_white: Vec::new(),
            first_player: None,
            moves: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Reads the game tree rooted at `root`, following the main line (first child each time).
    pub fn from_collection(coll: &Collection, root: usize) -> Result<Self, SgfError> {
        let line = coll.main_line(root);
        let root_node = coll.node(root);
        let (width, height) = parse_size(root_node.value("SZ"))?;
        let mut rec = GameRecord::new(width, height);
        let text = |ident: &str| root_node.value(ident).map(str::to_string);
        rec.rules = text("RU");
        rec.info = GameInfo {
            black_name: text("PB"),
            white_name: text("PW"),
            black_rank: text("BR"),
            white_rank: text("WR"),
            event: text("EV"),
            round: text("RO"),
            date: text("DT"),
            game_name: text("GN"),
            handicap: None,
            result: text("RE"),
        };
        rec.root_comment = text("C");
        if let Some(km) = root_node.value("KM") {
            match parse_komi(km) {
                Some(k) => rec.komi = Some(k),
                None if km.trim().is_empty() => {}
                None => rec.warnings.push(format!("KM[{km}] is not a number: komi unknown")),
            }
        }

        // Setup state across the nodes before the first move: point → colour (None = AE).
        let mut setup: BTreeMap<Point, Option<Color>> = BTreeMap::new();
        let mut setup_seen_in_node: Option<usize> = None;
        for (node_no, &id) in line.iter().enumerate() {
            let node = coll.node(id);
            let moves_before = rec.moves.len();
            for prop in node.props() {
                let ident = prop.ident();
                match ident {
                    // A PL that names the player alternation gives anyway changes nothing (Sabaki
                    // writes them); one that contradicts it is a setup in mid-game.
                    "PL" if rec
                        .moves
                        .last()
                        .is_some_and(|m| prop.first().and_then(parse_colour) == Some(m.color.opponent())) => {}
                    "AB" | "AW" | "AE" | "PL" if moves_before > 0 || (ident == "PL" && !rec.moves.is_empty()) => {
                        return Err(SgfError::SetupAfterFirstMove {
                            property: ident.to_string(),
                            node: node_no,
                            after_move: moves_before,
                        });
                    }
                    "AB" | "AW" | "AE" => {
                        let colour = match ident {
                            "AB" => Some(Color::Black),
                            "AW" => Some(Color::White),
                            _ => None,
                        };
                        for value in prop.values() {
                            for p in expand_points(value, ident, node_no, width, height)? {
                                setup.insert(p, colour);
                            }
                        }
                        setup_seen_in_node.get_or_insert(node_no);
                    }
                    "PL" => {
                        rec.first_player = prop.first().and_then(parse_colour);
                    }
                    "HA" => {
                        if let Some(first) = setup_seen_in_node {
                            if first < node_no {
                                return Err(SgfError::HandicapAfterSetup { node: node_no });
                            }
                        }
                        let v = prop.first().map(str::trim).unwrap_or("");
                        match v.parse::<u8>() {
                            Ok(h) => rec.info.handicap = Some(h),
                            Err(_) => rec.warnings.push(format!("HA[{v}] is not a number")),
                        }
                    }
                    "B" | "W" => {
                        let color = if ident == "B" { Color::Black } else { Color::White };
                        let value = prop.first().unwrap_or("");
                        let mv = parse_move(value, ident, node_no, width, height)?;
                        let comment = node.value("C").map(str::to_string);
                        rec.moves.push(RecordedMove { color, mv, comment });
                    }
                    _ => {}
                }
            }
            if rec.moves.len() > MAX_MOVES {
                // Count the whole line for the message, without typing every move.
                let total =
                    line.iter().map(|&n| coll.node(n).props().filter(|p| matches!(p.ident(), "B" | "W")).count()).sum();
                return Err(SgfError::TooManyMoves { moves: total, max: MAX_MOVES });
            }
        }
        for (p, c) in setup {
            match c {
                Some(Color::Black) => rec.setup_black.push(p),
                Some(Color::White) => rec.setup_white.push(p),
                None => {}
            }
        }
        if let Some(h) = rec.info.handicap {
            if h >= 2 && rec.setup_black.len() < usize::from(h) {
                rec.warnings.push(format!(
                    "HA[{h}] but {} black setup stone(s): handicap stones not placed in the record",
                    rec.setup_black.len()
                ));
            }
        }
        // The setup must be a position that can stand (Art. 3).
        rec.start_game()?;
        Ok(rec)
    }

    /// The rules-core game at the start of the record: board, setup stones, first player.
    pub fn start_game(&self) -> Result<Game, SgfError> {
        let mut game = Game::new(self.width, self.height)
            .map_err(|_| SgfError::BoardSize { value: format!("{}:{}", self.width, self.height) })?;
        if !self.setup_black.is_empty() || !self.setup_white.is_empty() {
            game.setup(&self.setup_black, &self.setup_white, &[]).map_err(|e| match e {
                SetupError::NoLiberties { point } | SetupError::OffBoard { point } => {
                    SgfError::illegal_setup(point, self.height, e)
                }
                SetupError::BadSize { .. } => SgfError::BoardSize { value: format!("{}:{}", self.width, self.height) },
            })?;
        }
        let first = self.first_player.or_else(|| self.moves.first().map(|m| m.color)).unwrap_or(Color::Black);
        game.set_to_move(first);
        Ok(game)
    }
}

/// `SZ[19]` or `SZ[7:6]` (columns:rows); absent means 19.
fn parse_size(value: Option<&str>) -> Result<(u8, u8), SgfError> {
    let Some(v) = value else { return Ok((19, 19)) };
    let bad = || SgfError::BoardSize { value: v.to_string() };
    let (w, h) = match v.split_once(':') {
        Some((w, h)) => (w.trim().parse::<u32>().map_err(|_| bad())?, h.trim().parse::<u32>().map_err(|_| bad())?),
        None => {
            let s = v.trim().parse::<u32>().map_err(|_| bad())?;
            (s, s)
        }
    };
    if w == 0 || h == 0 || w > u32::from(MAX_BOARD_SIZE) || h > u32::from(MAX_BOARD_SIZE) {
        return Err(bad());
    }
    Ok((w as u8, h as u8))
}

/// Komi in points. Fox writes komi × 100 with no decimal point: in points for Japanese games
/// (`KM[650]` = 6.5) and in stones for Chinese ones (`KM[375]` = 3.75 stones = 7.5 points). A
/// quarter is never a komi in points, so a quarter value is stones.
pub fn parse_komi(value: &str) -> Option<f64> {
    let v = value.trim();
    let k: f64 = v.parse().ok()?;
    if !k.is_finite() {
        return None;
    }
    let fox_scaled = !v.contains('.') && k.abs() >= 100.0;
    if !fox_scaled {
        return Some(k);
    }
    let hundredths = k / 100.0;
    if (hundredths * 2.0).fract() == 0.0 {
        Some(hundredths)
    } else {
        Some(hundredths * 2.0)
    }
}

fn parse_colour(v: &str) -> Option<Color> {
    match v.trim().chars().next()? {
        'B' | 'b' => Some(Color::Black),
        'W' | 'w' => Some(Color::White),
        _ => None,
    }
}

/// A move value: empty or `tt` (on boards up to 19×19) is a pass.
fn parse_move(value: &str, ident: &str, node: usize, width: u8, height: u8) -> Result<Move, SgfError> {
    let v = value.trim();
    if v.is_empty() || (v == "tt" && width <= 19 && height <= 19) {
        return Ok(Move::Pass);
    }
    Point::from_sgf(v, width, height).map(Move::Place).map_err(|_| SgfError::BadPoint {
        property: ident.to_string(),
        value: value.to_string(),
        node,
        width,
        height,
    })
}

/// A point-list value: `pd`, or a compressed rectangle `aa:cc`.
fn expand_points(value: &str, ident: &str, node: usize, width: u8, height: u8) -> Result<Vec<Point>, SgfError> {
    let bad = || SgfError::BadPoint { property: ident.to_string(), value: value.to_string(), node, width, height };
    let v = value.trim();
    match v.split_once(':') {
        None => Ok(vec![Point::from_sgf(v, width, height).map_err(|_| bad())?]),
        Some((a, b)) => {
            let a = Point::from_sgf(a.trim(), width, height).map_err(|_| bad())?;
            let b = Point::from_sgf(b.trim(), width, height).map_err(|_| bad())?;
            let mut out = Vec::new();
            for row in a.row.min(b.row)..=a.row.max(b.row) {
                for col in a.col.min(b.col)..=a.col.max(b.col) {
                    out.push(Point::new(col, row));
                }
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fox_komi() {
        assert_eq!(parse_komi("750"), Some(7.5));
        assert_eq!(parse_komi("375"), Some(7.5));
        assert_eq!(parse_komi("650"), Some(6.5));
        assert_eq!(parse_komi("325"), Some(6.5));
        assert_eq!(parse_komi("7.5"), Some(7.5));
        assert_eq!(parse_komi("0"), Some(0.0));
        assert_eq!(parse_komi("11"), Some(11.0));
        assert_eq!(parse_komi("-3.5"), Some(-3.5));
        assert_eq!(parse_komi("x"), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size(None), Ok((19, 19)));
        assert_eq!(parse_size(Some("7:6")), Ok((7, 6)));
        assert_eq!(parse_size(Some("9")), Ok((9, 9)));
        assert!(parse_size(Some("25")).is_err());
        assert!(parse_size(Some("0")).is_err());
    }

    #[test]
    fn compressed_lists() -> Result<(), SgfError> {
        let pts = expand_points("aa:cb", "AB", 0, 19, 19)?;
        assert_eq!(pts.len(), 6);
        assert!(expand_points("aa:zz", "AB", 0, 19, 19).is_err());
        Ok(())
    }
}
