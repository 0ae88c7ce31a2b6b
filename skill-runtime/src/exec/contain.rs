//! Containment of everything a script starts (Linux): its descendants are followed by
//! lineage, not by process group, so one that leaves the group or the session (`setsid`)
//! is still counted against the process limit and killed when the run ends.
//!
//! * **Where orphans go**: the first script run makes this process a *child subreaper*
//!   (`prctl(PR_SET_CHILD_SUBREAPER)`, a per-process attribute, set once). A descendant
//!   whose parent dies is then re-parented to us, not to `init`, so it stays reachable
//!   and, once dead, is reaped here (only pids this module attributed to a run; a pid a
//!   host's own `Command` waits for is never touched). A cgroup with `pids.max` would
//!   bound the count in the kernel; it needs a delegated cgroup v2 hierarchy, which a
//!   server usually does not get, so it is not used.
//! * **Who belongs to a run** ([`Tree`]): the script (the root), every process whose
//!   parent belongs, every process in the root's process group or in a session or group
//!   led by a member, and an orphan re-parented to us (not one of our own process group,
//!   nor in a group or session another running run's root leads, started after the root)
//!   while this run is the only one going. The root of a run that
//!   ended is never such an orphan while it lingers unreaped (its owner's `wait` reaps it,
//!   not this module). `/proc` is read every
//!   [`PROCESS_CHECK_INTERVAL`](crate::exec::PROCESS_CHECK_INTERVAL); a pid seen once is
//!   followed by its start time, so a reused pid is not mistaken for a member. One found
//!   not to belong is not read again while its `/proc` entry (inode) stays the same and
//!   every ancestor of it was read (never an orphan of ours: whether it counts changes
//!   with the runs going). A read that fails (an entry that cannot be read for a reason
//!   other than its process's end included) fails the whole count, which keeps its
//!   members and is tried again at the next one.
//! * **The end of a run** ([`Tree::kill_all`]): every member is sent `SIGKILL`, again and
//!   again, until none runs and every zombie re-parented to us is reaped (bounded by
//!   [`KILL_DEADLINE`]; a few failed reads in a row end it early, with only the group
//!   killed). A member that forks meanwhile has the child seen on the next pass. Orphans
//!   of unknown origin that started after the root are claimed then, except those of a
//!   group or session another running run's root leads.
//! * **Ambiguous**: a process created and orphaned between two reads while another run is
//!   going at the same time cannot be told apart: it is not counted while the runs go, and
//!   the first of them to end that started before it kills it (which may be early for the
//!   other run's). A host that starts its own children in their own process group while a
//!   script runs may see them taken for that script's (keep such children in the host's
//!   process group, or run scripts in a host that starts none).
//!
//! Other systems have no `/proc` and no subreaper: there only the process group is killed
//! (see the script module).

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How long [`Tree::kill_all`] keeps killing and reaping before it gives up (and logs).
pub(crate) const KILL_DEADLINE: Duration = Duration::from_secs(5);
/// The pause between two passes of [`Tree::kill_all`].
const KILL_PASS_PAUSE: Duration = Duration::from_millis(2);
/// Reads of `/proc` that may fail in a row before [`Tree::kill_all`] gives up (with the
/// pause, about 50 ms: a failure that lasts longer is not waited out on every run's end).
const MAX_FAILED_KILL_READS: usize = 25;

