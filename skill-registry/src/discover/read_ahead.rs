//! Folder listings read ahead of the walk on other threads.
//!
//! The walk decides everything (order, bounds, links, what was seen) on one thread, exactly
//! as it would alone; helpers only list folders the walk has said it will enter, so the
//! result does not depend on how many helpers there are or how fast they run. A listing the
//! walk needs before a helper started on it is read by the walk itself.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::Scope;

use super::listing::{Entry, Listing, Root, Visitor, list_dir};

/// Helpers are started only once this many folders wait to be listed: a small tree is
/// walked on one thread, without paying for a thread.
pub(super) const START_AFTER: usize = 32;

/// A folder to list, and whether to visit its skill file with it.
struct Job {
    path: PathBuf,
    visit: bool,
}

/// A listing the walk asked for.
enum Slot {
    /// Waiting for a helper (or the walk).
    Queued(Job),
    /// A helper is listing it.
    Running,
    /// Listed, not yet taken.
    Done(io::Result<Listing>),
    /// Taken by the walk.
    Taken,
}

#[derive(Default)]
struct State {
    slots: Vec<Slot>,
    queue: VecDeque<usize>,
    closed: bool,
    /// Helpers waiting for work, and whether the walk waits for a listing: a condition
    /// variable is signalled only when someone waits on it (each signal is a system call).
    idle: usize,
    walk_waits: bool,
}

/// The state shared by the walk and its helpers.
pub(super) struct Shared<'v> {
    state: Mutex<State>,
    /// Helpers wait here for work.
    work: Condvar,
    /// The walk waits here for a listing a helper is reading.
    done: Condvar,
    /// The walk's root, held open, that folders are listed relative to.
    root: Option<Root>,
    /// What skill folders' skill files are handed to, when the walk was given it.
    visit: Option<Visitor<'v>>,
}

impl<'v> Shared<'v> {
    /// The state for a walk of `root` (`None`: folders are opened by their paths) that
    /// hands skill files to `visit`.
    pub(super) fn new(root: Option<Root>, visit: Option<Visitor<'v>>) -> Self {
        Shared {
            state: Mutex::default(),
            work: Condvar::new(),
            done: Condvar::new(),
            root,
            visit,
        }
    }

    /// List `job`'s folder.
    fn list(&self, job: &Job) -> io::Result<Listing> {
        let visit = self.visit.filter(|_| job.visit);
        list_dir(&job.path, self.root.as_ref(), visit)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A helper only lists folders, so a poisoned lock still holds consistent state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A helper's loop: list queued folders until the walk closes the queue.
    fn help(&self) {
        let mut state = self.lock();
        loop {
            if state.closed {
                return;
            }
            let Some((id, job)) = state.next_job(false) else {
                state.idle += 1;
                state = self.work.wait(state).unwrap_or_else(|p| p.into_inner());
                state.idle -= 1;
                continue;
            };
            drop(state);
            let listed = self.list(&job);
            state = self.lock();
            state.finish(id, listed);
            if state.walk_waits {
                self.done.notify_one();
            }
        }
    }
}

impl State {
    /// The oldest (`newest` false) or newest queued listing nobody has started, marked
    /// running. Helpers take the oldest, which a depth-first walk needs last; the walk, when
    /// it would otherwise wait, takes the newest, which it needs soonest.
    fn next_job(&mut self, newest: bool) -> Option<(usize, Job)> {
        while let Some(id) = if newest {
            self.queue.pop_back()
        } else {
            self.queue.pop_front()
        } {
            // Anything but a queued slot was taken by the walk before a helper got to it.
            if let Some(slot @ Slot::Queued(_)) = self.slots.get_mut(id) {
                if let Slot::Queued(job) = std::mem::replace(slot, Slot::Running) {
                    return Some((id, job));
                }
            }
        }
        None
    }

    fn finish(&mut self, id: usize, listed: io::Result<Listing>) {
        if let Some(slot) = self.slots.get_mut(id) {
            *slot = Slot::Done(listed);
        }
    }
}

/// The walk's side: queue folders it will enter, take their listings in any order.
pub(super) struct ReadAhead<'scope, 'env> {
    shared: &'env Shared<'env>,
    /// Where helpers are started, and how many are still to start.
    scope: Option<&'scope Scope<'scope, 'env>>,
    helpers: usize,
    /// Listings queued and not yet taken.
    pending: usize,
}

/// A queued listing's ticket.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ticket(usize);

impl<'scope, 'env> ReadAhead<'scope, 'env> {
    /// Read ahead with up to `helpers` threads started in `scope` (none: the walk lists
    /// every folder itself).
    pub(super) fn new(
        shared: &'env Shared<'env>,
        scope: Option<&'scope Scope<'scope, 'env>>,
        helpers: usize,
    ) -> Self {
        ReadAhead {
            shared,
            scope,
            helpers: if scope.is_some() { helpers } else { 0 },
            pending: 0,
        }
    }

