//! Several replicas and webhook delivery (SPEC section 8, issue 16).
//!
//! [`Replicas`] is what the host configures: a shared [`Store`] (PostgreSQL) and/or a
//! [`WebhookConfig`]. With neither, the engine's scheduler dispatches straight into the
//! executor, as it always has. Otherwise its dispatcher is [`ReplicaDispatcher`]:
//!
//! - with a store, each fire is first claimed in the database ([`Store::claim_fire`]): only
//!   the replica whose claim wins runs it, renewing the run's lease while it runs; an
//!   instant another replica claimed is left alone; one that falls while a run of the job
//!   is going anywhere is recorded as skipped. The history `/v1/schedules` shows is then the
//!   database's, refreshed every [`HISTORY_REFRESH`], so every replica shows the same runs;
//! - a run that needs a model (`requires_interpretation`) is POSTed to the webhook: with a
//!   store through the outbox (written before the first attempt, so a crash leaves it for
//!   another replica, at least once with the same idempotency key), without one by a task
//!   of this process (lost if the process dies). Every attempt is recorded;
//! - with a store, forked tasks are recorded in it too (see the `tasks` module), so any
//!   replica answers for any task, and a notes folder is mirrored into it and searched
//!   there (the `notes` module).

mod config;
mod dispatch;
pub(crate) mod notes;
mod retention;
pub(crate) mod tasks;
mod webhook;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use skill_scheduler::{Outcome as RunOutcome, RunRecord};
use skill_store::{RunRow, Store};

pub use config::Replicas;
pub use dispatch::{RUN_LEASE, ReplicaDispatcher};
pub use tasks::TASK_LEASE;
pub use webhook::{
    ATTEMPT_HEADER, DEFAULT_MAX_ATTEMPTS, DeliveryAttempt, DeliveryRecord, IDEMPOTENCY_HEADER,
    MAX_DELIVERY_LOG, SIGNATURE_HEADER, WebhookConfig, signature,
};

/// How often a replica re-reads the shared run history from the database.
pub const HISTORY_REFRESH: Duration = Duration::from_millis(500);
/// How many shared runs a replica keeps in view.
const HISTORY_ROWS: usize = 200;

/// What the engine keeps while replicas are configured: the history view and the
/// delivery log.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    pub(crate) store: Option<Store>,
    pub(crate) history: Arc<Mutex<Option<Vec<RunRecord>>>>,
    pub(crate) deliveries: webhook::Log,
}

impl Shared {
    /// The shared history, when a store is configured and it has been read once.
    pub(crate) fn history(&self) -> Option<Vec<RunRecord>> {
        self.store.as_ref()?;
        self.history.lock().ok()?.clone()
    }
}

/// Start the background work (history refresh, outbox worker) on the current tokio runtime
/// and build the dispatcher.
pub(crate) fn start(
    runtime: &crate::exec::Runtime,
    replicas: Replicas,
) -> (Arc<ReplicaDispatcher>, Shared) {
    let log = webhook::Log::default();
    let shared = Shared {
        store: replicas.store.clone(),
        history: Arc::new(Mutex::new(None)),
        deliveries: log.clone(),
    };
    let outbox = Arc::new(tokio::sync::Notify::new());
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        if let Some(store) = &replicas.store {
            let reader = store.clone();
            let view = shared.history.clone();
            handle.spawn(async move {
                let store = reader;
                loop {
                    match store.recent_runs(HISTORY_ROWS).await {
                        Ok(rows) => {
                            let records = rows.into_iter().map(record).collect();
                            if let Ok(mut v) = view.lock() {
                                *v = Some(records);
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "cannot read the shared run history"),
                    }
                    tokio::time::sleep(HISTORY_REFRESH).await;
                }
            });
            if let Some(hook) = &replicas.webhook {
                handle.spawn(webhook::outbox_worker(
                    store.clone(),
                    hook.clone(),
                    log.clone(),
                    outbox.clone(),
                ));
            }
            handle.spawn(retention::pruner(store.clone(), replicas.retention));
        }
    }
    let dispatcher = Arc::new(ReplicaDispatcher::new(
        runtime.clone(),
        replicas,
        log,
        outbox,
    ));
    (dispatcher, shared)
}

/// A database row as the scheduler's record type.
fn record(r: RunRow) -> RunRecord {
    let outcome = match r.outcome.as_str() {
        "running" => RunOutcome::Running,
        "succeeded" => RunOutcome::Succeeded,
        "skipped-overlap" => RunOutcome::SkippedOverlap,
        _ => RunOutcome::Failed(r.message.unwrap_or_else(|| "failed".into())),
    };
    RunRecord {
        id: u64::try_from(r.id).unwrap_or_default(),
        name: r.job,
        scheduled: r.scheduled,
        started: r.started,
        finished: r.finished,
        generation: u64::try_from(r.generation).unwrap_or_default(),
        outcome,
    }
}

/// The dispatcher as the scheduler takes it.
pub(crate) fn dispatch_handle(d: Arc<ReplicaDispatcher>) -> dispatch::Handle {
    dispatch::Handle(d)
}

/// Give each job the cluster's last run and running flag from the shared history.
pub(crate) fn apply_history(jobs: &mut [skill_scheduler::JobInfo], history: &[RunRecord]) {
    for job in jobs {
        let last = history.iter().rev().find(|r| r.name == job.name);
        job.running = last.is_some_and(|r| r.outcome == RunOutcome::Running);
        job.last_run = last.cloned();
        if let Some(r) = last {
            job.last_fire = Some(job.last_fire.map_or(r.scheduled, |f| f.max(r.scheduled)));
        }
    }
}
