//! One doorway: the same question gives the same answer through every front door. The
//! engine's routing settings hold for HTTP route, execute (one command and a whole
//! output), invoke and the command line; and `--format json` prints what HTTP answers,
//! operation by operation.

use serde_json::{Value, json};
use skill_http::HttpConfig;
use skill_registry::{RegistryConfig, Source};
use skill_router::RouterConfig;
use skill_runtime::EngineConfig;
use skills_tests::{repo_root, skill_md, skill_server, write};

use crate::http::{Server, get, launch, packs, post};

/// A server over `sources` with these routing settings (no watcher), writing paths as
/// they are, as the command line prints them (`/v1` answers are relative to their source
/// by default).
fn serve(
    sources: Vec<Source>,
    router: RouterConfig,
    tweak: impl FnOnce(&mut EngineConfig),
) -> Server {
    let mut config = EngineConfig::new(RegistryConfig::with_sources(sources));
    config.watch = None;
    config.router = router;
    tweak(&mut config);
    launch(
        config,
        HttpConfig {
            absolute_paths: true,
            ..HttpConfig::default()
        },
    )
}

fn cli_json(args: &[&str]) -> Value {
    let run = skill_server(args);
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}\n{}\n{}", run.stdout, run.stderr))
}

#[test]
fn the_engine_router_config_holds_through_every_door() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "greet/SKILL.md",
        &skill_md("greet", "Greet the user by name."),
    );
    let root = dir.path().to_str().unwrap();
    let router = RouterConfig {
        suggestions: false,
        ..RouterConfig::default()
    };
    let s = serve(vec![Source::new(dir.path(), "layer1")], router, |_| {});

    // The model names a skill that does not exist: no closest names, by configuration.
    let routed = post(s.addr, "/v1/route", &json!({ "text": "gret" })).json();
    assert_eq!(routed["route"], "error", "{routed}");
    assert_eq!(routed["suggestions"], json!([]), "{routed}");
    let message = routed["message"].as_str().unwrap().to_owned();
    assert!(!message.contains("greet"), "suggestions are off: {message}");

    let executed = post(s.addr, "/v1/execute", &json!({ "command": "gret" })).json();
    assert_eq!(executed["route"], routed);
    let output = post(
        s.addr,
        "/v1/execute",
        &json!({ "output": "```cmd\ngret\n```\n" }),
    )
    .json();
    assert_eq!(
        output["results"][0]["outcome"]["error"]["message"],
        message.as_str()
    );
    assert_eq!(
        output["results"][0]["outcome"]["error"]["code"],
        "unknown_skill"
    );
    let cli = cli_json(&["route", "--skills", root, "--no-suggestions", "gret"]);
    assert_eq!(cli, routed);

    // A user's slash command: invoke answers what route says.
    let user = post(
        s.addr,
        "/v1/route",
        &json!({ "text": "/skill gret", "from": "user" }),
    )
    .json();
    assert_eq!(user["route"], "error", "{user}");
    let user_message = user["message"].as_str().unwrap();
    assert!(!user_message.contains("greet"), "{user_message}");
    let invoked = post(s.addr, "/v1/invoke", &json!({ "line": "/skill gret" })).json();
    assert_eq!(invoked["error"]["message"], user_message);
    let cli = cli_json(&[
        "route",
        "--skills",
        root,
        "--no-suggestions",
        "--from",
        "user",
        "/skill gret",
    ]);
    assert_eq!(cli, user);

    // With the default settings the same doors do suggest (the test can fail).
    let d = serve(
        vec![Source::new(dir.path(), "layer1")],
        RouterConfig::default(),
        |_| {},
    );
    let invoked = post(d.addr, "/v1/invoke", &json!({ "line": "/skill gret" })).json();
    assert!(
        invoked["error"]["message"]
            .as_str()
            .unwrap()
            .contains("greet"),
        "{invoked}"
    );
}

/// HTTP text with the repository root taken out of paths, as the CLI helper does.
fn http_json(s: &Server, path: &str) -> Value {
    relative(get(s.addr, path).text())
}

fn relative(text: String) -> Value {
    let prefix = format!("{}/", repo_root().display());
    serde_json::from_str(&text.replace(&prefix, "")).unwrap()
}

