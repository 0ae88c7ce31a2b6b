//! The HTTP API: JSON over HTTP/1.1 on hyper, with tower middleware.
//!
//! Every request gets a request id (the client's `x-request-id` when it is short and
//! printable, else a counter), echoed in the response and carried by a tracing span. API
//! requests then pass, outermost first: load shedding (over [`HttpConfig::concurrency`]
//! requests in flight, the answer is `503 overloaded` at once instead of a queue), the
//! concurrency limit, and a time limit (`504 timeout`): [`HttpConfig::request_timeout`],
//! except for endpoints that execute skills (`/v1/execute`, `/v1/invoke`), which get
//! [`App::exec_timeout`] so a script's own timeout is reported (as the outcome's `limit`)
//! before the request's. An event stream's body is not timed; at most
//! [`HttpConfig::max_event_streams`] are open at once (`503 overloaded` beyond), and all of
//! them end when the server shuts down. Bodies are read up to [`HttpConfig::max_body_bytes`]
//! (`413`). Headers must arrive within [`HttpConfig::header_read_timeout`] (slow clients
//! are dropped), and at most [`HttpConfig::max_connections`] connections are served at once
//! (more wait in the kernel's accept queue). Errors are `{"error": {"code", "message"}}`
//! with a fitting status. When a token is configured, action endpoints (every `POST` but
//! `/v1/select`) need `Authorization: Bearer <token>` (the scheme in any case, RFC 7235);
//! the token is read from that header only, and compared in time independent of its
//! content.

mod api;
mod mount;
mod openapi;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, ServiceBuilder, ServiceExt};
use tracing::Instrument;

use crate::engine::Engine;
use crate::error::Error;

pub use mount::Mount;
pub use openapi::openapi;

/// Default request timeout.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time added to the runtime's script timeout to give the time limit of the
/// endpoints that execute skills (see [`App::exec_timeout`]).
pub const DEFAULT_EXEC_TIMEOUT_MARGIN: Duration = Duration::from_secs(10);
/// Default limit on API requests in flight.
pub const DEFAULT_CONCURRENCY: usize = 512;
/// Default limit on request bodies.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default limit on open connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// Default limit on event streams open at once (each holds a connection for as long as
/// the client listens).
pub const DEFAULT_MAX_EVENT_STREAMS: usize = 64;
/// Default time a client has to send its request headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long shutdown waits for in-flight requests.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// Longest request id taken from a client.
const MAX_REQUEST_ID: usize = 64;

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Bearer token required on action endpoints (`None`: none required).
    pub token: Option<String>,
    /// Time limit of a request ([`DEFAULT_REQUEST_TIMEOUT`]); the endpoints that execute
    /// skills get at least [`App::exec_timeout`]. An event stream's body is not timed.
    pub request_timeout: Duration,
    /// Added to the runtime's script timeout for [`App::exec_timeout`]
    /// ([`DEFAULT_EXEC_TIMEOUT_MARGIN`]).
    pub exec_timeout_margin: Duration,
    /// API requests in flight before new ones are shed with `503`
    /// ([`DEFAULT_CONCURRENCY`], at least 1).
    pub concurrency: usize,
    /// Largest request body ([`DEFAULT_MAX_BODY_BYTES`]).
    pub max_body_bytes: usize,
    /// Open connections served at once ([`DEFAULT_MAX_CONNECTIONS`], at least 1).
    pub max_connections: usize,
    /// Event streams open at once ([`DEFAULT_MAX_EVENT_STREAMS`]); more are refused with
    /// `503 overloaded`. 0 turns the event stream off.
    pub max_event_streams: usize,
    /// Time a client has to send its request headers ([`HEADER_READ_TIMEOUT`]).
    pub header_read_timeout: Duration,
    /// Catalog budgets by profile, used when a request gives none.
    pub profile_budgets: std::collections::BTreeMap<String, skill_registry::Budget>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            token: None,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            exec_timeout_margin: DEFAULT_EXEC_TIMEOUT_MARGIN,
            concurrency: DEFAULT_CONCURRENCY,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_event_streams: DEFAULT_MAX_EVENT_STREAMS,
            header_read_timeout: HEADER_READ_TIMEOUT,
            profile_budgets: std::collections::BTreeMap::new(),
        }
    }
}

/// The response body type.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Everything a request handler reaches.
#[derive(Debug)]
pub struct App {
    engine: Arc<Engine>,
    config: HttpConfig,
    next_id: AtomicU64,
    /// One permit per open event stream.
    event_streams: Arc<Semaphore>,
    /// Becomes `true` when [`serve`] starts shutting down: event streams end.
    closing: watch::Sender<bool>,
    /// A service under a path prefix beside the API (e.g. MCP at `/mcp`).
    mount: Option<Mount>,
}

impl App {
    /// An application over an engine.
    pub fn new(engine: Arc<Engine>, config: HttpConfig) -> Arc<App> {
        Self::with_mount(engine, config, None)
    }

