//! The running scheduler: a tokio task that keeps one job per scheduled skill, follows the
//! registry's change sets, fires into a [`Dispatcher`], and records what happened.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Duration, SubsecRound, Utc};
use chrono_tz::Tz;
use skill_format::Diagnostic;
use skill_registry::{ChangeSet, Registry, Skill, Snapshot, Subscription};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::jobs::{parse_skill_schedule, schedule_diagnostic};
use crate::{Error, Schedule, state};

/// Run history kept when the configuration does not say otherwise.
pub const DEFAULT_HISTORY_LIMIT: usize = 1000;

/// The most run records a scheduler keeps, whatever the configuration asks.
pub const MAX_HISTORY_LIMIT: usize = 100_000;

/// How many missed fire instants [`CatchUp::RunOnceOnStart`] walks through to find the
/// latest one; past this many (an every-second job down for days) it uses the last reached.
/// Either way the job runs once: its next fire is then looked for after the current second.
pub const MAX_CATCH_UP_SCAN: usize = 100_000;

/// How many warnings [`Scheduler::warnings`] keeps (the newest); each is also logged
/// through `tracing` when it happens.
pub const MAX_WARNINGS: usize = 100;

/// Longest the driver sleeps on the system clock before looking at the wall clock again,
/// so that a clock step (NTP, suspend) delays a fire by at most this much.
const MAX_SYSTEM_SLEEP: std::time::Duration = std::time::Duration::from_secs(30);

/// Longest the driver sleeps with no job at all.
const IDLE_SLEEP: std::time::Duration = std::time::Duration::from_secs(3600);

/// How long before a fire instant the driver writes (and fsyncs) the state file that
/// records it, so the write's latency is not part of the fire's lateness.
///
/// Well under the shortest gap between two instants of one job (one second, for six-field
/// expressions), so a write ahead records at most the next instant of each job. A crash
/// between the write and the instant loses that instant's fires and never repeats them,
/// as a crash between a write and the runs always could; the window is this much longer.
/// A fire whose instant comes less than this after it is queued (a job added or changed
/// just before it) is written when it is queued, or when it is due at the latest; a write
/// that takes longer than this makes the fire late, never early.
pub const STATE_WRITE_LEAD: std::time::Duration = std::time::Duration::from_millis(100);

/// One fire of one job, as handed to the [`Dispatcher`].
#[derive(Debug, Clone)]
pub struct Fire {
    /// The skill's name.
    pub name: String,
    /// The instant the schedule named (the run may start a little later).
    pub scheduled: DateTime<Utc>,
    /// The registry snapshot generation the skill was taken from.
    pub generation: u64,
    /// The skill as that generation holds it: the version current at fire time.
    pub skill: Arc<Skill>,
}

/// What a dispatched run returns: `Ok` or a message saying why it failed.
pub type RunResult = Result<(), String>;

/// The future a [`Dispatcher`] returns.
pub type DispatchFuture = Pin<Box<dyn Future<Output = RunResult> + Send + 'static>>;

/// Carries out a fired job. The runtime implements it (executing the skill, or handing a
/// model-driven skill to the host); tests use a recording one.
pub trait Dispatcher: Send + Sync + 'static {
    /// Start the run for `fire`. Called on the scheduler's task with no lock held (so it
    /// may call back into the [`Scheduler`]), and should return quickly: the work belongs
    /// in the returned future, which runs on its own tokio task. While it is pending,
    /// further fires of the same skill are skipped and recorded as such.
    fn dispatch(&self, fire: Fire) -> DispatchFuture;
}

/// What to do about fires missed while the process was not running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatchUp {
    /// Do not replay them; the next fire is the next instant from now (the default).
    #[default]
    Skip,
    /// Run a job once at start when the state file shows it missed at least one fire
    /// (reported with the latest missed instant); never more than once.
    RunOnceOnStart,
}

/// Where the scheduler's idea of "now" comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// The system's wall clock (production).
    #[default]
    System,
    /// Wall time starts at this instant and advances with tokio's clock: with tokio's
    /// paused test clock, time moves only when the test advances it.
    StartingAt(DateTime<Utc>),
}

