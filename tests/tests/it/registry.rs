//! Loading layered sources: precedence, shadowing, no fallback, duplicates, layouts.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::sync::Arc;

use skill_format::{Code, Dialect};
use skill_registry::{Environment, Layout, Registry, RegistryConfig, Source, Status};
use skills_tests::{skill_md, write};

fn config(sources: Vec<Source>) -> RegistryConfig {
    let mut c = RegistryConfig::with_sources(sources);
    // Hermetic: no real environment or PATH.
    c.environment = Environment {
        os: "linux".into(),
        env_present: Arc::new(|_| false),
        binary_present: Arc::new(|_| false),
        ..Environment::default()
    };
    c
}

#[test]
fn higher_layer_wins_and_the_loser_is_recorded_as_shadowed() {
    let builtin = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        builtin.path(),
        "review/SKILL.md",
        &skill_md("review", "builtin review"),
    );
    write(
        project.path(),
        "review/SKILL.md",
        &skill_md("review", "project review"),
    );
    let r = Registry::load(config(vec![
        Source::new(builtin.path(), "builtin"),
        Source::new(project.path(), "project"),
    ]));
    let s = r.snapshot();
    let review = s.get("review").unwrap();
    assert_eq!(review.description, "project review");
    assert_eq!(review.layer, "project");
    assert_eq!(s.shadowed().len(), 1);
    assert_eq!(s.shadowed()[0].layer, "builtin");
    assert_eq!(s.shadowed()[0].status, Status::Shadowed);
    let d = s
        .diagnostics()
        .iter()
        .find(|d| d.code == Code::Shadowed)
        .unwrap();
    assert!(d.message.contains("project"), "{}", d.message);
}

#[test]
fn no_fallback_when_the_winner_is_malformed() {
    let builtin = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        builtin.path(),
        "review/SKILL.md",
        &skill_md("review", "good"),
    );
    write(
        project.path(),
        "review/SKILL.md",
        "---\nname: review\ndescription: [broken\n---\n",
    );
    let r = Registry::load(config(vec![
        Source::new(builtin.path(), "builtin"),
        Source::new(project.path(), "project"),
    ]));
    let s = r.snapshot();
    assert!(
        s.get("review").is_none(),
        "the builtin must not be used as a fallback"
    );
    assert_eq!(s.entry("review").unwrap().status, Status::Invalid);
    assert_eq!(s.shadowed()[0].layer, "builtin");
}

#[test]
fn no_fallback_when_the_winner_is_ineligible() {
    let builtin = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        builtin.path(),
        "gitsum/SKILL.md",
        "---\nsummary: builtin\n---\nbody\n",
    );
    write(
        project.path(),
        "gitsum/SKILL.md",
        "---\nsummary: project\neligibility:\n  binaries: [git]\n---\nbody\n",
    );
    let r = Registry::load(config(vec![
        Source::new(builtin.path(), "builtin"),
        Source::new(project.path(), "project"),
    ]));
    let s = r.snapshot();
    assert!(s.get("gitsum").is_none());
    let e = s.entry("gitsum").unwrap();
    assert_eq!(e.status, Status::Ineligible);
    assert!(
        e.diagnostics
            .iter()
            .any(|d| d.code == Code::IneligibleBinary)
    );
}

#[test]
fn duplicates_in_one_layer_are_errors_with_a_deterministic_winner() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "b-cat/tool/SKILL.md",
        &skill_md("tool", "second"),
    );
    write(
        root.path(),
        "a-cat/tool/SKILL.md",
        &skill_md("tool", "first"),
    );
    for _ in 0..3 {
        let r = Registry::load(config(vec![Source::new(root.path(), "project")]));
        let s = r.snapshot();
        // Lenient mode warns on the folder mismatch but both load; a-cat sorts first.
        let winner = s.entry("tool").unwrap();
        assert!(
            winner.path.to_string_lossy().contains("a-cat"),
            "{}",
            winner.path.display()
        );
        let dup = s
            .diagnostics()
            .iter()
            .find(|d| d.code == Code::DuplicateName)
            .unwrap();
        assert!(dup.is_error());
        assert!(dup.path.to_string_lossy().contains("b-cat"));
    }
}

