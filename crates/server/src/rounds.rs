//! Rounds over HTTP: import a round's pairings (OpenGotha XML or CSV), which starts the new
//! games on every paired table at once; export a round's results for OpenGotha, and all its
//! game records as one ZIP archive with standard names.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use crate::api::{check_token, game_record, table, ApiPath, ApiResult, AppState};
use crate::error::Error;
use crate::json::{ArbiterAction, ImportQuery, RoundGame, RoundImported, RoundInfo, Rounds};
use crate::model::{GamePairing, StartPosition};
use crate::pairings::{export_opengotha, parse_csv, parse_opengotha, Outcome, Pairing, Round};
use crate::store::GameRow;

/// Largest pairings file accepted (a whole OpenGotha tournament with its history).
pub const MAX_PAIRINGS_BYTES: usize = 8 * 1024 * 1024;

/// The routes of this module.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/rounds", post(import_round).get(list_rounds))
        .route("/api/rounds/{round}/opengotha.xml", get(export_round))
        .route("/api/rounds/{round}/records.zip", get(round_records))
}

/// How a paired game starts: handicap stones from 2 up, an even game otherwise.
fn start_of(pairing: &Pairing) -> StartPosition {
    if pairing.handicap >= 2 {
        StartPosition::Handicap(pairing.handicap)
    } else {
        StartPosition::Even
    }
}

