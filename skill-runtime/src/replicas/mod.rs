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
//!
//! With a store, the engine reads tasks, notes, the run history and readiness through the
//! `state` module's `PostgresState`, its implementation of the engine's one seam for shared
//! state (`compose` picks it at start).
//!
//! Each fire's claim is taken in `skills_runs` under a per-job transaction lock. A claim held
//! past `claim_wait_ms` by a stalled replica makes the instant a recorded "not run". The
//! database, not the process, decides overlaps (`Dispatcher::decides_overlap`). Readiness
//! reports a database that does not answer, or answers with errors, as `degraded`; the replica
//! stays ready, since all replicas share the database. skill-store depends on none of our
//! crates; this module is the only place the runtime meets it. All of this is the `replicas`
//! feature: off by default, turned on by skill-server.

mod config;
mod dispatch;
mod notes;
mod outage;
mod retention;
mod state;
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
/// How many shared runs a replica keeps in view (besides the last run of each job).
const HISTORY_ROWS: usize = 200;

/// What the engine keeps while replicas are configured: the history view and the
/// delivery log.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    pub(crate) store: Option<Store>,
    pub(crate) history: Arc<Mutex<Option<History>>>,
    pub(crate) deliveries: webhook::Log,
    /// Why the last read of the shared history failed, while reads fail (`None` while they
    /// succeed): readiness reports it.
    pub(crate) trouble: Arc<Mutex<Option<String>>>,
}

/// The shared history as last read, in order of instant, and where its window of recent
/// runs starts.
pub(crate) type History = (
    Vec<RunRecord>,
    Option<skill_scheduler::DateTime<skill_scheduler::Utc>>,
);

impl Shared {
    /// The shared history, when a store is configured and it has been read once.
    pub(crate) fn history(&self) -> Option<Vec<RunRecord>> {
        self.store.as_ref()?;
        Some(self.history.lock().ok()?.as_ref()?.0.clone())
    }

    /// [`Shared::history`] with this replica's own misses among `local` added
    /// ([`with_local_misses`]), and without the runs before its window of jobs no longer
    /// among `jobs` ([`without_gone_jobs`]).
    pub(crate) fn history_with(
        &self,
        local: &[RunRecord],
        jobs: &[String],
    ) -> Option<Vec<RunRecord>> {
        self.store.as_ref()?;
        let (runs, from) = self.history.lock().ok()?.clone()?;
        Some(without_gone_jobs(
            with_local_misses(runs, from, local),
            from,
            jobs,
        ))
    }

    /// Why the shared history cannot be read (the database does not answer, or answers
    /// with an error), while it cannot.
    pub(crate) fn trouble(&self) -> Option<String> {
        self.store.as_ref()?;
        self.trouble.lock().ok()?.clone()
    }
}

/// What the engine runs with for a [`Replicas`] configuration.
pub(crate) struct Composed {
    /// The scheduler's dispatcher: the executor itself, or a [`ReplicaDispatcher`].
    pub(crate) dispatcher: Arc<dyn skill_scheduler::Dispatcher>,
    /// Where tasks, notes, the run history and readiness are read: PostgreSQL with a store,
    /// else this process.
    pub(crate) state: Arc<dyn crate::state::SharedState>,
    /// The webhook deliveries this process attempted, when replicas are configured.
    pub(crate) deliveries: Option<DeliveryLog>,
}

/// The log of webhook deliveries this process attempted.
pub(crate) type DeliveryLog = webhook::Log;

/// Compose the engine's dispatcher and shared state for `replicas`: with neither a store
/// nor a webhook, the executor and the local state, as without the feature; otherwise
/// [`start`]'s dispatcher, and with a store the PostgreSQL state (mirroring `notes` when
/// there is a notes folder).
pub(crate) fn compose(
    runtime: &crate::exec::Runtime,
    replicas: Replicas,
    notes: Option<Arc<skill_search::NotesIndex>>,
) -> Composed {
    if !replicas.is_active() {
        return Composed {
            dispatcher: Arc::new(runtime.clone()),
            state: Arc::new(crate::state::LocalState),
            deliveries: None,
        };
    }
    let (dispatcher, shared) = start(runtime, replicas);
    let state: Arc<dyn crate::state::SharedState> = match shared.store.clone() {
        Some(store) => Arc::new(state::PostgresState::start(store, shared.clone(), notes)),
        None => Arc::new(crate::state::LocalState),
    };
    Composed {
        dispatcher: Arc::new(dispatch_handle(dispatcher)),
        state,
        deliveries: Some(shared.deliveries),
    }
}

