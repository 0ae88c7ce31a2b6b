//! `/mcp` as a service mounted beside `/v1`: the limits `/v1` has, applied before rmcp sees
//! a request. A request with an `Origin` its server does not accept (see the `origin` module:
//! loopback, same origin, or `allowed_hosts`) is refused first with `403
//! forbidden_origin`, the shape of the `Host` check's `403 forbidden_host`, before its
//! body is read. A request body is read whole first (MCP requests are single JSON-RPC
//! messages), within [`McpLimits::max_body_bytes`] (`413`, a declared length over it at
//! once) and [`McpLimits::body_read_timeout`] (`408`); a body that breaks off is `400`.
//! A POST whose JSON body is not a JSON-RPC message rmcp reads gets `400` and a JSON-RPC
//! error (`-32700` for bytes that are not JSON, `-32600` for anything else, with the `id`
//! when it could be read; see `jsonrpc`); rmcp answered `415` with plain text. A message
//! that passes goes on as the bytes that came. Then a new session (a POST `initialize`
//! without `Mcp-Session-Id`) is refused with `503` and `Retry-After` while
//! [`McpLimits::max_sessions`] are open: each costs memory until its client deletes it or
//! it stays idle for rmcp's keep-alive (5 minutes). The server answers a `tools/call` over
//! [`McpLimits::max_calls_in_flight`] itself (a JSON-RPC error, at once).
//!
//! Within a session (see `book`): a request whose `id` is that of a request still in
//! flight on the session gets `400` and `-32600` with that id, at once (rmcp answered one
//! of them and left the others open for good); a GET stream past
//! [`MAX_GET_STREAMS_PER_SESSION`] gets `429`. `DELETE` of an open session answers `200`
//! (rmcp said `202`, which the specification gives to accepted notifications and Python's
//! client logs as a failed termination; the specification names no success status, and
//! `200` is the TypeScript SDK's), and of a session that is not open `404`, as every other
//! request naming it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::RmcpService;
use crate::jsonrpc::{self, Rejection};
use crate::origin::origin_allowed;
use crate::server::DEFAULT_MAX_CALLS_IN_FLIGHT;

mod book;

use book::HeldBody;
pub use book::MAX_GET_STREAMS_PER_SESSION;
pub(crate) use book::SessionBook;

/// The body of every `/mcp` answer.
pub(crate) type Body = http_body_util::combinators::UnsyncBoxBody<Bytes, std::convert::Infallible>;

/// The header naming a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Default most MCP sessions open at once ([`McpLimits::max_sessions`]).
pub const DEFAULT_MAX_SESSIONS: usize = 1024;
/// Seconds a client refused for too many sessions is told to wait.
const RETRY_AFTER_SECS: u64 = 5;

/// The limits of `/mcp` over HTTP.
#[derive(Debug, Clone, Copy)]
pub struct McpLimits {
    /// Largest request body (as `/v1`'s `max_body_bytes`).
    pub max_body_bytes: usize,
    /// Time a client has to send a request body once its headers are in.
    pub body_read_timeout: Duration,
    /// Sessions open at once ([`DEFAULT_MAX_SESSIONS`]); more are refused with `503`.
    pub max_sessions: usize,
    /// `tools/call` requests running at once, over every session of the server
    /// ([`DEFAULT_MAX_CALLS_IN_FLIGHT`], at least 1); one more is answered at once with a
    /// JSON-RPC error (`-32000`, "the server is busy ... retry").
    pub max_calls_in_flight: usize,
}

impl Default for McpLimits {
    fn default() -> Self {
        McpLimits {
            max_body_bytes: skill_runtime::wire::limits::DEFAULT_MAX_BODY_BYTES,
            body_read_timeout: skill_runtime::wire::limits::DEFAULT_BODY_READ_TIMEOUT,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_calls_in_flight: DEFAULT_MAX_CALLS_IN_FLIGHT,
        }
    }
}

/// A JSON-RPC error response with an HTTP status (`id` null: the request was not read).
fn refuse(status: StatusCode, code: i32, message: &str) -> Response<Body> {
    refuse_id(status, code, message, serde_json::Value::Null)
}

/// A JSON-RPC error response to the request `id`, with an HTTP status.
fn refuse_id(
    status: StatusCode,
    code: i32,
    message: &str,
    id: serde_json::Value,
) -> Response<Body> {
    let rejection = Rejection {
        code: rmcp::model::ErrorCode(code),
        message: message.to_owned(),
        id,
    };
    json_response(status, rejection.to_json())
}

/// A response with `status` and the JSON text `body`.
fn json_response(status: StatusCode, body: String) -> Response<Body> {
    let mut resp = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// The `403` of a request whose `Origin` this server does not accept: the body of the
/// `Host` check's `403 forbidden_host` (`{"error": {"code", "message"}}`).
fn forbidden_origin() -> Response<Body> {
    json_response(StatusCode::FORBIDDEN, forbidden_origin_body())
}

/// The JSON body of a `403 forbidden_origin` (also the bare service's, `bare.rs`).
pub(crate) fn forbidden_origin_body() -> String {
    skill_runtime::wire::error_body(
        "forbidden_origin",
        "the Origin header names a site this server does not serve (DNS-rebinding protection): \
         a browser page may call it from localhost, its own address or a name in the server's `allowed_hosts`",
    )
    .to_string()
}

/// Whether every `Origin` of a request (its headers and target) is accepted (see
/// `origin_allowed`); a request without one is.
pub(crate) fn origin_accepted(
    headers: &http::HeaderMap,
    uri: &http::Uri,
    allowed_hosts: &[String],
) -> bool {
    let host = headers
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| uri.authority().map(http::uri::Authority::as_str));
    headers.get_all(http::header::ORIGIN).iter().all(|v| {
        v.to_str()
            .is_ok_and(|origin| origin_allowed(origin, host, allowed_hosts))
    })
}

