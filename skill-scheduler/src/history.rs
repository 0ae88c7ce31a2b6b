//! Run history: what became of each fire ([`RunRecord`], [`Outcome`]), bounded, and the
//! runs going now. Shared with the run tasks, which record their end without waiting on
//! the jobs.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use crate::config::{MAX_HISTORY_LIMIT, WallClock};
use crate::dispatch::RunResult;
use crate::lock;

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
    /// The replica that ran it, when several replicas share the schedules (`None`: this
    /// process, alone).
    pub replica: Option<String>,
}

/// Runs going and the history (shared with the run tasks, so they never wait on the jobs).
pub(crate) struct Runs {
    pub(crate) clock: WallClock,
    /// Skills with a run going, with how many (more than one only when the dispatcher
    /// decides overlaps itself: [`Dispatcher::decides_overlap`](crate::Dispatcher::decides_overlap)).
    pub(crate) running: HashMap<Arc<str>, usize>,
    /// The records, oldest first, with consecutive ids.
    pub(crate) history: VecDeque<RunRecord>,
    history_limit: usize,
    next_id: u64,
}

impl Runs {
    /// No runs yet; at most `history_limit` records kept (clamped to
    /// 1..=[`MAX_HISTORY_LIMIT`]).
    pub(crate) fn new(clock: WallClock, history_limit: usize) -> Self {
        Runs {
            clock,
            running: HashMap::new(),
            history: VecDeque::new(),
            history_limit: history_limit.clamp(1, MAX_HISTORY_LIMIT),
            next_id: 1,
        }
    }

    /// Add a record, giving it the next id (returned); the oldest go past the limit.
    pub(crate) fn push(&mut self, mut record: RunRecord) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        record.id = id;
        self.history.push_back(record);
        while self.history.len() > self.history_limit {
            self.history.pop_front();
        }
        id
    }

    /// Record the end of run `id` of `name`, if its record is still kept.
    pub(crate) fn finish(&mut self, name: &Arc<str>, id: u64, result: Option<RunResult>) {
        if let Some(n) = self.running.get_mut(name) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.running.remove(name);
            }
        }
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
pub(crate) struct RunGuard {
    pub(crate) runs: Arc<Mutex<Runs>>,
    pub(crate) name: Arc<str>,
    pub(crate) id: u64,
    pub(crate) result: Option<RunResult>,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        let result = self.result.take();
        lock(&self.runs).finish(&self.name, self.id, result);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::config::Clock;
    use crate::expr::utc;

    #[test]
    fn finished_runs_are_found_by_id_even_after_eviction() {
        let mut runs = Runs::new(WallClock::new(Clock::System), 2);
        let record = |n: &str| RunRecord {
            id: 0,
            name: n.to_owned(),
            scheduled: utc(2026, 1, 1, 0, 0, 0),
            started: utc(2026, 1, 1, 0, 0, 0),
            finished: None,
            generation: 1,
            outcome: Outcome::Running,
            replica: None,
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
