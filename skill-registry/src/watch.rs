//! Hot reload: watch every source with `notify` and reload what changed.
//!
//! Events are debounced and coalesced: after the first event of a burst, the watcher waits
//! until [`WatchOptions::debounce`] passes without a new event (or until
//! [`WatchOptions::max_delay`] since the first, so a steady stream of writes still reloads),
//! then makes **one** incremental reload of every path the burst touched. A `git checkout`
//! of a thousand files is therefore one reload.
//!
//! Only folders inside the roots are watched: symbolic links are not followed, neither those
//! present at the start nor those created while watching.
//!
//! A source root that does not exist is watched through its nearest existing ancestor and
//! picked up when it appears; a root that is deleted, renamed or replaced is watched again
//! the same way. When the platform reports lost events (a queue overflow), the next reload
//! walks and parses everything.
//!
//! A root that appears, moves or is replaced by a new folder (a new inode) is watched again,
//! and that burst becomes a full reload (`Registry::reload`) rather than a reload of its paths.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher as _};

use crate::{Error, Registry};

/// Quiet time that ends a burst of events.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(50);
/// Longest wait from a burst's first event to its reload.
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_millis(1_000);

/// How the watcher batches events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOptions {
    /// Quiet time that ends a burst.
    pub debounce: Duration,
    /// Longest wait from a burst's first event to its reload.
    pub max_delay: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: DEFAULT_DEBOUNCE,
            max_delay: DEFAULT_MAX_DELAY,
        }
    }
}

enum Msg {
    Event(notify::Result<Event>),
    Stop,
}

/// A running watcher. Dropping it (or calling [`Watcher::stop`]) stops watching.
#[derive(Debug)]
pub struct Watcher {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
}

impl Watcher {
    /// Stop watching and wait for the watcher thread to finish its current reload.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// What is watched for one source.
struct Root {
    /// The source's path as configured (what reloads are told).
    path: PathBuf,
    /// Its absolute form (what events report).
    abs: PathBuf,
    /// What is being watched for it now, and how.
    watched: Option<(PathBuf, RecursiveMode, Option<FileId>)>,
}

/// Identity of a folder, to notice one replaced by another of the same name.
type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_path: &Path) -> Option<FileId> {
    None
}

/// One burst of changes, as [`watch_folders`] reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Every path the burst touched, in the form the roots were given (a root `packs/x`
    /// gives `packs/x/a/SKILL.md`); a root itself when it appeared, vanished or was replaced.
    pub paths: HashSet<PathBuf>,
    /// Events may have been lost, or a root appeared or was replaced: re-read everything.
    pub rescan: bool,
}

impl Registry {
    /// Start watching every source; each burst of changes becomes one incremental reload
    /// (and one change set to subscribers). The watcher holds the registry weakly and stops
    /// by itself when the registry is dropped.
    pub fn watch(self: &Arc<Self>, options: WatchOptions) -> Result<Watcher, Error> {
        let registry = Arc::downgrade(self);
        let roots = self
            .config()
            .sources
            .iter()
            .map(|s| s.path.clone())
            .collect();
        watch_folders(roots, options, move |changes| {
            let Some(registry) = registry.upgrade() else {
                return false;
            };
            if changes.rescan {
                registry.reload();
            } else {
                registry.reload_paths(changes.paths);
            }
            true
        })
    }
}

