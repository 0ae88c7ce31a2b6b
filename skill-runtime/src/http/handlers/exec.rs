//! Routing and execution: extract, route, execute, invoke, workflows, forked tasks.

use http::{Response, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use skill_registry::Caller;

use super::{bad_json, engine_error, paths, present};
use crate::http::app::App;
use crate::http::response::{ApiError, Body, json_response};
use crate::ops::Scope;
use crate::wire::{self, ExecutedShape, ResultsShape, TasksShape};

/// The body of `POST /v1/extract`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExtractBody {
    output: String,
}

pub(super) fn extract(app: &App, body: ExtractBody) -> Result<Response<Body>, ApiError> {
    let extraction = app.engine.extract(&body.output);
    Ok(json_response(
        StatusCode::OK,
        &wire::ExtractionShape::from(&extraction),
    ))
}

/// The body of `POST /v1/route`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RouteBody {
    #[serde(default, deserialize_with = "present")]
    text: Option<String>,
    #[serde(default, deserialize_with = "present")]
    output: Option<String>,
    #[serde(default, deserialize_with = "present")]
    from: Option<String>,
    #[serde(default, deserialize_with = "present")]
    profile: Option<String>,
}

pub(super) fn route(app: &App, body: RouteBody) -> Result<Response<Body>, ApiError> {
    let caller = match body.from.as_deref() {
        None | Some("model") => Caller::Model,
        Some("user") => Caller::User,
        Some(other) => {
            return Err(bad_json(format!(
                "`from` is `model` or `user`, not `{other}`"
            )));
        }
    };
    let scope = Scope {
        caller,
        profile: body.profile,
    };
    match (body.text, body.output) {
        (Some(text), None) => Ok(relative_messages(
            app,
            &wire::RouteShape::from(&app.engine.route(&text, &scope)),
        )),
        (None, Some(output)) => Ok(relative_messages(
            app,
            &wire::RoutedOutputShape::from(&app.engine.route_output(&output, &scope)),
        )),
        _ => Err(bad_json(
            "give exactly one of `text` (one line) and `output` (a whole model output)",
        )),
    }
}

/// The body of `POST /v1/execute`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExecuteBody {
    #[serde(default, deserialize_with = "present")]
    output: Option<String>,
    #[serde(default, deserialize_with = "present")]
    command: Option<String>,
    #[serde(default, deserialize_with = "present")]
    profile: Option<String>,
}

pub(super) async fn execute(app: &App, body: ExecuteBody) -> Result<Response<Body>, ApiError> {
    let scope = Scope::model().with_profile(body.profile);
    match (body.output, body.command) {
        (Some(output), None) => {
            let results = app.engine.execute_output(&output, &scope).await;
            Ok(relative_messages(app, &ResultsShape::new(&results)))
        }
        (None, Some(command)) => {
            let done = app.engine.execute(&command, &scope).await;
            Ok(relative_messages(
                app,
                &ExecutedShape {
                    route: &done.route,
                    outcome: done.outcome.as_ref(),
                },
            ))
        }
        _ => Err(bad_json(
            "give exactly one of `output` (a whole model output) and `command` (one line)",
        )),
    }
}

/// The body of `POST /v1/invoke`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InvokeBody {
    line: String,
    #[serde(default, deserialize_with = "present")]
    profile: Option<String>,
}

pub(super) async fn invoke(app: &App, body: InvokeBody) -> Result<Response<Body>, ApiError> {
    let scope = Scope::user().with_profile(body.profile);
    let outcome = app.engine.invoke(&body.line, &scope).await;
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

pub(super) async fn workflows(
    app: &App,
    body: serde_json::Map<String, Value>,
    documented: &[(&str, &str, &str)],
) -> Result<Response<Body>, ApiError> {
    let flags = workflow_flags(body, documented)?;
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

fn workflow_flags(
    body: serde_json::Map<String, Value>,
    documented: &[(&str, &str, &str)],
) -> Result<skill_router::Flags, ApiError> {
    use skill_router::FlagValue;
    let mut flags = skill_router::Flags::new();
    for (k, v) in body {
        let Some((_, ty, _)) = documented.iter().find(|(name, _, _)| *name == k) else {
            let names: Vec<String> = documented
                .iter()
                .map(|(n, _, _)| format!("`{n}`"))
                .collect();
            return Err(bad_json(format!(
                "unknown field `{k}`, expected one of {}",
                names.join(", ")
            )));
        };
        // Each field has the type the endpoint table (and so the OpenAPI document) gives it.
        let value = match (*ty, v) {
            ("boolean", Value::Bool(b)) => FlagValue::Switch(b),
            ("string", Value::String(s)) => FlagValue::One(s),
            (ty, other) => {
                return Err(bad_json(format!("`{k}` must be a {ty}, not {other}")));
            }
        };
        if matches!(value, FlagValue::Switch(false)) {
            continue;
        }
        flags.insert(k, value);
    }
    Ok(flags)
}
