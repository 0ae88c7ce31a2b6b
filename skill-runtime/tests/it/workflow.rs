//! Built-in handlers: `workflow.build` (success and every refusal, with no partial file)
//! and `markdown.search`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::{inv, write};
use skill_registry::{Registry, RegistryConfig, Source};
use skill_runtime::exec::{Context, Kind, Runtime, RuntimeConfig};

const BUILD: &str = "---\nname: workflow.build\ndescription: Save a new workflow composed of existing skills\nhandler: workflow.build\n---\n# workflow.build\n\nBuilds.\n";
const INDEX: &str = "---\ndomain: workflows\ndescription: Saved routines\n---\n\n# Workflows\n\nRoutines.\n\n## Available Skills\n\n| Skill | Description |\n|-------|-------------|\n| workflows.daily | Daily digest |\n\n## Notes\n\n- Rewritten by workflow.build.\n";
const DAILY: &str = "---\nname: workflows.daily\ndescription: Daily digest\nschedule: \"0 8 * * *\"\n---\n# workflows.daily\n\nDigest.\n";

struct Setup {
    _builtin: tempfile::TempDir,
    user: tempfile::TempDir,
    registry: Arc<Registry>,
    rt: Runtime,
}

/// A read-only `builtin` source with workflow.build, a writable `user` source with a
/// workflows domain.
fn setup(writable: bool) -> Setup {
    let builtin = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    write(
        builtin.path(),
        "workflow/SKILL.md",
        "---\ndomain: workflow\ndescription: Workflow tools\n---\n# Workflow\n",
    );
    write(builtin.path(), "workflow/build.md", BUILD);
    write(user.path(), "workflows/SKILL.md", INDEX);
    write(user.path(), "workflows/daily.md", DAILY);
    let mut u = Source::new(user.path(), "user");
    u.writable = writable;
    let registry = Arc::new(Registry::load(RegistryConfig::with_sources(vec![
        Source::new(builtin.path(), "builtin"),
        u,
    ])));
    assert!(registry.snapshot().get("workflows.daily").is_some());
    let config = RuntimeConfig {
        workflow_domains: ["workflows", "finance", "escape"]
            .map(String::from)
            .to_vec(),
        ..RuntimeConfig::default()
    };
    let rt = Runtime::builder(registry.clone())
        .config(config)
        .workflow_builder()
        .build();
    Setup {
        _builtin: builtin,
        user,
        registry,
        rt,
    }
}

