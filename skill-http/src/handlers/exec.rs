//! Routing and execution: extract, route, execute, invoke, workflows, forked tasks.

use http::{Response, StatusCode};
use serde_json::Value;

use super::{engine_error, paths};
use crate::app::App;
use crate::response::{ApiError, Body, json_response};
use skill_runtime::Scope;
use skill_runtime::wire::{
    self, Args, ExecuteRequest, ExecutedShape, ExtractRequest, Input, InvokeRequest, ResultsShape,
    RouteRequest, TasksShape,
};

/// An extraction of a request of `size` bytes: at most [`wire::answer_cap`]`(size)` bytes
/// of answer, else `422 answer_too_large`.
pub(super) fn extract(
    app: &App,
    request: &ExtractRequest,
    size: usize,
) -> Result<Response<Body>, ApiError> {
    let extraction = app.engine.extract(&request.output);
    let shape = wire::ExtractionShape::from(&extraction);
    let body = capped(&shape, size)?;
    Ok(json_bytes(body))
}

/// A route of a request of `size` bytes, bounded as [`extract`].
pub(super) fn route(
    app: &App,
    request: &RouteRequest,
    size: usize,
) -> Result<Response<Body>, ApiError> {
    let scope = request.scope();
    match &request.input {
        Input::Line(text) => relative_messages_capped(
            app,
            &wire::RouteShape::from(&app.engine.route(text, &scope)),
            size,
        ),
        Input::Output(output) => relative_messages_capped(
            app,
            &wire::RoutedOutputShape::from(&app.engine.route_output(output, &scope)),
            size,
        ),
    }
}

/// `shape` as JSON within the answer cap of a request of `size` bytes.
fn capped(shape: &impl serde::Serialize, size: usize) -> Result<Vec<u8>, ApiError> {
    wire::to_vec_capped(shape, wire::answer_cap(size)).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "answer_too_large",
            e.message(size),
        )
    })
}

/// A `200` JSON answer already serialized.
fn json_bytes(body: Vec<u8>) -> Response<Body> {
    let mut resp = Response::new(crate::response::full(body));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// [`relative_messages`], within the answer cap of a request of `size` bytes (measured
/// before the paths are rewritten, which only shortens them).
fn relative_messages_capped(
    app: &App,
    shape: &impl serde::Serialize,
    size: usize,
) -> Result<Response<Body>, ApiError> {
    let body = capped(shape, size)?;
    if app.path_roots().is_none() {
        return Ok(json_bytes(body));
    }
    Ok(relative_messages(app, shape))
}

pub(super) async fn execute(
    app: &App,
    request: &ExecuteRequest,
) -> Result<Response<Body>, ApiError> {
    let scope = Scope::model().with_profile(request.profile.clone());
    Ok(match &request.input {
        Input::Output(output) => {
            let results = app.engine.execute_output(output, &scope).await;
            relative_messages(app, &ResultsShape::new(&results))
        }
        Input::Line(command) => {
            let done = app.engine.execute(command, &scope).await;
            relative_messages(
                app,
                &ExecutedShape {
                    route: &done.route,
                    outcome: done.outcome.as_ref(),
                },
            )
        }
    })
}

pub(super) async fn invoke(app: &App, request: &InvokeRequest) -> Result<Response<Body>, ApiError> {
    let scope = Scope::user().with_profile(request.profile.clone());
    let outcome = app.engine.invoke(&request.line, &scope).await;
    Ok(relative_messages(app, &wire::OutcomeShape::from(&outcome)))
}

/// A `200` answer of route, execute or invoke whose `message`s (an outcome's or a route
/// error's: an exclusion's reason, a script that could not start) name the server's files
/// as the other `/v1` answers do: relative to their source unless the operator asked for
/// absolute paths.
fn relative_messages(app: &App, shape: &impl serde::Serialize) -> Response<Body> {
    let roots = app.path_roots();
    let Some(snapshot) = roots.as_deref() else {
        return json_response(StatusCode::OK, shape);
    };
    let mut value = match serde_json::to_value(shape) {
        Ok(v) => v,
        Err(_) => return json_response(StatusCode::OK, shape),
    };
    rewrite_messages(&mut value, &paths(Some(snapshot)));
    json_response(StatusCode::OK, &value)
}

/// Every string under a `message` key, at any depth, written with `paths`.
fn rewrite_messages(value: &mut Value, paths: &wire::Paths<'_>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if key == "message" => {
                        if let std::borrow::Cow::Owned(new) = paths.text(s) {
                            *s = new;
                        }
                    }
                    _ => rewrite_messages(v, paths),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_messages(v, paths)),
        _ => {}
    }
}

pub(super) async fn workflows(app: &App, args: &Args) -> Result<Response<Body>, ApiError> {
    let flags = workflow_flags(args);
    let mut outcome = app.engine.build_workflow(flags).await;
    // A request the server's state refuses (no writable source, a workflow of that name
    // already there) is a conflict; one that cannot be built at all is unprocessable.
    let code = outcome.error.as_ref().map(|e| e.code.as_str());
    let status = match code {
        None if outcome.ok => StatusCode::CREATED,
        Some("conflict" | "no_writable_source") => StatusCode::CONFLICT,
        Some("write_failed") => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    // A failed write names the file it could not write: logged, not answered.
    if let Some(e) = outcome.error.as_mut().filter(|_| status.is_server_error()) {
        tracing::warn!(code = %e.code, error = %e.message, "workflow.build failed on the server's side");
        e.message = "the server could not write the workflow; its log has the details".into();
    }
    Ok(json_response(status, &wire::OutcomeShape::from(&outcome)))
}

pub(super) async fn tasks(app: &App) -> Result<Response<Body>, ApiError> {
    let tasks = app.engine.tasks().await.map_err(|e| engine_error(&e))?;
    Ok(json_response(StatusCode::OK, &TasksShape::new(&tasks)))
}

pub(super) async fn task(app: &App, id: Option<&str>) -> Result<Response<Body>, ApiError> {
    let id: u64 = id.and_then(|i| i.parse().ok()).ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_task_id",
            "a task id is a number",
        )
    })?;
    let task = app.engine.task(id).await.map_err(|e| engine_error(&e))?;
    Ok(json_response(StatusCode::OK, &wire::TaskShape::from(&task)))
}

/// The flags of `workflow.build` from the checked body: texts as values, a switch only
/// when it is on.
fn workflow_flags(args: &Args) -> skill_runtime::router::Flags {
    use skill_runtime::router::FlagValue;
    let mut flags = skill_runtime::router::Flags::new();
    for (k, v) in args.fields() {
        let value = match v {
            Value::Bool(true) => FlagValue::Switch(true),
            Value::String(s) => FlagValue::One(s.clone()),
            _ => continue,
        };
        flags.insert(k.to_owned(), value);
    }
    flags
}
