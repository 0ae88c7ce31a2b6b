//! The OpenAPI 3.0 document, generated from the same endpoint table that dispatches
//! requests, so the two cannot drift apart.

use serde_json::{Map, Value, json};

use super::routes::{ENDPOINTS, Endpoint, Input, MAX_COUNT, Op};
use skill_runtime::wire::FieldKind;

/// The schema of a path parameter: a task id is a number; a resource path is relative,
/// segments of letters, digits, `_`, `-` and `.` with none hidden (the server refuses
/// hidden, absolute and `..` paths with `400`); a skill name is any text (`404` when no
/// skill has it).
fn path_schema(name: &str) -> Value {
    match name {
        "id" => json!({ "type": "integer", "minimum": 0, "maximum": MAX_COUNT }),
        "path" => json!({
            "type": "string",
            "pattern": r"^[\w-][\w.-]*(/[\w-][\w.-]*)*$",
        }),
        _ => json!({ "type": "string", "minLength": 1 }),
    }
}

/// What `workflow.build` asks of a field beyond its type (names: a letter, then letters,
/// digits and `_`; a description that is not blank); what no schema can say (a reserved
/// name, a cron expression that does not parse) is answered `422`.
fn workflow_constraints(field: &str, schema: &mut Value, domains: &[String]) {
    use skill_runtime::builtin::{MAX_STEPS_BYTES, MAX_WORKFLOW_NAME_CHARS};
    match field {
        "name" => {
            schema["pattern"] = json!("^[a-z][a-z0-9_]*$");
            schema["maxLength"] = json!(MAX_WORKFLOW_NAME_CHARS);
        }
        // Only the configured workflow domains may be written.
        "domain" => schema["enum"] = json!(domains),
        "description" => {
            schema["pattern"] = json!("\\S");
            schema["maxLength"] = json!(skill_runtime::format::MAX_DESCRIPTION_CHARS);
        }
        "steps" => schema["maxLength"] = json!(MAX_STEPS_BYTES),
        // The numeric five-field form; the server also takes names, lists, ranges, steps
        // and `@` macros, which no pattern here spells out.
        "schedule" => {
            schema["pattern"] = json!(
                r"^(\*|[0-5]?[0-9]) (\*|[01]?[0-9]|2[0-3]) (\*|[1-9]|1[0-9]|2[0-8]) (\*|[1-9]|1[0-2]) (\*|[0-7])$"
            );
        }
        _ => {}
    }
}

fn operation(e: &Endpoint, doc: &Document<'_>) -> Value {
    let mut params: Vec<Value> = Vec::new();
    for seg in e.path.split('/') {
        if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            params.push(json!({
                "name": name,
                "in": "path",
                "required": true,
                "schema": path_schema(name),
            }));
        }
    }
    if let Input::Query(input) = e.input {
        for f in input.fields {
            let mut schema = f.value_schema();
            // In a query string an empty text counts as left out, so a required one must
            // not be empty (`?q=` is refused as a missing `q`).
            if f.required && matches!(f.kind, FieldKind::Text) {
                schema["minLength"] = json!(1);
            }
            params.push(json!({
                "name": f.query_name,
                "in": "query",
                "required": f.required,
                "description": f.description,
                "schema": schema,
            }));
        }
    }
    let mut op = Map::new();
    op.insert("summary".into(), json!(e.summary));
    op.insert("operationId".into(), json!(format!("{:?}", e.op)));
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }
    if let Input::Body(input) = e.input {
        let mut schema = input.input_schema(true);
        if e.op == Op::Workflows {
            if let Some(Value::Object(props)) = schema.get_mut("properties") {
                for (name, field) in props.iter_mut() {
                    workflow_constraints(name, field, doc.workflow_domains);
                }
            }
        }
        op.insert(
            "requestBody".into(),
            json!({
                "required": true,
                "content": { "application/json": { "schema": schema } },
            }),
        );
    }
    let content = match e.path {
        "/v1/events" => json!({ "text/event-stream": {} }),
        // Text files as text, anything else as bytes.
        "/v1/skills/{name}/resources/{path}" => json!({
            "text/plain": { "schema": { "type": "string" } },
            "application/octet-stream": { "schema": { "type": "string", "format": "binary" } },
        }),
        "/.well-known/agent-skills/{name}/SKILL.md" => {
            json!({ "text/markdown": { "schema": { "type": "string" } } })
        }
        "/.well-known/agent-skills/{name}/skill.zip" => {
            json!({ "application/zip": { "schema": { "type": "string", "format": "binary" } } })
        }
        _ => json!({ "application/json": {} }),
    };
    let mut responses = Map::new();
    let mut ok = json!({ "description": "OK", "content": content });
    if e.path == "/v1/events" {
        // OpenAPI cannot describe an event stream; name each event's `data` schema.
        ok["x-events"] = json!({
            "change": { "$ref": "#/components/schemas/ChangeEvent" },
            "scheduled": { "$ref": "#/components/schemas/ScheduledEvent" },
            "lagged": { "type": "object", "properties": { "missed": { "type": "integer" } } },
        });
    }
    if e.op == Op::Workflows {
        // A workflow built is created (its outcome, `error` null).
        ok["description"] = json!("Created");
        responses.insert("201".into(), ok);
    } else {
        responses.insert("200".into(), ok);
    }
    responses.insert(
        "default".into(),
        json!({ "description": "An error", "content": { "application/json": {
            "schema": { "$ref": "#/components/schemas/Error" } } } }),
    );
    op.insert("responses".into(), Value::Object(responses));
    if e.action && doc.secured {
        op.insert("security".into(), json!([{ "bearer": [] }]));
    }
    Value::Object(op)
}

