//! The hub end to end, against our own server over loopback: one `serve` publishes a
//! folder at `/.well-known/agent-skills/`; a second `serve` takes it in as a remote source
//! (a skill file and a multi-file archive), low trust, refreshes it when it changes, and
//! after a restart with the first one gone serves its cache and says so in `/v1/ready`.
//! `add` vendors one skill from the same server into a folder with a lock that `verify`
//! accepts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(unix)]
use crate::common::{get, sigterm_and_wait, spawn_serve, write};

/// Poll `check` until it holds, at most 30 s (the refresh is a timer in another process:
/// there is no event to wait on from here).
#[cfg(unix)]
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !check() {
        assert!(std::time::Instant::now() < end, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[cfg(unix)]
#[test]
fn a_remote_source_is_taken_in_verified_refreshed_and_served_from_its_cache() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "published/alpha/SKILL.md",
        "---\nname: alpha\ndescription: Alpha steps for testing the hub.\n---\nDo alpha.\n",
    );
    write(
        root,
        "published/beta/SKILL.md",
        "---\nname: beta\ndescription: Beta steps with a reference file.\n---\nRead references/guide.md.\n",
    );
    write(
        root,
        "published/beta/references/guide.md",
        "# Guide\nStep one.\n",
    );
    let published = root.join("published").display().to_string();
    let (origin, origin_addr, _) = spawn_serve(
        &["serve", "--skills", &published, "--listen", "127.0.0.1:0"],
        &[],
    );
    let index = format!("http://{origin_addr}/.well-known/agent-skills/index.json");

    let config = root.join("hub.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nscheduler = false\n\
             cache_dir = \"cache\"\nremote_refresh_ms = 1000\n\
             [[sources]]\nurl = \"{index}\"\nlayer = \"hub\"\n"
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    let (hub, addr, _) = spawn_serve(&["serve", "--config", &config], &[]);
    let (status, body) = get(&addr, "/v1/skills");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["alpha", "beta"], "{body}");
    for s in v["skills"].as_array().unwrap() {
        assert_eq!(s["layer"], "hub", "{body}");
        assert_eq!(
            s["trust"], "low",
            "a remote source is low trust by default: {body}"
        );
    }
    // The archive's second file came along.
    let (status, body) = get(&addr, "/v1/skills/beta/resources/references/guide.md");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Step one."), "{body}");
    let (status, body) = get(&addr, "/v1/ready");
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("degraded"), "{body}");

    // `add` vendors one skill from the same server, verified, with a lock.
    let vendored = root.join("vendored");
    let lock = root.join("vendored-lock.json");
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = skill_server::run(
        [
            "skill-server",
            "add",
            &format!("http://{origin_addr}"),
            "--skill",
            "beta",
            "--to",
            &vendored.display().to_string(),
            "--lock",
            &lock.display().to_string(),
        ],
        &mut out,
        &mut err,
    );
    let said = String::from_utf8_lossy(&out).into_owned() + &String::from_utf8_lossy(&err);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("added 1 skill(s), 2 file(s)"), "{said}");
    assert_eq!(
        std::fs::read(vendored.join("beta/references/guide.md")).unwrap(),
        b"# Guide\nStep one.\n"
    );
    assert!(!vendored.join("alpha").exists());
    let mut out = Vec::new();
    let code = skill_server::run(
        [
            "skill-server",
            "verify",
            "--lock",
            &lock.display().to_string(),
            &vendored.display().to_string(),
        ],
        &mut out,
        &mut Vec::new(),
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&out));
    // A second add of the same skill needs --force.
    let again = skill_server::run(
        [
            "skill-server",
            "add",
            &format!("http://{origin_addr}"),
            "--skill",
            "beta",
            "--to",
            &vendored.display().to_string(),
            "--lock",
            &lock.display().to_string(),
        ],
        &mut Vec::new(),
        &mut err,
    );
    assert_eq!(again, 2);

    // The publisher changes a skill: the hub follows on its next refresh.
    write(
        root,
        "published/alpha/SKILL.md",
        "---\nname: alpha\ndescription: Alpha steps, second edition.\n---\nDo alpha twice.\n",
    );
    eventually("the hub serves the second edition", || {
        get(&addr, "/v1/skills/alpha").1.contains("second edition")
    });

    // The publisher goes away: the hub keeps serving and, once it has tried, says why.
    sigterm_and_wait(origin);
    eventually("readiness says the remote is served from the cache", || {
        let (status, body) = get(&addr, "/v1/ready");
        status == 200 && body.contains("served from its cache")
    });
    sigterm_and_wait(hub);

    // A restart without the publisher: the cache of the last run is served.
    let (hub, addr, _) = spawn_serve(&["serve", "--config", &config], &[]);
    let (status, body) = get(&addr, "/v1/ready");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("served from its cache"), "{body}");
    let (_, body) = get(&addr, "/v1/skills/alpha");
    assert!(body.contains("second edition"), "{body}");
    sigterm_and_wait(hub);

    // A remote never reached, without a cache: an empty source, and readiness says so.
    let fresh = root.join("fresh.toml");
    std::fs::write(
        &fresh,
        format!(
            "listen = \"127.0.0.1:0\"\nscheduler = false\ncache_dir = \"fresh-cache\"\n\
             [[sources]]\nurl = \"{index}\"\n[[sources]]\npath = \"published\"\n"
        ),
    )
    .unwrap();
    let fresh = fresh.display().to_string();
    let (hub, addr, _) = spawn_serve(&["serve", "--config", &fresh], &[]);
    let (status, body) = get(&addr, "/v1/ready");
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("served from nothing (no cache yet)"),
        "{body}"
    );
    sigterm_and_wait(hub);
}
