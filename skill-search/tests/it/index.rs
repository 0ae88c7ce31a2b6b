//! The skill index through its public API: building, ranking, triggers, filters,
//! incremental updates and selection.

use std::fs;
use std::path::Path;

use skill_registry::{Registry, RegistryConfig, Source};

use skill_search::*;

fn write(root: &Path, name: &str, frontmatter: &str, body: &str) {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\n{frontmatter}\n---\n{body}\n"),
    )
    .unwrap();
}

fn pack(root: &Path) {
    write(
        root,
        "pdf-forms",
        "description: Fill in PDF forms and extract the values of their fields.",
        "# PDF forms\n\nOpen the file with pypdf and list every field.",
    );
    write(
        root,
        "git-commit",
        "description: Write conventional commit messages from staged changes.\ntags: [git, version control]",
        "# Commit\n\nRead the diff, then summarise it in the imperative mood.",
    );
    write(
        root,
        "hello-extended",
        "description: Extended greeting capabilities\nversion: 1.0.0\ntriggers:\n  keywords: [hello, greeting]\n  verbs: [wave]\n  patterns: ['greet\\s+\\w+', '(unclosed']",
        "# Hello\n\nSay hello warmly.",
    );
    write(
        root,
        "spreadsheet",
        "description: Build and clean up Excel spreadsheets, formulas and pivot tables.",
        "# Spreadsheets\n\nUse openpyxl. Charts are welcome. Mention invoices only in passing.",
    );
    write(
        root,
        "internal-audit",
        "description: Audit invoices for the finance team.\ndisable-model-invocation: true",
        "# Audit\n",
    );
    write(
        root,
        "kids-stories",
        "description: Tell bedtime stories for children.\nexclude_from_prompt_profile_ids: [work]",
        "# Stories\n",
    );
}

fn registry(root: &Path) -> Registry {
    Registry::load(RegistryConfig::with_sources(vec![Source::new(
        root, "user",
    )]))
}

fn names(hits: &[Match]) -> Vec<&str> {
    hits.iter().map(|m| m.name.as_str()).collect()
}

/// A pack of `(name, frontmatter, body)` skills in a temporary folder, and its index.
fn index_of(skills: &[(&str, &str, &str)]) -> (tempfile::TempDir, SkillIndex) {
    let dir = tempfile::tempdir().unwrap();
    for (name, frontmatter, body) in skills {
        write(dir.path(), name, frontmatter, body);
    }
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    (dir, index)
}

/// A skill beside the ones a test is about, so that a pack is not only those.
const RELEASE_NOTES: (&str, &str, &str) = (
    "release-notes",
    "description: Draft release notes from merged pull requests.",
    "# Release notes\n\nGroup the changes by area.",
);

fn search(index: &SkillIndex, text: &str) -> Vec<Match> {
    index
        .search(&SearchRequest {
            text,
            limit: 10,
            ..Default::default()
        })
        .unwrap()
}

#[test]
fn builds_from_a_snapshot_and_ranks_by_text() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let reg = registry(dir.path());
    let index = SkillIndex::build(reg.snapshot()).unwrap();
    assert_eq!(index.len(), reg.snapshot().skills().count());
    let hits = search(
        &index,
        "can you write a commit message for my staged changes?",
    );
    assert_eq!(hits[0].name, "git-commit");
    assert!(
        hits[0].matched_terms.contains(&"commit".to_owned()),
        "{:?}",
        hits[0]
    );
    assert!(hits[0].reason.contains("commit"), "{}", hits[0].reason);
    let hits = search(&index, "clean up the formulas in my excel sheet");
    assert_eq!(hits[0].name, "spreadsheet");
}

#[test]
fn name_field_outweighs_body() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "invoices",
        "description: Handle billing documents.",
        "# I\n",
    );
    write(
        dir.path(),
        "notes",
        "description: Take notes.",
        "# N\n\ninvoices invoices invoices invoices",
    );
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    assert_eq!(names(&search(&index, "invoices")), ["invoices", "notes"]);
}

#[test]
fn explicit_mention_ranks_first() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    // Lots of spreadsheet words, but the user names the pdf skill.
    let hits = search(
        &index,
        "use pdf-forms on this excel spreadsheet pivot table",
    );
    assert_eq!(hits[0].name, "pdf-forms");
    assert!(hits[0].explicit);
    assert!(
        hits[0].reason.contains("names `pdf-forms`"),
        "{}",
        hits[0].reason
    );
    // A single-word name used by few skills is explicit as it stands.
    assert!(search(&index, "spreadsheet")[0].explicit);
}

