//! The routes: one table drives dispatch, the token check and the OpenAPI document.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use hyper::body::{Frame, Incoming};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use skill_registry::{
    Budget, Caller, CatalogFormat, Disclosure, Error as RegistryError, Skill, Snapshot, Status,
};
use skill_router::Router;
use skill_search::{Filter, SearchRequest, SelectOptions};

use super::{ApiError, App, Body, constant_time_eq, full, json_response, read_body};

/// Most upcoming fire times `/v1/schedules` lists per skill.
pub const MAX_NEXT_FIRES: usize = 100;
/// Default number of search results.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;
/// Interval of keep-alive comments on the event stream.
pub const EVENT_KEEPALIVE: Duration = Duration::from_secs(15);

/// What an endpoint does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Health,
    Ready,
    Skills,
    Skill,
    Resources,
    Resource,
    GetSkill,
    Catalog,
    Search,
    Select,
    NotesSearch,
    Diagnostics,
    Schedules,
    Extract,
    Route,
    Execute,
    Invoke,
    Workflows,
    Tasks,
    Task,
    Reload,
    Events,
    OpenApi,
}

/// One endpoint: method, path template (`{name}` matches one segment; a trailing `{path}`
/// matches the rest), whether it is an action (token required), and its documentation.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub method: Method,
    pub path: &'static str,
    pub op: Op,
    pub action: bool,
    pub summary: &'static str,
    /// Query parameters: name and description.
    pub query: &'static [(&'static str, &'static str)],
    /// JSON body fields: name, type and description (`None`: no body).
    pub body: Option<&'static [(&'static str, &'static str, &'static str)]>,
}

const PROFILE: (&str, &str) = ("profile", "the processing profile (profile affinity)");

