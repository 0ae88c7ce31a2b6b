//! Scripts: argument mapping, environment, working directory, and every limit with the
//! process group killed.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use crate::common::{all_dead, inv, is_dead, registry, script, write};
#[cfg(target_os = "linux")]
use crate::common::{group_gone, running_in_group};
use skill_runtime::exec::{
    Context, Kind, Limit, MAX_SCRIPT_ARG_BYTES, MAX_SCRIPT_ARGS, MAX_SCRIPT_OUTPUT_BYTES,
    MAX_SCRIPT_PROCESSES, Runtime, RuntimeConfig, SCRIPT_NICE,
};

const SKILL: &str = "---
name: lab
description: Scripts for the runtime tests.
version: 1.0.0
scripts:
  - scripts/args.sh
  - scripts/env.sh
  - scripts/cwd.sh
  - scripts/sleep.sh
  - scripts/bomb.sh
  - scripts/flood.sh
  - scripts/exact.sh
  - scripts/leave.sh
  - scripts/fail.sh
  - scripts/marker.sh
  - scripts/forkbomb.sh
  - scripts/hold.sh
  - scripts/nice.sh
---

# Lab

Runs test scripts.
";

fn lab(root: &Path) {
    write(root, "lab/SKILL.md", SKILL);
    script(
        root,
        "lab/scripts/args.sh",
        "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done\n",
    );
    script(root, "lab/scripts/env.sh", "#!/bin/sh\nenv\n");
    script(root, "lab/scripts/cwd.sh", "#!/bin/sh\npwd\n");
    script(
        root,
        "lab/scripts/sleep.sh",
        "#!/bin/sh\necho $$\nsleep 30\n",
    );
    script(
        root,
        "lab/scripts/bomb.sh",
        "#!/bin/sh\necho $$\ni=0\nwhile [ $i -lt 20 ]; do sleep 30 & echo $!; i=$((i+1)); done\nwait\n",
    );
    script(
        root,
        "lab/scripts/flood.sh",
        "#!/bin/sh\necho $$\nexec yes flood\n",
    );
    script(
        root,
        "lab/scripts/exact.sh",
        "#!/bin/sh\nhead -c \"$1\" /dev/zero\n",
    );
    script(
        root,
        "lab/scripts/leave.sh",
        "#!/bin/sh\nsleep 30 &\necho $!\n",
    );
    script(
        root,
        "lab/scripts/fail.sh",
        "#!/bin/sh\necho oops >&2\nexit 3\n",
    );
    script(root, "lab/scripts/marker.sh", "#!/bin/sh\ntouch started\n");
    // An exponential fork bomb: every `f` starts two more in the background and exits (its
    // children are orphaned, yet stay in the group). Capped at depth 8 (256 sleeping leaves,
    // 511 processes in all) so that a broken limit cannot take the machine down. Its pid
    // (the group id) goes to a file first; the script itself then stays alive as `sleep`.
    script(
        root,
        "lab/scripts/forkbomb.sh",
        "#!/bin/sh\necho $$ > bomb.pid\nf() { if [ \"$1\" -lt 8 ]; then f $(($1 + 1)) | f $(($1 + 1)) & else exec sleep 30; fi; }\nf 0\nexec sleep 30\n",
    );
    // Waits (bounded) until the runtime has lowered its priority, then prints its own nice
    // value and a child's (children inherit it).
    script(
        root,
        "lab/scripts/nice.sh",
        "#!/bin/sh\ni=0\nwhile [ \"$(nice)\" = 0 ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i+1)); done\nnice\nsh -c nice\n",
    );
    // `hold N T`: N background sleeps, then a foreground `sleep T`: N + 2 processes in the
    // group (the shell, its N children, the foreground sleep) for T seconds.
    script(
        root,
        "lab/scripts/hold.sh",
        "#!/bin/sh\necho $$\ni=0\nwhile [ $i -lt \"$1\" ]; do sleep 30 & i=$((i+1)); done\nsleep \"$2\"\n",
    );
}

fn runtime(root: &Path, timeout: Duration) -> Runtime {
    let mut config = RuntimeConfig::default();
    config.limits.timeout = timeout;
    Runtime::builder(registry(root, false))
        .config(config)
        .build()
}

