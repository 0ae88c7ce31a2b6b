//! The process limit in the kernel where it can be (Linux, a writable cgroup v1 `pids`
//! hierarchy): each run gets a cgroup of its own under this process's, with `pids.max`
//! at the run's limit, so a fork past it fails in the script (the kernel counts threads
//! too) and the run is stopped at the next count with the `processes` limit.
//!
//! * **Joining before the first instruction**: the script is forked by a short-lived
//!   thread that first moves itself into the run's cgroup (cgroup v1 places threads one by
//!   one), so the script starts inside it; then the thread lowers `pids.max` from the
//!   limit plus one (itself) to the limit and moves back out (no server thread stays in a
//!   run's cgroup). The script never has more than the limit; between those two writes it
//!   may be refused its last process.
//! * **cgroup v2**: a thread cannot join a cgroup of its own there; the script would have
//!   to be forked into it (`clone3` with `CLONE_INTO_CGROUP`) or move itself before
//!   `exec`, both unsafe code this workspace forbids. So on a v2-only host, or where no
//!   `pids` hierarchy is writable (the usual container), the lineage count of the contain
//!   module is the only limit: it is read every
//!   [`PROCESS_CHECK_INTERVAL`](crate::exec::PROCESS_CHECK_INTERVAL), so a fast fork bomb
//!   overshoots before it is killed (measured by `cargo xtask attack`).
//! * **The end of a run**: everything still in the cgroup is killed, and the cgroup
//!   removed (bounded by [`KILL_DEADLINE`]).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::exec::contain::KILL_DEADLINE;

/// Tests: no cgroup is made (the lineage count alone holds the limit).
#[cfg(test)]
pub(crate) static OFF: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Where this process's `pids` cgroup is, when a v1 `pids` hierarchy is mounted.
fn own_dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        find_own_dir(&mountinfo, &cgroup)
    })
    .as_deref()
}

/// From `/proc/self/mountinfo` and `/proc/self/cgroup`: the directory of this process's
/// cgroup in a mounted v1 hierarchy that has the `pids` controller.
fn find_own_dir(mountinfo: &str, cgroup: &str) -> Option<PathBuf> {
    let path = cgroup.lines().find_map(|line| {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        controllers.split(',').any(|c| c == "pids").then_some(path)
    })?;
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut l = left.split(' ');
        let (root, mount) = (l.nth(3)?, l.next()?);
        let mut r = right.split(' ');
        let (fstype, _, options) = (r.next()?, r.next()?, r.next()?);
        if fstype != "cgroup" || !options.split(',').any(|o| o == "pids") {
            return None;
        }
        let inner = path
            .strip_prefix(root)
            .unwrap_or(path)
            .trim_start_matches('/');
        Some(Path::new(mount).join(inner))
    })
}

/// A run's cgroup, removed (with whatever is still in it killed) by [`RunCgroup::remove`].
#[derive(Debug)]
pub(crate) struct RunCgroup {
    dir: PathBuf,
    /// This process's cgroup, where the spawning thread returns.
    parent: PathBuf,
    max: usize,
}

impl RunCgroup {
    /// A cgroup for a run of at most `max` processes; `None` where none can be made (the
    /// first failure is logged once).
    pub(crate) fn create(max: usize) -> Option<RunCgroup> {
        #[cfg(test)]
        if OFF.load(Ordering::SeqCst) {
            return None;
        }
        Self::create_in(own_dir()?, max)
    }

