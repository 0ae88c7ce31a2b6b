//! The JSON of what running skills gives: an execution's [`Outcome`], one command of a
//! model output with its outcome, a forked task, a finished scheduled run, and a registry
//! change as the event stream and `reload` report it.

use serde::Serialize;

use crate::ChangeEvent;
use crate::exec::{CommandOutcome, Kind, Outcome, ScheduledRun, TaskInfo, TaskStatus};

/// How an invocation was executed, as its snake_case name.
fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Handler => "handler",
        Kind::Tool => "tool",
        Kind::Script => "script",
        Kind::Template => "template",
        Kind::Fork => "fork",
        Kind::Help => "help",
    }
}

/// A task's status, as its snake_case name.
pub(crate) fn status_name(s: TaskStatus) -> &'static str {
    match s {
        TaskStatus::Queued => "queued",
        TaskStatus::Running => "running",
        TaskStatus::Succeeded => "succeeded",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
    }
}

/// An outcome read back from the JSON [`OutcomeShape`] wrote (a forked task's result as
/// the database shared by replicas keeps it); `None` when it is not such JSON.
#[cfg(feature = "http")]
pub(crate) fn outcome_from_json(v: &serde_json::Value) -> Option<Outcome> {
    use crate::exec::{ErrorInfo, Limit};
    const KINDS: [Kind; 6] = [
        Kind::Handler,
        Kind::Tool,
        Kind::Script,
        Kind::Template,
        Kind::Fork,
        Kind::Help,
    ];
    const LIMITS: [Limit; 5] = [
        Limit::Timeout,
        Limit::Output,
        Limit::Arguments,
        Limit::ArgumentBytes,
        Limit::Processes,
    ];
    let text = |key: &str| v.get(key).and_then(serde_json::Value::as_str);
    let kind = match text("kind") {
        Some(k) => Some(KINDS.into_iter().find(|x| kind_name(*x) == k)?),
        None => None,
    };
    let error = match v.get("error") {
        Some(e) if !e.is_null() => Some(ErrorInfo {
            code: e.get("code")?.as_str()?.to_owned(),
            message: e.get("message")?.as_str()?.to_owned(),
        }),
        _ => None,
    };
    let allowed_tools = match v.get("allowed_tools") {
        Some(serde_json::Value::Array(tools)) => Some(
            tools
                .iter()
                .map(|t| t.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()?,
        ),
        _ => None,
    };
    Some(Outcome {
        skill: text("skill").map(str::to_owned),
        kind,
        ok: v.get("ok")?.as_bool()?,
        output: v.get("output").cloned().unwrap_or_default(),
        requires_interpretation: v
            .get("requires_interpretation")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
        task: v.get("task").and_then(serde_json::Value::as_u64),
        error,
        limit: text("limit").and_then(|l| LIMITS.into_iter().find(|x| x.as_str() == l)),
        allowed_tools,
        duration_ms: v
            .get("duration_ms")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0),
    })
}

/// `{code, message}`: an error as every front door reports it.
#[derive(Debug, Serialize)]
pub struct ErrorInfoShape<'a> {
    code: &'a str,
    message: &'a str,
}

/// The result of executing one invocation: skill, kind, ok, output, whether the output is
/// for the model to interpret, the task id of a fork, the error, the script limit that
/// stopped it, the allowed tools and the time taken.
#[derive(Debug, Serialize)]
pub struct OutcomeShape<'a> {
    skill: Option<&'a str>,
    kind: Option<&'static str>,
    ok: bool,
    output: &'a serde_json::Value,
    requires_interpretation: bool,
    task: Option<u64>,
    error: Option<ErrorInfoShape<'a>>,
    limit: Option<&'static str>,
    allowed_tools: Option<&'a [String]>,
    duration_ms: u64,
}

impl<'a> From<&'a Outcome> for OutcomeShape<'a> {
    fn from(o: &'a Outcome) -> Self {
        OutcomeShape {
            skill: o.skill.as_deref(),
            kind: o.kind.map(kind_name),
            ok: o.ok,
            output: &o.output,
            requires_interpretation: o.requires_interpretation,
            task: o.task,
            error: o.error.as_ref().map(|e| ErrorInfoShape {
                code: &e.code,
                message: &e.message,
            }),
            limit: o.limit.map(|l| l.as_str()),
            allowed_tools: o.allowed_tools.as_deref(),
            duration_ms: o.duration_ms,
        }
    }
}

/// One command of a model output and what executing it gave.
#[derive(Debug, Serialize)]
pub struct CommandOutcomeShape<'a> {
    command: &'a str,
    line: u32,
    outcome: OutcomeShape<'a>,
}

impl<'a> From<&'a CommandOutcome> for CommandOutcomeShape<'a> {
    fn from(c: &'a CommandOutcome) -> Self {
        CommandOutcomeShape {
            command: &c.command,
            line: c.line,
            outcome: (&c.outcome).into(),
        }
    }
}