/// Watch folders (or files) that may not exist yet, calling `on_change` once per burst of
/// changes on the watcher's thread. `on_change` returns `false` to stop watching. This is
/// what [`Registry::watch`] runs on; other indexes of folders (a notes search) use it too.
pub fn watch_folders<F>(
    roots: Vec<PathBuf>,
    options: WatchOptions,
    on_change: F,
) -> Result<Watcher, Error>
where
    F: FnMut(Changes) -> bool + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let events = tx.clone();
    // Symbolic links are never followed: a link inside a root that leads out of it (to `/`,
    // say) would otherwise add a watch for every folder it reaches, as loading would never
    // read through it. A root that is itself a link is still watched at its target.
    let watcher = RecommendedWatcher::new(
        move |e: notify::Result<Event>| {
            let _ = events.send(Msg::Event(e));
        },
        notify::Config::default().with_follow_symlinks(false),
    )
    .map_err(|e| Error::Watch {
        path: PathBuf::new(),
        message: e.to_string(),
    })?;
    let roots: Vec<Root> = roots
        .into_iter()
        .map(|path| Root {
            abs: std::path::absolute(&path).unwrap_or_else(|_| path.clone()),
            path,
            watched: None,
        })
        .collect();
    let mut state = WatchState {
        watcher,
        roots,
        on_change: Box::new(on_change),
        options,
    };
    state.ensure_watches()?;
    let thread = std::thread::Builder::new()
        .name("skill-registry-watch".into())
        .spawn(move || state.run(rx))
        .map_err(|e| Error::Watch {
            path: PathBuf::new(),
            message: format!("cannot start the watcher thread: {e}"),
        })?;
    Ok(Watcher {
        tx,
        thread: Some(thread),
    })
}

struct WatchState {
    watcher: RecommendedWatcher,
    roots: Vec<Root>,
    on_change: Box<dyn FnMut(Changes) -> bool + Send>,
    options: WatchOptions,
}

impl WatchState {
    /// Watch each root recursively if it exists (again, if it was replaced), else its
    /// nearest existing ancestor, non-recursively, to see it appear.
    /// Returns whether any watch changed.
    fn ensure_watches(&mut self) -> Result<bool, Error> {
        let mut changed = false;
        for i in 0..self.roots.len() {
            let root = &self.roots[i];
            let id = file_id(&root.abs);
            let want = if root.abs.is_dir() || root.abs.is_file() {
                (root.abs.clone(), RecursiveMode::Recursive, id)
            } else {
                let mut anc = root.abs.parent();
                while let Some(a) = anc {
                    if a.is_dir() {
                        break;
                    }
                    anc = a.parent();
                }
                let Some(a) = anc else { continue };
                (a.to_path_buf(), RecursiveMode::NonRecursive, file_id(a))
            };
            if root.watched.as_ref() == Some(&want) {
                continue;
            }
            if let Some((old, _, _)) = self.roots[i].watched.take() {
                let still_used = self
                    .roots
                    .iter()
                    .any(|r| r.watched.as_ref().is_some_and(|(p, _, _)| *p == old));
                if !still_used {
                    let _ = self.watcher.unwatch(&old);
                }
            }
            let shared = self.roots.iter().any(|r| r.watched.as_ref() == Some(&want));
            if !shared {
                self.watcher
                    .watch(&want.0, want.1)
                    .map_err(|e| Error::Watch {
                        path: want.0.clone(),
                        message: e.to_string(),
                    })?;
            }
            self.roots[i].watched = Some(want);
            changed = true;
        }
        Ok(changed)
    }

