//! The real binary: `skill-server serve` on the bundled packs (the README's first command),
//! answering over HTTP, and stopping cleanly on SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Child, Command};

#[cfg(unix)]
use crate::common::sigterm_and_wait;
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
    // Each request is logged at DEBUG only; at INFO, a summary of what was answered.
    assert!(
        !logs.contains("/v1/skills"),
        "no request line at INFO: {logs}"
    );
    assert!(
        logs.contains("requests answered since the last summary"),
        "{logs}"
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
pub(crate) fn terminate(mut child: Child) {
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

/// A SIGTERM sent as soon as the ready line is read stops the server cleanly: the signal
/// handlers are installed before that line is written (they used to be installed when the
/// accept loop first looked at them, and a signal before that killed the process).
#[cfg(unix)]
#[test]
fn serve_stops_cleanly_on_a_sigterm_right_after_ready() {
    for _ in 0..5 {
        let args = [
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--no-watch",
            "--skills",
            "packs/agentskills",
        ];
        let (child, _addr, logs) = spawn_serve(&args, &[]);
        let status = sigterm_and_wait(child);
        let logs = logs.join().unwrap();
        assert!(status.success(), "{status:?}\n{logs}");
        assert!(logs.contains("shutting down"), "{logs}");
    }
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
    let index = dir
        .path()
        .join("index")
        .join(skill_runtime::search::DISK_INDEX_DIR);
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

/// `serve` with `require_lock`: a skill whose files changed since `lock` is excluded with a
/// `lock-mismatch` diagnostic and the rest are served; with `mark_low_trust`, the catalog
/// marks the skill of a low-trust source and only that one.
#[cfg(unix)]
#[test]
fn serve_with_require_lock_excludes_a_tampered_skill_and_serves_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let skill = |root: &str, name: &str, what: &str| {
        let folder = dir.path().join(root).join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {what}\n---\n# {name}\n\nSteps.\n"),
        )
        .unwrap();
    };
    skill("pack", "alpha-notes", "Keep meeting notes tidy.");
    skill("pack", "beta-charts", "Draw bar charts from a table.");
    skill("vendor", "gamma-mail", "Draft a polite follow-up email.");
    let lock = dir.path().join("skills-lock.json");
    let (pack, vendor) = (dir.path().join("pack"), dir.path().join("vendor"));
    let status = Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .arg("lock")
        .arg("--output")
        .arg(&lock)
        .arg(&pack)
        .arg(&vendor)
        .status()
        .unwrap();
    assert!(status.success(), "{status:?}");
    // One byte changes in beta-charts after the lock was written.
    let tampered = pack.join("beta-charts/SKILL.md");
    let text = std::fs::read_to_string(&tampered).unwrap();
    std::fs::write(&tampered, text.replace("Steps.", "Steps!")).unwrap();
    let config = dir.path().join("skills.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nwatch = false\n\
             [[sources]]\npath = \"{}\"\nlayer = \"project\"\n\
             [[sources]]\npath = \"{}\"\nlayer = \"vendor\"\n\
             [trust]\nrequire_lock = \"skills-lock.json\"\nmark_low_trust = true\n",
            pack.display(),
            vendor.display()
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    let (child, addr, _logs) = spawn_serve(&["serve", "--config", &config], &[]);
    let (status, skills) = get(&addr, "/v1/skills");
    assert_eq!(status, 200);
    assert!(skills.contains("\"alpha-notes\""), "{skills}");
    assert!(skills.contains("\"gamma-mail\""), "{skills}");
    assert!(!skills.contains("\"beta-charts\""), "{skills}");
    let (_, diagnostics) = get(&addr, "/v1/diagnostics");
    assert!(
        diagnostics.contains("lock-mismatch") && diagnostics.contains("beta-charts"),
        "{diagnostics}"
    );
    let (_, catalog) = get(&addr, "/v1/catalog?format=markdown");
    let line = |name: &str| {
        catalog
            .split("\\n")
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} not in {catalog}"))
            .to_owned()
    };
    assert!(
        line("gamma-mail").contains("[untrusted source]"),
        "{catalog}"
    );
    assert!(
        !line("alpha-notes").contains("[untrusted source]"),
        "{catalog}"
    );
    terminate(child);
}

/// DNS-rebinding protection: a request whose `Host` is a name the server does not serve
/// gets `403 forbidden_host`, on `/v1` (which answered it, running scripts) and on `/mcp`
/// alike; IP addresses, `localhost` and the configured `allowed_hosts` are served, on
/// `/mcp` too; probes answer whatever the name.
#[test]
fn serve_refuses_requests_for_host_names_it_does_not_serve() {
    use crate::common::request;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("skills.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nwatch = false\nallowed_hosts = [\"skills.example.com\"]\n\
             [[sources]]\npath = \"{}\"\n",
            repo().join("packs/actions").display()
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    let (child, addr, _logs) = spawn_serve(&["serve", "--config", &config], &[]);
    let port = addr.rsplit(':').next().unwrap();
    let route = r#"{"text":"tasks.search --status todo"}"#;
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let post = |host: &str, path: &str, body: &str| {
        request(
            &addr,
            &format!(
                "POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
                body.len()
            ),
            body,
        )
    };
    let get_as = |host: &str, path: &str| {
        request(
            &addr,
            &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
            "",
        )
    };
    let foreign = format!("attacker.example:{port}");
    let (status, body) = post(&foreign, "/v1/route", route);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("\"forbidden_host\""), "{body}");
    assert_eq!(get_as(&foreign, "/v1/skills").0, 403);
    assert_eq!(post(&foreign, "/mcp", initialize).0, 403);
    assert_eq!(get_as(&foreign, "/v1/health").0, 200);
    assert_eq!(get_as(&foreign, "/v1/ready").0, 200);
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("skills.example.com:{port}"),
    ] {
        let (status, body) = post(&host, "/v1/route", route);
        assert_eq!(status, 200, "{host}: {body}");
        let (status, body) = post(&host, "/mcp", initialize);
        assert_eq!(status, 200, "{host}: {body}");
    }
    terminate(child);
}
