//! The shared state on PostgreSQL: the [`SharedState`] of an engine with a database.
//!
//! Forked tasks are recorded in the database and read back from it (the `tasks` module),
//! notes are searched in the folder's mirror there (the `notes` module), and the run
//! history is the one the history loop last read (with this replica's own misses added).
//! Until that loop has read it once, and for notes until the mirror runs, the local state
//! answers.

use std::path::PathBuf;
use std::sync::Arc;

use skill_scheduler::{JobInfo, RunRecord, Scheduler};
use skill_search::{NoteHit, NotesIndex};
use skill_store::Store;

use super::Shared;
use super::notes::NotesMirror;
use crate::error::Error;
use crate::exec::{Outcome, Runtime, TaskInfo};
use crate::state::{BoxFuture, SharedState, local_notes_search};

/// The state of a replica with a database.
pub(crate) struct PostgresState {
    store: Store,
    shared: Shared,
    /// The notes folder's mirror, when there is a notes folder (and a tokio runtime).
    mirror: Option<NotesMirror>,
}

impl PostgresState {
    /// The state on `store`, with the history view of `shared`; the notes folder `notes`
    /// (when configured) is mirrored into the database from now on.
    pub(crate) fn start(
        store: Store,
        shared: Shared,
        notes: Option<Arc<NotesIndex>>,
    ) -> PostgresState {
        let mirror = notes.and_then(|n| NotesMirror::start(store.clone(), n));
        PostgresState {
            store,
            shared,
            mirror,
        }
    }
}

impl SharedState for PostgresState {
    fn share_task<'a>(
        &'a self,
        runtime: &'a Runtime,
        outcome: &'a mut Outcome,
    ) -> BoxFuture<'a, ()> {
        Box::pin(super::tasks::share(&self.store, runtime, outcome))
    }

    fn tasks<'a>(&'a self, _runtime: &'a Runtime) -> BoxFuture<'a, Result<Vec<TaskInfo>, Error>> {
        Box::pin(async move {
            let rows = self
                .store
                .tasks(crate::exec::DEFAULT_TASK_HISTORY)
                .await
                .map_err(|e| Error::Store(Arc::new(e)))?;
            Ok(rows.into_iter().map(super::tasks::listed).collect())
        })
    }

    fn task<'a>(
        &'a self,
        _runtime: &'a Runtime,
        id: u64,
    ) -> BoxFuture<'a, Result<TaskInfo, Error>> {
        Box::pin(async move {
            let key = i64::try_from(id).map_err(|_| Error::UnknownTask(id))?;
            let row = self
                .store
                .task(key)
                .await
                .map_err(|e| Error::Store(Arc::new(e)))?;
            row.map(super::tasks::info).ok_or(Error::UnknownTask(id))
        })
    }

    fn notes_search<'a>(
        &'a self,
        notes: &'a Arc<NotesIndex>,
        text: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<NoteHit>, Error>> {
        match &self.mirror {
            Some(mirror) => Box::pin(mirror.search(text, limit)),
            None => Box::pin(local_notes_search(notes.clone(), text.to_owned(), limit)),
        }
    }

    fn notes_changed(&self, paths: &[PathBuf]) {
        if let Some(mirror) = &self.mirror {
            mirror.changed(paths.to_vec());
        }
    }

    fn jobs(&self, scheduler: &Scheduler, next: usize) -> Vec<JobInfo> {
        let mut jobs = scheduler.jobs(next);
        if let Some(history) = self.shared.history() {
            super::apply_history(&mut jobs, &history);
        }
        jobs
    }

    fn history(&self, scheduler: &Scheduler) -> Vec<RunRecord> {
        let local = scheduler.history();
        let jobs = scheduler.job_names();
        self.shared.history_with(&local, &jobs).unwrap_or(local)
    }

    fn degraded(&self) -> Option<String> {
        self.shared.trouble()
    }
}