fn pids(text: &str) -> Vec<i32> {
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

#[tokio::test]
async fn arguments_map_positionals_then_flags() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    let o = rt
        .execute(
            &inv(
                "lab",
                &["args", "one two", "three"],
                &[("to", &["a", "b"]), ("dry", &[]), ("n", &["5"])],
            ),
            &Context::model(),
        )
        .await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.kind, Some(Kind::Script));
    assert_eq!(o.output["exit_code"], 0);
    assert_eq!(o.output["script"], "scripts/args.sh");
    assert_eq!(
        o.output["stdout"],
        "[one two][three][--dry][--n][5][--to][a][--to][b]"
    );
}

#[tokio::test]
async fn the_first_script_runs_when_no_positional_names_one() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    // `x` names no script: args.sh (the first) runs and gets it as an argument.
    let o = rt
        .execute(&inv("lab", &["x"], &[]), &Context::model())
        .await;
    assert_eq!(o.output["script"], "scripts/args.sh");
    assert_eq!(o.output["stdout"], "[x]");
    // The file name works as well as the stem.
    let o = rt
        .execute(&inv("lab", &["cwd.sh"], &[]), &Context::model())
        .await;
    assert_eq!(o.output["script"], "scripts/cwd.sh");
}

#[tokio::test]
async fn the_environment_is_cleared_except_the_allowlist() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    // A variable of the test process (HOME is always set for cargo) must not leak.
    assert!(std::env::var_os("HOME").is_some() || std::env::var_os("CARGO").is_some());
    let o = rt
        .execute(&inv("lab", &["env"], &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    let out = o.output["stdout"].as_str().unwrap();
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    assert!(names.contains(&"PATH"), "{out}");
    assert!(names.contains(&"SKILL_NAME"), "{out}");
    assert!(out.contains("SKILL_NAME=lab"), "{out}");
    for leaked in [
        "HOME",
        "CARGO",
        "CARGO_MANIFEST_DIR",
        "USER",
        "RUST_TEST_THREADS",
    ] {
        assert!(!names.contains(&leaked), "{leaked} leaked: {out}");
    }
    let allowed = [
        "PATH",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TZ",
        "SKILL_NAME",
        "SKILL_DIR",
        "PWD",
        "SHLVL",
        "_",
        "OLDPWD",
    ];
    for n in names {
        assert!(allowed.contains(&n), "unexpected variable {n}");
    }
}

#[tokio::test]
async fn the_working_directory_is_the_skill_folder() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    let o = rt
        .execute(&inv("lab", &["cwd"], &[]), &Context::model())
        .await;
    let cwd = o.output["stdout"].as_str().unwrap().trim().to_owned();
    assert_eq!(
        Path::new(&cwd).canonicalize().unwrap(),
        dir.path().join("lab").canonicalize().unwrap()
    );
}

#[tokio::test]
async fn a_failing_script_reports_its_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    let o = rt
        .execute(&inv("lab", &["fail"], &[]), &Context::model())
        .await;
    assert!(!o.ok);
    assert_eq!(o.code(), Some("script_failed"));
    assert!(o.error.as_ref().unwrap().message.contains("status 3"));
    assert_eq!(o.output["stderr"], "oops\n");
    assert_eq!(o.limit, None);
}

#[tokio::test]
async fn timeout_kills_the_script() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_millis(500));
    let o = rt
        .execute(&inv("lab", &["sleep"], &[]), &Context::model())
        .await;
    assert!(!o.ok);
    assert_eq!(o.limit, Some(Limit::Timeout));
    assert_eq!(o.code(), Some("limit_exceeded"));
    assert!(o.duration_ms < 10_000, "{}", o.duration_ms);
    let leader = pids(o.output["stdout"].as_str().unwrap());
    assert_eq!(leader.len(), 1);
    // The script itself was reaped by the runtime: not even a zombie is left.
    assert!(!Path::new(&format!("/proc/{}", leader[0])).exists() || is_dead(leader[0]));
    assert!(all_dead(&leader));
    assert_eq!(rt.running_scripts(), 0);
}

