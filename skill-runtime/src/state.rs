//! The state a cluster of replicas shares, behind one seam: forked tasks, notes search, the
//! scheduler's run history and the readiness it degrades. The [`Engine`](crate::Engine)
//! holds one [`SharedState`] and reads through it without asking which one it is.
//!
//! [`LocalState`] keeps everything in this process (the runtime's task table, the tantivy
//! notes index, the scheduler's own history). With a shared database, the `replicas`
//! feature's `PostgresState` answers from PostgreSQL instead, so every replica answers the
//! same. Which one runs is decided once, at start.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use skill_scheduler::{JobInfo, RunRecord, Scheduler};
use skill_search::{NoteHit, NotesIndex};

use crate::error::Error;
use crate::exec::{Outcome, Runtime, TaskInfo};

/// A boxed future that may be sent between threads (what the seam's async methods answer,
/// so that the engine can hold the seam as a trait object).
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where forked tasks, notes search, the run history and the shared readiness are read.
pub(crate) trait SharedState: Send + Sync {
    /// A fork just started by `runtime` (`outcome` names it): record it where every replica
    /// sees it, giving the outcome the shared id. Anything else is left alone.
    fn share_task<'a>(
        &'a self,
        runtime: &'a Runtime,
        outcome: &'a mut Outcome,
    ) -> BoxFuture<'a, ()>;

    /// Forked tasks, most recent ones, each outcome without its output.
    fn tasks<'a>(&'a self, runtime: &'a Runtime) -> BoxFuture<'a, Result<Vec<TaskInfo>, Error>>;

    /// One forked task; [`Error::UnknownTask`] when it is unknown or dropped.
    fn task<'a>(&'a self, runtime: &'a Runtime, id: u64) -> BoxFuture<'a, Result<TaskInfo, Error>>;

    /// Ranked notes for `text` (at most `limit`), from the notes folder `notes` indexes.
    fn notes_search<'a>(
        &'a self,
        notes: &'a Arc<NotesIndex>,
        text: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<NoteHit>, Error>>;

    /// Paths of the notes folder changed (empty: all of it); the notes watcher tells it.
    #[cfg_attr(not(feature = "watch"), allow(dead_code))]
    fn notes_changed(&self, paths: &[PathBuf]);

    /// The scheduler's jobs with their next `next` fire times, each with its last run.
    fn jobs(&self, scheduler: &Scheduler, next: usize) -> Vec<JobInfo>;

    /// The scheduler's recent runs.
    fn history(&self, scheduler: &Scheduler) -> Vec<RunRecord>;

    /// Why the shared state cannot be read, while it cannot (readiness reports it as
    /// degraded); `None` when it can.
    fn degraded(&self) -> Option<String>;
}

/// Everything in this process.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct LocalState;

impl SharedState for LocalState {
    fn share_task<'a>(
        &'a self,
        _runtime: &'a Runtime,
        _outcome: &'a mut Outcome,
    ) -> BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    fn tasks<'a>(&'a self, runtime: &'a Runtime) -> BoxFuture<'a, Result<Vec<TaskInfo>, Error>> {
        Box::pin(std::future::ready(Ok(runtime.tasks())))
    }

    fn task<'a>(&'a self, runtime: &'a Runtime, id: u64) -> BoxFuture<'a, Result<TaskInfo, Error>> {
        Box::pin(std::future::ready(
            runtime.task(id).ok_or(Error::UnknownTask(id)),
        ))
    }

    fn notes_search<'a>(
        &'a self,
        notes: &'a Arc<NotesIndex>,
        text: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<NoteHit>, Error>> {
        Box::pin(local_notes_search(notes.clone(), text.to_owned(), limit))
    }

    fn notes_changed(&self, _paths: &[PathBuf]) {}

    fn jobs(&self, scheduler: &Scheduler, next: usize) -> Vec<JobInfo> {
        scheduler.jobs(next)
    }

    fn history(&self, scheduler: &Scheduler) -> Vec<RunRecord> {
        scheduler.history()
    }

    fn degraded(&self) -> Option<String> {
        None
    }
}

/// The in-process tantivy notes index, searched on tokio's blocking pool: a search over
/// large notes takes long enough to stall the async workers (and every request on them,
/// their time limits included).
pub(crate) async fn local_notes_search(
    notes: Arc<NotesIndex>,
    text: String,
    limit: usize,
) -> Result<Vec<NoteHit>, Error> {
    tokio::task::spawn_blocking(move || notes.search(&text, limit))
        .await
        .map_err(|e| {
            Error::Search(crate::error::message(format!(
                "the notes search did not finish: {e}"
            )))
        })?
        .map_err(|e| Error::Search(Arc::new(e)))
}
