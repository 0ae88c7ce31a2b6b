//! Disclosure over the bundled packs: catalogs in every format and budget, the get_skill
//! tiers and their errors, load_skill, use_skill, scoped listings and resources.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use skill_registry::{
    Budget, Caller, CatalogFormat, Disclosure, Error, MAX_AVAILABLE_NAMES, MAX_RESOURCE_BYTES,
    MAX_RESOURCE_DEPTH, Registry, RegistryConfig, ResourceKind, Source, TRUNCATION_MARK,
    Unavailable, UseSkillMode,
};
use skills_tests::{repo_root, skill_md, skill_server, write};

const ALL_PACKS: &[&str] = &[
    "packs/agentskills",
    "packs/actions",
    "packs/lily",
    "packs/pegasus",
    "packs/toolsets",
];

fn registry(packs: &[&str]) -> Registry {
    let root = repo_root();
    Registry::load(RegistryConfig::with_sources(
        packs
            .iter()
            .enumerate()
            .map(|(i, p)| Source::new(root.join(p), format!("layer{}", i + 1)))
            .collect(),
    ))
}

fn skills_args<'a>(packs: &[&'a str]) -> Vec<&'a str> {
    packs.iter().flat_map(|p| ["--skills", *p]).collect()
}

fn cli(args: &[&str], packs: &[&str]) -> skills_tests::Run {
    let mut argv: Vec<&str> = args.to_vec();
    argv.extend(skills_args(packs));
    skill_server(&argv)
}

fn both(run: &skills_tests::Run) -> String {
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        run.code, run.stdout, run.stderr
    )
}

/// [`both`], for XML and JSON catalogs: their text holds each skill's absolute path, so the
/// character count in the budget report depends on where the checkout is; it is masked.
fn both_path_independent(run: &skills_tests::Run) -> String {
    let mut out = both(run);
    if let Some(i) = out.find(" skills listed, ") {
        let start = i + " skills listed, ".len();
        if let Some(len) = out[start..].find(" of ") {
            out.replace_range(start..start + len, "[N]");
        }
    }
    if let Some(i) = out.find("\"used_chars\": ") {
        let start = i + "\"used_chars\": ".len();
        let end = out[start..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(out.len(), |e| start + e);
        out.replace_range(start..end, "\"[N]\"");
    }
    out
}

// --- Catalogs ---------------------------------------------------------------------------

#[test]
fn catalog_markdown_over_every_pack() {
    insta::assert_snapshot!(both(&cli(&["catalog"], ALL_PACKS)));
}

#[test]
fn catalog_xml_and_json_over_agentskills() {
    insta::assert_snapshot!(
        "catalog_xml",
        both_path_independent(&cli(
            &["catalog", "--format", "xml"],
            &["packs/agentskills"]
        ))
    );
    insta::assert_snapshot!(
        "catalog_json",
        both_path_independent(&cli(
            &["catalog", "--format", "json"],
            &["packs/agentskills"]
        ))
    );
}

#[test]
fn catalog_budget_cases() {
    let mut out = String::new();
    for args in [
        &["catalog", "--budget-chars", "0"][..],
        &["catalog", "--budget-chars", "900"],
        &["catalog", "--budget-chars", "2500"],
        &["catalog", "--context-window-tokens", "20000"],
        &["catalog", "--entry-cap-chars", "80"],
    ] {
        out.push_str(&format!("=== {}\n", args.join(" ")));
        out.push_str(&both(&cli(args, ALL_PACKS)));
    }
    insta::assert_snapshot!(out);
}

/// XML and JSON catalogs hold each listed skill's absolute path, so which entries fit a
/// fixed budget would depend on where the checkout is. The budget here is `base` plus the
/// checkout root's length once per entry expected to fit (`k`): when exactly `k` entries
/// are listed (checked), what is listed, shortened and omitted is the same in every
/// checkout. The budget and the character count are masked as `both_path_independent` does.
#[test]
fn catalog_budget_cases_xml_and_json() {
    let root_chars = std::fs::canonicalize(repo_root())
        .unwrap()
        .display()
        .to_string()
        .chars()
        .count();
    let mut out = String::new();
    // (format, base, k): base lies between the smallest budget that lists k entries and
    // the smallest that lists k + 1, both less k (or k + 1) root lengths.
    for (format, base, k) in [("xml", 820, 4), ("json", 1000, 6), ("xml", 0, 0)] {
        let budget = base + k * root_chars;
        let budget_arg = budget.to_string();
        let run = cli(
            &["catalog", "--format", format, "--budget-chars", &budget_arg],
            ALL_PACKS,
        );
        assert_eq!(run.code, 0, "{}", both(&run));
        let listed = if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
            v["report"]["included"].as_array().unwrap().len()
        } else {
            run.stdout.matches("<skill>").count()
        };
        assert_eq!(listed, k, "{format} {budget}: {}", both(&run));
        let shown = if k == 0 {
            base.to_string()
        } else {
            format!("{base} + {k} x root")
        };
        out.push_str(&format!(
            "=== catalog --format {format} --budget-chars ({shown})\n"
        ));
        out.push_str(
            &both_path_independent(&run)
                .replace(
                    &format!("of {budget} chars"),
                    &format!("of ({shown}) chars"),
                )
                .replace(
                    &format!("\"budget_chars\": {budget},"),
                    &format!("\"budget_chars\": \"({shown})\","),
                ),
        );
    }
    insta::assert_snapshot!(out);
}