/// Every file under a folder, with its contents.
fn tree(root: &Path) -> BTreeSet<(PathBuf, Vec<u8>)> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                out.insert((p.clone(), Vec::new()));
                stack.push(p);
            } else {
                out.insert((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out
}

#[tokio::test(start_paused = true)]
async fn workflow_build_writes_indexes_and_publishes_a_scheduled_workflow() {
    let s = setup(true);
    let start = skill_scheduler::DateTime::<skill_scheduler::Utc>::from_timestamp(1_800_000_000, 0)
        .unwrap();
    let scheduler = skill_scheduler::Scheduler::start(
        s.registry.clone(),
        Arc::new(s.rt.clone()),
        skill_scheduler::SchedulerConfig {
            clock: skill_scheduler::Clock::StartingAt(start),
            ..Default::default()
        },
    )
    .unwrap();
    let o =
        s.rt.execute(
            &inv(
                "workflow.build",
                &[],
                &[
                    ("name", &["weekly_sync"]),
                    ("description", &["Summarise", "the", "week"]),
                    ("steps", &["tasks.search --status done, then email.send"]),
                    ("schedule", &["0 9 * * 1"]),
                ],
            ),
            &Context::model(),
        )
        .await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.kind, Some(Kind::Handler));
    assert_eq!(o.output["name"], "workflows.weekly_sync");
    let path = s.user.path().join("workflows/weekly_sync.md");
    assert_eq!(o.output["path"], path.to_string_lossy().as_ref());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("---\nname: workflows.weekly_sync\ndescription: \"Summarise the week\"\nschedule: \"0 9 * * 1\"\nauthor: assistant\ncreated: "), "{text}");
    assert!(text.contains("## Behavior\n\ntasks.search --status done, then email.send\n"));
    // The index lists both workflows, keeps its other sections.
    let index = std::fs::read_to_string(s.user.path().join("workflows/SKILL.md")).unwrap();
    assert!(
        index.contains(
            "| workflows.daily | Daily digest |\n| workflows.weekly_sync | Summarise the week |\n"
        ),
        "{index}"
    );
    assert!(index.contains("## Notes\n\n- Rewritten by workflow.build.\n"));
    assert!(index.starts_with(
        "---\ndomain: workflows\ndescription: Saved routines\n---\n\n# Workflows\n\nRoutines.\n"
    ));
    // Visible now, with its schedule, and no temporary file left.
    let snapshot = s.registry.snapshot();
    let skill = snapshot.get("workflows.weekly_sync").unwrap();
    assert_eq!(skill.manifest.schedule.as_deref(), Some("0 9 * * 1"));
    assert_eq!(o.output["generation"], snapshot.generation());
    let leftovers: Vec<_> = tree(s.user.path())
        .into_iter()
        .filter(|(p, _)| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // The scheduler picked the schedule up from the change set.
    let mut found = false;
    for _ in 0..1000 {
        if scheduler
            .jobs(1)
            .iter()
            .any(|j| j.name == "workflows.weekly_sync")
        {
            found = true;
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(found, "{:?}", scheduler.jobs(1));
    // The new workflow routes and runs as a template.
    let o =
        s.rt.execute(&inv("workflows.weekly_sync", &[], &[]), &Context::model())
            .await;
    assert_eq!(o.kind, Some(Kind::Template));
    scheduler.shutdown();
}

#[tokio::test]
async fn a_new_domain_gets_a_generated_index() {
    let s = setup(true);
    let o = s
        .rt
        .invoke(
            "/workflow.build --name expense_report --domain finance --description \"Monthly expenses\"",
            &Context::user(),
        )
        .await;
    assert!(o.ok, "{o:?}");
    let index = std::fs::read_to_string(s.user.path().join("finance/SKILL.md")).unwrap();
    assert!(index.starts_with("---\ndomain: finance\n"), "{index}");
    assert!(index.contains("# Finance\n"));
    assert!(index.contains("| finance.expense_report | Monthly expenses |"));
    let snapshot = s.registry.snapshot();
    assert!(snapshot.get("finance.expense_report").is_some());
    assert!(snapshot.domain("finance").is_some());
}

async fn refused(s: &Setup, flags: &[(&str, &[&str])], code: &str) {
    let before = tree(s.user.path());
    let generation = s.registry.snapshot().generation();
    let o =
        s.rt.execute(&inv("workflow.build", &[], flags), &Context::model())
            .await;
    assert!(!o.ok, "{flags:?} should be refused: {o:?}");
    assert_eq!(o.code(), Some(code), "{flags:?}: {o:?}");
    assert!(!o.error.as_ref().unwrap().message.is_empty());
    assert_eq!(tree(s.user.path()), before, "{flags:?} changed files");
    assert_eq!(s.registry.snapshot().generation(), generation);
}

#[tokio::test]
async fn every_refusal_leaves_no_file() {
    let s = setup(true);
    let d: &[&str] = &["Something"];
    refused(&s, &[("description", d)], "missing_flags").await;
    refused(&s, &[("name", &["x"])], "missing_flags").await;
    refused(&s, &[("name", &[]), ("description", d)], "invalid_value").await;
    refused(
        &s,
        &[("name", &["help"]), ("description", d)],
        "reserved_name",
    )
    .await;
    refused(
        &s,
        &[("name", &["all"]), ("description", d)],
        "reserved_name",
    )
    .await;
    refused(&s, &[("name", &["daily"]), ("description", d)], "conflict").await;
    refused(
        &s,
        &[
            ("name", &["build"]),
            ("domain", &["workflow"]),
            ("description", d),
            ("overwrite", &[]),
        ],
        "reserved_name",
    )
    .await;
    // A builtin cannot be overwritten, whatever the domain flag says.
    refused(
        &s,
        &[
            ("name", &["build"]),
            ("domain", &["workflow"]),
            ("description", d),
        ],
        "reserved_name",
    )
    .await;
    for traversal in [
        "../evil",
        "..",
        "a/b",
        "/etc/passwd",
        "evil.md",
        "Evil",
        "x\0y",
    ] {
        refused(
            &s,
            &[("name", &[traversal]), ("description", d)],
            "invalid_name",
        )
        .await;
    }
    for domain in ["../outside", "..", "/tmp", "a/b", "."] {
        refused(
            &s,
            &[
                ("name", &["fine"]),
                ("domain", &[domain]),
                ("description", d),
            ],
            "invalid_name",
        )
        .await;
    }
    refused(
        &s,
        &[
            ("name", &["fine"]),
            ("description", d),
            ("schedule", &["61 * * * *"]),
        ],
        "invalid_schedule",
    )
    .await;
    let long = "x".repeat(skill_format::MAX_DESCRIPTION_CHARS + 1);
    refused(
        &s,
        &[("name", &["fine"]), ("description", &[long.as_str()])],
        "invalid_value",
    )
    .await;
    // A file on disk that the registry does not know still counts as taken.
    write(s.user.path(), "workflows/stray.md", "not a skill");
    refused(&s, &[("name", &["stray"]), ("description", d)], "conflict").await;
}

#[tokio::test]
async fn a_read_only_source_is_refused() {
    let s = setup(false);
    refused(
        &s,
        &[("name", &["fine"]), ("description", &["Something"])],
        "no_writable_source",
    )
    .await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_domain_folder_linking_out_of_the_source_is_refused() {
    let s = setup(true);
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), s.user.path().join("escape")).unwrap();
    refused(
        &s,
        &[
            ("name", &["fine"]),
            ("domain", &["escape"]),
            ("description", &["x"]),
        ],
        "unsafe_path",
    )
    .await;
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn overwrite_replaces_a_workflow_it_could_have_written() {
    let s = setup(true);
    let flags: &[(&str, &[&str])] = &[
        ("name", &["daily"]),
        ("description", &["New digest"]),
        ("overwrite", &[]),
    ];
    let o =
        s.rt.execute(&inv("workflow.build", &[], flags), &Context::model())
            .await;
    assert!(o.ok, "{o:?}");
    let snapshot = s.registry.snapshot();
    assert_eq!(
        snapshot.get("workflows.daily").unwrap().description,
        "New digest"
    );
    let index = std::fs::read_to_string(s.user.path().join("workflows/SKILL.md")).unwrap();
    assert!(
        index.contains("| workflows.daily | New digest |"),
        "{index}"
    );
    assert_eq!(index.matches("workflows.daily").count(), 1);
}

#[tokio::test]
async fn markdown_search_finds_notes() {
    let notes = tempfile::tempdir().unwrap();
    write(
        notes.path(),
        "work/pricing.md",
        "---\ntitle: Pricing experiment\ntags: [work, pricing]\n---\nWe tried a new pricing page.\n",
    );
    write(
        notes.path(),
        "home/garden.md",
        "---\ntitle: Garden\ntags: [home]\n---\nPlant tomatoes before the pricing season.\n",
    );
    write(
        notes.path(),
        "work/retro.md",
        "# Retro\n\nNothing about money.\n",
    );
    let skills = tempfile::tempdir().unwrap();
    write(
        skills.path(),
        "markdown/SKILL.md",
        "---\ndomain: markdown\ndescription: Notes\n---\n# Markdown\n",
    );
    write(
        skills.path(),
        "markdown/search.md",
        "---\nname: markdown.search\ndescription: Search notes\nhandler: markdown.search\n---\n# markdown.search\n\nSearch.\n",
    );
    let registry = crate::common::registry(skills.path(), false);
    let index = Arc::new(skill_search::NotesIndex::build(notes.path()).unwrap());
    let rt = Runtime::builder(registry).markdown_search(index).build();
    let o = rt
        .execute(
            &inv(
                "markdown.search",
                &[],
                &[("query", &["pricing"]), ("snippets", &[])],
            ),
            &Context::model(),
        )
        .await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.output["count"], 2);
    assert_eq!(o.output["results"][0]["path"], "work/pricing.md");
    assert!(
        o.output["results"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("**")
    );
    assert!(
        o.output["results"][0]["modified"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    let o = rt
        .execute(
            &inv(
                "markdown.search",
                &[],
                &[("query", &["pricing"]), ("folder", &["home"])],
            ),
            &Context::model(),
        )
        .await;
    assert_eq!(o.output["count"], 1);
    assert_eq!(o.output["results"][0]["path"], "home/garden.md");
    assert!(o.output["results"][0].get("snippet").is_none());
    let o = rt
        .execute(
            &inv(
                "markdown.search",
                &[],
                &[
                    ("query", &["pricing"]),
                    ("tags", &["work,pricing"]),
                    ("limit", &["1"]),
                ],
            ),
            &Context::model(),
        )
        .await;
    assert_eq!(o.output["count"], 1);
    assert_eq!(o.output["results"][0]["title"], "Pricing experiment");
    let o = rt
        .execute(&inv("markdown.search", &[], &[]), &Context::model())
        .await;
    assert_eq!(o.code(), Some("missing_flags"));
    let o = rt
        .execute(
            &inv(
                "markdown.search",
                &[],
                &[("query", &["x"]), ("folder", &["../etc"])],
            ),
            &Context::model(),
        )
        .await;
    assert_eq!(o.code(), Some("invalid_value"));
    let o = rt
        .execute(
            &inv(
                "markdown.search",
                &[],
                &[("query", &["x"]), ("limit", &["0"])],
            ),
            &Context::model(),
        )
        .await;
    assert_eq!(o.code(), Some("invalid_value"));
}

#[tokio::test]
async fn build_workflow_works_without_a_skill_file_and_needs_the_handler() {
    let user = tempfile::tempdir().unwrap();
    let registry = crate::common::registry(user.path(), true);
    assert!(registry.snapshot().get("workflow.build").is_none());
    let mut flags = skill_router::Flags::new();
    flags.insert("name", skill_router::FlagValue::One("standup".into()));
    flags.insert(
        "description",
        skill_router::FlagValue::One("Daily standup notes".into()),
    );
    let bare = Runtime::builder(registry.clone()).build();
    let o = bare.build_workflow(flags.clone(), &Context::model()).await;
    assert_eq!(o.code(), Some("handler_not_registered"));
    assert!(!user.path().join("workflows").exists());
    let rt = Runtime::builder(registry.clone())
        .workflow_builder()
        .build();
    let o = rt.build_workflow(flags, &Context::model()).await;
    assert!(o.ok, "{o:?}");
    assert!(registry.snapshot().get("workflows.standup").is_some());
    assert!(user.path().join("workflows/SKILL.md").exists());
}

#[tokio::test]
async fn only_workflow_domains_may_be_written() {
    let s = setup(true);
    // `calendar` is a fine name but not a configured workflow domain.
    refused(
        &s,
        &[
            ("name", &["fine"]),
            ("domain", &["calendar"]),
            ("description", &["x"]),
        ],
        "not_a_workflow_domain",
    )
    .await;
    // The default configuration allows `workflows` alone.
    let rt = Runtime::builder(s.registry.clone())
        .workflow_builder()
        .build();
    let flags: &[(&str, &[&str])] = &[
        ("name", &["fine"]),
        ("domain", &["finance"]),
        ("description", &["x"]),
    ];
    let o = rt
        .execute(&inv("workflow.build", &[], flags), &Context::model())
        .await;
    assert_eq!(o.code(), Some("not_a_workflow_domain"), "{o:?}");
    assert!(!s.user.path().join("finance").exists());
    let flags: &[(&str, &[&str])] = &[("name", &["fine"]), ("description", &["x"])];
    let o = rt
        .execute(&inv("workflow.build", &[], flags), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
}

#[tokio::test]
async fn an_index_missing_a_workflow_file_gets_it_back_on_the_next_build() {
    let s = setup(true);
    // A crash between the workflow file and its index: the file is there, the index and
    // the registry do not know it.
    write(
        s.user.path(),
        "workflows/orphan.md",
        "---\nname: workflows.orphan\ndescription: Left by a crash\n---\n# workflows.orphan\n\nSteps.\n",
    );
    assert!(s.registry.snapshot().get("workflows.orphan").is_none());
    let flags: &[(&str, &[&str])] = &[("name", &["next"]), ("description", &["The next one"])];
    let o =
        s.rt.execute(&inv("workflow.build", &[], flags), &Context::model())
            .await;
    assert!(o.ok, "{o:?}");
    let index = std::fs::read_to_string(s.user.path().join("workflows/SKILL.md")).unwrap();
    assert!(
        index.contains("| workflows.orphan | Left by a crash |"),
        "{index}"
    );
    assert!(index.contains("| workflows.next | The next one |"));
    assert!(index.contains("| workflows.daily | Daily digest |"));
    // The rest of the index is kept.
    assert!(index.ends_with("\n## Notes\n\n- Rewritten by workflow.build.\n"));
}

/// The pid of a process that has ended.
#[cfg(unix)]
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[cfg(unix)]
#[tokio::test]
async fn stale_temporary_files_are_removed_at_start_and_on_reload() {
    let s = setup(true);
    let dir = s.user.path().join("workflows");
    let dead = dead_pid();
    let stale = dir.join(format!(".daily.md.{dead}.3.tmp"));
    let stale_index = dir.join(format!(".SKILL.md.{dead}.4.tmp"));
    // Another process's (pid 1 runs) recent file: possibly in flight, kept.
    let live = dir.join(".SKILL.md.1.0.tmp");
    // Not of this pattern: kept.
    let other = dir.join(".notes.tmp");
    for p in [&stale, &stale_index, &live, &other] {
        std::fs::write(p, "partial").unwrap();
    }
    // Start: a new handler (as when the runtime starts) cleans up.
    let rt = Runtime::builder(s.registry.clone())
        .workflow_builder()
        .build();
    assert!(!stale.exists());
    assert!(!stale_index.exists());
    assert!(live.exists());
    assert!(other.exists());
    // A file of our own process left behind (no build is under way) and another dead one:
    // removed by the next reload that changes something.
    let mine = dir.join(format!(".daily.md.{}.99.tmp", std::process::id()));
    std::fs::write(&mine, "partial").unwrap();
    std::fs::write(&stale, "partial").unwrap();
    write(
        s.user.path(),
        "workflows/daily.md",
        &DAILY.replace("Daily digest", "Changed"),
    );
    assert!(!s.registry.reload().is_empty());
    assert!(!mine.exists());
    assert!(!stale.exists());
    assert!(live.exists());
    drop(rt);
}