/// A forked task: id, skill, status, its times in milliseconds since the Unix epoch, and
/// its outcome once finished.
#[derive(Debug, Serialize)]
pub struct TaskShape<'a> {
    id: u64,
    skill: &'a str,
    status: &'static str,
    created_ms: u64,
    started_ms: Option<u64>,
    finished_ms: Option<u64>,
    outcome: Option<OutcomeShape<'a>>,
}

impl<'a> From<&'a TaskInfo> for TaskShape<'a> {
    fn from(t: &'a TaskInfo) -> Self {
        TaskShape {
            id: t.id,
            skill: &t.skill,
            status: status_name(t.status),
            created_ms: t.created_ms,
            started_ms: t.started_ms,
            finished_ms: t.finished_ms,
            outcome: t.outcome.as_ref().map(OutcomeShape::from),
        }
    }
}

/// A scheduled run that finished: the skill, the instant, the generation it fired from
/// and its outcome (the event stream's `scheduled` event).
#[derive(Debug, Serialize)]
pub struct ScheduledRunShape<'a> {
    skill: &'a str,
    scheduled: &'a str,
    generation: u64,
    outcome: OutcomeShape<'a>,
}

impl<'a> From<&'a ScheduledRun> for ScheduledRunShape<'a> {
    fn from(r: &'a ScheduledRun) -> Self {
        ScheduledRunShape {
            skill: &r.skill,
            scheduled: &r.scheduled,
            generation: r.generation,
            outcome: (&r.outcome).into(),
        }
    }
}

/// A registry change: the generations before and after, and the names added, changed
/// and removed (the event stream's `change` event and `POST /v1/reload`).
#[derive(Debug, Serialize)]
pub struct ChangeShape<'a> {
    previous_generation: u64,
    generation: u64,
    added: &'a [String],
    changed: &'a [String],
    removed: &'a [String],
    domains: &'a [String],
}

impl<'a> From<&'a ChangeEvent> for ChangeShape<'a> {
    fn from(c: &'a ChangeEvent) -> Self {
        ChangeShape {
            previous_generation: c.previous_generation,
            generation: c.generation,
            added: &c.added,
            changed: &c.changed,
            removed: &c.removed,
            domains: &c.domains,
        }
    }
}

/// An event's payload as one line of JSON (the event stream's `data:`).
pub fn event_json(event: &crate::Event) -> String {
    let json = match event {
        crate::Event::Change(c) => serde_json::to_string(&ChangeShape::from(c)),
        crate::Event::Scheduled(r) => serde_json::to_string(&ScheduledRunShape::from(r)),
    };
    json.unwrap_or_else(|e| crate::wire::error_body("internal", &e.to_string()).to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::exec::Limit;

    #[test]
    fn an_outcome_writes_every_field_with_snake_case_names() {
        let o = Outcome {
            skill: Some("s".into()),
            kind: Some(Kind::Script),
            ok: false,
            output: serde_json::Value::Null,
            requires_interpretation: false,
            task: None,
            error: Some(crate::error::ErrorInfo {
                code: "limit_exceeded".into(),
                message: "m".into(),
            }),
            limit: Some(Limit::ArgumentBytes),
            allowed_tools: None,
            duration_ms: 3,
        };
        assert_eq!(
            serde_json::to_string(&OutcomeShape::from(&o)).unwrap(),
            r#"{"skill":"s","kind":"script","ok":false,"output":null,"requires_interpretation":false,"task":null,"error":{"code":"limit_exceeded","message":"m"},"limit":"argument_bytes","allowed_tools":null,"duration_ms":3}"#
        );
    }

    #[test]
    #[cfg(feature = "http")]
    fn an_outcome_reads_back_from_its_json() {
        let mut o = Outcome {
            skill: Some("s".into()),
            kind: Some(Kind::Fork),
            ok: true,
            output: serde_json::json!({ "a": [1, "b"] }),
            requires_interpretation: true,
            task: Some(7),
            error: Some(crate::error::ErrorInfo {
                code: "limit_exceeded".into(),
                message: "m".into(),
            }),
            limit: Some(Limit::Processes),
            allowed_tools: Some(vec!["t".into()]),
            duration_ms: 3,
        };
        let json = serde_json::to_value(OutcomeShape::from(&o)).unwrap();
        assert_eq!(outcome_from_json(&json), Some(o.clone()));
        (o.kind, o.error, o.limit, o.allowed_tools, o.task) = (None, None, None, None, None);
        let json = serde_json::to_value(OutcomeShape::from(&o)).unwrap();
        assert_eq!(outcome_from_json(&json), Some(o));
        // Not an outcome: no `ok`, or a kind no version wrote.
        assert_eq!(
            outcome_from_json(&serde_json::json!({ "skill": "s" })),
            None
        );
        assert_eq!(
            outcome_from_json(&serde_json::json!({ "ok": true, "kind": "teleport" })),
            None
        );
    }

    #[test]
    fn every_task_status_has_its_name() {
        let names: Vec<&str> = [
            TaskStatus::Queued,
            TaskStatus::Running,
            TaskStatus::Succeeded,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ]
        .into_iter()
        .map(status_name)
        .collect();
        assert_eq!(
            names,
            ["queued", "running", "succeeded", "failed", "cancelled"]
        );
    }
}