#[test]
fn a_common_single_word_name_needs_a_sigil_or_the_word_skill() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "review",
        "description: Review a change.",
        "# R\n",
    );
    for n in ["lint-code", "check-docs", "audit-deps"] {
        write(
            dir.path(),
            n,
            "description: Review things before merging.",
            "# X\n",
        );
    }
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    assert!(search(&index, "review this").iter().all(|m| !m.explicit));
    let sigil = search(&index, "run /review now");
    assert!(sigil[0].explicit && sigil[0].name == "review");
    let worded = search(&index, "use the review skill please");
    assert!(worded[0].explicit && worded[0].name == "review");
}

#[test]
fn exact_phrase_beats_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "code-review",
        "description: Look over a change for bugs.",
        "# R\n",
    );
    write(
        dir.path(),
        "style-check",
        "description: Review code style and review code formatting of code.",
        "# S\n",
    );
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    let hits = search(&index, "I need a code review of my code style");
    assert_eq!(hits[0].name, "code-review");
    assert_eq!(hits[0].phrase.as_deref(), Some("code review"));
}

#[test]
fn triggers_match_and_bad_patterns_are_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    let d = index.diagnostics();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].code, skill_format::Code::InvalidTriggerPattern);
    let hits = search(&index, "HELLO!");
    assert_eq!(hits[0].name, "hello-extended");
    assert_eq!(hits[0].triggers[0].kind, TriggerKind::Keyword);
    assert!(
        hits[0].reason.contains("trigger keyword `hello`"),
        "{}",
        hits[0].reason
    );
    let hits = search(&index, "please greet Alice");
    assert_eq!(hits[0].triggers[0].kind, TriggerKind::Pattern);
    let hits = search(&index, "she waved");
    assert_eq!(hits[0].triggers[0].kind, TriggerKind::Verb);
    assert!(
        search(&index, "othello")
            .iter()
            .all(|m| m.triggers.is_empty())
    );
}

#[test]
fn recent_use_breaks_ties_then_name() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "alpha-tool",
        "description: Convert units.",
        "# A\n",
    );
    write(
        dir.path(),
        "beta-tool",
        "description: Convert units.",
        "# B\n",
    );
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    assert_eq!(
        names(&search(&index, "convert units")),
        ["alpha-tool", "beta-tool"]
    );
    index.record_use("beta-tool");
    let hits = search(&index, "convert units");
    assert_eq!(names(&hits), ["beta-tool", "alpha-tool"]);
    assert!(hits[0].last_used.is_some() && hits[1].last_used.is_none());
    index.record_use("alpha-tool");
    assert_eq!(
        names(&search(&index, "convert units")),
        ["alpha-tool", "beta-tool"]
    );
}

#[test]
fn filters_apply_at_query_time() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    let q = |profile: Option<&str>, model: bool, text: &str| {
        names(
            &index
                .search(&SearchRequest {
                    text,
                    limit: 10,
                    filter: Filter {
                        profile: profile.map(str::to_owned),
                        model_invocable_only: model,
                    },
                    ..Default::default()
                })
                .unwrap(),
        )
        .join(",")
    };
    assert!(q(None, false, "audit invoices").contains("internal-audit"));
    assert!(!q(None, true, "audit invoices").contains("internal-audit"));
    assert!(q(Some("home"), false, "bedtime stories").contains("kids-stories"));
    assert!(!q(Some("work"), false, "bedtime stories").contains("kids-stories"));
}