/// How a scheduler runs.
#[derive(Debug, Clone)]
pub struct SchedulerConfig {
    /// The zone schedules are read in (default UTC). See [`parse_timezone`].
    pub timezone: Tz,
    /// Where last fires are persisted; `None` keeps them in memory only.
    pub state_path: Option<PathBuf>,
    /// Missed-fire policy.
    pub catch_up: CatchUp,
    /// How many run records to keep (clamped to 1..=[`MAX_HISTORY_LIMIT`]).
    pub history_limit: usize,
    /// The clock.
    pub clock: Clock,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            timezone: Tz::UTC,
            state_path: None,
            catch_up: CatchUp::Skip,
            history_limit: DEFAULT_HISTORY_LIMIT,
            clock: Clock::System,
        }
    }
}

/// Parse an IANA zone name (`Europe/Berlin`, `UTC`).
pub fn parse_timezone(name: &str) -> Result<Tz, Error> {
    name.parse::<Tz>()
        .map_err(|_| Error::UnknownTimezone(name.to_owned()))
}

/// How a run ended (or that it did not start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Dispatched and not finished yet.
    Running,
    /// The dispatcher returned `Ok`.
    Succeeded,
    /// The dispatcher returned an error, or its task ended without an answer.
    Failed(String),
    /// Not started: the previous run of the same skill was still going.
    SkippedOverlap,
}

impl Outcome {
    /// A short lowercase word for output: running, succeeded, failed, skipped-overlap.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Running => "running",
            Outcome::Succeeded => "succeeded",
            Outcome::Failed(_) => "failed",
            Outcome::SkippedOverlap => "skipped-overlap",
        }
    }
}

/// One entry of the run history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRecord {
    /// Increasing id of the record.
    pub id: u64,
    /// The skill's name.
    pub name: String,
    /// The instant the schedule named.
    pub scheduled: DateTime<Utc>,
    /// When the scheduler acted on it.
    pub started: DateTime<Utc>,
    /// When the run finished, once it has.
    pub finished: Option<DateTime<Utc>>,
    /// The snapshot generation the skill was taken from.
    pub generation: u64,
    /// How it went.
    pub outcome: Outcome,
}

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

/// The wall clock as configured, anchored to tokio's clock for [`Clock::StartingAt`].
#[derive(Debug, Clone, Copy)]
struct WallClock {
    kind: Clock,
    anchor: tokio::time::Instant,
}

impl WallClock {
    fn now(&self) -> DateTime<Utc> {
        match self.kind {
            Clock::System => Utc::now(),
            Clock::StartingAt(start) => {
                let elapsed = tokio::time::Instant::now().saturating_duration_since(self.anchor);
                start + Duration::from_std(elapsed).unwrap_or(Duration::MAX)
            }
        }
    }
}

struct Job {
    /// Shared so [`Scheduler::jobs`] can copy it cheaply under the lock.
    schedule: Arc<Schedule>,
    skill: Arc<Skill>,
    next: Option<DateTime<Utc>>,
}

/// One job's state as [`Scheduler::jobs`] copies it under the lock.
struct Listed {
    name: Arc<str>,
    schedule: Arc<Schedule>,
    next: Option<DateTime<Utc>>,
    last_fire: Option<DateTime<Utc>>,
}

/// Jobs and their queue (the driver's side).
struct Core {
    tz: Tz,
    clock: WallClock,
    generation: u64,
    jobs: HashMap<Arc<str>, Job>,
    queue: BTreeSet<(DateTime<Utc>, Arc<str>)>,
    last_fires: BTreeMap<Arc<str>, DateTime<Utc>>,
    /// Queued fires the state file already records (written ahead, see
    /// [`STATE_WRITE_LEAD`]) and that have not fired yet: job name to instant. An entry
    /// stands only while it is the job's queued fire ([`Core::retire_written_ahead`]).
    written_ahead: HashMap<Arc<str>, DateTime<Utc>>,
    diagnostics: BTreeMap<String, Diagnostic>,
    state_path: Option<PathBuf>,
    warnings: Vec<String>,
}

