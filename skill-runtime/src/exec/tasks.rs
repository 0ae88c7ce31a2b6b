//! Forked tasks (`context: fork`): ids, status, results, bounded concurrency and history.
//!
//! The history is bounded by count (`RuntimeConfig::task_history`) and by bytes: a kept
//! result's output holds at most [`MAX_TASK_OUTPUT_BYTES`] (cut with a marker that says
//! so), and once the kept results together hold more than [`TASK_HISTORY_BYTES`] the
//! oldest finished tasks are dropped first.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::{Semaphore, watch};
use tokio::task::AbortHandle;

use crate::exec::budget;
use crate::exec::{Error, Outcome};

/// Most bytes of output (the text of it, see the `budget` module) a finished task's result
/// keeps; a longer one is cut with a marker that names this limit. As much as a script may
/// write ([`MAX_SCRIPT_OUTPUT_BYTES`](crate::exec::MAX_SCRIPT_OUTPUT_BYTES)).
pub(crate) const MAX_TASK_OUTPUT_BYTES: usize = 1024 * 1024;
/// Most bytes of output the kept results of finished tasks hold together; past it the
/// oldest finished tasks are dropped first (as past the history's count).
pub(crate) const TASK_HISTORY_BYTES: usize = 64 * 1024 * 1024;

/// Where a forked task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    /// Waiting for a free slot (the fork concurrency bound).
    Queued,
    /// Running.
    Running,
    /// Finished with an outcome that is `ok`.
    Succeeded,
    /// Finished with an outcome that is not `ok`.
    Failed,
    /// Cancelled ([`Runtime::cancel_task`] or shutdown) before it finished.
    ///
    /// [`Runtime::cancel_task`]: crate::exec::Runtime::cancel_task
    Cancelled,
}

impl TaskStatus {
    /// Its stable snake_case name (`queued`, `running`, `succeeded`, `failed`,
    /// `cancelled`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Queued => "queued",
            TaskStatus::Running => "running",
            TaskStatus::Succeeded => "succeeded",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the task is over.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            TaskStatus::Succeeded | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// A forked task as listed and fetched.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskInfo {
    /// Its id (increasing from 1).
    pub id: u64,
    /// The skill it runs.
    pub skill: String,
    /// Where it is.
    pub status: TaskStatus,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it started running.
    pub started_ms: Option<u64>,
    /// When it finished.
    pub finished_ms: Option<u64>,
    /// Its result, once finished.
    pub outcome: Option<Outcome>,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

struct Entry {
    info: TaskInfo,
    /// The bytes of its result's output, once finished (counted in `Table::bytes`).
    bytes: usize,
    status: watch::Sender<TaskStatus>,
    abort: Option<AbortHandle>,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    entries: BTreeMap<u64, Entry>,
    finished: VecDeque<u64>,
    /// The bytes of the kept results' outputs together.
    bytes: usize,
}

/// The task table and the concurrency bound.
pub(crate) struct Tasks {
    table: Mutex<Table>,
    pub(crate) slots: Arc<Semaphore>,
    max_pending: usize,
    history: usize,
    history_bytes: usize,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("slots", &self.slots.available_permits())
            .finish_non_exhaustive()
    }
}

impl Tasks {
    pub(crate) fn new(concurrency: usize, max_pending: usize, history: usize) -> Self {
        Tasks::with_budget(concurrency, max_pending, history, TASK_HISTORY_BYTES)
    }

