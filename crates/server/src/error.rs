//! The service's one error: what kind of failure it is (in terms a client can act on), a
//! machine code and a message for people. A failure an HTTP client can see becomes an [`Error`]
//! where it arises (the referee's refusals in `adapters`, the store's failures by `From`, the
//! edge's own checks in `api`); its kind is mapped to an HTTP status in one place, the
//! `IntoResponse` below (as moonfire-nvr's `ErrorKind`).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::json::ErrorBody;
use crate::store::StoreError;

/// What kind of failure an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is malformed.
    BadRequest,
    /// No token where one is needed.
    Unauthenticated,
    /// The token is wrong for this action.
    PermissionDenied,
    /// No such table, game, event, image, alert or move.
    NotFound,
    /// The route exists, the method does not.
    MethodNotAllowed,
    /// The request body did not arrive in time.
    Timeout,
    /// The action does not fit the game's state (already decided, wrong phase, not that side's
    /// turn).
    Conflict,
    /// The body is too large.
    TooLarge,
    /// The content type is not one the route takes.
    UnsupportedMediaType,
    /// Well-formed but unusable: a corrupt image, an invalid action or calibration.
    Unprocessable,
    /// The client sends faster than allowed.
    RateLimited,
    /// The service failed (the store, a stopped table).
    Internal,
    /// The service cannot do it now and says when it can (the hall's log unreachable and its
    /// buffer full, a table changing hands).
    Unavailable,
    /// Another node of the hall did not answer in time.
    UpstreamTimeout,
}

impl ErrorKind {
    /// The HTTP status of this kind: the one mapping.
    pub fn status(self) -> StatusCode {
        match self {
            Self::BadRequest => StatusCode::BAD_REQUEST,
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::PermissionDenied => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Timeout => StatusCode::REQUEST_TIMEOUT,
            Self::Conflict => StatusCode::CONFLICT,
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Unprocessable => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::UpstreamTimeout => StatusCode::GATEWAY_TIMEOUT,
        }
    }

    /// Every kind, for [`ErrorKind::of_status`] (a kind added to the enum is added here).
    const ALL: [ErrorKind; 14] = [
        Self::BadRequest,
        Self::Unauthenticated,
        Self::PermissionDenied,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::Timeout,
        Self::Conflict,
        Self::TooLarge,
        Self::UnsupportedMediaType,
        Self::Unprocessable,
        Self::RateLimited,
        Self::Internal,
        Self::Unavailable,
        Self::UpstreamTimeout,
    ];

    /// The kind an HTTP status stands for (the inverse of [`ErrorKind::status`]): how a node
    /// of the hall reads another node's refusal. `None` for a status no kind has.
    pub fn of_status(status: StatusCode) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.status() == status)
    }
}

/// A failure: its kind, a machine code (`not_found`, `bad_json`, `invalid_action`, …, listed in
/// `API.md`) and what is wrong, for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    code: &'static str,
    message: String,
}

impl Error {
    /// An error of `kind` with its code and message.
    pub fn new(kind: ErrorKind, code: &'static str, message: impl Into<String>) -> Self {
        Self { kind, code, message: message.into() }
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The machine code.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// Its body on the wire: `{"error": code, "message": text}`.
    pub fn body(&self) -> ErrorBody {
        ErrorBody { error: self.code, message: self.message.clone() }
    }

    /// No such thing (`not_found`).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, "not_found", message)
    }

    /// The action does not fit the game's state (`conflict`).
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, "conflict", message)
    }

    /// A malformed request.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadRequest, code, message)
    }

    /// Well-formed but unusable.
    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unprocessable, code, message)
    }

    /// An arbiter action that cannot be applied as it is (`invalid_action`).
    pub fn invalid_action(message: impl Into<String>) -> Self {
        Self::unprocessable("invalid_action", message)
    }

    /// The service failed (`internal`).
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(ErrorKind::Internal, "internal", format!("internal error: {message}"))
    }

    /// No token where one is needed (`missing_token`).
    pub fn missing_token() -> Self {
        Self::new(ErrorKind::Unauthenticated, "missing_token", "missing token: send Authorization: Bearer <token>")
    }

    /// The token is wrong for this action (`wrong_token`).
    pub fn wrong_token() -> Self {
        Self::new(ErrorKind::PermissionDenied, "wrong_token", "wrong token for this action")
    }

    /// A body larger than `limit` bytes (`too_large`).
    pub fn too_large(limit: usize) -> Self {
        Self::new(ErrorKind::TooLarge, "too_large", format!("body larger than {limit} bytes"))
    }

    /// A content type the route does not take (`unsupported_media_type`).
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::UnsupportedMediaType, "unsupported_media_type", message)
    }
}

impl From<StoreError> for Error {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::LogUnreachable(message) => Self::new(ErrorKind::Unavailable, "hall_log_unreachable", message),
            err => Self::internal(err),
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = self.kind.status();
        let unauthenticated = self.kind == ErrorKind::Unauthenticated;
        let mut response = (status, Json(self.body())).into_response();
        if unauthenticated {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_status_and_the_body_names_the_code() {
        let response = Error::invalid_action("move numbers start at 1").into_response();
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(Error::conflict("x").kind().status(), StatusCode::CONFLICT);
        assert_eq!(Error::not_found("x").kind().status(), StatusCode::NOT_FOUND);
        assert_eq!(Error::internal("disk").to_string(), "internal error: disk");
        let response = Error::missing_token().into_response();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers().get(header::WWW_AUTHENTICATE).map(HeaderValue::as_bytes), Some(&b"Bearer"[..]));
    }

    #[test]
    fn every_kind_reads_back_from_its_status() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::of_status(kind.status()), Some(kind), "{kind:?}");
        }
        assert_eq!(ErrorKind::of_status(StatusCode::IM_A_TEAPOT), None);
    }
}