#[test]
fn catalog_for_profiles() {
    let mut out = String::new();
    for profile in ["work_assistant", "kids_mode"] {
        out.push_str(&format!("=== --profile {profile}\n"));
        out.push_str(&both(&cli(
            &["catalog", "--profile", profile],
            &["packs/agentskills"],
        )));
    }
    insta::assert_snapshot!(out);
}

/// The reference library's `to-prompt` output for the bundled agentskills skills it can
/// parse (see fixtures/README.md), with the checkout's path as `{ROOT}`.
#[test]
fn xml_catalog_is_byte_identical_to_the_reference_to_prompt() {
    let expected = include_str!("fixtures/to-prompt-agentskills.xml");
    let root = std::fs::canonicalize(repo_root()).unwrap();
    let expected = expected.replace("{ROOT}", &root.display().to_string());
    let expected = expected.strip_suffix('\n').unwrap();
    // The same skills, in the same (name) order, as single-skill sources.
    let dirs = [
        "packs/agentskills/data/csv-cleanup",
        "packs/agentskills/html-snippets",
        "packs/agentskills/pdf-forms",
        "packs/agentskills/release-checklist",
    ];
    let r = registry(&dirs);
    let snap = r.snapshot();
    let catalog = Disclosure::new(&snap).catalog(CatalogFormat::Xml, &Budget::default());
    assert_eq!(catalog.text, expected);
    assert!(catalog.report.is_complete());
}

#[test]
fn every_budget_is_respected_and_nothing_is_dropped_silently() {
    let r = registry(ALL_PACKS);
    let snap = r.snapshot();
    let view = Disclosure::new(&snap);
    let mut shortened_json = false;
    for format in [
        CatalogFormat::Markdown,
        CatalogFormat::Xml,
        CatalogFormat::Json,
    ] {
        let full = view.catalog(format, &Budget::default());
        assert!(full.report.is_complete(), "{format:?}");
        let mut last_included = 0;
        for budget in (0..=full.report.used_chars + 10).step_by(13) {
            let c = view.catalog(
                format,
                &Budget {
                    budget_chars: Some(budget),
                    ..Budget::default()
                },
            );
            let used = c.text.chars().count();
            assert!(used <= budget, "{format:?} {budget}: {used}");
            assert_eq!(c.report.used_chars, used);
            let mut all: Vec<&String> = c.report.included.iter().chain(&c.report.omitted).collect();
            all.sort();
            all.dedup();
            assert_eq!(all.len(), c.report.candidates, "{format:?} {budget}");
            assert_eq!(
                c.report.included.len() + c.report.omitted.len(),
                c.report.candidates
            );
            // More room never lists fewer skills.
            assert!(
                c.report.included.len() >= last_included,
                "{format:?} {budget}"
            );
            last_included = c.report.included.len();
            for e in &c.entries {
                assert_eq!(e.truncated, e.description.ends_with(TRUNCATION_MARK));
                assert_eq!(e.truncated, c.report.truncated.contains(&e.name));
            }
            // The JSON text says which entries it shortened, as the entries do.
            if format == CatalogFormat::Json && !c.text.is_empty() {
                let parsed: Vec<serde_json::Value> = serde_json::from_str(&c.text).unwrap();
                assert_eq!(parsed.len(), c.entries.len());
                for (v, e) in parsed.iter().zip(&c.entries) {
                    assert_eq!(v["name"], e.name.as_str());
                    assert_eq!(v["description"], e.description.as_str());
                    assert_eq!(v["truncated"], e.truncated, "{budget}: {}", c.text);
                }
                shortened_json |= c.entries.iter().any(|e| e.truncated);
            }
            // Deterministic.
            assert_eq!(
                c,
                view.catalog(
                    format,
                    &Budget {
                        budget_chars: Some(budget),
                        ..Budget::default()
                    }
                )
            );
        }
    }
    assert!(shortened_json, "no budget shortened a JSON entry");
    // An absurd budget is just "everything".
    let huge = view.catalog(
        CatalogFormat::Markdown,
        &Budget {
            context_window_tokens: Some(u64::MAX),
            ..Budget::default()
        },
    );
    assert!(huge.report.is_complete());
}

