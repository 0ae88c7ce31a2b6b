//! Execution: a routed command runs by its skill's kind (SPEC section 9).
//!
//! [`Runtime::execute`] takes a [`skill_router::Invocation`] and a [`Context`] (caller,
//! profile, snapshot) and picks, in this order:
//!
//! 1. **handler**: a tower service registered under the skill's name, or under the name
//!    its actions `handler:` field gives ([`Kind::Handler`]). A skill that declares a
//!    `handler:` nobody registered fails with `handler_not_registered` (after the two
//!    kinds below had their chance), so a host never mistakes it for a template;
//! 2. **tool**: lily `invocation_mode: tool_dispatch` calls the tool registered under its
//!    `command_tool` directly ([`Kind::Tool`]); the tool must be among the allowed tools
//!    when a profile restricts them;
//! 3. **script**: the toolsets `scripts:` list, run as a child process with limits (see
//!    the `script` module docs below and [`ScriptLimits`]) ([`Kind::Script`]);
//! 4. **template**: anything else returns its body after `$ARGUMENTS` substitution with
//!    `requires_interpretation: true` ([`Kind::Template`]).
//!
//! A skill with pegasus `context: fork` runs the same way as a background task instead
//! ([`Kind::Fork`]): the outcome carries the task id at once, and the task's status and
//! result are read with [`Runtime::tasks`], [`Runtime::task`] and [`Runtime::wait_task`].
//! At most [`RuntimeConfig::fork_concurrency`] tasks run at once; more wait in the queue
//! (status `queued`) up to [`RuntimeConfig::max_pending_tasks`], beyond which forks are
//! refused; the last [`RuntimeConfig::task_history`] finished tasks are kept, fewer when
//! their results together hold more than 64 MiB of output (the oldest finished are dropped
//! first), and a kept result's output is cut at 1 MiB with a marker that says so.
//! [`Runtime::tasks`] lists them without their outputs; [`Runtime::task`] has one in full.
//!
//! The skill's `allowed-tools`, intersected with the profile's tools ([`effective_tools`]),
//! travels with the call to handlers and tools ([`Call::allowed_tools`]) and is reported in
//! the [`Outcome`].
//!
//! [`Runtime::execute_output`] routes a whole model output and executes its commands in
//! order (a failure does not stop the rest), at most [`MAX_OUTPUT_COMMANDS`] of them and
//! at most [`MAX_EXECUTION_OUTPUT_BYTES`] of output in all (the commands past either limit
//! are not executed, and one last result says so); [`Runtime::invoke`] runs a user's slash
//! line. One execution's output is cut at [`MAX_EXECUTION_OUTPUT_BYTES`], with a marker.
//! The runtime is also the scheduler's [`Dispatcher`](skill_scheduler::Dispatcher): a
//! fired skill runs through [`Runtime::execute`], and the outcome is the run's result.
//!
//! ## Scripts
//!
//! * Which script: when the first positional is a listed script's file name or stem
//!   (`run` or `run.sh` for `scripts/run.sh`), that script runs and the positional is
//!   consumed; otherwise the first listed script runs.
//! * The entry must be a relative path without `..` under the skill's `scripts/` folder
//!   (`scripts/run.sh`), and must resolve (symbolic links followed) to a regular file
//!   inside `<skill folder>/scripts/`; an executable anywhere else in the skill's folder
//!   is refused (`script_path`). It is executed directly (no shell; it needs its
//!   executable bit and, for a script, a `#!` line), with the skill's folder as working
//!   directory.
//! * Argument vector: the remaining positionals in order, then each flag in name order:
//!   `--name` for a switch, `--name value` for one value, `--name v1 --name v2` for
//!   several values.
//! * Environment: cleared, then [`RuntimeConfig::env_allowlist`] copied from the runtime's
//!   environment (default [`DEFAULT_ENV_ALLOWLIST`]; `PATH` falls back to
//!   [`FALLBACK_PATH`]), plus `SKILL_NAME` and `SKILL_DIR`.
//! * Limits ([`ScriptLimits`]): too many arguments or argument bytes are refused before
//!   anything starts; past the timeout, once stdout and stderr together pass the output
//!   limit, or (Linux) once the script and everything it started have more than
//!   [`ScriptLimits::max_processes`] processes (counted every [`PROCESS_CHECK_INTERVAL`]),
//!   the script's process group and every descendant are killed with `SIGKILL`. On other
//!   Unix systems the process count is not enforced (only the timeout stops a fork bomb
//!   there). When the script exits, anything it left running is killed as well, and the
//!   same happens at [`Runtime::shutdown`] and when an execution future is dropped. The
//!   outcome's `limit` says which limit was hit; `output` has `exit_code`, `stdout` and
//!   `stderr` (lossy UTF-8, cut at the output limit).
//! * Descendants (Linux): followed by lineage, not by process group, so one that leaves
//!   the group or the session (`setsid`) is still counted and killed. The first script
//!   run makes the host process a child subreaper: orphans of a script come to it and are
//!   reaped by the runtime (see the `contain` module for what this means for a host that
//!   starts children of its own). Elsewhere only the process group is reached; a process
//!   that leaves it escapes there.

