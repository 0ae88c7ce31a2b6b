//! Runtime configuration: script limits, the script environment, forked tasks, profiles.

use std::collections::BTreeMap;
use std::time::Duration;

/// The domain a workflow goes to without `--domain` (markdown-first 9.3), and the one
/// workflow domain by default.
pub const DEFAULT_WORKFLOW_DOMAIN: &str = "workflows";
/// Longest a script may run before its process group is killed, by default (toolsets
/// "Script Execution": 60 seconds); set it with [`ScriptLimits::timeout`] (`serve`:
/// `script_timeout_ms`).
pub const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);
/// The shortest script timeout: a configured [`ScriptLimits::timeout`] below it is raised to
/// it (`serve` refuses such a setting outright). Below it a script could not even be started
/// and counted once ([`PROCESS_CHECK_INTERVAL`]) before being killed.
pub const MIN_SCRIPT_TIMEOUT: Duration = Duration::from_millis(100);
/// Most bytes a script may write to stdout and stderr together (1 MiB) before its process
/// group is killed.
pub const MAX_SCRIPT_OUTPUT_BYTES: usize = 1024 * 1024;
/// Most arguments a script may be given (not counting the program itself).
pub const MAX_SCRIPT_ARGS: usize = 100;
/// Most bytes the arguments of a script may have together (each argument's UTF-8 length).
pub const MAX_SCRIPT_ARG_BYTES: usize = 4096;
/// Most processes a script may have at once in its process group, the script itself
/// included (the guard against fork bombs). More, and the whole group is killed. Counted
/// on Linux only, every [`PROCESS_CHECK_INTERVAL`]; on other systems it is not enforced.
pub const MAX_SCRIPT_PROCESSES: usize = 64;
/// How often the processes of a running script's group are counted against
/// [`ScriptLimits::max_processes`] (Linux).
pub const PROCESS_CHECK_INTERVAL: Duration = Duration::from_millis(20);
/// The nice value a script's process group runs at (Unix): the lowest priority, so a script
/// that saturates the CPUs (a fork bomb, a busy loop) cannot starve the server, its requests
/// or the process count that enforces [`MAX_SCRIPT_PROCESSES`]. On an idle machine a script
/// still gets all the CPU it asks for.
pub const SCRIPT_NICE: i32 = 19;
/// Environment variables a script sees by default, when the runtime's own environment has
/// them. Everything else is cleared. `HOME` and `USER` are deliberately not passed (a
/// script should not find or write the host user's files); add them in
/// [`RuntimeConfig::env_allowlist`] when a script needs them.
pub const DEFAULT_ENV_ALLOWLIST: &[&str] = &["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"];
/// `PATH` given to a script when the runtime's own environment has none.
pub const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Forked tasks that run at the same time, by default.
pub const DEFAULT_FORK_CONCURRENCY: usize = 4;
/// Forked tasks that may be queued or running at once, by default; more are refused.
pub const DEFAULT_MAX_PENDING_TASKS: usize = 256;
/// Finished forked tasks kept for [`Runtime::tasks`](crate::exec::Runtime::tasks), by
/// default; the oldest finished ones are dropped first (also once their results together
/// pass the history's byte budget, see the module docs of `exec`).
pub const DEFAULT_TASK_HISTORY: usize = 1000;
/// Most commands of one model output that
/// [`Runtime::execute_output`](crate::exec::Runtime::execute_output) executes: the first
/// this-many run, and one more entry (`too_many_commands`) says how many did not and from
/// which line. Each command can start a script or a fork, and answers with its own output.
pub const MAX_OUTPUT_COMMANDS: usize = 100;
/// Most bytes of output one execution returns (the text of its outputs: every string's
/// UTF-8 length): one command's outcome is cut there, and a model output's commands share
/// it: once their outputs reach it, the remaining commands are not executed
/// (`output_limit`). A cut output ends with a marker that names this limit. Twice the
/// largest skill file (`skill_format::MAX_FILE_BYTES`), so a template's own text is never
/// cut; what it bounds is arguments substituted many times, and many commands.
pub const MAX_EXECUTION_OUTPUT_BYTES: usize = 2 * skill_format::MAX_FILE_BYTES;

/// Limits for script execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptLimits {
    /// Wall-clock timeout ([`SCRIPT_TIMEOUT`]; at least [`MIN_SCRIPT_TIMEOUT`], see
    /// [`ScriptLimits::effective_timeout`]).
    pub timeout: Duration,
    /// Output cap, stdout and stderr together ([`MAX_SCRIPT_OUTPUT_BYTES`]).
    pub max_output_bytes: usize,
    /// Argument count cap ([`MAX_SCRIPT_ARGS`]).
    pub max_args: usize,
    /// Argument bytes cap ([`MAX_SCRIPT_ARG_BYTES`]).
    pub max_arg_bytes: usize,
    /// Processes at once in the script's process group, itself included
    /// ([`MAX_SCRIPT_PROCESSES`]; Linux only).
    pub max_processes: usize,
}

impl Default for ScriptLimits {
    fn default() -> Self {
        ScriptLimits {
            timeout: SCRIPT_TIMEOUT,
            max_output_bytes: MAX_SCRIPT_OUTPUT_BYTES,
            max_args: MAX_SCRIPT_ARGS,
            max_arg_bytes: MAX_SCRIPT_ARG_BYTES,
            max_processes: MAX_SCRIPT_PROCESSES,
        }
    }
}

