//! Unit tests of script containment: reading `/proc`, who belongs to a run, what is
//! cached between reads, and the final kill.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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
    use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
    let _serial = SERIAL.lock().await;
    let (mut long, tree) = spawn(&mut command("sleep", &["30"])).unwrap();
    let mut tree = tree.unwrap();
    let (mut short, short_tree) = spawn(&mut command("true", &[])).unwrap();
    let pid = short.id().unwrap();
    // Until it has exited, without reaping it (WNOWAIT): it stays a zombie of ours.
    let raw = Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    waitid(
        WaitId::Pid(raw),
        WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
    )
    .unwrap();
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
    use rustix::process::{Pid, Signal, WaitOptions, kill_process, waitpid};
    let _serial = SERIAL.lock().await;
    // A run that leaves an orphan in a session of its own, and tells its pid.
    let (leaver_tree, leaver_pid, orphan) =
        run_printing_pid("setsid sleep 30 >/dev/null 2>&1 & echo $!").await;
    let orphan = i32::try_from(orphan).unwrap();
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
    let orphan_pid = Pid::from_raw(orphan).unwrap();
    let _ = kill_process(orphan_pid, Signal::KILL);
    let _ = waitpid(Some(orphan_pid), WaitOptions::empty());
    long.kill().await.unwrap();
    drop(counted.0);
    assert_eq!(counted.1, Some(1), "an older orphan was counted");
}

/// Wait (bounded, on the boot clock that start times count in hundredths of a second)
/// until a process started now starts a clock tick later than `start`.
fn next_tick_after(start: u64) {
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        let up = std::fs::read_to_string("/proc/uptime").unwrap();
        let secs: f64 = up.split_whitespace().next().unwrap().parse().unwrap();
        if (secs * 100.0) as u64 > start {
            break;
        }
        std::hint::spin_loop();
    }
}

/// Run `script` (`sh -c`) to its end as a followed run: its tree, its root's pid, and the
/// pid it printed.
async fn run_printing_pid(script: &str) -> (Tree, u32, u32) {
    let mut cmd = command("sh", &["-c", script]);
    cmd.stdout(std::process::Stdio::piped());
    let (child, tree) = spawn(&mut cmd).unwrap();
    let root = child.id().unwrap();
    let out = child.wait_with_output().await.unwrap();
    let pid = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    (tree.unwrap(), root, pid)
}

/// A run of a shell that starts one child and waits: its root, its tree once both are
/// members, and the child's pid.
async fn run_with_a_child() -> (tokio::process::Child, Tree, u32) {
    let (root, tree) = spawn(&mut command("sh", &["-c", "sleep 30 & wait"])).unwrap();
    let mut tree = tree.unwrap();
    let root_pid = root.id().unwrap();
    let (tree, child) = tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + Duration::from_secs(10);
        while tree.scan() != Some(2) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let child = *tree.members.keys().find(|&&p| p != root_pid).unwrap();
        (tree, child)
    })
    .await
    .unwrap();
    (root, tree, child)
}

/// End a test's run: kill what is left of it (off the async workers), then reap its root.
async fn end(mut tree: Tree, root: &mut tokio::process::Child) {
    tokio::task::spawn_blocking(move || tree.kill_all())
        .await
        .unwrap();
    root.wait().await.unwrap();
}

/// The pid a script prints on its first line (read byte by byte: the script goes on).
async fn first_line_pid(out: &mut tokio::process::ChildStdout) -> u32 {
    let mut line = Vec::new();
    loop {
        let mut b = [0u8; 1];
        tokio::io::AsyncReadExt::read_exact(out, &mut b)
            .await
            .unwrap();
        if b[0] == b'\n' {
            break;
        }
        line.push(b[0]);
    }
    String::from_utf8(line).unwrap().trim().parse().unwrap()
}