pub(crate) const ENDPOINTS: &[Endpoint] = &[
    Endpoint {
        method: Method::GET,
        path: "/v1/health",
        op: Op::Health,
        action: false,
        summary: "Liveness: the server answers, with the snapshot generation and skill count.",
        query: &[],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/ready",
        op: Op::Ready,
        action: false,
        summary: "Readiness: 200 once skills are loaded and indexed, 503 otherwise.",
        query: &[],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills",
        op: Op::Skills,
        action: false,
        summary: "Skills, by name, with filters.",
        query: &[
            PROFILE,
            ("layer", "only skills of this layer"),
            ("domain", "only skills of this actions domain"),
            (
                "invocable_by",
                "`model` or `user`: only skills that caller may invoke",
            ),
            (
                "status",
                "`loaded` (default) or `all` (invalid and ineligible too)",
            ),
        ],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills/{name}",
        op: Op::Skill,
        action: false,
        summary: "One skill: metadata, body and diagnostics.",
        query: &[],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills/{name}/resources",
        op: Op::Resources,
        action: false,
        summary: "A skill's files: relative path, size and kind.",
        query: &[PROFILE],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills/{name}/resources/{path}",
        op: Op::Resource,
        action: false,
        summary: "One resource's bytes, confined to the skill folder and size-capped.",
        query: &[PROFILE],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/get_skill",
        op: Op::GetSkill,
        action: false,
        summary: "The get_skill tiers (markdown-first 3.3 and 6).",
        query: &[
            (
                "path",
                "empty, a domain, domain.command, domain.all or a skill name",
            ),
            PROFILE,
        ],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/catalog",
        op: Op::Catalog,
        action: false,
        summary: "The catalog for the system prompt, fitted to a budget, with its report.",
        query: &[
            PROFILE,
            ("format", "`markdown` (default), `xml` or `json`"),
            ("budget_chars", "the budget in characters"),
            (
                "context_window_tokens",
                "the context window; the budget is 2% of it x 4",
            ),
            ("entry_cap_chars", "the cap on one entry"),
        ],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/search",
        op: Op::Search,
        action: false,
        summary: "Ranked, explained skills for a query.",
        query: &[
            ("q", "the query text"),
            ("limit", "most results (default 10)"),
            PROFILE,
        ],
        body: None,
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/select",
        op: Op::Select,
        action: false,
        summary: "Skill selection for a request (agent-skills-integration 2.3) with the disclosure tier.",
        query: &[],
        body: Some(&[
            ("message", "string", "the user's request (required)"),
            ("recent_turns", "array", "earlier turns, oldest first"),
            ("max_skills", "integer", "most skills selected"),
            ("profile", "string", "the processing profile"),
            (
                "budget_tokens",
                "integer",
                "token budget of the disclosed text",
            ),
        ]),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/notes/search",
        op: Op::NotesSearch,
        action: false,
        summary: "Ranked markdown notes with highlighted snippets (when a notes folder is configured).",
        query: &[
            ("q", "the query text"),
            ("limit", "most results (default 10)"),
        ],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/diagnostics",
        op: Op::Diagnostics,
        action: false,
        summary: "Every diagnostic of the current snapshot, with counts.",
        query: &[],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/schedules",
        op: Op::Schedules,
        action: false,
        summary: "Scheduled skills with their next fire times.",
        query: &[
            ("next", "fire times per skill (default 5, at most 100)"),
            ("tz", "IANA time zone (default UTC)"),
        ],
        body: None,
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/extract",
        op: Op::Extract,
        action: true,
        summary: "Split model output into cmd-block commands and conversational text.",
        query: &[],
        body: Some(&[("output", "string", "the model output (required)")]),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/route",
        op: Op::Route,
        action: true,
        summary: "Route one line (from the model or a user), or a whole model output.",
        query: &[],
        body: Some(&[
            ("text", "string", "one command line or user message"),
            ("output", "string", "a whole model output (instead of text)"),
            ("from", "string", "`model` (default) or `user`"),
            ("profile", "string", "the processing profile"),
        ]),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/execute",
        op: Op::Execute,
        action: true,
        summary: "Execute a whole model output (every cmd-block command, in order) or one command line.",
        query: &[],
        body: Some(&[
            ("output", "string", "a whole model output"),
            ("command", "string", "one command line (instead of output)"),
            ("profile", "string", "the processing profile"),
        ]),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/invoke",
        op: Op::Invoke,
        action: true,
        summary: "Execute a user's slash command (`/skill name args`, `/command args`, `/name args`).",
        query: &[],
        body: Some(&[
            ("line", "string", "the user's line (required)"),
            ("profile", "string", "the processing profile"),
        ]),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/workflows",
        op: Op::Workflows,
        action: true,
        summary: "Create a workflow with workflow.build (markdown-first 9).",
        query: &[],
        body: Some(&[
            ("name", "string", "the workflow's name (required)"),
            ("description", "string", "what it does (required)"),
            ("steps", "string", "its steps, one command per line"),
            ("schedule", "string", "a cron expression"),
            ("domain", "string", "the domain folder (default workflows)"),
            (
                "overwrite",
                "boolean",
                "replace an existing workflow of that name",
            ),
        ]),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/tasks",
        op: Op::Tasks,
        action: false,
        summary: "Forked tasks (context: fork) with their status and result.",
        query: &[],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/tasks/{id}",
        op: Op::Task,
        action: false,
        summary: "One forked task.",
        query: &[],
        body: None,
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/reload",
        op: Op::Reload,
        action: true,
        summary: "Reload every source now; returns the change set.",
        query: &[],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/events",
        op: Op::Events,
        action: false,
        summary: "Server-sent events. `change`: a registry change set (the ChangeEvent schema; the SSE id is the new generation). `scheduled`: a scheduled run finished (the ScheduledEvent schema); when `outcome.requires_interpretation` is true (a template, a workflow of instructions) the host gives `outcome.output` to its model. `lagged`: `{\"missed\": n}` events this reader lost. Comment lines keep the connection alive. At most `max_event_streams` streams are open at once (503 `overloaded` beyond); streams end when the server shuts down.",
        query: &[],
        body: None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/openapi.json",
        op: Op::OpenApi,
        action: false,
        summary: "This API's OpenAPI 3.0 document.",
        query: &[],
        body: None,
    },
];

/// Match a path against a template; returns the captured parameters.
fn matches(template: &str, path: &str) -> Option<HashMap<&'static str, String>> {
    let mut params = HashMap::new();
    let mut t = template.trim_matches('/').split('/').peekable();
    let mut p = path.trim_matches('/').split('/');
    while let Some(seg) = t.next() {
        if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            let name: &'static str = match name {
                "name" => "name",
                "path" => "path",
                "id" => "id",
                _ => return None,
            };
            let value = if t.peek().is_none() && name == "path" {
                let rest: Vec<&str> = p.by_ref().collect();
                if rest.is_empty() {
                    return None;
                }
                rest.join("/")
            } else {
                p.next()?.to_owned()
            };
            let value = percent_decode(&value)?;
            if value.is_empty() {
                return None;
            }
            params.insert(name, value);
        } else if p.next()? != seg {
            return None;
        }
    }
    p.next().is_none().then_some(params)
}

/// Decode `%XX` escapes (and, in queries, `+`); `None` when the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn query_map(req: &Request<Incoming>) -> Result<HashMap<String, String>, ApiError> {
    let mut map = HashMap::new();
    for pair in req.uri().query().unwrap_or("").split('&') {
        if pair.is_empty() {
            continue;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| {
            percent_decode(&s.replace('+', " ")).ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "bad_query",
                    "the query string is not valid percent-encoded UTF-8",
                )
            })
        };
        map.insert(decode(k)?, decode(v)?);
    }
    Ok(map)
}

