//! The jobs and their fire queue (the driver's side): one job per loaded skill with a valid
//! schedule, kept in step with the registry's change sets, the last fire of each, and what
//! the state file must record before a fire's instant (see the crate docs, *Write order*).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Duration, SubsecRound, Utc};
use chrono_tz::Tz;
use skill_format::Diagnostic;
use skill_registry::{ChangeSet, Skill, Snapshot};

use crate::config::{Clock, WallClock};
use crate::expr::Schedule;
use crate::jobs::{parse_skill_schedule, schedule_diagnostic};

/// How many missed fire instants [`CatchUp::RunOnceOnStart`](crate::CatchUp::RunOnceOnStart) walks through to find the
/// latest one; past this many (an every-second job down for days) it uses the last reached.
/// Either way the job runs once: its next fire is then looked for after the current second.
pub const MAX_CATCH_UP_SCAN: usize = 100_000;

/// How many warnings [`Scheduler::warnings`](crate::Scheduler::warnings) keeps (the newest); each is also logged
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

/// One scheduled skill.
pub(crate) struct Job {
    /// Shared so [`Scheduler::jobs`](crate::Scheduler::jobs) can copy it cheaply under the lock.
    pub(crate) schedule: Arc<Schedule>,
    skill: Arc<Skill>,
    /// Its queued fire.
    pub(crate) next: Option<DateTime<Utc>>,
}

/// Jobs and their queue (the driver's side).
pub(crate) struct Core {
    pub(crate) tz: Tz,
    pub(crate) clock: WallClock,
    pub(crate) generation: u64,
    pub(crate) jobs: HashMap<Arc<str>, Job>,
    queue: BTreeSet<(DateTime<Utc>, Arc<str>)>,
    pub(crate) last_fires: BTreeMap<Arc<str>, DateTime<Utc>>,
    /// Queued fires the state file already records (written ahead, see
    /// [`STATE_WRITE_LEAD`]) and that have not fired yet: job name to instant. An entry
    /// stands only while it is the job's queued fire ([`Core::retire_written_ahead`]).
    written_ahead: HashMap<Arc<str>, DateTime<Utc>>,
    pub(crate) diagnostics: BTreeMap<String, Diagnostic>,
    state_path: Option<PathBuf>,
    pub(crate) warnings: Vec<String>,
}

/// A fire taken off the queue, not yet dispatched.
pub(crate) struct Due {
    pub(crate) name: Arc<str>,
    pub(crate) scheduled: DateTime<Utc>,
    pub(crate) skill: Arc<Skill>,
    pub(crate) generation: u64,
    /// The state file already records this fire (it was written ahead of the instant).
    pub(crate) written_ahead: bool,
}

/// A state file write to do: the file, and the instant to record for each skill.
pub(crate) type StateWrite = (PathBuf, Vec<(Arc<str>, DateTime<Utc>)>);

/// [`STATE_WRITE_LEAD`] as a wall-clock span.
fn lead() -> Duration {
    Duration::from_std(STATE_WRITE_LEAD).unwrap_or_else(|_| Duration::zero())
}

impl Core {
    /// No jobs yet, in zone `tz`, with the last fires read from the state file.
    pub(crate) fn new(
        tz: Tz,
        clock: WallClock,
        last_fires: BTreeMap<Arc<str>, DateTime<Utc>>,
        state_path: Option<PathBuf>,
    ) -> Self {
        Core {
            tz,
            clock,
            generation: 0,
            jobs: HashMap::new(),
            queue: BTreeSet::new(),
            last_fires,
            written_ahead: HashMap::new(),
            diagnostics: BTreeMap::new(),
            state_path,
            warnings: Vec::new(),
        }
    }

    /// When the driver should look again: at the first queued instant, or
    /// [`STATE_WRITE_LEAD`] before the first one the state file does not record yet,
    /// whichever comes first.
    pub(crate) fn wake_deadline(&self) -> tokio::time::Instant {
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
    pub(crate) fn sync_full(&mut self, snapshot: &Arc<Snapshot>) {
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
    pub(crate) fn apply(&mut self, cs: &ChangeSet) {
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

    /// For [`CatchUp::RunOnceOnStart`](crate::CatchUp::RunOnceOnStart): queue a job now, once, if it missed fires.
    pub(crate) fn schedule_catch_up(&mut self) {
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
    pub(crate) fn take_due(&mut self) -> Vec<Due> {
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
    pub(crate) fn write_ahead(&mut self) -> bool {
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
    pub(crate) fn prepare_save(&mut self) -> Option<StateWrite> {
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
    pub(crate) fn warn(&mut self, message: String) {
        keep_warning(&mut self.warnings, message, MAX_WARNINGS);
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
    use crate::config::Clock;
    use crate::expr::utc;
    use skill_registry::{Registry, RegistryConfig, Source};

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
        Core::new(
            Tz::UTC,
            WallClock::new(Clock::StartingAt(start)),
            BTreeMap::new(),
            None,
        )
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
}
