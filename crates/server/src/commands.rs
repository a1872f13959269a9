//! An arbiter's command for a table analysed on another node of the hall (cluster mode,
//! docs/cluster.md): the node the arbiter posted to sends it as a NATS request on
//! `tengen.commands.<table>`; the table's node carries it out exactly as if it had been posted
//! there and answers with the HTTP status and body it gave, which the first node returns as they
//! are. A refused command changes nothing, wherever it was posted.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};

use crate::cluster::Cluster;
use crate::engine::Corners;
use crate::error::{Error, ErrorKind};
use crate::json::ArbiterAction;
use crate::store::Store;
use crate::table::TableHandle;

/// How long the node that took a command waits for the table's node to answer: an arbiter
/// action is one append to the hall's log.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// The subject a table's commands travel on to its node.
pub fn command_subject(table: &str) -> String {
    format!("tengen.commands.{table}")
}

/// What an arbiter asks of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum TableCommand {
    /// `POST /api/tables/{table}/arbiter`.
    Arbiter {
        /// The action.
        action: ArbiterAction,
    },
    /// `PUT /api/tables/{table}/calibration` (none: clear it).
    Calibrate {
        /// The corners.
        corners: Option<Corners>,
    },
    /// `GET /api/tables/{table}/sgf`: the current game's record (only the table's node has its
    /// game in its mirror).
    Record,
}

/// The table's node's answer: the HTTP status and JSON body it gave.
#[derive(Debug, Serialize, Deserialize)]
pub struct CommandAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body.
    pub body: serde_json::Value,
}

impl CommandAnswer {
    fn of(outcome: Result<serde_json::Value, Error>) -> Self {
        match outcome {
            Ok(body) => Self { status: StatusCode::OK.as_u16(), body },
            Err(err) => Self {
                status: err.kind().status().as_u16(),
                body: serde_json::to_value(err.body()).unwrap_or_default(),
            },
        }
    }
}

/// Carries a command out at a table running here (`store`: this node's mirror).
pub async fn carry_out(table: &TableHandle, store: &Store, command: TableCommand) -> Result<serde_json::Value, Error> {
    let body = match command {
        TableCommand::Record => serde_json::to_value(crate::api::live_record(table, store).await?),
        TableCommand::Arbiter { action } => serde_json::to_value(crate::api::apply_arbiter(table, action).await?),
        TableCommand::Calibrate { corners } => {
            serde_json::to_value(crate::api::apply_calibration(table, corners).await?)
        }
    };
    body.map_err(Error::internal)
}

/// Sends a command to the node analysing `table` and returns its answer as the response.
pub async fn forward(cluster: &Cluster, table: &str, command: &TableCommand) -> Result<Response, Error> {
    let answer = request(cluster, table, command).await?;
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
    Ok((status, Json(answer.body)).into_response())
}

/// Asks the node analysing `table` for something it answers with a body of type `T`; its
/// error, when it gives one, as an error of the same status and body.
pub async fn ask<T: serde::de::DeserializeOwned>(
    cluster: &Cluster,
    table: &str,
    command: &TableCommand,
) -> Result<T, Error> {
    let answer = request(cluster, table, command).await?;
    if answer.status == StatusCode::OK.as_u16() {
        return serde_json::from_value(answer.body)
            .map_err(|e| Error::internal(format!("table {table}'s node gave an answer that is not one: {e}")));
    }
    let message = answer.body["message"].as_str().unwrap_or("the table's node refused").to_owned();
    let kind = StatusCode::from_u16(answer.status).ok().and_then(ErrorKind::of_status).unwrap_or(ErrorKind::Internal);
    Err(Error::new(kind, "table_node_refused", message))
}

/// One request to the node analysing `table`.
async fn request(cluster: &Cluster, table: &str, command: &TableCommand) -> Result<CommandAnswer, Error> {
    let payload = serde_json::to_vec(command).map_err(Error::internal)?;
    let request = async_nats::Request::new().payload(payload.into()).timeout(Some(ANSWER_TIMEOUT));
    let reply = cluster.client().send_request(command_subject(table), request).await.map_err(|err| {
        use async_nats::client::RequestErrorKind;
        match err.kind() {
            RequestErrorKind::NoResponders => Error::new(
                ErrorKind::Unavailable,
                "table_moving",
                format!("no node of the hall analyses table {table} right now (it is changing hands): try again in a few seconds"),
            ),
            RequestErrorKind::TimedOut => Error::new(
                ErrorKind::UpstreamTimeout,
                "node_timeout",
                format!(
                    "the node analysing table {table} did not answer within {} s: the action may have been applied, check the table's events before sending it again",
                    ANSWER_TIMEOUT.as_secs()
                ),
            ),
            RequestErrorKind::Other | RequestErrorKind::InvalidSubject | RequestErrorKind::MaxPayloadExceeded => Error::new(
                ErrorKind::Unavailable,
                "hall_unreachable",
                format!("cannot reach the hall's NATS to send this to table {table}'s node: {err}"),
            ),
        }
    })?;
    serde_json::from_slice(&reply.payload)
        .map_err(|e| Error::internal(format!("table {table}'s node gave an answer that is not one: {e}")))
}

/// Answers `handle`'s commands sent from the other nodes, while its pipeline runs here (the task
/// is stopped with the pipeline). One node of the queue group answers each command.
pub async fn serve(cluster: Arc<Cluster>, handle: Arc<TableHandle>, store: Store) {
    let subject = command_subject(&handle.id);
    let mut requests = match cluster.client().queue_subscribe(subject, "tengen".into()).await {
        Ok(requests) => requests,
        Err(err) => {
            tracing::error!(table = %handle.id, %err, "cannot take the table's commands from the hall");
            return;
        }
    };
    while let Some(message) = requests.next().await {
        let Some(reply) = message.reply.clone() else { continue };
        let outcome = match serde_json::from_slice::<TableCommand>(&message.payload) {
            Ok(command) => carry_out(&handle, &store, command).await,
            Err(e) => Err(Error::bad_request("bad_command", format!("not a table command: {e}"))),
        };
        let answer = serde_json::to_vec(&CommandAnswer::of(outcome)).unwrap_or_default();
        if let Err(err) = cluster.client().publish(reply, answer.into()).await {
            tracing::warn!(table = %handle.id, %err, "cannot answer a command");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_travels_as_json_and_an_error_answers_with_its_status_and_body() {
        let command = TableCommand::Arbiter { action: ArbiterAction::Confirm { alert_id: 3 } };
        let text = serde_json::to_string(&command).unwrap_or_default();
        assert_eq!(serde_json::from_str::<TableCommand>(&text).ok(), Some(command));
        let answer = CommandAnswer::of(Err(Error::conflict("already decided")));
        assert_eq!(answer.status, 409);
        assert_eq!(answer.body, serde_json::json!({"error": "conflict", "message": "already decided"}));
        let answer = CommandAnswer::of(Ok(serde_json::json!({"events": []})));
        assert_eq!(answer.status, 200);
    }
}