fn number<T: std::str::FromStr>(
    q: &HashMap<String, String>,
    key: &str,
) -> Result<Option<T>, ApiError> {
    match q.get(key) {
        None => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_query",
                format!("`{key}` must be a non-negative integer, not `{v}`"),
            )
        }),
    }
}

/// Answer one API request: find the endpoint, check the token, run it under its time
/// limit.
pub(crate) async fn handle(app: &Arc<App>, req: Request<Incoming>) -> Response<Body> {
    let (endpoint, params) = match find(app, &req) {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let limit = match endpoint.op {
        Op::Execute | Op::Invoke => app.exec_timeout(),
        _ => app.config.request_timeout,
    };
    match tokio::time::timeout(limit, dispatch(app, endpoint, params, req)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => e.into_response(),
        Err(_) => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout",
            format!(
                "the request took longer than this endpoint's time limit ({} ms)",
                limit.as_millis()
            ),
        )
        .into_response(),
    }
}

type Params = HashMap<&'static str, String>;

/// The endpoint for a request, after the token check; or why not (`404`, `405`, `401`).
fn find(app: &App, req: &Request<Incoming>) -> Result<(&'static Endpoint, Params), ApiError> {
    let path = req.uri().path();
    let mut allowed = Vec::new();
    for e in ENDPOINTS {
        if let Some(params) = matches(e.path, path) {
            if e.method == *req.method() {
                if e.action {
                    authorize(app, req)?;
                }
                return Ok((e, params));
            }
            allowed.push(e.method.as_str());
        }
    }
    if allowed.is_empty() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no endpoint at {path}; see /v1/openapi.json"),
        ));
    }
    Err(ApiError::method_not_allowed(path, &allowed))
}

async fn dispatch(
    app: &Arc<App>,
    endpoint: &Endpoint,
    params: Params,
    req: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let query = query_map(&req)?;
    let snapshot = app.engine.registry().snapshot();
    let name = params.get("name").cloned().unwrap_or_default();
    match endpoint.op {
        Op::Health => Ok(json_response(
            StatusCode::OK,
            &json!({
                "status": "ok",
                "generation": snapshot.generation(),
                "skills": snapshot.skills().count(),
                "uptime_seconds": app.engine.uptime_seconds(),
            }),
        )),
        Op::Ready => {
            let errors = app.engine.index_errors();
            let status = if errors.is_empty() {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            Ok(json_response(
                status,
                &json!({ "ready": errors.is_empty(), "generation": snapshot.generation(), "problems": errors }),
            ))
        }
        Op::Skills => skills(&snapshot, &query),
        Op::Skill => skill_detail(&snapshot, &name),
        Op::Resources => {
            let view = view(&snapshot, &query);
            let list = view.resources(&name).map_err(registry_error)?;
            Ok(json_response(
                StatusCode::OK,
                &json!({ "skill": name, "resources": list }),
            ))
        }
        Op::Resource => {
            let rel = params.get("path").cloned().unwrap_or_default();
            let bytes = view(&snapshot, &query)
                .read_resource(&name, &rel)
                .map_err(registry_error)?;
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
        Op::GetSkill => {
            let path = query
                .get("path")
                .map(String::as_str)
                .filter(|p| !p.trim().is_empty());
            let text = view(&snapshot, &query)
                .get_skill(path)
                .map_err(registry_error)?;
            // Loading one skill's instructions is a use of it (a domain listing is not).
            if let Some(skill) = path.and_then(|p| snapshot.entry(p.trim())) {
                app.engine.record_use(&skill.name);
            }
            Ok(json_response(
                StatusCode::OK,
                &json!({ "path": path, "text": text }),
            ))
        }
        Op::Catalog => catalog(app, &snapshot, &query),
        Op::Search => search(app, &query),
        Op::Select => {
            let body: SelectBody = json_body(app, req).await?;
            select(app, body)
        }
        Op::NotesSearch => notes_search(app, &query),
        Op::Diagnostics => {
            // What `skill-server validate` reports: the registry's, failing `## Examples`
            // lines, lily commands the router cannot dispatch, schedules that do not parse.
            let mut all = snapshot.diagnostics().to_vec();
            all.extend(skill_router::lint_examples(&snapshot));
            all.extend_from_slice(skill_router::Router::new(&snapshot).diagnostics());
            all.extend(skill_scheduler::scheduled_skills(&snapshot).1);
            all.sort_by(|a, b| {
                (&a.path, a.line, a.column, a.code).cmp(&(&b.path, b.line, b.column, b.code))
            });
            let errors = all.iter().filter(|d| d.is_error()).count();
            Ok(json_response(
                StatusCode::OK,
                &json!({
                    "generation": snapshot.generation(),
                    "errors": errors,
                    "warnings": all.len() - errors,
                    "diagnostics": all,
                }),
            ))
        }
        Op::Schedules => schedules(app, &snapshot, &query),
        Op::Extract => {
            let body: ExtractBody = json_body(app, req).await?;
            let extraction = skill_router::extract(&body.output);
            Ok(json_response(StatusCode::OK, &extraction))
        }
        Op::Route => {
            let body: RouteBody = json_body(app, req).await?;
            route(app, &snapshot, body)
        }
        Op::Execute => {
            let body: ExecuteBody = json_body(app, req).await?;
            execute(app, &snapshot, body).await
        }
        Op::Invoke => {
            let body: InvokeBody = json_body(app, req).await?;
            let ctx = context(Caller::User, body.profile);
            let outcome = app.engine.runtime().invoke(&body.line, &ctx).await;
            app.engine.record_outcomes([&outcome]);
            Ok(json_response(StatusCode::OK, &outcome))
        }
        Op::Workflows => {
            let body: serde_json::Map<String, Value> = json_body(app, req).await?;
            let flags = workflow_flags(body, endpoint.body.unwrap_or(&[]))?;
            let outcome = app
                .engine
                .runtime()
                .build_workflow(flags, &context(Caller::User, None))
                .await;
            let status = if outcome.ok {
                StatusCode::CREATED
            } else {
                StatusCode::UNPROCESSABLE_ENTITY
            };
            Ok(json_response(status, &outcome))
        }
        Op::Tasks => Ok(json_response(
            StatusCode::OK,
            &json!({ "tasks": app.engine.runtime().tasks() }),
        )),
        Op::Task => {
            let id: u64 = params
                .get("id")
                .and_then(|i| i.parse().ok())
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "bad_task_id",
                        "a task id is a number",
                    )
                })?;
            match app.engine.runtime().task(id) {
                Some(t) => Ok(json_response(StatusCode::OK, &t)),
                None => Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    "unknown_task",
                    format!("no task {id} (finished tasks are kept for a while, then dropped)"),
                )),
            }
        }
        Op::Reload => {
            let registry = app.engine.registry().clone();
            let change = tokio::task::spawn_blocking(move || registry.reload())
                .await
                .map_err(|e| {
                    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
                })?;
            Ok(json_response(
                StatusCode::OK,
                &crate::engine::ChangeEvent::from(&change),
            ))
        }
        Op::Events => events(app),
        Op::OpenApi => Ok(json_response(StatusCode::OK, &super::openapi())),
    }
}

