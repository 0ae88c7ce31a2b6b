//! The JSON of what running skills gives: an execution's [`Outcome`], one command of a
//! model output with its outcome, a forked task, a finished scheduled run, and a registry
//! change as the event stream and `reload` report it.

use serde::Serialize;

use crate::ChangeEvent;
use crate::exec::{CommandOutcome, Kind, Outcome, ScheduledRun, TaskInfo, TaskStatus};

/// How an invocation was executed, as its snake_case name.
fn kind_name(k: Kind) -> &'static str {
    k.as_str()
}

/// A task's status, as its snake_case name.
fn status_name(s: TaskStatus) -> &'static str {
    s.as_str()
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
    /// Left out (not `null`) in a listing of tasks, which leaves outputs out.
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<&'a serde_json::Value>,
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
            output: Some(&o.output),
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

impl<'a> TaskShape<'a> {
    /// A task as `GET /v1/tasks` lists it: its outcome without `output` (the field is
    /// left out; `GET /v1/tasks/{id}` has it).
    pub fn listed(t: &'a TaskInfo) -> Self {
        let mut shape = TaskShape::from(t);
        if let Some(o) = shape.outcome.as_mut() {
            o.output = None;
        }
        shape
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
    #[cfg(feature = "replicas")]
    fn the_shared_task_table_keeps_an_outcome_as_the_wire_writes_it() {
        use crate::replicas::tasks::{outcome_from_json, outcome_json};
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
        assert_eq!(outcome_json(&o), json);
        assert_eq!(outcome_from_json(&json), Some(o.clone()));
        (o.kind, o.error, o.limit, o.allowed_tools, o.task) = (None, None, None, None, None);
        let json = serde_json::to_value(OutcomeShape::from(&o)).unwrap();
        assert_eq!(outcome_json(&o), json);
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
