//! Containment of a script's descendants (Linux): processes that leave the script's process
//! group and session (`setsid`) are still counted against the process limit and killed
//! when the run ends, and none is left behind (not running, not a zombie of ours).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use crate::common::{inv, registry, script, write};
use skill_runtime::exec::{Context, Limit, MAX_SCRIPT_PROCESSES, Runtime, RuntimeConfig};

const SKILL: &str = "---
name: escape
description: Scripts that try to leave their process group.
version: 1.0.0
scripts:
  - scripts/sessions.sh
  - scripts/hold.sh
---

# Escape

Starts children in their own sessions.
";

fn setsid_available() -> bool {
    ["/usr/bin/setsid", "/bin/setsid"]
        .iter()
        .any(|p| Path::new(p).exists())
}

fn escape(root: &Path) {
    write(root, "escape/SKILL.md", SKILL);
    // `sessions N`: N children, each in a session of its own, their pids in `sessions.pid`;
    // the script then exits at once, leaving them orphaned.
    script(
        root,
        "escape/scripts/sessions.sh",
        "#!/bin/sh\n: > sessions.pid\ni=0\nwhile [ $i -lt \"$1\" ]; do setsid sleep 20 & echo $! >> sessions.pid; i=$((i+1)); done\n",
    );
    // `hold N T`: N children in their own sessions, then a foreground `sleep T`.
    script(
        root,
        "escape/scripts/hold.sh",
        "#!/bin/sh\n: > sessions.pid\ni=0\nwhile [ $i -lt \"$1\" ]; do setsid sleep 20 & echo $! >> sessions.pid; i=$((i+1)); done\nsleep \"$2\"\n",
    );
}

fn runtime(root: &Path, max_processes: usize) -> Runtime {
    let mut config = RuntimeConfig::default();
    config.limits.timeout = Duration::from_secs(15);
    config.limits.max_processes = max_processes;
    Runtime::builder(registry(root, false))
        .config(config)
        .build()
}

fn pids(root: &Path) -> Vec<i32> {
    std::fs::read_to_string(root.join("escape/sessions.pid"))
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Of `pids`, those still present: running, or a zombie nobody but us would reap.
fn left(pids: &[i32]) -> Vec<i32> {
    let me = std::process::id().to_string();
    pids.iter()
        .copied()
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
            let zombie = matches!(fields.first(), Some(&"Z" | &"X"));
            !zombie || fields.get(1) == Some(&me.as_str())
        })
        .collect()
}

/// Bounded wait (the processes are not ours to wait for) until none of `pids` is left.
fn none_left(pids: &[i32]) -> Vec<i32> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let l = left(pids);
        if l.is_empty() || std::time::Instant::now() > deadline {
            return l;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test]
async fn children_in_their_own_sessions_do_not_outlive_the_script() {
    let _alone = crate::common::processes_alone().await;
    if !setsid_available() {
        eprintln!("skipped: no setsid program");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    escape(dir.path());
    // The reproduction: 300 children, each `setsid sleep 20`, under a limit that
    // lets them all start.
    let rt = runtime(dir.path(), 400);
    let o = rt
        .execute(&inv("escape", &["sessions", "300"], &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    let all = pids(dir.path());
    assert_eq!(all.len(), 300);
    let l = none_left(&all);
    eprintln!("{} of 300 left behind", l.len());
    assert!(l.is_empty(), "{} of 300 left behind: {l:?}", l.len());
    assert_eq!(rt.running_scripts(), 0);
}

#[tokio::test]
async fn children_in_their_own_sessions_count_against_the_process_limit() {
    let _alone = crate::common::processes_alone().await;
    if !setsid_available() {
        eprintln!("skipped: no setsid program");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    escape(dir.path());
    let rt = runtime(dir.path(), MAX_SCRIPT_PROCESSES);
    // The shell, MAX escaped sleeps and the foreground sleep: over the limit while held.
    let n = MAX_SCRIPT_PROCESSES.to_string();
    let o = rt
        .execute(&inv("escape", &["hold", &n, "10"], &[]), &Context::model())
        .await;
    assert_eq!(o.limit, Some(Limit::Processes), "{o:?}");
    assert!(o.duration_ms < 10_000, "{} ms", o.duration_ms);
    let all = pids(dir.path());
    let l = none_left(&all);
    assert!(l.is_empty(), "left behind: {l:?}");
}

#[tokio::test]
async fn escaped_children_exactly_at_the_limit_are_fine() {
    let _alone = crate::common::processes_alone().await;
    if !setsid_available() {
        eprintln!("skipped: no setsid program");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    escape(dir.path());
    // The shell, 2 escaped sleeps, the foreground sleep: 4 processes, held 0.3 s.
    let rt = runtime(dir.path(), 4);
    let o = rt
        .execute(
            &inv("escape", &["hold", "2", "0.3"], &[]),
            &Context::model(),
        )
        .await;
    assert!(o.ok, "{o:?}");
    assert!(none_left(&pids(dir.path())).is_empty());
    // One more escaped sleep: 5.
    let o = rt
        .execute(&inv("escape", &["hold", "3", "5"], &[]), &Context::model())
        .await;
    assert_eq!(o.limit, Some(Limit::Processes), "{o:?}");
    assert!(none_left(&pids(dir.path())).is_empty());
}