/// When a run ends, its final kill claims the orphans that started after its root, but
/// never one in a group another running run's root leads: it did, and a fork bomb
/// whose orphans a short run kept killing never passed the process limit (reproduced:
/// 16 timeouts in 108 runs with a short run ending 50 ms into the bomb).
#[tokio::test]
async fn a_run_ending_leaves_another_runs_orphans_alone() {
    use rustix::process::{Pid, Signal, kill_process};
    let _serial = SERIAL.lock().await;
    let (mut short, short_tree) = spawn(&mut command("sleep", &["30"])).unwrap();
    let mut short_tree = short_tree.unwrap();
    next_tick_after(short_tree.root_start);
    // The other run leaves an orphan in its own group, then stays.
    let mut cmd = command(
        "sh",
        &["-c", "(sleep 30 >/dev/null 2>&1 & echo $!); exec sleep 30"],
    );
    cmd.stdout(std::process::Stdio::piped());
    let (mut long, long_tree) = spawn(&mut cmd).unwrap();
    let long_tree = long_tree.unwrap();
    let mut out = long.stdout.take().unwrap();
    let orphan = first_line_pid(&mut out).await;
    short.kill().await.unwrap();
    let (long_tree, alive) = tokio::task::spawn_blocking(move || {
        // Until the subshell that started it has ended: an orphan of ours then, which the
        // ending run's kill would claim (it started after that run's root).
        let deadline = Instant::now() + Duration::from_secs(10);
        while read_stat(orphan).is_some_and(|s| s.ppid != short_tree.me)
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        short_tree.kill_all();
        drop(short_tree);
        let alive = read_stat(orphan).is_some_and(|s| !s.zombie);
        (long_tree, alive)
    })
    .await
    .unwrap();
    end(long_tree, &mut long).await;
    let _ = kill_process(
        Pid::from_raw(i32::try_from(orphan).unwrap()).unwrap(),
        Signal::KILL,
    );
    assert!(
        alive,
        "the ending run killed the other run's process {orphan}"
    );
}

/// An orphan not counted while another run goes is read again at every scan, and
/// counted once the run goes alone: it was cached as another process's for the rest
/// of the run.
#[tokio::test]
async fn an_orphan_uncounted_beside_another_run_is_counted_once_alone() {
    use rustix::process::{Pid, Signal, kill_process};
    let _serial = SERIAL.lock().await;
    let (mut other, other_tree) = spawn(&mut command("sleep", &["30"])).unwrap();
    let other_tree = other_tree.unwrap();
    next_tick_after(other_tree.root_start);
    let mut cmd = command(
        "sh",
        &[
            "-c",
            "(setsid sleep 30 >/dev/null 2>&1 & echo $!); exec sleep 30",
        ],
    );
    cmd.stdout(std::process::Stdio::piped());
    let (mut run, tree) = spawn(&mut cmd).unwrap();
    let mut tree = tree.unwrap();
    let mut out = run.stdout.take().unwrap();
    let orphan = first_line_pid(&mut out).await;
    let root = run.id().unwrap();
    let (tree, beside) = tokio::task::spawn_blocking(move || {
        // Until the subshell that started it has ended (the orphan is ours then) and it
        // is in its own session (read before, it is still in the run's group: a member),
        // and the root has reaped that subshell and become `sleep` (until then the
        // subshell's zombie is a member of the run's group, counted).
        let root_is_sleep =
            || std::fs::read_to_string(format!("/proc/{root}/comm")).is_ok_and(|c| c == "sleep\n");
        let deadline = Instant::now() + Duration::from_secs(10);
        while (read_stat(orphan).is_some_and(|s| s.ppid != tree.me || s.session != orphan)
            || !root_is_sleep())
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        let n = tree.scan();
        (tree, n)
    })
    .await
    .unwrap();
    // The other run ends (its root reaped, no final kill: that would claim the orphan).
    other.kill().await.unwrap();
    drop(other_tree);
    let mut tree = tree;
    let (tree, alone) = tokio::task::spawn_blocking(move || {
        let n = tree.scan();
        (tree, n)
    })
    .await
    .unwrap();
    end(tree, &mut run).await;
    let _ = kill_process(
        Pid::from_raw(i32::try_from(orphan).unwrap()).unwrap(),
        Signal::KILL,
    );
    assert_eq!((beside, alone), (Some(1), Some(2)));
}