/// Start the background work (history refresh, outbox worker) on the current tokio runtime
/// and build the dispatcher.
fn start(runtime: &crate::exec::Runtime, replicas: Replicas) -> (Arc<ReplicaDispatcher>, Shared) {
    let log = webhook::Log::default();
    let shared = Shared {
        store: replicas.store.clone(),
        history: Arc::new(Mutex::new(None)),
        deliveries: log.clone(),
        trouble: Arc::new(Mutex::new(None)),
    };
    let outbox = Arc::new(tokio::sync::Notify::new());
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        if let Some(store) = &replicas.store {
            handle.spawn(history_loop(
                store.clone(),
                shared.history.clone(),
                shared.trouble.clone(),
            ));
            if let Some(hook) = &replicas.webhook {
                handle.spawn(webhook::deliveries_loop(
                    store.clone(),
                    log.clone(),
                    HISTORY_REFRESH,
                ));
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

/// Read the shared history every [`HISTORY_REFRESH`] into `view`, and why a read failed
/// into `trouble` ([`degraded_reason`]). A failed read keeps the last history and logs as an
/// [`outage::Outage`] does (a line when it starts, a summary a minute, one when it ends).
async fn history_loop(
    store: Store,
    view: Arc<Mutex<Option<History>>>,
    trouble: Arc<Mutex<Option<String>>>,
) {
    const WHAT: &str = "reading the shared run history";
    let mut outage = outage::Outage::default();
    loop {
        match read_history(&store).await {
            Ok((rows, from)) => {
                let records = rows.into_iter().map(record).collect();
                if let Ok(mut v) = view.lock() {
                    *v = Some((records, from));
                }
                if let Ok(mut u) = trouble.lock() {
                    *u = None;
                }
                outage::Outage::log(outage.succeeded(), WHAT, &"");
            }
            Err(e) => {
                if let Ok(mut u) = trouble.lock() {
                    *u = Some(degraded_reason(&e));
                }
                outage::Outage::log(outage.failed(), WHAT, &e);
            }
        }
        tokio::time::sleep(HISTORY_REFRESH).await;
    }
}

/// What `/v1/ready` says under `degraded` when reading the shared history fails: whether
/// the database does not answer or answers with an error, and the error.
fn degraded_reason(e: &skill_store::Error) -> String {
    if e.is_unreachable() {
        format!("the shared database does not answer: {e}")
    } else {
        format!("the shared database answers with an error: {e}")
    }
}

/// The [`HISTORY_ROWS`] most recent runs, and the last run of each job they leave out (a
/// daily job among busy ones), in order of instant; and the instant the recent window
/// starts at.
async fn read_history(
    store: &Store,
) -> Result<
    (
        Vec<RunRow>,
        Option<skill_scheduler::DateTime<skill_scheduler::Utc>>,
    ),
    skill_store::Error,
> {
    let mut rows = store.recent_runs(HISTORY_ROWS).await?;
    let from = rows.iter().map(|r| r.scheduled).min();
    let seen: std::collections::HashSet<i64> = rows.iter().map(|r| r.id).collect();
    let older: Vec<RunRow> = store
        .last_run_of_each_job()
        .await?
        .into_iter()
        .filter(|r| !seen.contains(&r.id))
        .collect();
    rows.extend(older);
    rows.sort_by_key(|r| (r.scheduled, r.id));
    Ok((rows, from))
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
        replica: Some(r.replica),
    }
}

/// The shared history with this replica's own misses added: its fires that were not run
/// because the claim failed (the database did not answer; their outcome starts with
/// [`dispatch::NOT_RUN`]) and that the shared history does not hold, from `from` (where
/// the shared history's window of recent runs starts) on, in order of instant.
pub(crate) fn with_local_misses(
    mut shared: Vec<RunRecord>,
    from: Option<skill_scheduler::DateTime<skill_scheduler::Utc>>,
    local: &[RunRecord],
) -> Vec<RunRecord> {
    let known: std::collections::HashSet<(&str, skill_scheduler::DateTime<skill_scheduler::Utc>)> =
        shared
            .iter()
            .map(|r| (r.name.as_str(), r.scheduled))
            .collect();
    let missed: Vec<RunRecord> = local
        .iter()
        .filter(
            |r| matches!(&r.outcome, RunOutcome::Failed(why) if why.starts_with(dispatch::NOT_RUN)),
        )
        .filter(|r| from.is_none_or(|f| r.scheduled >= f))
        .filter(|r| !known.contains(&(r.name.as_str(), r.scheduled)))
        .cloned()
        .collect();
    if missed.is_empty() {
        return shared;
    }
    shared.extend(missed);
    shared.sort_by_key(|r| r.scheduled);
    shared
}

/// `history` without the runs before `from` (where the window of recent runs starts) of
/// jobs not among `jobs`: those runs are there only as each job's last run, which a job no
/// longer scheduled does not need; its runs inside the window stay, as every job's do.
pub(crate) fn without_gone_jobs(
    mut history: Vec<RunRecord>,
    from: Option<skill_scheduler::DateTime<skill_scheduler::Utc>>,
    jobs: &[String],
) -> Vec<RunRecord> {
    let Some(from) = from else {
        return history;
    };
    let jobs: std::collections::HashSet<&str> = jobs.iter().map(String::as_str).collect();
    history.retain(|r| r.scheduled >= from || jobs.contains(r.name.as_str()));
    history
}

/// The dispatcher as the scheduler takes it.
pub(crate) fn dispatch_handle(d: Arc<ReplicaDispatcher>) -> dispatch::Handle {
    dispatch::Handle(d)
}

/// Give each job the cluster's last run and running flag from the shared history.
pub(crate) fn apply_history(jobs: &mut [skill_scheduler::JobInfo], history: &[RunRecord]) {
    for job in jobs {
        // The history is in order of instant: the last of the job is its latest.
        let last = history.iter().rev().find(|r| r.name == job.name);
        // A run may still go while a later instant was skipped because of it.
        job.running = history
            .iter()
            .any(|r| r.name == job.name && r.outcome == RunOutcome::Running);
        job.last_run = last.cloned();
        if let Some(r) = last {
            job.last_fire = Some(job.last_fire.map_or(r.scheduled, |f| f.max(r.scheduled)));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    /// A shared run says which replica claimed it, and `/v1/schedules` shows it.
    #[test]
    fn a_shared_run_names_its_replica() {
        let at = Utc.with_ymd_and_hms(2026, 11, 28, 5, 0, 0).unwrap();
        let r = record(RunRow {
            id: 7,
            job: "tick".into(),
            scheduled: at,
            replica: "replica-b".into(),
            generation: 1,
            started: at,
            finished: Some(at),
            outcome: "succeeded".into(),
            message: None,
        });
        assert_eq!(r.replica.as_deref(), Some("replica-b"));
        let shown = serde_json::to_value(crate::wire::RunShape::from(&r)).unwrap();
        assert_eq!(shown["replica"], "replica-b");
        let local = run("tick", 1, RunOutcome::Succeeded);
        let shown = serde_json::to_value(crate::wire::RunShape::from(&local)).unwrap();
        assert!(shown.get("replica").is_none(), "{shown}");
    }

    fn run(name: &str, second: u32, outcome: RunOutcome) -> RunRecord {
        let at = Utc.with_ymd_and_hms(2026, 11, 28, 5, 0, second).unwrap();
        RunRecord {
            id: u64::from(second),
            name: name.to_owned(),
            scheduled: at,
            started: at,
            finished: Some(at),
            generation: 1,
            outcome,
            replica: None,
        }
    }

    /// Fires this replica missed while the database did not answer were in its own history
    /// only, which `/v1/schedules` does not show with a database: they are added, in order,
    /// from where the shared window of recent runs starts; the replica's other records
    /// (failures the database holds too, runs another replica made) are not, nor what the
    /// shared history holds.
    #[test]
    fn local_misses_join_the_shared_history() {
        let at = |second| Utc.with_ymd_and_hms(2026, 11, 28, 5, 0, second).unwrap();
        // A daily job's last run, long before the window, then the window from 00:10.
        let shared = vec![
            run("daily", 1, RunOutcome::Succeeded),
            run("tick", 10, RunOutcome::Succeeded),
            run("tick", 30, RunOutcome::Succeeded),
        ];
        let lost = RunOutcome::Failed("not run: cannot claim the fire".into());
        let local = vec![
            // Before the window: left out.
            run("tick", 5, lost.clone()),
            // Run by another replica: locally "succeeded" (nothing to do), not added.
            run("tick", 15, RunOutcome::Succeeded),
            run("tick", 20, lost.clone()),
            // A run's own failure is the database's to show.
            run("tick", 25, RunOutcome::Failed("exit 1".into())),
            // The shared history has this instant: it wins.
            run("tick", 30, lost.clone()),
        ];
        let merged = with_local_misses(shared.clone(), Some(at(10)), &local);
        let seen: Vec<(u32, &RunOutcome)> = merged
            .iter()
            .map(|r| (chrono::Timelike::second(&r.scheduled), &r.outcome))
            .collect();
        assert_eq!(
            seen,
            [
                (1, &RunOutcome::Succeeded),
                (10, &RunOutcome::Succeeded),
                (20, &lost),
                (30, &RunOutcome::Succeeded)
            ]
        );
        assert_eq!(with_local_misses(shared.clone(), Some(at(10)), &[]), shared);
        assert_eq!(with_local_misses(Vec::new(), None, &local).len(), 3);
    }

    /// A job removed from the skills keeps its runs inside the window, not its last run
    /// from before it (read only so that scheduled jobs have theirs).
    #[test]
    fn a_removed_jobs_last_run_before_the_window_is_left_out() {
        let at = |second| Utc.with_ymd_and_hms(2026, 11, 28, 5, 0, second).unwrap();
        let history = vec![
            run("daily", 1, RunOutcome::Succeeded),
            run("gone", 2, RunOutcome::Succeeded),
            run("gone", 10, RunOutcome::Succeeded),
            run("tick", 12, RunOutcome::Succeeded),
        ];
        let jobs = ["daily".to_owned(), "tick".to_owned()];
        let kept = without_gone_jobs(history.clone(), Some(at(10)), &jobs);
        let seen: Vec<(&str, u32)> = kept
            .iter()
            .map(|r| (r.name.as_str(), chrono::Timelike::second(&r.scheduled)))
            .collect();
        assert_eq!(seen, [("daily", 1), ("gone", 10), ("tick", 12)]);
        assert_eq!(without_gone_jobs(history.clone(), None, &jobs), history);
    }

    /// A job whose run still goes while a later instant was skipped because of it is
    /// running; its last run is its latest instant.
    #[test]
    fn a_job_runs_while_any_of_its_runs_goes() {
        let history = vec![
            run("tick", 10, RunOutcome::Running),
            run("tick", 20, RunOutcome::SkippedOverlap),
        ];
        let mut jobs = vec![skill_scheduler::JobInfo {
            name: "tick".into(),
            expression: "* * * * * *".into(),
            timezone: skill_scheduler::Tz::UTC,
            next: Vec::new(),
            last_run: None,
            last_fire: None,
            running: false,
        }];
        apply_history(&mut jobs, &history);
        assert!(jobs[0].running);
        assert_eq!(
            jobs[0].last_run.as_ref().map(|r| r.outcome.clone()),
            Some(RunOutcome::SkippedOverlap)
        );
    }
}