async fn import_round(
    State(hub): State<AppState>,
    Query(query): Query<ImportQuery>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<RoundImported>> {
    check_token(&headers, &[hub.arbiter_token.as_str()])?;
    let bytes =
        axum::body::to_bytes(body, MAX_PAIRINGS_BYTES).await.map_err(|_| Error::too_large(MAX_PAIRINGS_BYTES))?;
    let text = String::from_utf8(bytes.to_vec())
        .map_err(|_| Error::unprocessable("bad_pairings", "the pairings are not UTF-8 text"))?;
    let bad = |e: crate::pairings::PairingsError| Error::unprocessable("bad_pairings", e.to_string());
    let round = if text.trim_start().trim_start_matches('\u{feff}').starts_with('<') {
        parse_opengotha(&text, query.round).map_err(bad)?
    } else {
        parse_csv(&text, query.round.unwrap_or(1), query.event.clone()).map_err(bad)?
    };
    // Every table first: a round starts on all tables or on none.
    let unknown: Vec<&str> =
        round.pairings.iter().map(|p| p.table.as_str()).filter(|t| !hub.tables.contains_key(*t)).collect();
    if !unknown.is_empty() {
        return Err(Error::unprocessable(
            "unknown_tables",
            format!("no table {} in this service: nothing was started", unknown.join(", ")),
        ));
    }
    let starts = round.pairings.iter().map(|p| {
        let table = Arc::clone(&hub.tables[&p.table]);
        let action = ArbiterAction::NewGame {
            komi: Some(p.komi),
            start: Some(start_of(p)),
            pairing: Some(GamePairing {
                event: round.event.clone(),
                round: round.number,
                black: p.black.clone(),
                white: p.white.clone(),
                handicap: p.handicap,
            }),
        };
        async move { (table.id.clone(), table.arbiter(action).await) }
    });
    let mut started = Vec::new();
    for (table, outcome) in futures_util::future::join_all(starts).await {
        outcome?;
        let game = hub.tables[&table].live().map(|l| l.game.id);
        started.push(RoundGame { table, game });
    }
    Ok(Json(RoundImported { round: round.number, event: round.event, games: started }))
}

/// The latest game of each table paired in `round`, in table order.
async fn games_of_round(hub: &crate::Hub, round: u32) -> ApiResult<Vec<GameRow>> {
    let mut games = Vec::new();
    for id in hub.tables.keys() {
        let of_round =
            hub.store.games(id).await?.into_iter().find(|g| g.setup.pairing.as_ref().is_some_and(|p| p.round == round));
        games.extend(of_round);
    }
    if games.is_empty() {
        return Err(Error::not_found(format!("no games of round {round}")));
    }
    games.sort_by_key(|g| table_order(&g.table));
    Ok(games)
}

/// Numeric table ids in numeric order, then the others by name.
fn table_order(id: &str) -> (u64, String) {
    (id.parse().unwrap_or(u64::MAX), id.to_owned())
}

/// The view of a game: live when it is the table's current one, else replayed from the log.
async fn view_of(hub: &crate::Hub, game: &GameRow) -> ApiResult<crate::json::GameView> {
    match hub.tables.get(&game.table).and_then(|t| t.live()).filter(|l| l.game.id == game.id) {
        Some(live) => Ok(live.view),
        None => Ok(crate::engine::game_view(crate::replay_referee(hub, game).await?.as_ref())),
    }
}

async fn list_rounds(State(hub): State<AppState>) -> ApiResult<Json<Rounds>> {
    let mut rounds = std::collections::BTreeMap::new();
    for id in hub.tables.keys() {
        for g in hub.store.games(id).await? {
            if let Some(p) = &g.setup.pairing {
                rounds.entry(p.round).or_insert_with(|| p.event.clone());
            }
        }
    }
    let rounds = rounds.into_iter().map(|(round, event)| RoundInfo { round, event }).collect();
    Ok(Json(Rounds { rounds }))
}

async fn export_round(State(hub): State<AppState>, ApiPath(round): ApiPath<u32>) -> ApiResult<Response> {
    let games = games_of_round(&hub, round).await?;
    let mut pairings = Vec::new();
    let mut outcomes = Vec::new();
    let mut event = None;
    for game in &games {
        let Some(p) = &game.setup.pairing else {
            continue;
        };
        event.clone_from(&p.event);
        pairings.push(Pairing {
            table: game.table.clone(),
            black: p.black.clone(),
            white: p.white.clone(),
            handicap: p.handicap,
            komi: game.komi,
        });
        let view = view_of(&hub, game).await?;
        // Wrong colours found after move 10 (Art. 17.1): the game stands with the colours as played.
        let mut outcome = Outcome::from_result(view.result.as_deref());
        if view.players_swapped {
            outcome = match outcome {
                Outcome::BlackWins => Outcome::WhiteWins,
                Outcome::WhiteWins => Outcome::BlackWins,
                other => other,
            };
        }
        outcomes.push(outcome);
    }
    let xml = export_opengotha(&Round { event, number: round, pairings }, &outcomes);
    let disposition = format!("attachment; filename=\"round-{round}-results.xml\"");
    Ok((
        [
            (header::CONTENT_TYPE, "application/xml; charset=utf-8".to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        xml,
    )
        .into_response())
}

/// Every record of the round, named `R{round}-T{table}-{black}-{white}.sgf`.
async fn round_records(State(hub): State<AppState>, ApiPath(round): ApiPath<u32>) -> ApiResult<Response> {
    let games = games_of_round(&hub, round).await?;
    let mut files = Vec::new();
    for game in &games {
        let table = table(&hub, &game.table)?;
        let sgf = game_record(&hub, &table.name, game).await?;
        let name = |n: &Option<String>| crate::archive::safe_name(n.as_deref().unwrap_or("unknown"));
        let table_part = match game.table.parse::<u32>() {
            Ok(n) => format!("{n:03}"),
            Err(_) => crate::archive::safe_name(&game.table),
        };
        files.push((
            format!("R{round}-T{table_part}-{}-{}.sgf", name(&game.black), name(&game.white)),
            sgf.into_bytes(),
        ));
    }
    let zip = crate::archive::zip_stored(&files).map_err(|e| Error::internal(e.to_string()))?;
    let disposition = format!("attachment; filename=\"round-{round}-records.zip\"");
    Ok(([(header::CONTENT_TYPE, "application/zip".to_owned()), (header::CONTENT_DISPOSITION, disposition)], zip)
        .into_response())
}
