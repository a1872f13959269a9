//! Pairings in, results out. A round's pairings come from the tool organisers use — OpenGotha's
//! tournament XML (one round of its `<Games>`, players from its `<Players>`) or a plain CSV
//! (`table, black, white, black_rank, white_rank, handicap, komi`) — and its results go back as
//! an OpenGotha tournament XML that OpenGotha imports (Tournament ▸ Import ▸ XML, games).
//! Pure: text in, data out, data in, text out.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// A player as the pairing program knows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    /// Family name (OpenGotha's `name`).
    pub surname: String,
    /// Given name (OpenGotha's `firstName`); may be empty for a CSV name in one piece.
    #[serde(default)]
    pub first_name: String,
    /// Rank as written, e.g. "3D", "5K", "1P".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<String>,
}

impl Player {
    /// The name people read: "Surname First".
    pub fn display(&self) -> String {
        if self.first_name.is_empty() {
            self.surname.clone()
        } else {
            format!("{} {}", self.surname, self.first_name)
        }
    }

    /// OpenGotha's key for the player: surname and first name without spaces, in capitals.
    pub fn opengotha_key(&self) -> String {
        format!("{}{}", self.surname, self.first_name).replace(' ', "").to_uppercase()
    }

    /// A name in one piece, split as OpenGotha's plain-file import does: the last word is the
    /// first name.
    pub fn from_full_name(full: &str, rank: Option<String>) -> Self {
        let full = full.trim();
        match full.rsplit_once(' ') {
            Some((surname, first)) => Self { surname: surname.trim().to_owned(), first_name: first.to_owned(), rank },
            None => Self { surname: full.to_owned(), first_name: String::new(), rank },
        }
    }
}

/// One game of a round: who plays whom at which table, and how it is set up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pairing {
    /// The table id (OpenGotha's table number, from 1).
    pub table: String,
    /// Black.
    pub black: Player,
    /// White.
    pub white: Player,
    /// Handicap stones (0: even game; 1: Black first without komi).
    pub handicap: u8,
    /// Komi in points.
    pub komi: f64,
}

/// A round's pairings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// The event's name.
    pub event: Option<String>,
    /// Round number, from 1.
    pub number: u32,
    /// The games.
    pub pairings: Vec<Pairing>,
}

/// How a game ended, in OpenGotha's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Not known yet.
    Unknown,
    /// Black won.
    BlackWins,
    /// White won.
    WhiteWins,
    /// A draw (jigo, or no result ruled as a draw).
    Draw,
}

impl Outcome {
    /// From an SGF-style result ("B+3.5", "W+R", "0", "Draw", "B+3.5 (Black wins by …)").
    pub fn from_result(result: Option<&str>) -> Self {
        let Some(text) = result.map(str::trim) else {
            return Outcome::Unknown;
        };
        let upper = text.to_ascii_uppercase();
        if upper.starts_with("B+") {
            Outcome::BlackWins
        } else if upper.starts_with("W+") {
            Outcome::WhiteWins
        } else if upper == "0" || upper.starts_with("0 ") || upper.starts_with("DRAW") || upper.starts_with("JIGO") {
            Outcome::Draw
        } else {
            Outcome::Unknown
        }
    }

    fn opengotha(self) -> &'static str {
        match self {
            Outcome::Unknown => "RESULT_UNKNOWN",
            Outcome::BlackWins => "RESULT_BLACKWINS",
            Outcome::WhiteWins => "RESULT_WHITEWINS",
            Outcome::Draw => "RESULT_EQUAL",
        }
    }

    fn from_opengotha(text: &str) -> Self {
        match text {
            "RESULT_BLACKWINS" | "RESULT_BLACKWINS_BYDEF" => Outcome::BlackWins,
            "RESULT_WHITEWINS" | "RESULT_WHITEWINS_BYDEF" => Outcome::WhiteWins,
            "RESULT_EQUAL" | "RESULT_EQUAL_BYDEF" => Outcome::Draw,
            _ => Outcome::Unknown,
        }
    }
}