/// Whether a message asks to open a session (`initialize`, well-formed or not).
fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r) if r.request.method() == "initialize")
}

/// Whether a request says its body is JSON (`Content-Type: application/json`, parameters
/// aside): only such a body is read as a message here (rmcp answers any other `415`).
fn says_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// What `/mcp` serves with: rmcp's service, its sessions, and what is in flight in them.
pub(crate) struct Mount {
    /// rmcp's streamable HTTP service.
    pub(crate) service: RmcpService,
    /// Its sessions (to count them, and to know which are open).
    pub(crate) sessions: Arc<LocalSessionManager>,
    /// Request ids in flight and GET streams open, per session.
    pub(crate) book: SessionBook,
}

/// Serve one request to `/mcp` within `limits` (see the module docs).
pub(crate) async fn handle<B>(
    mount: &Mount,
    limits: McpLimits,
    allowed_hosts: &[String],
    req: Request<B>,
) -> Response<Body>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = req.into_parts();
    if !origin_accepted(&parts.headers, &parts.uri, allowed_hosts) {
        return forbidden_origin();
    }
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            &format!("the request body is over {} bytes", limits.max_body_bytes),
        );
    }
    let read = Limited::new(body, limits.max_body_bytes).collect();
    let bytes = match tokio::time::timeout(limits.body_read_timeout, read).await {
        Err(_) => {
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                -32600,
                &format!(
                    "the request body did not arrive within {} ms",
                    limits.body_read_timeout.as_millis()
                ),
            );
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                -32600,
                &format!("the request body is over {} bytes", limits.max_body_bytes),
            );
        }
        Ok(Err(_)) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                -32700,
                "the request body could not be read",
            );
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    // A malformed message is answered here, as JSON-RPC; a well-formed one goes to rmcp
    // as the bytes that came.
    let mut initialize = false;
    let mut request_id = None;
    if parts.method == http::Method::POST && says_json(&parts.headers) {
        match jsonrpc::check(&bytes) {
            Ok(message) => {
                initialize = is_initialize(&message);
                if let ClientJsonRpcMessage::Request(r) = message {
                    request_id = Some(r.id);
                }
            }
            Err(rejection) => return json_response(StatusCode::BAD_REQUEST, rejection.to_json()),
        }
    }
    let session = parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let hold = match (&parts.method, session.as_deref()) {
        (&http::Method::DELETE, Some(session)) => {
            return delete(mount, session, Request::from_parts(parts, Full::new(bytes))).await;
        }
        (&http::Method::POST, Some(session)) => match request_id {
            None => None,
            Some(id) => match mount.book.begin(session, &id) {
                Some(hold) => Some(hold),
                None => return id_in_flight(&id),
            },
        },
        (&http::Method::GET, Some(session)) => match mount.book.open_stream(session) {
            Some(hold) => Some(hold),
            None => return too_many_streams(),
        },
        _ => None,
    };
    // A stateless request (protocol 2026-07-28) has no session id either.
    let may_open = initialize && session.is_none();
    if may_open && mount.sessions.sessions.read().await.len() >= limits.max_sessions {
        let mut resp = refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            -32000,
            &format!(
                "too many MCP sessions are open ({}); end unused ones with DELETE, or try again later",
                limits.max_sessions
            ),
        );
        resp.headers_mut().insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from(RETRY_AFTER_SECS),
        );
        return resp;
    }
    let response = mount
        .service
        .handle(Request::from_parts(parts, Full::new(bytes)))
        .await;
    response.map(|b| match hold {
        Some(hold) => HeldBody::new(b.boxed_unsync(), hold).boxed_unsync(),
        None => b.boxed_unsync(),
    })
}

/// The `400` of a request whose id is that of a request in flight on its session.
fn id_in_flight(id: &rmcp::model::RequestId) -> Response<Body> {
    let json = serde_json::to_value(id).unwrap_or(serde_json::Value::Null);
    refuse_id(
        StatusCode::BAD_REQUEST,
        rmcp::model::ErrorCode::INVALID_REQUEST.0,
        &format!(
            "a request with id {json} is still in flight on this session: give each request \
             an id of its own (an id may be used again once its request has been answered)"
        ),
        json,
    )
}

/// The `429` of a GET stream past [`MAX_GET_STREAMS_PER_SESSION`].
fn too_many_streams() -> Response<Body> {
    refuse(
        StatusCode::TOO_MANY_REQUESTS,
        -32000,
        &format!(
            "this session has {MAX_GET_STREAMS_PER_SESSION} GET streams open, the most one \
             session may: close one before opening another"
        ),
    )
}

/// `DELETE` of `session`: `200` once rmcp has closed it (rmcp answers `202`), `404` when
/// no such session is open.
async fn delete(mount: &Mount, session: &str, req: Request<Full<Bytes>>) -> Response<Body> {
    let open = mount.sessions.sessions.read().await.contains_key(session);
    let mut response = mount.service.handle(req).await.map(|b| b.boxed_unsync());
    if response.status() == StatusCode::ACCEPTED {
        if !open {
            return refuse(
                StatusCode::NOT_FOUND,
                -32000,
                "no MCP session with this Mcp-Session-Id is open (it ended, or never began)",
            );
        }
        *response.status_mut() = StatusCode::OK;
    }
    response
}
