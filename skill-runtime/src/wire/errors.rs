//! The one table of error codes, with the HTTP status of each.

/// One error code: its name, the HTTP status it answers with, and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode {
    /// The snake_case code.
    pub code: &'static str,
    /// The HTTP status.
    pub status: u16,
    /// What it means, in a few words.
    pub meaning: &'static str,
}

const fn code(code: &'static str, status: u16, meaning: &'static str) -> ErrorCode {
    ErrorCode {
        code,
        status,
        meaning,
    }
}

/// Every error code a front door reports, sorted by code. Execution failures (an
/// outcome's `error.code`, HTTP status 200 with `ok: false`) are listed with the status of
/// the request that carries them.
pub const ERROR_CODES: &[ErrorCode] = &[
    code(
        "ambiguous_command",
        200,
        "a lily command several skills declare",
    ),
    code(
        "answer_too_large",
        422,
        "the answer would be more than the request allows (see `wire::answer_cap`)",
    ),
    code("bad_body", 400, "the request body could not be read"),
    code(
        "bad_config",
        500,
        "the engine's configuration contradicts itself (nothing started)",
    ),
    code(
        "bad_host",
        400,
        "two Host headers, or none on HTTP/1.1 (RFC 9112)",
    ),
    code(
        "bad_json",
        400,
        "the body is not the JSON the endpoint expects",
    ),
    code("bad_query", 400, "a query parameter is malformed"),
    code(
        "bad_resource_path",
        400,
        "a resource path outside the skill folder",
    ),
    code("bad_task_id", 400, "a task id that is not a number"),
    code("bind_failed", 500, "the listen address could not be bound"),
    code("body_too_large", 413, "the request body is over the limit"),
    code(
        "builtin_command",
        200,
        "a built-in slash command for the host",
    ),
    code("cancelled", 200, "a forked task was cancelled"),
    code(
        "conflict",
        200,
        "workflow.build: a workflow of that name exists",
    ),
    code("empty", 200, "an empty command line"),
    code("empty_domain", 404, "a domain with no loaded skill"),
    code(
        "forbidden_host",
        403,
        "a Host header that does not name this server (DNS rebinding)",
    ),
    code(
        "forbidden_origin",
        403,
        "/mcp: an Origin header naming a site this server does not serve (DNS rebinding)",
    ),
    code(
        "get_skill_arguments",
        200,
        "get_skill with more than one path",
    ),
    code("handler_failed", 200, "a handler failed"),
    code(
        "handler_not_registered",
        200,
        "a declared handler nobody registered",
    ),
    code("index_failed", 500, "the search index could not be built"),
    code("internal", 500, "a failure inside the engine"),
    code(
        "invalid_flags",
        200,
        "flags that fail the skill's `## Flags` schema",
    ),
    code("invalid_name", 200, "workflow.build: a malformed name"),
    code(
        "invalid_schedule",
        200,
        "workflow.build: a cron expression that does not parse",
    ),
    code("invalid_type", 200, "a flag value of the wrong type"),
    code(
        "invalid_value",
        200,
        "a built-in handler's flag without a usable value",
    ),
    code(
        "invalid_values",
        200,
        "flag values outside the allowed ones",
    ),
    code(
        "invalid_workflow",
        200,
        "workflow.build: the written file would not load",
    ),
    code("limit_exceeded", 200, "a script limit was hit"),
    code(
        "lock_mismatch",
        409,
        "with require_lock, a file whose bytes changed after the load (not served or run); in an outcome, 200 with ok: false",
    ),
    code("lookup", 200, "a lookup that failed otherwise"),
    code(
        "method_not_allowed",
        405,
        "the path is served with other methods",
    ),
    code("missing_flags", 200, "required flags missing"),
    code("missing_skill_name", 200, "`/skill` without a name"),
    code(
        "model_invocation_disabled",
        200,
        "a skill the model may not invoke",
    ),
    code(
        "no_command_tool",
        200,
        "tool_dispatch without a command_tool",
    ),
    code("no_notes", 404, "no notes folder is configured"),
    code(
        "no_writable_source",
        200,
        "workflow.build: no writable source",
    ),
    code(
        "not_a_command",
        200,
        "a user line that is not a slash command",
    ),
    code(
        "not_a_workflow_domain",
        200,
        "workflow.build: a domain that is not a workflow domain",
    ),
    code(
        "not_available",
        403,
        "a skill not available to this caller or profile",
    ),
    code("not_for_profile", 200, "a skill the profile excludes"),
    code("not_found", 404, "no endpoint at that path"),
    code(
        "not_loaded",
        200,
        "workflow.build: the new workflow did not load",
    ),
    code("not_user_invocable", 200, "a skill users may not invoke"),
    code("nul", 200, "a NUL byte in a command line"),
    code(
        "output_limit",
        200,
        "a model output's commands after their outputs reached the byte budget (not executed)",
    ),
    code("overloaded", 503, "too many requests or event streams"),
    code("pipe", 200, "a shell pipe in a command line"),
    code(
        "remote_source",
        502,
        "a remote source that could not be fetched or did not verify",
    ),
    code(
        "reserved_name",
        200,
        "workflow.build: a reserved action name",
    ),
    code("resource_too_large", 413, "a resource over the size cap"),
    code("scheduler_failed", 500, "the scheduler could not start"),
    code("script_failed", 200, "a script exited unsuccessfully"),
    code(
        "script_path",
        200,
        "a script entry outside the skill's scripts folder",
    ),
    code("script_spawn", 200, "a script could not be started"),
    code(
        "script_untrusted",
        200,
        "a low-trust skill's script, refused by the trust policy",
    ),
    code("search_failed", 500, "a search or selection failed"),
    code("shutting_down", 200, "the engine is shutting down"),
    code(
        "single_skill",
        200,
        "a second skill in one output under lily's single-skill rule",
    ),
    code(
        "skill_excluded",
        403,
        "a skill the trust policy excluded (the message says why); in an outcome, 200 with ok: false",
    ),
    code(
        "skill_ineligible",
        200,
        "a skill not eligible on this machine",
    ),
    code("skill_invalid", 200, "a skill file that did not parse"),
    code("slash_from_model", 200, "a slash command in model output"),
    code(
        "store_failed",
        503,
        "the database shared by replicas did not answer",
    ),
    code(
        "task_lost",
        200,
        "a forked task's replica stopped answering before it ended",
    ),
    code(
        "timeout",
        504,
        "the request took longer than its time limit",
    ),
    code("too_long", 200, "a command line over the length limit"),
    code(
        "too_many_commands",
        200,
        "a model output's commands past the most one execution runs (not executed)",
    ),
    code(
        "too_many_tasks",
        200,
        "too many forked tasks queued or running",
    ),
    code("too_many_tokens", 200, "a command line with too many words"),
    code("tool_failed", 200, "a tool failed"),
    code("tool_not_allowed", 200, "a tool the profile does not allow"),
    code(
        "tool_not_registered",
        200,
        "a tool_dispatch tool nobody registered",
    ),
    code(
        "unauthorized",
        401,
        "an action without the server's bearer token",
    ),
    code("unknown_domain", 404, "no such domain"),
    code("unknown_resource", 404, "no such resource"),
    code(
        "unknown_section",
        404,
        "a skill has no section of that slug",
    ),
    code("unknown_skill", 404, "no such skill"),
    code("unknown_task", 404, "no such forked task"),
    code(
        "unsafe_path",
        200,
        "workflow.build: a path outside the source",
    ),
    code(
        "unsupported_media_type",
        415,
        "a body that is not application/json",
    ),
    code("unterminated_quote", 200, "a quote that is never closed"),
    code("watch_failed", 500, "the sources could not be watched"),
    code(
        "write_failed",
        200,
        "workflow.build: the file could not be written",
    ),
];

