//! Forked tasks shared through the database (issue 16, item 3).
//!
//! A fork still runs in the process that started it, in its runtime's task table. With a
//! store, the task is also written to the database before its id is answered, and that id
//! (the database's, cluster-wide) is the one the caller sees: every replica reads
//! `/v1/tasks/{id}` from the database. The running replica renews the task's lease every
//! [`TASK_RENEW`] and writes the end (status and outcome) when the task is over; a task
//! whose replica stops renewing is marked failed, with the reason, once its lease has run
//! out ([`TASK_LEASE`]), so no task stays "running" forever.

use std::time::Duration;

use skill_store::{Store, TaskRow};

use crate::error::{Error, ErrorInfo, Limit};
use crate::exec::{Kind, Outcome, Runtime, TaskInfo, TaskStatus};

/// How long a task stays "running" in the database without its replica renewing it.
pub const TASK_LEASE: Duration = Duration::from_secs(30);
/// How often the running replica renews a task's lease (a third of the lease, so two
/// renewals can fail before the task is given up).
const TASK_RENEW: Duration = Duration::from_secs(10);

/// Give a started fork its cluster-wide id and mirror its end into the store. An outcome
/// that is not a started fork is left alone. When the store cannot record the task, the
/// local task is cancelled and the outcome says why: an id no replica could answer for
/// would be worse than no task.
pub(crate) async fn share(store: &Store, runtime: &Runtime, outcome: &mut Outcome) {
    let (true, Some(Kind::Fork), Some(local), Some(skill)) = (
        outcome.ok,
        outcome.kind,
        outcome.task,
        outcome.skill.clone(),
    ) else {
        return;
    };
    let id = match store.create_task(&skill, TASK_LEASE).await {
        Ok(id) => id,
        Err(e) => {
            runtime.cancel_task(local);
            *outcome = Outcome::failure(
                Some(&skill),
                Some(Kind::Fork),
                &Error::Store(crate::error::message(format!(
                    "cannot record the forked task: {e}"
                ))),
            );
            return;
        }
    };
    let public = u64::try_from(id).unwrap_or_default();
    outcome.task = Some(public);
    if let Some(fields) = outcome.output.as_object_mut() {
        fields.insert("task_id".into(), public.into());
    }
    let store = store.clone();
    let runtime = runtime.clone();
    tokio::spawn(async move {
        let mut finished = std::pin::pin!(runtime.wait_task(local));
        let mut renew = tokio::time::interval(TASK_RENEW);
        renew.tick().await;
        let info = loop {
            tokio::select! {
                info = &mut finished => break info,
                _ = renew.tick() => {
                    if let Err(e) = store.renew_task(id, TASK_LEASE).await {
                        tracing::warn!(task = id, error = %e, "cannot renew a forked task's lease");
                    }
                }
            }
        };
        let Some(mut info) = info else { return };
        info.id = public;
        if let Some(o) = info.outcome.as_mut() {
            o.task = Some(public);
        }
        let json = info
            .outcome
            .as_ref()
            .map_or(serde_json::Value::Null, outcome_json);
        if let Err(e) = store.finish_task(id, info.status.as_str(), &json).await {
            tracing::warn!(task = id, error = %e, "cannot record a forked task's end");
        }
    });
}

/// A task as the database holds it, as the engine lists tasks: its outcome without its
/// output (`null`), as a runtime's own listing has it.
pub(crate) fn listed(row: TaskRow) -> TaskInfo {
    let mut info = info(row);
    if let Some(o) = info.outcome.as_mut() {
        o.output = serde_json::Value::Null;
    }
    info
}

/// A task as the database holds it, as the engine reports tasks.
pub(crate) fn info(row: TaskRow) -> TaskInfo {
    let status = match row.status.as_str() {
        "running" => TaskStatus::Running,
        "succeeded" => TaskStatus::Succeeded,
        "cancelled" => TaskStatus::Cancelled,
        "queued" => TaskStatus::Queued,
        _ => TaskStatus::Failed,
    };
    let ms = |millis: i64| u64::try_from(millis).unwrap_or(0);
    let id = u64::try_from(row.id).unwrap_or_default();
    let outcome = match (&row.outcome, &row.reason) {
        (Some(v), _) if !v.is_null() => outcome_from_json(v),
        (_, Some(reason)) => Some(Outcome::failure(
            Some(&row.skill),
            Some(Kind::Fork),
            &Error::TaskLost(reason.clone()),
        )),
        _ => None,
    }
    .map(|mut o| {
        o.task = Some(id);
        o
    });
    TaskInfo {
        id,
        skill: row.skill,
        status,
        created_ms: ms(row.created.timestamp_millis()),
        started_ms: Some(ms(row.created.timestamp_millis())),
        finished_ms: row.finished.map(|t| ms(t.timestamp_millis())),
        outcome,
    }
}

/// An outcome as the task table keeps it: the JSON the wire's `OutcomeShape` writes, field
/// for field (a unit test in `wire` holds the two equal), so a task read on another
/// replica answers exactly as on the one that ran it.
pub(crate) fn outcome_json(o: &Outcome) -> serde_json::Value {
    serde_json::json!({
        "skill": o.skill,
        "kind": o.kind.map(Kind::as_str),
        "ok": o.ok,
        "output": o.output,
        "requires_interpretation": o.requires_interpretation,
        "task": o.task,
        "error": o.error.as_ref().map(|e| serde_json::json!({ "code": e.code, "message": e.message })),
        "limit": o.limit.map(Limit::as_str),
        "allowed_tools": o.allowed_tools,
        "duration_ms": o.duration_ms,
    })
}

/// An outcome read back from the JSON [`outcome_json`] wrote; `None` when it is not such
/// JSON.
pub(crate) fn outcome_from_json(v: &serde_json::Value) -> Option<Outcome> {
    const LIMITS: [Limit; 5] = [
        Limit::Timeout,
        Limit::Output,
        Limit::Arguments,
        Limit::ArgumentBytes,
        Limit::Processes,
    ];
    let text = |key: &str| v.get(key).and_then(serde_json::Value::as_str);
    let kind = match text("kind") {
        Some(k) => Some(Kind::ALL.into_iter().find(|x| x.as_str() == k)?),
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