/// The bearer token check for action endpoints.
pub(crate) fn authorize(app: &App, req: &Request<Incoming>) -> Result<(), ApiError> {
    let Some(token) = &app.config.token else {
        return Ok(());
    };
    // Only this header: a token in the query string or a cookie is never looked at.
    let given = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer)
        .unwrap_or("");
    if constant_time_eq(given.as_bytes(), token.as_bytes()) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this endpoint needs `Authorization: Bearer <token>` with the server's token",
        ))
    }
}

/// The token of an `Authorization: Bearer <token>` value; the scheme is matched in any
/// case (RFC 7235, section 2.1).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

async fn json_body<T: for<'de> Deserialize<'de>>(
    app: &App,
    req: Request<Incoming>,
) -> Result<T, ApiError> {
    let is_json = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        });
    if !is_json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the body as `Content-Type: application/json`",
        ));
    }
    let bytes = read_body(req.into_body(), app.config.max_body_bytes).await?;
    serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_json",
            format!("the body is not the JSON this endpoint expects: {e}"),
        )
    })
}

fn registry_error(e: RegistryError) -> ApiError {
    let (status, code) = match &e {
        RegistryError::UnknownSkill { .. }
        | RegistryError::UnknownSkills { .. }
        | RegistryError::SkillNotFound { .. } => (StatusCode::NOT_FOUND, "unknown_skill"),
        RegistryError::UnknownDomain { .. } | RegistryError::EmptyDomain { .. } => {
            (StatusCode::NOT_FOUND, "unknown_domain")
        }
        RegistryError::NotAvailable { .. } => (StatusCode::FORBIDDEN, "not_available"),
        RegistryError::ResourcePath { .. } => (StatusCode::BAD_REQUEST, "bad_resource_path"),
        RegistryError::ResourceNotFound { .. } => (StatusCode::NOT_FOUND, "unknown_resource"),
        RegistryError::ResourceTooLarge { .. } => {
            (StatusCode::PAYLOAD_TOO_LARGE, "resource_too_large")
        }
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
    };
    ApiError::new(status, code, e.to_string())
}

fn view<'a>(snapshot: &'a Snapshot, q: &HashMap<String, String>) -> Disclosure<'a> {
    let caller = match q.get("caller").map(String::as_str) {
        Some("user") => Caller::User,
        _ => Caller::Model,
    };
    Disclosure::new(snapshot)
        .profile(q.get("profile").map(String::as_str))
        .caller(caller)
}

