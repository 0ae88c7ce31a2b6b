//! The engine's operations as MCP tools: `get_skill` (the four tiers and `name#slug`
//! sections), `load_skill` (whole, one `section`, or the `outline`),
//! `use_skill` (arguments; `context: fork` gives a task id), `search_skills`,
//! `select_skills` (the selection JSON), `route` and `execute` (```` ```cmd ```` blocks of
//! model output). Each calls one typed Engine operation (the doorway the HTTP API and the
//! command line use) and renders its answer with the same `skill_runtime::wire` shape, so
//! a question gets the same JSON over MCP as over HTTP; a failure the model can act on is a
//! tool error result, an unknown tool or malformed arguments are `-32602`. This module
//! knows the engine, not the server that calls it.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use skill_registry::SECTION_SEPARATOR;
use skill_runtime::wire::{
    ExecutedShape, OutlineShape, ResultsShape, RoutedOutputShape, SearchShape,
};
use skill_runtime::{Engine, Lookup, Scope, SearchQuery};
use skill_search::SelectOptions;

/// The prompt argument that carries a skill's `$ARGUMENTS`.
pub const PROMPT_ARGUMENT: &str = "arguments";
/// Results `search_skills` returns when the call does not say.
const DEFAULT_SEARCH_LIMIT: usize = 10;
/// Most results `search_skills` returns.
pub const MAX_SEARCH_LIMIT: usize = 100;

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn tool(name: &'static str, description: &'static str, input: Value, read_only: bool) -> Tool {
    Tool::new(name, description, schema(input)).with_annotations(
        ToolAnnotations::new()
            .read_only(read_only)
            .destructive(false),
    )
}

/// Every tool the server offers.
pub fn definitions() -> Vec<Tool> {
    let string = json!({ "type": "string" });
    vec![
        tool(
            "get_skill",
            "Progressive disclosure: no path lists every domain and skill; `email` gives a domain's overview or a skill; `email.send` one skill; `email.all` every skill of a domain; `name#slug` one section of a skill (see load_skill's `outline`).",
            json!({ "type": "object", "properties": { "path": { "type": "string", "description": "A dot path: domain, domain.skill, domain.all or a skill name, optionally followed by #slug for one section" } } }),
            true,
        ),
        tool(
            "load_skill",
            "Load one skill's full instructions by name. For a large skill, ask first for its `outline` (every section with its slug and estimated tokens), then load only the `section` you need.",
            json!({ "type": "object", "properties": { "name": string, "section": { "type": "string", "description": "The slug of one section to load (with its subsections)" }, "outline": { "type": "boolean", "description": "Return the skill's outline instead of its text" } }, "required": ["name"] }),
            true,
        ),
        tool(
            "use_skill",
            "Use a skill with arguments: a template returns its instructions with the arguments substituted; a `context: fork` skill starts a background task and returns its id.",
            json!({ "type": "object", "properties": { "name": string, "arguments": { "type": "string", "description": "Replaces $ARGUMENTS in the skill" } }, "required": ["name"] }),
            false,
        ),
        tool(
            "search_skills",
            "Rank skills for a query (name, description, triggers and body).",
            json!({ "type": "object", "properties": { "query": string, "limit": { "type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT } }, "required": ["query"] }),
            true,
        ),
        tool(
            "select_skills",
            "Choose the skills to load for a user message: selected_skills with confidence and reason, no_skill_needed, and the disclosure tier.",
            json!({ "type": "object", "properties": { "message": string, "recent_turns": { "type": "array", "items": string }, "max_skills": { "type": "integer", "minimum": 1 } }, "required": ["message"] }),
            true,
        ),
        tool(
            "route",
            "Route the ```cmd blocks of model output to skills without running anything: each command's route, and the reply text outside the blocks.",
            json!({ "type": "object", "properties": { "output": string }, "required": ["output"] }),
            true,
        ),
        tool(
            "execute",
            "Execute every command in the ```cmd blocks of model output, in order; each result is reported.",
            json!({ "type": "object", "properties": { "output": string }, "required": ["output"] }),
            false,
        ),
    ]
}

fn bad_args(message: String) -> ErrorData {
    ErrorData::invalid_params(message, None)
}

fn text_arg<'a>(
    args: &'a JsonObject,
    key: &str,
    required: bool,
) -> Result<Option<&'a str>, ErrorData> {
    match args.get(key) {
        None | Some(Value::Null) if !required => Ok(None),
        None | Some(Value::Null) => Err(bad_args(format!("`{key}` is required"))),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err(bad_args(format!(
            "`{key}` must be a string, not {}",
            crate::jsonrpc::kind(other)
        ))),
    }
}

fn required<'a>(args: &'a JsonObject, key: &str) -> Result<&'a str, ErrorData> {
    text_arg(args, key, true)?.ok_or_else(|| bad_args(format!("`{key}` is required")))
}

