//! Skills: health, readiness, the listing, one skill, its resources, the `get_skill`
//! tiers, the catalog and the diagnostics.

use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};
use skill_runtime::registry::{Budget, Caller, CatalogFormat};

use super::{Query, bad_query, engine_error, number, paths, scope, text};
use crate::app::App;
use crate::response::{ApiError, Body, full, json_response};
use skill_runtime::wire::{self, GetSkillRequest, GetSkillShape};
use skill_runtime::{Lookup, SkillQuery};

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

pub(super) fn list(app: &App, q: &Query) -> Result<Response<Body>, ApiError> {
    let all = match q.get("status").map(String::as_str) {
        None | Some("loaded") => false,
        Some("all") => true,
        Some(other) => {
            return Err(bad_query(format!(
                "`status` is `loaded` or `all`, not `{other}`"
            )));
        }
    };
    let invocable_by = match q.get("invocable_by").map(String::as_str) {
        None => None,
        Some("model") => Some(Caller::Model),
        Some("user") => Some(Caller::User),
        Some(other) => {
            return Err(bad_query(format!(
                "`invocable_by` is `model` or `user`, not `{other}`"
            )));
        }
    };
    let list = app.engine.skills(&SkillQuery {
        all,
        layer: text(q, "layer"),
        domain: text(q, "domain"),
        invocable_by,
        profile: text(q, "profile"),
    });
    let roots = app.path_roots();
    Ok(json_response(
        StatusCode::OK,
        &wire::SkillListShape::new(&list, &paths(roots.as_deref())),
    ))
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

pub(super) fn detail(app: &App, name: &str) -> Result<Response<Body>, ApiError> {
    let name = exact_name(name)?;
    let shown = app.engine.show(name).map_err(|e| engine_error(&e))?;
    let roots = app.path_roots();
    Ok(json_response(
        StatusCode::OK,
        &wire::SkillDetailShape::new(&shown, &paths(roots.as_deref())),
    ))
}

pub(super) fn resources(app: &App, name: &str, q: &Query) -> Result<Response<Body>, ApiError> {
    let name = exact_name(name)?;
    let listing = app
        .engine
        .resources(name, &Lookup::Disclosed(scope(q)?))
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
    q: &Query,
) -> Result<Response<Body>, ApiError> {
    let name = exact_name(name)?;
    let bytes = app
        .engine
        .resource(name, path, &Lookup::Disclosed(scope(q)?))
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

pub(super) fn catalog(app: &App, q: &Query) -> Result<Response<Body>, ApiError> {
    let format = match q.get("format").map(String::as_str) {
        None | Some("markdown") => CatalogFormat::Markdown,
        Some("xml") => CatalogFormat::Xml,
        Some("json") => CatalogFormat::Json,
        Some(other) => {
            return Err(bad_query(format!(
                "`format` is `markdown`, `xml` or `json`, not `{other}`"
            )));
        }
    };
    let mut budget = Budget {
        budget_chars: number(q, "budget_chars")?,
        context_window_tokens: number(q, "context_window_tokens")?,
        entry_cap_chars: number(q, "entry_cap_chars")?,
    };
    if budget.budget_chars.is_none() && budget.context_window_tokens.is_none() {
        if let Some(b) = q
            .get("profile")
            .and_then(|p| app.config.profile_budgets.get(p))
        {
            budget.budget_chars = b.budget_chars;
            budget.context_window_tokens = b.context_window_tokens;
        }
    }
    let catalog = app.engine.catalog(format, &budget, &scope(q)?);
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
    Ok(json_response(
        StatusCode::OK,
        &wire::CatalogShape::new(&catalog, &paths),
    ))
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