#[tokio::test]
async fn the_timeout_kills_background_children_with_the_group() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(1));
    let o = rt
        .execute(&inv("lab", &["bomb"], &[]), &Context::model())
        .await;
    assert_eq!(o.limit, Some(Limit::Timeout), "{o:?}");
    let all = pids(o.output["stdout"].as_str().unwrap());
    assert_eq!(all.len(), 21, "leader and 20 children: {all:?}");
    assert!(all_dead(&all), "some of {all:?} survived");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_exponential_fork_bomb_is_stopped_at_the_process_limit() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    // The bomb is bounded (depth 8: at most 511 processes, each sleeping 30 s). Were the
    // process limit broken, the timeout would end it and the `Processes` assertion would
    // fail. The limit was seen not to trip, intermittently (twice in CI). The likeliest
    // cause, reproduced by a review (16 timeouts in 108 runs with a short run ending 50 ms
    // into the bomb), was another test's run claiming the bomb's orphans at its end and
    // killing them over and over; other ways out were closed too (a failed read of /proc
    // lifted the limit for the rest of the run; a reused pid could be skipped): see
    // `exec::contain`'s unit tests. A second try stays, so that a cause not yet found does
    // not fail the suite; a broken limit misses both and still fails it.
    let rt = runtime(dir.path(), Duration::from_secs(10));
    assert_eq!(rt.config().limits.max_processes, MAX_SCRIPT_PROCESSES);
    let mut o = None;
    for attempt in 1..=2 {
        let run = rt
            .execute(&inv("lab", &["forkbomb"], &[]), &Context::model())
            .await;
        let pgid: i32 = std::fs::read_to_string(dir.path().join("lab/bomb.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Whatever the outcome, nothing of the bomb may be left running.
        assert!(
            group_gone(pgid),
            "still running: {:?}",
            running_in_group(pgid)
        );
        if run.limit == Some(Limit::Processes) || attempt == 2 {
            o = Some(run);
            break;
        }
        eprintln!("fork bomb, try {attempt}: the process limit did not trip: {run:?}");
    }
    let o = o.unwrap();
    assert_eq!(o.limit, Some(Limit::Processes), "{o:?}");
    assert_eq!(o.code(), Some("limit_exceeded"));
    let message = &o.error.as_ref().unwrap().message;
    assert!(
        message.contains(&format!("more than {MAX_SCRIPT_PROCESSES} processes")),
        "{message}"
    );
    assert!(o.duration_ms < 10_000, "not prompt: {} ms", o.duration_ms);
    assert_eq!(rt.running_scripts(), 0);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn processes_exactly_at_the_limit_are_fine_and_one_more_is_not() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    let run = |children: usize, hold: &'static str| {
        let rt = rt.clone();
        async move {
            let n = children.to_string();
            rt.execute(&inv("lab", &["hold", &n, hold], &[]), &Context::model())
                .await
        }
    };
    // The shell, MAX - 2 background sleeps and the foreground sleep: MAX processes, held
    // for many check intervals.
    let o = run(MAX_SCRIPT_PROCESSES - 2, "0.3").await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.limit, None);
    let pgid = pids(o.output["stdout"].as_str().unwrap())[0];
    assert!(group_gone(pgid), "{:?}", running_in_group(pgid));
    // One more: killed long before the foreground sleep (or the timeout) ends.
    let o = run(MAX_SCRIPT_PROCESSES - 1, "5").await;
    assert_eq!(o.limit, Some(Limit::Processes), "{o:?}");
    assert!(o.duration_ms < 5_000, "{} ms", o.duration_ms);
    let pgid = pids(o.output["stdout"].as_str().unwrap())[0];
    assert!(group_gone(pgid), "{:?}", running_in_group(pgid));
}