/// A skill as the listing shows it, borrowed from the snapshot (serialized without copying
/// the skill into a `Value` first).
#[derive(Serialize)]
struct SkillSummary<'a> {
    name: &'a str,
    description: &'a str,
    dialect: &'static str,
    layer: &'a str,
    status: &'static str,
    domain: Option<&'a str>,
    model_invocable: bool,
    user_invocable: bool,
    schedule: Option<&'a str>,
    path: &'a std::path::Path,
}

fn skill_summary(s: &Skill) -> SkillSummary<'_> {
    SkillSummary {
        name: &s.name,
        description: &s.description,
        dialect: s.dialect.as_str(),
        layer: &s.layer,
        status: s.status.as_str(),
        domain: s.domain.as_deref(),
        model_invocable: s.model_invocable(),
        user_invocable: s.user_invocable(),
        schedule: s.manifest.schedule.as_deref(),
        path: &s.path,
    }
}

/// One skill in full: the summary, then its body and what the detail adds.
#[derive(Serialize)]
struct SkillDetail<'a> {
    #[serde(flatten)]
    summary: SkillSummary<'a>,
    body: &'a str,
    body_line: u32,
    allowed_tools: Option<&'a [String]>,
    argument_hint: Option<&'a str>,
    context: Option<&'static str>,
    diagnostics: &'a [skill_format::Diagnostic],
    generation: u64,
}

fn skills(snapshot: &Snapshot, q: &HashMap<String, String>) -> Result<Response<Body>, ApiError> {
    let all = match q.get("status").map(String::as_str) {
        None | Some("loaded") => false,
        Some("all") => true,
        Some(other) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_query",
                format!("`status` is `loaded` or `all`, not `{other}`"),
            ));
        }
    };
    let invocable = match q.get("invocable_by").map(String::as_str) {
        None => None,
        Some("model") => Some(Caller::Model),
        Some("user") => Some(Caller::User),
        Some(other) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_query",
                format!("`invocable_by` is `model` or `user`, not `{other}`"),
            ));
        }
    };
    let profile = q.get("profile").map(String::as_str);
    let list: Vec<SkillSummary<'_>> = snapshot
        .entries()
        .filter(|s| all || s.status == Status::Loaded)
        .filter(|s| q.get("layer").is_none_or(|l| &s.layer == l))
        .filter(|s| q.get("domain").is_none_or(|d| s.domain.as_ref() == Some(d)))
        .filter(|s| match invocable {
            None => true,
            Some(Caller::Model) => s.model_invocable(),
            Some(Caller::User) => s.user_invocable(),
        })
        .filter(|s| s.affinity(profile) != skill_registry::Affinity::Excluded)
        .map(|s| skill_summary(s))
        .collect();
    #[derive(Serialize)]
    struct Listing<'a> {
        generation: u64,
        count: usize,
        skills: Vec<SkillSummary<'a>>,
    }
    Ok(json_response(
        StatusCode::OK,
        &Listing {
            generation: snapshot.generation(),
            count: list.len(),
            skills: list,
        },
    ))
}

fn skill_detail(snapshot: &Snapshot, name: &str) -> Result<Response<Body>, ApiError> {
    let Some(s) = snapshot.entry(name).or_else(|| snapshot.domain(name)) else {
        let suggestions =
            skill_registry::closest_names(name, snapshot.entries().map(|s| s.name.as_str()));
        return Err(registry_error(RegistryError::UnknownSkill {
            name: name.to_owned(),
            suggestions,
        }));
    };
    let m = &s.manifest;
    let detail = SkillDetail {
        summary: skill_summary(s),
        body: &s.body,
        body_line: s.body_line,
        allowed_tools: m.allowed_tools.as_deref(),
        argument_hint: m.argument_hint.as_deref(),
        context: m.context.map(skill_format::ContextMode::as_str),
        diagnostics: &s.diagnostics,
        generation: snapshot.generation(),
    };
    Ok(json_response(StatusCode::OK, &detail))
}

fn catalog(
    app: &App,
    snapshot: &Snapshot,
    q: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    let format = match q.get("format").map(String::as_str) {
        None | Some("markdown") => CatalogFormat::Markdown,
        Some("xml") => CatalogFormat::Xml,
        Some("json") => CatalogFormat::Json,
        Some(other) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_query",
                format!("`format` is `markdown`, `xml` or `json`, not `{other}`"),
            ));
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
    let c = view(snapshot, q).catalog(format, &budget);
    Ok(json_response(
        StatusCode::OK,
        &json!({
            "generation": snapshot.generation(),
            "format": c.format,
            "text": c.text,
            "entries": c.entries,
            "report": c.report,
        }),
    ))
}

fn search_error(e: skill_search::Error) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "search_failed",
        e.to_string(),
    )
}