/// The HTTP status of a code (500 for a code not in [`ERROR_CODES`]).
pub fn status_of(code: &str) -> u16 {
    ERROR_CODES
        .binary_search_by(|c| c.code.cmp(code))
        .map(|i| ERROR_CODES[i].status)
        .unwrap_or(500)
}

pub use crate::exec::wire::snake_case;

/// `{"error": {"code", "message"}}` as a JSON value.
pub fn error_body(code: &str, message: &str) -> serde_json::Value {
    serde_json::json!({ "error": { "code": code, "message": message } })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_sorted_unique_and_snake_case() {
        for pair in ERROR_CODES.windows(2) {
            assert!(
                pair[0].code < pair[1].code,
                "{} then {}",
                pair[0].code,
                pair[1].code
            );
        }
        for c in ERROR_CODES {
            assert!(
                c.code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{}",
                c.code
            );
            assert!((200..600).contains(&c.status), "{}", c.code);
        }
    }

    #[test]
    fn statuses_come_from_the_table() {
        assert_eq!(status_of("unknown_skill"), 404);
        assert_eq!(status_of("unauthorized"), 401);
        assert_eq!(status_of("no such code"), 500);
        assert_eq!(
            snake_case("model-invocation-disabled"),
            "model_invocation_disabled"
        );
    }

    #[test]
    fn lookups_of_unknown_skills_are_404_whatever_the_registry_error() {
        for e in [
            skill_registry::Error::UnknownSkill {
                name: "x".into(),
                suggestions: Vec::new(),
            },
            skill_registry::Error::SkillNotFound {
                name: "x".into(),
                available: Vec::new(),
                more: 0,
                suggestions: Vec::new(),
            },
        ] {
            let e = crate::error::Error::disclosure(e);
            assert_eq!(e.code(), "unknown_skill");
            assert_eq!(status_of(e.code()), 404);
        }
    }

    #[test]
    fn every_code_of_this_crate_is_in_the_wire_table() {
        // Read the codes out of `Error::code` itself, so a new variant cannot be forgotten.
        let source = include_str!("../error.rs");
        let start = source.find("pub fn code(&self)").unwrap();
        let body = &source[start..];
        let body = &body[..body.find("\n    }\n").unwrap()];
        let codes: Vec<&str> = body
            .split("=> \"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        assert!(codes.len() > 10, "{codes:?}");
        for code in codes {
            assert!(ERROR_CODES.iter().any(|c| c.code == code), "{code}");
        }
    }
}
