//! One request's work and answer stay bounded: a notes search runs off the async workers,
//! a model output executes at most `MAX_OUTPUT_COMMANDS` commands and returns at most
//! `MAX_EXECUTION_OUTPUT_BYTES` of output, kept task results are listed without their
//! outputs, and a model output's commands log one line at INFO, not one per command.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::task::Poll;

use skill_registry::{RegistryConfig, Source};
use skill_runtime::exec::{CommandOutcome, MAX_EXECUTION_OUTPUT_BYTES, MAX_OUTPUT_COMMANDS};
use skill_runtime::{Engine, EngineConfig, Scope};

use crate::common::{captured_log, write};

fn engine(root: &Path, notes: Option<&Path>) -> Arc<Engine> {
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        root, "project",
    )]));
    #[cfg(feature = "watch")]
    {
        config.watch = None;
    }
    config.schedule = None;
    config.notes = notes.map(Path::to_path_buf);
    Engine::start(config).unwrap()
}

fn skill(root: &Path, name: &str, extra: &str, body: &str) {
    write(
        root,
        &format!("{name}/SKILL.md"),
        &format!("---\nname: {name}\ndescription: A test skill named {name}.\n{extra}---\n{body}"),
    );
}

/// A model output of these commands, one `cmd` block.
fn output(commands: &[String]) -> String {
    format!("```cmd\n{}\n```\n", commands.join("\n"))
}

fn code(r: &CommandOutcome) -> Option<&str> {
    r.outcome.code()
}

#[tokio::test(flavor = "current_thread")]
async fn a_notes_search_leaves_the_async_worker_free() {
    let skills = tempfile::tempdir().unwrap();
    skill(skills.path(), "greet", "", "Say hello.\n");
    let notes = tempfile::tempdir().unwrap();
    let para = "The quarterly revenue report shows growth in several markets. ";
    for i in 0..20 {
        write(
            notes.path(),
            &format!("n{i}.md"),
            &para.repeat(50_000 / para.len()),
        );
    }
    let engine = engine(skills.path(), Some(notes.path()));
    let mut search = std::pin::pin!(engine.notes_search("revenue", 1000));
    // On the one worker thread of this runtime, the first poll returns at once: the
    // search runs on the blocking pool (inline, it would have run to its end here).
    let first = std::future::poll_fn(|cx| Poll::Ready(search.as_mut().poll(cx))).await;
    assert!(first.is_pending(), "the search ran on the async worker");
    // The worker answers other requests meanwhile.
    assert_eq!(engine.health().skills, 1);
    let hits = search.await.unwrap();
    assert_eq!(hits.len(), 20);
    assert!(
        hits[0].snippet.contains("**revenue**"),
        "{}",
        hits[0].snippet
    );
}

/// Routing an output (without executing it) routes the commands an execution would run and
/// counts the rest: a 1 MB output of one-word commands made a 60 MB answer.
#[test]
fn a_model_output_routes_at_most_its_command_limit() {
    let dir = tempfile::tempdir().unwrap();
    skill(dir.path(), "probe-echo", "", "Echo: $ARGUMENTS\n");
    let engine = engine(dir.path(), None);
    let commands: Vec<String> = (0..=MAX_OUTPUT_COMMANDS)
        .map(|i| format!("probe-echo {i}"))
        .collect();
    let shape = |n: usize| {
        let text = output(&commands[..n]);
        let routed = engine.route_output(&text, &Scope::model());
        serde_json::to_value(skill_runtime::wire::RoutedOutputShape::from(&routed)).unwrap()
    };
    let at = shape(MAX_OUTPUT_COMMANDS);
    assert_eq!(at["routes"].as_array().unwrap().len(), MAX_OUTPUT_COMMANDS);
    assert!(at.get("not_routed").is_none(), "{}", at["not_routed"]);
    let over = shape(MAX_OUTPUT_COMMANDS + 1);
    assert_eq!(
        over["routes"].as_array().unwrap().len(),
        MAX_OUTPUT_COMMANDS
    );
    assert_eq!(over["not_routed"], 1);
}