#[test]
fn cli_json_matches_http_for_every_operation_both_have() {
    let notes = tempfile::tempdir().unwrap();
    write(
        notes.path(),
        "home/garden.md",
        "# garden\n\nWater the tomatoes every evening.\n",
    );
    let notes_dir = notes.path().to_path_buf();
    let s = serve(packs(), RouterConfig::default(), move |c| {
        c.notes = Some(notes_dir)
    });
    let layers: Vec<String> = crate::http::PACKS.iter().map(|p| (*p).to_owned()).collect();
    let mut skills: Vec<&str> = Vec::new();
    for p in &layers {
        skills.extend(["--skills", p]);
    }
    let with = |cmd: &[&str], rest: &[&str]| {
        let mut args: Vec<&str> = cmd.to_vec();
        args.extend(&skills);
        args.extend(rest);
        cli_json(&args)
    };

    // route, a model line and a user line
    for (text, from) in [("tasks.search --status todo", "model"), ("/skills", "user")] {
        let http =
            relative(post(s.addr, "/v1/route", &json!({ "text": text, "from": from })).text());
        assert_eq!(
            with(&["route"], &["--from", from, text]),
            http,
            "route {text}"
        );
    }
    // extract
    let output = "Looking.\n```cmd\ntasks.search --status todo\n```\nDone.\n";
    let file = notes.path().join("output.md");
    std::fs::write(&file, output).unwrap();
    let http = relative(post(s.addr, "/v1/extract", &json!({ "output": output })).text());
    assert_eq!(
        cli_json(&["extract", file.to_str().unwrap()]),
        http,
        "extract"
    );
    // catalog
    assert_eq!(
        with(&["catalog"], &["--format", "json"]),
        http_json(&s, "/v1/catalog?format=json"),
        "catalog"
    );
    // show and resources
    for name in ["weather-report", "commit"] {
        // The trust level differs by set-up, not by door: the CLI's `--skills` folders are
        // medium, this server's `layerN` sources low.
        let without_trust = |mut v: serde_json::Value| {
            v.as_object_mut().map(|o| o.remove("trust"));
            v
        };
        assert_eq!(
            without_trust(with(&["show"], &["--format", "json", name])),
            without_trust(http_json(&s, &format!("/v1/skills/{name}"))),
            "show {name}"
        );
        assert_eq!(
            with(&["resources"], &["--format", "json", name]),
            http_json(&s, &format!("/v1/skills/{name}/resources?caller=user")),
            "resources {name}"
        );
    }
    // get-skill (the CLI prints the text itself)
    let mut args = vec!["get-skill"];
    args.extend(&skills);
    args.push("email");
    let text = skill_server(&args).stdout;
    let http = http_json(&s, "/v1/get_skill?path=email");
    assert_eq!(
        text.trim_end(),
        http["text"].as_str().unwrap().trim_end(),
        "get-skill"
    );
    // search
    assert_eq!(
        with(
            &["search"],
            &["--format", "json", "--limit", "3", "will it rain in Paris"]
        ),
        http_json(&s, "/v1/search?q=will+it+rain+in+Paris&limit=3"),
        "search"
    );
    // select
    let message = "will it rain in Paris tomorrow?";
    let http = relative(post(s.addr, "/v1/select", &json!({ "message": message })).text());
    assert_eq!(with(&["select"], &[message]), http, "select");
    // notes-search
    let cli = cli_json(&[
        "notes-search",
        "--notes",
        notes.path().to_str().unwrap(),
        "--format",
        "json",
        "tomatoes",
    ]);
    assert_eq!(
        cli,
        http_json(&s, "/v1/notes/search?q=tomatoes"),
        "notes-search"
    );
    // schedules, from a fixed instant in a named zone
    assert_eq!(
        with(
            &["schedules"],
            &[
                "--tz",
                "Europe/Berlin",
                "--from",
                "2026-11-20T12:00:00Z",
                "--format",
                "json"
            ]
        ),
        http_json(
            &s,
            "/v1/schedules?tz=Europe/Berlin&from=2026-11-20T12:00:00Z"
        ),
        "schedules"
    );
}
