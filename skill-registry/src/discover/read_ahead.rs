//! Folder listings read ahead of the walk on other threads.
//!
//! The walk decides everything (order, bounds, links, what was seen) on one thread, exactly
//! as it would alone; helpers only list folders the walk has said it will enter, so the
//! result does not depend on how many helpers there are or how fast they run. A listing the
//! walk needs before a helper started on it is read by the walk itself.

use std::collections::VecDeque;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::Scope;

/// A folder entry: its name, path, and type without following links.
pub(super) type Entry = (String, PathBuf, EntryType);

/// Helpers are started only once this many folders wait to be listed: a small tree is
/// walked on one thread, without paying for a thread.
pub(super) const START_AFTER: usize = 32;

/// What a folder entry is, links not followed, as the listing tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EntryType {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link.
    Symlink,
    /// Anything else: a named pipe, a socket, a device.
    Other,
}

impl EntryType {
    pub(super) fn is_file(self) -> bool {
        self == EntryType::File
    }

    pub(super) fn is_dir(self) -> bool {
        self == EntryType::Dir
    }

    pub(super) fn is_symlink(self) -> bool {
        self == EntryType::Symlink
    }

    fn of(ft: fs::FileType) -> Self {
        if ft.is_symlink() {
            EntryType::Symlink
        } else if ft.is_dir() {
            EntryType::Dir
        } else if ft.is_file() {
            EntryType::File
        } else {
            EntryType::Other
        }
    }
}

/// A folder's entries as (name, path, type without following links), sorted by name.
///
/// On Unix the folder is read through `rustix` (on Linux, `getdents64` directly): glibc's
/// `opendir`, which `std::fs::read_dir` uses, first asks the open folder for its block
/// size, one more system call per folder. As with `std::fs::read_dir`, an error partway
/// through ends the listing with the entries read so far.
#[cfg(unix)]
pub(super) fn list_dir(dir: &Path) -> io::Result<Vec<Entry>> {
    use rustix::fs::{Dir, Mode, OFlags};
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut listing = Dir::new(fd)?;
    let mut entries = Vec::new();
    while let Some(Ok(entry)) = listing.read() {
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let name = OsStr::from_bytes(bytes);
        let path = dir.join(name);
        if let Some(kind) = entry_type(entry.file_type(), &path) {
            entries.push((name.to_string_lossy().into_owned(), path, kind));
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// The type a listing gives an entry; when it gives none (some file systems never do), the
/// entry at `path` is asked, without following links. `None`: it cannot be (it is gone).
#[cfg(unix)]
fn entry_type(listed: rustix::fs::FileType, path: &Path) -> Option<EntryType> {
    use rustix::fs::FileType;
    Some(match listed {
        FileType::RegularFile => EntryType::File,
        FileType::Directory => EntryType::Dir,
        FileType::Symlink => EntryType::Symlink,
        FileType::Unknown => EntryType::of(fs::symlink_metadata(path).ok()?.file_type()),
        _ => EntryType::Other,
    })
}

/// A folder's entries as (name, path, type without following links), sorted by name.
#[cfg(not(unix))]
pub(super) fn list_dir(dir: &Path) -> io::Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let ft = e.file_type().ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                e.path(),
                EntryType::of(ft),
            ))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// A listing the walk asked for.
enum Slot {
    /// Waiting for a helper (or the walk).
    Queued(PathBuf),
    /// A helper is listing it.
    Running,
    /// Listed, not yet taken.
    Done(io::Result<Vec<Entry>>),
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
#[derive(Default)]
pub(super) struct Shared {
    state: Mutex<State>,
    /// Helpers wait here for work.
    work: Condvar,
    /// The walk waits here for a listing a helper is reading.
    done: Condvar,
}

impl Shared {
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
            let Some((id, path)) = state.next_job(false) else {
                state.idle += 1;
                state = self.work.wait(state).unwrap_or_else(|p| p.into_inner());
                state.idle -= 1;
                continue;
            };
            drop(state);
            let listed = list_dir(&path);
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
    fn next_job(&mut self, newest: bool) -> Option<(usize, PathBuf)> {
        while let Some(id) = if newest {
            self.queue.pop_back()
        } else {
            self.queue.pop_front()
        } {
            // Anything but a queued slot was taken by the walk before a helper got to it.
            if let Some(slot @ Slot::Queued(_)) = self.slots.get_mut(id) {
                if let Slot::Queued(path) = std::mem::replace(slot, Slot::Running) {
                    return Some((id, path));
                }
            }
        }
        None
    }

    fn finish(&mut self, id: usize, listed: io::Result<Vec<Entry>>) {
        if let Some(slot) = self.slots.get_mut(id) {
            *slot = Slot::Done(listed);
        }
    }
}

/// The walk's side: queue folders it will enter, take their listings in any order.
pub(super) struct ReadAhead<'scope, 'env> {
    shared: &'env Shared,
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
        shared: &'env Shared,
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

    /// Queue for listing each folder `wanted` picks among `entries`: one ticket per entry,
    /// in order (`None` for those not picked, and for all when nothing reads ahead).
    pub(super) fn queue(
        &mut self,
        entries: &[Entry],
        mut wanted: impl FnMut(&Entry, usize) -> bool,
    ) -> Vec<Option<Ticket>> {
        if self.scope.is_none() {
            return vec![None; entries.len()];
        }
        let mut picked = Vec::with_capacity(entries.len());
        let mut count = 0;
        for entry in entries {
            let want = wanted(entry, self.pending + count);
            count += usize::from(want);
            picked.push(want);
        }
        if count == 0 {
            return vec![None; entries.len()];
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
                state.slots.push(Slot::Queued(entry.1.clone()));
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

    /// The listing of `dir`, queued as `ticket` (or read now when it was not queued).
    /// While a helper reads it, the walk lists other queued folders rather than wait idle.
    pub(super) fn take(&mut self, dir: &Path, ticket: Option<Ticket>) -> io::Result<Vec<Entry>> {
        let Some(Ticket(id)) = ticket else {
            return list_dir(dir);
        };
        self.pending = self.pending.saturating_sub(1);
        let mut state = self.shared.lock();
        loop {
            let Some(slot) = state.slots.get_mut(id) else {
                drop(state);
                return list_dir(dir);
            };
            match std::mem::replace(slot, Slot::Taken) {
                Slot::Done(listed) => return listed,
                Slot::Queued(_) | Slot::Taken => {
                    drop(state);
                    return list_dir(dir);
                }
                Slot::Running => {
                    *slot = Slot::Running;
                    if let Some((other, path)) = state.next_job(true) {
                        drop(state);
                        let listed = list_dir(&path);
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

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use rustix::fs::FileType;

    /// A type the listing does not give is asked of the entry itself, links not followed;
    /// an entry gone meanwhile is left out.
    #[test]
    fn an_entry_of_unknown_type_is_asked_what_it_is() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("f.md");
        fs::write(&file, "x").unwrap();
        let link = t.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let ask = |p: &Path| entry_type(FileType::Unknown, p);
        assert_eq!(ask(&file), Some(EntryType::File));
        assert_eq!(ask(t.path()), Some(EntryType::Dir));
        assert_eq!(ask(&link), Some(EntryType::Symlink));
        assert_eq!(ask(&t.path().join("gone")), None);
        // A type the listing gives is taken as given.
        assert_eq!(entry_type(FileType::Fifo, &file), Some(EntryType::Other));
        assert_eq!(entry_type(FileType::Directory, &file), Some(EntryType::Dir));
    }
}