#[tokio::test]
async fn a_configured_process_limit_is_enforced() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let mut config = RuntimeConfig::default();
    config.limits.timeout = Duration::from_secs(10);
    config.limits.max_processes = 4;
    let rt = Runtime::builder(registry(dir.path(), false))
        .config(config)
        .build();
    // 2 children: 4 processes. 3 children: 5.
    let o = rt
        .execute(&inv("lab", &["hold", "2", "0.3"], &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    let o = rt
        .execute(&inv("lab", &["hold", "3", "5"], &[]), &Context::model())
        .await;
    if cfg!(target_os = "linux") {
        assert_eq!(o.limit, Some(Limit::Processes), "{o:?}");
        assert!(
            o.error
                .as_ref()
                .unwrap()
                .message
                .contains("more than 4 processes")
        );
    } else {
        // Not counted elsewhere (documented): it runs to its end.
        assert!(o.ok, "{o:?}");
    }
}

#[tokio::test]
async fn scripts_and_their_children_run_at_the_lowest_priority() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    let o = rt
        .execute(&inv("lab", &["nice"], &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    let expected = format!("{SCRIPT_NICE}\n{SCRIPT_NICE}\n");
    assert_eq!(o.output["stdout"], expected.as_str());
}

#[tokio::test]
async fn children_left_behind_are_killed_when_the_script_exits() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    let o = rt
        .execute(&inv("lab", &["leave"], &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    // It returned at once (the background child holding stdout did not keep it waiting).
    assert!(o.duration_ms < 10_000);
    let child = pids(o.output["stdout"].as_str().unwrap());
    assert_eq!(child.len(), 1);
    assert!(all_dead(&child));
}

#[tokio::test]
async fn output_over_the_limit_kills_the_script() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(20));
    assert_eq!(rt.config().limits.max_output_bytes, MAX_SCRIPT_OUTPUT_BYTES);
    let o = rt
        .execute(&inv("lab", &["flood"], &[]), &Context::model())
        .await;
    assert_eq!(o.limit, Some(Limit::Output), "{:?}", o.error);
    let stdout = o.output["stdout"].as_str().unwrap();
    assert!(stdout.len() <= MAX_SCRIPT_OUTPUT_BYTES);
    assert!(stdout.len() > MAX_SCRIPT_OUTPUT_BYTES / 2);
    let leader: i32 = stdout.lines().next().unwrap().parse().unwrap();
    assert!(all_dead(&[leader]));
}

#[tokio::test]
async fn output_exactly_at_the_limit_is_fine_and_one_byte_more_is_not() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let mut config = RuntimeConfig::default();
    config.limits.timeout = Duration::from_secs(10);
    config.limits.max_output_bytes = 1000;
    let rt = Runtime::builder(registry(dir.path(), false))
        .config(config)
        .build();
    let o = rt
        .execute(&inv("lab", &["exact", "1000"], &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.output["stdout"].as_str().unwrap().len(), 1000);
    let o = rt
        .execute(&inv("lab", &["exact", "1001"], &[]), &Context::model())
        .await;
    assert_eq!(o.limit, Some(Limit::Output));
    assert_eq!(o.output["stdout"].as_str().unwrap().len(), 1000);
}

#[tokio::test]
async fn too_many_arguments_are_refused_before_starting() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    let marker = dir.path().join("lab/started");
    let at_limit: Vec<String> = (0..MAX_SCRIPT_ARGS).map(|i| i.to_string()).collect();
    let mut words: Vec<&str> = vec!["marker"];
    words.extend(at_limit.iter().map(String::as_str));
    let o = rt
        .execute(&inv("lab", &words, &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    assert!(marker.exists());
    std::fs::remove_file(&marker).unwrap();
    words.push("one-more");
    let o = rt
        .execute(&inv("lab", &words, &[]), &Context::model())
        .await;
    assert_eq!(o.limit, Some(Limit::Arguments));
    assert!(!marker.exists(), "the script must not start");
    // A flag with a value counts as two arguments.
    let half: Vec<String> = (0..MAX_SCRIPT_ARGS - 1).map(|i| i.to_string()).collect();
    let mut words: Vec<&str> = vec!["marker"];
    words.extend(half.iter().map(String::as_str));
    let o = rt
        .execute(&inv("lab", &words, &[("k", &["v"])]), &Context::model())
        .await;
    assert_eq!(o.limit, Some(Limit::Arguments));
}

#[tokio::test]
async fn argument_bytes_are_limited_before_starting() {
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(10));
    let marker = dir.path().join("lab/started");
    let exact = "a".repeat(MAX_SCRIPT_ARG_BYTES);
    let o = rt
        .execute(&inv("lab", &["marker", &exact], &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    std::fs::remove_file(&marker).unwrap();
    let over = "a".repeat(MAX_SCRIPT_ARG_BYTES + 1);
    let o = rt
        .execute(&inv("lab", &["marker", &over], &[]), &Context::model())
        .await;
    assert_eq!(o.limit, Some(Limit::ArgumentBytes));
    assert!(!marker.exists());
}

#[tokio::test]
async fn script_paths_must_stay_inside_the_skill_folder() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    script(outside.path(), "evil.sh", "#!/bin/sh\ntouch pwned\n");
    for (name, entry) in [
        ("dots", "../evil.sh"),
        ("abs", "/bin/sh"),
        ("link", "scripts/link.sh"),
    ] {
        write(
            dir.path(),
            &format!("{name}/SKILL.md"),
            &format!(
                "---\nname: {name}\ndescription: Bad script path.\nversion: 1.0.0\nscripts:\n  - {entry}\n---\nbody\n"
            ),
        );
    }
    std::fs::create_dir_all(dir.path().join("link/scripts")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("evil.sh"),
        dir.path().join("link/scripts/link.sh"),
    )
    .unwrap();
    let rt = runtime(dir.path(), Duration::from_secs(5));
    for name in ["dots", "abs", "link"] {
        let o = rt.execute(&inv(name, &[], &[]), &Context::model()).await;
        assert_eq!(o.code(), Some("script_path"), "{name}: {o:?}");
        assert_eq!(o.kind, Some(Kind::Script));
    }
    assert!(!outside.path().join("pwned").exists());
}

#[tokio::test]
async fn only_files_under_the_scripts_folder_run() {
    let dir = tempfile::tempdir().unwrap();
    // Executables inside the skill folder but outside `scripts/`: at the top level, in
    // another folder, reached with `..`, or through a link in `scripts/`.
    for (name, entry) in [
        ("top", "run.sh"),
        ("other", "bin/run.sh"),
        ("dotdot", "scripts/../run.sh"),
        ("folder", "scripts"),
        ("hop", "scripts/hop.sh"),
    ] {
        write(
            dir.path(),
            &format!("{name}/SKILL.md"),
            &format!(
                "---\nname: {name}\ndescription: A script outside scripts/.\nversion: 1.0.0\nscripts:\n  - {entry}\n---\nbody\n"
            ),
        );
        script(
            dir.path(),
            &format!("{name}/run.sh"),
            "#!/bin/sh\ntouch pwned\n",
        );
        script(
            dir.path(),
            &format!("{name}/bin/run.sh"),
            "#!/bin/sh\ntouch pwned\n",
        );
        std::fs::create_dir_all(dir.path().join(format!("{name}/scripts"))).unwrap();
    }
    std::os::unix::fs::symlink("../run.sh", dir.path().join("hop/scripts/hop.sh")).unwrap();
    let rt = runtime(dir.path(), Duration::from_secs(5));
    for (name, reason) in [
        ("top", "under the skill's `scripts/` folder"),
        ("other", "under the skill's `scripts/` folder"),
        ("dotdot", "`..` is not allowed"),
        ("folder", "under the skill's `scripts/` folder"),
        ("hop", "outside the skill's `scripts/` folder"),
    ] {
        let o = rt.execute(&inv(name, &[], &[]), &Context::model()).await;
        assert_eq!(o.code(), Some("script_path"), "{name}: {o:?}");
        let message = &o.error.as_ref().unwrap().message;
        assert!(message.contains(reason), "{name}: {message}");
        assert!(
            !dir.path().join(format!("{name}/pwned")).exists(),
            "{name} ran"
        );
    }
    // The same file under `scripts/` runs.
    write(
        dir.path(),
        "good/SKILL.md",
        "---\nname: good\ndescription: A script under scripts/.\nversion: 1.0.0\nscripts:\n  - ./scripts/sub/run.sh\n---\nbody\n",
    );
    script(
        dir.path(),
        "good/scripts/sub/run.sh",
        "#!/bin/sh\ntouch ran\n",
    );
    let rt = runtime(dir.path(), Duration::from_secs(5));
    let o = rt.execute(&inv("good", &[], &[]), &Context::model()).await;
    assert!(o.ok, "{o:?}");
    assert!(dir.path().join("good/ran").exists());
}

#[tokio::test]
async fn shutdown_kills_running_scripts() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let rt = runtime(dir.path(), Duration::from_secs(30));
    let rt2 = rt.clone();
    let run = tokio::spawn(async move {
        rt2.execute(&inv("lab", &["bomb"], &[]), &Context::model())
            .await
    });
    // Wait until the script is running (an event, not a sleep).
    while rt.running_scripts() == 0 {
        tokio::task::yield_now().await;
    }
    rt.shutdown().await;
    assert_eq!(rt.running_scripts(), 0);
    let o = run.await.unwrap();
    assert_eq!(o.code(), Some("shutting_down"), "{o:?}");
    let all = pids(o.output["stdout"].as_str().unwrap());
    assert!(all_dead(&all), "{all:?}");
    // Nothing new starts.
    let o = rt
        .execute(&inv("lab", &["cwd"], &[]), &Context::model())
        .await;
    assert_eq!(o.code(), Some("shutting_down"));
}

#[tokio::test]
async fn cancelling_a_forked_script_kills_its_group() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bg/SKILL.md",
        "---\nname: bg\ndescription: A forked script.\nversion: 1.0.0\ncontext: fork\nscripts:\n  - scripts/bomb.sh\n---\nbody\n",
    );
    script(
        dir.path(),
        "bg/scripts/bomb.sh",
        "#!/bin/sh\ni=0\nwhile [ $i -lt 5 ]; do sleep 30 & echo $! >> pids; i=$((i+1)); done\necho $$ >> pids\nwait\n",
    );
    let rt = runtime(dir.path(), Duration::from_secs(30));
    let o = rt.execute(&inv("bg", &[], &[]), &Context::model()).await;
    assert_eq!(o.kind, Some(Kind::Fork));
    let id = o.task.unwrap();
    // Wait until the script has started all its children (its last line is its own pid).
    let pid_file = dir.path().join("bg/pids");
    let all = loop {
        let text = std::fs::read_to_string(&pid_file).unwrap_or_default();
        let all = pids(&text);
        if all.len() == 6 && text.ends_with('\n') {
            break all;
        }
        tokio::task::yield_now().await;
    };
    assert!(all.iter().all(|p| !is_dead(*p)));
    assert!(rt.cancel_task(id));
    let t = rt.wait_task(id).await.unwrap();
    assert_eq!(t.status, skill_runtime::exec::TaskStatus::Cancelled);
    assert_eq!(t.outcome.unwrap().code(), Some("cancelled"));
    // The aborted task is dropped the next time the runtime polls it; its script slot is
    // released when the process group has been killed.
    while rt.running_scripts() > 0 {
        tokio::task::yield_now().await;
    }
    assert!(all_dead(&all), "{all:?}");
}