#[tokio::test]
async fn a_model_output_executes_at_most_its_command_limit() {
    let dir = tempfile::tempdir().unwrap();
    skill(dir.path(), "probe-echo", "", "Echo: $ARGUMENTS\n");
    let engine = engine(dir.path(), None);
    let commands: Vec<String> = (0..=MAX_OUTPUT_COMMANDS)
        .map(|i| format!("probe-echo {i}"))
        .collect();

    // At the limit: every command runs, nothing is refused.
    let at = engine
        .execute_output(&output(&commands[..MAX_OUTPUT_COMMANDS]), &Scope::model())
        .await;
    assert_eq!(at.len(), MAX_OUTPUT_COMMANDS);
    assert!(at.iter().all(|r| r.outcome.ok), "{:?}", at.last());

    // One over: the first `MAX_OUTPUT_COMMANDS` run, one last entry says the rest did not.
    let over = engine
        .execute_output(&output(&commands), &Scope::model())
        .await;
    assert_eq!(over.len(), MAX_OUTPUT_COMMANDS + 1);
    assert!(over[..MAX_OUTPUT_COMMANDS].iter().all(|r| r.outcome.ok));
    let refused = &over[MAX_OUTPUT_COMMANDS];
    assert_eq!(code(refused), Some("too_many_commands"));
    assert_eq!(refused.command, format!("probe-echo {MAX_OUTPUT_COMMANDS}"));
    assert_eq!(refused.outcome.kind, None, "nothing was executed");
    let message = &refused.outcome.error.as_ref().unwrap().message;
    assert!(
        message.contains(&format!("at most {MAX_OUTPUT_COMMANDS}"))
            && message.contains("the 1 from this one (line 102)"),
        "{message}"
    );

    // Far over: still one refusal, for every command left.
    let many: Vec<String> = (0..10 * MAX_OUTPUT_COMMANDS)
        .map(|_| "probe-echo x".to_owned())
        .collect();
    let far = engine.execute_output(&output(&many), &Scope::model()).await;
    assert_eq!(far.len(), MAX_OUTPUT_COMMANDS + 1);
    let message = &far[MAX_OUTPUT_COMMANDS]
        .outcome
        .error
        .as_ref()
        .unwrap()
        .message;
    assert!(
        message.contains(&format!("the {} from", 9 * MAX_OUTPUT_COMMANDS)),
        "{message}"
    );
}

/// The text bytes of an output (it is a string here: templates).
fn len(r: &CommandOutcome) -> usize {
    r.outcome.output.as_str().unwrap().len()
}

#[tokio::test]
async fn a_model_output_returns_at_most_its_output_budget() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("{}\n$ARGUMENTS", "x".repeat(2 * 1024 * 1024 - 4096));
    skill(dir.path(), "big-output", "", &body);
    skill(dir.path(), "probe-echo", "", "Echo: $ARGUMENTS\n");
    let engine = engine(dir.path(), None);
    let one = engine
        .execute_output(&output(&["big-output".to_owned()]), &Scope::model())
        .await;
    let base = len(&one[0]);
    let pad = MAX_EXECUTION_OUTPUT_BYTES - 4 * base;
    assert!(pad > 0 && pad < 1024 * 1024, "{base}");
    let commands = |pad: usize| -> Vec<String> {
        let mut c = vec!["big-output".to_owned(); 3];
        c.push(format!("big-output {}", "a".repeat(pad)));
        c.push("probe-echo after".to_owned());
        c
    };

    // At the budget: the four outputs are whole; the next command has nothing left.
    let at = engine
        .execute_output(&output(&commands(pad)), &Scope::model())
        .await;
    assert_eq!(at.len(), 5);
    let total: usize = at[..4].iter().map(len).sum();
    assert_eq!(total, MAX_EXECUTION_OUTPUT_BYTES);
    assert!(at[3].outcome.output.as_str().unwrap().ends_with('a'));
    assert_eq!(code(&at[4]), Some("output_limit"));
    assert_eq!(at[4].command, "probe-echo after");

    // One byte over: the fourth output is cut at the budget and says so.
    let over = engine
        .execute_output(&output(&commands(pad + 1)), &Scope::model())
        .await;
    let cut = over[3].outcome.output.as_str().unwrap();
    assert!(
        cut.ends_with("(MAX_EXECUTION_OUTPUT_BYTES)]"),
        "{}",
        &cut[cut.len() - 100..]
    );
    let kept = cut.find("\n[output cut").unwrap();
    assert_eq!(kept, MAX_EXECUTION_OUTPUT_BYTES - 3 * base);
    assert_eq!(code(&over[4]), Some("output_limit"));
    assert!(
        over[4]
            .outcome
            .error
            .as_ref()
            .unwrap()
            .message
            .contains(&format!("reached {MAX_EXECUTION_OUTPUT_BYTES} bytes")),
        "{:?}",
        over[4].outcome.error
    );
}