/// Tests: how many of the next reads of `/proc` fail (as with too many open files). These
/// hooks are process-wide: only tests holding [`SERIAL`] may scan.
#[cfg(test)]
pub(crate) static FAILED_READS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Tests: pids whose `/proc` entry reads as gone.
#[cfg(test)]
pub(crate) static HIDDEN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Tests: pids whose `/proc` entry cannot be read (as with too many open files).
#[cfg(test)]
pub(crate) static UNREADABLE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Tests that spawn runs go one at a time (each needs to know whether it runs alone, and
/// [`FAILED_READS`] is shared).
#[cfg(test)]
pub(crate) static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The runs going in this process: their roots, and the earliest start among the runs
/// going since none was (an orphan older than that is not a script's).
#[derive(Debug, Default)]
struct Active {
    roots: HashSet<u32>,
    since: Option<u64>,
    /// Roots whose run ended but which their owner may not have reaped yet (pid and start
    /// time; 0 when unknown): until they are gone from `/proc`, such a root (a zombie whose
    /// parent is us) is never taken for an orphan of a run still going. A start of 0 matches
    /// whatever process has the pid, until the pid is gone (an orphan then goes uncounted,
    /// never a root miscounted). Only a root still in `/proc` when its run ends is added,
    /// and every scan prunes the ones gone, so this holds only roots that linger.
    ended: HashMap<u32, u64>,
}

impl Active {
    /// Whether `pid`, started at `start`, is the root of a run that ended.
    fn ended_root(&self, pid: u32, start: u64) -> bool {
        self.ended.get(&pid).is_some_and(|&s| s == 0 || s == start)
    }
}

/// The runs going, under a lock that spawning also holds (so that a root just spawned is
/// never taken for an orphan by another run's read).
fn active() -> MutexGuard<'static, Active> {
    static ACTIVE: OnceLock<Mutex<Active>> = OnceLock::new();
    let m = ACTIVE.get_or_init(|| Mutex::new(Active::default()));
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Make this process a child subreaper, once; false when the kernel refuses.
fn subreaper() -> bool {
    static SET: OnceLock<bool> = OnceLock::new();
    *SET.get_or_init(|| {
        match rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(
                    error = %e,
                    "cannot become a child subreaper: a script's children that outlive their \
                     parent go to init and are followed only while seen"
                );
                false
            }
        }
    })
}

/// One `/proc/<pid>/stat` line, the fields used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    zombie: bool,
    ppid: u32,
    pgrp: u32,
    session: u32,
    /// Start time since boot, in clock ticks: with the pid, names one process.
    start: u64,
}

