//! The stamp fast path of verified reads, as git's index keeps one for its files.
//!
//! After a verified read hashed a file and found the digest its skill was admitted with,
//! the file's stamp (size, modification time, change time, inode, device: all from the
//! metadata of the open file the bytes came from, taken after they were read) is kept with
//! the time the hash began. A later read whose open file shows the same stamp serves
//! without hashing again, but only when the stamp's change time is older than that hash
//! time by at least [`SAFETY_MARGIN`]: a file changed within the margin ("racily clean":
//! an edit in the same tick of the file system's clock keeps the stamp) is hashed on every
//! read until it has settled. Any change through any name (a hard link's edit moves the
//! inode's change time, a rename over the file brings a new inode, a truncate-and-rewrite
//! to the same size moves both times, even when the modification time is set back) gives
//! a new stamp, so the bytes actually read are hashed and compared.
//!
//! Without Unix metadata (inode, change time) nothing is kept: every read hashes. The
//! cache belongs to one snapshot (a reload starts empty), holds at most [`MAX_STAMPS`]
//! files, and is never waited on: a read that finds it locked by another hashes instead.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::files::Sha256;

/// How much older than the hash a file's change time must be for its stamp to vouch for
/// its bytes: above the coarsest change-time tick of common file systems and the lag of
/// the kernel's coarse clock behind the wall clock.
const SAFETY_MARGIN: Duration = Duration::from_secs(2);

/// The most files one snapshot remembers; past it the cache starts again empty (the next
/// reads hash, as the first ones did).
const MAX_STAMPS: usize = 16_384;

/// What identifies one version of a file without reading it (Unix only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    dev: u64,
}

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &fs::Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        Some(Stamp {
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
            dev: meta.dev(),
        })
    }

    #[cfg(not(unix))]
    fn of(_meta: &fs::Metadata) -> Option<Self> {
        None
    }

    /// The change time as a point in time; `None` before the epoch or out of range.
    fn changed(&self) -> Option<SystemTime> {
        let secs = u64::try_from(self.ctime.0).ok()?;
        let nanos = u32::try_from(self.ctime.1).ok()?;
        SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
    }
}

/// Whether a file whose stamp has `stamp`'s change time had settled when a hash began at
/// `hashed_at`: changed at least [`SAFETY_MARGIN`] before it.
fn settled(stamp: &Stamp, hashed_at: SystemTime) -> bool {
    stamp
        .changed()
        .and_then(|c| c.checked_add(SAFETY_MARGIN))
        .is_some_and(|c| c <= hashed_at)
}

/// One file as last hashed and found to match.
#[derive(Debug, Clone, Copy)]
struct Entry {
    stamp: Stamp,
    sha256: Sha256,
}

/// The stamps of files whose bytes matched their digest, by path (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct Stamps {
    /// By path, as bytes: hashing a `Path` walks its components, its bytes do not.
    map: Mutex<HashMap<OsString, Entry>>,
    /// How many times a verified read hashed a file (the fast path's misses).
    hashed: AtomicU64,
    /// Nanoseconds the hash clock is moved ahead (or back): 0 but in tests, which cannot
    /// set a file's change time and so move the hash time instead.
    ahead: AtomicI64,
}

impl Stamps {
    /// The time a hash begins (taken before the bytes are read).
    pub(crate) fn now(&self) -> SystemTime {
        let ahead = self.ahead.load(Ordering::Relaxed);
        let now = SystemTime::now();
        let by = Duration::from_nanos(ahead.unsigned_abs());
        if ahead >= 0 {
            now.checked_add(by).unwrap_or(now)
        } else {
            now.checked_sub(by).unwrap_or(now)
        }
    }

    /// Whether the file at `path`, whose open file's metadata is `meta`, is known to hold
    /// the bytes of `digest`: its stamp is the one kept when they last matched, and had
    /// settled then.
    pub(crate) fn vouch(&self, path: &Path, meta: &fs::Metadata, digest: &Sha256) -> bool {
        let Some(stamp) = Stamp::of(meta) else {
            return false;
        };
        let Ok(map) = self.map.try_lock() else {
            return false;
        };
        map.get(path.as_os_str())
            .is_some_and(|e| e.stamp == stamp && e.sha256 == *digest)
    }

    /// Counts one hash of a verified read.
    pub(crate) fn count_hash(&self) {
        self.hashed.fetch_add(1, Ordering::Relaxed);
    }

    /// Keeps the stamp of `path` (its open file's metadata `meta`, taken after the read)
    /// whose bytes matched `digest` in a hash that began at `hashed_at`; a file that had
    /// not settled then is not kept (it is hashed again next time).
    pub(crate) fn remember(
        &self,
        path: &Path,
        meta: &fs::Metadata,
        digest: Sha256,
        hashed_at: SystemTime,
    ) {
        let Some(stamp) = Stamp::of(meta) else {
            return;
        };
        if !settled(&stamp, hashed_at) {
            return;
        }
        self.insert(
            path,
            Entry {
                stamp,
                sha256: digest,
            },
        );
    }

    fn insert(&self, path: &Path, entry: Entry) {
        let Ok(mut map) = self.map.try_lock() else {
            return;
        };
        if map.len() >= MAX_STAMPS && !map.contains_key(path.as_os_str()) {
            map.clear();
        }
        map.insert(path.as_os_str().to_owned(), entry);
    }

    /// How many times a verified read hashed a file.
    #[cfg(test)]
    pub(crate) fn hashed(&self) -> u64 {
        self.hashed.load(Ordering::Relaxed)
    }

    /// Moves the hash clock by `secs` (ahead: as if every file were older; back: as if
    /// every file had just changed).
    #[cfg(test)]
    pub(crate) fn move_clock(&self, secs: i64) {
        self.ahead
            .store(secs.saturating_mul(1_000_000_000), Ordering::Relaxed);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }
}

#[cfg(test)]
#[path = "verified_tests.rs"]
mod tests;