#[tokio::test]
async fn shutdown_returns_after_a_forked_script_is_reaped() {
    let _alone = crate::common::processes_alone().await;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bg/SKILL.md",
        "---\nname: bg\ndescription: A forked script.\nversion: 1.0.0\ncontext: fork\nscripts:\n  - scripts/hold.sh\n---\nbody\n",
    );
    script(
        dir.path(),
        "bg/scripts/hold.sh",
        "#!/bin/sh\nsleep 30 &\necho $$ >> pid\nwait\n",
    );
    let rt = runtime(dir.path(), Duration::from_secs(30));
    let o = rt.execute(&inv("bg", &[], &[]), &Context::model()).await;
    assert_eq!(o.kind, Some(Kind::Fork));
    let pid_file = dir.path().join("bg/pid");
    let pid = loop {
        let text = std::fs::read_to_string(&pid_file).unwrap_or_default();
        if let Some(p) = pids(&text).first().filter(|_| text.ends_with('\n')) {
            break *p;
        }
        tokio::task::yield_now().await;
    };
    assert!(!is_dead(pid));
    rt.shutdown().await;
    // Checked at once, without waiting: the script itself was killed and reaped before
    // shutdown returned.
    assert!(is_dead(pid), "script {pid} outlived shutdown");
    assert_eq!(rt.running_scripts(), 0);
}

/// The trust policy: a skill from a low-trust source does not run its scripts unless the
/// registry's policy allows it.
#[tokio::test]
async fn scripts_of_low_trust_skills_are_refused_unless_allowed() {
    use skill_registry::{Registry, RegistryConfig, Source};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path());
    let build = |allow: bool| {
        let mut config = RegistryConfig::with_sources(vec![Source::new(dir.path(), "external")]);
        config.trust.allow_low_trust_scripts = allow;
        Runtime::builder(Arc::new(Registry::load(config))).build()
    };
    let o = build(false)
        .execute(&inv("lab", &["args", "x"], &[]), &Context::model())
        .await;
    assert!(!o.ok);
    let error = o.error.unwrap();
    assert_eq!(error.code, "script_untrusted");
    assert!(
        error.message.contains("low-trust layer `external`"),
        "{}",
        error.message
    );
    let o = build(true)
        .execute(&inv("lab", &["args", "x"], &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.output["stdout"], "[x]");
}
