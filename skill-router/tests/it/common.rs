//! A skill tree with the skills the seeds use in their examples (names and flags as the
//! seeds declare them; descriptions written for these tests), loaded into a snapshot.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::sync::Arc;

use skill_registry::{Registry, RegistryConfig, Snapshot, Source};
use skill_router::Route;

/// Write `text` at `rel` under `root`, creating its folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn action(name: &str, description: &str, usage: &str, flags: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n{description}.\n\n## Usage\n\n{usage}\n\n## Flags\n\n{flags}\n\n## Behavior\n\nDoes what the description says.\n"
    )
}

const FILES: &[(&str, &str)] = &[
    (
        "email/SKILL.md",
        "---\ndomain: email\ndescription: Mail tools for the user's inbox\n---\n\n# Email\n\nSend, draft and search mail.\n",
    ),
    (
        "tasks/SKILL.md",
        "---\ndomain: tasks\ndescription: Task tracking\n---\n\n# Tasks\n\nCreate and find tasks.\n",
    ),
    (
        "workflows/SKILL.md",
        "---\ndomain: workflows\ndescription: Saved multi-step routines\n---\n\n# Workflows\n",
    ),
    (
        "workflow/SKILL.md",
        "---\ndomain: workflow\ndescription: Building new workflows\n---\n\n# Workflow\n",
    ),
    (
        "calendar/SKILL.md",
        "---\ndomain: calendar\ndescription: Calendar events\n---\n\n# Calendar\n",
    ),
    (
        "commit/SKILL.md",
        "---\nname: commit\ndescription: Commit staged changes with a conventional message\ndisable-model-invocation: true\n---\n\nCommit what is staged; scope: $ARGUMENTS\n",
    ),
    (
        "code-review/SKILL.md",
        "---\nname: code-review\ndescription: Review a change set for problems\ncontext: fork\nargument-hint: \"[pr-number or branch]\"\n---\n\nReview the changes in $ARGUMENTS and report findings.\n",
    ),
    (
        "project-conventions/SKILL.md",
        "---\nname: project-conventions\ndescription: House rules for this code base\nuser-invocable: false\n---\n\n# Conventions\n\nUse the house style.\n",
    ),
    (
        "plan_compiler/SKILL.md",
        "---\nsummary: Turn the conversation into a phased plan\ninvocation_mode: prompt_rewrite\ncommand: plan\n---\n\n# Plan Compiler\n\nWrite the plan.\n",
    ),
    (
        "release_notes/SKILL.md",
        "---\nsummary: Render release notes\ninvocation_mode: tool_dispatch\ncommand: relnotes\ncommand_tool: render_release_notes\n---\n\n# Release notes\n",
    ),
];