/// What the document states of the running configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Document<'a> {
    /// A bearer token is configured, so action endpoints declare bearer security (without
    /// one the server asks for none, and the document says so).
    pub secured: bool,
    /// The domains `workflow.build` may write (the `domain` field's values).
    pub workflow_domains: &'a [String],
}

/// The API's OpenAPI 3.0 document, as the running server has it (see [`Document`]): with
/// a token, action endpoints require it; without one, no operation declares a security
/// requirement, since none is checked.
pub(crate) fn openapi(doc: &Document<'_>) -> Value {
    let mut paths = Map::new();
    for e in ENDPOINTS {
        let entry = paths
            .entry(e.path.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(methods) = entry {
            methods.insert(e.method.as_str().to_lowercase(), operation(e, doc));
        }
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "skills engine",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Catalogs, disclosure, routing, search, selection, schedules and live reload of agent skills. Every GET operation also answers HEAD: the same status and headers, no body.",
        },
        "paths": paths,
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "schemas": {
                "ChangeEvent": change_event(),
                "ScheduledEvent": scheduled_event(),
                "Error": {
                "type": "object",
                "required": ["error"],
                "properties": { "error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {
                        "code": { "type": "string" },
                        "message": { "type": "string" },
                    },
                }},
            }},
        },
    })
}

fn strings() -> Value {
    json!({ "type": "array", "items": { "type": "string" } })
}

/// The `data` of an `event: change` (and the answer of `POST /v1/reload`).
fn change_event() -> Value {
    json!({
        "type": "object",
        "description": "A registry change set.",
        "properties": {
            "previous_generation": { "type": "integer" },
            "generation": { "type": "integer" },
            "added": strings(),
            "changed": strings(),
            "removed": strings(),
            "domains": strings(),
        },
    })
}

/// The `data` of an `event: scheduled`.
fn scheduled_event() -> Value {
    json!({
        "type": "object",
        "description": "A scheduled run that finished, with its outcome. A template or a workflow of instructions comes with `outcome.requires_interpretation: true` and its text in `outcome.output`: the host gives it to its model.",
        "properties": {
            "skill": { "type": "string" },
            "scheduled": { "type": "string", "format": "date-time", "description": "the instant the schedule named (UTC)" },
            "generation": { "type": "integer", "description": "the snapshot generation it fired from" },
            "outcome": {
                "type": "object",
                "description": "what executing it gave (as `/v1/execute` reports an outcome)",
                "properties": {
                    "skill": { "type": "string", "nullable": true },
                    "kind": { "type": "string", "nullable": true, "enum": ["handler", "tool", "script", "template", "fork", "help"] },
                    "ok": { "type": "boolean" },
                    "output": { "description": "text or JSON; null when nothing" },
                    "requires_interpretation": { "type": "boolean" },
                    "task": { "type": "integer", "nullable": true },
                    "error": { "type": "object", "nullable": true, "properties": {
                        "code": { "type": "string" }, "message": { "type": "string" } } },
                    "limit": { "type": "string", "nullable": true },
                    "allowed_tools": { "type": "array", "nullable": true, "items": { "type": "string" } },
                    "duration_ms": { "type": "integer" },
                },
            },
        },
    })
}