fn search(app: &App, q: &HashMap<String, String>) -> Result<Response<Body>, ApiError> {
    let text = q.get("q").map(String::as_str).unwrap_or("");
    let limit = number::<usize>(q, "limit")?.unwrap_or(DEFAULT_SEARCH_LIMIT);
    let matches = app
        .engine
        .index()
        .search(&SearchRequest {
            text,
            recent_turns: &[],
            limit,
            filter: Filter {
                profile: q.get("profile").cloned(),
                model_invocable_only: false,
            },
        })
        .map_err(search_error)?;
    Ok(json_response(
        StatusCode::OK,
        &json!({ "query": text, "matches": matches }),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SelectBody {
    message: String,
    #[serde(default)]
    recent_turns: Vec<String>,
    max_skills: Option<usize>,
    profile: Option<String>,
    budget_tokens: Option<usize>,
}

fn select(app: &App, body: SelectBody) -> Result<Response<Body>, ApiError> {
    let mut opts = SelectOptions {
        recent_turns: body.recent_turns,
        profile: body.profile,
        ..SelectOptions::default()
    };
    if let Some(n) = body.max_skills {
        opts.max_skills = n;
    }
    if let Some(b) = body.budget_tokens {
        opts.budget_tokens = b;
    }
    let selection = app
        .engine
        .index()
        .select(&body.message, &opts)
        .map_err(search_error)?;
    Ok(json_response(StatusCode::OK, &selection))
}

fn notes_search(app: &App, q: &HashMap<String, String>) -> Result<Response<Body>, ApiError> {
    let Some(notes) = app.engine.notes() else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no_notes",
            "no notes folder is configured on this server",
        ));
    };
    let text = q.get("q").map(String::as_str).unwrap_or("");
    let limit = number::<usize>(q, "limit")?.unwrap_or(DEFAULT_SEARCH_LIMIT);
    let hits = notes.search(text, limit).map_err(search_error)?;
    Ok(json_response(
        StatusCode::OK,
        &json!({ "query": text, "notes": hits }),
    ))
}

