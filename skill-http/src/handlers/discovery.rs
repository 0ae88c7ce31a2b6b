//! The Agent Skills discovery index (`GET`/`HEAD /.well-known/agent-skills/index.json`) and
//! each listed skill's file (`/.well-known/agent-skills/{name}/SKILL.md`, `text/markdown`)
//! or folder archive (`/.well-known/agent-skills/{name}/skill.zip`, `application/zip`).
//! An unlisted or unknown skill is `404`, as the proposal asks.

use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};

use super::engine_error;
use crate::app::App;
use crate::response::{ApiError, Body, full, json_response};
use skill_runtime::wire::DiscoveryIndexShape;

/// Clients revalidate every time: the digest in the index tells them whether to refetch.
const CACHE: &str = "no-cache";

pub(super) fn index(app: &App) -> Response<Body> {
    let entries = app.engine.discovery_index();
    let mut resp = json_response(StatusCode::OK, &DiscoveryIndexShape::new(&entries));
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static(CACHE));
    resp
}

pub(super) fn skill_file(app: &App, name: &str) -> Result<Response<Body>, ApiError> {
    let bytes = app
        .engine
        .discovery_file(name)
        .map_err(|e| engine_error(&e))?;
    let mut resp = Response::new(full(bytes));
    resp.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/markdown; charset=utf-8"),
    );
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static(CACHE));
    Ok(resp)
}

pub(super) fn archive(app: &App, name: &str) -> Result<Response<Body>, ApiError> {
    let bytes = app
        .engine
        .discovery_archive(name)
        .map_err(|e| engine_error(&e))?;
    let mut resp = Response::new(full(bytes));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/zip"));
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static(CACHE));
    Ok(resp)
}
