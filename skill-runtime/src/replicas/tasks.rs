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

use crate::error::Error;
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
                &Error::Store(format!("cannot record the forked task: {e}")),
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
        let status = crate::wire::task_status_name(info.status);
        let json = info
            .outcome
            .as_ref()
            .map(|o| serde_json::to_value(crate::wire::OutcomeShape::from(o)))
            .and_then(Result::ok)
            .unwrap_or(serde_json::Value::Null);
        if let Err(e) = store.finish_task(id, status, &json).await {
            tracing::warn!(task = id, error = %e, "cannot record a forked task's end");
        }
    });
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
        (Some(v), _) if !v.is_null() => crate::wire::outcome_from_json(v),
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
