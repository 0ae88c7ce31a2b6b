//! The runtime as the scheduler's [`Dispatcher`]: a fired skill runs through
//! [`Runtime::execute`] with [`Context::scheduler`], and the outcome is the run's result.
//!
//! * The invocation is the bare skill name (no flags, no arguments): scheduled runs use the
//!   skill's defaults (markdown-first 12.2).
//! * A `context: fork` skill runs as a forked task (listed in [`Runtime::tasks`]) and the
//!   dispatch waits for that task, so the history records the task's real result.
//! * The run succeeds when the outcome is `ok`; otherwise it fails with
//!   `"<code>: <message>"`. A template skill (no handler) succeeds by being handed over:
//!   its outcome, with the body and `requires_interpretation`, is published on
//!   [`Runtime::scheduled_runs`] for the host to give to its model (markdown-first 12.2:
//!   "runs the workflow through the normal orchestration pipeline").

use skill_router::Invocation;
use skill_scheduler::{DispatchFuture, Dispatcher, Fire, SecondsFormat};

use crate::exec::{Context, Outcome, Runtime};

/// How many finished scheduled runs [`Runtime::scheduled_runs`] buffers for a slow
/// receiver.
pub const SCHEDULED_RUNS_CAPACITY: usize = 256;

/// A scheduled run that finished.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduledRun {
    /// The skill.
    pub skill: String,
    /// The instant the schedule named, RFC 3339 in UTC.
    pub scheduled: String,
    /// The snapshot generation the scheduler fired from.
    pub generation: u64,
    /// What the execution gave.
    pub outcome: Outcome,
}

impl Runtime {
    /// Execute one fire (what [`Dispatcher::dispatch`] runs) and return its outcome.
    #[tracing::instrument(
        name = "skills.schedule.fire",
        skip_all,
        fields(skills.name = %fire.name, skills.schedule.generation = fire.generation)
    )]
    pub async fn run_fire(&self, fire: Fire) -> Outcome {
        crate::activation::activated(
            &self.inner.registry.snapshot(),
            crate::activation::Trigger::Schedule,
            &fire.name,
        );
        let invocation = Invocation::scheduled(&fire.skill);
        let mut outcome = self.execute(&invocation, &Context::scheduler()).await;
        if let Some(id) = outcome.task {
            if let Some(info) = self.wait_task(id).await {
                if let Some(done) = info.outcome {
                    outcome = done;
                    outcome.task = Some(id);
                }
            }
        }
        let _ = self.inner.scheduled.send(ScheduledRun {
            skill: fire.name.clone(),
            scheduled: fire.scheduled.to_rfc3339_opts(SecondsFormat::Secs, true),
            generation: fire.generation,
            outcome: outcome.clone(),
        });
        outcome
    }
}

impl Dispatcher for Runtime {
    fn dispatch(&self, fire: Fire) -> DispatchFuture {
        let rt = self.clone();
        Box::pin(async move {
            let outcome = rt.run_fire(fire).await;
            if outcome.ok {
                Ok(())
            } else {
                Err(match &outcome.error {
                    Some(e) => format!("{}: {}", e.code, e.message),
                    None => "failed".to_owned(),
                })
            }
        })
    }
}