fn number_arg(args: &JsonObject, key: &str) -> Result<Option<usize>, ErrorData> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n >= 1)
            .map(Some)
            .ok_or_else(|| bad_args(format!("`{key}` must be a whole number of at least 1"))),
    }
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

fn json_result(shape: &impl serde::Serialize) -> CallToolResult {
    match serde_json::to_value(shape).unwrap_or(Value::Null) {
        value @ Value::Object(_) => CallToolResult::structured(value),
        other => text_result(other.to_string()),
    }
}

/// `load_skill`: the whole skill, one `section` of it, or its `outline` (JSON).
fn load_skill(
    engine: &Engine,
    args: &JsonObject,
    scope: &Scope,
) -> Result<CallToolResult, ErrorData> {
    let name = required(args, "name")?;
    let outline = match args.get("outline") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad_args("`outline` is a boolean".to_owned())),
    };
    let section = text_arg(args, "section", false)?;
    if outline && section.is_some() {
        return Err(bad_args("give `outline` or `section`, not both".to_owned()));
    }
    let profile = scope.profile.as_deref();
    Ok(if outline {
        match engine.outline(name, &Lookup::Disclosed(scope.clone())) {
            Ok(o) => json_result(&OutlineShape::from(&o)),
            Err(e) => error_result(e.to_string()),
        }
    } else {
        let id = match section {
            Some(slug) => format!("{}{SECTION_SEPARATOR}{}", name.trim(), slug.trim()),
            None => name.to_owned(),
        };
        match engine.load_skill_text(&id, profile) {
            Ok(text) => text_result(text),
            Err(e) => error_result(e.to_string()),
        }
    })
}

/// `f`, which searches or selects: when the engine runs a model for that (milliseconds of
/// CPU) on a multi-threaded tokio runtime, tokio is told the thread blocks, so that other
/// sessions' work moves to other threads; else it runs as any call.
fn beside_executor<T>(engine: &Engine, f: impl FnOnce() -> T) -> T {
    blocking_in_place(engine.runs_model(), f)
}