/// Write the seed skill tree under `root`.
pub fn write_seed_tree(root: &Path) {
    for (rel, text) in FILES {
        write(root, rel, text);
    }
    let actions = [
        (
            "email/send.md",
            action(
                "email.send",
                "Send an email to one or more recipients",
                "email.send --to <addresses> --subject <text> --body <text> [--cc <addresses>] [--bcc <addresses>] [--attachments <file_ids>]",
                "--to            Recipients, space-separated (required)\n--subject       Subject line (required)\n--body          Body text (required)\n--cc            CC recipients\n--bcc           BCC recipients\n--attachments   Drive file IDs to attach",
            ),
        ),
        (
            "email/draft.md",
            action(
                "email.draft",
                "Draft an email for review",
                "email.draft --to <recipient> --subject <subject> --body <body> [--tone <tone>]",
                "--to        Recipient (required)\n--subject   Subject (required)\n--body      Body (required)\n--tone      Tone of voice (default: professional)",
            ),
        ),
        (
            "email/search.md",
            action(
                "email.search",
                "Search mail",
                "email.search [--query <text>] [--unread] [--after <date>] [--label <label>] [--limit <n>]",
                "--query   Words to find\n--unread  Only unread mail (boolean flag)\n--after   Received after (YYYY-MM-DD)\n--label   Label to match\n--limit   Maximum results (default: 20)",
            ),
        ),
        (
            "tasks/search.md",
            action(
                "tasks.search",
                "Search and filter tasks",
                "tasks.search [--query <text>] [--status <statuses>] [--assignee <name>] [--priority <levels>] [--tags <tags>] [--overdue] [--sort <field>] [--limit <n>]",
                "--query       Free text\n--status      Status filter. One or more of: todo, in_progress, blocked, done, cancelled (default: todo, in_progress, blocked)\n--assignee    Assignee\n--priority    Priority filter. One or more of: critical, high, medium, low\n--tags        Tags, all must match\n--due-before  Due on or before (YYYY-MM-DD)\n--due-after   Due on or after (YYYY-MM-DD)\n--overdue     Only overdue tasks (boolean flag)\n--sort        Sort by: due_date, priority, created_at, updated_at (default: due_date)\n--limit       Maximum results (default: 20)",
            ),
        ),
        (
            "tasks/create.md",
            action(
                "tasks.create",
                "Create a task",
                "tasks.create --title <text> [--priority <level>] [--due <date>]",
                "--title     Title (required)\n--priority  Priority. One of: critical, high, medium, low\n--due       Due date (YYYY-MM-DD)",
            ),
        ),
        (
            "workflows/daily_digest.md",
            action(
                "workflows.daily_digest",
                "Build and send the morning digest",
                "workflows.daily_digest [--recipient <email>] [--include-weather]",
                "--recipient        Who receives it (default: me)\n--include-weather  Add the weather (boolean flag)",
            ),
        ),
        (
            "workflow/build.md",
            action(
                "workflow.build",
                "Create a new workflow from a description",
                "workflow.build --name <name> --description <text> [--domain <domain>] [--steps <text>] [--schedule <cron>]",
                "--name          Action name (required)\n--description   What it does (required)\n--domain        Target domain (default: custom)\n--steps         The steps\n--schedule      Cron expression",
            ),
        ),
        (
            "calendar/list.md",
            action(
                "calendar.list",
                "List calendar events",
                "calendar.list [--date <date>]",
                "--date  Day to list (YYYY-MM-DD)",
            ),
        ),
    ];
    for (rel, text) in &actions {
        write(root, rel, text);
    }
}

/// The seed tree in a temporary folder, loaded as layer `builtin`.
pub fn seed_snapshot() -> (tempfile::TempDir, Arc<Snapshot>) {
    let dir = tempfile::tempdir().unwrap();
    write_seed_tree(dir.path());
    let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "builtin",
    )]));
    let snapshot = registry.snapshot();
    assert_eq!(
        snapshot.error_count(),
        0,
        "fixture must load cleanly: {:#?}",
        snapshot.diagnostics()
    );
    (dir, snapshot)
}

/// A one-line summary of a route, for table-driven assertions.
/// Generic over the string type, so that a route from `route_output` (borrowing from the
/// output) and an owned one read the same.
pub fn summary<S: AsRef<str> + std::fmt::Debug>(route: &Route<S>) -> String {
    match route {
        Route::Help { topic, text } => format!(
            "help {} | {}",
            topic.as_deref().unwrap_or("-"),
            text.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
        ),
        Route::Invoke(i) => {
            let flags: Vec<String> = i
                .flags
                .iter()
                .map(|(k, v)| format!("{k}={}", flag_json(v)))
                .collect();
            format!(
                "invoke {} {:?} [{}] pos{:?}",
                i.skill.as_ref(),
                i.access,
                flags.join(" "),
                i.positionals
            )
        }
        Route::Slash(s) => format!(
            "slash {} {:?} {:?} args={:?}",
            s.skill, s.via, s.delivery, s.args
        ),
        Route::SkillList { skills, .. } => format!(
            "list {}",
            skills
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        ),
        Route::Builtin { command, args } => format!("builtin {command} {args:?}"),
        Route::Message { note, .. } => format!("message {}", note.as_deref().unwrap_or("-")),
        Route::Error(e) => format!("error {}", e.code()),
    }
}

/// A flag's value as the wire writes it (`true`, `"x"`, `["a","b"]`).
fn flag_json<S: AsRef<str>>(v: &skill_router::FlagValue<S>) -> String {
    match v {
        skill_router::FlagValue::Switch(b) => b.to_string(),
        skill_router::FlagValue::One(s) => serde_json::to_string(s.as_ref()).unwrap(),
        skill_router::FlagValue::Many(vs) => {
            serde_json::to_string(&vs.iter().map(AsRef::as_ref).collect::<Vec<&str>>()).unwrap()
        }
    }
}
