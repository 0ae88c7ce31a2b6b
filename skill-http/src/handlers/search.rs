//! Search: ranked skills, the selection for a request, ranked notes.

use http::{Response, StatusCode};

use super::engine_error;
use crate::app::App;
use crate::response::{ApiError, Body, json_response};
use skill_runtime::wire::{self, NotesSearchRequest, SearchRequest, SelectRequest};

pub(super) fn search(app: &App, request: &SearchRequest) -> Result<Response<Body>, ApiError> {
    let matches = app
        .engine
        .search(&request.query())
        .map_err(|e| engine_error(&e))?;
    Ok(json_response(
        StatusCode::OK,
        &wire::SearchShape::new(&request.query, &matches),
    ))
}

pub(super) fn select(app: &App, request: &SelectRequest) -> Result<Response<Body>, ApiError> {
    let selection = app
        .engine
        .select(&request.message, &request.options())
        .map_err(|e| engine_error(&e))?;
    Ok(json_response(StatusCode::OK, &selection))
}

pub(super) async fn notes(
    app: &App,
    request: &NotesSearchRequest,
) -> Result<Response<Body>, ApiError> {
    let hits = app
        .engine
        .notes_search(&request.query, request.limit())
        .await
        .map_err(|e| engine_error(&e))?;
    Ok(json_response(
        StatusCode::OK,
        &wire::NotesShape::new(&request.query, &hits),
    ))
}