    fn run(mut self, rx: Receiver<Msg>) {
        loop {
            let first = match rx.recv() {
                Ok(Msg::Event(e)) => e,
                Ok(Msg::Stop) | Err(_) => return,
            };
            let started = Instant::now();
            let mut batch = Batch::default();
            batch.add(first);
            loop {
                let left = self.options.max_delay.saturating_sub(started.elapsed());
                if left.is_zero() {
                    break;
                }
                match rx.recv_timeout(self.options.debounce.min(left)) {
                    Ok(Msg::Event(e)) => batch.add(e),
                    Ok(Msg::Stop) => return,
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            // Roots may have appeared, vanished or been replaced: then re-read everything.
            let rewatched = self.ensure_watches().unwrap_or(true);
            let changes = Changes {
                paths: self.to_source_paths(&batch.paths),
                rescan: batch.rescan || rewatched,
            };
            if (changes.rescan || !changes.paths.is_empty()) && !(self.on_change)(changes) {
                return;
            }
        }
    }

    /// Event paths (absolute) in the form the sources name them.
    fn to_source_paths(&self, paths: &HashSet<PathBuf>) -> HashSet<PathBuf> {
        let mut out = HashSet::new();
        for p in paths {
            for r in &self.roots {
                if let Ok(rest) = p.strip_prefix(&r.abs) {
                    out.insert(if rest.as_os_str().is_empty() {
                        r.path.clone()
                    } else {
                        r.path.join(rest)
                    });
                } else if r.abs.starts_with(p) {
                    out.insert(r.path.clone());
                }
            }
        }
        out
    }
}

#[derive(Default)]
struct Batch {
    paths: HashSet<PathBuf>,
    rescan: bool,
}

impl Batch {
    fn add(&mut self, event: notify::Result<Event>) {
        match event {
            Ok(e) => {
                if e.need_rescan() {
                    self.rescan = true;
                }
                if e.kind.is_access() {
                    return;
                }
                self.paths.extend(e.paths);
            }
            Err(_) => self.rescan = true,
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, symlink};

    /// The process's inotify descriptors, each with the inode numbers it watches, read from
    /// `/proc/self/fdinfo` (the kernel's own list of watches).
    fn inotify_watches() -> Vec<(String, Vec<u64>)> {
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc/self/fdinfo").unwrap().flatten() {
            let Ok(info) = std::fs::read_to_string(e.path()) else {
                continue;
            };
            let inodes: Vec<u64> = info
                .lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .filter_map(|l| {
                    let ino = l.split_whitespace().find_map(|w| w.strip_prefix("ino:"))?;
                    u64::from_str_radix(ino, 16).ok()
                })
                .collect();
            if info.lines().any(|l| l.starts_with("inotify")) {
                out.push((e.file_name().to_string_lossy().into_owned(), inodes));
            }
        }
        out
    }

    /// Inodes of every folder under `root`, links not followed.
    fn folder_inodes(root: &Path, out: &mut HashSet<u64>) {
        out.insert(std::fs::metadata(root).unwrap().ino());
        for e in std::fs::read_dir(root).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                folder_inodes(&e.path(), out);
            }
        }
    }

    /// The watches of the watcher whose descriptor is new and watches `root`.
    fn watches_of(before: &[(String, Vec<u64>)], root: &Path) -> Vec<u64> {
        let root_ino = std::fs::metadata(root).unwrap().ino();
        inotify_watches()
            .into_iter()
            .filter(|(fd, _)| !before.iter().any(|(b, _)| b == fd))
            .find(|(_, inodes)| inodes.contains(&root_ino))
            .map(|(_, inodes)| inodes)
            .expect("the new watcher watches the root")
    }

    #[test]
    fn links_leaving_the_root_are_not_watched_at_start_or_when_created() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::create_dir_all(outside.path().join(format!("d{i}/e"))).unwrap();
        }
        let root = dir.path().join("skills");
        std::fs::create_dir_all(root.join("s/references")).unwrap();
        std::fs::write(
            root.join("s/SKILL.md"),
            "---\nname: s\ndescription: d\n---\n",
        )
        .unwrap();
        symlink("/", root.join("s/references/rootlink")).unwrap();
        symlink(outside.path(), root.join("s/references/out")).unwrap();

        let before = inotify_watches();
        let (tx, rx) = mpsc::channel();
        let watcher = watch_folders(vec![root.clone()], WatchOptions::default(), move |c| {
            let _ = tx.send(c);
            true
        })
        .unwrap();
        let mut inside = HashSet::new();
        folder_inodes(&root, &mut inside);
        let watched = watches_of(&before, &root);
        assert_eq!(watched.len(), inside.len(), "{watched:?}");
        assert!(watched.iter().all(|i| inside.contains(i)), "{watched:?}");

        // A link created while watching, and a real folder beside it (whose watch shows
        // the event was handled).
        symlink(outside.path(), root.join("s/later")).unwrap();
        std::fs::create_dir(root.join("s/new")).unwrap();
        std::fs::write(root.join("s/new/x.md"), "x").unwrap();
        let changes = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(changes.paths.iter().any(|p| p.ends_with("later")));
        let mut inside = HashSet::new();
        folder_inodes(&root, &mut inside);
        let watched = watches_of(&before, &root);
        assert!(watched.iter().all(|i| inside.contains(i)), "{watched:?}");
        assert!(watched.len() <= inside.len());
        watcher.stop();
    }
}
