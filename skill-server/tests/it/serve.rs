#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The real binary: `skill-server serve` on the bundled packs (the README's first command),
//! answering over HTTP, and stopping cleanly on SIGTERM.

use std::process::{Child, Command};

use crate::common::{get, repo, spawn_serve};

#[cfg(unix)]
#[test]
fn serve_answers_and_stops_on_sigterm() {
    let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--no-watch"];
    for pack in [
        "packs/agentskills",
        "packs/actions",
        "packs/lily",
        "packs/pegasus",
        "packs/toolsets",
    ] {
        args.extend(["--skills", pack]);
    }
    // Logs at info level, so the test also covers logging from the server's threads
    // while it starts.
    let (child, addr, logs) = spawn_serve(&args, &[("RUST_LOG", "info")]);
    let (status, body) = get(&addr, "/v1/skills");
    assert_eq!(status, 200);
    assert!(body.contains("\"pdf-forms\"") && body.contains("\"email.send\""));
    let (status, body) = get(&addr, "/v1/search?q=pdf+form");
    assert_eq!(status, 200);
    assert!(body.contains("pdf-forms"));

    terminate(child);
    let logs = logs.join().unwrap();
    assert!(logs.contains("shutting down"), "{logs}");
    // No state_dir: the operator is told what that means for restarts.
    assert!(logs.contains("no state_dir"), "{logs}");
    assert!(
        logs.contains("/v1/skills"),
        "request logs carry the path: {logs}"
    );
}

#[test]
fn serve_without_sources_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .arg("serve")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no skill sources"));
}

/// SIGTERM, then a clean exit.
fn terminate(mut child: Child) {
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[cfg(unix)]
#[test]
fn serve_keeps_the_index_on_disk_when_configured() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("skills.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nwatch = false\nindex_dir = \"index\"\nstate_dir = \"state\"\n\
             [[sources]]\npath = \"{}\"\n",
            repo().join("packs/agentskills").display()
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    let (child, addr, logs) = spawn_serve(&["serve", "--config", &config], &[]);
    let index = dir.path().join("index").join(skill_search::DISK_INDEX_DIR);
    assert!(
        index.join("meta.json").is_file(),
        "no index in {}",
        index.display()
    );
    let (status, body) = get(&addr, "/v1/search?q=fill+a+pdf+form");
    assert_eq!(status, 200);
    assert!(body.contains("\"pdf-forms\""), "{body}");
    // The state folder is created, so the scheduler's state can be written there.
    assert!(dir.path().join("state").is_dir());
    terminate(child);
    let logs = logs.join().unwrap();
    assert!(!logs.contains("no state_dir"), "{logs}");
}

#[test]
fn serve_refuses_an_open_non_loopback_address() {
    let out = Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .args([
            "serve",
            "--skills",
            "packs/agentskills",
            "--listen",
            "0.0.0.0:0",
        ])
        .current_dir(repo())
        .env_remove("SKILLS_TOKEN")
        .env_remove("SKILLS_LISTEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("without a token") && err.contains("--allow-unauthenticated"),
        "{err}"
    );
}