/// Runs going and the history (shared with the run tasks, so they never wait on the jobs).
struct Runs {
    clock: WallClock,
    running: HashSet<Arc<str>>,
    history: VecDeque<RunRecord>,
    history_limit: usize,
    next_id: u64,
}

/// A fire taken off the queue, not yet dispatched.
struct Due {
    name: Arc<str>,
    scheduled: DateTime<Utc>,
    skill: Arc<Skill>,
    generation: u64,
    /// The state file already records this fire (it was written ahead of the instant).
    written_ahead: bool,
}

/// A state file write to do: the file, and the instant to record for each skill.
type StateWrite = (PathBuf, Vec<(Arc<str>, DateTime<Utc>)>);

/// [`STATE_WRITE_LEAD`] as a wall-clock span.
fn lead() -> Duration {
    Duration::from_std(STATE_WRITE_LEAD).unwrap_or_else(|_| Duration::zero())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
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
        let clock = WallClock {
            kind: config.clock,
            anchor: tokio::time::Instant::now(),
        };
        let mut core = Core {
            tz: config.timezone,
            clock,
            generation: 0,
            jobs: HashMap::new(),
            queue: BTreeSet::new(),
            last_fires: loaded
                .last_fires
                .into_iter()
                .map(|(k, v)| (Arc::from(k), v))
                .collect(),
            written_ahead: HashMap::new(),
            diagnostics: BTreeMap::new(),
            state_path: config.state_path,
            warnings: Vec::new(),
        };
        for w in loaded.warnings {
            core.warn(w);
        }
        let snapshot = registry.snapshot();
        core.sync_full(&snapshot);
        if config.catch_up == CatchUp::RunOnceOnStart {
            core.schedule_catch_up();
        }
        let runs = Runs {
            clock,
            running: HashSet::new(),
            history: VecDeque::new(),
            history_limit: config.history_limit.clamp(1, MAX_HISTORY_LIMIT),
            next_id: 1,
        };
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
                    (l.name.clone(), (last_run, runs.running.contains(&l.name)))
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

    /// The scheduler's current time (see [`Clock`]).
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

async fn drive(
    core: Arc<Mutex<Core>>,
    runs: Arc<Mutex<Runs>>,
    dispatcher: Arc<dyn Dispatcher>,
    registry: Arc<Registry>,
    mut rx: mpsc::UnboundedReceiver<ChangeSet>,
) {
    let mut channel_open = true;
    loop {
        let (due, save, save_first) = {
            let mut c = lock(&core);
            // Use the skill as it is now: apply reloads not yet seen before firing.
            while let Ok(cs) = rx.try_recv() {
                c.apply(&cs);
            }
            let current = registry.snapshot();
            if current.generation() > c.generation {
                c.sync_full(&current);
            }
            let due = c.take_due();
            // Fires the state file does not record yet (no state file, a job queued within
            // the lead of its instant, a stalled driver) are written before they start.
            let save_first = due.iter().any(|d| !d.written_ahead);
            let ahead = c.write_ahead();
            let save = if save_first || ahead {
                c.prepare_save()
            } else {
                None
            };
            (due, save, save_first)
        };
        // A fire's instant reaches the disk before its run starts, so a crash in between
        // can not fire it again: written ahead of the instant when it can be (the runs due
        // now go first then), just before the runs otherwise. Outside the lock.
        if save_first {
            save_state(&core, save.as_ref());
        }
        if !due.is_empty() {
            launch(due, &runs, dispatcher.as_ref());
        }
        if !save_first {
            save_state(&core, save.as_ref());
        }
        let wake = lock(&core).wake_deadline();
        if channel_open {
            tokio::select! {
                biased;
                msg = rx.recv() => match msg {
                    Some(cs) => lock(&core).apply(&cs),
                    None => channel_open = false,
                },
                () = tokio::time::sleep_until(wake) => {}
            }
        } else {
            tokio::time::sleep_until(wake).await;
        }
    }
}

/// Write the state file, if there is one and something to write; a failure is a warning
/// and the fires go ahead.
fn save_state(core: &Mutex<Core>, save: Option<&StateWrite>) {
    if let Some((path, entries)) = save {
        if let Err(e) = state::save(path, entries.iter().map(|(k, v)| (&**k, *v))) {
            lock(core).warn(e.to_string());
        }
    }
}

/// Start (or skip, when one is still going) the run of each due fire.
fn launch(due: Vec<Due>, runs: &Arc<Mutex<Runs>>, dispatcher: &dyn Dispatcher) {
    let mut starts = Vec::with_capacity(due.len());
    {
        let mut r = lock(runs);
        let now = r.clock.now();
        for d in due {
            let mut record = RunRecord {
                id: 0,
                name: d.name.to_string(),
                scheduled: d.scheduled,
                started: now,
                finished: None,
                generation: d.generation,
                outcome: Outcome::Running,
            };
            if r.running.contains(&d.name) {
                record.outcome = Outcome::SkippedOverlap;
                record.finished = Some(now);
                r.push(record);
                continue;
            }
            let id = r.push(record);
            r.running.insert(d.name.clone());
            starts.push((d, id));
        }
    }
    for (d, id) in starts {
        let run = dispatcher.dispatch(Fire {
            name: d.name.to_string(),
            scheduled: d.scheduled,
            generation: d.generation,
            skill: d.skill,
        });
        let guard = RunGuard {
            runs: runs.clone(),
            name: d.name,
            id,
            result: None,
        };
        tokio::spawn(async move {
            let mut guard = guard;
            guard.result = Some(run.await);
        });
    }
}

impl Core {
    /// When the driver should look again: at the first queued instant, or
    /// [`STATE_WRITE_LEAD`] before the first one the state file does not record yet,
    /// whichever comes first.
    fn wake_deadline(&self) -> tokio::time::Instant {
        let now_tokio = tokio::time::Instant::now();
        let Some((first, _)) = self.queue.first() else {
            return now_tokio + IDLE_SLEEP;
        };
        let mut at = *first;
        if self.state_path.is_some() {
            let unwritten = self
                .queue
                .iter()
                .find(|(t, name)| self.written_ahead.get(name) != Some(t));
            if let Some((t, _)) = unwritten {
                at = at.min(*t - lead());
            }
        }
        let wait = (at - self.clock.now()).to_std().unwrap_or_default();
        let wait = match self.clock.kind {
            Clock::System => wait.min(MAX_SYSTEM_SLEEP),
            Clock::StartingAt(_) => wait.min(IDLE_SLEEP),
        };
        now_tokio + wait
    }

    /// The instant after which a (re)scheduled job's next fire is looked for: its last fire,
    /// or the second before the current one, whichever is later, so a fire instant within
    /// the current second still counts and one already fired never repeats.
    fn lower_bound(&self, name: &str) -> DateTime<Utc> {
        let floor = self.floor();
        match self.last_fires.get(name) {
            Some(last) if *last > floor => *last,
            _ => floor,
        }
    }

    /// The second before the current one: a (re)scheduled job's fires are looked for
    /// after it at the earliest.
    fn floor(&self) -> DateTime<Utc> {
        self.clock.now().trunc_subsecs(0) - Duration::seconds(1)
    }

    fn unqueue(&mut self, name: &Arc<str>) {
        if let Some(job) = self.jobs.get(name) {
            if let Some(t) = job.next {
                self.queue.remove(&(t, name.clone()));
            }
        }
    }

    /// Bring one name in line with `snapshot`.
    fn sync_name(&mut self, name: &str, snapshot: &Snapshot) {
        let key: Arc<str> = match self.jobs.get_key_value(name) {
            Some((k, _)) => k.clone(),
            None => Arc::from(name),
        };
        let skill = snapshot.get(name);
        let parsed = skill.and_then(|s| parse_skill_schedule(s).map(|p| (s, p)));
        match parsed {
            None => {
                self.unqueue(&key);
                self.jobs.remove(&key);
                self.diagnostics.remove(name);
            }
            Some((skill, Err(e))) => {
                self.unqueue(&key);
                self.jobs.remove(&key);
                self.diagnostics
                    .insert(name.to_owned(), schedule_diagnostic(skill, &e));
            }
            Some((skill, Ok(schedule))) => {
                self.diagnostics.remove(name);
                if let Some(job) = self.jobs.get_mut(&key) {
                    job.skill = skill.clone();
                    if *job.schedule == schedule {
                        // Same schedule: the queued fire stands, so a reload landing on a
                        // fire instant neither repeats nor drops it.
                        return;
                    }
                }
                self.unqueue(&key);
                let next = schedule.next_after(self.lower_bound(name), self.tz);
                if let Some(t) = next {
                    self.queue.insert((t, key.clone()));
                }
                self.jobs.insert(
                    key,
                    Job {
                        schedule: Arc::new(schedule),
                        skill: skill.clone(),
                        next,
                    },
                );
            }
        }
    }

    /// Compare every job and every scheduled skill with `snapshot`.
    fn sync_full(&mut self, snapshot: &Arc<Snapshot>) {
        // Names that may go away first, then every scheduled skill of the snapshot.
        let mut gone: Vec<String> = self
            .jobs
            .keys()
            .map(|k| k.to_string())
            .chain(self.diagnostics.keys().cloned())
            .filter(|name| snapshot.get(name).is_none())
            .collect();
        gone.dedup();
        for name in gone {
            self.sync_name(&name, snapshot);
        }
        for skill in snapshot.skills() {
            if skill.manifest.schedule.is_some()
                || self.jobs.contains_key(skill.name.as_str())
                || self.diagnostics.contains_key(&skill.name)
            {
                self.sync_name(&skill.name, snapshot);
            }
        }
        self.generation = snapshot.generation();
    }

    /// Apply one change set: only the names it lists when it follows on from the
    /// generation the jobs are at, everything otherwise.
    fn apply(&mut self, cs: &ChangeSet) {
        if cs.generation <= self.generation {
            return;
        }
        if cs.previous_generation != self.generation {
            self.sync_full(&cs.snapshot);
            return;
        }
        for name in cs.added.iter().chain(&cs.changed).chain(&cs.removed) {
            self.sync_name(name, &cs.snapshot);
        }
        self.generation = cs.generation;
    }

    /// For [`CatchUp::RunOnceOnStart`]: queue a job now, once, if it missed fires.
    fn schedule_catch_up(&mut self) {
        let floor = self.floor();
        let names: Vec<Arc<str>> = self.jobs.keys().cloned().collect();
        for name in names {
            let Some(last) = self.last_fires.get(&name).copied() else {
                continue;
            };
            let Some(job) = self.jobs.get(&name) else {
                continue;
            };
            let mut latest = None;
            let mut t = last;
            for _ in 0..MAX_CATCH_UP_SCAN {
                match job.schedule.next_after(t, self.tz) {
                    Some(n) if n <= floor => {
                        latest = Some(n);
                        t = n;
                    }
                    _ => break,
                }
            }
            if let Some(missed) = latest {
                self.unqueue(&name);
                if let Some(job) = self.jobs.get_mut(&name) {
                    job.next = Some(missed);
                }
                self.queue.insert((missed, name));
            }
        }
    }

    /// Take every fire whose instant has come off the queue, queue each job's next fire,
    /// and record the last fires. Written-ahead entries that no longer stand are dropped
    /// first ([`Core::retire_written_ahead`]), so call it after applying change sets.
    ///
    /// A job fires at most once per call: its next fire is the first instant after the one
    /// it fires for or the current second, whichever is later. Instants missed in between
    /// (the driver stalled, the machine slept, the clock stepped forward, or a catch-up
    /// fire stood for many) are not replayed one by one: the job runs once, late, and the
    /// run's record shows its scheduled instant beside when it started.
    fn take_due(&mut self) -> Vec<Due> {
        self.retire_written_ahead();
        let now = self.clock.now();
        let current = now.trunc_subsecs(0);
        let mut due = Vec::new();
        while let Some((t, name)) = self.queue.pop_first() {
            if t > now {
                self.queue.insert((t, name));
                break;
            }
            let Some(job) = self.jobs.get_mut(&name) else {
                continue;
            };
            let next = job.schedule.next_after(t.max(current), self.tz);
            job.next = next;
            let skill = job.skill.clone();
            if let Some(n) = next {
                self.queue.insert((n, name.clone()));
            }
            self.last_fires.insert(name.clone(), t);
            let written_ahead = self.written_ahead.remove(&name) == Some(t);
            due.push(Due {
                name,
                scheduled: t,
                skill,
                generation: self.generation,
                written_ahead,
            });
        }
        due
    }

    /// Drop the written-ahead entries that are no longer a job's queued fire: the job was
    /// removed, or its schedule changed and its next fire is another instant. That instant
    /// did not fire, so the next write records the job's last fire instead: an entry
    /// written ahead stands for a fire that is starting, and keeping it would leave the
    /// file claiming one that never happened.
    fn retire_written_ahead(&mut self) {
        let jobs = &self.jobs;
        self.written_ahead
            .retain(|name, t| jobs.get(name).is_some_and(|job| job.next == Some(*t)));
    }

    /// With a state file: mark every queued fire due within [`STATE_WRITE_LEAD`] of now
    /// as written ahead. True when one was not yet, so the state file must be written
    /// (with [`Core::prepare_save`]) before that fire's instant.
    fn write_ahead(&mut self) -> bool {
        if self.state_path.is_none() {
            return false;
        }
        let horizon = self.clock.now() + lead();
        let mut new = false;
        for (t, name) in &self.queue {
            if *t > horizon {
                break;
            }
            if self.written_ahead.insert(name.clone(), *t) != Some(*t) {
                new = true;
            }
        }
        new
    }

    /// Forget the last fires of names that are not jobs (removed skills, skills that lost
    /// their schedule, entries of a state file from before), unless the instant is recent
    /// enough to still matter: a job added again looks for its next fire after its last
    /// fire or the second before the current one, whichever is later
    /// ([`Core::lower_bound`]), so an older entry can no longer prevent a repeat. This keeps
    /// the state file to the jobs there are.
    fn prune_last_fires(&mut self) {
        let floor = self.floor();
        let jobs = &self.jobs;
        self.last_fires
            .retain(|name, last| jobs.contains_key(name) || *last > floor);
    }

    /// The state file and its entries, when one is configured: each job's last fire, or
    /// the fire written ahead of its instant when there is one. Last fires of names that
    /// are no longer jobs are dropped first, from memory too ([`Core::prune_last_fires`]).
    fn prepare_save(&mut self) -> Option<StateWrite> {
        self.prune_last_fires();
        let path = self.state_path.clone()?;
        let ahead = &self.written_ahead;
        let mut entries: Vec<(Arc<str>, DateTime<Utc>)> = self
            .last_fires
            .iter()
            .map(|(k, v)| (k.clone(), ahead.get(k).map_or(*v, |a| (*a).max(*v))))
            .collect();
        entries.extend(
            ahead
                .iter()
                .filter(|(k, _)| !self.last_fires.contains_key(*k))
                .map(|(k, v)| (k.clone(), *v)),
        );
        Some((path, entries))
    }

    /// Log a warning and keep it (see [`keep_warning`]).
    fn warn(&mut self, message: String) {
        keep_warning(&mut self.warnings, message, MAX_WARNINGS);
    }
}

impl Runs {
    fn push(&mut self, mut record: RunRecord) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        record.id = id;
        self.history.push_back(record);
        while self.history.len() > self.history_limit {
            self.history.pop_front();
        }
        id
    }

    fn finish(&mut self, name: &Arc<str>, id: u64, result: Option<RunResult>) {
        self.running.remove(name);
        let now = self.clock.now();
        // Ids are consecutive in the history, so the record (if still kept) is found by
        // its distance from the oldest one.
        let Some(first) = self.history.front().map(|r| r.id) else {
            return;
        };
        let Some(index) = id.checked_sub(first).and_then(|i| usize::try_from(i).ok()) else {
            return;
        };
        if let Some(r) = self.history.get_mut(index) {
            r.finished = Some(now);
            r.outcome = match result {
                Some(Ok(())) => Outcome::Succeeded,
                Some(Err(e)) => Outcome::Failed(e),
                None => Outcome::Failed(
                    "the run ended without a result (it panicked or was cancelled)".into(),
                ),
            };
        }
    }
}

