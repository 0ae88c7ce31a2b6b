//! Tests of `serve`'s configuration: the file, the environment and the flags resolved.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

fn args(skills: &[&str]) -> ServeArgs {
    ServeArgs {
        config: None,
        skills: crate::skills_arg::SkillDirs {
            dirs: skills.iter().map(|s| s.parse().unwrap()).collect(),
            include_hidden: false,
        },
        listen: None,
        notes: None,
        no_watch: false,
        dialect: None,
        allow_unauthenticated: false,
        absolute_paths: false,
    }
}

fn with_file(text: &str) -> (tempfile::TempDir, ServeArgs) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("skills.toml");
    std::fs::write(&file, format!("{text}\n[[sources]]\npath = \"skills\"\n")).unwrap();
    let mut a = args(&[]);
    a.config = Some(file);
    (dir, a)
}

/// A configuration that is not a regular file is refused before it is read: `/dev/zero`
/// was read until memory ran out.
#[cfg(unix)]
#[test]
fn a_configuration_that_is_not_a_regular_file_is_refused() {
    let e = read_config(Path::new("/dev/zero")).unwrap_err();
    assert!(e.contains("must be a regular file"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let e = read_config(dir.path()).unwrap_err();
    assert!(e.contains("must be a regular file"), "{e}");
}

#[test]
fn a_non_loopback_address_needs_a_token_or_an_explicit_opt_in() {
    let none = |_: &str| None;
    let mut a = args(&["x"]);
    a.listen = Some("0.0.0.0:7878".parse().unwrap());
    let e = resolve(&a, &none).unwrap_err();
    assert!(
        e.contains("0.0.0.0:7878") && e.contains("--allow-unauthenticated"),
        "{e}"
    );
    let token = |k: &str| (k == TOKEN_ENV).then(|| "t".to_owned());
    assert!(resolve(&a, &token).is_ok());
    a.allow_unauthenticated = true;
    assert!(resolve(&a, &none).is_ok());
    // The same from the file; an IPv6 loopback needs nothing.
    let (_d, a) = with_file("listen = \"0.0.0.0:7878\"\nallow_unauthenticated = true");
    assert!(resolve(&a, &none).is_ok());
    let (_d, a) = with_file("listen = \"0.0.0.0:7878\"");
    assert!(resolve(&a, &none).is_err());
    let (_d, a) = with_file("listen = \"[::1]:7878\"");
    assert!(resolve(&a, &none).is_ok());
}

#[test]
fn a_transformer_folder_needs_the_feature_and_is_relative_to_the_file() {
    let none = |_: &str| None;
    let (dir, a) = with_file("transformer = \"models/minilm\"");
    let r = resolve(&a, &none);
    #[cfg(feature = "transformer")]
    assert_eq!(
        r.unwrap().engine.transformer,
        Some(dir.path().join("models/minilm"))
    );
    #[cfg(not(feature = "transformer"))]
    {
        let e = r.err().unwrap();
        assert!(
            e.contains("models/minilm") && e.contains("--features transformer"),
            "{e}"
        );
        let _ = dir;
    }
}

#[test]
fn http_index_and_scheduler_settings_from_the_file() {
    let none = |_: &str| None;
    let (dir, a) = with_file(
        "index_dir = \"index\"\nstate_dir = \"state\"\ncatch_up = \"run_once_on_start\"\n\
         history_limit = 7\nmax_connections = 3\nconcurrency = 2\nmax_event_streams = 1\n\
         header_read_timeout_ms = 250\nrequest_timeout_ms = 900\nbody_read_timeout_ms = 700\n\
         write_timeout_ms = 1500\nmax_answer_bytes_held = 4096",
    );
    let r = resolve(&a, &none).unwrap();
    assert_eq!(r.engine.index_dir, Some(dir.path().join("index")));
    let sched = r.engine.schedule.as_ref().unwrap();
    assert_eq!(
        sched.catch_up,
        skill_runtime::scheduler::CatchUp::RunOnceOnStart
    );
    assert_eq!(sched.history_limit, 7);
    assert_eq!(r.http.max_connections, 3);
    assert_eq!(r.http.concurrency, 2);
    assert_eq!(r.http.max_event_streams, 1);
    assert_eq!(r.http.header_read_timeout, Duration::from_millis(250));
    assert_eq!(r.http.write_timeout, Duration::from_millis(1500));
    assert_eq!(r.http.max_answer_bytes_held, 4096);
    assert_eq!(r.http.request_timeout, Duration::from_millis(900));
    assert_eq!(r.http.body_read_timeout, Duration::from_millis(700));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // The script timeout: the default, and the lower bound itself accepted.
    assert_eq!(
        r.engine.runtime.limits.timeout,
        skill_runtime::exec::SCRIPT_TIMEOUT
    );
    let (_d, a) = with_file("script_timeout_ms = 100");
    let r = resolve(&a, &none).unwrap();
    assert_eq!(r.engine.runtime.limits.timeout, Duration::from_millis(100));
    let (_d, a) = with_file("script_timeout_ms = 120000");
    let r = resolve(&a, &none).unwrap();
    assert_eq!(r.engine.runtime.limits.timeout, Duration::from_secs(120));
    assert_eq!(r.engine.runtime.workflow_domains, ["workflows"]);
    let (_d, a) = with_file("workflow_domains = [\"workflows\", \"finance\"]");
    let r = resolve(&a, &none).unwrap();
    assert_eq!(r.engine.runtime.workflow_domains, ["workflows", "finance"]);

    // Defaults: RAM index, skip, and a warning about the missing state folder.
    let r = resolve(&args(&["x"]), &none).unwrap();
    assert_eq!(r.engine.index_dir, None);
    let sched = r.engine.schedule.as_ref().unwrap();
    assert_eq!(sched.catch_up, skill_runtime::scheduler::CatchUp::Skip);
    assert_eq!(
        sched.history_limit,
        skill_runtime::scheduler::DEFAULT_HISTORY_LIMIT
    );
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("twice"), "{:?}", r.warnings);
    let (_d, a) = with_file("scheduler = false");
    assert!(resolve(&a, &none).unwrap().warnings.is_empty());

    let over = format!(
        "history_limit = {}",
        skill_runtime::scheduler::MAX_HISTORY_LIMIT + 1
    );
    for (bad, needle) in [
        ("catch_up = \"always\"", "run_once_on_start"),
        ("catch_up = \"run_once_on_start\"", "state_dir"),
        ("history_limit = 0", "history_limit"),
        (over.as_str(), "history_limit"),
        ("request_timeout_ms = 0", "request_timeout_ms"),
        ("header_read_timeout_ms = 0", "header_read_timeout_ms"),
        ("body_read_timeout_ms = 0", "body_read_timeout_ms"),
        ("write_timeout_ms = 0", "write_timeout_ms"),
        ("max_answer_bytes_held = 0", "max_answer_bytes_held"),
        ("script_timeout_ms = 0", "script_timeout_ms"),
        ("script_timeout_ms = 99", "at least 100 ms"),
    ] {
        let (_d, a) = with_file(bad);
        let e = resolve(&a, &none).unwrap_err();
        assert!(e.contains(needle), "{bad}: {e}");
    }
    let (_d, a) = with_file(&format!(
        "history_limit = {}",
        skill_runtime::scheduler::MAX_HISTORY_LIMIT
    ));
    assert!(resolve(&a, &none).is_ok());
}

#[cfg(feature = "postgres")]
#[test]
fn retention_days_from_the_file() {
    let none = |_: &str| None;
    let (_d, a) = with_file("database_url = \"postgresql://h/db\"\nretention_days = 7");
    let r = resolve(&a, &none).unwrap();
    assert!(r.database.is_some());
    assert_eq!(r.engine.replicas.retention, Duration::from_secs(7 * 86_400));
    let (_d, a) = with_file("database_url = \"postgresql://h/db\"\nretention_days = 0");
    let e = resolve(&a, &none).unwrap_err();
    assert!(e.contains("retention_days = 0 is out of range"), "{e}");
    let (_d, a) = with_file("retention_days = -1");
    assert!(resolve(&a, &none).unwrap_err().contains("retention_days"));
}

/// Built without the `postgres` feature, `serve` refuses a file that asks for a shared
/// database instead of running alone.
#[cfg(not(feature = "postgres"))]
#[test]
fn a_database_is_refused_without_the_postgres_feature() {
    let none = |_: &str| None;
    let (_d, a) = with_file("database_url = \"postgresql://h/db\"");
    let e = resolve(&a, &none).unwrap_err();
    assert!(e.contains("database_url set"), "{e}");
}

#[cfg(feature = "postgres")]
#[test]
fn claim_wait_from_the_file() {
    let none = |_: &str| None;
    let (_d, a) = with_file("database_url = \"postgresql://h/db\"\nclaim_wait_ms = 500");
    let r = resolve(&a, &none).unwrap();
    assert_eq!(r.database.unwrap().claim_wait, Duration::from_millis(500));
    let (_d, a) = with_file("database_url = \"postgresql://h/db\"\nclaim_wait_ms = 0");
    assert!(
        resolve(&a, &none)
            .unwrap_err()
            .contains("claim_wait_ms = 0")
    );
}

#[test]
fn defaults_flags_env_and_file_in_order() {
    let none = |_: &str| None;
    let r = resolve(&args(&["packs/pegasus"]), &none).unwrap();
    assert_eq!(r.listen.to_string(), DEFAULT_LISTEN);
    assert!(r.http.token.is_none());
    assert!(r.engine.watch.is_some());
    assert!(resolve(&args(&[]), &none).is_err());

    let env = |k: &str| match k {
        LISTEN_ENV => Some("127.0.0.1:9000".to_owned()),
        TOKEN_ENV => Some("s3cret".to_owned()),
        _ => None,
    };
    let r = resolve(&args(&["x"]), &env).unwrap();
    assert_eq!(r.listen.port(), 9000);
    assert_eq!(r.http.token.as_deref(), Some("s3cret"));
    // A token no client could send is refused at start (it started, and answered 401
    // to every action request).
    for spaced in [" s3cret", "s3cret ", " ", "s3\tcret", "s3cret\n"] {
        let env = |k: &str| (k == TOKEN_ENV).then(|| spaced.to_owned());
        let e = resolve(&args(&["x"]), &env).err().unwrap_or_default();
        assert!(
            e.contains("spaces or control characters"),
            "{spaced:?}: {e}"
        );
    }
    let mut a = args(&["x"]);
    a.listen = Some("127.0.0.1:0".parse().unwrap());
    assert_eq!(resolve(&a, &env).unwrap().listen.port(), 0);
    let bad = |k: &str| (k == LISTEN_ENV).then(|| "nope".to_owned());
    assert!(
        resolve(&args(&["x"]), &bad)
            .unwrap_err()
            .contains(LISTEN_ENV)
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("skills.toml");
    std::fs::write(
        &file,
        "listen = \"127.0.0.1:7000\"\ntoken_env = \"MY_TOKEN\"\nwatch = false\n\
         timezone = \"Europe/Berlin\"\nstate_dir = \"state\"\n\
         [profiles.kids]\ntools = [\"read\"]\nbudget_chars = 500\n\
         [[sources]]\npath = \"builtin\"\nlayer = \"builtin\"\n\
         [[sources]]\npath = \"mine\"\nlayer = \"user\"\nwritable = true\ndialect = \"actions\"\n",
    )
    .unwrap();
    let mut a = args(&[]);
    a.config = Some(file.clone());
    let env = |k: &str| (k == "MY_TOKEN").then(|| "t".to_owned());
    let r = resolve(&a, &env).unwrap();
    assert_eq!(r.listen.port(), 7000);
    assert_eq!(r.http.token.as_deref(), Some("t"));
    assert!(r.engine.watch.is_none());
    let s = &r.engine.registry.sources;
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].path, dir.path().join("builtin"));
    assert!(s[1].writable);
    assert_eq!(s[1].dialect, Some(skill_runtime::format::Dialect::Actions));
    let sched = r.engine.schedule.as_ref().unwrap();
    assert_eq!(sched.timezone.name(), "Europe/Berlin");
    assert_eq!(
        sched.state_path.as_deref(),
        Some(dir.path().join("state/schedule-state.json").as_path())
    );
    assert_eq!(r.engine.runtime.profiles["kids"].tools, ["read"]);
    assert_eq!(r.http.profile_budgets["kids"].budget_chars, Some(500));
    // The named variable must exist.
    assert!(resolve(&a, &none).unwrap_err().contains("MY_TOKEN"));

    std::fs::write(&file, "listen = 5\n").unwrap();
    assert!(resolve(&a, &none).is_err());
    std::fs::write(&file, "nonsense = true\n").unwrap();
    assert!(resolve(&a, &none).unwrap_err().contains("nonsense"));
}