mod budget;
mod builder;
mod config;
#[cfg(target_os = "linux")]
mod contain;
mod context;
mod group;
mod outcome;
#[cfg(target_os = "linux")]
mod pids;
mod routed;
mod schedule;
pub(crate) mod script;
mod tasks;
pub(crate) mod wire;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use skill_format::ContextMode;
use skill_format::InvocationMode;
use skill_registry::{Disclosure, Registry, Skill, Snapshot};
use skill_router::{Invocation, RouterConfig};
use tokio::sync::{broadcast, watch};
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

pub use crate::error::{Error, ErrorInfo, Limit};
pub use builder::RuntimeBuilder;
pub use config::{
    DEFAULT_ENV_ALLOWLIST, DEFAULT_FORK_CONCURRENCY, DEFAULT_MAX_PENDING_TASKS,
    DEFAULT_TASK_HISTORY, DEFAULT_WORKFLOW_DOMAIN, FALLBACK_PATH, MAX_EXECUTION_OUTPUT_BYTES,
    MAX_OUTPUT_COMMANDS, MAX_SCRIPT_ARG_BYTES, MAX_SCRIPT_ARGS, MAX_SCRIPT_OUTPUT_BYTES,
    MAX_SCRIPT_PROCESSES, MIN_SCRIPT_TIMEOUT, PROCESS_CHECK_INTERVAL, Profile, RuntimeConfig,
    SCRIPT_NICE, SCRIPT_TIMEOUT, ScriptLimits, effective_tools,
};
pub use context::Context;
pub use outcome::{BoxError, Call, CommandOutcome, HandlerError, Kind, Outcome, Output};
pub use schedule::{SCHEDULED_RUNS_CAPACITY, ScheduledRun};
pub use tasks::{TaskInfo, TaskStatus};

/// A handler or tool: a cloneable, shareable tower service from [`Call`] to [`Output`].
pub type HandlerService = BoxCloneSyncService<Call, Output, BoxError>;

struct Inner {
    registry: Arc<Registry>,
    handlers: BTreeMap<String, HandlerService>,
    tools: BTreeMap<String, HandlerService>,
    config: RuntimeConfig,
    router: RouterConfig,
    tasks: tasks::Tasks,
    shutdown: watch::Sender<bool>,
    /// Scripts running now.
    scripts: watch::Sender<usize>,
    scheduled: broadcast::Sender<ScheduledRun>,
}

/// Executes routed skills. Cheap to clone (an `Arc` inside); clones share handlers, tasks
/// and shutdown.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("handlers", &self.inner.handlers.keys().collect::<Vec<_>>())
            .field("tools", &self.inner.tools.keys().collect::<Vec<_>>())
            .field("tasks", &self.inner.tasks)
            .finish_non_exhaustive()
    }
}

/// What a skill will run as.
enum Plan {
    Handler(HandlerService),
    Tool(String, Option<HandlerService>),
    Script,
    MissingHandler(String),
    Template,
}

/// Decrements the running-scripts count when dropped.
struct ScriptSlot<'a>(&'a watch::Sender<usize>);

impl Drop for ScriptSlot<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Runtime {
    /// Start building a runtime over a registry.
    pub fn builder(registry: Arc<Registry>) -> RuntimeBuilder {
        RuntimeBuilder::new(registry)
    }

