//! The files `workflow.build` writes: atomically, through a temporary file named
//! `.{file}.{pid}.{n}.tmp`, and the stale ones of that pattern (whose writer is gone) removed,
//! so a process killed mid-write leaves nothing behind for long.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A temporary file of this handler's pattern older than this is stale whoever wrote it
/// (a write takes milliseconds).
pub const STALE_TMP_AGE: Duration = Duration::from_secs(60);

/// Whether a process with this pid runs (Unix: `kill(pid, 0)`; elsewhere unknown: true).
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, test_kill_process};
        match i32::try_from(pid).ok().and_then(Pid::from_raw) {
            Some(raw) => !matches!(test_kill_process(raw), Err(rustix::io::Errno::SRCH)),
            None => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// The pid in a temporary file name of this handler's pattern, `.{file}.{pid}.{n}.tmp`.
fn tmp_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (rest, n) = rest.rsplit_once('.')?;
    let (file, pid) = rest.rsplit_once('.')?;
    if file.is_empty() || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Remove the stale temporary files of this handler's pattern in `folders` (see the
/// module docs); `ours_too`: files of this process are stale as well.
pub(super) fn clean_stale_tmp(folders: &[PathBuf], ours_too: bool) {
    let me = std::process::id();
    for dir in folders {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(tmp_pid) else {
                continue;
            };
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if !meta.file_type().is_file() {
                continue;
            }
            let old = meta
                .modified()
                .ok()
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age > STALE_TMP_AGE);
            let stale = if pid == me {
                ours_too || old
            } else {
                old || !process_alive(pid)
            };
            if stale {
                match fs::remove_file(entry.path()) {
                    Ok(()) => {
                        tracing::info!(path = %entry.path().display(), "removed a stale temporary file of workflow.build")
                    }
                    Err(e) => {
                        tracing::warn!(path = %entry.path().display(), error = %e, "cannot remove a stale temporary file of workflow.build")
                    }
                }
            }
        }
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How a file is put in place.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// Fail with `AlreadyExists` if the name is taken.
    New,
    /// Replace whatever is there.
    Replace,
}

/// Write `bytes` to `target` atomically: a temporary file in the same folder, fsynced,
/// then linked (no clobber) or renamed into place, then the folder fsynced. On failure
/// nothing is left behind.
pub(super) fn write_atomic(target: &Path, bytes: &[u8], place: Place) -> io::Result<()> {
    let dir = target
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no parent folder"))?;
    let file = target
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{file}.{}.{n}.tmp", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        match place {
            Place::Replace => fs::rename(&tmp, target),
            Place::New => match fs::hard_link(&tmp, target) {
                Ok(()) => fs::remove_file(&tmp),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
                // No hard links on this file system: check, then rename.
                Err(_) if fs::symlink_metadata(target).is_err() => fs::rename(&tmp, target),
                Err(e) => Err(e),
            },
        }
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_file_names_give_their_pid() {
        assert_eq!(tmp_pid(".daily.md.4242.7.tmp"), Some(4242));
        assert_eq!(tmp_pid(".SKILL.md.1.0.tmp"), Some(1));
        assert_eq!(tmp_pid("daily.md.4242.7.tmp"), None);
        assert_eq!(tmp_pid(".daily.md.x.7.tmp"), None);
        assert_eq!(tmp_pid(".daily.md.42.x.tmp"), None);
        assert_eq!(tmp_pid(".42.7.tmp"), None);
        assert_eq!(tmp_pid(".notes.tmp"), None);
    }
}