    fn create_in(own: &Path, max: usize) -> Option<RunCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        static WARNED: OnceLock<()> = OnceLock::new();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = own.join(format!("skill-run-{}-{n}", std::process::id()));
        let made = std::fs::create_dir(&dir).and_then(|()| {
            // One more while the spawning thread is inside (see the module docs).
            std::fs::write(dir.join("pids.max"), (max.saturating_add(1)).to_string())
        });
        match made {
            Ok(()) => Some(RunCgroup {
                dir,
                parent: own.to_path_buf(),
                max,
            }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                WARNED.get_or_init(|| {
                    tracing::info!(
                        error = %e,
                        "no pids cgroup can be made here: the process limit is held by counting \
                         /proc every 20 ms (approximate)"
                    );
                });
                None
            }
        }
    }

    /// Run `spawn` on a new thread that joins this cgroup first (so what it forks starts
    /// inside), lowers the limit to the run's and leaves; `spawn`'s result, or an error
    /// when the thread could not join.
    pub(crate) fn spawn_inside<T: Send>(
        &self,
        spawn: impl FnOnce() -> std::io::Result<T> + Send,
    ) -> std::io::Result<T> {
        let runtime = tokio::runtime::Handle::try_current().ok();
        std::thread::scope(|s| {
            s.spawn(|| {
                let _entered = runtime.as_ref().map(tokio::runtime::Handle::enter);
                let tid = std::fs::read_link("/proc/thread-self")?;
                let tid = tid
                    .file_name()
                    .and_then(|t| t.to_str())
                    .ok_or_else(|| std::io::Error::other("no thread id"))?
                    .to_owned();
                std::fs::write(self.dir.join("tasks"), &tid)?;
                let spawned = spawn();
                // Lowered before leaving: the script never has more than the limit (for
                // the two writes, one fewer).
                let lowered = std::fs::write(self.dir.join("pids.max"), self.max.to_string());
                let left = std::fs::write(self.parent.join("tasks"), &tid);
                lowered.and(left)?;
                spawned
            })
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the spawning thread panicked")))
        })
    }

    /// Whether the kernel refused a fork at the limit, or more than the limit are in.
    pub(crate) fn over(&self) -> bool {
        let refused = std::fs::read_to_string(self.dir.join("pids.events"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("max ").map(|n| n.trim().parse::<u64>()))
            })
            .and_then(Result::ok)
            .is_some_and(|n| n > 0);
        refused || self.current().is_some_and(|n| n > self.max)
    }

    /// Tasks in the cgroup now.
    pub(crate) fn current(&self) -> Option<usize> {
        std::fs::read_to_string(self.dir.join("pids.current"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Kill whatever is still inside, until it is empty, then remove the cgroup (bounded
    /// by [`KILL_DEADLINE`]; one left behind is logged). Blocking file I/O.
    pub(crate) fn remove(self) {
        use rustix::process::{Pid, Signal, kill_process};
        let started = Instant::now();
        loop {
            let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                if let Some(p) = Pid::from_raw(pid) {
                    let _ = kill_process(p, Signal::KILL);
                }
            }
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            if started.elapsed() > KILL_DEADLINE {
                tracing::warn!(cgroup = %self.dir.display(), "a script's cgroup could not be removed");
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_pids_hierarchy_is_found_from_mountinfo() {
        let mountinfo = "30 25 0:26 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n\
                         38 25 0:34 /srv /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n";
        let cgroup = "9:pids:/srv/app\n0::/\n";
        assert_eq!(
            find_own_dir(mountinfo, cgroup),
            Some(PathBuf::from("/sys/fs/cgroup/pids/app"))
        );
        // v2 only: none.
        assert_eq!(find_own_dir(mountinfo, "0::/\n"), None);
    }

    /// Where a pids cgroup can be made (this machine's, if it can): a script that forks
    /// past the limit has exactly the limit and no more (the lineage count polled every
    /// 20 ms let a fast loop through), and the refused fork is seen.
    #[tokio::test]
    async fn the_kernel_holds_the_limit_exactly() {
        let Some(own) = own_dir() else {
            eprintln!("no pids cgroup hierarchy here: skipped");
            return;
        };
        let max = 4;
        let Some(cg) = RunCgroup::create_in(own, max) else {
            eprintln!("pids cgroup not writable here: skipped");
            return;
        };
        // The shell and three sleeps fit; the next fork is refused (and ends the shell).
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args([
            "-c",
            "i=0; while [ $i -lt 9 ]; do sleep 30 & echo $!; i=$((i+1)); done",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
        let mut child = cg.spawn_inside(|| cmd.spawn()).unwrap();
        // The sleeps hold the output open: read it once they are killed.
        let mut out = child.stdout.take().unwrap();
        let status = child.wait().await.unwrap();
        assert!(!status.success());
        assert!(cg.over());
        assert_eq!(cg.current(), Some(max - 1));
        tokio::task::spawn_blocking(move || cg.remove())
            .await
            .unwrap();
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut out, &mut text)
            .await
            .unwrap();
        assert_eq!(text.lines().count(), max - 1);
    }
}