#[test]
fn incremental_updates_follow_reloads() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let reg = registry(dir.path());
    let index = std::sync::Arc::new(SkillIndex::build(reg.snapshot()).unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (i2, s2) = (index.clone(), seen.clone());
    let _sub = reg.subscribe(move |cs| {
        s2.lock().unwrap().push(i2.apply(cs).unwrap());
    });
    assert!(search(&index, "sourdough").is_empty());

    // Edit one skill: found by its new words, not its old ones.
    write(
        dir.path(),
        "spreadsheet",
        "description: Bake sourdough bread with a starter.",
        "# Bread\n",
    );
    reg.reload_paths([dir.path().join("spreadsheet").join("SKILL.md")]);
    assert_eq!(search(&index, "sourdough")[0].name, "spreadsheet");
    assert!(
        search(&index, "pivot tables")
            .iter()
            .all(|m| m.name != "spreadsheet")
    );
    // Add one, remove one.
    write(
        dir.path(),
        "weather",
        "description: Forecast the weather.",
        "# W\n",
    );
    fs::remove_dir_all(dir.path().join("git-commit")).unwrap();
    reg.reload();
    assert_eq!(search(&index, "weather forecast")[0].name, "weather");
    assert!(
        search(&index, "commit message")
            .iter()
            .all(|m| m.name != "git-commit")
    );
    let stats = seen.lock().unwrap().clone();
    assert_eq!(
        stats[0],
        UpdateStats {
            upserted: 1,
            removed: 0
        }
    );
    assert_eq!(
        stats[1],
        UpdateStats {
            upserted: 1,
            removed: 1
        }
    );
    assert_eq!(index.len(), reg.snapshot().skills().count());
}

#[test]
fn a_skill_that_turns_invalid_leaves_the_index() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let reg = registry(dir.path());
    let index = SkillIndex::build(reg.snapshot()).unwrap();
    let before = index.len();
    fs::write(
        dir.path().join("pdf-forms").join("SKILL.md"),
        "---\nname: pdf-forms\n---\nno description\n",
    )
    .unwrap();
    let cs = reg.reload();
    let stats = index.apply(&cs).unwrap();
    if cs.snapshot.get("pdf-forms").is_none() {
        assert_eq!(stats.removed, 1);
        assert_eq!(index.len(), before - 1);
        assert!(
            search(&index, "pdf forms")
                .iter()
                .all(|m| m.name != "pdf-forms")
        );
    }
}

#[test]
fn rebuild_matches_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let reg = registry(dir.path());
    let index = SkillIndex::build(reg.snapshot()).unwrap();
    write(
        dir.path(),
        "weather",
        "description: Forecast the weather.",
        "# W\n",
    );
    reg.reload();
    index.rebuild(reg.snapshot()).unwrap();
    let fresh = SkillIndex::build(reg.snapshot()).unwrap();
    assert_eq!(index.len(), fresh.len());
    let a = search(&index, "weather and pdf forms");
    let b = search(&fresh, "weather and pdf forms");
    assert_eq!(names(&a), names(&b));
}

#[test]
fn hostile_queries_are_text() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    for q in [
        "",
        "   ",
        "the and of to it",
        "name:pdf AND (commit OR \"unbalanced",
        "*",
        "((((",
        "commit^2 ~ -git +message \\",
        "\u{0}\u{feff}🙂",
    ] {
        let hits = index
            .search(&SearchRequest {
                text: q,
                limit: 5,
                ..Default::default()
            })
            .unwrap();
        assert!(hits.len() <= 5, "{q}");
    }
    assert_eq!(
        search(&index, "description:commit AND (message")[0].name,
        "git-commit"
    );
    let huge = "spreadsheet formulas ".repeat(1024 * 1024 / 21 + 1);
    assert!(huge.len() >= 1024 * 1024);
    let hits = search(&index, &huge);
    assert_eq!(hits[0].name, "spreadsheet");
    assert!(search(&index, "").is_empty());
}

#[test]
fn a_query_of_many_distinct_words_is_answered_quickly_and_right() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    // 100,000 distinct words (far past MAX_QUERY_BYTES; only the start is read), with the
    // skill named near the start and again near the end.
    let mut text = String::from("please use pdf-forms on this: ");
    for i in 0..100_000 {
        text.push_str(&format!("w{i} "));
    }
    text.push_str("pdf-forms");
    let start = std::time::Instant::now();
    let hits = search(&index, &text);
    let took = start.elapsed();
    assert_eq!(hits[0].name, "pdf-forms");
    assert!(hits[0].explicit);
    // Generous for a debug build on a loaded machine; the bound is about a hang, not speed.
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    let sel = index.select(&text, &SelectOptions::default()).unwrap();
    assert_eq!(sel.selected_skills[0].skill_id, "pdf-forms");
}