/// Records a run's end when its task finishes, however it finishes (a panic in the
/// dispatcher's future drops the guard without a result).
struct RunGuard {
    runs: Arc<Mutex<Runs>>,
    name: Arc<str>,
    id: u64,
    result: Option<RunResult>,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        let result = self.result.take();
        lock(&self.runs).finish(&self.name, self.id, result);
    }
}

/// Log `message` and keep it in `warnings`, unless it repeats the last one; past `max`
/// the oldest is dropped.
fn keep_warning(warnings: &mut Vec<String>, message: String, max: usize) {
    if warnings.last() == Some(&message) {
        return;
    }
    tracing::warn!("scheduler: {message}");
    if warnings.len() >= max {
        let excess = warnings.len() + 1 - max;
        warnings.drain(..excess);
    }
    warnings.push(message);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::expr::utc;
    use skill_registry::{RegistryConfig, Source};

    #[test]
    fn warnings_are_kept_once_in_a_row_and_at_most_max() {
        let mut w = Vec::new();
        keep_warning(&mut w, "a".into(), 3);
        keep_warning(&mut w, "a".into(), 3);
        assert_eq!(w, ["a"]);
        for m in ["b", "c"] {
            keep_warning(&mut w, m.into(), 3);
        }
        assert_eq!(w, ["a", "b", "c"]);
        keep_warning(&mut w, "d".into(), 3);
        assert_eq!(w, ["b", "c", "d"]);
        let mut many: Vec<String> = (0..MAX_WARNINGS).map(|i| i.to_string()).collect();
        keep_warning(&mut many, "last".into(), MAX_WARNINGS);
        assert_eq!(many.len(), MAX_WARNINGS);
        assert_eq!(many.first().map(String::as_str), Some("1"));
    }

    fn write_job(root: &std::path::Path, schedule: &str, body: &str) {
        std::fs::create_dir_all(root.join("jobs")).unwrap();
        std::fs::write(
            root.join("jobs/SKILL.md"),
            "---\ndomain: jobs\ndescription: Jobs\n---\n# Jobs\n",
        )
        .unwrap();
        std::fs::write(
            root.join("jobs/tick.md"),
            format!(
                "---\nname: jobs.tick\ndescription: Tick\nschedule: \"{schedule}\"\n---\n\n{body}\n"
            ),
        )
        .unwrap();
    }

    fn core_at(start: DateTime<Utc>) -> Core {
        Core {
            tz: Tz::UTC,
            clock: WallClock {
                kind: Clock::StartingAt(start),
                anchor: tokio::time::Instant::now(),
            },
            generation: 0,
            jobs: HashMap::new(),
            queue: BTreeSet::new(),
            last_fires: BTreeMap::new(),
            written_ahead: HashMap::new(),
            diagnostics: BTreeMap::new(),
            state_path: None,
            warnings: Vec::new(),
        }
    }

    /// The order the driver cannot be forced into from outside: the change set is applied
    /// at the fire instant *before* the fire is taken.
    #[tokio::test(start_paused = true)]
    async fn reload_applied_just_before_a_fire_fires_it_once_with_the_new_skill() {
        let dir = tempfile::tempdir().unwrap();
        write_job(dir.path(), "* * * * *", "v1");
        let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "t",
        )]));
        let at = utc(2026, 1, 1, 0, 1, 0);
        let mut core = core_at(at);
        core.sync_full(&registry.snapshot());
        assert_eq!(core.queue.first().map(|(t, _)| *t), Some(at));

        write_job(dir.path(), "* * * * *", "v2");
        core.apply(&registry.reload());
        write_job(dir.path(), "*/1 * * * *", "v3");
        core.apply(&registry.reload());
        let due = core.take_due();
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].scheduled, at);
        assert_eq!(due[0].generation, 3);
        assert!(due[0].skill.body.contains("v3"));

        // Another reload on the same instant, after the fire: nothing fires again.
        write_job(dir.path(), "0-59 * * * *", "v4");
        core.apply(&registry.reload());
        assert!(core.take_due().is_empty());
        assert_eq!(
            core.queue.first().map(|(t, _)| *t),
            Some(utc(2026, 1, 1, 0, 2, 0))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_fixed_schedule_clears_its_diagnostic_and_dropping_it_ends_the_job() {
        let dir = tempfile::tempdir().unwrap();
        write_job(dir.path(), "0 0 31 2 *", "x");
        let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "t",
        )]));
        let mut core = core_at(utc(2026, 1, 1, 0, 0, 0));
        core.sync_full(&registry.snapshot());
        assert_eq!(core.diagnostics.len(), 1);
        assert!(core.jobs.is_empty());
        // The schedule line removed: the skill stays, the diagnostic goes (full resync).
        std::fs::write(
            dir.path().join("jobs/tick.md"),
            "---\nname: jobs.tick\ndescription: Tick\n---\n\nx\n",
        )
        .unwrap();
        registry.reload();
        core.sync_full(&registry.snapshot());
        assert!(core.diagnostics.is_empty());
        assert!(core.jobs.is_empty() && core.queue.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_removed_job_keeps_its_last_fire_only_while_it_can_matter() {
        let dir = tempfile::tempdir().unwrap();
        write_job(dir.path(), "* * * * *", "v1");
        let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "t",
        )]));
        let at = utc(2026, 1, 1, 0, 1, 0);
        let mut core = core_at(at);
        core.sync_full(&registry.snapshot());
        assert_eq!(core.take_due().len(), 1);

        // Removed and added back within the second it fired in: 00:01 does not fire again.
        let file = dir.path().join("jobs/tick.md");
        std::fs::remove_file(&file).unwrap();
        core.apply(&registry.reload());
        assert!(core.jobs.is_empty());
        core.prune_last_fires();
        assert_eq!(core.last_fires.get("jobs.tick"), Some(&at));
        write_job(dir.path(), "* * * * *", "v2");
        core.apply(&registry.reload());
        assert!(core.take_due().is_empty());
        assert_eq!(
            core.queue.first().map(|(t, _)| *t),
            Some(utc(2026, 1, 1, 0, 2, 0))
        );

        // Removed again: the entry stays until the fire is a whole second old, then goes.
        std::fs::remove_file(&file).unwrap();
        core.apply(&registry.reload());
        tokio::time::advance(std::time::Duration::from_millis(999)).await;
        core.prune_last_fires();
        assert_eq!(core.last_fires.get("jobs.tick"), Some(&at));
        tokio::time::advance(std::time::Duration::from_millis(1)).await;
        core.prune_last_fires();
        assert!(core.last_fires.is_empty());
        // Entries of jobs there are stay, however old.
        write_job(dir.path(), "* * * * *", "v3");
        core.apply(&registry.reload());
        core.last_fires
            .insert(Arc::from("jobs.tick"), utc(2020, 1, 1, 0, 0, 0));
        core.prune_last_fires();
        assert_eq!(core.last_fires.len(), 1);
    }

    #[test]
    fn finished_runs_are_found_by_id_even_after_eviction() {
        let mut runs = Runs {
            clock: WallClock {
                kind: Clock::System,
                anchor: tokio::time::Instant::now(),
            },
            running: HashSet::new(),
            history: VecDeque::new(),
            history_limit: 2,
            next_id: 1,
        };
        let record = |n: &str| RunRecord {
            id: 0,
            name: n.to_owned(),
            scheduled: utc(2026, 1, 1, 0, 0, 0),
            started: utc(2026, 1, 1, 0, 0, 0),
            finished: None,
            generation: 1,
            outcome: Outcome::Running,
        };
        let name: Arc<str> = Arc::from("a");
        let first = runs.push(record("a"));
        runs.push(record("b"));
        let third = runs.push(record("c"));
        assert_eq!(runs.history.len(), 2);
        // The evicted record's end changes nothing; the kept one is updated.
        runs.finish(&name, first, Some(Ok(())));
        runs.finish(&name, third, Some(Err("no".into())));
        assert_eq!(runs.history[0].outcome, Outcome::Running);
        assert_eq!(runs.history[1].outcome, Outcome::Failed("no".into()));
    }
}
