//! Responses: the body type, JSON responses, and API errors as `{"error": {code, message}}`
//! with their status.

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;

/// The response body type.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A JSON error response.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    code: std::borrow::Cow<'static, str>,
    pub(crate) message: String,
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
            &skill_runtime::wire::error_body(&self.code, &self.message),
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

/// The answer to a `HEAD` from the answer the `GET` gets (RFC 9110, section 9.3.2): the
/// same status and headers, a `Content-Length` of the `GET`'s body when its length is known
/// (a stream's is not), and no body. The `GET`'s body is dropped unread, so a stream's
/// resources go with it.
pub(crate) fn head_response(resp: Response<Body>) -> Response<Body> {
    let (mut parts, body) = resp.into_parts();
    let bodiless = parts.status.is_informational()
        || matches!(
            parts.status,
            StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED
        );
    if !bodiless && !parts.headers.contains_key(CONTENT_LENGTH) {
        if let Some(length) = body.size_hint().exact() {
            parts
                .headers
                .insert(CONTENT_LENGTH, HeaderValue::from(length));
        }
    }
    Response::from_parts(parts, full(Bytes::new()))
}

/// The buffer a JSON answer starts with.
const ANSWER_START_BYTES: usize = 4096;

pub(crate) fn json_response(status: StatusCode, value: &impl serde::Serialize) -> Response<Body> {
    json_bytes(status, json_body(value))
}

/// `value` as JSON bytes (an `internal` error's JSON if it cannot be written).
pub(crate) fn json_body(value: &impl serde::Serialize) -> Bytes {
    // Most answers are a few KiB: start there rather than grow from empty.
    let mut body = Vec::with_capacity(ANSWER_START_BYTES);
    serde_json::to_writer(&mut body, value)
        .map(|()| body)
        .unwrap_or_else(|e| {
            format!("{{\"error\":{{\"code\":\"internal\",\"message\":\"{e}\"}}}}").into_bytes()
        })
        .into()
}

/// A JSON response of bytes already rendered.
pub(crate) fn json_bytes(status: StatusCode, body: Bytes) -> Response<Body> {
    let mut resp = Response::new(full(body));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// The `400` of a request with two `Host` headers, or none on HTTP/1.1 (see `host.rs`).
pub(crate) fn bad_host() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "bad_host",
        "an HTTP/1.1 request needs exactly one Host header (RFC 9112, section 3.2)",
    )
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// The bytes a body would send.
    async fn bytes_of(body: Body) -> Bytes {
        body.collect().await.unwrap().to_bytes()
    }

    #[tokio::test]
    async fn a_head_keeps_status_and_headers_and_sends_no_body() {
        let get = json_response(StatusCode::OK, &serde_json::json!({ "status": "ok" }));
        let length = get.body().size_hint().exact().unwrap();
        let head = head_response(get);
        assert_eq!(head.status(), StatusCode::OK);
        assert_eq!(head.headers()[CONTENT_TYPE], "application/json");
        assert_eq!(head.headers()[CONTENT_LENGTH], length.to_string().as_str());
        assert!(bytes_of(head.into_body()).await.is_empty());

        // An error keeps its status and its own headers.
        let refused = ApiError::method_not_allowed("/v1/health", &["GET", "HEAD"]).into_response();
        let head = head_response(refused);
        assert_eq!(head.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(head.headers()[http::header::ALLOW], "GET, HEAD");
        assert!(head.headers().contains_key(CONTENT_LENGTH));
        assert!(bytes_of(head.into_body()).await.is_empty());
    }

    #[tokio::test]
    async fn a_head_names_no_length_it_does_not_know() {
        // A body of unknown length (a stream) gets no Content-Length.
        let (_tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1);
        struct Stream(tokio::sync::mpsc::Receiver<Bytes>);
        impl hyper::body::Body for Stream {
            type Data = Bytes;
            type Error = Infallible;
            fn poll_frame(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>>
            {
                self.0
                    .poll_recv(cx)
                    .map(|b| b.map(|b| Ok(hyper::body::Frame::data(b))))
            }
        }
        let mut stream = Response::new(Stream(rx).boxed_unsync());
        stream
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        let head = head_response(stream);
        assert!(!head.headers().contains_key(CONTENT_LENGTH));
        assert_eq!(head.headers()[CONTENT_TYPE], "text/event-stream");
        assert!(bytes_of(head.into_body()).await.is_empty());

        // Nor does a status that has no body.
        let mut empty = Response::new(full(Bytes::new()));
        *empty.status_mut() = StatusCode::NO_CONTENT;
        assert!(!head_response(empty).headers().contains_key(CONTENT_LENGTH));
    }
}