#[test]
fn the_default_request_asks_for_the_default_limit() {
    assert_eq!(SearchRequest::default().limit, DEFAULT_LIMIT);
    let dir = tempfile::tempdir().unwrap();
    for i in 0..DEFAULT_LIMIT + 3 {
        write(
            dir.path(),
            &format!("report-{i:02}"),
            "description: Format weekly reports.",
            "# R\n",
        );
    }
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    let hits = index
        .search(&SearchRequest {
            text: "format weekly reports",
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.len(), DEFAULT_LIMIT);
}

#[test]
fn limit_is_clamped() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    let q = |limit| {
        index
            .search(&SearchRequest {
                text: "pdf commit spreadsheet hello",
                limit,
                ..Default::default()
            })
            .unwrap()
            .len()
    };
    assert_eq!(q(0), 1);
    assert_eq!(q(2), 2);
    assert!(q(MAX_LIMIT + 1) <= MAX_LIMIT);
}

#[test]
fn selection_tiers_and_json() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    let sel = index
        .select(
            "fill in the fields of this PDF form",
            &SelectOptions::default(),
        )
        .unwrap();
    assert_eq!(sel.selected_skills[0].skill_id, "pdf-forms");
    assert!(!sel.no_skill_needed);
    assert_eq!(sel.disclosure.tier, Tier::Full);
    assert!(
        sel.disclosure.text.starts_with("# pdf-forms\n"),
        "{}",
        sel.disclosure.text
    );
    let json: serde_json::Value = serde_json::from_str(&sel.to_json()).unwrap();
    assert_eq!(json["selected_skills"][0]["skill_id"], "pdf-forms");
    assert_eq!(json["no_skill_needed"], false);
    assert_eq!(json["disclosure"]["tier"], 3);
    let c = json["selected_skills"][0]["confidence"].as_f64().unwrap();
    assert!((0.5..=1.0).contains(&c));

    let none = index
        .select(
            "what is the capital of Australia?",
            &SelectOptions::default(),
        )
        .unwrap();
    assert!(none.no_skill_needed && none.selected_skills.is_empty());
    assert_eq!(none.disclosure.tier, Tier::Breadcrumb);
    assert_eq!(none.disclosure.text, "[5 skills available]");

    let list = index
        .select("what can you do?", &SelectOptions::default())
        .unwrap();
    assert_eq!(list.disclosure.tier, Tier::Registry);
    assert!(
        list.disclosure
            .text
            .contains("- pdf-forms: Fill in PDF forms")
    );
    assert!(
        !list.disclosure.text.contains("internal-audit"),
        "not model-invocable"
    );
}

#[test]
fn selection_never_picks_non_invocable_and_respects_max() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    let sel = index
        .select("audit the invoices for finance", &SelectOptions::default())
        .unwrap();
    assert!(
        sel.selected_skills
            .iter()
            .all(|s| s.skill_id != "internal-audit")
    );
    let opts = SelectOptions {
        max_skills: 1,
        threshold: 0.0,
        ..Default::default()
    };
    let sel = index
        .select("pdf forms and git commit and hello", &opts)
        .unwrap();
    assert_eq!(sel.selected_skills.len(), 1);
}

#[test]
fn tier_three_fits_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "big-skill",
        "description: Format huge reports.",
        &"Report formatting line.\n".repeat(200),
    );
    write(
        dir.path(),
        "small-report",
        "description: Format small reports.",
        "# S\n",
    );
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    let opts = SelectOptions {
        budget_tokens: 100,
        threshold: 0.0,
        ..Default::default()
    };
    let sel = index.select("format huge reports", &opts).unwrap();
    let d = &sel.disclosure;
    assert_eq!(sel.selected_skills[0].skill_id, "big-skill");
    assert_eq!(d.tier, Tier::Full);
    assert_eq!(d.included, ["big-skill"]);
    assert!(d.estimated_tokens <= 100, "{}", d.estimated_tokens);
    assert!(d.text.ends_with(CUT_BODY_NOTE));
    assert!(d.omitted.contains(&"big-skill".to_owned()));
}