/// The final kill goes on through failed reads of `/proc`: it gave up at the first,
/// leaving what the script started running.
#[tokio::test]
async fn the_final_kill_reads_again_after_a_failure() {
    let _serial = SERIAL.lock().await;
    let (mut tree, _, left) = run_printing_pid("sleep 30 >/dev/null 2>&1 & echo $!").await;
    assert!(read_stat(left).is_some_and(|s| !s.zombie));
    FAILED_READS.store(3, std::sync::atomic::Ordering::SeqCst);
    tokio::task::spawn_blocking(move || tree.kill_all())
        .await
        .unwrap();
    FAILED_READS.store(0, std::sync::atomic::Ordering::SeqCst);
    // Killed and reaped (it was re-parented to us).
    assert_eq!(read_stat(left), None, "{left} survived the run");
}

/// A scan caches as "other" only processes whose ancestry it read: with pid 1 reading
/// as gone, none of its children is cached; read again, some are.
#[tokio::test]
async fn a_scan_caches_no_process_whose_parent_it_could_not_read() {
    let _serial = SERIAL.lock().await;
    if read_stat(1).is_none() {
        return; // pid 1 not visible here: nothing to test against.
    }
    let (mut root, tree) = spawn(&mut command("sleep", &["30"])).unwrap();
    let mut tree = tree.unwrap();
    let (tree, hidden, shown) = tokio::task::spawn_blocking(move || {
        let under_one = |t: &Tree| {
            t.others
                .keys()
                .filter(|&&p| p == 1 || read_stat(p).is_some_and(|s| s.ppid == 1))
                .count()
        };
        HIDDEN.lock().unwrap().push(1);
        tree.scan().unwrap();
        HIDDEN.lock().unwrap().clear();
        let hidden = under_one(&tree);
        tree.others.clear();
        tree.scan().unwrap();
        let shown = under_one(&tree);
        (tree, hidden, shown)
    })
    .await
    .unwrap();
    end(tree, &mut root).await;
    assert_eq!(hidden, 0, "children of an unread parent were cached");
    assert!(shown > 0, "nothing under pid 1 was cached once it was read");
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
    let mut settled: Vec<u32> = settled_others(&seen, &members, &skipped, 1000)
        .into_iter()
        .collect();
    settled.sort_unstable();
    // 20..22 descend from 99 (not read), 50 and 51 are a loop (a line that changed
    // while being read), 41 is a member.
    assert_eq!(settled, [1, 10, 11, 30]);
}

/// A scan that cannot read one process's entry (for a reason other than its end)
/// fails as a whole and keeps every member: the process was dropped from the members,
/// and one re-parented to us in a session of its own was lost for good.
#[tokio::test]
async fn a_scan_that_cannot_read_a_process_fails_and_keeps_the_members() {
    let _serial = SERIAL.lock().await;
    let (mut root, tree, child) = run_with_a_child().await;
    let (tree, counts) = tokio::task::spawn_blocking(move || {
        let mut tree = tree;
        UNREADABLE.lock().unwrap().push(child);
        let failed = tree.scan();
        UNREADABLE.lock().unwrap().clear();
        let kept = tree.members.len();
        (tree, [failed, Some(kept)])
    })
    .await
    .unwrap();
    end(tree, &mut root).await;
    assert_eq!(counts, [None, Some(2)]);
}

/// A process skipped as not belonging is read again when its `/proc` entry is another
/// one (its pid was reused, which wraps quickly where `pid_max` is 32,768): a script's
/// child that took the pid of an earlier other went uncounted, with all it started, and
/// a fork bomb escaped the process limit (a flaky test in CI).
#[tokio::test]
async fn a_reused_pid_is_read_again() {
    use std::os::unix::fs::MetadataExt;
    let _serial = SERIAL.lock().await;
    let (mut root, tree, child) = run_with_a_child().await;
    let (tree, counts) = tokio::task::spawn_blocking(move || {
        let mut tree = tree;
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
    end(tree, &mut root).await;
    assert_eq!(counts, [Some(2), Some(1)]);
}

#[test]
fn this_process_has_a_stat() {
    let s = read_stat(std::process::id()).unwrap();
    assert!(!s.zombie);
    assert!(s.start > 0);
}
