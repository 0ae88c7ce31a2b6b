//! Router behaviour: trigger control, configuration, bad input, and snapshots of the help
//! and error texts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::common::{seed_snapshot, summary};
use skill_registry::{Registry, RegistryConfig, Source};
use skill_router::{
    Caller, Error, MAX_COMMAND_BYTES, MAX_TOKENS, Prevalidate, Route, Router, RouterConfig,
};

fn text_of<S: AsRef<str> + std::fmt::Debug>(route: &Route<S>) -> String {
    match route {
        Route::Help { text, .. } | Route::SkillList { text, .. } => text.clone(),
        Route::Error(e) => format!("error[{}]: {e}", e.code()),
        other => summary(other),
    }
}

#[test]
fn help_and_error_texts() {
    let (_dir, snapshot) = seed_snapshot();
    let router = Router::new(&snapshot);
    let mut out = String::new();
    for (caller, input) in [
        (Caller::Model, "get_skill"),
        (Caller::Model, "get_skill:"),
        (Caller::Model, "get_skill: email"),
        (Caller::Model, "email --help"),
        (Caller::Model, "get_skill:calendar.list"),
        (Caller::Model, "email.all --help"),
        (Caller::Model, "get_skill: a.b.c"),
        (Caller::Model, "get_skill: emial"),
        (Caller::Model, "get_skill: email send"),
        (Caller::Model, "get_skill: nothing.all"),
        (Caller::Model, "email.sned --to x"),
        (Caller::Model, "email"),
        (Caller::Model, "commit --help"),
        (Caller::Model, "email.send --subject 'Q1"),
        (Caller::Model, "email.send --body \"a\0\""),
        (Caller::Model, "/plan"),
        (Caller::Model, "a | b"),
        (Caller::Model, "   "),
        (Caller::User, "/skills"),
        (Caller::User, "/skill"),
        (Caller::User, "/skill plan-compiler"),
        (Caller::User, "/skill project-conventions"),
        (Caller::User, "/plam x"),
    ] {
        let who = if caller == Caller::Model {
            "model"
        } else {
            "user"
        };
        let _ = writeln!(
            out,
            "=== {who}: {input:?}\n{}",
            text_of(&router.route(input, caller))
        );
    }
    // Schema pre-validation errors quote the skill's usage line.
    let prevalidating = Router::with_config(
        &snapshot,
        RouterConfig {
            prevalidate: Prevalidate::All,
            ..RouterConfig::default()
        },
    );
    for input in [
        "tasks.search --status overdue --bogus",
        "email.send --to a",
        "tasks.create --title x --priority urgent --priority low",
    ] {
        let _ = writeln!(
            out,
            "=== model, prevalidated: {input:?}\n{}",
            text_of(&prevalidating.route(input, Caller::Model))
        );
    }
    insta::assert_snapshot!(out);
}

#[test]
fn quoted_flag_values_after_an_unquoted_name() {
    let (_dir, snapshot) = seed_snapshot();
    let router = Router::new(&snapshot);
    match router.route(
        r#"email.send --to=bob@co.com --subject="Q1 Report" --body='See attached.' --cc="" "--bcc""#,
        Caller::Model,
    ) {
        Route::Invoke(i) => {
            let get = |f: &str| i.flags.get(f).and_then(|v| v.as_str()).map(str::to_owned);
            assert_eq!(get("to").as_deref(), Some("bob@co.com"));
            assert_eq!(get("subject").as_deref(), Some("Q1 Report"));
            assert_eq!(get("body").as_deref(), Some("See attached."));
            assert_eq!(get("cc").as_deref(), Some(""));
            // Fully quoted: a value, here the `--cc=""` flag's neighbour, so a positional.
            assert!(!i.flags.contains("bcc"));
            assert_eq!(i.positionals, ["--bcc"]);
        }
        other => panic!("{other:?}"),
    }
    // Pre-validation sees the quoted value as the flag's value.
    let config = RouterConfig {
        prevalidate: Prevalidate::All,
        ..RouterConfig::default()
    };
    assert!(matches!(
        Router::with_config(&snapshot, config).route(
            r#"email.send --to a --subject="Q1 Report" --body="x y""#,
            Caller::Model
        ),
        Route::Invoke(_)
    ));
}