#[test]
fn recent_turns_help_a_vague_follow_up() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    let alone = index
        .select("do the same for the other one", &SelectOptions::default())
        .unwrap();
    assert!(alone.no_skill_needed);
    let opts = SelectOptions {
        recent_turns: vec!["fill in the PDF form fields from invoice.pdf".into()],
        threshold: 0.1,
        ..Default::default()
    };
    let with = index
        .select("do the same for the other one", &opts)
        .unwrap();
    assert_eq!(with.selected_skills[0].skill_id, "pdf-forms");
    // The reason names the earlier turn's words, not "no direct evidence".
    let reason = &with.selected_skills[0].reason;
    assert!(reason.starts_with("from earlier turns: "), "{reason}");
    for w in ["fill", "pdf", "form"] {
        assert!(reason.contains(w), "{w} in {reason}");
    }
    let hits = index
        .search(&SearchRequest {
            text: "do the same for the other one",
            recent_turns: &opts.recent_turns,
            ..Default::default()
        })
        .unwrap();
    let top = &hits[0];
    assert!(
        top.matched_terms.is_empty() && top.body_terms.is_empty(),
        "{top:?}"
    );
    assert!(top.turn_terms.contains(&"pdf".to_owned()), "{top:?}");
    // Words of the request itself are never reported as coming from earlier turns.
    let hits = index
        .search(&SearchRequest {
            text: "fill in the pdf",
            recent_turns: &opts.recent_turns,
            ..Default::default()
        })
        .unwrap();
    assert!(hits[0].matched_terms.contains(&"pdf".to_owned()));
    assert!(
        !hits[0].turn_terms.contains(&"pdf".to_owned()),
        "{:?}",
        hits[0]
    );
    let alone = &search(&index, "fill in the pdf")[0];
    assert!(
        alone.turn_terms.is_empty(),
        "no earlier turns, no turn terms"
    );
}

#[test]
fn an_empty_snapshot_is_tier_zero() {
    let dir = tempfile::tempdir().unwrap();
    let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
    assert!(index.is_empty());
    let sel = index.select("hello", &SelectOptions::default()).unwrap();
    assert_eq!(sel.disclosure.tier, Tier::Nothing);
    assert!(sel.no_skill_needed);
}

#[cfg(feature = "disk")]
#[test]
fn disk_storage_builds_and_rebuilds_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let store = tempfile::tempdir().unwrap();
    let reg = registry(dir.path());
    let a = SkillIndex::build_in(reg.snapshot(), Storage::Disk(store.path().join("ix"))).unwrap();
    assert_eq!(search(&a, "pdf forms")[0].name, "pdf-forms");
    drop(a);
    let b = SkillIndex::build_in(reg.snapshot(), Storage::Disk(store.path().join("ix"))).unwrap();
    assert_eq!(
        search(&b, "pdf forms")
            .iter()
            .filter(|m| m.name == "pdf-forms")
            .count(),
        1
    );
}

#[cfg(feature = "disk")]
#[test]
fn disk_storage_clears_only_its_own_subfolder() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let store = tempfile::tempdir().unwrap();
    let folder = store.path().join("shared");
    std::fs::create_dir_all(folder.join(skill_search::DISK_INDEX_DIR)).unwrap();
    // Something of the operator's beside our index, and an index we cannot open.
    std::fs::write(folder.join("notes.txt"), "keep me").unwrap();
    std::fs::write(
        folder.join(skill_search::DISK_INDEX_DIR).join("meta.json"),
        "{ not json",
    )
    .unwrap();
    let reg = registry(dir.path());
    let a = SkillIndex::build_in(reg.snapshot(), Storage::Disk(folder.clone())).unwrap();
    assert_eq!(search(&a, "pdf forms")[0].name, "pdf-forms");
    assert_eq!(
        std::fs::read_to_string(folder.join("notes.txt")).unwrap(),
        "keep me"
    );
    assert!(
        folder
            .join(skill_search::DISK_INDEX_DIR)
            .join("meta.json")
            .is_file()
    );
}

#[test]
fn the_breadcrumb_count_follows_updates() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    let reg = registry(dir.path());
    let index = SkillIndex::build(reg.snapshot()).unwrap();
    let crumb = |index: &SkillIndex| {
        index
            .select(
                "what is the capital of Australia?",
                &SelectOptions::default(),
            )
            .unwrap()
            .disclosure
            .text
    };
    assert_eq!(crumb(&index), "[5 skills available]");
    assert_eq!(crumb(&index), "[5 skills available]", "the cached count");
    write(
        dir.path(),
        "weather",
        "description: Forecast the weather.",
        "# W\n",
    );
    write(
        dir.path(),
        "maps",
        "description: Draw maps of regions.",
        "# M\n",
    );
    index.apply(&reg.reload()).unwrap();
    assert_eq!(crumb(&index), "[7 skills available]");
    fs::remove_dir_all(dir.path().join("maps")).unwrap();
    index.apply(&reg.reload()).unwrap();
    assert_eq!(crumb(&index), "[6 skills available]");
    // Another filter is counted on its own.
    let work = SelectOptions {
        profile: Some("work".into()),
        ..Default::default()
    };
    let sel = index
        .select("what is the capital of Australia?", &work)
        .unwrap();
    assert_eq!(
        sel.disclosure.text, "[5 skills available]",
        "kids-stories excluded"
    );
}