    /// [`Tasks::new`] with a byte budget for the kept results.
    fn with_budget(
        concurrency: usize,
        max_pending: usize,
        history: usize,
        history_bytes: usize,
    ) -> Self {
        Tasks {
            table: Mutex::new(Table {
                next_id: 1,
                ..Table::default()
            }),
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            max_pending: max_pending.max(1),
            history: history.max(1),
            history_bytes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        match self.table.lock() {
            Ok(t) => t,
            Err(p) => p.into_inner(),
        }
    }

    /// Register a new queued task, or refuse when too many are pending.
    pub(crate) fn create(&self, skill: &str) -> Result<u64, Error> {
        let mut t = self.lock();
        let pending = t
            .entries
            .values()
            .filter(|e| !e.info.status.is_finished())
            .count();
        if pending >= self.max_pending {
            return Err(Error::TooManyTasks {
                pending,
                limit: self.max_pending,
            });
        }
        let id = t.next_id;
        t.next_id += 1;
        let (status, _) = watch::channel(TaskStatus::Queued);
        t.entries.insert(
            id,
            Entry {
                info: TaskInfo {
                    id,
                    skill: skill.to_owned(),
                    status: TaskStatus::Queued,
                    created_ms: now_ms(),
                    started_ms: None,
                    finished_ms: None,
                    outcome: None,
                },
                bytes: 0,
                status,
                abort: None,
            },
        );
        Ok(id)
    }

    pub(crate) fn set_abort(&self, id: u64, abort: AbortHandle) {
        let mut t = self.lock();
        match t.entries.get_mut(&id) {
            Some(e) if !e.info.status.is_finished() => e.abort = Some(abort),
            // Cancelled before the handle arrived: stop it now.
            _ => abort.abort(),
        }
    }

    /// Mark running; false when the task was cancelled meanwhile.
    pub(crate) fn start(&self, id: u64) -> bool {
        let mut t = self.lock();
        let Some(e) = t.entries.get_mut(&id) else {
            return false;
        };
        if e.info.status != TaskStatus::Queued {
            return false;
        }
        e.info.status = TaskStatus::Running;
        e.info.started_ms = Some(now_ms());
        e.status.send_replace(TaskStatus::Running);
        true
    }

    /// Record the end of a task (first end wins) and trim the history.
    pub(crate) fn finish(&self, id: u64, status: TaskStatus, outcome: Outcome) {
        let mut t = self.lock();
        let Some(e) = t.entries.get_mut(&id) else {
            return;
        };
        if e.info.status.is_finished() {
            return;
        }
        let (outcome, bytes) = kept(outcome);
        e.info.status = status;
        e.info.finished_ms = Some(now_ms());
        e.info.outcome = Some(outcome);
        e.bytes = bytes;
        e.abort = None;
        e.status.send_replace(status);
        t.bytes += bytes;
        t.finished.push_back(id);
        self.trim(&mut t);
    }

    /// Cancel one task: record it as cancelled and abort it, in one step so a task that
    /// is just starting cannot slip through. False when unknown or already over.
    pub(crate) fn cancel(&self, id: u64, outcome: impl FnOnce(&str) -> Outcome) -> bool {
        let abort = {
            let mut t = self.lock();
            let Some(e) = t.entries.get_mut(&id) else {
                return false;
            };
            if e.info.status.is_finished() {
                return false;
            }
            let abort = e.abort.take();
            let (kept, bytes) = kept(outcome(&e.info.skill));
            e.info.status = TaskStatus::Cancelled;
            e.info.finished_ms = Some(now_ms());
            e.info.outcome = Some(kept);
            e.bytes = bytes;
            e.status.send_replace(TaskStatus::Cancelled);
            t.bytes += bytes;
            t.finished.push_back(id);
            self.trim(&mut t);
            abort
        };
        if let Some(a) = abort {
            a.abort();
        }
        true
    }

    /// Drop the oldest finished tasks while there are more than the history keeps, or
    /// their results hold more than its byte budget (the newest is always kept: a task
    /// just finished can still be fetched).
    fn trim(&self, t: &mut Table) {
        while t.finished.len() > self.history
            || (t.bytes > self.history_bytes && t.finished.len() > 1)
        {
            let Some(old) = t.finished.pop_front() else {
                break;
            };
            if let Some(e) = t.entries.remove(&old) {
                t.bytes = t.bytes.saturating_sub(e.bytes);
            }
        }
    }

    /// Ids of every unfinished task.
    pub(crate) fn unfinished(&self) -> Vec<u64> {
        self.lock()
            .entries
            .values()
            .filter(|e| !e.info.status.is_finished())
            .map(|e| e.info.id)
            .collect()
    }

    /// Every kept task, its result without its output (`null`): a listing stays small
    /// whatever the results hold ([`Tasks::get`] has the output).
    pub(crate) fn list(&self) -> Vec<TaskInfo> {
        self.lock()
            .entries
            .values()
            .map(|e| TaskInfo {
                outcome: e.info.outcome.as_ref().map(without_output),
                skill: e.info.skill.clone(),
                ..e.info
            })
            .collect()
    }

    pub(crate) fn get(&self, id: u64) -> Option<TaskInfo> {
        self.lock().entries.get(&id).map(|e| e.info.clone())
    }

    /// Wait until the task is finished; `None` when it is unknown (or was dropped from
    /// the history meanwhile).
    pub(crate) async fn wait(&self, id: u64) -> Option<TaskInfo> {
        let mut rx = self.lock().entries.get(&id)?.status.subscribe();
        let _ = rx.wait_for(|s| s.is_finished()).await;
        self.get(id)
    }
}

/// A finished task's result as kept: its output cut at [`MAX_TASK_OUTPUT_BYTES`], and the
/// bytes it holds.
fn kept(mut outcome: Outcome) -> (Outcome, usize) {
    budget::truncate(
        &mut outcome.output,
        MAX_TASK_OUTPUT_BYTES,
        &format!(
            "\n[output cut: a forked task's result keeps at most {MAX_TASK_OUTPUT_BYTES} bytes of output (MAX_TASK_OUTPUT_BYTES)]"
        ),
    );
    let bytes = budget::text_bytes(&outcome.output);
    (outcome, bytes)
}

/// An outcome without its output, for a listing.
fn without_output(o: &Outcome) -> Outcome {
    Outcome {
        skill: o.skill.clone(),
        kind: o.kind,
        ok: o.ok,
        output: serde_json::Value::Null,
        requires_interpretation: o.requires_interpretation,
        task: o.task,
        error: o.error.clone(),
        limit: o.limit,
        allowed_tools: o.allowed_tools.clone(),
        duration_ms: o.duration_ms,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::exec::Kind;

    fn text(bytes: usize) -> Outcome {
        Outcome::success(
            "s",
            Kind::Template,
            serde_json::Value::String("a".repeat(bytes)),
        )
    }

    fn finished(tasks: &Tasks, outcome: Outcome) -> u64 {
        let id = tasks.create("s").unwrap();
        assert!(tasks.start(id));
        tasks.finish(id, TaskStatus::Succeeded, outcome);
        id
    }

    #[test]
    fn a_kept_output_is_cut_at_its_limit_with_a_marker() {
        let tasks = Tasks::new(1, 10, 10);
        let at = finished(&tasks, text(MAX_TASK_OUTPUT_BYTES));
        let kept = tasks.get(at).unwrap().outcome.unwrap().output;
        assert_eq!(
            kept.as_str().unwrap().len(),
            MAX_TASK_OUTPUT_BYTES,
            "at the limit: whole"
        );
        let over = finished(&tasks, text(MAX_TASK_OUTPUT_BYTES + 1));
        let kept = tasks.get(over).unwrap().outcome.unwrap().output;
        let kept = kept.as_str().unwrap();
        assert!(kept.starts_with(&"a".repeat(MAX_TASK_OUTPUT_BYTES)));
        assert!(
            kept.ends_with("(MAX_TASK_OUTPUT_BYTES)]"),
            "{}",
            &kept[kept.len() - 120..]
        );
        assert!(kept.len() < MAX_TASK_OUTPUT_BYTES + 200);
    }

    #[test]
    fn the_oldest_results_go_once_the_history_holds_more_bytes_than_its_budget() {
        let tasks = Tasks::with_budget(1, 10, 10, 300);
        let a = finished(&tasks, text(100));
        let b = finished(&tasks, text(100));
        let c = finished(&tasks, text(100));
        // Exactly at the budget: all kept.
        assert_eq!(tasks.list().len(), 3);
        let d = finished(&tasks, text(1));
        assert!(tasks.get(a).is_none(), "the oldest goes first");
        for id in [b, c, d] {
            assert!(tasks.get(id).is_some());
        }
        // A result larger than the whole budget is the only one left.
        let e = finished(&tasks, text(500));
        assert_eq!(tasks.list().iter().map(|t| t.id).collect::<Vec<_>>(), [e]);
        assert_eq!(tasks.lock().bytes, 500);
    }

    #[test]
    fn a_listing_leaves_the_outputs_out() {
        let tasks = Tasks::new(1, 10, 10);
        let id = finished(&tasks, text(10));
        let listed = tasks.list();
        let outcome = listed[0].outcome.as_ref().unwrap();
        assert_eq!(outcome.output, serde_json::Value::Null);
        assert!(outcome.ok);
        assert_eq!(
            tasks.get(id).unwrap().outcome.unwrap().output,
            "a".repeat(10)
        );
    }
}