#[tokio::test]
async fn one_command_returns_at_most_the_output_budget() {
    let dir = tempfile::tempdir().unwrap();
    // Arguments substituted nine times.
    skill(dir.path(), "echo-nine", "", &"$ARGUMENTS\n".repeat(9));
    let engine = engine(dir.path(), None);
    let arg = |n: usize| format!("echo-nine {}", "a".repeat(n));
    // Nine copies and their newlines, at the budget: whole.
    let under = (MAX_EXECUTION_OUTPUT_BYTES - 9) / 9;
    let done = engine.execute(&arg(under), &Scope::model()).await;
    let text = done.outcome.unwrap().output;
    let text = text.as_str().unwrap();
    assert!(text.len() <= MAX_EXECUTION_OUTPUT_BYTES && !text.contains("[output cut"));
    // Over: cut at the budget, with the marker.
    let done = engine.execute(&arg(under + 1), &Scope::model()).await;
    let text = done.outcome.unwrap().output;
    let text = text.as_str().unwrap();
    assert_eq!(text.find("\n[output cut"), Some(MAX_EXECUTION_OUTPUT_BYTES));
}

#[tokio::test]
async fn the_task_listing_leaves_outputs_out() {
    let dir = tempfile::tempdir().unwrap();
    skill(
        dir.path(),
        "fork-probe",
        "context: fork\n",
        "Review $ARGUMENTS.\n",
    );
    let engine = engine(dir.path(), None);
    let done = engine
        .execute("fork-probe the change", &Scope::model())
        .await;
    let id = done.outcome.unwrap().task.unwrap();
    // Wait for its end through the single task (it has the output).
    let task = loop {
        let t = engine.task(id).await.unwrap();
        if t.status.is_finished() {
            break t;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(task.outcome.unwrap().output, "Review the change.\n");
    let listed = engine.tasks().await.unwrap();
    let json = serde_json::to_value(skill_runtime::wire::TasksShape::new(&listed)).unwrap();
    let outcome = &json["tasks"][0]["outcome"];
    assert_eq!(outcome["ok"], true, "{json}");
    assert!(outcome.get("output").is_none(), "{json}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_output_logs_one_info_line_however_many_commands() {
    let log = captured_log();
    let dir = tempfile::tempdir().unwrap();
    skill(dir.path(), "loglines-probe", "", "Probe.\n");
    let engine = engine(dir.path(), None);
    let commands = vec!["loglines-probe".to_owned(); MAX_OUTPUT_COMMANDS];
    let results = engine
        .execute_output(&output(&commands), &Scope::model())
        .await;
    assert_eq!(results.len(), MAX_OUTPUT_COMMANDS);
    let text = log.text();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("loglines-probe"))
        .filter(|l| !l.contains(skill_runtime::activation::METRICS_TARGET))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].contains(skill_runtime::activation::ACTIVATION_SUMMARY_EVENT)
            && lines[0].contains(&format!("skills.activations={MAX_OUTPUT_COMMANDS}")),
        "{}",
        lines[0]
    );
}

/// One skill's detail names its affinity under every profile the engine knows; the names
/// are computed once per snapshot, and a reload that brings a new profile shows it.
#[tokio::test(flavor = "current_thread")]
async fn a_detail_s_profiles_follow_reloads() {
    let skills = tempfile::tempdir().unwrap();
    skill(skills.path(), "greet", "", "Say hello.\n");
    let engine = engine(skills.path(), None);
    let names = |e: &Engine| -> Vec<String> {
        e.entry("greet")
            .unwrap()
            .profiles
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    };
    assert!(names(&engine).is_empty());
    assert!(names(&engine).is_empty());
    skill(
        skills.path(),
        "audit",
        "proactive_for_profile_ids: [security]\n",
        "Audit.\n",
    );
    engine.reload();
    assert_eq!(names(&engine), ["security"]);
    engine.shutdown().await;
}
