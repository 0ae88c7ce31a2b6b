//! What an execution returns: [`Outcome`], and what a handler or tool receives: [`Call`].

use std::sync::Arc;

use skill_registry::{Caller, Skill, Snapshot};
use skill_router::Invocation;

use crate::error::{ErrorInfo, Limit};

/// The error type handler and tool services return (any error, boxed).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// How an invocation was executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A handler registered by name (host code or a built-in).
    Handler,
    /// Lily `tool_dispatch`: the skill's `command_tool` called directly.
    Tool,
    /// A script from the skill's `scripts:` list, run as a child process.
    Script,
    /// No handler: the body, after `$ARGUMENTS` substitution, for the model to interpret.
    Template,
    /// `context: fork`: started as a background task (see the task id).
    Fork,
    /// Help text (`get_skill` tiers, `--help`, `/skills`): nothing was executed.
    Help,
}

impl Kind {
    /// Every kind, in declaration order.
    pub const ALL: [Kind; 6] = [
        Kind::Handler,
        Kind::Tool,
        Kind::Script,
        Kind::Template,
        Kind::Fork,
        Kind::Help,
    ];

    /// Its stable snake_case name (`handler`, `tool`, `script`, `template`, `fork`, `help`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Handler => "handler",
            Kind::Tool => "tool",
            Kind::Script => "script",
            Kind::Template => "template",
            Kind::Fork => "fork",
            Kind::Help => "help",
        }
    }
}

/// The result of executing one invocation. Serialises to the JSON the HTTP layer returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The skill, when the command named one.
    pub skill: Option<String>,
    /// How it was executed (`None`: it never reached execution, see `error`).
    pub kind: Option<Kind>,
    /// Whether it succeeded. A forked task reports `true` once it is started; its own
    /// result is in the task.
    pub ok: bool,
    /// What it produced: text (a JSON string) or a JSON value; `null` when nothing.
    pub output: serde_json::Value,
    /// True when `output` is instructions for the model to carry out (templates).
    pub requires_interpretation: bool,
    /// The background task's id for `context: fork`.
    pub task: Option<u64>,
    /// Why it failed.
    pub error: Option<ErrorInfo>,
    /// The script limit that stopped it, if one did.
    pub limit: Option<Limit>,
    /// The tools the skill may use: its `allowed-tools` intersected with the profile's
    /// tools (`None`: no restriction is known).
    pub allowed_tools: Option<Vec<String>>,
    /// Wall-clock time taken, in milliseconds.
    pub duration_ms: u64,
}

impl Outcome {
    pub(crate) fn failure(
        skill: Option<&str>,
        kind: Option<Kind>,
        error: &crate::error::Error,
    ) -> Self {
        Outcome {
            skill: skill.map(str::to_owned),
            kind,
            ok: false,
            output: serde_json::Value::Null,
            requires_interpretation: false,
            task: None,
            error: Some(error.info()),
            limit: error.limit(),
            allowed_tools: None,
            duration_ms: 0,
        }
    }

    pub(crate) fn success(skill: &str, kind: Kind, output: serde_json::Value) -> Self {
        Outcome {
            skill: Some(skill.to_owned()),
            kind: Some(kind),
            ok: true,
            output,
            requires_interpretation: false,
            task: None,
            error: None,
            limit: None,
            allowed_tools: None,
            duration_ms: 0,
        }
    }

    /// The error code, when it failed.
    pub fn code(&self) -> Option<&str> {
        self.error.as_ref().map(|e| e.code.as_str())
    }
}

/// The result of one command of a model output ([`Runtime::execute_output`]).
///
/// [`Runtime::execute_output`]: crate::exec::Runtime::execute_output
#[derive(Debug, Clone, PartialEq)]
pub struct CommandOutcome {
    /// The command line as extracted.
    pub command: String,
    /// Its 1-based line in the output.
    pub line: u32,
    /// What executing it gave.
    pub outcome: Outcome,
}

/// What a handler or tool service returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Plain text.
    Text(String),
    /// A JSON value.
    Json(serde_json::Value),
}

impl Output {
    pub(crate) fn into_value(self) -> serde_json::Value {
        match self {
            Output::Text(t) => serde_json::Value::String(t),
            Output::Json(v) => v,
        }
    }
}

/// An error a handler or tool returns to choose its own code. Any other error becomes
/// `handler_failed` / `tool_failed` with the error's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HandlerError {
    /// A snake_case code.
    pub code: String,
    /// What went wrong.
    pub message: String,
}

impl HandlerError {
    /// An error with this code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        HandlerError {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// Everything a handler or tool service is called with.
#[derive(Debug, Clone)]
pub struct Call {
    /// The skill as the snapshot holds it.
    pub skill: Arc<Skill>,
    /// The routed command (flags, positionals, raw text, access).
    pub invocation: Invocation,
    /// The argument text after the skill name, as written (what `$ARGUMENTS` is).
    pub arguments: String,
    /// Who invoked it.
    pub caller: Caller,
    /// The profile it runs under.
    pub profile: Option<String>,
    /// The skill's `allowed-tools` intersected with the profile's tools (`None`: no
    /// restriction is known).
    pub allowed_tools: Option<Vec<String>>,
    /// The snapshot it was resolved against.
    pub snapshot: Arc<Snapshot>,
    /// Whether the scheduler started it (its `schedule` fired).
    pub scheduled: bool,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn limit_names_are_snake_case() {
        let names: Vec<&str> = [
            Limit::Timeout,
            Limit::Output,
            Limit::Arguments,
            Limit::ArgumentBytes,
            Limit::Processes,
        ]
        .into_iter()
        .map(Limit::as_str)
        .collect();
        assert_eq!(
            names,
            [
                "timeout",
                "output",
                "arguments",
                "argument_bytes",
                "processes"
            ]
        );
    }
}
