//! JSON Schemas of the answers a door returns as structured data: what MCP
//! declares as each tool's `outputSchema`, written once here beside the wire, so the doors
//! take them from one place.
//!
//! They use only keywords that mean the same in draft-07 and 2020-12 and name no `$schema`
//! (MCP's default dialect is 2020-12; some clients' validators default to draft-07).
//! Each schema names every field its shape always writes as `required`, with its JSON type
//! (`null` beside it where the shape writes `null`), and leaves further fields allowed: a
//! field added to a shape is no break for a client that validates. A door's error answer
//! (`{"error": {"code", "message"}}`) is one of the alternatives of every tool's schema,
//! since MCP carries it as the same structured content. skill-mcp's tests validate every
//! tool's real answers against these with an independent validator, so a shape that moves
//! away from its schema fails there.

use serde_json::{Value, json};

/// `{"type": "object", "required": [...], "properties": {...}}`.
fn object(required: &[&str], properties: Value) -> Value {
    json!({ "type": "object", "required": required, "properties": properties })
}

fn string() -> Value {
    json!({ "type": "string" })
}

fn string_or_null() -> Value {
    json!({ "type": ["string", "null"] })
}

fn integer() -> Value {
    json!({ "type": "integer", "minimum": 0 })
}

fn strings() -> Value {
    json!({ "type": "array", "items": { "type": "string" } })
}

/// `{"error": {"code", "message"}}`, every door's error answer.
pub fn error_schema() -> Value {
    object(
        &["error"],
        json!({ "error": object(&["code", "message"], json!({
            "code": string(), "message": string(),
        })) }),
    )
}

/// An [`OutcomeShape`](crate::wire::OutcomeShape) (`output` is any JSON: a script's
/// standard output, a template's text, a handler's value).
fn outcome_schema() -> Value {
    object(
        &[
            "skill",
            "kind",
            "ok",
            "requires_interpretation",
            "task",
            "error",
            "limit",
            "allowed_tools",
            "duration_ms",
        ],
        json!({
            "skill": string_or_null(),
            "kind": string_or_null(),
            "ok": { "type": "boolean" },
            "output": {},
            "requires_interpretation": { "type": "boolean" },
            "task": { "type": ["integer", "null"], "minimum": 0 },
            "error": { "anyOf": [
                { "type": "null" },
                object(&["code", "message"], json!({ "code": string(), "message": string() })),
            ] },
            "limit": string_or_null(),
            "allowed_tools": { "type": ["array", "null"], "items": { "type": "string" } },
            "duration_ms": integer(),
        }),
    )
}

/// One variant of a [`RouteShape`](crate::wire::RouteShape): its `route` tag and fields.
fn route_variant(tag: &str, required: &[&str], properties: Value) -> Value {
    let mut fields = vec!["route"];
    fields.extend_from_slice(required);
    let mut properties = properties;
    if let Value::Object(map) = &mut properties {
        map.insert("route".into(), json!({ "const": tag }));
    }
    object(&fields, properties)
}

/// A [`RouteShape`](crate::wire::RouteShape): tagged by `route`, one schema per variant.
fn route_schema() -> Value {
    json!({ "type": "object", "required": ["route"], "oneOf": [
        route_variant("help", &["topic", "text"], json!({
            "topic": string_or_null(), "text": string(),
        })),
        route_variant("invoke", &["skill", "flags", "positionals", "raw", "access", "handler", "layer"], json!({
            "skill": string(),
            "flags": { "type": "object", "additionalProperties": { "anyOf": [
                { "type": "boolean" }, string(), strings(),
            ] } },
            "positionals": strings(),
            "raw": string(),
            "access": string(),
            "handler": string_or_null(),
            "layer": string(),
        })),
        route_variant("slash", &["skill", "via", "args", "arguments", "delivery", "tool", "content"], json!({
            "skill": string(),
            "via": string(),
            "args": string(),
            "arguments": strings(),
            "delivery": string(),
            "tool": string_or_null(),
            "content": string_or_null(),
        })),
        route_variant("skill_list", &["skills", "text"], json!({
            "skills": { "type": "array", "items": object(
                &["name", "description", "command", "argument_hint"],
                json!({
                    "name": string(),
                    "description": string(),
                    "command": string_or_null(),
                    "argument_hint": string_or_null(),
                }),
            ) },
            "text": string(),
        })),
        route_variant("builtin", &["command", "args"], json!({
            "command": string(), "args": string(),
        })),
        route_variant("message", &["text", "note", "suggestions"], json!({
            "text": string(), "note": string_or_null(), "suggestions": strings(),
        })),
        route_variant("error", &["code", "message", "suggestions"], json!({
            "code": string(),
            "message": string(),
            "suggestions": strings(),
            "column": integer(),
        })),
    ] })
}

