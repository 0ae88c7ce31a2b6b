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

use skill_runtime::wire::{
    Answer, ExecuteRequest, ExecutedShape, GetSkillRequest, Input, LoadSkillRequest, Operation,
    OutlineShape, Request, RequestError, ResultsShape, RouteRequest, RoutedOutputShape,
    SearchRequest, SearchShape, SelectRequest, UseSkillRequest,
};
use skill_runtime::{Engine, Lookup, SECTION_SEPARATOR, Scope};

/// The prompt argument that carries a skill's `$ARGUMENTS`.
pub(crate) const PROMPT_ARGUMENT: &str = "arguments";

/// One tool: its name, the wire operation whose input it takes, what it does, and whether
/// it only reads.
struct ToolSpec {
    name: &'static str,
    operation: &'static Operation,
    description: &'static str,
    read_only: bool,
    /// The answer its structured content carries, whose schema is its `outputSchema`
    /// (`None`: the tool answers text, or structured content only sometimes: `load_skill`'s
    /// `outline`; a declared schema would oblige every answer to carry it).
    answer: Option<Answer>,
}

/// Every tool, each over one wire operation: its `inputSchema` is the operation's input
/// description without the fields that say who asks (the server's profile decides, and
/// the caller is the model).
const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "get_skill",
        operation: GetSkillRequest::OPERATION,
        description: "Progressive disclosure: no path lists every domain and skill; `email` gives a domain's overview or a skill; `email.send` one skill; `email.all` every skill of a domain; `name#slug` one section of a skill (see load_skill's `outline`).",
        read_only: true,
        answer: None,
    },
    ToolSpec {
        name: "load_skill",
        operation: LoadSkillRequest::OPERATION,
        description: "Load one skill's full instructions by name. For a large skill, ask first for its `outline` (every section with its slug and estimated tokens), then load only the `section` you need.",
        read_only: true,
        answer: None,
    },
    ToolSpec {
        name: "use_skill",
        operation: UseSkillRequest::OPERATION,
        description: "Use a skill with arguments: a template returns its instructions with the arguments substituted; a `context: fork` skill starts a background task and returns its id.",
        read_only: false,
        answer: Some(Answer::UseSkill),
    },
    ToolSpec {
        name: "search_skills",
        operation: SearchRequest::OPERATION,
        description: "Rank skills for a query (name, description, triggers and body).",
        read_only: true,
        answer: Some(Answer::Search),
    },
    ToolSpec {
        name: "select_skills",
        operation: SelectRequest::OPERATION,
        description: "Choose the skills to load for a user message: selected_skills with confidence and reason, no_skill_needed, and the disclosure tier.",
        read_only: true,
        answer: Some(Answer::Select),
    },
    ToolSpec {
        name: "route",
        operation: RouteRequest::OPERATION,
        description: "Route one command line (`text`) or the ```cmd blocks of a whole model output (`output`) to skills without running anything: each command's route, and the reply text outside the blocks.",
        read_only: true,
        answer: Some(Answer::Route),
    },
    ToolSpec {
        name: "execute",
        operation: ExecuteRequest::OPERATION,
        description: "Execute one command line (`command`) or every command in the ```cmd blocks of a model output (`output`), in order; each result is reported.",
        read_only: false,
        answer: Some(Answer::Execute),
    },
];

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// Every tool the server offers.
pub(crate) fn definitions() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|t| {
            let tool = Tool::new(
                t.name,
                t.description,
                schema(t.operation.input_schema(false)),
            )
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(t.read_only)
                    .destructive(false),
            );
            match t.answer {
                Some(answer) => tool.with_raw_output_schema(schema(answer.output_schema())),
                None => tool,
            }
        })
        .collect()
}

/// Arguments the wire contract refused: `-32602` Invalid params, with the stable code in
/// the error's `data` (`{"code": "bad_json"}`).
fn refused(e: RequestError) -> ErrorData {
    ErrorData::invalid_params(e.message, Some(json!({ "code": e.code })))
}

/// A tool's arguments read into its wire request (scope fields are not taken).
fn read<R: Request>(args: &JsonObject) -> Result<R, ErrorData> {
    R::read(args, false).map_err(refused)
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// `text` with every source folder it names written relative to its source, as `/v1`
/// answers write them (an exclusion's reason names the skill's file): the door tells a
/// model or host nothing about the server's folders.
pub(crate) fn relative_paths(engine: &Engine, text: &str) -> String {
    let snapshot = engine.snapshot();
    skill_runtime::wire::Paths::Relative(snapshot.sources())
        .text(text)
        .into_owned()
}

/// A failure the model can act on: the message as text (its paths relative to their
/// source), and the wire's `{"error": {"code", "message"}}` as structured content, so the
/// stable code travels.
fn error_result(engine: &Engine, e: &skill_runtime::Error) -> CallToolResult {
    let message = relative_paths(engine, &e.to_string());
    let mut result = CallToolResult::error(vec![ContentBlock::text(message.clone())]);
    result.structured_content = Some(json!({
        "error": { "code": skill_runtime::wire::snake_case(e.code()), "message": message }
    }));
    result
}

fn json_result(shape: &impl serde::Serialize) -> CallToolResult {
    match serde_json::to_value(shape).unwrap_or(Value::Null) {
        value @ Value::Object(_) => CallToolResult::structured(value),
        other => text_result(other.to_string()),
    }
}

/// [`json_result`] of an answer to an input of `input_bytes` bytes, bounded as `/v1/route`
/// bounds its answers ([`answer_cap`](skill_runtime::wire::answer_cap)): the structured
/// answer gets a third of the cap, since a tool result carries it twice (the second time
/// as escaped text). Past it, an `answer_too_large` error result.
fn capped_json_result(shape: &impl serde::Serialize, input_bytes: usize) -> CallToolResult {
    use skill_runtime::wire::{answer_cap, to_vec_capped};
    let bounded = to_vec_capped(shape, answer_cap(input_bytes) / 3)
        .map_err(|e| e.message(input_bytes))
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).map_err(|e| e.to_string()));
    match bounded {
        Ok(value @ Value::Object(_)) => CallToolResult::structured(value),
        Ok(other) => text_result(other.to_string()),
        Err(message) => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(message.clone())]);
            result.structured_content = Some(json!({
                "error": { "code": "answer_too_large", "message": message }
            }));
            result
        }
    }
}

