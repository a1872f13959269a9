//! What the service adds to a game's record beyond the referee's: the players (and from an
//! imported pairing their ranks, the event, the round, the handicap), the date and the game's name.
//! The record itself is the referee's, written by the project's one writer
//! (`Referee::game_record` from this `GameInfo`, then `tengen-sgf`), the same as `tengen replay`
//! writes.

use tengen_sgf::GameInfo;

use crate::store::GameRow;

/// The UTC calendar date (YYYY-MM-DD) of a time in ms since the epoch.
pub fn utc_date(ms: i64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let days = ms.div_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

/// The record's game information for a stored game at a table: the players, and from an
/// imported pairing their ranks, the event, the round and the handicap.
pub fn game_info(game: &GameRow, table_name: &str) -> GameInfo {
    let pairing = game.setup.pairing.as_ref();
    GameInfo {
        black_name: game.black.clone(),
        white_name: game.white.clone(),
        black_rank: pairing.and_then(|p| p.black.rank.as_ref()).map(|r| r.to_lowercase()),
        white_rank: pairing.and_then(|p| p.white.rank.as_ref()).map(|r| r.to_lowercase()),
        event: pairing.and_then(|p| p.event.clone()),
        round: pairing.map(|p| p.round.to_string()),
        // A paired handicap of 1 is Black first without komi: no stones, no HA.
        handicap: pairing.map(|p| p.handicap).filter(|&h| h >= 2),
        date: Some(utc_date(game.started_ms)),
        game_name: Some(format!("{table_name}, game {}", game.id)),
        result: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GamePairing, GameSetup};
    use crate::pairings::Player;

    #[test]
    fn dates_and_headers() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(1_795_000_000_000), "2026-11-18");
        let mut game = GameRow {
            id: 3,
            table: "1".into(),
            komi: 7.5,
            started_ms: 0,
            black: Some("Ke Jie".into()),
            white: None,
            setup: GameSetup::default(),
        };
        let header = game_info(&game, "Table 1");
        assert_eq!(header.game_name.as_deref(), Some("Table 1, game 3"));
        assert_eq!(header.black_name.as_deref(), Some("Ke Jie"));
        assert_eq!(header.date.as_deref(), Some("1970-01-01"));
        assert_eq!((header.round, header.handicap), (None, None));
        game.setup.pairing = Some(GamePairing {
            event: Some("Open".into()),
            round: 2,
            black: Player { surname: "Ke".into(), first_name: "Jie".into(), rank: Some("9D".into()) },
            white: Player { surname: "Shin".into(), first_name: "Jinseo".into(), rank: None },
            handicap: 3,
        });
        let header = game_info(&game, "Table 1");
        assert_eq!(header.black_rank.as_deref(), Some("9d"));
        assert_eq!(header.white_rank, None);
        assert_eq!(
            (header.event.as_deref(), header.round.as_deref(), header.handicap),
            (Some("Open"), Some("2"), Some(3))
        );
    }
}
