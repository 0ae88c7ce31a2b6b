//! The crate's error type: every way starting the engine or an execution can fail, each
//! with a stable code.

use std::path::PathBuf;
use std::sync::Arc;

/// The error under one of ours, kept as its source (shared: [`Error`] is `Clone`).
type Source = Arc<dyn std::error::Error + Send + Sync>;

/// A source made of a message alone (what failed has no error value of its own).
pub(crate) fn message(text: impl Into<String>) -> Source {
    Arc::from(Box::<dyn std::error::Error + Send + Sync>::from(
        text.into(),
    ))
}

/// Why starting the engine or an execution failed. An execution's
/// [`Outcome`](crate::exec::Outcome) carries it as `{code, message}`.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The command could not be routed, or its skill is unknown or not available to this
    /// caller and profile (unknown skill, bad quoting, slash from the model...).
    #[error("{message}")]
    Route {
        /// The router's code (`unknown_skill`, `not_available`, ...).
        code: String,
        /// The router's message.
        message: String,
    },
    /// The skill is unknown.
    #[error("{0}")]
    UnknownSkill(String),
    /// The skill declares a `handler` that the host has not registered.
    #[error(
        "skill `{skill}` declares handler `{handler}`, but no handler of that name (or of the skill's name) is registered"
    )]
    HandlerNotRegistered {
        /// The skill.
        skill: String,
        /// The declared handler.
        handler: String,
    },
    /// A handler failed.
    #[error("{message}")]
    Handler {
        /// The handler's code (`handler_failed` unless it chose one).
        code: String,
        /// Its message.
        message: String,
    },
    /// Lily `tool_dispatch` names a tool that is not registered.
    #[error("skill `{skill}` dispatches to tool `{tool}`, which is not registered")]
    ToolNotRegistered {
        /// The skill.
        skill: String,
        /// The tool.
        tool: String,
    },
    /// The skill's `command_tool` is not among the tools the profile allows.
    #[error("tool `{tool}` is not allowed for skill `{skill}` under this profile")]
    ToolNotAllowed {
        /// The skill.
        skill: String,
        /// The tool.
        tool: String,
    },
    /// A `tool_dispatch` skill without a `command_tool`.
    #[error("skill `{0}` is tool_dispatch but has no command_tool")]
    NoCommandTool(String),
    /// A script entry that is not a safe path inside the skill folder.
    #[error("script `{script}` of skill `{skill}` is not allowed: {reason}")]
    ScriptPath {
        /// The skill.
        skill: String,
        /// The entry as listed.
        script: String,
        /// Why.
        reason: String,
    },
    /// The skill comes from a low-trust source and the trust policy does not let its
    /// scripts run.
    #[error(
        "the scripts of skill `{skill}` do not run: it comes from the low-trust layer `{layer}`; move it to a trusted source after review, or set allow_low_trust_scripts"
    )]
    ScriptUntrusted {
        /// The skill.
        skill: String,
        /// Its layer.
        layer: String,
    },
    /// The script could not be started.
    #[error("cannot start script {}: {message}", path.display())]
    Spawn {
        /// The script.
        path: PathBuf,
        /// The operating system's error.
        message: String,
    },
    /// The script exited unsuccessfully.
    #[error("script {} {status}", path.display())]
    ScriptFailed {
        /// The script.
        path: PathBuf,
        /// `exited with status 3`, `was killed by signal 9`.
        status: String,
    },
    /// A script limit was hit.
    #[error("{message}")]
    Limit {
        /// Which limit.
        limit: Limit,
        /// What happened, with the limit's value.
        message: String,
    },
    /// The engine's configuration contradicts itself (a trust policy with
    /// `require_signature` and no `require_lock`): nothing was started.
    #[error("configuration: {0}")]
    Config(String),
    /// The runtime is shutting down and starts nothing new; running work was stopped.
    #[error("the runtime is shutting down")]
    ShuttingDown,
    /// Too many forked tasks are queued or running.
    #[error(
        "{pending} forked tasks are already queued or running (limit {limit}); try again later"
    )]
    TooManyTasks {
        /// Queued or running now.
        pending: usize,
        /// The limit.
        limit: usize,
    },
    /// A model output has more commands than one execution runs
    /// ([`MAX_OUTPUT_COMMANDS`](crate::exec::MAX_OUTPUT_COMMANDS)): the first ones ran,
    /// the rest did not.
    #[error(
        "this output has {total} commands and at most {limit} are executed per output: the first {limit} ran, the {skipped} from this one (line {line}) on were not executed; send them in another request"
    )]
    TooManyCommands {
        /// Commands in the output.
        total: usize,
        /// The limit.
        limit: usize,
        /// Commands not executed.
        skipped: usize,
        /// The line of the first command not executed.
        line: u32,
    },
    /// The outputs of a model output's commands reached the byte budget of one execution
    /// ([`MAX_EXECUTION_OUTPUT_BYTES`](crate::exec::MAX_EXECUTION_OUTPUT_BYTES)): the
    /// commands after that were not executed.
    #[error(
        "the outputs of this output's commands reached {limit} bytes, the most one execution returns: the {skipped} commands from this one (line {line}) on were not executed; send them in another request"
    )]
    OutputLimit {
        /// The budget in bytes.
        limit: usize,
        /// Commands not executed.
        skipped: usize,
        /// The line of the first command not executed.
        line: u32,
    },
    /// A forked task was cancelled.
    #[error("the task was cancelled")]
    Cancelled,
    /// A built-in slash command (`/help`, `/exit`, ...) the host handles itself.
    #[error("/{0} is a built-in command for the host to handle")]
    BuiltinCommand(String),
    /// A user line that is not a slash command.
    #[error("{0}")]
    NotACommand(String),
    /// The sources could not be watched for changes.
    #[error("cannot watch the skill sources: {0}")]
    Watch(#[source] Source),
    /// The search or notes index could not be built.
    #[error("search index: {0}")]
    Index(#[source] Source),
    /// The scheduler could not start.
    #[error("scheduler: {0}")]
    Scheduler(#[source] Source),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {message}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// What the system said.
        message: String,
    },
    /// A disclosure lookup failed: an unknown skill, domain or resource, a skill not
    /// available to this caller or profile, a resource path outside the skill or too large.
    #[error("{message}")]
    Disclosure {
        /// The code (`unknown_skill`, `unknown_domain`,
        /// `not_available`, `unknown_section`, `bad_resource_path`, `unknown_resource`,
        /// `resource_too_large`).
        code: &'static str,
        /// What went wrong, with the closest names where there are some.
        message: String,
    },
    /// A skill file's frontmatter has no data form ([`Engine::skill_frontmatter`](crate::Engine::skill_frontmatter)).
    #[error("{0}")]
    Frontmatter(#[source] skill_format::Error),
    /// A search or selection failed.
    #[error("search: {0}")]
    Search(#[source] Source),
    /// No notes folder is configured.
    #[error("no notes folder is configured on this engine")]
    NoNotes,
    /// No forked task has this id (finished tasks are kept for a while, then dropped).
    #[error("no task {0} (finished tasks are kept for a while, then dropped)")]
    UnknownTask(u64),
    /// A failure inside the runtime (a task that ended without an answer).
    #[error("{0}")]
    Internal(String),
    /// The database shared by replicas could not be read or written.
    #[error("the shared database: {0}")]
    Store(#[source] Source),
    /// A forked task's replica stopped answering before the task ended.
    #[error("{0}")]
    TaskLost(String),
    /// A remote source could not be fetched, or what it served did not verify.
    #[error("{0}")]
    Remote(String),
}

impl Error {
    /// The stable snake_case code.
    pub fn code(&self) -> &str {
        match self {
            Error::Route { code, .. } | Error::Handler { code, .. } => code,
            Error::UnknownSkill(_) => "unknown_skill",
            Error::HandlerNotRegistered { .. } => "handler_not_registered",
            Error::ToolNotRegistered { .. } => "tool_not_registered",
            Error::ToolNotAllowed { .. } => "tool_not_allowed",
            Error::NoCommandTool(_) => "no_command_tool",
            Error::ScriptPath { .. } => "script_path",
            Error::ScriptUntrusted { .. } => "script_untrusted",
            Error::Spawn { .. } => "script_spawn",
            Error::ScriptFailed { .. } => "script_failed",
            Error::Limit { .. } => "limit_exceeded",
            Error::ShuttingDown => "shutting_down",
            Error::Config(_) => "bad_config",
            Error::TooManyTasks { .. } => "too_many_tasks",
            Error::TooManyCommands { .. } => "too_many_commands",
            Error::OutputLimit { .. } => "output_limit",
            Error::Cancelled => "cancelled",
            Error::BuiltinCommand(_) => "builtin_command",
            Error::NotACommand(_) => "not_a_command",
            Error::Watch(_) => "watch_failed",
            Error::Index(_) => "index_failed",
            Error::Scheduler(_) => "scheduler_failed",
            Error::Bind { .. } => "bind_failed",
            Error::Disclosure { code, .. } => code,
            Error::Search(_) => "search_failed",
            Error::NoNotes => "no_notes",
            Error::UnknownTask(_) => "unknown_task",
            Error::Internal(_) | Error::Frontmatter(_) => "internal",
            Error::Store(_) => "store_failed",
            Error::TaskLost(_) => "task_lost",
            Error::Remote(_) => "remote_source",
        }
    }

    /// The script limit, for [`Error::Limit`].
    pub fn limit(&self) -> Option<Limit> {
        match self {
            Error::Limit { limit, .. } => Some(*limit),
            _ => None,
        }
    }

    /// `{code, message}` for an [`Outcome`](crate::exec::Outcome).
    pub fn info(&self) -> ErrorInfo {
        ErrorInfo {
            code: self.code().to_owned(),
            message: self.to_string(),
        }
    }

    /// A disclosure failure from the registry, with its code.
    pub(crate) fn disclosure(e: skill_registry::Error) -> Self {
        use skill_registry::Error as R;
        let code = match &e {
            R::UnknownSkill { .. } | R::UnknownSkills { .. } | R::SkillNotFound { .. } => {
                "unknown_skill"
            }
            R::UnknownDomain { .. } | R::EmptyDomain { .. } => "unknown_domain",
            R::NotAvailable { .. } => "not_available",
            R::Excluded { .. } => "skill_excluded",
            R::UnknownSection { .. } => "unknown_section",
            R::ResourcePath { .. } => "bad_resource_path",
            R::ResourceNotFound { .. } | R::NotServed { .. } => "unknown_resource",
            R::LockMismatch { .. } => "lock_mismatch",
            R::ResourceTooLarge { .. } => "resource_too_large",
            _ => "internal",
        };
        Error::Disclosure {
            code,
            message: e.to_string(),
        }
    }

    /// A router error, with its code in this crate's convention.
    pub(crate) fn route(e: &skill_router::Error) -> Self {
        Error::Route {
            code: e.code().replace('-', "_"),
            message: e.to_string(),
        }
    }

    /// A lookup failure, with the router's code for it (`unknown_skill`,
    /// `model_invocation_disabled`, `not_user_invocable`, `not_for_profile`, ...) so a
    /// direct execution and a routed one report the same code.
    pub(crate) fn from_registry(e: skill_registry::Error) -> Self {
        Error::route(&skill_router::Error::Lookup(e))
    }
}

/// Which script limit stopped a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// It ran longer than the timeout and was killed.
    Timeout,
    /// It wrote more than the output limit (stdout and stderr together) and was killed.
    Output,
    /// It was given more arguments than allowed; it was not started.
    Arguments,
    /// Its arguments were longer than allowed in bytes; it was not started.
    ArgumentBytes,
    /// It had more processes at once in its process group than allowed (a fork bomb) and
    /// the whole group was killed.
    Processes,
}

impl Limit {
    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Timeout => "timeout",
            Limit::Output => "output",
            Limit::Arguments => "arguments",
            Limit::ArgumentBytes => "argument_bytes",
            Limit::Processes => "processes",
        }
    }
}

/// A machine-readable code and a message a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    /// A stable snake_case code (`unknown_skill`, `limit_exceeded`, `conflict`, ...).
    pub code: String,
    /// What went wrong and what to do about it.
    pub message: String,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// A failure under ours stays reachable as the source, and the message still names it.
    #[test]
    fn a_failure_below_is_kept_as_the_source() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no index folder");
        let e = Error::Index(Arc::new(io));
        assert_eq!(e.to_string(), "search index: no index folder");
        let source = e.source().unwrap();
        assert_eq!(source.to_string(), "no index folder");
        assert_eq!(e.code(), "index_failed");
        let m = Error::Store(message("cannot record the forked task"));
        assert_eq!(
            m.source().unwrap().to_string(),
            "cannot record the forked task"
        );
    }
}
