//! Section-level disclosure: a skill's outline and one section by slug
//! (`/v1/skills/{name}/outline`, `/v1/skills/{name}/sections/{slug}`). An unknown slug is
//! `404 unknown_section`, its message naming the valid slugs.

use http::{Response, StatusCode};

use super::engine_error;
use crate::app::App;
use crate::response::{ApiError, Body, json_response};
use skill_runtime::wire::{DisclosureRequest, OutlineShape, SectionShape};

pub(super) fn outline(
    app: &App,
    name: &str,
    q: &DisclosureRequest,
) -> Result<Response<Body>, ApiError> {
    let outline = app
        .engine
        .outline(name, &q.lookup())
        .map_err(|e| engine_error(&e))?;
    Ok(json_response(StatusCode::OK, &OutlineShape::from(&outline)))
}

pub(super) fn section(
    app: &App,
    name: &str,
    slug: &str,
    q: &DisclosureRequest,
) -> Result<Response<Body>, ApiError> {
    let section = app
        .engine
        .section(name, slug, &q.lookup())
        .map_err(|e| engine_error(&e))?;
    Ok(json_response(StatusCode::OK, &SectionShape::from(&section)))
}