/// A source's `include_hidden` and `namespace` keys reach the registry's sources, as do
/// `--skills NS=DIR` and `--include-hidden` for the command line's folders (only those);
/// a bad namespace in the file is a configuration error naming the source.
#[test]
fn sources_take_include_hidden_and_a_namespace() {
    let none = |_: &str| None;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("skills.toml");
    std::fs::write(
        &file,
        "[[sources]]\npath = \"a\"\ninclude_hidden = true\nnamespace = \"pack-a\"\n\
         [[sources]]\npath = \"b\"\n",
    )
    .unwrap();
    let mut a = args(&["c=cli", "plain"]);
    a.config = Some(file.clone());
    a.skills.include_hidden = true;
    let r = resolve(&a, &none).unwrap();
    let got: Vec<(bool, Option<&str>)> = r
        .engine
        .registry
        .sources
        .iter()
        .map(|s| (s.include_hidden, s.namespace.as_ref().map(|n| n.as_str())))
        .collect();
    assert_eq!(
        got,
        [
            (true, Some("pack-a")),
            (false, None),
            (true, Some("c")),
            (true, None)
        ]
    );
    assert_eq!(r.engine.registry.sources[2].path, PathBuf::from("cli"));
    for bad in ["Pack", "a:b", "", "-a"] {
        std::fs::write(
            &file,
            format!("[[sources]]\npath = \"a\"\nnamespace = \"{bad}\"\n"),
        )
        .unwrap();
        let mut a = args(&[]);
        a.config = Some(file.clone());
        let e = resolve(&a, &none).unwrap_err();
        assert!(
            e.contains("namespace") && e.contains(&format!("`{bad}`")),
            "{bad}: {e}"
        );
    }
}

