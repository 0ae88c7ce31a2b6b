//! The server: accepting connections, request ids, reading bodies, the middleware stack
//! (load shedding, concurrency limit), mounted services, `HEAD` answers (a `GET`'s status
//! and headers without its body), request logging (each request at DEBUG, a periodic
//! summary at INFO), graceful shutdown.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::HeaderValue;
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::util::BoxCloneSyncService;
use tower::{BoxError, ServiceBuilder, ServiceExt};
use tracing::Instrument;

use super::app::{App, Mount};
use super::config::SHUTDOWN_GRACE;
use super::conns::{Answers, CONN_BUFFER_BYTES, Conns, WriteTimeout};
use super::handlers::{self, Routed};
use super::host;
use super::request::{Params, find, read_body};
use super::response::{ApiError, Body, bad_host, forbidden_host, head_response};
use super::routes::{Endpoint, Op};
use skill_runtime::Error;

/// Longest request id taken from a client.
const MAX_REQUEST_ID: usize = 64;

/// How often the server logs its summary of the requests it answered (at INFO; each
/// request itself is logged at DEBUG).
const SUMMARY_INTERVAL: Duration = Duration::from_secs(60);

type ApiService = BoxCloneSyncService<Routed, Response<Body>, BoxError>;

/// The API stack: load shedding and the concurrency limit around the routes (which apply
/// each endpoint's time limit themselves). Requests reach it routed, token checked and
/// with their body read.
fn api_service(app: Arc<App>) -> ApiService {
    let concurrency = app.config.concurrency.max(1);
    let svc = ServiceBuilder::new()
        .load_shed()
        .concurrency_limit(concurrency)
        .service_fn(move |routed: Routed| {
            let app = app.clone();
            async move { Ok::<_, BoxError>(handlers::handle(&app, routed).await) }
        });
    BoxCloneSyncService::new(svc)
}

/// Counts of the requests answered since the last summary line.
#[derive(Debug, Default)]
struct Stats {
    /// The address served, named in the summary.
    listen: Option<SocketAddr>,
    total: AtomicU64,
    client_errors: AtomicU64,
    server_errors: AtomicU64,
}

