//! Responses: the body type, JSON responses, and API errors as `{"error": {code, message}}`
//! with their status.

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};

/// The response body type.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A JSON error response.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    code: std::borrow::Cow<'static, str>,
    message: String,
    /// The methods a `405` names in its `Allow` header.
    allow: Option<String>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code: code.into(),
            message: message.into(),
            allow: None,
        }
    }

    /// An error with a code computed at run time (an engine error's).
    pub(crate) fn owned(status: StatusCode, code: String, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code: code.into(),
            message: message.into(),
            allow: None,
        }
    }

    /// The `405` for a path served with other methods.
    pub(crate) fn method_not_allowed(path: &str, allowed: &[&str]) -> Self {
        let allow = allowed.join(", ");
        ApiError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            code: "method_not_allowed".into(),
            message: format!("{path} accepts {allow}"),
            allow: Some(allow),
        }
    }

    pub(crate) fn into_response(self) -> Response<Body> {
        let mut resp = json_response(
            self.status,
            &crate::wire::error_body(&self.code, &self.message),
        );
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer"),
            );
        }
        if let Some(v) = self.allow.and_then(|a| HeaderValue::from_str(&a).ok()) {
            resp.headers_mut().insert(http::header::ALLOW, v);
        }
        resp
    }
}

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

pub(crate) fn json_response(status: StatusCode, value: &impl serde::Serialize) -> Response<Body> {
    let body = serde_json::to_vec(value).unwrap_or_else(|e| {
        format!("{{\"error\":{{\"code\":\"internal\",\"message\":\"{e}\"}}}}").into_bytes()
    });
    let mut resp = Response::new(full(body));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// The `403` of a request whose `Host` does not name this server (see `host.rs`).
pub(crate) fn forbidden_host() -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "forbidden_host",
        "the Host header names this server by a name it does not serve (DNS-rebinding protection): use its IP address or localhost, or add the name to the server's `allowed_hosts`",
    )
}

/// The `401` of a request without the server's token.
pub(crate) fn unauthorized() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "this endpoint needs `Authorization: Bearer <token>` with the server's token",
    )
}