#[test]
fn proactive_skills_are_pre_loaded_for_their_profile_within_max_skills() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    for name in ["standup-notes", "travel-expenses"] {
        write(
            dir.path(),
            name,
            &format!("description: The {name} routine.\nproactive_for_profile_ids: [work]"),
            "# Routine\n\nDo it.",
        );
    }
    let reg = registry(dir.path());
    let index = SkillIndex::build(reg.snapshot()).unwrap();
    let ids = |s: &Selection| -> Vec<String> {
        s.selected_skills
            .iter()
            .map(|x| x.skill_id.clone())
            .collect()
    };
    let message = "what is the capital of Australia?";
    // Without the profile: nothing fits.
    let none = index.select(message, &SelectOptions::default()).unwrap();
    assert!(none.no_skill_needed);
    // With it: both proactive skills, marked, their text disclosed.
    let work = SelectOptions {
        profile: Some("work".into()),
        ..Default::default()
    };
    let sel = index.select(message, &work).unwrap();
    assert_eq!(ids(&sel), ["standup-notes", "travel-expenses"]);
    assert!(!sel.no_skill_needed);
    for s in &sel.selected_skills {
        assert_eq!(s.reason, format!("{PROACTIVE_REASON} `work`"));
    }
    assert_eq!(sel.disclosure.tier, Tier::Full);
    assert_eq!(sel.disclosure.included, ids(&sel));
    // A match comes first; proactive skills fill the room left under max_skills, and the
    // one that does not fit is named as omitted.
    let two = SelectOptions {
        max_skills: 2,
        ..work.clone()
    };
    let sel = index
        .select("fill in the fields of this PDF form", &two)
        .unwrap();
    assert_eq!(ids(&sel), ["pdf-forms", "standup-notes"]);
    assert_eq!(sel.disclosure.omitted, ["travel-expenses"]);
    // Exactly at max_skills: nothing is omitted.
    let three = SelectOptions {
        max_skills: 3,
        ..work.clone()
    };
    let sel = index
        .select("fill in the fields of this PDF form", &three)
        .unwrap();
    assert_eq!(ids(&sel).len(), 3);
    assert!(sel.disclosure.omitted.is_empty());
    // Another profile: nothing proactive.
    let other = SelectOptions {
        profile: Some("home".into()),
        ..Default::default()
    };
    assert!(index.select(message, &other).unwrap().no_skill_needed);
}

/// `when_not_to_use` counts against a skill and `when_to_use` for it: the same two skills
/// and the same request select differently once the front-runner says the request is not
/// for it.
#[test]
fn when_not_to_use_flips_a_selection() {
    let build = |pdf_extra: &str| {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "pdf-tools",
            &format!("description: Convert PDF documents; merge and split their pages.{pdf_extra}"),
            "# PDF tools\n\nMerge and convert PDF pages with qpdf.",
        );
        write(
            dir.path(),
            "scan-ocr",
            "description: Turn scanned pages into text with OCR, in many languages and layouts.",
            "# OCR\n\nRun tesseract on each page image.",
        );
        let index = SkillIndex::build(registry(dir.path()).snapshot()).unwrap();
        (dir, index)
    };
    let request = "convert this scanned PDF to text";
    let (_d, before) = build("");
    let first = |index: &SkillIndex| search(index, request)[0].name.clone();
    let (_d2, after) =
        build("\nwhen_not_to_use:\n  - scanned PDF pages that need text recognition (OCR)");
    let before_first = first(&before);
    let after_first = first(&after);
    assert_eq!(after_first, "scan-ocr");
    // Without the clause the PDF skill wins or ties on its words; with it, it loses.
    let pdf_score = |index: &SkillIndex| {
        search(index, request)
            .into_iter()
            .find(|m| m.name == "pdf-tools")
            .map(|m| m.text_score)
            .unwrap_or(f32::MIN)
    };
    assert!(pdf_score(&after) < pdf_score(&before));
    let selected = |index: &SkillIndex| {
        index
            .select(request, &SelectOptions::default())
            .unwrap()
            .selected_skills
            .first()
            .map(|s| s.skill_id.clone())
    };
    assert_eq!(selected(&after).as_deref(), Some("scan-ocr"));
    assert_eq!(
        before_first, "pdf-tools",
        "the clause must be what flips it"
    );
    assert_eq!(selected(&before).as_deref(), Some("pdf-tools"));
}