/// Why pairings could not be read; nothing is imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PairingsError {
    /// The XML is not well formed.
    #[error("not an OpenGotha tournament file: {0}")]
    Xml(String),
    /// The file has no games for the round asked.
    #[error("no games for round {0} in the file")]
    NoGames(u32),
    /// A game names a player the file does not list.
    #[error("round {round}, table {table}: player {key:?} is not in the file's <Players>")]
    UnknownPlayer {
        /// Round.
        round: u32,
        /// Table.
        table: String,
        /// The OpenGotha key that was not found.
        key: String,
    },
    /// A line of the CSV is not a pairing.
    #[error("line {line}: {message}")]
    Csv {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Two games at one table.
    #[error("table {0} is paired twice")]
    DuplicateTable(String),
}

fn attr<'a>(node: roxmltree::Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.attribute(name)
}

/// Reads one round from an OpenGotha tournament file; `round` = `None` takes the last round
/// that has games. Handicap games get komi 0 (OpenGotha has no per-game komi).
pub fn parse_opengotha(xml: &str, round: Option<u32>) -> Result<Round, PairingsError> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| PairingsError::Xml(e.to_string()))?;
    let root = doc.root_element();
    if root.tag_name().name() != "Tournament" {
        return Err(PairingsError::Xml(format!("the root element is <{}>, not <Tournament>", root.tag_name().name())));
    }
    let mut players = std::collections::HashMap::new();
    for p in root.descendants().filter(|n| n.has_tag_name("Player")) {
        let player = Player {
            surname: attr(p, "name").unwrap_or_default().to_owned(),
            first_name: attr(p, "firstName").unwrap_or_default().to_owned(),
            rank: attr(p, "rank").filter(|r| !r.is_empty()).map(str::to_owned),
        };
        players.insert(player.opengotha_key(), player);
    }
    let general = root.descendants().find(|n| n.has_tag_name("GeneralParameterSet"));
    let komi = general
        .and_then(|g| attr(g, "komi"))
        .and_then(|k| k.parse::<f64>().ok())
        .filter(|k| k.is_finite())
        .unwrap_or(7.5);
    let event = general.and_then(|g| attr(g, "name")).filter(|n| !n.is_empty()).map(str::to_owned);
    let games: Vec<roxmltree::Node<'_, '_>> = root.descendants().filter(|n| n.has_tag_name("Game")).collect();
    let round_of = |g: &roxmltree::Node<'_, '_>| attr(*g, "roundNumber").and_then(|r| r.parse::<u32>().ok());
    let number = match round {
        Some(r) => r,
        None => games.iter().filter_map(round_of).max().ok_or(PairingsError::NoGames(0))?,
    };
    let mut pairings = Vec::new();
    for g in games.iter().filter(|g| round_of(g) == Some(number)) {
        let table = attr(*g, "tableNumber").unwrap_or("1").trim().to_owned();
        let find = |side: &str| -> Result<Player, PairingsError> {
            let key = attr(*g, side).unwrap_or_default().to_owned();
            players.get(&key).cloned().ok_or(PairingsError::UnknownPlayer { round: number, table: table.clone(), key })
        };
        let handicap: u8 = attr(*g, "handicap").and_then(|h| h.parse().ok()).unwrap_or(0);
        pairings.push(Pairing {
            table: table.clone(),
            black: find("blackPlayer")?,
            white: find("whitePlayer")?,
            handicap,
            komi: if handicap > 0 { 0.0 } else { komi },
        });
    }
    if pairings.is_empty() {
        return Err(PairingsError::NoGames(number));
    }
    let round = Round { event, number, pairings };
    check_tables(&round)?;
    Ok(round)
}

fn check_tables(round: &Round) -> Result<(), PairingsError> {
    let mut seen = std::collections::HashSet::new();
    for p in &round.pairings {
        if !seen.insert(p.table.as_str()) {
            return Err(PairingsError::DuplicateTable(p.table.clone()));
        }
    }
    Ok(())
}

