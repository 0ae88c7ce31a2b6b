//! Forked tasks (`context: fork`): ids, status, results, bounded concurrency and history.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::{Semaphore, watch};
use tokio::task::AbortHandle;

use crate::exec::{Error, Outcome};

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
    status: watch::Sender<TaskStatus>,
    abort: Option<AbortHandle>,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    entries: BTreeMap<u64, Entry>,
    finished: VecDeque<u64>,
}

/// The task table and the concurrency bound.
pub(crate) struct Tasks {
    table: Mutex<Table>,
    pub(crate) slots: Arc<Semaphore>,
    max_pending: usize,
    history: usize,
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
        Tasks {
            table: Mutex::new(Table {
                next_id: 1,
                ..Table::default()
            }),
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            max_pending: max_pending.max(1),
            history: history.max(1),
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
        e.info.status = status;
        e.info.finished_ms = Some(now_ms());
        e.info.outcome = Some(outcome);
        e.abort = None;
        e.status.send_replace(status);
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
            e.info.status = TaskStatus::Cancelled;
            e.info.finished_ms = Some(now_ms());
            e.info.outcome = Some(outcome(&e.info.skill));
            e.status.send_replace(TaskStatus::Cancelled);
            t.finished.push_back(id);
            self.trim(&mut t);
            abort
        };
        if let Some(a) = abort {
            a.abort();
        }
        true
    }

    fn trim(&self, t: &mut Table) {
        while t.finished.len() > self.history {
            if let Some(old) = t.finished.pop_front() {
                t.entries.remove(&old);
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

    pub(crate) fn list(&self) -> Vec<TaskInfo> {
        self.lock()
            .entries
            .values()
            .map(|e| e.info.clone())
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