#[test]
fn commands_route_to_loaded_skills_only_and_never_ambiguously() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| crate::common::write(dir.path(), rel, text);
    // `a_plan` sorts first but is invalid (tool_dispatch without command_tool); `b_plan`
    // is the valid skill declaring `/plan`.
    write(
        "a_plan/SKILL.md",
        "---\nsummary: Broken planner\ninvocation_mode: tool_dispatch\ncommand: plan\n---\nbroken\n",
    );
    write(
        "b_plan/SKILL.md",
        "---\nsummary: Planner\ncommand: plan\n---\nPlan: $ARGUMENTS\n",
    );
    // Two valid skills declaring `/dup`.
    write(
        "dup_one/SKILL.md",
        "---\nsummary: One\ncommand: dup\n---\none\n",
    );
    write(
        "dup_two/SKILL.md",
        "---\nsummary: Two\ncommand: dup\n---\ntwo\n",
    );
    // Only an invalid skill declares `/gone`: it fails clearly, not a plain message.
    write(
        "gone/SKILL.md",
        "---\nsummary: Gone\ninvocation_mode: tool_dispatch\ncommand: vanished\n---\nx\n",
    );
    let snapshot = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "l",
    )]))
    .snapshot();
    let router = Router::new(&snapshot);
    assert_eq!(
        summary(&router.route("/plan ship it", Caller::User)),
        r#"slash b_plan Command Inline args="ship it""#
    );
    match router.route("/dup x", Caller::User) {
        Route::Error(e) => {
            assert_eq!(e.code(), "ambiguous-command");
            assert_eq!(
                e.to_string(),
                "/dup is the command of several skills (dup_one, dup_two), so none of them is run: use /skill <name> to pick one"
            );
        }
        other => panic!("{other:?}"),
    }
    // Each stays reachable by name.
    assert_eq!(
        summary(&router.route("/skill dup_two", Caller::User)),
        r#"slash dup_two Skill Inline args="""#
    );
    assert_eq!(
        summary(&router.route("/vanished", Caller::User)),
        "error skill-invalid"
    );
    // `/skills` shows a command only where it leads to that skill.
    match router.route("/skills", Caller::User) {
        Route::SkillList { skills, .. } => {
            let got: Vec<(&str, Option<&str>)> = skills
                .iter()
                .map(|s| (s.name.as_str(), s.command.as_deref()))
                .collect();
            assert_eq!(
                got,
                [
                    ("b_plan", Some("plan")),
                    ("dup_one", None),
                    ("dup_two", None)
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    let reported: Vec<String> = router
        .diagnostics()
        .iter()
        .map(|d| {
            format!(
                "{} {}",
                d.path
                    .parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_string_lossy(),
                d.code
            )
        })
        .collect();
    assert_eq!(
        reported,
        ["dup_one command-collision", "dup_two command-collision"]
    );
}

#[test]
fn suggestions_can_be_turned_off() {
    let (_dir, snapshot) = seed_snapshot();
    let config = RouterConfig {
        suggestions: false,
        ..RouterConfig::default()
    };
    let router = Router::with_config(&snapshot, config);
    for (caller, input) in [
        (Caller::Model, "email.sned"),
        (Caller::Model, "get_skill: emial"),
        (Caller::User, "/skill plan-compiler"),
    ] {
        match router.route(input, caller) {
            Route::Error(e) => {
                assert!(e.suggestions().is_empty(), "{input}: {e}");
                assert!(!e.to_string().contains("Did you mean"), "{input}: {e}");
            }
            other => panic!("{input}: {other:?}"),
        }
    }
    match router.route("/plam", Caller::User) {
        Route::Message { suggestions, .. } => assert!(suggestions.is_empty()),
        other => panic!("{other:?}"),
    }
    // With suggestions on, the same inputs list names, and none is acted on.
    let router = Router::new(&snapshot);
    match router.route("email.sned --to x", Caller::Model) {
        Route::Error(e) => assert_eq!(e.suggestions(), ["email.send"]),
        other => panic!("{other:?}"),
    }
    match router.route("/plam", Caller::User) {
        Route::Message { suggestions, .. } => assert_eq!(suggestions, ["/plan"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn builtins_win_over_skill_commands_and_names() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| crate::common::write(dir.path(), rel, text);
    // A pegasus skill named like a built-in, and a lily skill whose command is `exit`.
    write(
        "help/SKILL.md",
        "---\nname: help\ndescription: Shadowing help\n---\nbody\n",
    );
    write(
        "quitter/SKILL.md",
        "---\nsummary: Quit things\ncommand: quit\n---\nbody\n",
    );
    let snapshot = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "l",
    )]))
    .snapshot();
    // The registry only knows its own built-ins: `quitter` loads.
    assert!(snapshot.get("quitter").is_some());
    assert!(Router::new(&snapshot).diagnostics().is_empty());
    let mut config = RouterConfig::default();
    config.builtin_commands.insert("quit".into());
    let router = Router::with_config(&snapshot, config);
    // The router's extra built-in wins, and the collision is reported.
    let reported: Vec<(String, String)> = router
        .diagnostics()
        .iter()
        .map(|d| (d.code.to_string(), d.message.clone()))
        .collect();
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert_eq!(reported[0].0, "command-collision");
    assert!(
        reported[0]
            .1
            .starts_with("command `/quit` of `quitter` is a built-in command"),
        "{}",
        reported[0].1
    );
    match router.route("/skills", Caller::User) {
        Route::SkillList { skills, .. } => {
            assert!(skills.iter().all(|s| s.command.is_none()), "{skills:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        summary(&router.route("/help", Caller::User)),
        r#"builtin help """#
    );
    assert_eq!(
        summary(&router.route("/quit now", Caller::User)),
        r#"builtin quit "now""#
    );
    // The skill is still reachable by exact name through /skill.
    assert_eq!(
        summary(&router.route("/skill help", Caller::User)),
        r#"slash help Skill Inline args="""#
    );
}

#[test]
fn prevalidation_is_opt_in_per_layer() {
    let (_dir, snapshot) = seed_snapshot();
    let bad = "tasks.search --status overdue --bogus";
    // Approach A (default): routed, the handler validates.
    assert!(matches!(
        Router::new(&snapshot).route(bad, Caller::Model),
        Route::Invoke(_)
    ));
    // Another layer opted in: still routed.
    let other = RouterConfig {
        prevalidate: Prevalidate::Layers(BTreeSet::from(["user".to_owned()])),
        ..RouterConfig::default()
    };
    assert!(matches!(
        Router::with_config(&snapshot, other).route(bad, Caller::Model),
        Route::Invoke(_)
    ));
    // The skill's layer opted in: rejected, quoting the usage line.
    let builtin = RouterConfig {
        prevalidate: Prevalidate::Layers(BTreeSet::from(["builtin".to_owned()])),
        ..RouterConfig::default()
    };
    let router = Router::with_config(&snapshot, builtin);
    match router.route(bad, Caller::Model) {
        Route::Error(Error::InvalidFlags {
            skill,
            problems,
            usage,
        }) => {
            assert_eq!(skill, "tasks.search");
            assert_eq!(problems.len(), 2);
            assert!(usage.unwrap().starts_with("tasks.search [--query <text>]"));
        }
        other => panic!("{other:?}"),
    }
    match router.route("email.send --to a", Caller::Model) {
        Route::Error(e) => assert_eq!(
            e.to_string(),
            "invalid flags for email.send: missing required flag --subject; missing required flag --body. Usage: email.send --to <addresses> --subject <text> --body <text> [--cc <addresses>] [--bcc <addresses>] [--attachments <file_ids>]"
        ),
        other => panic!("{other:?}"),
    }
    // Skills without a ## Flags section pass; help is never pre-validated.
    assert!(matches!(
        router.route("code-review --anything", Caller::Model),
        Route::Invoke(_)
    ));
    assert!(matches!(
        router.route("email.send --help", Caller::Model),
        Route::Help { .. }
    ));
    let all = RouterConfig {
        prevalidate: Prevalidate::All,
        ..RouterConfig::default()
    };
    assert!(
        Router::with_config(&snapshot, all)
            .route(bad, Caller::Model)
            .is_error()
    );
}

#[test]
fn single_skill_rule_for_whole_outputs() {
    let (_dir, snapshot) = seed_snapshot();
    let output = "```cmd\nget_skill: email.send\nemail.send --to a --subject b --body c\nemail.send --to d --subject e --body f\ntasks.search --overdue\n```\n";
    let routes: Vec<String> = Router::new(&snapshot)
        .route_output(output)
        .routes
        .iter()
        .map(|r| summary(&r.route))
        .collect();
    assert!(routes.iter().all(|r| !r.starts_with("error")), "{routes:?}");
    let config = RouterConfig {
        single_skill: true,
        ..RouterConfig::default()
    };
    let router = Router::with_config(&snapshot, config);
    let routed = router.route_output(output);
    let got: Vec<String> = routed.routes.iter().map(|r| summary(&r.route)).collect();
    assert!(got[0].starts_with("help email.send"));
    assert!(got[1].starts_with("invoke email.send") && got[2].starts_with("invoke email.send"));
    assert_eq!(got[3], "error single-skill");
    assert_eq!(
        text_of(&routed.routes[3].route),
        "error[single-skill]: one request may use one skill: `email.send` is already in use, so `tasks.search` is not run (lily single-skill rule)"
    );
}

#[test]
fn routing_the_first_commands_of_an_output_keeps_the_rest_extracted() {
    let (_dir, snapshot) = seed_snapshot();
    let output = "```cmd\nget_skill: email.send\nemail.send --to a --subject b --body c\ntasks.search --overdue\n```\n";
    let router = Router::new(&snapshot);
    let all = router.route_output(output);
    let first = router.route_output_first(output, 2);
    assert_eq!(first.routes.len(), 2);
    assert_eq!(first.extraction.commands().count(), 3);
    let summaries = |r: &skill_router::RoutedOutput<'_>| -> Vec<String> {
        r.routes.iter().map(|c| summary(&c.route)).collect()
    };
    assert_eq!(summaries(&first), summaries(&all)[..2]);
    assert_eq!(router.route_output_first(output, 3).routes.len(), 3);
    assert_eq!(router.route_output_first(output, 0).routes.len(), 0);
}

#[test]
fn profiles_hide_excluded_skills() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("secret/SKILL.md");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, "---\nname: secret\ndescription: Not for kids\nexclude_from_prompt_profile_ids: [kids]\n---\nbody\n").unwrap();
    let snapshot = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "l",
    )]))
    .snapshot();
    assert!(matches!(
        Router::new(&snapshot).route("secret", Caller::Model),
        Route::Invoke(_)
    ));
    let kids = RouterConfig {
        profile: Some("kids".into()),
        ..RouterConfig::default()
    };
    let router = Router::with_config(&snapshot, kids);
    assert_eq!(
        summary(&router.route("secret", Caller::Model)),
        "error not-for-profile"
    );
    assert_eq!(
        summary(&router.route("/secret", Caller::User)),
        "error not-for-profile"
    );
    assert_eq!(summary(&router.route("/skills", Caller::User)), "list ");
}