/// Splits one CSV line (commas or semicolons; double quotes around a field may hold either).
fn csv_fields(line: &str) -> Vec<String> {
    let separator = if line.contains(';') && !line.contains(',') { ';' } else { ',' };
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == separator && !quoted => fields.push(std::mem::take(&mut field).trim().to_owned()),
            c => field.push(c),
        }
    }
    fields.push(field.trim().to_owned());
    fields
}

/// Reads a round from a plain CSV: one game a line, `table, black, white, black_rank,
/// white_rank, handicap, komi` (the last four may be empty; komi defaults to 7.5 for even games
/// and 0 with a handicap). A first line naming the columns is skipped; `#` starts a comment.
pub fn parse_csv(text: &str, round: u32, event: Option<String>) -> Result<Round, PairingsError> {
    let mut pairings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim().trim_start_matches('\u{feff}');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f = csv_fields(line);
        let bad = |message: String| PairingsError::Csv { line: i + 1, message };
        if pairings.is_empty() && f.first().is_some_and(|t| t.eq_ignore_ascii_case("table")) {
            continue;
        }
        if f.len() < 3 || f[..3].iter().any(String::is_empty) {
            return Err(bad("expected at least table, black, white".into()));
        }
        let cell = |k: usize| f.get(k).filter(|v| !v.is_empty()).cloned();
        let handicap = match cell(5) {
            Some(h) => {
                h.parse::<u8>().ok().filter(|h| *h <= 9).ok_or_else(|| bad(format!("handicap {h:?} is not 0 to 9")))?
            }
            None => 0,
        };
        let komi = match cell(6) {
            Some(k) => k
                .parse::<f64>()
                .ok()
                .filter(|k| k.is_finite() && k.abs() <= 100.0)
                .ok_or_else(|| bad(format!("komi {k:?} is not a number")))?,
            None if handicap > 0 => 0.0,
            None => 7.5,
        };
        if !crate::config::valid_table_id(&f[0]) {
            return Err(bad(format!("table {:?}: use 1-32 letters, digits, '-' or '_'", f[0])));
        }
        pairings.push(Pairing {
            table: f[0].clone(),
            black: Player::from_full_name(&f[1], cell(3)),
            white: Player::from_full_name(&f[2], cell(4)),
            handicap,
            komi,
        });
    }
    if pairings.is_empty() {
        return Err(PairingsError::NoGames(round));
    }
    let round = Round { event, number: round, pairings };
    check_tables(&round)?;
    Ok(round)
}

fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// OpenGotha's rank number for a rank as written (its `Player.convertKDPToInt`): 30K = -30,
/// 1K = -1, 1D = 0, 9D = 8, professionals 6–8; `None` when it is not a rank.
fn opengotha_rank(rank: &str) -> Option<i32> {
    let text = rank.trim();
    let last = text.chars().last()?;
    let (digits, kind) = if last.is_ascii_digit() {
        (text, 'k')
    } else {
        (&text[..text.len() - last.len_utf8()], last.to_ascii_lowercase())
    };
    let n: i32 = digits.trim().parse().ok()?;
    let value = match kind {
        'd' => n - 1,
        'p' if n <= 3 => 6,
        'p' if n <= 6 => 7,
        'p' => 8,
        _ => -n,
    };
    Some(value.clamp(-30, 8))
}