#[test]
fn markup_in_names_and_descriptions_cannot_break_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "odd/SKILL.md",
        "---\nname: odd\ndescription: |\n  Use <b>bold</b> & \"quotes\" 'too'\n  - not a list item\n  </description><skill>\n---\nbody\n",
    );
    let r = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "project",
    )]));
    let snap = r.snapshot();
    let view = Disclosure::new(&snap);
    let md = view
        .catalog(CatalogFormat::Markdown, &Budget::default())
        .text;
    assert_eq!(
        md.lines().filter(|l| l.starts_with("- ")).count(),
        1,
        "{md}"
    );
    let xml = view.catalog(CatalogFormat::Xml, &Budget::default()).text;
    assert!(xml.contains("&lt;/description&gt;&lt;skill&gt;"), "{xml}");
    assert_eq!(xml.matches("<skill>").count(), 1);
    let json = view.catalog(CatalogFormat::Json, &Budget::default()).text;
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed[0]["name"], "odd");
}

// --- get_skill ---------------------------------------------------------------------------

#[test]
fn get_skill_tiers_and_errors() {
    let mut out = String::new();
    for path in [
        None,
        Some("email"),
        Some("email.send"),
        Some("workflows.all"),
        Some("pdf-forms"),
        Some("emial"),
        Some("email.sned"),
        Some("nope.all"),
        Some("email.send.extra"),
        Some("commit"),
    ] {
        let mut args = vec!["get-skill"];
        args.extend(path);
        out.push_str(&format!("=== {}\n", args.join(" ")));
        out.push_str(&both(&cli(&args, ALL_PACKS)));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn get_skill_all_is_sorted_and_separated_as_the_seed_says() {
    let r = registry(&["packs/actions"]);
    let snap = r.snapshot();
    let text = Disclosure::new(&snap).get_skill(Some("email.all")).unwrap();
    let parts: Vec<&str> = text.split("\n\n---\n\n").collect();
    let names: Vec<&str> = parts
        .iter()
        .map(|p| p.lines().next().unwrap().trim_start_matches("# "))
        .collect();
    assert_eq!(
        names,
        ["email.draft", "email.read", "email.search", "email.send"]
    );
    let send = snap.get("email.send").unwrap();
    assert!(parts[3].ends_with(&send.body));
}

// --- load_skill, use_skill, scoped listing --------------------------------------------------

#[test]
fn load_skill_shape_and_profile_rules() {
    let r = registry(ALL_PACKS);
    let snap = r.snapshot();
    let view = Disclosure::new(&snap);
    let text = view.load_skill("pdf-forms").unwrap();
    let body = &snap.get("pdf-forms").unwrap().body;
    assert_eq!(text, format!("# pdf-forms\n\n{body}"));
    // Not listed in the catalog, but loadable on demand.
    assert!(
        !view
            .catalog(CatalogFormat::Markdown, &Budget::default())
            .report
            .included
            .contains(&"home-automation".to_owned())
    );
    assert!(view.load_skill("home-automation").is_ok());
    let kids = Disclosure::new(&snap).profile(Some("kids_mode"));
    let e = kids.load_skill("meeting-notes").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Skill 'meeting-notes' is not available for this profile."
    );
    // The seed's text (agent-skills-integration 3.8): every skill this caller may load,
    // then the closest names.
    let e = view.load_skill("pdf-form").unwrap_err();
    let loadable: Vec<&str> = snap
        .skills()
        .filter(|s| view.skill(&s.name).is_ok())
        .map(|s| s.name.as_str())
        .collect();
    assert!(loadable.contains(&"home-automation") && !loadable.contains(&"commit"));
    assert_eq!(
        e.to_string(),
        format!(
            "Skill 'pdf-form' not found. Available: {}. Did you mean: pdf-forms?",
            loadable.join(", ")
        )
    );
    assert!(matches!(e, Error::SkillNotFound { more: 0, .. }));
}

/// The "not found" answer names at most `MAX_AVAILABLE_NAMES` skills and counts the rest.
#[test]
fn load_skill_not_found_lists_at_most_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..=MAX_AVAILABLE_NAMES {
        let name = format!("s{i:03}");
        write(
            dir.path(),
            &format!("{name}/SKILL.md"),
            &skill_md(&name, "A skill."),
        );
    }
    let r = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "project",
    )]));
    let snap = r.snapshot();
    let view = Disclosure::new(&snap);
    match view.load_skill("zzz").unwrap_err() {
        Error::SkillNotFound {
            available, more, ..
        } => {
            assert_eq!(available.len(), MAX_AVAILABLE_NAMES);
            assert_eq!(available[0], "s000");
            assert_eq!(more, 1);
        }
        e => panic!("{e}"),
    }
    // At the cap exactly: everything named, nothing counted.
    std::fs::remove_dir_all(dir.path().join(format!("s{MAX_AVAILABLE_NAMES:03}"))).unwrap();
    r.reload();
    let snap = r.snapshot();
    let e = Disclosure::new(&snap).load_skill("zzz").unwrap_err();
    assert!(
        matches!(&e, Error::SkillNotFound { available, more: 0, .. } if available.len() == MAX_AVAILABLE_NAMES),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains(&format!(", s{:03}", MAX_AVAILABLE_NAMES - 1)) && !text.contains(" more")
    );
}