impl Stats {
    fn record(&self, status: StatusCode) {
        self.total.fetch_add(1, Ordering::Relaxed);
        if status.is_client_error() {
            self.client_errors.fetch_add(1, Ordering::Relaxed);
        } else if status.is_server_error() {
            self.server_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Log the counts since the last call at INFO (nothing when there were none) and
    /// start again from zero.
    fn log_summary(&self) {
        let total = self.total.swap(0, Ordering::Relaxed);
        let client_errors = self.client_errors.swap(0, Ordering::Relaxed);
        let server_errors = self.server_errors.swap(0, Ordering::Relaxed);
        if total > 0 {
            tracing::info!(
                listen = ?self.listen,
                requests = total,
                client_errors,
                server_errors,
                "requests answered since the last summary"
            );
        }
    }
}

/// An API request: the endpoint and the token check, the body (outside the concurrency
/// limit, so a slow body holds only its own connection), then the concurrency limit;
/// health and readiness skip the limit so they answer while it is saturated.
async fn serve_api(
    app: &Arc<App>,
    api: &ApiService,
    req: Request<Incoming>,
    found: Result<(&'static Endpoint, Params), ApiError>,
) -> Response<Body> {
    let (endpoint, params) = match found {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let (parts, body) = req.into_parts();
    let bytes = if matches!(endpoint.input, super::routes::Input::Body(_)) {
        let read = read_body(
            &parts.headers,
            body,
            app.config.max_body_bytes,
            app.config.body_read_timeout,
        );
        match read.await {
            Ok(b) => b,
            Err(e) => return e.into_response(),
        }
    } else {
        Bytes::new()
    };
    let routed = Routed {
        endpoint,
        params,
        req: Request::from_parts(parts, bytes),
    };
    if matches!(endpoint.op, Op::Health | Op::Ready) {
        return handlers::handle(app, routed).await;
    }
    match api.clone().oneshot(routed).await {
        Ok(r) => r,
        Err(e) => middleware_error(&e),
    }
}

/// `network.protocol.version` of an HTTP version.
fn version_text(v: http::Version) -> &'static str {
    match v {
        http::Version::HTTP_09 => "0.9",
        http::Version::HTTP_10 => "1.0",
        http::Version::HTTP_2 => "2",
        http::Version::HTTP_3 => "3",
        _ => "1.1",
    }
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

/// Where a request goes: a mounted service, or an API endpoint (found, or the refusal).
enum Target {
    Mounted(Mount),
    Api(Result<(&'static Endpoint, Params), ApiError>),
}

async fn handle_request(
    app: Arc<App>,
    api: ApiService,
    stats: Arc<Stats>,
    req: Request<Incoming>,
) -> Response<Body> {
    let id = request_id(&app, &req);
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    // The endpoint (or mounted service) is found before the span is made: its route names
    // the span, and an OpenTelemetry span's name cannot change once it has started.
    let target = match app.mounts.iter().find(|m| m.serves(&path)) {
        Some(m) => Target::Mounted(m.clone()),
        None => Target::Api(find(app.config.token.as_deref(), &req)),
    };
    let route = match &target {
        Target::Mounted(m) => Some(m.route(&path)),
        Target::Api(Ok((endpoint, _))) => Some(endpoint.path.into()),
        Target::Api(Err(_)) => None,
    };
    // Formatted only when a layer records it: no allocation per request for the name.
    let gap = if route.is_some() { " " } else { "" };
    // The OpenTelemetry HTTP server span (semantic conventions 1.41, HTTP) beside the log
    // fields: `{method} {http.route}`, or `{method}` when no route matched (`otel.name` and
    // `otel.kind` are read by tracing-opentelemetry).
    let span = tracing::info_span!(
        "request",
        id = %id,
        method = %method,
        path = %path,
        otel.name = %format_args!("{method}{gap}{}", route.as_deref().unwrap_or_default()),
        otel.kind = "server",
        http.request.method = %method,
        http.route = route.as_deref(),
        url.path = %path,
        url.scheme = "http",
        network.protocol.version = version_text(req.version()),
        http.response.status_code = tracing::field::Empty,
    );
    let headers = req.headers();
    skill_runtime::activation::adopt_remote_parent(&span, &|key| {
        headers
            .get(key)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    async move {
        let started = Instant::now();
        let probe = matches!(path.trim_end_matches('/'), "/v1/health" | "/v1/ready");
        // A HEAD gets what the GET would, refusals included, without the body. A mounted
        // service answers HEAD its own way (hyper never sends a body to a HEAD).
        let head = method == Method::HEAD;
        let ours = |resp| if head { head_response(resp) } else { resp };
        let host = if probe {
            Ok(())
        } else {
            host::check(
                req.uri(),
                req.version(),
                req.headers(),
                &app.config.allowed_hosts,
            )
        };
        let mut resp = if let Err(refusal) = host {
            ours(match refusal {
                host::Refusal::Malformed => bad_host().into_response(),
                host::Refusal::Forbidden => forbidden_host().into_response(),
            })
        } else {
            match target {
                Target::Mounted(m) => serve_mounted(&app, &m, req).await,
                Target::Api(found) => ours(serve_api(&app, &api, req, found).await),
            }
        };
        stats.record(resp.status());
        if let Ok(v) = HeaderValue::from_str(&id) {
            resp.headers_mut().insert("x-request-id", v);
        }
        tracing::Span::current().record("http.response.status_code", resp.status().as_u16());
        tracing::debug!(
            status = resp.status().as_u16(),
            micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            "done"
        );
        resp
    }
    .instrument(span)
    .await
}

/// A request to a mounted service: the token check, then the service.
async fn serve_mounted(app: &App, mount: &Mount, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    if (mount.needs_token)(&parts) && !app.authorized(&parts.headers) {
        return app.unauthorized();
    }
    match mount
        .service
        .clone()
        .oneshot(Request::from_parts(parts, body))
        .await
    {
        Ok(resp) => resp,
        Err(never) => match never {},
    }
}

/// Serve the API on `listener` until `shutdown` completes, then stop accepting, end the
/// event streams, let in-flight requests finish (up to [`SHUTDOWN_GRACE`]) and return.
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), Error> {
    let api = api_service(app.clone());
    let stats = Arc::new(Stats {
        listen: listener.local_addr().ok(),
        ..Stats::default()
    });
    let summary = tokio::spawn({
        let stats = stats.clone();
        async move {
            let mut tick = tokio::time::interval(SUMMARY_INTERVAL);
            tick.tick().await;
            loop {
                tick.tick().await;
                stats.log_summary();
            }
        }
    });
    let graceful = GracefulShutdown::new();
    let connections = Arc::new(Semaphore::new(app.config.max_connections.max(1)));
    let conns = Arc::new(Conns::default());
    let answers = Arc::new(Answers::new(app.config.max_answer_bytes_held));
    tokio::pin!(shutdown);
    loop {
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
        // At the cap: close the connection waiting longest for a request head, if any,
        // and take its place once it is gone; else wait for one to end.
        let permit = match connections.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                conns.evict_longest_waiting();
                tokio::select! {
                    p = connections.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => break,
                    },
                    () = &mut shutdown => break,
                }
            }
        };
        let (id, state) = conns.open();
        let conn_app = app.clone();
        let api = api.clone();
        let conn_stats = stats.clone();
        let conn_answers = answers.clone();
        let conn_state = state.clone();
        let service = hyper::service::service_fn(move |req| {
            let app = conn_app.clone();
            let api = api.clone();
            let stats = conn_stats.clone();
            let answers = conn_answers.clone();
            let state = conn_state.clone();
            state.mark_busy();
            async move {
                let resp = handle_request(app, api, stats, req).await;
                Ok::<_, Infallible>(answers.hold(resp, Some(state)))
            }
        });
        let io = WriteTimeout::new(stream, app.config.write_timeout, state.clone());
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .max_buf_size(CONN_BUFFER_BYTES)
            .header_read_timeout(app.config.header_read_timeout)
            .serve_connection(TokioIo::new(io), service);
        let conn = graceful.watch(conn);
        let conns = conns.clone();
        tokio::spawn(async move {
            tokio::select! {
                ended = conn => if let Err(e) = ended {
                    tracing::debug!(peer = %peer, error = %e, "connection ended with an error");
                },
                () = state.evict.notified() => {
                    tracing::debug!(peer = %peer, "closed at the connection cap: it waited longest for a request head");
                }
            }
            conns.close(id);
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
    summary.abort();
    stats.log_summary();
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
