//! The scheduler handle: [`Scheduler::start`] sets up the jobs and spawns the driver;
//! the handle lists jobs, history, diagnostics and warnings, and stops the driver when
//! dropped.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use skill_format::Diagnostic;
use skill_registry::{ChangeSet, Registry, Subscription};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::config::{CatchUp, SchedulerConfig, WallClock};
use crate::dispatch::Dispatcher;
use crate::driver::drive;
use crate::expr::Schedule;
use crate::history::{RunRecord, Runs};
use crate::queue::Core;
use crate::{Error, lock, state};

/// One job as [`Scheduler::jobs`] lists it.
#[derive(Debug, Clone)]
pub struct JobInfo {
    /// The skill's name.
    pub name: String,
    /// The schedule as written.
    pub expression: String,
    /// The zone it is read in.
    pub timezone: Tz,
    /// The next fire instants, soonest first.
    pub next: Vec<DateTime<Utc>>,
    /// The most recent run (or skip) recorded for it, if still in the history.
    pub last_run: Option<RunRecord>,
    /// The last instant it fired for (from this process or the state file).
    pub last_fire: Option<DateTime<Utc>>,
    /// Whether a run is going now.
    pub running: bool,
}

/// A running scheduler. Dropping it (or [`Scheduler::shutdown`]) stops firing; runs already
/// dispatched carry on.
pub struct Scheduler {
    core: Arc<Mutex<Core>>,
    runs: Arc<Mutex<Runs>>,
    driver: JoinHandle<()>,
    _subscription: Subscription,
}

impl fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scheduler").finish_non_exhaustive()
    }
}

/// One job's state as [`Scheduler::jobs`] copies it under the lock.
struct Listed {
    name: Arc<str>,
    schedule: Arc<Schedule>,
    next: Option<DateTime<Utc>>,
    last_fire: Option<DateTime<Utc>>,
}

impl Scheduler {
    /// Start scheduling every loaded skill of `registry` that has a `schedule`, and follow
    /// the registry's change sets from now on. Must be called within a tokio runtime.
    ///
    /// Problems with the state file do not stop it: it starts clean and reports them in
    /// [`Scheduler::warnings`]. Invalid schedules are in [`Scheduler::diagnostics`].
    pub fn start(
        registry: Arc<Registry>,
        dispatcher: Arc<dyn Dispatcher>,
        config: SchedulerConfig,
    ) -> Result<Scheduler, Error> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
        let (tx, rx) = mpsc::unbounded_channel::<ChangeSet>();
        // Subscribe before reading the snapshot so no change set falls in between.
        let subscription = registry.subscribe(move |cs| {
            let _ = tx.send(cs.clone());
        });
        let loaded = config
            .state_path
            .as_deref()
            .map(state::load)
            .unwrap_or_default();
        let clock = WallClock::new(config.clock);
        let last_fires = loaded
            .last_fires
            .into_iter()
            .map(|(k, v)| (Arc::from(k), v))
            .collect();
        let mut core = Core::new(config.timezone, clock, last_fires, config.state_path);
        for w in loaded.warnings {
            core.warn(w);
        }
        let snapshot = registry.snapshot();
        core.sync_full(&snapshot);
        if config.catch_up == CatchUp::RunOnceOnStart {
            core.schedule_catch_up();
        }
        let runs = Runs::new(clock, config.history_limit);
        let core = Arc::new(Mutex::new(core));
        let runs = Arc::new(Mutex::new(runs));
        let driver = handle.spawn(drive(core.clone(), runs.clone(), dispatcher, registry, rx));
        Ok(Scheduler {
            core,
            runs,
            driver,
            _subscription: subscription,
        })
    }

    /// The names of the jobs, in order ([`Scheduler::jobs`] without their state).
    pub fn job_names(&self) -> Vec<String> {
        lock(&self.core)
            .jobs
            .keys()
            .map(|n| n.to_string())
            .collect()
    }

    /// Every job by name, with its next `next` fire instants.
    ///
    /// The locks are held only to copy each job's state; the fire instants after the
    /// first are computed once they are released, so listing many jobs does not hold up
    /// the driver.
    pub fn jobs(&self, next: usize) -> Vec<JobInfo> {
        let (tz, listed) = {
            let core = lock(&self.core);
            let listed: Vec<Listed> = core
                .jobs
                .iter()
                .map(|(name, job)| Listed {
                    name: name.clone(),
                    schedule: job.schedule.clone(),
                    next: job.next,
                    last_fire: core.last_fires.get(name).copied(),
                })
                .collect();
            (core.tz, listed)
        };
        let mut status: HashMap<Arc<str>, (Option<RunRecord>, bool)> = {
            let runs = lock(&self.runs);
            let mut latest: HashMap<&str, &RunRecord> = HashMap::new();
            for r in &runs.history {
                latest.insert(&r.name, r);
            }
            listed
                .iter()
                .map(|l| {
                    let last_run = latest.get(&*l.name).map(|r| (*r).clone());
                    (
                        l.name.clone(),
                        (last_run, runs.running.contains_key(&l.name)),
                    )
                })
                .collect()
        };
        let mut out: Vec<JobInfo> = listed
            .into_iter()
            .map(|l| {
                let mut times = Vec::new();
                if let Some(first) = l.next {
                    if next > 0 {
                        times.push(first);
                        times.extend(l.schedule.upcoming(first, tz, next - 1));
                    }
                }
                let (last_run, running) = status.remove(&l.name).unwrap_or_default();
                JobInfo {
                    name: l.name.to_string(),
                    expression: l.schedule.as_str().to_owned(),
                    timezone: tz,
                    next: times,
                    last_run,
                    last_fire: l.last_fire,
                    running,
                }
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Recent runs and skips, oldest first, at most the configured history limit.
    pub fn history(&self) -> Vec<RunRecord> {
        lock(&self.runs).history.iter().cloned().collect()
    }

    /// Diagnostics for skills whose schedule does not parse, by name.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        lock(&self.core).diagnostics.values().cloned().collect()
    }

    /// Problems met on the way (an unusable state file, a failed state write).
    pub fn warnings(&self) -> Vec<String> {
        lock(&self.core).warnings.clone()
    }

    /// The registry generation the jobs follow.
    pub fn generation(&self) -> u64 {
        lock(&self.core).generation
    }

    /// The scheduler's current time (see [`Clock`](crate::Clock)).
    pub fn now(&self) -> DateTime<Utc> {
        lock(&self.core).clock.now()
    }

    /// Stop firing. Runs already dispatched carry on.
    pub fn shutdown(self) {
        self.driver.abort();
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.driver.abort();
    }
}
