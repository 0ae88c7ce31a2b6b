//! Schedules: every scheduled skill with its next fire times.

use http::{Response, StatusCode};

use super::paths;
use crate::app::App;
use crate::response::{Body, json_response};
use skill_runtime::wire::{self, SchedulesRequest};

pub(super) fn schedules(app: &App, request: &SchedulesRequest) -> Response<Body> {
    let schedules = app.engine.schedules(&request.query());
    let roots = app.path_roots();
    json_response(
        StatusCode::OK,
        &wire::SchedulesShape::new(&schedules, &paths(roots.as_deref())),
    )
}