#[test]
fn use_skill_substitutes_arguments_and_marks_forks() {
    let r = registry(ALL_PACKS);
    let snap = r.snapshot();
    let view = Disclosure::new(&snap);
    let review = view.use_skill("code-review", Some("src/lib.rs")).unwrap();
    assert_eq!(review.mode, UseSkillMode::Fork);
    assert_eq!(review.agent.as_deref(), Some("general"));
    let body = &snap.get("code-review").unwrap().body;
    assert_eq!(
        review.content,
        skill_format::args::substitute_arguments(body, "src/lib.rs")
    );
    assert_ne!(&review.content, body);
    let explain = view.use_skill("explain", None).unwrap();
    assert_eq!(explain.mode, UseSkillMode::Inline);
    // Trigger control: the model cannot use `commit`; a user cannot use
    // `project-conventions`.
    let e = view.use_skill("commit", None).unwrap_err();
    assert!(matches!(
        e,
        Error::NotAvailable {
            reason: Unavailable::ModelInvocationDisabled,
            ..
        }
    ));
    let user = Disclosure::new(&snap).caller(Caller::User);
    assert!(user.use_skill("commit", None).is_ok());
    assert!(matches!(
        user.use_skill("project-conventions", None).unwrap_err(),
        Error::NotAvailable {
            reason: Unavailable::NotUserInvocable,
            ..
        }
    ));
}

