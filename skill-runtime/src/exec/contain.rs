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
//!   started after the root) while this run is the only one going. The root of a run that
//!   ended is never such an orphan while it lingers unreaped (its owner's `wait` reaps it,
//!   not this module). `/proc` is read every
//!   [`PROCESS_CHECK_INTERVAL`](crate::exec::PROCESS_CHECK_INTERVAL); a pid seen once is
//!   followed by its start time, so a reused pid is not mistaken for a member. One found
//!   not to belong is not read again while its `/proc` entry (inode) stays the same and
//!   every ancestor of it was read; a read that fails is tried again at the next count.
//! * **The end of a run** ([`Tree::kill_all`]): every member is sent `SIGKILL`, again and
//!   again, until none runs and every zombie re-parented to us is reaped (bounded by
//!   [`KILL_DEADLINE`]). A member that forks meanwhile has the child seen on the next
//!   pass.
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

/// Tests: how many of the next reads of `/proc` fail (as with too many open files).
#[cfg(test)]
pub(crate) static FAILED_READS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

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
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
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
        for entry in dir.flatten() {
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
            if let Some(stat) = read_stat(pid) {
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
            let orphan = s.ppid == self.me
                && !runs.roots.contains(&pid)
                && !runs.ended_root(pid, s.start)
                && s.pgrp != self.my_group
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
        let settled = settled_others(&seen, &self.members, &others);
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
        use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
        for &pid in dead {
            let Ok(raw) = i32::try_from(pid) else {
                continue;
            };
            if matches!(
                waitpid(nix::unistd::Pid::from_raw(raw), Some(WaitPidFlag::WNOHANG)),
                Ok(WaitStatus::Exited(..) | WaitStatus::Signaled(..))
            ) {
                self.members.remove(&pid);
            }
        }
    }

    /// Kill every member until none runs and the zombies re-parented to us are reaped, or
    /// until [`KILL_DEADLINE`]. Blocking: call it off the async workers.
    pub(crate) fn kill_all(&mut self) {
        use nix::sys::signal::{Signal, kill};
        let deadline = Instant::now() + KILL_DEADLINE;
        // Read everything again, claiming the orphans of unknown origin that started after
        // the root: what another run's presence kept unattributed is most likely this
        // run's (it cannot be told apart), and leaving it running would be worse.
        self.others.clear();
        self.claim = true;
        loop {
            crate::exec::group::kill_group(self.root);
            // A failed read (too many open files, say) is tried again until the deadline;
            // the members known so far are killed meanwhile.
            let read = self.scan().is_some();
            if !read && std::fs::metadata("/proc/self/stat").is_err() {
                // No `/proc` at all: nothing to wait for (the group was killed above).
                return;
            }
            let waiting = self.members.keys().any(|&p| p != self.root);
            if read && self.running == 0 && !waiting {
                return;
            }
            for &pid in self.members.keys() {
                if let Ok(raw) = i32::try_from(pid) {
                    let _ = kill(nix::unistd::Pid::from_raw(raw), Signal::SIGKILL);
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
/// process below it, or the whole subtree would go uncounted for the rest of the run.
fn settled_others(
    seen: &HashMap<u32, Stat>,
    members: &HashMap<u32, u64>,
    skipped: &HashMap<u32, u64>,
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
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_last_parenthesis() {
        let line = "42 (a) b) c) S 7 42 40 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!((s.ppid, s.pgrp, s.session, s.start), (7, 42, 40, 12345));
        assert!(!s.zombie);
        let z = parse_stat("9 (x) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0").unwrap();
        assert!(z.zombie);
        assert_eq!(z.start, 77);
        assert_eq!(parse_stat("9 (x) S 1 9"), None);
        assert_eq!(parse_stat("no parenthesis 1 2 3"), None);
    }

    /// A command in a process group of its own, as scripts run, killed if dropped.
    fn command(program: &str, args: &[&str]) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(program);
        c.args(args).process_group(0).kill_on_drop(true);
        c
    }

    /// The root of a run that ended, dead but not yet reaped by its owner (a zombie whose
    /// parent is us, as a killed script's is until `wait` returns), is no orphan of another
    /// run: not counted by its scans (twice, so that the second skips what the first read),
    /// not claimed and reaped by its final kill. It was taken for one: a run at its process
    /// limit was killed for a process it never had (a flaky test), and the owner's `wait`
    /// failed with ECHILD. Whatever other tests run meanwhile, the kill claims every orphan,
    /// so this fails without the rule.
    #[tokio::test]
    async fn an_ended_root_not_yet_reaped_is_no_orphan_of_another_run() {
        use nix::sys::wait::{Id, WaitPidFlag, waitid};
        let _serial = SERIAL.lock().await;
        let (mut long, tree) = spawn(&mut command("sleep", &["30"])).unwrap();
        let mut tree = tree.unwrap();
        let (mut short, short_tree) = spawn(&mut command("true", &[])).unwrap();
        let pid = short.id().unwrap();
        // Until it has exited, without reaping it (WNOWAIT): it stays a zombie of ours.
        let raw = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap());
        waitid(Id::Pid(raw), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT).unwrap();
        assert!(read_stat(pid).unwrap().zombie);
        drop(short_tree);
        let (mut tree, first, second) = tokio::task::spawn_blocking(move || {
            let first = tree.scan();
            let second = tree.scan();
            assert!(
                active().ended.contains_key(&pid),
                "forgotten while unreaped"
            );
            tree.kill_all();
            (tree, first, second)
        })
        .await
        .unwrap();
        assert_eq!(
            (first, second),
            (Some(1), Some(1)),
            "the ended root was counted"
        );
        // Still its owner's to reap; then it is forgotten.
        assert!(short.wait().await.unwrap().success());
        long.wait().await.unwrap();
        tree.scan();
        assert!(!active().ended.contains_key(&pid));
    }

    /// An orphan re-parented to us that started before a run's root (another run's, left
    /// behind when that run ended) is not counted by the run going alone: it was, and a run
    /// at its process limit was killed for zombies of another test's script.
    #[tokio::test]
    async fn an_orphan_older_than_the_root_is_not_counted() {
        use nix::sys::signal::{Signal, kill};
        use nix::sys::wait::waitpid;
        let _serial = SERIAL.lock().await;
        // A run that leaves an orphan in a session of its own, and tells its pid.
        let mut leaver = command("sh", &["-c", "setsid sleep 30 >/dev/null 2>&1 & echo $!"]);
        leaver.stdout(std::process::Stdio::piped());
        let (leaver, leaver_tree) = spawn(&mut leaver).unwrap();
        let leaver_pid = leaver.id().unwrap();
        let out = leaver.wait_with_output().await.unwrap();
        let orphan: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        // Start times count clock ticks: the next run must start a tick later (bounded wait
        // on the boot clock, /proc/uptime, which those ticks count in hundredths).
        let born = read_stat(u32::try_from(orphan).unwrap()).unwrap().start;
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            let up = std::fs::read_to_string("/proc/uptime").unwrap();
            let secs: f64 = up.split_whitespace().next().unwrap().parse().unwrap();
            if (secs * 100.0) as u64 > born {
                break;
            }
            std::hint::spin_loop();
        }
        // A later run starts while the first is still followed, then the first ends.
        let (mut long, tree) = spawn(&mut command("sleep", &["30"])).unwrap();
        let mut tree = tree.unwrap();
        drop(leaver_tree);
        // Its owner reaped its root before the run ended: nothing to remember.
        assert!(!active().ended.contains_key(&leaver_pid));
        let counted = tokio::task::spawn_blocking(move || {
            let n = tree.scan();
            (tree, n)
        })
        .await
        .unwrap();
        let orphan_pid = nix::unistd::Pid::from_raw(orphan);
        let _ = kill(orphan_pid, Signal::SIGKILL);
        let _ = waitpid(orphan_pid, None);
        long.kill().await.unwrap();
        drop(counted.0);
        assert_eq!(counted.1, Some(1), "an older orphan was counted");
    }

    fn stat(ppid: u32) -> Stat {
        Stat {
            zombie: false,
            ppid,
            pgrp: 1,
            session: 1,
            start: 1,
        }
    }

    /// A process is skipped by later scans only when its whole line of descent was read:
    /// one whose parent was not (it ended, or pids wrapped while `/proc` was listed) may be
    /// a member's child re-parented to us, and is read again, with everything below it.
    #[test]
    fn only_others_whose_ancestry_was_read_are_skipped_later() {
        let seen: HashMap<u32, Stat> = [
            (1, stat(0)),
            (10, stat(1)),
            (11, stat(10)),
            (20, stat(99)),
            (21, stat(20)),
            (22, stat(21)),
            (30, stat(5)),
            (41, stat(40)),
            (50, stat(51)),
            (51, stat(50)),
        ]
        .into();
        let members: HashMap<u32, u64> = [(40, 1), (41, 1)].into();
        let skipped: HashMap<u32, u64> = [(5, 7)].into();
        let mut settled: Vec<u32> = settled_others(&seen, &members, &skipped)
            .into_iter()
            .collect();
        settled.sort_unstable();
        // 20..22 descend from 99 (not read), 50 and 51 are a loop (a line that changed
        // while being read), 41 is a member.
        assert_eq!(settled, [1, 10, 11, 30]);
    }

    /// A process skipped as not belonging is read again when its `/proc` entry is another
    /// one (its pid was reused, which wraps quickly where `pid_max` is 32,768): a script's
    /// child that took the pid of an earlier other went uncounted, with all it started, and
    /// a fork bomb escaped the process limit (a flaky test in CI).
    #[tokio::test]
    async fn a_reused_pid_is_read_again() {
        use std::os::unix::fs::MetadataExt;
        let _serial = SERIAL.lock().await;
        let (mut root, tree) = spawn(&mut command("sh", &["-c", "sleep 30 & wait"])).unwrap();
        let mut tree = tree.unwrap();
        let root_pid = root.id().unwrap();
        let (tree, counts) = tokio::task::spawn_blocking(move || {
            // Until the shell has started its child.
            let deadline = Instant::now() + Duration::from_secs(10);
            while tree.scan() != Some(2) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            let child = *tree.members.keys().find(|&&p| p != root_pid).unwrap();
            let inode = std::fs::metadata(format!("/proc/{child}")).unwrap().ino();
            let mut counts = Vec::new();
            // As if the pid had been another process's at the last read, and now is the
            // child's: a different entry, read again.
            tree.members.remove(&child);
            tree.others.insert(child, inode.wrapping_add(1));
            counts.push(tree.scan());
            // The same entry is trusted (skipped): the child is not counted.
            tree.members.remove(&child);
            tree.others.insert(child, inode);
            counts.push(tree.scan());
            (tree, counts)
        })
        .await
        .unwrap();
        let mut tree = tree;
        tokio::task::spawn_blocking(move || tree.kill_all())
            .await
            .unwrap();
        root.wait().await.unwrap();
        assert_eq!(counts, [Some(2), Some(1)]);
    }

    #[test]
    fn this_process_has_a_stat() {
        let s = read_stat(std::process::id()).unwrap();
        assert!(!s.zombie);
        assert!(s.start > 0);
    }
}
