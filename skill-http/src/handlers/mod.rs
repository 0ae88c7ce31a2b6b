//! Handlers: each endpoint asks one [`Engine`](crate::Engine) operation and renders the
//! answer with a [`wire`](skill_runtime::wire) shape. Nothing here reaches below the engine. A
//! `HEAD` is answered as its `GET` (the server then drops the body), except that the event
//! stream opens no stream for it.
//!
//! One module per area: [`skills`] (listing, detail, disclosure, diagnostics), [`search`]
//! (search, selection, notes), [`exec`] (extract, route, execute, invoke, workflows,
//! tasks), [`schedules`], [`events`] (reload and the event stream), [`sections`] (a
//! skill's outline and one section), [`discovery`] (the well-known skills index).

mod discovery;
mod events;
mod exec;
mod schedules;
mod search;
mod sections;
mod skills;

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};

use super::app::App;
use super::request::{Params, json_body, query_map};
use super::response::{ApiError, Body, json_response};
use super::routes::{Endpoint, Op};
use skill_runtime::Error;
use skill_runtime::wire::{Request as WireRequest, RequestError};

/// A request's query parameters.
type Query = HashMap<String, String>;

/// A request routed to its endpoint, its body read (see [`read_body`](super::request::read_body)).
#[derive(Debug)]
pub(crate) struct Routed {
    pub endpoint: &'static Endpoint,
    pub params: Params,
    pub req: Request<Bytes>,
}

/// Answer one API request under its endpoint's time limit.
pub(crate) async fn handle(app: &Arc<App>, routed: Routed) -> Response<Body> {
    let Routed {
        endpoint,
        params,
        req,
    } = routed;
    let limit = match endpoint.op {
        Op::Execute | Op::Invoke => app.exec_timeout(),
        _ => app.config.request_timeout,
    };
    match tokio::time::timeout(limit, dispatch(app, endpoint, params, req)).await {
        Ok(Ok(r)) => r,
        Ok(Err(mut e)) => {
            // An error's message names files as the answers do (an exclusion's reason).
            let roots = app.path_roots();
            e.message = paths(roots.as_deref()).text(&e.message).into_owned();
            e.into_response()
        }
        Err(_) => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout",
            format!(
                "the request took longer than this endpoint's time limit ({} ms)",
                limit.as_millis()
            ),
        )
        .into_response(),
    }
}

/// `f` on tokio's blocking threads when the engine runs a model for it (a search or a
/// selection then takes milliseconds of CPU, which must not hold an executor thread that
/// other connections need), else inline.
async fn off_executor(
    app: &Arc<App>,
    f: impl FnOnce(&App) -> Result<Response<Body>, ApiError> + Send + 'static,
) -> Result<Response<Body>, ApiError> {
    let worker = Arc::clone(app);
    on_blocking_thread(app.engine.runs_model(), move || f(&worker))
        .await
        .unwrap_or_else(|e| {
            Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                format!("the request's worker failed: {e}"),
            ))
        })
}

/// `f` on tokio's blocking threads when `blocking`, else inline on the caller's; a panic
/// on a blocking thread comes back as the error.
async fn on_blocking_thread<T: Send + 'static>(
    blocking: bool,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    if blocking {
        tokio::task::spawn_blocking(f).await
    } else {
        Ok(f())
    }
}

/// The answer of one endpoint. Endpoints that await the engine box their future: a future
/// stored inline makes this one as large as the largest of them (21 KB once, moved by hyper
/// and by the middleware's box on every request, a third of a skill detail's time), while
/// the endpoints answered synchronously pay nothing.
async fn dispatch(
    app: &Arc<App>,
    endpoint: &Endpoint,
    params: Params,
    req: Request<Bytes>,
) -> Result<Response<Body>, ApiError> {
    let query = query_map(&req)?;
    let name = params.get("name").cloned().unwrap_or_default();
    match endpoint.op {
        Op::Health => Ok(skills::health(app)),
        Op::Ready => Ok(skills::ready(app)),
        Op::Skills => Ok(skills::list(app, &from_query(&query)?)),
        Op::Skill => skills::detail(app, &name),
        Op::Resources => skills::resources(app, &name, &from_query(&query)?),
        Op::Resource => {
            let rel = params.get("path").cloned().unwrap_or_default();
            skills::resource(app, &name, &rel, &from_query(&query)?)
        }
        Op::GetSkill => skills::get_skill(app, &from_query(&query)?),
        Op::Outline => sections::outline(app, &name, &from_query(&query)?),
        Op::Section => {
            let slug = params.get("slug").cloned().unwrap_or_default();
            sections::section(app, &name, &slug, &from_query(&query)?)
        }
        Op::Catalog => Ok(skills::catalog(app, &from_query(&query)?)),
        Op::Diagnostics => Ok(skills::diagnostics(app)),
        Op::Profiles => Ok(skills::profiles(app)),
        Op::Search => {
            let request = from_query(&query)?;
            off_executor(app, move |app| search::search(app, &request)).await
        }
        Op::Select => {
            let request = from_body(req)?;
            off_executor(app, move |app| search::select(app, &request)).await
        }
        Op::NotesSearch => Box::pin(search::notes(app, &from_query(&query)?)).await,
        Op::Schedules => Ok(schedules::schedules(app, &from_query(&query)?)),
        Op::Extract => {
            let size = req.body().len();
            let request = from_body(req)?;
            off_executor(app, move |app| exec::extract(app, &request, size)).await
        }
        Op::Route => {
            let size = req.body().len();
            let request = from_body(req)?;
            off_executor(app, move |app| exec::route(app, &request, size)).await
        }
        Op::Execute => Box::pin(exec::execute(app, &from_body(req)?)).await,
        Op::Invoke => Box::pin(exec::invoke(app, &from_body(req)?)).await,
        Op::Workflows => {
            let body: serde_json::Map<String, serde_json::Value> = json_body(req)?;
            let args = skill_runtime::wire::BUILD_WORKFLOW
                .read(&body, true)
                .map_err(refused)?;
            Box::pin(exec::workflows(app, &args)).await
        }
        Op::Tasks => Box::pin(exec::tasks(app)).await,
        Op::Task => Box::pin(exec::task(app, params.get("id").map(String::as_str))).await,
        Op::Reload => Box::pin(events::reload(app)).await,
        Op::Events => events::events(app, req.method() == Method::HEAD),
        Op::DiscoveryIndex => Ok(discovery::index(app)),
        Op::DiscoverySkill => discovery::skill_file(app, &name),
        Op::DiscoveryArchive => discovery::archive(app, &name),
        Op::OpenApi => Ok(json_response(
            StatusCode::OK,
            &super::openapi::openapi(&super::openapi::Document {
                secured: app.config.token.is_some(),
                workflow_domains: app.engine.workflow_domains(),
            }),
        )),
    }
}