/// A [`RoutedOutputShape`](crate::wire::RoutedOutputShape): the segments of a model
/// output and each command's route (flattened beside `command` and `line`).
fn routed_output_schema() -> Value {
    let segment = object(
        &["kind", "line"],
        json!({
            "kind": { "enum": ["text", "command", "unterminated"] },
            "text": string(),
            "line": integer(),
            "block": integer(),
        }),
    );
    let mut command = route_schema();
    if let Value::Object(map) = &mut command {
        map.insert("required".into(), json!(["command", "line", "route"]));
        map.insert(
            "properties".into(),
            json!({ "command": string(), "line": integer() }),
        );
    }
    object(
        &["extraction", "routes"],
        json!({
            "extraction": object(&["segments"], json!({
                "segments": { "type": "array", "items": segment },
            })),
            "routes": { "type": "array", "items": command },
            "not_routed": integer(),
        }),
    )
}

/// An [`ExecutedShape`](crate::wire::ExecutedShape): a command's route and its outcome.
fn executed_schema() -> Value {
    object(
        &["route", "outcome"],
        json!({
            "route": route_schema(),
            "outcome": { "anyOf": [{ "type": "null" }, outcome_schema()] },
        }),
    )
}

/// A [`ResultsShape`](crate::wire::ResultsShape): each command of an output with its outcome.
fn results_schema() -> Value {
    object(
        &["results"],
        json!({ "results": { "type": "array", "items": object(
            &["command", "line", "outcome"],
            json!({ "command": string(), "line": integer(), "outcome": outcome_schema() }),
        ) } }),
    )
}

/// A [`SearchShape`](crate::wire::SearchShape).
fn search_schema() -> Value {
    let number = json!({ "type": "number" });
    let hit = object(
        &[
            "name",
            "layer",
            "confidence",
            "explicit",
            "phrase",
            "triggers",
            "matched_terms",
            "body_terms",
            "text_score",
            "semantic",
            "reason",
            "description",
        ],
        json!({
            "name": string(),
            "layer": string(),
            "confidence": number,
            "explicit": { "type": "boolean" },
            "phrase": string_or_null(),
            "triggers": { "type": "array", "items": object(&["kind", "trigger"], json!({
                "kind": string(), "trigger": string(),
            })) },
            "matched_terms": strings(),
            "body_terms": strings(),
            "text_score": number,
            "semantic": number,
            "reason": string(),
            "description": string(),
            "last_used": integer(),
        }),
    );
    object(
        &["query", "threshold", "matches"],
        json!({
            "query": string(),
            "threshold": number,
            "matches": { "type": "array", "items": hit },
        }),
    )
}

/// The selection JSON (`skill_search::Selection`, agent-skills-integration 2.3 plus the
/// disclosure tier).
fn selection_schema() -> Value {
    object(
        &["selected_skills", "no_skill_needed", "disclosure"],
        json!({
            "selected_skills": { "type": "array", "items": object(
                &["skill_id", "confidence", "reason"],
                json!({
                    "skill_id": string(),
                    "confidence": { "type": "number", "minimum": 0, "maximum": 1 },
                    "reason": string(),
                    "alternatives": strings(),
                }),
            ) },
            "no_skill_needed": { "type": "boolean" },
            "disclosure": object(
                &["tier", "text", "estimated_tokens", "budget_tokens", "included", "omitted"],
                json!({
                    "tier": { "type": "integer", "minimum": 0, "maximum": 3 },
                    "text": string(),
                    "estimated_tokens": integer(),
                    "budget_tokens": integer(),
                    "included": strings(),
                    "omitted": strings(),
                }),
            ),
        }),
    )
}

/// The answer of one of the doors' structured operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `use_skill`: an [`ExecutedShape`](crate::wire::ExecutedShape).
    UseSkill,
    /// `search`: a [`SearchShape`](crate::wire::SearchShape).
    Search,
    /// `select`: the selection JSON.
    Select,
    /// `route`: a [`RouteShape`](crate::wire::RouteShape) for a line, a
    /// [`RoutedOutputShape`](crate::wire::RoutedOutputShape) for a model output.
    Route,
    /// `execute`: an [`ExecutedShape`](crate::wire::ExecutedShape) for a line, a
    /// [`ResultsShape`](crate::wire::ResultsShape) for a model output.
    Execute,
}

impl Answer {
    /// The schema of the answer, or of the error answer the door may give instead: an
    /// object schema (MCP requires `type: object` at the root of an `outputSchema`).
    pub fn output_schema(self) -> Value {
        let answers = match self {
            Answer::UseSkill => vec![executed_schema()],
            Answer::Search => vec![search_schema()],
            Answer::Select => vec![selection_schema()],
            Answer::Route => vec![route_schema(), routed_output_schema()],
            Answer::Execute => vec![executed_schema(), results_schema()],
        };
        let mut any = answers;
        any.push(error_schema());
        json!({
            "type": "object",
            "anyOf": any,
        })
    }
}