impl ScriptLimits {
    /// The timeout scripts actually get: [`ScriptLimits::timeout`], raised to
    /// [`MIN_SCRIPT_TIMEOUT`] when it is shorter.
    pub fn effective_timeout(&self) -> Duration {
        self.timeout.max(MIN_SCRIPT_TIMEOUT)
    }
}

/// A processing profile's tool list (agent-skills-integration 7.2: the profile has the
/// final say over a skill's `allowed-tools`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// The tools this profile allows.
    pub tools: Vec<String>,
}

/// How a [`Runtime`](crate::exec::Runtime) executes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Script limits.
    pub limits: ScriptLimits,
    /// Environment variables passed to scripts from the runtime's environment
    /// ([`DEFAULT_ENV_ALLOWLIST`]); all others are cleared.
    pub env_allowlist: Vec<String>,
    /// Forked tasks running at once ([`DEFAULT_FORK_CONCURRENCY`], at least 1).
    pub fork_concurrency: usize,
    /// Forked tasks queued or running at once ([`DEFAULT_MAX_PENDING_TASKS`]).
    pub max_pending_tasks: usize,
    /// Finished forked tasks retained ([`DEFAULT_TASK_HISTORY`]).
    pub task_history: usize,
    /// Profiles by name, with their tool lists.
    pub profiles: BTreeMap<String, Profile>,
    /// The actions domains `workflow.build` may write workflows to (default
    /// [`DEFAULT_WORKFLOW_DOMAIN`] alone); any
    /// other domain is refused (`not_a_workflow_domain`).
    pub workflow_domains: Vec<String>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            limits: ScriptLimits::default(),
            env_allowlist: DEFAULT_ENV_ALLOWLIST
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            fork_concurrency: DEFAULT_FORK_CONCURRENCY,
            max_pending_tasks: DEFAULT_MAX_PENDING_TASKS,
            task_history: DEFAULT_TASK_HISTORY,
            profiles: BTreeMap::new(),
            workflow_domains: vec![DEFAULT_WORKFLOW_DOMAIN.to_owned()],
        }
    }
}

/// The tools a skill may use under a profile:
///
/// * the profile is configured: the skill's `allowed-tools` that the profile also allows,
///   in the skill's order; a skill that declares none gets the profile's tools (pegasus:
///   "all tools" by default, and the profile has the final say);
/// * no profile, or one not configured here: the skill's `allowed-tools` as declared
///   (`None` when it declares none: no restriction is known).
pub fn effective_tools(
    skill_tools: Option<&[String]>,
    profile: Option<&Profile>,
) -> Option<Vec<String>> {
    match (skill_tools, profile) {
        (Some(s), Some(p)) => Some(s.iter().filter(|t| p.tools.contains(t)).cloned().collect()),
        (None, Some(p)) => Some(p.tools.clone()),
        (Some(s), None) => Some(s.to_vec()),
        (None, None) => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_issue_values() {
        assert_eq!(SCRIPT_TIMEOUT, Duration::from_secs(60));
        assert_eq!(MAX_SCRIPT_OUTPUT_BYTES, 1_048_576);
        assert_eq!(MAX_SCRIPT_ARGS, 100);
        assert_eq!(MAX_SCRIPT_ARG_BYTES, 4096);
        assert_eq!(MAX_SCRIPT_PROCESSES, 64);
        assert_eq!(PROCESS_CHECK_INTERVAL, Duration::from_millis(20));
        assert_eq!(SCRIPT_NICE, 19);
        let c = RuntimeConfig::default();
        assert_eq!(c.limits, ScriptLimits::default());
        assert_eq!(c.limits.timeout, SCRIPT_TIMEOUT);
        assert_eq!(c.limits.max_processes, MAX_SCRIPT_PROCESSES);
        assert!(c.env_allowlist.iter().any(|v| v == "PATH"));
        assert!(!c.env_allowlist.iter().any(|v| v == "HOME"));
    }

    #[test]
    fn the_timeout_is_raised_to_its_lower_bound() {
        let mut l = ScriptLimits::default();
        assert_eq!(l.effective_timeout(), SCRIPT_TIMEOUT);
        l.timeout = MIN_SCRIPT_TIMEOUT;
        assert_eq!(l.effective_timeout(), MIN_SCRIPT_TIMEOUT);
        l.timeout = MIN_SCRIPT_TIMEOUT - Duration::from_nanos(1);
        assert_eq!(l.effective_timeout(), MIN_SCRIPT_TIMEOUT);
        l.timeout = Duration::ZERO;
        assert_eq!(l.effective_timeout(), MIN_SCRIPT_TIMEOUT);
        l.timeout = MIN_SCRIPT_TIMEOUT + Duration::from_millis(1);
        assert_eq!(l.effective_timeout(), Duration::from_millis(101));
        assert!(MIN_SCRIPT_TIMEOUT > PROCESS_CHECK_INTERVAL);
    }

    #[test]
    fn tools_are_intersected_with_the_profile() {
        let p = Profile {
            tools: vec!["read".into(), "write".into()],
        };
        let skill = vec!["shell".to_owned(), "write".to_owned(), "read".to_owned()];
        assert_eq!(
            effective_tools(Some(&skill), Some(&p)),
            Some(vec!["write".to_owned(), "read".to_owned()])
        );
        assert_eq!(effective_tools(None, Some(&p)), Some(p.tools.clone()));
        assert_eq!(effective_tools(Some(&skill), None), Some(skill.clone()));
        assert_eq!(effective_tools(None, None), None);
        let empty = Profile::default();
        assert_eq!(effective_tools(Some(&skill), Some(&empty)), Some(vec![]));
    }
}