#[test]
fn bad_input_never_panics_and_says_what_is_wrong() {
    let (_dir, snapshot) = seed_snapshot();
    let router = Router::new(&snapshot);
    let code = |r: Route| match r {
        Route::Error(e) => e.code(),
        other => panic!("{other:?}"),
    };
    assert_eq!(code(router.route("", Caller::Model)), "empty");
    assert_eq!(code(router.route(" \t\r\n", Caller::Model)), "empty");
    assert_eq!(code(router.route("", Caller::User)), "empty");
    // A 1 MiB command line routes; one byte more is refused.
    let body = "x".repeat(MAX_COMMAND_BYTES - "email.send --to a --subject b --body ".len());
    let line = format!("email.send --to a --subject b --body {body}");
    assert_eq!(line.len(), MAX_COMMAND_BYTES);
    match router.route(&line, Caller::Model) {
        Route::Invoke(i) => assert_eq!(
            i.flags.get("body").unwrap().as_str().unwrap().len(),
            body.len()
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        code(router.route(&format!("{line}y"), Caller::Model)),
        "too-long"
    );
    assert_eq!(
        code(router.route(&format!("/x {line}"), Caller::User)),
        "too-long"
    );
    // 100,000 flags: refused at the word limit, quickly.
    let many: String = (0..100_000).map(|i| format!(" --f{i}")).collect();
    match router.route(&format!("tasks.search{many}"), Caller::Model) {
        Route::Error(Error::TooManyTokens { limit }) => assert_eq!(limit, MAX_TOKENS),
        other => panic!("{other:?}"),
    }
    // Just under the limit still routes.
    let under: String = (0..MAX_TOKENS - 1).map(|i| format!(" --f{i}")).collect();
    match router.route(&format!("tasks.search{under}"), Caller::Model) {
        Route::Invoke(i) => assert_eq!(i.flags.len(), MAX_TOKENS - 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        code(router.route("email.send --to \0", Caller::Model)),
        "nul"
    );
    assert_eq!(
        code(router.route_bytes(b"email.send --to \xff", Caller::Model)),
        "invalid-utf8"
    );
    assert_eq!(
        code(router.route_bytes(b"/skill \xc3", Caller::User)),
        "invalid-utf8"
    );
    // Unicode flag names are kept as written (the handler decides).
    match router.route("tasks.search --größe 3 --名前", Caller::Model) {
        Route::Invoke(i) => {
            assert_eq!(i.flags.get("größe").unwrap().as_str(), Some("3"));
            assert!(i.flags.get("名前").unwrap().is_switch());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        code(router.route("get_skill: a.b.c", Caller::Model)),
        "unknown-skill"
    );
    assert!(matches!(
        router.route("get_skill:", Caller::Model),
        Route::Help { topic: None, .. }
    ));
    match router.route("email.all --help", Caller::Model) {
        Route::Help { topic, text } => {
            assert_eq!(topic.as_deref(), Some("email.all"));
            assert!(text.contains("# email.draft") && text.contains("# email.send"));
        }
        other => panic!("{other:?}"),
    }
    // Quoted words are never flags or commands.
    match router.route("code-review \"--help\" '/x'", Caller::Model) {
        Route::Invoke(i) => assert_eq!(i.positionals, ["--help", "/x"]),
        other => panic!("{other:?}"),
    }
}

/// Namespaced names (`ns:name`, sources with a namespace) route everywhere a name does: a
/// model's command word (with flags, in a `cmd` block too), `get_skill:` and `--help`,
/// a user's `/ns:name` and `/skill ns:name`, and an unknown namespaced name is an error
/// with the closest names. Two packs' `pdf` skills are both reachable.
#[test]
fn namespaced_names_route_like_any_name() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let skill = |name: &str, body: &str| {
        format!("---\nname: {name}\ndescription: The {name} skill.\n---\n{body}\n")
    };
    crate::common::write(a.path(), "pdf/SKILL.md", &skill("pdf", "A's steps."));
    crate::common::write(b.path(), "pdf/SKILL.md", &skill("pdf", "B's steps."));
    crate::common::write(
        b.path(),
        "email/SKILL.md",
        "---\ndomain: email\ndescription: Mail.\n---\nIndex.\n",
    );
    crate::common::write(
        b.path(),
        "email/search.md",
        "---\nname: email.search\ndescription: Find mail.\n---\nSearch.\n",
    );
    let source = |root: &std::path::Path, layer: &str, ns: &str| {
        let mut s = Source::new(root, layer);
        s.namespace = Some(skill_registry::Namespace::new(ns).unwrap());
        s
    };
    let registry = Registry::load(RegistryConfig::with_sources(vec![
        source(a.path(), "user", "a"),
        source(b.path(), "project", "b"),
    ]));
    let snapshot = registry.snapshot();
    let router = Router::new(&snapshot);
    let model = |line: &str| summary(&router.route(line, Caller::Model));
    assert_eq!(
        model("a:pdf out.pdf --pages 3"),
        "invoke a:pdf Mutating [pages=\"3\"] pos[\"out.pdf\"]"
    );
    assert!(model("b:pdf").starts_with("invoke b:pdf "));
    assert!(model("b:email.search --q x").starts_with("invoke b:email.search ReadOnly"));
    assert_eq!(
        text_of(&router.route("get_skill: a:pdf", Caller::Model)),
        "A's steps.\n"
    );
    assert_eq!(
        text_of(&router.route("get_skill:b:pdf", Caller::Model)),
        "B's steps.\n"
    );
    assert_eq!(
        text_of(&router.route("b:pdf --help", Caller::Model)),
        "B's steps.\n"
    );
    assert_eq!(
        text_of(&router.route("get_skill: b:email", Caller::Model)),
        "Index.\n"
    );
    let out = router.route_output("```cmd\na:pdf x\nb:pdf y\n```\n");
    let routed: Vec<String> = out.routes.iter().map(|r| summary(&r.route)).collect();
    assert_eq!(routed.len(), 2, "{routed:?}");
    assert!(routed[0].starts_with("invoke a:pdf"), "{routed:?}");
    assert!(routed[1].starts_with("invoke b:pdf"), "{routed:?}");

    let user = |line: &str| summary(&router.route(line, Caller::User));
    assert!(
        user("/a:pdf now").starts_with("slash a:pdf Name"),
        "{}",
        user("/a:pdf now")
    );
    assert!(user("/skill b:pdf now").starts_with("slash b:pdf Skill"));

    let unknown = text_of(&router.route("c:pdf", Caller::Model));
    assert!(
        unknown.starts_with("error[") && unknown.contains("c:pdf"),
        "{unknown}"
    );
    assert!(
        unknown.contains("a:pdf") || unknown.contains("b:pdf"),
        "{unknown}"
    );
    // The bare name is no longer a skill of either pack.
    assert!(text_of(&router.route("pdf", Caller::Model)).starts_with("error["));
}

/// A typed invocation reads only its arguments: the name is taken whole, never parsed
/// as a command, and the arguments give the same flags and positionals as the line.
#[test]
fn a_typed_name_and_arguments_route_as_the_line_would() {
    let (_dir, snapshot) = seed_snapshot();
    let router = Router::new(&snapshot);
    let typed = router.route_skill("email.send", Some("--to a@b.c 'Q1 report'"));
    let line = router.route("email.send --to a@b.c 'Q1 report'", Caller::Model);
    assert_eq!(format!("{typed:?}"), format!("{line:?}"));
    assert!(matches!(typed, Route::Invoke(_)), "{typed:?}");
    assert_eq!(
        format!("{:?}", router.route_skill("email.send", None)),
        format!("{:?}", router.route("email.send", Caller::Model))
    );
    // A name with words in it is one name (no skill has it), not a line.
    let spaced = router.route_skill("email.send --to x", None);
    assert!(
        matches!(spaced, Route::Error(ref e) if e.code() == "unknown-skill"),
        "{spaced:?}"
    );
    // `get_skill` is a name here, not the disclosure command.
    assert!(matches!(
        router.route_skill("get_skill", None),
        Route::Error(_)
    ));
    // The arguments are read as a line's are: a pipe is refused.
    let piped = router.route_skill("email.send", Some("a | b"));
    assert!(
        matches!(piped, Route::Error(ref e) if e.code() == "pipe"),
        "{piped:?}"
    );
}
