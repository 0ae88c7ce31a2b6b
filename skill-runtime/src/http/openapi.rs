//! The OpenAPI 3.0 document, generated from the same endpoint table that dispatches
//! requests, so the two cannot drift apart.

use serde_json::{Map, Value, json};

use super::routes::{ENDPOINTS, Endpoint};

fn operation(e: &Endpoint) -> Value {
    let mut params: Vec<Value> = Vec::new();
    for seg in e.path.split('/') {
        if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            params.push(json!({
                "name": name,
                "in": "path",
                "required": true,
                "schema": { "type": "string" },
            }));
        }
    }
    for (name, description) in e.query {
        params.push(json!({
            "name": name,
            "in": "query",
            "required": false,
            "description": description,
            "schema": { "type": "string" },
        }));
    }
    let mut op = Map::new();
    op.insert("summary".into(), json!(e.summary));
    op.insert("operationId".into(), json!(format!("{:?}", e.op)));
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }
    if let Some(fields) = e.body {
        let mut props = Map::new();
        for (name, ty, description) in fields {
            props.insert(
                (*name).into(),
                json!({ "type": ty, "description": description }),
            );
        }
        let required: Vec<&str> = fields
            .iter()
            .filter(|(_, _, d)| d.contains("(required)"))
            .map(|(n, _, _)| *n)
            .collect();
        op.insert(
            "requestBody".into(),
            json!({
                "required": true,
                "content": { "application/json": { "schema": {
                    "type": "object", "properties": props, "required": required,
                }}},
            }),
        );
    }
    let content_type = match e.path {
        "/v1/events" => "text/event-stream",
        "/v1/skills/{name}/resources/{path}" => "application/octet-stream",
        "/.well-known/agent-skills/{name}/SKILL.md" => "text/markdown",
        _ => "application/json",
    };
    let mut responses = Map::new();
    let mut ok = json!({ "description": "OK", "content": { content_type: {} } });
    if e.path == "/v1/events" {
        // OpenAPI cannot describe an event stream; name each event's `data` schema.
        ok["x-events"] = json!({
            "change": { "$ref": "#/components/schemas/ChangeEvent" },
            "scheduled": { "$ref": "#/components/schemas/ScheduledEvent" },
            "lagged": { "type": "object", "properties": { "missed": { "type": "integer" } } },
        });
    }
    responses.insert("200".into(), ok);
    responses.insert(
        "default".into(),
        json!({ "description": "An error", "content": { "application/json": {
            "schema": { "$ref": "#/components/schemas/Error" } } } }),
    );
    op.insert("responses".into(), Value::Object(responses));
    if e.action {
        op.insert("security".into(), json!([{ "bearer": [] }]));
    }
    Value::Object(op)
}

/// The API's OpenAPI 3.0 document.
pub fn openapi() -> Value {
    let mut paths = Map::new();
    for e in ENDPOINTS {
        let entry = paths
            .entry(e.path.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(methods) = entry {
            methods.insert(e.method.as_str().to_lowercase(), operation(e));
        }
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "skills engine",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Catalogs, disclosure, routing, search, selection, schedules and live reload of agent skills.",
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
