//! The HTTP API: JSON over HTTP/1.1 on hyper, with tower middleware.
//!
//! Every request gets a request id (the client's `x-request-id` when it is short and
//! printable, else a counter), echoed in the response and carried by a tracing span. API
//! requests then pass, outermost first: load shedding (over [`HttpConfig::concurrency`]
//! requests in flight, the answer is `503 overloaded` at once instead of a queue), the
//! concurrency limit, and a request timeout (`504 timeout`). The event stream bypasses the
//! timeout. Bodies are read up to [`HttpConfig::max_body_bytes`] (`413`). Headers must arrive
//! within [`HEADER_READ_TIMEOUT`] (slow clients are dropped), and at most
//! [`HttpConfig::max_connections`] connections are served at once (more wait in the kernel's
//! accept queue). Errors are `{"error": {"code", "message"}}` with a fitting status. When a
//! token is configured, action endpoints (every `POST`) need `Authorization: Bearer <token>`,
//! compared in constant time.

mod api;
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
use tokio::sync::Semaphore;
use tower::util::BoxCloneSyncService;
use tower::{BoxError, ServiceBuilder, ServiceExt};
use tracing::Instrument;

use crate::engine::Engine;
use crate::error::Error;

pub use openapi::openapi;

/// Default request timeout.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default limit on API requests in flight.
pub const DEFAULT_CONCURRENCY: usize = 512;
/// Default limit on request bodies.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default limit on open connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// Time a client has to send its request headers.
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
    /// Request timeout (not applied to the event stream).
    pub request_timeout: Duration,
    /// API requests in flight before new ones are shed with `503`.
    pub concurrency: usize,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Open connections served at once.
    pub max_connections: usize,
    /// Catalog budgets by profile, used when a request gives none.
    pub profile_budgets: std::collections::BTreeMap<String, skill_registry::Budget>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            token: None,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            concurrency: DEFAULT_CONCURRENCY,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
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
}

impl App {
    /// An application over an engine.
    pub fn new(engine: Arc<Engine>, config: HttpConfig) -> Arc<App> {
        Arc::new(App {
            engine,
            config,
            next_id: AtomicU64::new(1),
        })
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }
}

/// A JSON error response.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
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

/// The API stack: load shedding, the concurrency limit and the timeout around the routes.
fn api_service(app: Arc<App>) -> ApiService {
    let timeout = app.config.request_timeout;
    let concurrency = app.config.concurrency.max(1);
    let svc = ServiceBuilder::new()
        .load_shed()
        .concurrency_limit(concurrency)
        .timeout(timeout)
        .service_fn(move |req: Request<Incoming>| {
            let app = app.clone();
            async move { Ok::<_, BoxError>(api::handle(&app, req).await) }
        });
    BoxCloneSyncService::new(svc)
}

/// The response for an error of the middleware stack.
fn middleware_error(e: &BoxError) -> Response<Body> {
    if e.is::<tower::timeout::error::Elapsed>() {
        ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout",
            "the request took longer than the server's request timeout",
        )
    } else if e.is::<tower::load_shed::error::Overloaded>() {
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
        let mut resp = if api::is_event_stream(&req) {
            api::events(&app, req).await
        } else {
            match api.oneshot(req).await {
                Ok(r) => r,
                Err(e) => middleware_error(&e),
            }
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

/// Serve the API on `listener` until `shutdown` completes, then stop accepting, let
/// in-flight requests finish (up to [`SHUTDOWN_GRACE`]) and return.
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
        let app = app.clone();
        let api = api.clone();
        let service = hyper::service::service_fn(move |req| {
            let app = app.clone();
            let api = api.clone();
            async move { Ok::<_, Infallible>(handle_request(app, api, req).await) }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(peer = %peer, error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
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

/// Constant-time equality of two byte strings (time depends only on their lengths).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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
        assert!(constant_time_eq(b"", b""));
    }
}