/// An engine error as an API error, its status from the wire's code table.
/// A server-side failure (5xx) is logged in full and answered without its message, which
/// may name the server's paths.
fn engine_error(e: &Error) -> ApiError {
    let code = e.code();
    let status = StatusCode::from_u16(skill_runtime::wire::status_of(code))
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status.is_server_error() {
        tracing::warn!(code, error = %e, "request failed on the server's side");
        return ApiError::owned(
            status,
            code.to_owned(),
            "the server could not complete this request; its log has the details",
        );
    }
    ApiError::owned(status, code.to_owned(), e.to_string())
}

/// How answers write paths, given [`App::path_roots`](crate::app::App::path_roots).
fn paths(roots: Option<&skill_runtime::registry::Snapshot>) -> skill_runtime::wire::Paths<'_> {
    match roots {
        Some(snapshot) => skill_runtime::wire::Paths::Relative(snapshot.sources()),
        None => skill_runtime::wire::Paths::Absolute,
    }
}

/// A request the wire contract refused: `400` with the operation's code.
fn refused(e: RequestError) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, e.code, e.message)
}

/// An operation's request from a JSON object body.
fn from_body<R: WireRequest>(req: Request<Bytes>) -> Result<R, ApiError> {
    let body: serde_json::Map<String, serde_json::Value> = json_body(req)?;
    R::read(&body, true).map_err(refused)
}

/// An operation's request from the query string.
fn from_query<R: WireRequest>(q: &Query) -> Result<R, ApiError> {
    R::read_query(q).map_err(refused)
}

/// Bytes a request's dispatch future may take: it is moved on every request (see
/// [`dispatch`]).
#[cfg(test)]
const MAX_DISPATCH_FUTURE_BYTES: usize = 2048;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::{MAX_DISPATCH_FUTURE_BYTES, dispatch, on_blocking_thread};
    use crate::routes::ENDPOINTS;
    use std::thread;

    /// Every endpoint's dispatch future stays small: an endpoint that awaits the engine
    /// boxes its future instead of growing every request's.
    #[tokio::test]
    async fn the_dispatch_future_stays_small_for_every_endpoint() {
        let registry = skill_registry::RegistryConfig::with_sources(Vec::new());
        let mut config = skill_runtime::EngineConfig::new(registry);
        config.watch = None;
        let engine = skill_runtime::Engine::start(config).unwrap();
        let app = crate::App::new(engine, crate::HttpConfig::default());
        for endpoint in ENDPOINTS {
            let req = http::Request::new(bytes::Bytes::new());
            let future = dispatch(&app, endpoint, Default::default(), req);
            let size = std::mem::size_of_val(&future);
            assert!(
                size <= MAX_DISPATCH_FUTURE_BYTES,
                "{} {}: {size} bytes",
                endpoint.method,
                endpoint.path
            );
        }
    }

    /// With a model, a search or selection runs on a blocking thread, not on the thread
    /// that runs the executor (here the test's own, a current-thread runtime); without
    /// one, it runs inline there.
    #[tokio::test]
    async fn work_moves_off_the_executor_thread_only_when_asked() {
        let executor = thread::current().id();
        let inline = on_blocking_thread(false, || thread::current().id()).await;
        assert_eq!(inline.unwrap(), executor);
        let moved = on_blocking_thread(true, || thread::current().id()).await;
        assert_ne!(moved.unwrap(), executor);
    }

    /// A panic on the blocking thread is an error for this request, not a crash of the
    /// executor.
    #[tokio::test]
    async fn a_panic_on_the_blocking_thread_is_an_error() {
        let failed = on_blocking_thread(true, || -> u8 { panic!("worker bug") }).await;
        assert!(failed.unwrap_err().is_panic());
    }
}
