//! The scheduler's dispatcher when replicas or a webhook are configured: claim the fire in
//! the shared database (when there is one), run it in the executor while renewing its
//! lease, hand a run that needs a model to the webhook, record the end.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use skill_scheduler::{DispatchFuture, Dispatcher, Fire, RunResult, SecondsFormat};
use skill_store::Claim;
use tokio::sync::Notify;

use super::config::Replicas;
use super::webhook::{self, Log};
use crate::exec::{Outcome, Runtime};

/// How long a claimed run stays "running" without a renewal; a replica renews it every
/// third of that while the run goes on. A replica that dies mid-run leaves its run
/// running for at most this long, then the run is failed and the job fires again.
pub const RUN_LEASE: Duration = Duration::from_secs(6);

/// How the outcome of a fire that was not run (its claim failed) starts.
pub(crate) const NOT_RUN: &str = "not run: ";

/// Claims fires in the shared database and delivers runs that need a model.
pub struct ReplicaDispatcher {
    runtime: Runtime,
    replicas: Replicas,
    log: Log,
    outbox: Arc<Notify>,
    local_runs: AtomicU64,
}

impl std::fmt::Debug for ReplicaDispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplicaDispatcher")
            .field("replicas", &self.replicas)
            .finish_non_exhaustive()
    }
}

impl ReplicaDispatcher {
    pub(crate) fn new(runtime: Runtime, replicas: Replicas, log: Log, outbox: Arc<Notify>) -> Self {
        ReplicaDispatcher {
            runtime,
            replicas,
            log,
            outbox,
            local_runs: AtomicU64::new(0),
        }
    }

    async fn run(self: Arc<Self>, fire: Fire) -> RunResult {
        let Some(store) = self.replicas.store.clone() else {
            let n = self.local_runs.fetch_add(1, Ordering::Relaxed) + 1;
            let run_id = format!("{}-{n}", std::process::id());
            let outcome = self.runtime.run_fire(fire.clone()).await;
            if let Some(hook) = &self.replicas.webhook {
                if outcome.requires_interpretation {
                    let body = webhook::body(&fire.name, &instant(&fire), &run_id, &outcome);
                    tokio::spawn(webhook::deliver_in_process(
                        hook.clone(),
                        self.log.clone(),
                        format!("run-{run_id}"),
                        body,
                    ));
                }
            }
            return result(&outcome);
        };
        let claim = store
            .claim_fire(&fire.name, fire.scheduled, fire.generation, RUN_LEASE)
            .await;
        let id = match claim {
            Ok(Claim::Run(id)) => id,
            // Another replica has it, or it is a recorded skip: nothing to do here.
            Ok(Claim::Taken | Claim::SkippedOverlap(_)) => return Ok(()),
            // Recorded in the shared history as not run; said here too.
            Ok(Claim::NotRun(_)) => {
                let why = "not run: another replica held this job's claim too long";
                tracing::warn!(
                    job = fire.name,
                    instant = instant(&fire),
                    "scheduled fire {why}"
                );
                return Err(why.to_owned());
            }
            // Without a claim the fire is not run (never twice beats always once). The
            // shared history cannot say so: this replica's history keeps it, and the log.
            Err(e) => {
                let why = format!("{NOT_RUN}cannot claim the fire: {e}");
                tracing::warn!(
                    job = fire.name,
                    instant = instant(&fire),
                    "scheduled fire {why}"
                );
                return Err(why);
            }
        };
        let renew = {
            let store = store.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(RUN_LEASE / 3).await;
                    match store.renew_run(id, RUN_LEASE).await {
                        Ok(true) => {}
                        Ok(false) => return,
                        Err(e) => {
                            tracing::warn!(error = %e, run = id, "cannot renew the run's lease")
                        }
                    }
                }
            })
        };
        let outcome = self.runtime.run_fire(fire.clone()).await;
        renew.abort();
        if let Some(hook) = &self.replicas.webhook {
            if outcome.requires_interpretation {
                let body = webhook::body(&fire.name, &instant(&fire), &id.to_string(), &outcome);
                match store
                    .enqueue_delivery(Some(id), &format!("run-{id}"), &hook.url, &body)
                    .await
                {
                    Ok(_) => self.outbox.notify_one(),
                    Err(e) => {
                        tracing::warn!(error = %e, run = id, "cannot queue the webhook delivery")
                    }
                }
            }
        }
        let result = result(&outcome);
        if let Err(e) = store
            .finish_run(id, result.as_ref().err().map(String::as_str))
            .await
        {
            tracing::warn!(error = %e, run = id, "cannot record the run's end");
        }
        result
    }
}

fn instant(fire: &Fire) -> String {
    fire.scheduled.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn result(outcome: &Outcome) -> RunResult {
    if outcome.ok {
        Ok(())
    } else {
        Err(match &outcome.error {
            Some(e) => format!("{}: {}", e.code, e.message),
            None => "failed".to_owned(),
        })
    }
}

/// The scheduler holds the dispatcher in an `Arc`; this wrapper lets `dispatch` clone it.
#[derive(Debug, Clone)]
pub(crate) struct Handle(pub(crate) Arc<ReplicaDispatcher>);

impl Dispatcher for Handle {
    fn dispatch(&self, fire: Fire) -> DispatchFuture {
        Box::pin(self.0.clone().run(fire))
    }

    /// With a shared database the claim decides: a run going anywhere makes the instant a
    /// recorded `skipped-overlap` there, seen by every replica.
    fn decides_overlap(&self) -> bool {
        self.0.replicas.store.is_some()
    }
}