#[test]
fn scoped_listing_for_a_sub_agent() {
    let r = registry(ALL_PACKS);
    let snap = r.snapshot();
    let view = Disclosure::new(&snap);
    let text = view
        .scoped_listing(&["tasks.search", "email.send"])
        .unwrap();
    insta::assert_snapshot!(text);
    let e = view
        .scoped_listing(&["tasks.search", "emial.send", "zzz"])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Unknown skills for the scoped listing: emial.send (did you mean: email.send, email.read?), zzz"
    );
    // A skill that exists but is not for this caller is never reported as unknown, before
    // or after an unknown name.
    for names in [["zzz", "commit"], ["commit", "zzz"]] {
        match view.scoped_listing(&names).unwrap_err() {
            Error::UnknownSkills { names } => {
                assert_eq!(names, [("zzz".to_owned(), vec![])]);
            }
            e => panic!("{e}"),
        }
    }
    assert!(matches!(
        view.scoped_listing(&["tasks.search", "commit"])
            .unwrap_err(),
        Error::NotAvailable {
            reason: Unavailable::ModelInvocationDisabled,
            ..
        }
    ));
}

// --- Resources ---------------------------------------------------------------------------

#[test]
fn resources_cli() {
    let mut out = String::new();
    for args in [
        &["resources", "pdf-forms"][..],
        &["resources", "pdf-forms", "references/FORMS.md"],
        &["resources", "pdf-forms", "../release-checklist/SKILL.md"],
        &["resources", "pdf-forms", "missing.txt"],
        &["resources", "email.send"],
        &["show", "pdf-forms"],
    ] {
        out.push_str(&format!("=== {}\n", args.join(" ")));
        out.push_str(&both(&cli(args, &["packs/agentskills", "packs/actions"])));
    }
    insta::assert_snapshot!(out);
}

/// `show` and `resources` are operator commands: they inspect any entry (model-only or
/// user-only, invalid, excluded for the profile, a domain index), with what it shadows.
#[test]
fn show_and_resources_inspect_any_entry() {
    let mut out = String::new();
    let pegasus_twice = &["packs/pegasus", "packs/pegasus"][..];
    for (args, packs) in [
        (&["show", "commit"][..], pegasus_twice),
        (&["show", "commit", "--format", "json"], pegasus_twice),
        (&["resources", "commit"], pegasus_twice),
        (&["resources", "commit", "SKILL.md"], pegasus_twice),
        (&["show", "missing-description"], &["packs/broken"]),
        (&["show", "email"], &["packs/actions"]),
        (
            &["show", "meeting-notes", "--profile", "kids_mode"],
            &["packs/agentskills"],
        ),
        (&["show", "comit"], pegasus_twice),
    ] {
        out.push_str(&format!("=== {} ({})\n", args.join(" "), packs.join(" ")));
        out.push_str(&both(&cli(args, packs)));
    }
    insta::assert_snapshot!(out);
}

/// A listing cut short by a limit says so, in text (on stderr) and in JSON.
#[test]
fn resources_cli_says_when_the_listing_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    write(&root, "s/SKILL.md", &skill_md("s", "A skill."));
    let deep: Vec<String> = (1..=MAX_RESOURCE_DEPTH + 1)
        .map(|i| format!("d{i}"))
        .collect();
    write(
        &root,
        &format!("s/{}/hidden-by-depth.txt", deep.join("/")),
        "x",
    );
    write(&root, "s/top.txt", "x");
    let skills = root.display().to_string();
    let run = skill_server(&["resources", "s", "--skills", &skills]);
    assert_eq!(run.code, 0, "{}", both(&run));
    assert_eq!(run.stdout, "other             1  top.txt\n");
    assert_eq!(
        run.stderr,
        format!(
            "listing truncated: folders deeper than {MAX_RESOURCE_DEPTH} levels are not listed\n"
        )
    );
    let run = skill_server(&["resources", "s", "--format", "json", "--skills", &skills]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["truncated"], true);
    assert_eq!(v["too_deep"], true);
    assert_eq!(v["too_many"], false);
    assert_eq!(v["resources"].as_array().unwrap().len(), 1);
}