fn schedules(
    app: &App,
    snapshot: &Snapshot,
    q: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    let next = number::<usize>(q, "next")?.unwrap_or(5).min(MAX_NEXT_FIRES);
    let tz: skill_scheduler::Tz = match q.get("tz") {
        None => skill_scheduler::Tz::UTC,
        Some(name) => name.parse().map_err(|_| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_query",
                format!("`tz` must be an IANA time zone such as Europe/Paris, not `{name}`"),
            )
        })?,
    };
    if q.get("tz").is_none() {
        if let Some(jobs) = app.engine.schedule_jobs(next) {
            let history = app.engine.schedule_history().unwrap_or_default();
            let fmt = |t: &skill_scheduler::DateTime<skill_scheduler::Utc>| {
                t.to_rfc3339_opts(skill_scheduler::SecondsFormat::Secs, true)
            };
            let run = |r: &skill_scheduler::RunRecord| {
                json!({
                    "id": r.id,
                    "skill": r.name,
                    "scheduled": fmt(&r.scheduled),
                    "started": fmt(&r.started),
                    "finished": r.finished.as_ref().map(fmt),
                    "generation": r.generation,
                    "outcome": r.outcome.as_str(),
                    "error": match &r.outcome {
                        skill_scheduler::Outcome::Failed(m) => Some(m.clone()),
                        _ => None,
                    },
                })
            };
            let list: Vec<Value> = jobs
                .iter()
                .map(|j| {
                    json!({
                        "skill": j.name,
                        "expression": j.expression,
                        "timezone": j.timezone.name(),
                        "next": j.next.iter().map(fmt).collect::<Vec<_>>(),
                        "last_fire": j.last_fire.as_ref().map(fmt),
                        "last_run": j.last_run.as_ref().map(run),
                        "running": j.running,
                    })
                })
                .collect();
            return Ok(json_response(
                StatusCode::OK,
                &json!({
                    "generation": snapshot.generation(),
                    "schedules": list,
                    "history": history.iter().map(run).collect::<Vec<_>>(),
                    "diagnostics": skill_scheduler::scheduled_skills(snapshot).1,
                }),
            ));
        }
    }
    let now = skill_scheduler::Utc::now();
    let (jobs, diagnostics) = skill_scheduler::scheduled_skills(snapshot);
    let list: Vec<Value> = jobs
        .iter()
        .map(|j| {
            json!({
                "skill": j.skill.name,
                "expression": j.schedule.as_str(),
                "timezone": tz.name(),
                "next": j.schedule.upcoming(now, tz, next)
                    .iter()
                    .map(|t| t.to_rfc3339_opts(skill_scheduler::SecondsFormat::Secs, true))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(json_response(
        StatusCode::OK,
        &json!({ "generation": snapshot.generation(), "schedules": list, "diagnostics": diagnostics }),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtractBody {
    output: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteBody {
    text: Option<String>,
    output: Option<String>,
    from: Option<String>,
    profile: Option<String>,
}

fn route(app: &App, snapshot: &Snapshot, body: RouteBody) -> Result<Response<Body>, ApiError> {
    let mut config = app.engine.router_config().clone();
    if body.profile.is_some() {
        config.profile = body.profile.clone();
    }
    let router = Router::with_config(snapshot, config);
    let caller = match body.from.as_deref() {
        None | Some("model") => Caller::Model,
        Some("user") => Caller::User,
        Some(other) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_json",
                format!("`from` is `model` or `user`, not `{other}`"),
            ));
        }
    };
    match (body.text, body.output) {
        (Some(text), None) => Ok(json_response(StatusCode::OK, &router.route(&text, caller))),
        (None, Some(output)) => Ok(json_response(StatusCode::OK, &router.route_output(&output))),
        _ => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_json",
            "give exactly one of `text` (one line) and `output` (a whole model output)",
        )),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecuteBody {
    output: Option<String>,
    command: Option<String>,
    profile: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InvokeBody {
    line: String,
    profile: Option<String>,
}

fn context(caller: Caller, profile: Option<String>) -> crate::exec::Context {
    let ctx = match caller {
        Caller::User => crate::exec::Context::user(),
        Caller::Model => crate::exec::Context::model(),
    };
    match profile {
        Some(p) => ctx.with_profile(p),
        None => ctx,
    }
}

async fn execute(
    app: &App,
    snapshot: &Arc<Snapshot>,
    body: ExecuteBody,
) -> Result<Response<Body>, ApiError> {
    let ctx = context(Caller::Model, body.profile.clone()).with_snapshot(snapshot.clone());
    let runtime = app.engine.runtime();
    match (body.output, body.command) {
        (Some(output), None) => {
            let results = runtime.execute_output(&output, &ctx).await;
            app.engine
                .record_outcomes(results.iter().map(|r| &r.outcome));
            Ok(json_response(
                StatusCode::OK,
                &json!({ "results": results }),
            ))
        }
        (None, Some(command)) => {
            let mut config = app.engine.router_config().clone();
            if body.profile.is_some() {
                config.profile = body.profile;
            }
            let route = Router::with_config(snapshot, config).route(&command, Caller::Model);
            let outcome = match &route {
                skill_router::Route::Invoke(inv) => Some(runtime.execute(inv, &ctx).await),
                _ => None,
            };
            app.engine.record_outcomes(outcome.as_ref());
            Ok(json_response(
                StatusCode::OK,
                &json!({ "route": route, "outcome": outcome }),
            ))
        }
        _ => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_json",
            "give exactly one of `output` (a whole model output) and `command` (one line)",
        )),
    }
}

/// A JSON object of `workflow.build` flags: strings, booleans (switches) and arrays of
/// strings. Only the documented fields are accepted, as every other endpoint does.
fn workflow_flags(
    body: serde_json::Map<String, Value>,
    documented: &[(&str, &str, &str)],
) -> Result<skill_router::Flags, ApiError> {
    use skill_router::FlagValue;
    let mut flags = skill_router::Flags::new();
    for (k, v) in body {
        if !documented.iter().any(|(name, _, _)| *name == k) {
            let names: Vec<String> = documented
                .iter()
                .map(|(n, _, _)| format!("`{n}`"))
                .collect();
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_json",
                format!("unknown field `{k}`, expected one of {}", names.join(", ")),
            ));
        }
        let value = match v {
            Value::String(s) => FlagValue::One(s),
            Value::Bool(b) => FlagValue::Switch(b),
            Value::Number(n) => FlagValue::One(n.to_string()),
            Value::Array(items) => FlagValue::Many(
                items
                    .into_iter()
                    .map(|i| match i {
                        Value::String(s) => Ok(s),
                        other => Err(ApiError::new(
                            StatusCode::BAD_REQUEST,
                            "bad_json",
                            format!("`{k}` must hold strings, not {other}"),
                        )),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            other => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "bad_json",
                    format!("`{k}` must be a string, a boolean or a list of strings, not {other}"),
                ));
            }
        };
        if matches!(value, FlagValue::Switch(false)) {
            continue;
        }
        flags.insert(k, value);
    }
    Ok(flags)
}

/// The body of an event stream. It holds the stream's permit, so the slot frees as soon
/// as hyper drops the body (the client went away, or the stream ended).
struct EventBody {
    rx: tokio::sync::mpsc::Receiver<Bytes>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl hyper::body::Body for EventBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(Frame::data(b))))
    }
}

/// Completes when the server starts shutting down (or the app is gone).
async fn until_closing(closing: &mut tokio::sync::watch::Receiver<bool>) {
    // The guard `wait_for` returns is dropped here, never held across an await.
    let _ = closing.wait_for(|c| *c).await;
}