    /// The registry it executes from.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.inner.registry
    }

    /// Its configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// Names of the registered handlers, sorted.
    pub fn handler_names(&self) -> Vec<String> {
        self.inner.handlers.keys().cloned().collect()
    }

    /// Names of the registered tools, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.tools.keys().cloned().collect()
    }

    /// Execute one routed command (see the module docs for the order of kinds).
    pub async fn execute(&self, invocation: &Invocation, ctx: &Context) -> Outcome {
        let arguments = invocation.arguments().to_owned();
        self.execute_with(invocation, arguments, ctx).await
    }

    // The GenAI `execute_tool` span (semantic-conventions-genai v0.1.0): one per tool run,
    // named `execute_tool {gen_ai.tool.name}` for OpenTelemetry (`otel.name`).
    #[tracing::instrument(
        name = "skills.run",
        skip_all,
        fields(
            otel.name = format!("execute_tool {}", inv.skill),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %inv.skill,
            gen_ai.tool.type = "extension",
            skills.layer = %inv.layer,
            skills.arguments = crate::activation::content(&arguments),
        )
    )]
    async fn execute_with(&self, inv: &Invocation, arguments: String, ctx: &Context) -> Outcome {
        let started = Instant::now();
        let mut outcome = self.prepare_and_run(inv, arguments, ctx).await;
        budget::truncate(
            &mut outcome.output,
            MAX_EXECUTION_OUTPUT_BYTES,
            &execution_cut_marker(),
        );
        outcome.duration_ms = elapsed_ms(started);
        if outcome.kind == Some(Kind::Script) {
            crate::activation::script_finished(outcome.ok, outcome.code(), started.elapsed());
        }
        outcome
    }

    async fn prepare_and_run(&self, inv: &Invocation, arguments: String, ctx: &Context) -> Outcome {
        if *self.inner.shutdown.borrow() {
            return Outcome::failure(Some(&inv.skill), None, &Error::ShuttingDown);
        }
        let snapshot = ctx
            .snapshot
            .clone()
            .unwrap_or_else(|| self.inner.registry.snapshot());
        let skill = match lookup(&snapshot, &inv.skill, ctx) {
            Ok(s) => s,
            Err(e) => return Outcome::failure(Some(&inv.skill), None, &e),
        };
        let profile = ctx
            .profile
            .as_deref()
            .and_then(|p| self.inner.config.profiles.get(p));
        let allowed_tools = effective_tools(skill.manifest.allowed_tools.as_deref(), profile);
        let call = Call {
            skill: skill.clone(),
            invocation: inv.clone(),
            arguments,
            caller: ctx.caller,
            profile: ctx.profile.clone(),
            allowed_tools,
            snapshot,
            scheduled: ctx.scheduler,
        };
        if skill.manifest.context == Some(ContextMode::Fork) {
            self.fork(call)
        } else {
            self.run(call).await
        }
    }

    fn plan(&self, skill: &Skill) -> Plan {
        let handlers = &self.inner.handlers;
        let by_field = skill.manifest.handler.as_deref();
        if let Some(h) = handlers
            .get(&skill.name)
            .or_else(|| by_field.and_then(|f| handlers.get(f)))
        {
            return Plan::Handler(h.clone());
        }
        if skill.manifest.invocation_mode == Some(InvocationMode::ToolDispatch) {
            let tool = skill.manifest.command_tool.clone().unwrap_or_default();
            let service = self.inner.tools.get(&tool).cloned();
            return Plan::Tool(tool, service);
        }
        if !skill.manifest.scripts.is_empty() {
            return Plan::Script;
        }
        if let Some(h) = by_field {
            return Plan::MissingHandler(h.to_owned());
        }
        Plan::Template
    }

    /// Run a prepared call in place (no fork).
    async fn run(&self, call: Call) -> Outcome {
        let allowed = call.allowed_tools.clone();
        let mut outcome = match self.plan(&call.skill) {
            Plan::Handler(service) => {
                let name = call.skill.name.clone();
                match service.oneshot(call).await {
                    Ok(out) => Outcome::success(&name, Kind::Handler, out.into_value()),
                    Err(e) => Outcome::failure(
                        Some(&name),
                        Some(Kind::Handler),
                        &service_error(&*e, "handler_failed"),
                    ),
                }
            }
            Plan::Tool(tool, service) => self.run_tool(call, tool, service).await,
            Plan::Script => self.run_script(&call).await,
            Plan::MissingHandler(handler) => Outcome::failure(
                Some(&call.skill.name),
                Some(Kind::Handler),
                &Error::HandlerNotRegistered {
                    skill: call.skill.name.clone(),
                    handler,
                },
            ),
            Plan::Template => {
                let body =
                    skill_format::args::substitute_arguments(&call.skill.body, &call.arguments);
                let mut o = Outcome::success(
                    &call.skill.name,
                    Kind::Template,
                    serde_json::Value::String(body),
                );
                o.requires_interpretation = true;
                o
            }
        };
        outcome.allowed_tools = allowed;
        outcome
    }

    async fn run_tool(&self, call: Call, tool: String, service: Option<HandlerService>) -> Outcome {
        let name = call.skill.name.clone();
        let fail = |e: Error| Outcome::failure(Some(&name), Some(Kind::Tool), &e);
        if tool.is_empty() {
            return fail(Error::NoCommandTool(name.clone()));
        }
        if let Some(allowed) = &call.allowed_tools {
            if !allowed.contains(&tool) {
                return fail(Error::ToolNotAllowed {
                    skill: name.clone(),
                    tool,
                });
            }
        }
        let Some(service) = service else {
            return fail(Error::ToolNotRegistered {
                skill: name.clone(),
                tool,
            });
        };
        match service.oneshot(call).await {
            Ok(out) => Outcome::success(&name, Kind::Tool, out.into_value()),
            Err(e) => fail(service_error(&*e, "tool_failed")),
        }
    }

    #[tracing::instrument(name = "skills.script", skip_all, fields(skills.name = %call.skill.name))]
    async fn run_script(&self, call: &Call) -> Outcome {
        let skill = &call.skill;
        // The trust policy: scripts of low-trust skills run only when allowed.
        if !self.inner.registry.config().may_run_scripts(skill) {
            let e = Error::ScriptUntrusted {
                skill: skill.name.clone(),
                layer: skill.layer.clone(),
            };
            return Outcome::failure(Some(&skill.name), Some(Kind::Script), &e);
        }
        let plan = match script::plan(skill, &call.invocation, &self.inner.config) {
            Ok(p) => p,
            Err(e) => return Outcome::failure(Some(&skill.name), Some(Kind::Script), &e),
        };
        // One rule for what runs: a file of the skill's manifest and, with `require_lock`,
        // bytes that hash as locked, read just before the launch; those very bytes are run
        // (see `script::run`), not what the path names by then.
        let verified =
            match self
                .inner
                .registry
                .snapshot()
                .verified_run(skill, &plan.entry, &plan.path)
            {
                Ok(v) => v,
                Err(e) => {
                    let e = Error::disclosure(e);
                    return Outcome::failure(Some(&skill.name), Some(Kind::Script), &e);
                }
            };
        self.inner.scripts.send_modify(|n| *n += 1);
        let _slot = ScriptSlot(&self.inner.scripts);
        let ran = script::run(
            skill,
            &plan,
            verified,
            &self.inner.config,
            self.inner.shutdown.subscribe(),
        )
        .await;
        let relative = plan
            .path
            .strip_prefix(
                skill
                    .dir
                    .canonicalize()
                    .unwrap_or_else(|_| skill.dir.clone()),
            )
            .unwrap_or(&plan.path)
            .to_string_lossy()
            .into_owned();
        let mut output = serde_json::json!({
            "script": relative,
            "stdout": String::from_utf8_lossy(&ran.stdout),
            "stderr": String::from_utf8_lossy(&ran.stderr),
        });
        match ran.result {
            Ok(code) => {
                output["exit_code"] = code.into();
                Outcome::success(&skill.name, Kind::Script, output)
            }
            Err(e) => {
                let mut o = Outcome::failure(Some(&skill.name), Some(Kind::Script), &e);
                o.output = output;
                o
            }
        }
    }

    /// Start a call as a background task and answer with its id.
    fn fork(&self, call: Call) -> Outcome {
        let name = call.skill.name.clone();
        let allowed = call.allowed_tools.clone();
        let id = match self.inner.tasks.create(&name) {
            Ok(id) => id,
            Err(e) => return Outcome::failure(Some(&name), Some(Kind::Fork), &e),
        };
        let rt = self.clone();
        let outer = tokio::spawn(async move {
            let tasks = &rt.inner.tasks;
            let Ok(_permit) = tasks.slots.clone().acquire_owned().await else {
                tasks.cancel(id, cancelled_outcome);
                return;
            };
            if !tasks.start(id) {
                return;
            }
            let started = Instant::now();
            let worker = rt.clone();
            let inner = tokio::spawn(async move { worker.run(call).await });
            tasks.set_abort(id, inner.abort_handle());
            let (status, outcome) = match inner.await {
                Ok(mut o) => {
                    o.duration_ms = elapsed_ms(started);
                    o.task = Some(id);
                    let s = if o.ok {
                        TaskStatus::Succeeded
                    } else {
                        TaskStatus::Failed
                    };
                    (s, o)
                }
                Err(e) if e.is_cancelled() => {
                    (TaskStatus::Cancelled, cancelled_outcome(&rt_name(&rt, id)))
                }
                Err(e) => (
                    TaskStatus::Failed,
                    Outcome::failure(
                        Some(&rt_name(&rt, id)),
                        None,
                        &Error::Internal(format!("the task ended without an answer: {e}")),
                    ),
                ),
            };
            tasks.finish(id, status, outcome);
        });
        self.inner.tasks.set_abort(id, outer.abort_handle());
        let mut o = Outcome::success(
            &name,
            Kind::Fork,
            serde_json::json!({ "task_id": id, "status": "spawned" }),
        );
        o.task = Some(id);
        o.allowed_tools = allowed;
        o
    }

    /// Call a registered handler by name directly, bypassing routing and kind selection
    /// (no fork). The skill record passed to it is the snapshot's skill of that name when
    /// one is loaded, else a minimal built-in record, so a built-in such as
    /// `workflow.build` works even when no skill file declares it (the HTTP `workflows`
    /// endpoint uses this). Fails with `handler_not_registered` when no handler has
    /// that name.
    pub async fn call_handler(
        &self,
        name: &str,
        invocation: &Invocation,
        ctx: &Context,
    ) -> Outcome {
        let started = Instant::now();
        let mut outcome = self.call_handler_inner(name, invocation, ctx).await;
        outcome.duration_ms = elapsed_ms(started);
        outcome
    }

    async fn call_handler_inner(&self, name: &str, inv: &Invocation, ctx: &Context) -> Outcome {
        if *self.inner.shutdown.borrow() {
            return Outcome::failure(Some(name), Some(Kind::Handler), &Error::ShuttingDown);
        }
        let Some(service) = self.inner.handlers.get(name).cloned() else {
            return Outcome::failure(
                Some(name),
                Some(Kind::Handler),
                &Error::HandlerNotRegistered {
                    skill: name.to_owned(),
                    handler: name.to_owned(),
                },
            );
        };
        let snapshot = ctx
            .snapshot
            .clone()
            .unwrap_or_else(|| self.inner.registry.snapshot());
        let skill = snapshot
            .get(name)
            .cloned()
            .unwrap_or_else(|| Arc::new(builtin_record(name)));
        let profile = ctx
            .profile
            .as_deref()
            .and_then(|p| self.inner.config.profiles.get(p));
        let allowed_tools = effective_tools(skill.manifest.allowed_tools.as_deref(), profile);
        let call = Call {
            skill,
            invocation: inv.clone(),
            arguments: inv.arguments().to_owned(),
            caller: ctx.caller,
            profile: ctx.profile.clone(),
            allowed_tools: allowed_tools.clone(),
            snapshot,
            scheduled: ctx.scheduler,
        };
        let mut o = match service.oneshot(call).await {
            Ok(out) => Outcome::success(name, Kind::Handler, out.into_value()),
            Err(e) => Outcome::failure(
                Some(name),
                Some(Kind::Handler),
                &service_error(&*e, "handler_failed"),
            ),
        };
        o.allowed_tools = allowed_tools;
        o
    }

    /// Every retained forked task, by id, each result without its output (`null`; a
    /// listing stays small whatever the results hold): [`Runtime::task`] has it.
    pub fn tasks(&self) -> Vec<TaskInfo> {
        self.inner.tasks.list()
    }

    /// One forked task.
    pub fn task(&self, id: u64) -> Option<TaskInfo> {
        self.inner.tasks.get(id)
    }

    /// Wait until a forked task is finished and return it (`None`: unknown id).
    pub async fn wait_task(&self, id: u64) -> Option<TaskInfo> {
        self.inner.tasks.wait(id).await
    }

    /// Cancel a queued or running task (its script, if any, is killed). False when the id
    /// is unknown or the task is already over.
    pub fn cancel_task(&self, id: u64) -> bool {
        self.inner.tasks.cancel(id, cancelled_outcome)
    }

    /// Scheduled runs as they finish (see [`ScheduledRun`]); a slow receiver misses the
    /// oldest ones (the channel keeps [`SCHEDULED_RUNS_CAPACITY`]).
    pub fn scheduled_runs(&self) -> broadcast::Receiver<ScheduledRun> {
        self.inner.scheduled.subscribe()
    }

    /// Whether [`Runtime::shutdown`] was called.
    pub fn is_shut_down(&self) -> bool {
        *self.inner.shutdown.borrow()
    }

    /// Stop: refuse new executions, kill every running script's process group, cancel
    /// every queued or running task, and return once no script is running.
    ///
    /// Scripts are stopped before tasks are cancelled: a script sees the shutdown, kills
    /// its group and reaps its process, so when this returns no script process is left
    /// (aborting a task first would drop its script mid-run, killing the group but leaving
    /// the reaping to the background).
    pub async fn shutdown(&self) {
        self.inner.shutdown.send_replace(true);
        self.inner.tasks.slots.close();
        let mut running = self.inner.scripts.subscribe();
        let _ = running.wait_for(|n| *n == 0).await;
        for id in self.inner.tasks.unfinished() {
            self.cancel_task(id);
        }
    }

    /// Number of scripts running now.
    pub fn running_scripts(&self) -> usize {
        *self.inner.scripts.borrow()
    }
}

