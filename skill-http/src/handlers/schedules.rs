//! Schedules: every scheduled skill with its next fire times.

use http::{Response, StatusCode};
use skill_runtime::scheduler::{DateTime, Tz, Utc};

use super::{Query, bad_query, number, paths};
use crate::app::App;
use crate::response::{ApiError, Body, json_response};
use skill_runtime::ScheduleQuery;
use skill_runtime::wire;

/// Most upcoming fire times `/v1/schedules` lists per skill.
const MAX_NEXT_FIRES: usize = 100;
/// Fire times per skill when the request names no number.
const DEFAULT_NEXT_FIRES: usize = 5;

pub(super) fn schedules(app: &App, q: &Query) -> Result<Response<Body>, ApiError> {
    let next = number::<usize>(q, "next")?
        .unwrap_or(DEFAULT_NEXT_FIRES)
        .min(MAX_NEXT_FIRES);
    let timezone = match q.get("tz") {
        None => None,
        Some(name) => Some(name.parse::<Tz>().map_err(|_| {
            bad_query(format!(
                "`tz` must be an IANA time zone such as Europe/Paris, not `{name}`"
            ))
        })?),
    };
    let from = match q.get("from") {
        None => None,
        Some(text) => Some(
            DateTime::parse_from_rfc3339(text)
                .map_err(|e| {
                    bad_query(format!(
                        "`from` must be an RFC 3339 instant such as 2026-11-20T12:00:00Z, not `{text}` ({e})"
                    ))
                })?
                .with_timezone(&Utc),
        ),
    };
    let schedules = app.engine.schedules(&ScheduleQuery {
        next,
        timezone,
        from,
    });
    let roots = app.path_roots();
    Ok(json_response(
        StatusCode::OK,
        &wire::SchedulesShape::new(&schedules, &paths(roots.as_deref())),
    ))
}