#[test]
fn actions_domains_and_notes_layouts() {
    let actions = tempfile::tempdir().unwrap();
    write(
        actions.path(),
        "email/SKILL.md",
        "---\ndomain: email\ndescription: Mail\n---\n# Email\n",
    );
    write(
        actions.path(),
        "email/send.md",
        "---\nname: email.send\ndescription: Send\n---\n# email.send\n",
    );
    write(
        actions.path(),
        "email/read.md",
        "---\nname: email.read\ndescription: Read\n---\n",
    );
    let notes = tempfile::tempdir().unwrap();
    write(
        notes.path(),
        "meeting.md",
        "---\nname: Meeting Notes Helper\ndescription: Format notes\n---\nbody\n",
    );
    write(
        notes.path(),
        "groceries.md",
        "---\ntitle: Groceries\n---\nmilk\n",
    );
    let mut notes_source = Source::new(notes.path(), "user");
    notes_source.layout = Layout::Notes;
    let r = Registry::load(config(vec![
        Source::new(actions.path(), "builtin"),
        notes_source,
    ]));
    let s = r.snapshot();
    let names: BTreeSet<_> = s.skills().map(|k| k.name.clone()).collect();
    assert_eq!(
        names,
        ["email.read", "email.send", "meeting-notes-helper"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    let send = s.get("email.send").unwrap();
    assert_eq!(send.dialect, Dialect::Actions);
    assert_eq!(send.domain.as_deref(), Some("email"));
    assert_eq!(s.domain("email").unwrap().description, "Mail");
}

#[test]
fn a_broken_file_never_stops_the_others() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "good/SKILL.md", &skill_md("good", "fine"));
    std::fs::create_dir_all(root.path().join("bin")).unwrap();
    std::fs::write(root.path().join("bin/SKILL.md"), [0u8, 159, 146, 150]).unwrap();
    std::fs::create_dir_all(root.path().join("dir/SKILL.md")).unwrap();
    write(root.path(), "open/SKILL.md", "---\nname: open\n");
    let r = Registry::load(config(vec![Source::new(root.path(), "project")]));
    let s = r.snapshot();
    assert!(s.get("good").is_some());
    let codes: BTreeSet<_> = s.diagnostics().iter().map(|d| d.code).collect();
    for c in [Code::BinaryFile, Code::NotAFile, Code::UnclosedFrontmatter] {
        assert!(codes.contains(&c), "{c} missing from {codes:?}");
    }
}

#[test]
fn eligibility_with_registered_tools_and_policy() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "relnotes/SKILL.md",
        "---\nsummary: s\ninvocation_mode: tool_dispatch\ncommand_tool: render\nrequires_tools: [read]\n---\n",
    );
    let mut c = config(vec![Source::new(root.path(), "builtin")]);
    c.environment.registered_tools = Some(BTreeSet::new());
    let s = Registry::load(c.clone()).snapshot();
    assert_eq!(s.entry("relnotes").unwrap().status, Status::Ineligible);
    c.environment.registered_tools = Some(["render".to_owned()].into());
    c.environment.tool_policy = Some(["read".to_owned()].into());
    let s = Registry::load(c).snapshot();
    assert!(s.get("relnotes").is_some());
}

#[test]
fn reload_publishes_a_new_generation_and_old_snapshots_stay_valid() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "a/SKILL.md", &skill_md("a", "first"));
    let r = Registry::load(config(vec![Source::new(root.path(), "project")]));
    let before = r.snapshot();
    write(root.path(), "a/SKILL.md", &skill_md("a", "second"));
    let after = r.reload();
    assert_eq!(after.changed, vec!["a".to_string()]);
    assert_eq!((before.generation(), after.generation), (1, 2));
    assert_eq!(before.get("a").unwrap().description, "first");
    assert_eq!(r.snapshot().get("a").unwrap().description, "second");
}

#[test]
fn list_cli_shows_layers_and_shadowed_entries() {
    let run = skills_tests::skill_server(&[
        "list",
        "--skills",
        "packs/pegasus",
        "--skills",
        "packs/pegasus",
    ]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.starts_with("NAME"), "{}", run.stdout);
    assert!(
        run.stdout.contains("shadowed:\n  code-review (layer1)"),
        "{}",
        run.stdout
    );
    let run = skills_tests::skill_server(&[
        "list",
        "--format",
        "json",
        "--skills",
        "packs/pegasus",
        "--skills",
        "packs/pegasus",
    ]);
    insta::assert_snapshot!(run.stdout);
}
