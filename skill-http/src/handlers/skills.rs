//! Skills: health, readiness, the listing, one skill, its resources, the `get_skill`
//! tiers, the catalog and the diagnostics.

use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};

use super::{engine_error, paths};
use crate::app::App;
use crate::response::{ApiError, Body, full, json_body, json_bytes, json_response};
use skill_runtime::wire::{
    self, CatalogRequest, DisclosureRequest, GetSkillRequest, GetSkillShape, ListSkillsRequest,
};

pub(super) fn health(app: &App) -> Response<Body> {
    json_response(
        StatusCode::OK,
        &wire::HealthShape::from(&app.engine.health()),
    )
}

pub(super) fn ready(app: &App) -> Response<Body> {
    let ready = app.engine.ready();
    let status = if ready.is_ready() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(status, &wire::ReadyShape::from(&ready))
}

pub(super) fn list(app: &App, request: &ListSkillsRequest) -> Response<Body> {
    let list = app.engine.skills(&request.query());
    let roots = app.path_roots();
    json_response(
        StatusCode::OK,
        &wire::SkillListShape::new(&list, &paths(roots.as_deref())),
    )
}

/// The one name rule of `/v1/skills/{name}` and everything under it: the name exactly
/// as the skill has it. Blanks around it or a control character anywhere name no skill.
fn exact_name(name: &str) -> Result<&str, ApiError> {
    if name.trim() != name || name.chars().any(char::is_control) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_skill",
            format!("no skill is named {name:?}"),
        ));
    }
    Ok(name)
}

/// A skill's detail, rendered once per generation (see [`crate::rendered`]).
pub(super) fn detail(app: &App, name: &str) -> Result<Response<Body>, ApiError> {
    let name = exact_name(name)?;
    if let Some(answer) = app.details.get(app.engine.generation(), name) {
        return Ok(json_bytes(StatusCode::OK, answer));
    }
    let shown = app.engine.entry(name).map_err(|e| engine_error(&e))?;
    let roots = app.path_roots();
    let answer = json_body(&wire::SkillDetailShape::new(
        &shown,
        &paths(roots.as_deref()),
    ));
    app.details.put(shown.generation, name, &answer);
    Ok(json_bytes(StatusCode::OK, answer))
}

pub(super) fn resources(
    app: &App,
    name: &str,
    q: &DisclosureRequest,
) -> Result<Response<Body>, ApiError> {
    let name = exact_name(name)?;
    let listing = app
        .engine
        .resources(name, &q.lookup())
        .map_err(|e| engine_error(&e))?;
    Ok(json_response(
        StatusCode::OK,
        &wire::ResourcesShape::new(name, &listing),
    ))
}

pub(super) fn resource(
    app: &App,
    name: &str,
    path: &str,
    q: &DisclosureRequest,
) -> Result<Response<Body>, ApiError> {
    let name = exact_name(name)?;
    let bytes = app
        .engine
        .resource(name, path, &q.lookup())
        .map_err(|e| engine_error(&e))?;
    let kind = if std::str::from_utf8(&bytes).is_ok() {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    };
    let mut resp = Response::new(full(bytes));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    Ok(resp)
}

pub(super) fn get_skill(app: &App, request: &GetSkillRequest) -> Result<Response<Body>, ApiError> {
    let path = request.path.as_deref();
    let text = app
        .engine
        .get_skill(path, &request.scope())
        .map_err(|e| engine_error(&e))?;
    Ok(json_response(
        StatusCode::OK,
        &GetSkillShape { path, text: &text },
    ))
}

pub(super) fn catalog(app: &App, request: &CatalogRequest) -> Response<Body> {
    let mut budget = request.budget;
    if budget.budget_chars.is_none() && budget.context_window_tokens.is_none() {
        if let Some(b) = request
            .profile
            .as_ref()
            .and_then(|p| app.config.profile_budgets.get(p))
        {
            budget.budget_chars = b.budget_chars;
            budget.context_window_tokens = b.context_window_tokens;
        }
    }
    let catalog = app
        .engine
        .catalog(request.format(), &budget, &request.scope());
    // A catalog's locations are resolved absolute paths (what a model with file access
    // opens), so they are written relative to the sources' resolved roots.
    let roots = app.path_roots();
    let resolved: Option<Vec<skill_runtime::registry::Source>> = roots.as_deref().map(|snapshot| {
        snapshot
            .sources()
            .iter()
            .map(|s| skill_runtime::registry::Source {
                path: std::fs::canonicalize(&s.path).unwrap_or_else(|_| s.path.clone()),
                ..s.clone()
            })
            .collect()
    });
    let paths = match &resolved {
        Some(sources) => wire::Paths::Relative(sources),
        None => wire::Paths::Absolute,
    };
    json_response(StatusCode::OK, &wire::CatalogShape::new(&catalog, &paths))
}

pub(super) fn diagnostics(app: &App) -> Response<Body> {
    let roots = app.path_roots();
    json_response(
        StatusCode::OK,
        &wire::DiagnosticsShape::new(&app.engine.diagnostics(), &paths(roots.as_deref())),
    )
}

pub(super) fn profiles(app: &App) -> Response<Body> {
    json_response(
        StatusCode::OK,
        &wire::ProfilesShape::from(&app.engine.profiles()),
    )
}