/// A remote source: its cache folder under `cache_dir` (or `state_dir`), one of `path` and
/// `url`, an http(s) URL, the refresh interval at its floor; `ca_file` checked at start.
#[test]
fn remote_sources_and_ca_file_are_checked() {
    let env = |_: &str| None;
    let (dir, a) = with_file(
        "cache_dir = \"c\"\nremote_refresh_ms = 1000\n\
         [[sources]]\nurl = \"https://hub.example/.well-known/agent-skills/index.json\"",
    );
    let r = resolve(&a, &env).unwrap();
    assert_eq!(r.remotes.len(), 1);
    assert!(r.remotes[0].folder.starts_with(dir.path().join("c")));
    assert_eq!(r.engine.registry.sources[0].path, r.remotes[0].folder);
    assert_eq!(r.remote_refresh, Duration::from_secs(1));
    let (_d, a) = with_file("state_dir = \"s\"\n[[sources]]\nurl = \"http://h/i.json\"");
    let r = resolve(&a, &env).unwrap();
    assert!(
        r.remotes[0]
            .folder
            .to_string_lossy()
            .contains("remote-sources")
    );
    for (text, words) in [
        (
            "[[sources]]\nurl = \"http://h/i.json\"",
            "needs a cache folder",
        ),
        (
            "cache_dir = \"c\"\n[[sources]]\nurl = \"ftp://h/i.json\"",
            "http:// or https://",
        ),
        (
            "cache_dir = \"c\"\n[[sources]]\nurl = \"http://h/i.json\"\npath = \"x\"",
            "not both or neither",
        ),
        ("[[sources]]\nlayer = \"x\"", "not both or neither"),
        ("remote_refresh_ms = 999", "at least 1000 ms"),
        ("ca_file = \"nope.pem\"", "nope.pem"),
    ] {
        let (_d, a) = with_file(text);
        let e = resolve(&a, &env).unwrap_err();
        assert!(e.contains(words), "{text}: {e}");
    }
}
