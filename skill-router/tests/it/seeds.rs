//! Every example command in the seeds, routed as the seed says (table-driven).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common::{seed_snapshot, summary};
use skill_router::{Caller, Route, Router};

const M: Caller = Caller::Model;
const U: Caller = Caller::User;

/// (seed reference, caller, input, expected summary)
const TABLE: &[(&str, Caller, &str, &str)] = &[
    // markdown-first 2.4 (email.send examples)
    (
        "mf 2.4",
        M,
        r#"email.send --to bob@company.com --subject "Q1 Report" --body "Here is the Q1 report.""#,
        r#"invoke email.send Mutating [body="Here is the Q1 report." subject="Q1 Report" to="bob@company.com"] pos[]"#,
    ),
    (
        "mf 2.4",
        M,
        r#"email.send --to alice@co.com bob@co.com --subject "Meeting Notes" --body "Attached." --attachments file123"#,
        r#"invoke email.send Mutating [attachments="file123" body="Attached." subject="Meeting Notes" to=["alice@co.com","bob@co.com"]] pos[]"#,
    ),
    // markdown-first 2.5 (tasks.search examples)
    (
        "mf 2.5",
        M,
        "tasks.search --status overdue --assignee me",
        r#"invoke tasks.search ReadOnly [assignee="me" status="overdue"] pos[]"#,
    ),
    (
        "mf 2.5",
        M,
        "tasks.search --tags Q1 backend --priority high critical",
        r#"invoke tasks.search ReadOnly [priority=["high","critical"] tags=["Q1","backend"]] pos[]"#,
    ),
    (
        "mf 2.5",
        M,
        r#"tasks.search --query "marketing report" --due-before 2026-03-01"#,
        r#"invoke tasks.search ReadOnly [due-before="2026-03-01" query="marketing report"] pos[]"#,
    ),
    // markdown-first 2.6 (workflow examples and the commands of its Behavior section)
    (
        "mf 2.6",
        M,
        "workflows.daily_digest",
        "invoke workflows.daily_digest Mutating [] pos[]",
    ),
    (
        "mf 2.6",
        M,
        "workflows.daily_digest --recipient bob@company.com --include-weather",
        r#"invoke workflows.daily_digest Mutating [include-weather=true recipient="bob@company.com"] pos[]"#,
    ),
    (
        "mf 2.6",
        M,
        "tasks.search --overdue --sort priority",
        r#"invoke tasks.search ReadOnly [overdue=true sort="priority"] pos[]"#,
    ),
    (
        "mf 2.6",
        M,
        "tasks.search --due-before {today} --due-after {today} --sort priority",
        r#"invoke tasks.search ReadOnly [due-after="{today}" due-before="{today}" sort="priority"] pos[]"#,
    ),
    (
        "mf 2.6",
        M,
        "calendar.list --date {today}",
        r#"invoke calendar.list ReadOnly [date="{today}"] pos[]"#,
    ),
    (
        "mf 2.6",
        M,
        "email.search --unread --after {yesterday} --label important --limit 5",
        r#"invoke email.search ReadOnly [after="{yesterday}" label="important" limit="5" unread=true] pos[]"#,
    ),
    (
        "mf 2.6",
        M,
        r#"email.send --to {recipient} --subject "Daily Digest - {today}" --body "{compiled_digest}""#,
        r#"invoke email.send Mutating [body="{compiled_digest}" subject="Daily Digest - {today}" to="{recipient}"] pos[]"#,
    ),
    // markdown-first 2.7 (email.draft examples)
    (
        "mf 2.7",
        M,
        r#"email.draft --to bob@co.com --subject "Q1 Report" --body "Summary of Q1 results""#,
        r#"invoke email.draft Mutating [body="Summary of Q1 results" subject="Q1 Report" to="bob@co.com"] pos[]"#,
    ),
    (
        "mf 2.7",
        M,
        r#"email.draft --to alice@co.com --subject "Coffee?" --body "Want to grab coffee?" --tone casual"#,
        r#"invoke email.draft Mutating [body="Want to grab coffee?" subject="Coffee?" to="alice@co.com" tone="casual"] pos[]"#,
    ),
    // markdown-first 3.3 / 6.1 / 6.3 (get_skill tiers and --help)
    (
        "mf 6.3",
        M,
        "get_skill",
        "help - | Available skill domains:",
    ),
    ("mf 6.3", M, "get_skill: email", "help email | # Email"),
    (
        "mf 6.3",
        M,
        "get_skill: email.send",
        "help email.send | # email.send",
    ),
    (
        "mf 6.3",
        M,
        "get_skill: email.all",
        "help email.all | # email.draft",
    ),
    (
        "mf 6.3",
        M,
        "get_skill: tasks.create",
        "help tasks.create | # tasks.create",
    ),
    ("mf 6.3", M, "get_skill: memory", "error unknown-domain"),
    ("mf 6.3", M, "get_skill: tasks.nope", "error unknown-skill"),
    (
        "mf 14.2",
        M,
        "tasks.search --help",
        "help tasks.search | # tasks.search",
    ),
    // markdown-first 5.1 / 5.3
    (
        "mf 5.1",
        M,
        r#"email.send --to bob@co.com --subject "Q1 Report" --body "See attached.""#,
        r#"invoke email.send Mutating [body="See attached." subject="Q1 Report" to="bob@co.com"] pos[]"#,
    ),
    ("mf 5.3", M, "emails.send --to x", "error unknown-skill"),
    // markdown-first 9.2 (workflow.build examples)
    (
        "mf 9.2",
        M,
        r#"workflow.build --name weekly_report --description "Generate and send weekly project status report" --schedule "0 9 * * 1""#,
        r#"invoke workflow.build Mutating [description="Generate and send weekly project status report" name="weekly_report" schedule="0 9 * * 1"] pos[]"#,
    ),
    (
        "mf 9.2",
        M,
        r#"workflow.build --name client_onboard --description "Run the new client onboarding checklist" --steps "Create tasks, send welcome email, set up HubSpot contact""#,
        r#"invoke workflow.build Mutating [description="Run the new client onboarding checklist" name="client_onboard" steps="Create tasks, send welcome email, set up HubSpot contact"] pos[]"#,
    ),
    (
        "mf 9.2",
        M,
        r#"workflow.build --name expense_report --domain finance --description "Generate monthly expense report""#,
        r#"invoke workflow.build Mutating [description="Generate monthly expense report" domain="finance" name="expense_report"] pos[]"#,
    ),
    // markdown-first 10.1 / 10.2 (prompt examples)
    (
        "mf 10.1",
        M,
        r#"email.send --to bob@co.com --subject "Hello" --body "Hi Bob!""#,
        r#"invoke email.send Mutating [body="Hi Bob!" subject="Hello" to="bob@co.com"] pos[]"#,
    ),
    (
        "mf 10.2",
        M,
        r#"email.send --to ADDR --subject "..." --body "...""#,
        r#"invoke email.send Mutating [body="..." subject="..." to="ADDR"] pos[]"#,
    ),
    // markdown-first 11.3 (the CLI form of a former tool call)
    (
        "mf 11.3",
        M,
        "tasks.search --status overdue",
        r#"invoke tasks.search ReadOnly [status="overdue"] pos[]"#,
    ),
    // markdown-first 15.1 (pipes deferred), 15.5 (no aliases), 15.7 (classification)
    (
        "mf 15.1",
        M,
        r#"tasks.search --overdue | email.send --to bob --subject "Report" --body {stdin}"#,
        "error pipe",
    ),
    ("mf 15.5", M, "st --overdue", "error unknown-skill"),
    (
        "mf 15.7",
        M,
        "calendar.list",
        "invoke calendar.list ReadOnly [] pos[]",
    ),
    (
        "mf 15.7",
        M,
        "tasks.create --title x",
        r#"invoke tasks.create Mutating [title="x"] pos[]"#,
    ),
    // lily 3.3 / 5.2 / 8 (slash commands)
    (
        "lily 8",
        U,
        "/skills",
        "list calendar.list,code-review,commit,email.draft,email.search,email.send,plan_compiler,release_notes,tasks.create,tasks.search,workflow.build,workflows.daily_digest",
    ),
    (
        "lily 8",
        U,
        "/skill plan_compiler",
        r#"slash plan_compiler Skill Inline args="""#,
    ),
    (
        "lily 3.3",
        U,
        "/plan",
        r#"slash plan_compiler Command Inline args="""#,
    ),
    (
        "lily 3.3",
        U,
        "/plan ship the beta",
        r#"slash plan_compiler Command Inline args="ship the beta""#,
    ),
    (
        "lily 3.4",
        U,
        "/relnotes v2.1",
        r#"slash release_notes Command Tool args="v2.1""#,
    ),
    ("lily 5.2", U, "/skill missing_one", "error unknown-skill"),
    ("lily 5.2", U, "/skill", "error missing-skill-name"),
    (
        "lily 5.2",
        U,
        "/skill project-conventions",
        "error not-user-invocable",
    ),
    ("lily 5.3", U, "/skill plan", "error unknown-skill"),
    // pegasus Triggering and the trigger control matrix
    (
        "pegasus path 2",
        U,
        "/code-review PR #42",
        r#"slash code-review Name Fork args="PR #42""#,
    ),
    ("pegasus path 2", U, "/help", r#"builtin help """#),
    ("pegasus path 2", U, "/exit", r#"builtin exit """#),
    ("pegasus path 2", U, "/clear", r#"builtin clear """#),
    (
        "pegasus path 2",
        U,
        "/no-such-skill hi",
        "message unknown command /no-such-skill: treated as a normal message",
    ),
    (
        "pegasus matrix",
        U,
        "/commit feat",
        r#"slash commit Name Inline args="feat""#,
    ),
    (
        "pegasus matrix",
        M,
        "commit",
        "error model-invocation-disabled",
    ),
    (
        "pegasus matrix",
        M,
        "get_skill: commit",
        "error model-invocation-disabled",
    ),
    (
        "pegasus matrix",
        U,
        "/project-conventions",
        "error not-user-invocable",
    ),
    (
        "pegasus matrix",
        M,
        "project-conventions",
        "invoke project-conventions Mutating [] pos[]",
    ),
    (
        "pegasus matrix",
        M,
        "code-review 42",
        r#"invoke code-review Mutating [] pos["42"]"#,
    ),
    // users' plain text is a message; the model's slash commands are errors
    ("user text", U, "please review my PR", "message -"),
    (
        "user path",
        U,
        "/usr/bin/env is odd",
        "message not a command: treated as a normal message",
    ),
    ("model slash", M, "/skills", "error slash-from-model"),
];

#[test]
fn every_seed_example_routes_as_the_seed_says() {
    let (_dir, snapshot) = seed_snapshot();
    let router = Router::new(&snapshot);
    let mut failures = Vec::new();
    for (seed, caller, input, expected) in TABLE {
        let got = summary(&router.route(input, *caller));
        if got != *expected {
            failures.push(format!(
                "[{seed}] {input}\n   expected: {expected}\n   got:      {got}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows differ:\n{}",
        failures.len(),
        TABLE.len(),
        failures.join("\n")
    );
}

#[test]
fn section_4_1_output_extracts_and_routes_in_order() {
    let (_dir, snapshot) = seed_snapshot();
    let router = Router::new(&snapshot);
    let output = "I'll search for your overdue tasks and send them to Bob.\n\n```cmd\ntasks.search --status overdue --assignee me\n```\n\nFound 3 overdue tasks. Sending the report now.\n\n```cmd\nemail.send --to bob@co.com --subject \"Overdue Tasks Report\" --body \"Here are the 3 overdue tasks: ...\"\n```\n\nDone! Report sent to Bob.\n";
    let routed = router.route_output(output);
    let got: Vec<(u32, String)> = routed
        .routes
        .iter()
        .map(|r| (r.line, summary(&r.route)))
        .collect();
    assert_eq!(
        got,
        [
            (4, r#"invoke tasks.search ReadOnly [assignee="me" status="overdue"] pos[]"#.to_owned()),
            (10, r#"invoke email.send Mutating [body="Here are the 3 overdue tasks: ..." subject="Overdue Tasks Report" to="bob@co.com"] pos[]"#.to_owned()),
        ]
    );
    assert_eq!(
        routed.extraction.text().lines().next(),
        Some("I'll search for your overdue tasks and send them to Bob.")
    );
}

#[test]
fn pegasus_slash_substitutes_arguments_and_forks() {
    let (_dir, snapshot) = seed_snapshot();
    let router = Router::new(&snapshot);
    match router.route("/code-review PR #42", Caller::User) {
        Route::Slash(s) => {
            assert_eq!(
                s.content.as_deref(),
                Some("\nReview the changes in PR #42 and report findings.\n")
            );
            assert_eq!(s.arguments, ["PR", "#42"]);
        }
        other => panic!("{other:?}"),
    }
    match router.route("/relnotes v2.1", Caller::User) {
        Route::Slash(s) => {
            assert_eq!(s.tool.as_deref(), Some("render_release_notes"));
            assert_eq!(s.content, None);
        }
        other => panic!("{other:?}"),
    }
}