/// A round's results as an OpenGotha tournament file holding its players and its games (with
/// results), for OpenGotha's XML import (Tournament ▸ Import ▸ XML: players and games are
/// matched by OpenGotha's key, name and first name in capitals without spaces).
///
/// Written to what OpenGotha's importer (`ExternalDocument.importTournamentFromXMLFile`) reads:
/// every player with a non-empty name and first name, a rank and a rating made from it as
/// OpenGotha does (`ratingFromRank`, origin `INI`); every game with whole round and table
/// numbers from 1 (it parses them as integers: tables named otherwise are numbered in order);
/// and no `<TournamentParameterSet>`: once one is present OpenGotha reads its handicap,
/// placement and pairing sets unconditionally, and importing it would overwrite the organiser's
/// settings. The event and round are said in a comment.
pub fn export_opengotha(round: &Round, outcomes: &[Outcome]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    let _ = writeln!(
        out,
        "<!-- Tengen: results of round {} of {} (import the games; the players are matched by name) -->",
        round.number,
        xml_escape(round.event.as_deref().unwrap_or("the tournament")).replace("--", "- -")
    );
    out.push_str("<Tournament dataVersion=\"201\">\n<Players>\n");
    let mut listed = std::collections::HashSet::new();
    for p in round.pairings.iter().flat_map(|p| [&p.black, &p.white]) {
        if !listed.insert(p.opengotha_key()) {
            continue;
        }
        // OpenGotha refuses an empty first name (its own plain-file import uses "x").
        let first = if p.first_name.is_empty() { "x" } else { p.first_name.as_str() };
        let (rank, number) = match p.rank.as_deref().and_then(|r| opengotha_rank(r).map(|n| (r, n))) {
            Some((rank, number)) => (rank, number),
            None => ("30K", -30),
        };
        let _ = writeln!(
            out,
            "<Player firstName=\"{}\" name=\"{}\" rank=\"{}\" rating=\"{}\" ratingOrigin=\"INI\" registeringStatus=\"FIN\"/>",
            xml_escape(first),
            xml_escape(&p.surname),
            xml_escape(rank.trim()),
            (number + 30) * 100 - 900
        );
    }
    out.push_str("</Players>\n<Games>\n");
    // OpenGotha's table numbers are whole numbers from 1: Tengen's own when they all are.
    let numeric = round.pairings.iter().all(|p| p.table.parse::<u32>().is_ok_and(|n| n >= 1));
    for (k, p) in round.pairings.iter().enumerate() {
        let outcome = outcomes.get(k).copied().unwrap_or(Outcome::Unknown);
        let key = |pl: &Player| {
            if pl.first_name.is_empty() {
                format!("{}X", pl.opengotha_key())
            } else {
                pl.opengotha_key()
            }
        };
        let table = if numeric { p.table.trim().to_owned() } else { (k + 1).to_string() };
        let _ = writeln!(
            out,
            "<Game blackPlayer=\"{}\" handicap=\"{}\" knownColor=\"true\" result=\"{}\" roundNumber=\"{}\" tableNumber=\"{}\" whitePlayer=\"{}\"/>",
            xml_escape(&key(&p.black)),
            p.handicap,
            outcome.opengotha(),
            round.number,
            table,
            xml_escape(&key(&p.white))
        );
    }
    out.push_str("</Games>\n</Tournament>\n");
    out
}