/// Chunks queued for one event stream before its writer waits for the client.
const EVENT_STREAM_QUEUE: usize = 16;

/// The event stream: `event: change` with the change set as JSON (its `id` is the new
/// generation), `event: scheduled` with a finished scheduled run, keep-alive comments, and
/// `event: lagged` when this reader fell behind and lost events. At most
/// `max_event_streams` are open at once; every stream ends when the server shuts down.
fn events(app: &Arc<App>) -> Result<Response<Body>, ApiError> {
    let permit = app.event_streams.clone().try_acquire_owned().map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "overloaded",
            format!(
                "{} event streams are open, the most this server allows; retry shortly",
                app.config.max_event_streams
            ),
        )
    })?;
    let mut rx = app.engine.events();
    let mut closing = app.closing.subscribe();
    let (tx, body_rx) = tokio::sync::mpsc::channel::<Bytes>(EVENT_STREAM_QUEUE);
    tokio::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        let mut msg = ": skills engine events\nretry: 2000\n\n".to_owned();
        loop {
            // Wait for the client to take the message, unless the server is closing.
            let sent = tokio::select! {
                r = tx.send(Bytes::from(msg)) => r.is_ok(),
                () = until_closing(&mut closing) => false,
            };
            if !sent {
                return;
            }
            msg = tokio::select! {
                r = rx.recv() => match r {
                    Ok(event) => {
                        let id = match &*event {
                            crate::engine::Event::Change(c) => format!("id: {}\n", c.generation),
                            crate::engine::Event::Scheduled(_) => String::new(),
                        };
                        format!("{id}event: {}\ndata: {}\n\n", event.name(), event.to_json())
                    }
                    Err(RecvError::Lagged(n)) => format!("event: lagged\ndata: {{\"missed\":{n}}}\n\n"),
                    Err(RecvError::Closed) => return,
                },
                () = tokio::time::sleep(EVENT_KEEPALIVE) => ": keep-alive\n\n".to_owned(),
                () = until_closing(&mut closing) => return,
                () = tx.closed() => return,
            };
        }
    });
    let body = EventBody {
        rx: body_rx,
        _permit: permit,
    };
    let mut resp = Response::new(http_body_util::BodyExt::boxed_unsync(body));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(resp)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn lookups_of_unknown_skills_are_404_whatever_the_registry_error() {
        for e in [
            RegistryError::UnknownSkill {
                name: "x".into(),
                suggestions: Vec::new(),
            },
            RegistryError::SkillNotFound {
                name: "x".into(),
                available: Vec::new(),
                more: 0,
                suggestions: Vec::new(),
            },
        ] {
            let api = registry_error(e);
            assert_eq!(
                (api.status, api.code),
                (StatusCode::NOT_FOUND, "unknown_skill")
            );
        }
    }

    #[test]
    fn path_templates() {
        let m = matches("/v1/skills/{name}", "/v1/skills/pdf-forms").unwrap();
        assert_eq!(m["name"], "pdf-forms");
        assert!(matches("/v1/skills/{name}", "/v1/skills").is_none());
        assert!(matches("/v1/skills/{name}", "/v1/skills/a/b").is_none());
        let m = matches(
            "/v1/skills/{name}/resources/{path}",
            "/v1/skills/x/resources/a/b.md",
        )
        .unwrap();
        assert_eq!(m["path"], "a/b.md");
        let m = matches(
            "/v1/skills/{name}/resources/{path}",
            "/v1/skills/x/resources/a%2Fb%20c.md",
        )
        .unwrap();
        assert_eq!(m["path"], "a/b c.md");
        assert!(matches("/v1/skills/{name}", "/v1/skills/%ff").is_none());
        assert!(matches("/v1/health", "/v1/health/").is_some());
    }

    #[test]
    fn percent_decoding_edges() {
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent_decode("%").as_deref(), Some("%"));
        assert_eq!(percent_decode("%4").as_deref(), Some("%4"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%00").as_deref(), Some("\0"));
    }

    #[test]
    fn bearer_scheme_in_any_case() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer abc"), Some("abc"));
        assert_eq!(bearer(" BEARER   abc "), Some("abc"));
        assert_eq!(bearer("Bearer"), None);
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearerabc"), None);
        assert_eq!(bearer("abc"), None);
    }

    #[test]
    fn every_endpoint_is_unique() {
        let mut seen = std::collections::HashSet::new();
        for e in ENDPOINTS {
            assert!(
                seen.insert((e.method.clone(), e.path)),
                "{} {}",
                e.method,
                e.path
            );
            assert_eq!(
                e.action,
                e.method == Method::POST && e.op != Op::Select,
                "{}",
                e.path
            );
        }
    }
}