    /// An application with another service mounted under a path prefix ([`Mount`]).
    pub fn with_mount(engine: Arc<Engine>, config: HttpConfig, mount: Option<Mount>) -> Arc<App> {
        let event_streams = Arc::new(Semaphore::new(config.max_event_streams));
        Arc::new(App {
            engine,
            config,
            next_id: AtomicU64::new(1),
            event_streams,
            closing: watch::channel(false).0,
            mount,
        })
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The time limit of the endpoints that execute skills: the runtime's script timeout
    /// plus [`HttpConfig::exec_timeout_margin`], and never less than
    /// [`HttpConfig::request_timeout`]. A script past its own timeout is killed and
    /// reported in the outcome (`"limit": "timeout"`) before this fires; a handler that
    /// never answers gets `504 timeout`. A model output whose commands together run
    /// longer than this also gets `504` (send them one by one to avoid that).
    pub fn exec_timeout(&self) -> Duration {
        let script = self.engine.runtime().config().limits.timeout;
        script
            .saturating_add(self.config.exec_timeout_margin)
            .max(self.config.request_timeout)
    }
}

/// A JSON error response.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// The methods a `405` names in its `Allow` header.
    allow: Option<String>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            allow: None,
        }
    }

    /// The `405` for a path served with other methods.
    pub(crate) fn method_not_allowed(path: &str, allowed: &[&str]) -> Self {
        let allow = allowed.join(", ");
        ApiError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            code: "method_not_allowed",
            message: format!("{path} accepts {allow}"),
            allow: Some(allow),
        }
    }

    pub(crate) fn into_response(self) -> Response<Body> {
        let mut resp = json_response(
            self.status,
            &serde_json::json!({ "error": { "code": self.code, "message": self.message } }),
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

type ApiService = BoxCloneSyncService<Request<Incoming>, Response<Body>, BoxError>;

/// The API stack: load shedding and the concurrency limit around the routes (which apply
/// each endpoint's time limit themselves).
fn api_service(app: Arc<App>) -> ApiService {
    let concurrency = app.config.concurrency.max(1);
    let svc = ServiceBuilder::new()
        .load_shed()
        .concurrency_limit(concurrency)
        .service_fn(move |req: Request<Incoming>| {
            let app = app.clone();
            async move { Ok::<_, BoxError>(api::handle(&app, req).await) }
        });
    BoxCloneSyncService::new(svc)
}

/// The response for an error of the middleware stack.
fn middleware_error(e: &BoxError) -> Response<Body> {
    if e.is::<tower::load_shed::error::Overloaded>() {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "overloaded",
            "too many requests in flight; retry shortly",
        )
    } else {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
    }
    .into_response()
}

/// The request id: the client's when it is short and printable, else a counter.
fn request_id(app: &App, req: &Request<Incoming>) -> String {
    req.headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty() && v.len() <= MAX_REQUEST_ID && v.bytes().all(|b| b.is_ascii_graphic())
        })
        .map(str::to_owned)
        .unwrap_or_else(|| format!("req-{}", app.next_id.fetch_add(1, Ordering::Relaxed)))
}

async fn handle_request(app: Arc<App>, api: ApiService, req: Request<Incoming>) -> Response<Body> {
    let id = request_id(&app, &req);
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let span = tracing::info_span!("request", id = %id, method = %method, path = %path);
    async move {
        let started = Instant::now();
        let mounted = app.mount.as_ref().filter(|m| m.matches(req.uri().path()));
        let mut resp = match mounted {
            Some(mount) => match api::authorize(&app, &req) {
                Ok(()) => mount.call(req).await,
                Err(e) => e.into_response(),
            },
            None => match api.oneshot(req).await {
                Ok(r) => r,
                Err(e) => middleware_error(&e),
            },
        };
        if let Ok(v) = HeaderValue::from_str(&id) {
            resp.headers_mut().insert("x-request-id", v);
        }
        tracing::info!(
            status = resp.status().as_u16(),
            micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            "done"
        );
        resp
    }
    .instrument(span)
    .await
}

/// Serve the API on `listener` until `shutdown` completes, then stop accepting, end the
/// event streams, let in-flight requests finish (up to [`SHUTDOWN_GRACE`]) and return.
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), Error> {
    let api = api_service(app.clone());
    let graceful = GracefulShutdown::new();
    let connections = Arc::new(Semaphore::new(app.config.max_connections.max(1)));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = connections.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let conn_app = app.clone();
        let api = api.clone();
        let service = hyper::service::service_fn(move |req| {
            let app = conn_app.clone();
            let api = api.clone();
            async move { Ok::<_, Infallible>(handle_request(app, api, req).await) }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(app.config.header_read_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(peer = %peer, error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    // Event streams never finish on their own: end them so connections can close.
    app.closing.send_replace(true);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => {
            tracing::warn!("shutdown grace period over; closing remaining connections");
        }
    }
    Ok(())
}

/// Bind `addr` and return the listener and the address actually bound (port 0 picks one).
pub async fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), Error> {
    let listener = TcpListener::bind(addr).await.map_err(|e| Error::Bind {
        addr,
        message: e.to_string(),
    })?;
    let local = listener.local_addr().map_err(|e| Error::Bind {
        addr,
        message: e.to_string(),
    })?;
    Ok((listener, local))
}

/// Equality of two byte strings in time independent of their content: every byte up to
/// the longer length is compared (the shorter one padded with zeros) and the lengths'
/// difference is folded in, with no early exit.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    let mut diff = a.len() ^ b.len();
    for i in 0..n {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

/// Read a whole request body, up to `limit` bytes.
pub(crate) async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, ApiError> {
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the request body is over {limit} bytes"),
        )),
        Err(e) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_body",
            format!("the request body could not be read: {e}"),
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"secret2", b"secret"));
        // A prefix padded with zeros is still not equal: the lengths differ.
        assert!(!constant_time_eq(b"secret", b"secret\0"));
        assert!(!constant_time_eq(b"", b"\0"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