/// The skill record handed to a handler called by name with no skill file loaded.
fn builtin_record(name: &str) -> Skill {
    Skill {
        name: name.to_owned(),
        description: String::new(),
        dialect: skill_format::Dialect::Actions,
        kind: skill_format::FileKind::Skill,
        layer: "builtin".to_owned(),
        source: 0,
        path: std::path::PathBuf::new(),
        dir: std::path::PathBuf::new(),
        domain: name.split_once('.').map(|(d, _)| d.to_owned()),
        manifest: skill_format::Manifest {
            handler: Some(name.to_owned()),
            ..skill_format::Manifest::default()
        },
        body: String::new(),
        body_line: 1,
        status: skill_registry::Status::Loaded,
        diagnostics: Vec::new(),
        outline_cache: skill_registry::SectionCache::default(),
    }
}

/// The end of an output cut at [`MAX_EXECUTION_OUTPUT_BYTES`].
fn execution_cut_marker() -> String {
    format!(
        "\n[output cut: one execution returns at most {MAX_EXECUTION_OUTPUT_BYTES} bytes of output (MAX_EXECUTION_OUTPUT_BYTES)]"
    )
}

fn rt_name(rt: &Runtime, id: u64) -> String {
    rt.task(id).map(|t| t.skill).unwrap_or_default()
}