    /// Queue for listing each folder `wanted` picks among `entries` (with its skill file
    /// visited, as `visit` says): one ticket per entry, in order (`None` for those not
    /// picked); none at all (an empty list) when nothing is queued.
    pub(super) fn queue(
        &mut self,
        entries: &[Entry],
        visit: bool,
        mut wanted: impl FnMut(&Entry, usize) -> bool,
    ) -> Vec<Option<Ticket>> {
        // Only folders are listed (a skill folder mostly holds none: nothing to allocate).
        if self.scope.is_none() || !entries.iter().any(|e| e.kind.is_dir()) {
            return Vec::new();
        }
        let mut picked = Vec::with_capacity(entries.len());
        let mut count = 0;
        for entry in entries {
            let want = entry.kind.is_dir() && wanted(entry, self.pending + count);
            count += usize::from(want);
            picked.push(want);
        }
        if count == 0 {
            return Vec::new();
        }
        let mut state = self.shared.lock();
        let tickets: Vec<Option<Ticket>> = entries
            .iter()
            .zip(picked)
            .map(|(entry, want)| {
                if !want {
                    return None;
                }
                let id = state.slots.len();
                state.slots.push(Slot::Queued(Job {
                    path: entry.path.clone(),
                    visit,
                }));
                state.queue.push_back(id);
                self.pending += 1;
                Some(Ticket(id))
            })
            .collect();
        // A lone folder is left to the walk, which needs it next; only a batch is worth a
        // helper's wake-up.
        let idle = state.idle > 0 && tickets.iter().flatten().nth(1).is_some();
        drop(state);
        if self.pending >= START_AFTER {
            self.start_helpers();
        }
        if idle {
            self.shared.work.notify_all();
        }
        tickets
    }

    fn start_helpers(&mut self) {
        let Some(scope) = self.scope else { return };
        let shared = self.shared;
        while self.helpers > 0 {
            self.helpers -= 1;
            let started = std::thread::Builder::new()
                .name("skill-discover".to_owned())
                .spawn_scoped(scope, move || shared.help());
            if started.is_err() {
                // No thread to be had: the walk lists what is left itself.
                self.helpers = 0;
            }
        }
    }

    /// The listing of `dir`, queued as `ticket` (or read now when it was not queued, with
    /// its skill file visited as `visit` says). While a helper reads it, the walk lists
    /// other queued folders rather than wait idle.
    pub(super) fn take(
        &mut self,
        dir: &Path,
        ticket: Option<Ticket>,
        visit: bool,
    ) -> io::Result<Listing> {
        let here = |shared: &Shared<'_>| {
            shared.list(&Job {
                path: dir.to_path_buf(),
                visit,
            })
        };
        let Some(Ticket(id)) = ticket else {
            return here(self.shared);
        };
        self.pending = self.pending.saturating_sub(1);
        let mut state = self.shared.lock();
        loop {
            let Some(slot) = state.slots.get_mut(id) else {
                drop(state);
                return here(self.shared);
            };
            match std::mem::replace(slot, Slot::Taken) {
                Slot::Done(listed) => return listed,
                Slot::Queued(job) => {
                    drop(state);
                    return self.shared.list(&job);
                }
                Slot::Taken => {
                    drop(state);
                    return here(self.shared);
                }
                Slot::Running => {
                    *slot = Slot::Running;
                    if let Some((other, job)) = state.next_job(true) {
                        drop(state);
                        let listed = self.shared.list(&job);
                        state = self.shared.lock();
                        state.finish(other, listed);
                        continue;
                    }
                    state.walk_waits = true;
                    state = self
                        .shared
                        .done
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner());
                    state.walk_waits = false;
                }
            }
        }
    }
}

impl Drop for ReadAhead<'_, '_> {
    /// Stop the helpers: what is still queued is not needed.
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.closed = true;
        state.queue.clear();
        state.slots.clear();
        drop(state);
        self.shared.work.notify_all();
    }
}