/// `load_skill`: the whole skill, one `section` of it, or its `outline` (JSON).
fn load_skill(engine: &Engine, request: LoadSkillRequest, scope: &Scope) -> CallToolResult {
    let profile = scope.profile.as_deref();
    if request.outline {
        return match engine.outline(&request.name, &Lookup::Disclosed(scope.clone())) {
            Ok(o) => json_result(&OutlineShape::from(&o)),
            Err(e) => error_result(engine, &e),
        };
    }
    let id = match &request.section {
        Some(slug) => format!("{}{SECTION_SEPARATOR}{}", request.name.trim(), slug.trim()),
        None => request.name.clone(),
    };
    match engine.skill_text(&id, profile) {
        Ok(text) => text_result(text),
        Err(e) => error_result(engine, &e),
    }
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

/// Run one tool for the model, under the profile (`None`: the engine's). Arguments are
/// read into the tool's wire request first: a refusal is `-32602` with the wire code in
/// its `data`; a failure of the operation is a tool error result carrying the code.
pub async fn call(
    engine: &Engine,
    profile: Option<&str>,
    name: &str,
    args: JsonObject,
) -> Result<CallToolResult, ErrorData> {
    let profile = profile.map(str::to_owned);
    let scope = Scope::model().with_profile(profile.clone());
    let result = match name {
        "get_skill" => {
            let request: GetSkillRequest = read(&args)?;
            match engine.get_skill(request.path.as_deref(), &scope) {
                Ok(text) => text_result(text),
                Err(e) => error_result(engine, &e),
            }
        }
        "load_skill" => {
            let request = read::<LoadSkillRequest>(&args)?
                .checked()
                .map_err(refused)?;
            load_skill(engine, request, &scope)
        }
        "use_skill" => {
            let request: UseSkillRequest = read(&args)?;
            let arguments = request.arguments.as_deref().map(str::trim);
            match engine
                .invoke_skill(request.name.trim(), arguments, &scope)
                .await
            {
                Ok(done) => json_result(&ExecutedShape {
                    route: &done.route,
                    outcome: done.outcome.as_ref(),
                }),
                Err(e) => error_result(engine, &e),
            }
        }
        "search_skills" => {
            let mut request: SearchRequest = read(&args)?;
            request.profile = profile;
            match beside_executor(engine, || engine.search(&request.query())) {
                Ok(matches) => json_result(&SearchShape::new(&request.query, &matches)),
                Err(e) => error_result(engine, &e),
            }
        }
        "select_skills" => {
            let mut request: SelectRequest = read(&args)?;
            request.profile = profile;
            match beside_executor(engine, || {
                engine.select(&request.message, &request.options())
            }) {
                Ok(selection) => json_result(&selection),
                Err(e) => error_result(engine, &e),
            }
        }
        "route" => {
            let request: RouteRequest = read(&args)?;
            match &request.input {
                Input::Output(output) => capped_json_result(
                    &RoutedOutputShape::from(&engine.route_output(output, &scope)),
                    output.len(),
                ),
                Input::Line(text) => capped_json_result(
                    &skill_runtime::wire::RouteShape::from(&engine.route(text, &scope)),
                    text.len(),
                ),
            }
        }
        "execute" => {
            let request: ExecuteRequest = read(&args)?;
            match &request.input {
                Input::Output(output) => {
                    let results = engine.execute_output(output, &scope).await;
                    json_result(&ResultsShape::new(&results))
                }
                Input::Line(command) => {
                    let done = engine.execute(command, &scope).await;
                    json_result(&ExecutedShape {
                        route: &done.route,
                        outcome: done.outcome.as_ref(),
                    })
                }
            }
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool `{other}`; the tools are get_skill, load_skill, use_skill, search_skills, select_skills, route and execute"
                ),
                None,
            ));
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
    fn arguments_are_read_by_the_wire_contract_with_its_codes() {
        let mut args = JsonObject::new();
        let missing = read::<UseSkillRequest>(&args).unwrap_err();
        assert_eq!(missing.message, "`name` is required");
        assert_eq!(missing.data, Some(json!({ "code": "bad_json" })));
        args.insert("name".into(), json!(3));
        assert_eq!(
            read::<UseSkillRequest>(&args).unwrap_err().message,
            "`name` must be a string, not an integer"
        );
        // The profile is the server's: a tool does not take it.
        let mut search = JsonObject::new();
        search.insert("query".into(), json!("x"));
        search.insert("profile".into(), json!("p"));
        assert!(read::<SearchRequest>(&search).is_err());
        search.remove("profile");
        search.insert("limit".into(), json!(0));
        let zero = read::<SearchRequest>(&search).unwrap_err();
        assert_eq!(zero.data, Some(json!({ "code": "bad_query" })));
        // Every tool's schema is its operation's, without the scope fields.
        for t in definitions() {
            let props = t.input_schema.get("properties").unwrap();
            assert!(props.get("profile").is_none(), "{}", t.name);
            assert!(props.get("caller").is_none(), "{}", t.name);
            assert!(props.get("from").is_none(), "{}", t.name);
        }
    }
}