fn cancelled_outcome(skill: &str) -> Outcome {
    Outcome::failure(Some(skill), Some(Kind::Fork), &Error::Cancelled)
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A handler's or tool's error: its own code when it is a [`HandlerError`].
fn service_error(e: &(dyn std::error::Error + Send + Sync + 'static), default: &str) -> Error {
    match e.downcast_ref::<HandlerError>() {
        Some(h) => Error::Handler {
            code: h.code.clone(),
            message: h.message.clone(),
        },
        None => Error::Handler {
            code: default.to_owned(),
            message: e.to_string(),
        },
    }
}

/// Find the skill for this context.
fn lookup(snapshot: &Snapshot, name: &str, ctx: &Context) -> Result<Arc<Skill>, Error> {
    if ctx.scheduler {
        return match snapshot.get(name) {
            Some(s) => Ok(s.clone()),
            None => Err(Error::UnknownSkill(format!(
                "Unknown skill: {name} (not loaded in generation {})",
                snapshot.generation()
            ))),
        };
    }
    Disclosure::new(snapshot)
        .caller(ctx.caller)
        .profile(ctx.profile.as_deref())
        .skill(name)
        .cloned()
        .map_err(Error::from_registry)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn send<T: Send>(_: &T) {}
    fn send_sync<T: Send + Sync + Clone + 'static>() {}

    #[test]
    fn the_runtime_and_its_futures_can_cross_threads() {
        send_sync::<Runtime>();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let _enter = rt.enter();
        let registry = Arc::new(Registry::load(
            skill_registry::RegistryConfig::with_sources(vec![]),
        ));
        let runtime = Runtime::builder(registry).build();
        let inv = Invocation::with_flags("x", skill_router::Flags::new(), None, "user");
        let ctx = Context::model();
        send(&runtime.execute(&inv, &ctx));
        send(&runtime.execute_output("```cmd\nx\n```", &ctx));
        send(&runtime.invoke("/x", &ctx));
        send(&runtime.call_handler("x", &inv, &ctx));
        send(&runtime.build_workflow(skill_router::Flags::new(), &ctx));
        send(&runtime.shutdown());
    }
}