#[test]
fn resource_reads_are_confined_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    write(&root, "s/SKILL.md", &skill_md("s", "A skill."));
    write(&root, "s/scripts/run.sh", "echo hi\n");
    write(&root, "s/references/notes.md", "notes\n");
    write(&root, "s/assets/logo.svg", "<svg/>");
    write(&root, "s/loose.md", "loose\n");
    write(&root, "s/data.bin", "x");
    write(&root, "s/.env", "SECRET=1\n");
    write(
        &root,
        "other/SKILL.md",
        &skill_md("other", "Another skill."),
    );
    write(dir.path(), "outside.txt", "secret\n");
    std::fs::write(
        root.join("s/exact.bin"),
        vec![b'a'; MAX_RESOURCE_BYTES as usize],
    )
    .unwrap();
    std::fs::write(
        root.join("s/big.bin"),
        vec![b'a'; MAX_RESOURCE_BYTES as usize + 1],
    )
    .unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), root.join("s/out-link"))
            .unwrap();
        std::os::unix::fs::symlink(root.join("s/loose.md"), root.join("s/in-link")).unwrap();
    }
    let r = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        &root, "project",
    )]));
    let snap = r.snapshot();
    let view = Disclosure::new(&snap);
    let list = view.resources("s").unwrap();
    let kinds: Vec<(&str, ResourceKind)> = list.iter().map(|r| (r.path.as_str(), r.kind)).collect();
    let mut expected = vec![
        ("assets/logo.svg", ResourceKind::Asset),
        ("big.bin", ResourceKind::Other),
        ("data.bin", ResourceKind::Other),
        ("exact.bin", ResourceKind::Other),
        ("loose.md", ResourceKind::Reference),
        ("references/notes.md", ResourceKind::Reference),
        ("scripts/run.sh", ResourceKind::Script),
    ];
    if cfg!(unix) {
        expected.insert(4, ("in-link", ResourceKind::Other));
    }
    assert_eq!(kinds, expected);
    assert_eq!(
        list.iter()
            .find(|r| r.path == "scripts/run.sh")
            .unwrap()
            .size,
        8
    );

    assert_eq!(
        view.read_resource("s", "scripts/run.sh").unwrap(),
        b"echo hi\n"
    );
    assert_eq!(
        view.read_resource("s", "./references/../loose.md").unwrap(),
        b"loose\n"
    );
    assert_eq!(
        view.read_resource("s", "exact.bin").unwrap().len() as u64,
        MAX_RESOURCE_BYTES
    );
    let refused = |rel: &str| view.read_resource("s", rel).unwrap_err().to_string();
    assert!(refused("big.bin").contains("resources are read up to 1048576 bytes"));
    assert!(refused("../other/SKILL.md").contains("leaves the skill folder"));
    assert!(refused("scripts/../../other/SKILL.md").contains("leaves the skill folder"));
    assert!(refused("/etc/passwd").contains("is absolute"));
    assert!(refused("a\0b").contains("NUL"));
    assert!(refused(".env").contains("hidden"));
    assert!(refused("scripts").contains("folder"));
    assert!(refused("").contains("empty"));
    assert_eq!(refused("nope.txt"), "skill `s` has no resource `nope.txt`");
    #[cfg(unix)]
    {
        assert!(refused("out-link").contains("outside the skill folder"));
        assert_eq!(view.read_resource("s", "in-link").unwrap(), b"loose\n");
    }
    assert!(matches!(
        view.read_resource("missing", "x"),
        Err(Error::UnknownSkill { .. })
    ));
}

#[test]
fn actions_skills_and_notes_have_no_resources() {
    let r = registry(&["packs/actions"]);
    let snap = r.snapshot();
    let view = Disclosure::new(&snap);
    assert!(view.resources("email.send").unwrap().is_empty());
    assert!(matches!(
        view.read_resource("email.send", "send.md"),
        Err(Error::ResourceNotFound { .. })
    ));
    let _ = Path::new("");
}

// --- The shared corpus --------------------------------------------------------------------

