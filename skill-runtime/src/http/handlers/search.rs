//! Search: ranked skills, the selection for a request, ranked notes.

use http::{Response, StatusCode};
use serde::Deserialize;
use skill_search::SelectOptions;

use super::{DEFAULT_SEARCH_LIMIT, Query, engine_error, number, present, text};
use crate::http::app::App;
use crate::http::response::{ApiError, Body, json_response};
use crate::ops::SearchQuery;
use crate::wire;

pub(super) fn search(app: &App, q: &Query) -> Result<Response<Body>, ApiError> {
    let query = SearchQuery {
        text: q.get("q").cloned().unwrap_or_default(),
        limit: number::<usize>(q, "limit")?.unwrap_or(DEFAULT_SEARCH_LIMIT),
        profile: text(q, "profile"),
    };
    let matches = app.engine.search(&query).map_err(|e| engine_error(&e))?;
    Ok(json_response(
        StatusCode::OK,
        &wire::SearchShape::new(&query.text, &matches),
    ))
}

/// The body of `POST /v1/select`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SelectBody {
    message: String,
    #[serde(default)]
    recent_turns: Vec<String>,
    #[serde(default, deserialize_with = "present")]
    max_skills: Option<u32>,
    #[serde(default, deserialize_with = "present")]
    profile: Option<String>,
    #[serde(default, deserialize_with = "present")]
    budget_tokens: Option<u32>,
}

pub(super) fn select(app: &App, body: SelectBody) -> Result<Response<Body>, ApiError> {
    let mut opts = SelectOptions {
        recent_turns: body.recent_turns,
        profile: body.profile,
        ..SelectOptions::default()
    };
    if let Some(n) = body.max_skills {
        opts.max_skills = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(b) = body.budget_tokens {
        opts.budget_tokens = usize::try_from(b).unwrap_or(usize::MAX);
    }
    let selection = app
        .engine
        .select(&body.message, &opts)
        .map_err(|e| engine_error(&e))?;
    Ok(json_response(StatusCode::OK, &selection))
}

pub(super) async fn notes(app: &App, q: &Query) -> Result<Response<Body>, ApiError> {
    let text = q.get("q").map(String::as_str).unwrap_or("");
    let limit = number::<usize>(q, "limit")?.unwrap_or(DEFAULT_SEARCH_LIMIT);
    let hits = app
        .engine
        .notes_search(text, limit)
        .await
        .map_err(|e| engine_error(&e))?;
    Ok(json_response(
        StatusCode::OK,
        &wire::NotesShape::new(text, &hits),
    ))
}