/// Parse a stat line. The command name (field 2) is in parentheses and may itself hold
/// spaces and parentheses, so the fields are read after the last `)`: state, parent,
/// group, session, ... start time (field 22).
fn parse_stat(stat: &str) -> Option<Stat> {
    let (_, rest) = stat.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_ascii_whitespace().take(20).collect();
    Some(Stat {
        zombie: matches!(*f.first()?, "Z" | "X"),
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        session: f.get(3)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

fn read_stat(pid: u32) -> Option<Stat> {
    read_stat_checked(pid).ok().flatten()
}

/// [`read_stat`], telling a process that is gone (`Ok(None)`) from a read that failed
/// (too many open files, say), after which the scan's picture would be incomplete.
fn read_stat_checked(pid: u32) -> std::io::Result<Option<Stat>> {
    #[cfg(test)]
    if HIDDEN.lock().is_ok_and(|h| h.contains(&pid)) {
        return Ok(None);
    }
    #[cfg(test)]
    if UNREADABLE.lock().is_ok_and(|h| h.contains(&pid)) {
        return Err(std::io::Error::from(rustix::io::Errno::MFILE));
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => Ok(parse_stat(&text)),
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.raw_os_error() == Some(rustix::io::Errno::SRCH.raw_os_error()) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The processes of one script run (see the module docs).
#[derive(Debug)]
pub(crate) struct Tree {
    root: u32,
    me: u32,
    my_group: u32,
    /// Members by pid, with their start time.
    members: HashMap<u32, u64>,
    /// Processes read before and found not to belong, by pid, with the inode number of
    /// their `/proc` entry (skipped by later reads while the entry is the same).
    others: HashMap<u32, u64>,
    /// Members not yet dead at the last read.
    running: usize,
    /// The root's start time (0 when it could not be read).
    root_start: u64,
    /// Claim every orphan re-parented to us since the root started, other runs going or
    /// not (at the end of the run).
    claim: bool,
}

/// Spawn a script and start following it; the spawn happens under the lock of the
/// active runs.
pub(crate) fn spawn(
    cmd: &mut tokio::process::Command,
) -> std::io::Result<(tokio::process::Child, Option<Tree>)> {
    subreaper();
    let mut runs = active();
    let child = cmd.spawn()?;
    let tree = child.id().map(|root| {
        let me = std::process::id();
        let root_start = read_stat(root).map_or(0, |s| s.start);
        if runs.roots.is_empty() {
            runs.since = Some(root_start);
        } else {
            runs.since = runs.since.map(|s| s.min(root_start));
        }
        runs.roots.insert(root);
        Tree {
            root,
            me,
            my_group: read_stat(me).map_or(0, |s| s.pgrp),
            members: HashMap::from([(root, root_start)]),
            others: HashMap::new(),
            running: 1,
            root_start,
            claim: false,
        }
    });
    Ok((child, tree))
}

impl Drop for Tree {
    fn drop(&mut self) {
        // Usually already reaped by its owner; remembered only when it lingers.
        let lingers = read_stat(self.root)
            .is_some_and(|s| self.root_start == 0 || s.start == self.root_start);
        let mut runs = active();
        runs.roots.remove(&self.root);
        if lingers {
            runs.ended.insert(self.root, self.root_start);
        }
        if runs.roots.is_empty() {
            runs.since = None;
        }
    }
}

impl Tree {
    /// Read `/proc` and bring the members up to date; reap members that died as our
    /// children. The number of members (zombies not yet reaped included), or `None` when
    /// `/proc` cannot be read. Blocking file I/O: call it off the async workers.
    pub(crate) fn scan(&mut self) -> Option<usize> {
        use std::os::unix::fs::DirEntryExt;
        #[cfg(test)]
        if FAILED_READS
            .fetch_update(
                std::sync::atomic::Ordering::SeqCst,
                std::sync::atomic::Ordering::SeqCst,
                |n| n.checked_sub(1),
            )
            .is_ok()
        {
            return None;
        }
        let dir = std::fs::read_dir("/proc").ok()?;
        let mut seen: HashMap<u32, Stat> = HashMap::new();
        let mut inodes: HashMap<u32, u64> = HashMap::new();
        let mut others = HashMap::with_capacity(self.others.len());
        for entry in dir {
            // A listing cut short would drop members: the scan fails instead (tried again).
            let entry = entry.ok()?;
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            // The entry of a process that ended and whose pid was taken again is a new
            // inode (procfs makes one per process), so a reused pid is read again.
            let inode = entry.ino();
            if self.others.get(&pid) == Some(&inode) && !self.members.contains_key(&pid) {
                others.insert(pid, inode);
                continue;
            }
            if let Some(stat) = read_stat_checked(pid).ok()? {
                seen.insert(pid, stat);
                inodes.insert(pid, inode);
            }
        }
        // Members still there (the same process: the same start time; 0 when the root's
        // could not be read at spawn).
        let root = self.root;
        self.members.retain(|pid, start| {
            seen.get(pid)
                .is_some_and(|s| s.start == *start || (*pid == root && *start == 0))
        });
        let mut runs = active();
        // Ended roots that are gone (reaped by their owner) need no remembering. A pid this
        // tree skipped (one of `others`) was not read above: it is read now.
        runs.ended.retain(|pid, start| {
            let same = |s: &Stat| *start == 0 || s.start == *start;
            match seen.get(pid) {
                Some(s) => same(s),
                None => read_stat(*pid).is_some_and(|s| same(&s)),
            }
        });
        let alone = runs.roots.len() <= 1;
        let since = runs.since;
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut queue: Vec<u32> = Vec::new();
        for (&pid, s) in &seen {
            children.entry(s.ppid).or_default().push(pid);
            if self.members.contains_key(&pid) {
                queue.push(pid);
                continue;
            }
            let led = |id: u32| id == root || self.members.contains_key(&id);
            // In a group or session another run's root leads: that run's, never this one's
            // orphan (claiming it at this run's end killed a fork bomb's processes over
            // and over, so that its own count never passed the limit).
            let other_run = |id: u32| id != root && runs.roots.contains(&id);
            let orphan = s.ppid == self.me
                && !runs.roots.contains(&pid)
                && !runs.ended_root(pid, s.start)
                && s.pgrp != self.my_group
                && !other_run(s.pgrp)
                && !other_run(s.session)
                && if self.claim {
                    s.start >= self.root_start
                } else {
                    // Never one older than the root: it cannot descend from it (another
                    // run's, left to die or be reaped after that run ended).
                    alone && since.is_some_and(|t| s.start >= t.max(self.root_start))
                };
            if led(s.pgrp) || led(s.session) || orphan {
                self.members.insert(pid, s.start);
                queue.push(pid);
            }
        }
        drop(runs);
        while let Some(pid) = queue.pop() {
            for &c in children.get(&pid).map(Vec::as_slice).unwrap_or(&[]) {
                if let Some(s) = seen.get(&c) {
                    if self.members.insert(c, s.start).is_none() {
                        queue.push(c);
                    }
                }
            }
        }
        let mut dead_ours = Vec::new();
        let mut running = 0usize;
        let settled = settled_others(&seen, &self.members, &others, self.me);
        for (pid, s) in &seen {
            if !self.members.contains_key(pid) {
                if settled.contains(pid) {
                    if let Some(&inode) = inodes.get(pid) {
                        others.insert(*pid, inode);
                    }
                }
            } else if !s.zombie {
                running += 1;
            } else if s.ppid == self.me && *pid != root {
                dead_ours.push(*pid);
            }
        }
        self.others = others;
        self.running = running;
        self.reap(&dead_ours);
        Some(self.members.len())
    }

    /// Reap members that died as our children (never the root: its owner waits for it).
    fn reap(&mut self, dead: &[u32]) {
        use rustix::process::{Pid, WaitOptions, waitpid};
        for &pid in dead {
            let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
                continue;
            };
            if matches!(
                waitpid(Some(raw), WaitOptions::NOHANG),
                Ok(Some((_, status))) if status.exited() || status.signaled()
            ) {
                self.members.remove(&pid);
            }
        }
    }

    /// Kill every member until none runs and the zombies re-parented to us are reaped, or
    /// until [`KILL_DEADLINE`]. Blocking: call it off the async workers.
    pub(crate) fn kill_all(&mut self) {
        use rustix::process::{Pid, Signal, kill_process};
        let deadline = Instant::now() + KILL_DEADLINE;
        // Read everything again, claiming the orphans of unknown origin that started after
        // the root: what another run's presence kept unattributed is most likely this
        // run's (it cannot be told apart), and leaving it running would be worse.
        self.others.clear();
        self.claim = true;
        let mut failed_reads = 0;
        loop {
            crate::exec::group::kill_group(self.root);
            if self.scan().is_none() {
                // A failed read (too many open files, say) is tried a few times; the
                // members of an old read are not signalled (their pids may be others' by
                // now).
                failed_reads += 1;
                if failed_reads > MAX_FAILED_KILL_READS {
                    tracing::warn!(
                        root = self.root,
                        "cannot read /proc to kill what a script started: only its process group was killed"
                    );
                    return;
                }
                std::thread::sleep(KILL_PASS_PAUSE);
                continue;
            }
            let waiting = self.members.keys().any(|&p| p != self.root);
            if self.running == 0 && !waiting {
                return;
            }
            for &pid in self.members.keys() {
                if let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                    let _ = kill_process(raw, Signal::KILL);
                }
            }
            if Instant::now() > deadline {
                tracing::warn!(
                    root = self.root,
                    running = self.running,
                    "some processes a script started could not be killed and reaped in time"
                );
                return;
            }
            std::thread::sleep(KILL_PASS_PAUSE);
        }
    }
}

/// The processes read in one scan that are not members and can be skipped by later scans:
/// those whose every ancestor was read (in this scan or skipped as settled by it) up to one
/// with no parent (pid 0). A process whose parent could not be read (it ended, or its pid is
/// below the point `/proc` was listed from when it started, after pids wrapped) may be a
/// member's child re-parented to us by now: it is read again next time, and so is every
/// process below it, or the whole subtree would go uncounted for the rest of the run. So
/// is an orphan re-parented to us, whose counting depends on the runs going.
fn settled_others(
    seen: &HashMap<u32, Stat>,
    members: &HashMap<u32, u64>,
    skipped: &HashMap<u32, u64>,
    me: u32,
) -> HashSet<u32> {
    let mut settled: HashSet<u32> = HashSet::new();
    let mut unsettled: HashSet<u32> = HashSet::new();
    let mut path: Vec<u32> = Vec::new();
    let mut on_path: HashSet<u32> = HashSet::new();
    for &start in seen.keys() {
        if members.contains_key(&start) || settled.contains(&start) || unsettled.contains(&start) {
            continue;
        }
        // Walk up until an answer is known, then give it to the whole path (each process
        // is walked once: linear in the processes read).
        path.clear();
        on_path.clear();
        let mut pid = start;
        let answer = loop {
            if pid == 0 || skipped.contains_key(&pid) || settled.contains(&pid) {
                break true;
            }
            if unsettled.contains(&pid) || members.contains_key(&pid) || on_path.contains(&pid) {
                // A member's child was made a member above; reaching a member here means
                // this line of descent changed while being read: read it again.
                break false;
            }
            let Some(s) = seen.get(&pid) else {
                break false;
            };
            if s.ppid == me {
                // An orphan re-parented to us is counted or not depending on the runs
                // going (see the module docs), which changes: read again every time.
                break false;
            }
            path.push(pid);
            on_path.insert(pid);
            pid = s.ppid;
        };
        let into = if answer { &mut settled } else { &mut unsettled };
        into.extend(path.drain(..));
    }
    settled
}

#[cfg(test)]
#[path = "contain_tests.rs"]
mod tests;