/// The results of an exported file, per table, as OpenGotha reads them back (for checking an
/// export, and for tools).
pub fn opengotha_results(xml: &str, round: u32) -> Result<Vec<(String, Outcome)>, PairingsError> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| PairingsError::Xml(e.to_string()))?;
    Ok(doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("Game") && attr(*n, "roundNumber").and_then(|r| r.parse::<u32>().ok()) == Some(round)
        })
        .map(|g| {
            (
                attr(g, "tableNumber").unwrap_or_default().to_owned(),
                Outcome::from_opengotha(attr(g, "result").unwrap_or_default()),
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tournament of four players over two rounds (shared with the rounds API test).
    const OPENGOTHA: &str = include_str!("../tests/data/opengotha-round.xml");

    #[test]
    fn an_opengotha_round_is_read_with_players_ranks_handicap_and_komi() {
        let round = parse_opengotha(OPENGOTHA, None).expect("valid file");
        assert_eq!(round.number, 2, "the last round with games");
        assert_eq!(round.event.as_deref(), Some("Paris Open 2026"));
        assert_eq!(round.pairings.len(), 2);
        let t2 = &round.pairings[0];
        assert_eq!((t2.table.as_str(), t2.handicap, t2.komi), ("2", 3, 0.0));
        assert_eq!(t2.white.display(), "O'Neil & Co Ann");
        assert_eq!(t2.black.rank.as_deref(), Some("8K"));
        let t1 = &round.pairings[1];
        assert_eq!(
            (t1.black.display().as_str(), t1.white.display().as_str(), t1.komi),
            ("Du Pont Jean", "Wang Li", 6.5)
        );
        let first = parse_opengotha(OPENGOTHA, Some(1)).expect("round 1");
        assert_eq!(first.pairings[0].black.surname, "Wang");
        assert_eq!(parse_opengotha(OPENGOTHA, Some(4)), Err(PairingsError::NoGames(4)));
        let broken = OPENGOTHA.replace("blackPlayer=\"BERGBO\"", "blackPlayer=\"NOBODY\"");
        assert!(matches!(parse_opengotha(&broken, None), Err(PairingsError::UnknownPlayer { .. })));
        assert!(matches!(parse_opengotha("<Tournament><Games>", None), Err(PairingsError::Xml(_))));
        assert!(matches!(parse_opengotha("<Other/>", None), Err(PairingsError::Xml(_))));
    }

    #[test]
    fn a_round_exported_for_opengotha_reads_back_with_its_results() {
        let round = parse_opengotha(OPENGOTHA, Some(2)).expect("round 2");
        let exported = export_opengotha(
            &round,
            &[Outcome::WhiteWins, Outcome::from_result(Some("B+3.5 (Black wins by 1¾ stones)"))],
        );
        // OpenGotha reads the export: same players, same pairings, the results given.
        let again = parse_opengotha(&exported, Some(2)).expect("the export is an OpenGotha file");
        assert_eq!(
            again.pairings.iter().map(|p| (&p.table, &p.black, &p.white, p.handicap)).collect::<Vec<_>>(),
            round.pairings.iter().map(|p| (&p.table, &p.black, &p.white, p.handicap)).collect::<Vec<_>>()
        );
        assert_eq!(
            opengotha_results(&exported, 2).expect("results"),
            vec![("2".to_owned(), Outcome::WhiteWins), ("1".to_owned(), Outcome::BlackWins)]
        );
    }

    /// What OpenGotha's XML importer (`ExternalDocument.importPlayersFromXMLFile`,
    /// `importGamesFromXMLFile`, `importTournamentParameterSetFromXMLFile`, `Player`) would
    /// refuse or misread in a file: a player without name or first name (PlayerException), a
    /// rank it cannot read, a round or table number that is not a whole number from 1
    /// (`Integer.parseInt`), a game whose players are not listed under OpenGotha's key, a result
    /// it does not know, a parameter set without its handicap, placement and pairing sets
    /// (read unconditionally).
    fn opengotha_import_problems(xml: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(xml).expect("XML");
        let mut problems = Vec::new();
        let mut keys = std::collections::HashSet::new();
        for p in doc.descendants().filter(|n| n.has_tag_name("Player")) {
            let (name, first) = (p.attribute("name").unwrap_or(""), p.attribute("firstName").unwrap_or(""));
            if name.is_empty() || first.is_empty() {
                problems.push(format!("player {name:?} {first:?}: empty name or first name"));
            }
            if opengotha_rank(p.attribute("rank").unwrap_or("30K")).is_none() {
                problems.push(format!("player {name}: rank {:?}", p.attribute("rank")));
            }
            keys.insert(format!("{name}{first}").replace(' ', "").to_uppercase());
        }
        for g in doc.descendants().filter(|n| n.has_tag_name("Game")) {
            for number in ["roundNumber", "tableNumber"] {
                if !g.attribute(number).unwrap_or("1").parse::<i32>().is_ok_and(|n| n >= 1) {
                    problems.push(format!("game {number} {:?}", g.attribute(number)));
                }
            }
            for side in ["blackPlayer", "whitePlayer"] {
                if !keys.contains(g.attribute(side).unwrap_or("")) {
                    problems.push(format!("game {side} {:?} is not a listed player", g.attribute(side)));
                }
            }
            let known = [
                "RESULT_UNKNOWN",
                "RESULT_WHITEWINS",
                "RESULT_BLACKWINS",
                "RESULT_EQUAL",
                "RESULT_BOTHLOSE",
                "RESULT_BOTHWIN",
            ];
            let result = g.attribute("result").unwrap_or("RESULT_UNKNOWN");
            if !known.contains(&result.trim_end_matches("_BYDEF")) {
                problems.push(format!("game result {result:?}"));
            }
        }
        if doc.descendants().any(|n| n.has_tag_name("TournamentParameterSet")) {
            for set in ["GeneralParameterSet", "HandicapParameterSet", "PlacementParameterSet", "PairingParameterSet"] {
                if !doc.descendants().any(|n| n.has_tag_name(set)) {
                    problems.push(format!("a TournamentParameterSet without {set}"));
                }
            }
        }
        problems
    }

    #[test]
    fn the_export_is_what_opengothas_importer_reads() {
        // The checker finds what OpenGotha would refuse...
        assert!(
            !opengotha_import_problems(OPENGOTHA).is_empty(),
            "the sample's parameters lack the handicap, placement and pairing sets"
        );
        // ...and finds nothing in an export, even of a CSV round with named tables, a name in
        // one piece, an unreadable rank and a professional.
        let csv = "A,Berg Bo,Plato,8K,?,,\nB,Du Pont Jean,Ke Jie,3d,9p,2,\n";
        let round = parse_csv(csv, 4, Some("Club -- night".into())).expect("CSV");
        let exported = export_opengotha(&round, &[Outcome::BlackWins, Outcome::Draw]);
        assert_eq!(opengotha_import_problems(&exported), Vec::<String>::new(), "{exported}");
        assert!(exported.contains("tableNumber=\"1\"") && exported.contains("tableNumber=\"2\""), "{exported}");
        assert!(exported.contains("firstName=\"x\" name=\"Plato\" rank=\"30K\" rating=\"-900\""), "{exported}");
        assert!(exported.contains("name=\"Ke\" rank=\"9p\" rating=\"2900\""), "{exported}");
        assert!(exported.contains("rank=\"3d\" rating=\"2300\""), "{exported}");
        assert_eq!(opengotha_rank("1K"), Some(-1));
        assert_eq!(opengotha_rank("12"), Some(-12));
        assert_eq!(opengotha_rank("dan"), None);
    }

    #[test]
    fn a_plain_csv_round_with_header_quotes_and_defaults() {
        let csv = "table,black,white,black_rank,white_rank,handicap,komi\n\
                   1,Du Pont Jean,Wang Li,3D,1K,,\n\
                   # a comment\n\
                   7,\"Berg, Bo\",O'Neil Ann,8K,5K,3,\n\
                   9;X Y;Z W\n";
        let round = parse_csv(csv, 3, Some("Club night".into())).expect("valid CSV");
        assert_eq!(round.number, 3);
        assert_eq!(round.pairings.len(), 3, "a line with semicolons (a spreadsheet's CSV) is read too");
        assert_eq!(round.pairings[2].white.display(), "Z W");
        let err = parse_csv("1,a\n", 1, None).expect_err("two fields");
        assert!(matches!(err, PairingsError::Csv { line: 1, .. }), "{err}");
        assert_eq!(
            round.pairings[0].black,
            Player { surname: "Du Pont".into(), first_name: "Jean".into(), rank: Some("3D".into()) }
        );
        assert_eq!((round.pairings[0].handicap, round.pairings[0].komi), (0, 7.5));
        assert_eq!(round.pairings[1].black.display(), "Berg, Bo");
        assert_eq!((round.pairings[1].handicap, round.pairings[1].komi), (3, 0.0));
        assert!(parse_csv("1,a,b,,,12,\n", 1, None).is_err(), "handicap over 9");
        assert!(parse_csv("1,a,b\n1,c,d\n", 1, None).is_err(), "one table twice");
        assert!(parse_csv("../x,a,b\n", 1, None).is_err(), "not a table id");
        assert_eq!(Outcome::from_result(Some("W+R")), Outcome::WhiteWins);
        assert_eq!(Outcome::from_result(Some("0")), Outcome::Draw);
        assert_eq!(Outcome::from_result(None), Outcome::Unknown);
    }
}