/// Every disclosure path over every skill of `../shared/corpus` (next to the checkout):
/// nothing errors or panics, catalogs keep their budget and name every skill they leave
/// out. Skipped when the corpus is not there: unit tests never need it.
#[test]
fn every_disclosure_path_over_the_shared_corpus() {
    let dir = repo_root().join("..").join("shared").join("corpus");
    if !dir.is_dir() {
        eprintln!("skipped: no corpus at {}", dir.display());
        return;
    }
    let r = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        &dir, "corpus",
    )]));
    let snap = r.snapshot();
    assert!(
        snap.skills().next().is_some(),
        "no skill loaded from the corpus"
    );
    let view = Disclosure::new(&snap);
    let mut failures: Vec<String> = Vec::new();

    for format in [
        CatalogFormat::Markdown,
        CatalogFormat::Xml,
        CatalogFormat::Json,
    ] {
        let all = view.catalog(
            format,
            &Budget {
                budget_chars: Some(usize::MAX),
                entry_cap_chars: Some(usize::MAX),
                ..Budget::default()
            },
        );
        assert!(all.report.is_complete(), "{format:?}");
        let mut everything = all.report.included.clone();
        everything.sort();
        for budget in [
            Budget::default(),
            Budget {
                budget_chars: Some(2_000),
                ..Budget::default()
            },
        ] {
            let c = view.catalog(format, &budget);
            let used = c.text.chars().count();
            assert!(
                used <= budget.chars(),
                "{format:?}: {used} > {}",
                budget.chars()
            );
            assert_eq!(c.report.used_chars, used);
            // Every candidate is listed or named as omitted, once.
            let mut named: Vec<String> = c
                .report
                .included
                .iter()
                .chain(&c.report.omitted)
                .cloned()
                .collect();
            named.sort();
            assert_eq!(named, everything, "{format:?} {}", budget.chars());
            if format == CatalogFormat::Json && !c.text.is_empty() {
                let parsed: Vec<serde_json::Value> = serde_json::from_str(&c.text).unwrap();
                assert_eq!(parsed.len(), c.entries.len());
            }
            if format == CatalogFormat::Xml {
                assert_eq!(c.text.matches("<skill>").count(), c.entries.len());
            }
        }
    }

    if let Err(e) = view.get_skill(None) {
        failures.push(format!("get_skill: {e}"));
    }
    for d in snap.domains() {
        for path in [d.name.clone(), format!("{}.all", d.name)] {
            match view.get_skill(Some(&path)) {
                Ok(_) | Err(Error::EmptyDomain { .. } | Error::UnknownDomain { .. }) => {}
                Err(e) => failures.push(format!("get_skill: {path}: {e}")),
            }
        }
    }
    let mut usable = Vec::new();
    for skill in snap.skills() {
        let name = &skill.name;
        if view.skill(name).is_err() {
            continue;
        }
        usable.push(name.as_str());
        match view.get_skill(Some(name)) {
            Ok(text) if text == skill.body => {}
            Ok(_) => failures.push(format!("get_skill: {name} is not the body")),
            Err(e) => failures.push(format!("get_skill: {name}: {e}")),
        }
        match view.load_skill(name) {
            Ok(text) if text.starts_with(&format!("# {name}\n\n")) => {}
            Ok(_) => failures.push(format!("load_skill: {name}: not `# name`")),
            Err(e) => failures.push(format!("load_skill: {name}: {e}")),
        }
        if let Err(e) = view.use_skill(name, Some("corpus check")) {
            failures.push(format!("use_skill: {name}: {e}"));
        }
        match view.resource_listing(name) {
            Ok(listing) => {
                for res in &listing.resources {
                    match view.read_resource(name, &res.path) {
                        Ok(b) if b.len() as u64 == res.size => {}
                        Ok(b) => failures.push(format!(
                            "{name}/{}: read {} of {} bytes",
                            res.path,
                            b.len(),
                            res.size
                        )),
                        Err(Error::ResourceTooLarge { .. }) if res.size > MAX_RESOURCE_BYTES => {}
                        Err(e) => failures.push(format!("{name}/{}: {e}", res.path)),
                    }
                }
            }
            Err(e) => failures.push(format!("resources: {name}: {e}")),
        }
    }
    assert!(!usable.is_empty());
    if let Err(e) = view.scoped_listing(&usable[..usable.len().min(20)]) {
        failures.push(format!("scoped_listing: {e}"));
    }
    assert!(
        failures.is_empty(),
        "{} failures, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(10)]
    );
}