/// A candidate that stays in the ranking on some of the request's words is not pre-loaded
/// when the rest of what the request asks is what the skill says it is not for: its
/// confidence keeps only the share of its evidence its own limits leave.
#[test]
fn a_skill_its_own_limits_rule_out_is_listed_but_not_selected() {
    let build = |pdf_extra: &str, pdf_body: &str| {
        let pdf_frontmatter = format!("description: Fill in and flatten PDF forms.{pdf_extra}");
        let pdf_text = format!("# PDF forms\n\nRead each field's name, then fill it.{pdf_body}");
        index_of(&[
            (
                "html-snippets",
                "description: Write small HTML fragments such as tables, lists and forms, as markup to paste.",
                "# HTML snippets\n\nWrite the markup with labels for every input.",
            ),
            ("pdf-forms", &pdf_frontmatter, &pdf_text),
            RELEASE_NOTES,
        ])
    };
    let request = "give me the HTML markup for a signup form with name and email fields";
    let selected = |index: &SkillIndex| -> Vec<String> {
        index
            .select(request, &SelectOptions::default())
            .unwrap()
            .selected_skills
            .into_iter()
            .map(|s| s.skill_id)
            .collect()
    };
    let (_d, without) = build("", "");
    // Without the clause, the form words alone pre-load the PDF skill beside the right one.
    assert_eq!(selected(&without), ["html-snippets", "pdf-forms"]);
    let (_d2, with) = build(
        "\nwhen_not_to_use:\n  - writing HTML markup for a web page",
        "",
    );
    assert_eq!(selected(&with), ["html-snippets"]);
    // It is still ranked, with the reason it lost.
    let pdf_of = |index: &SkillIndex| {
        search(index, request)
            .into_iter()
            .find(|m| m.name == "pdf-forms")
            .unwrap()
    };
    let pdf = pdf_of(&with);
    assert_eq!(pdf.against_terms, ["html", "markup"]);
    assert!(
        pdf.confidence < SelectOptions::default().threshold,
        "{}",
        pdf.confidence
    );
    // The same words in a sentence of the body, said in passing, weigh against its score
    // (and so its share of the best one's evidence) but are not a declared limit: its
    // confidence stays well above what the declared limit leaves it (a body's "do not use
    // ..." is as often about one step).
    let (_d3, passing) = build("", " Do not use it for writing HTML markup.");
    let confidence = |index: &SkillIndex| pdf_of(index).confidence;
    let pdf = pdf_of(&passing);
    assert_eq!(pdf.against_terms, ["html", "markup"]);
    assert!(
        pdf.confidence > confidence(&with) + 0.15 && pdf.confidence < confidence(&without),
        "in passing {}, declared {}, none {}",
        pdf.confidence,
        confidence(&with),
        confidence(&without)
    );
    // Declared in a sentence of the description, or in a "when not to use" list of the
    // body, it is a limit again.
    let (_d4, described) = build(" Not for writing HTML markup.", "");
    assert_eq!(selected(&described), ["html-snippets"]);
    let (_d5, listed) = build(
        "",
        "\n\n## When not to use\n\n- writing HTML markup for a web page\n",
    );
    assert_eq!(selected(&listed), ["html-snippets"]);
}