/// `f`, in `block_in_place` when `blocking` and the caller is on a multi-threaded tokio
/// runtime (which alone allows it: on a current-thread runtime it would panic), else as a
/// plain call.
fn blocking_in_place<T>(blocking: bool, f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let multi =
        Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    if multi && blocking {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}

/// Run one tool for the model, under the profile (`None`: the engine's).
pub async fn call(
    engine: &Engine,
    profile: Option<&str>,
    name: &str,
    args: JsonObject,
) -> Result<CallToolResult, ErrorData> {
    let scope = Scope::model().with_profile(profile.map(str::to_owned));
    let result = match name {
        "get_skill" => match engine.get_skill(text_arg(&args, "path", false)?, &scope) {
            Ok(text) => text_result(text),
            Err(e) => error_result(e.to_string()),
        },
        "load_skill" => load_skill(engine, &args, &scope)?,
        "use_skill" => {
            let skill = required(&args, "name")?.trim();
            let arguments = text_arg(&args, "arguments", false)?
                .map(str::trim)
                .filter(|a| !a.is_empty());
            match engine.skill_visible_to_model(skill, profile) {
                Ok(()) => {
                    let line = match arguments {
                        Some(a) => format!("{skill} {a}"),
                        None => skill.to_owned(),
                    };
                    let done = engine.execute(&line, &scope).await;
                    json_result(&ExecutedShape {
                        route: &done.route,
                        outcome: done.outcome.as_ref(),
                    })
                }
                Err(e) => error_result(e.to_string()),
            }
        }
        "search_skills" => {
            let query = required(&args, "query")?;
            let limit = number_arg(&args, "limit")?
                .unwrap_or(DEFAULT_SEARCH_LIMIT)
                .min(MAX_SEARCH_LIMIT);
            let request = SearchQuery {
                text: query.to_owned(),
                limit,
                profile: profile.map(str::to_owned),
            };
            match beside_executor(engine, || engine.search(&request)) {
                Ok(matches) => json_result(&SearchShape::new(query, &matches)),
                Err(e) => error_result(e.to_string()),
            }
        }
        "select_skills" => {
            let message = required(&args, "message")?;
            let recent_turns = match args.get("recent_turns") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|t| t.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad_args("`recent_turns` is a list of strings".into()))?,
                Some(_) => return Err(bad_args("`recent_turns` is a list of strings".into())),
            };
            let mut options = SelectOptions {
                recent_turns,
                profile: profile.map(str::to_owned),
                ..SelectOptions::default()
            };
            if let Some(n) = number_arg(&args, "max_skills")? {
                options.max_skills = n;
            }
            match beside_executor(engine, || engine.select(message, &options)) {
                Ok(selection) => json_result(&selection),
                Err(e) => error_result(e.to_string()),
            }
        }
        "route" => json_result(&RoutedOutputShape::from(
            &engine.route_output(required(&args, "output")?, &scope),
        )),
        "execute" => {
            let results = engine
                .execute_output(required(&args, "output")?, &scope)
                .await;
            json_result(&ResultsShape::new(&results))
        }
        other => {
            return Err(bad_args(format!(
                "no tool `{other}`; the tools are get_skill, load_skill, use_skill, search_skills, select_skills, route and execute"
            )));
        }
    };
    Ok(result)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_and_a_unique_name() {
        let tools = definitions();
        let mut names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 7);
        for t in &tools {
            assert_eq!(
                t.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                t.name
            );
        }
    }

    /// A tool that runs a model blocks its thread: on a multi-threaded runtime tokio is told
    /// (the worker's other tasks move on), which shows as a second worker running a task
    /// while the first is still blocked; on a current-thread runtime, where `block_in_place`
    /// would panic, it is a plain call. (Outside tokio it is a plain call too, as
    /// `block_in_place` would be there.)
    #[test]
    fn a_model_call_blocks_in_place_only_where_tokio_allows_it() {
        assert_eq!(blocking_in_place(true, || 7), 7);
        let current = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(current.block_on(async { blocking_in_place(true, || 8) }), 8);

        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let ran = multi.block_on(async move {
            // On the only worker: blocked until a task spawned from inside `f` has run,
            // which needs the worker handed over to another thread.
            let task = tokio::spawn(async move {
                blocking_in_place(true, || {
                    tokio::spawn(async move { tx.send(()).unwrap() });
                    rx.recv_timeout(std::time::Duration::from_secs(10)).is_ok()
                })
            });
            task.await.unwrap()
        });
        assert!(ran, "the spawned task never ran while the tool blocked");
    }

    #[test]
    fn arguments_are_checked_before_any_call() {
        let mut args = JsonObject::new();
        assert!(required(&args, "name").is_err());
        args.insert("name".into(), json!(3));
        // The message says what the argument must be, and what came.
        let wrong = required(&args, "name")
            .err()
            .map(|e| e.message.into_owned());
        assert_eq!(
            wrong.as_deref(),
            Some("`name` must be a string, not an integer")
        );
        args.insert("name".into(), json!("x"));
        assert_eq!(required(&args, "name").ok(), Some("x"));
        args.insert("limit".into(), json!(0));
        let wrong = number_arg(&args, "limit")
            .err()
            .map(|e| e.message.into_owned());
        assert_eq!(
            wrong.as_deref(),
            Some("`limit` must be a whole number of at least 1")
        );
        args.insert("limit".into(), json!(5));
        assert_eq!(number_arg(&args, "limit").ok(), Some(Some(5)));
    }
}
