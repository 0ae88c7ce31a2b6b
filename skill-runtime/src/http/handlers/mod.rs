//! Handlers: each endpoint asks one [`Engine`](crate::Engine) operation and renders the
//! answer with a [`wire`](crate::wire) shape. Nothing here reaches below the engine.
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

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;

use super::app::App;
use super::request::{Params, find, json_body, query_map};
use super::response::{ApiError, Body, json_response};
use super::routes::{Endpoint, Op};
use crate::error::Error;

/// Default number of search results.
const DEFAULT_SEARCH_LIMIT: usize = 10;

/// A request's query parameters.
type Query = HashMap<String, String>;

/// Answer one API request: find the endpoint, check the token, run it under its time
/// limit.
pub(crate) async fn handle(app: &Arc<App>, req: Request<Incoming>) -> Response<Body> {
    let (endpoint, params) = match find(app.config.token.as_deref(), &req) {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let limit = match endpoint.op {
        Op::Execute | Op::Invoke => app.exec_timeout(),
        _ => app.config.request_timeout,
    };
    match tokio::time::timeout(limit, dispatch(app, endpoint, params, req)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => e.into_response(),
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

async fn dispatch(
    app: &Arc<App>,
    endpoint: &Endpoint,
    params: Params,
    req: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let query = query_map(&req)?;
    let name = params.get("name").cloned().unwrap_or_default();
    let max_body = app.config.max_body_bytes;
    match endpoint.op {
        Op::Health => Ok(skills::health(app)),
        Op::Ready => Ok(skills::ready(app)),
        Op::Skills => skills::list(app, &query),
        Op::Skill => skills::detail(app, &name),
        Op::Resources => skills::resources(app, &name, &query),
        Op::Resource => {
            let rel = params.get("path").cloned().unwrap_or_default();
            skills::resource(app, &name, &rel, &query)
        }
        Op::GetSkill => skills::get_skill(app, &query),
        Op::Outline => sections::outline(app, &name, &query),
        Op::Section => {
            let slug = params.get("slug").cloned().unwrap_or_default();
            sections::section(app, &name, &slug, &query)
        }
        Op::Catalog => skills::catalog(app, &query),
        Op::Diagnostics => Ok(skills::diagnostics(app)),
        Op::Search => search::search(app, &query),
        Op::Select => search::select(app, json_body(req, max_body).await?),
        Op::NotesSearch => search::notes(app, &query),
        Op::Schedules => schedules::schedules(app, &query),
        Op::Extract => exec::extract(app, json_body(req, max_body).await?),
        Op::Route => exec::route(app, json_body(req, max_body).await?),
        Op::Execute => exec::execute(app, json_body(req, max_body).await?).await,
        Op::Invoke => exec::invoke(app, json_body(req, max_body).await?).await,
        Op::Workflows => {
            let body = json_body(req, max_body).await?;
            exec::workflows(app, body, endpoint.body.unwrap_or(&[])).await
        }
        Op::Tasks => Ok(exec::tasks(app)),
        Op::Task => exec::task(app, params.get("id").map(String::as_str)),
        Op::Reload => events::reload(app).await,
        Op::Events => events::events(app),
        Op::DiscoveryIndex => Ok(discovery::index(app)),
        Op::DiscoverySkill => discovery::skill_file(app, &name),
        Op::OpenApi => Ok(json_response(StatusCode::OK, &super::openapi::openapi())),
    }
}

/// An engine error as an API error, its status from the wire's code table.
fn engine_error(e: &Error) -> ApiError {
    let code = e.code();
    let status = StatusCode::from_u16(crate::wire::status_of(code))
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    ApiError::owned(status, code.to_owned(), e.to_string())
}

/// A `400 bad_query`.
fn bad_query(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "bad_query", message)
}

/// A `400 bad_json`.
fn bad_json(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "bad_json", message)
}

/// A query parameter as a non-negative integer.
fn number<T: std::str::FromStr>(q: &Query, key: &str) -> Result<Option<T>, ApiError> {
    super::request::number(q, key)
}

/// The caller and profile of a disclosure request (`caller`, `profile`).
fn scope(q: &Query) -> crate::Scope {
    let base = match q.get("caller").map(String::as_str) {
        Some("user") => crate::Scope::user(),
        _ => crate::Scope::model(),
    };
    base.with_profile(q.get("profile").cloned())
}