/// A "not for" clause that repeats the skill's own subject ("not for scanned PDFs" in a
/// PDF skill) does not count that subject against it: only the clause's own words do.
#[test]
fn a_limit_that_names_the_skills_own_subject_does_not_rule_it_out() {
    let build = |clause: &str| {
        let pdf_frontmatter =
            format!("description: Extract the text of PDF files page by page.{clause}");
        index_of(&[
            (
                "pdf-text",
                &pdf_frontmatter,
                "# PDF text\n\nRun pdftotext on each file.",
            ),
            (
                "scan-ocr",
                "description: Recognise the words in scanned images with OCR.",
                "# OCR\n\nRun tesseract on each image.",
            ),
            RELEASE_NOTES,
        ])
    };
    let hit = |index: &SkillIndex, request: &str| {
        search(index, request)
            .into_iter()
            .find(|m| m.name == "pdf-text")
            .unwrap()
    };
    let (_d, without) = build("");
    let (_d2, with) = build(" Not for scanned PDF pages.");
    let request = "extract the text from these PDF pages";
    // "pdf" and "pages" are in the clause and in the rest of the skill: its subject, which
    // the reason shows against it but which leaves its confidence as it was.
    let plain = hit(&with, request);
    assert_eq!(plain.against_terms, ["pdf", "pages"]);
    let before = hit(&without, request).confidence;
    assert!(
        (plain.confidence - before).abs() < 0.02,
        "{} vs {before}",
        plain.confidence
    );
    // "scanned" is the clause's own word (another skill uses it, so the request's word is
    // known): the same request about scanned pages loses.
    let scanned = hit(&with, "extract the text from these scanned PDF pages");
    assert!(
        scanned.confidence < plain.confidence * 0.9,
        "{} vs {}",
        scanned.confidence,
        plain.confidence
    );
}

#[test]
fn a_word_nearly_every_skill_of_a_large_pack_uses_retrieves_nothing_by_itself() {
    // 1,001 skills (just over the size from which a common word is left out of retrieval)
    // all say "teams"; one also says "invoices".
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1_001 {
        let extra = if i == 500 { " Reconcile invoices." } else { "" };
        write(
            dir.path(),
            &format!("tool-{i:04}"),
            &format!("description: Helps teams with task number {i}.{extra}"),
            "# Tool",
        );
    }
    let reg = registry(dir.path());
    let index = SkillIndex::build(reg.snapshot()).unwrap();
    assert_eq!(index.len(), 1_001);
    // "teams" ranks nothing, so only what "invoices" reaches is a candidate.
    assert_eq!(
        names(&search(&index, "reconcile invoices for the teams")),
        ["tool-0500"]
    );
    // A request made only of the common word still retrieves by it.
    assert_eq!(search(&index, "teams").len(), 10);
}

/// The `n`-th of a run of distinct words the analyser keeps as they are (consonants only:
/// no stemming suffix, no stop word).
fn plain_word(n: usize) -> String {
    const LETTERS: &[u8] = b"bcdfghjklmnpqrtvwxz";
    let mut n = n;
    let mut w = String::from("q");
    for _ in 0..4 {
        w.push(char::from(LETTERS[n % LETTERS.len()]));
        n /= LETTERS.len();
    }
    w
}

fn truncated(index: &SkillIndex) -> Vec<String> {
    index
        .diagnostics()
        .into_iter()
        .filter(|d| d.code.as_str() == "index-truncated")
        .map(|d| d.message)
        .collect()
}

/// A skill's distinct terms are indexed up to `MAX_SKILL_TERMS` (name and description
/// included) and no further: one more is left out of search, with a warning. The 4 MiB
/// SKILL.md of 430,000 distinct headings cost the server 148 MiB before.
#[test]
fn a_skill_is_indexed_up_to_its_term_budget_and_one_past_it_is_cut_with_a_warning() {
    // The name and description are the word 0; the body words 1.. up to `last`.
    let body = |last: usize| -> String { (1..=last).map(plain_word).collect::<Vec<_>>().join(" ") };
    let name = plain_word(0);
    let frontmatter = format!("description: {name}");
    let found = |index: &SkillIndex, n: usize| !search(index, &plain_word(n)).is_empty();

    let at_budget = body(MAX_SKILL_TERMS - 1);
    let (_dir, index) = index_of(&[(&name, &frontmatter, &at_budget), RELEASE_NOTES]);
    assert!(truncated(&index).is_empty(), "{:?}", truncated(&index));
    assert!(
        found(&index, MAX_SKILL_TERMS - 1),
        "the last term within the budget"
    );

    let past = body(MAX_SKILL_TERMS);
    let (_dir, index) = index_of(&[(&name, &frontmatter, &past), RELEASE_NOTES]);
    assert!(
        found(&index, MAX_SKILL_TERMS - 1),
        "the last term within the budget"
    );
    assert!(!found(&index, MAX_SKILL_TERMS), "the term past the budget");
    let warned = truncated(&index);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains("1 words past the skill's first 20000 distinct terms"),
        "{warned:?}"
    );
}
