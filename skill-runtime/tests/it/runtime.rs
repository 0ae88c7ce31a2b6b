//! Execution kinds, forked tasks, multi-command output, slash lines and the scheduler
//! wiring.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::{inv, registry, write};
use skill_registry::Caller;
use skill_runtime::exec::{
    BoxError, Call, Context, HandlerError, Kind, Output, Profile, Runtime, RuntimeConfig,
    TaskStatus,
};
use skill_scheduler::{Dispatcher, Fire};
use tokio::sync::{Notify, mpsc};

fn skills(root: &Path) {
    write(
        root,
        "greet/SKILL.md",
        "---\nname: greet\ndescription: Greets someone.\nallowed-tools: read write shell\n---\nSay hello to $ARGUMENTS.\n",
    );
    write(
        root,
        "notes/SKILL.md",
        "---\ndomain: notes\ndescription: Notes\n---\n# Notes\n\n## Available Skills\n\n| Skill | Description |\n|---|---|\n| notes.save | Save a note |\n| notes.find | Find a note |\n",
    );
    write(
        root,
        "notes/save.md",
        "---\nname: notes.save\ndescription: Save a note\nhandler: Assistant.Notes.Save\n---\n# notes.save\n\nSaves.\n",
    );
    write(
        root,
        "notes/find.md",
        "---\nname: notes.find\ndescription: Find a note\nhandler: Assistant.Notes.Find\n---\n# notes.find\n\nFinds.\n",
    );
    write(
        root,
        "plan/SKILL.md",
        "---\nsummary: Compile a plan.\ninvocation_mode: tool_dispatch\ncommand_tool: compile_plan\ncommand: plan\n---\n# Plan\n\nCompiles.\n",
    );
    write(
        root,
        "review/SKILL.md",
        "---\nname: review\ndescription: Review code in a sub-agent.\ncontext: fork\nagent: general\n---\nReview $ARGUMENTS carefully.\n",
    );
    write(
        root,
        "slowfork/SKILL.md",
        "---\nname: slowfork\ndescription: A forked handler that waits.\ncontext: fork\n---\nWaits.\n",
    );
    write(
        root,
        "hidden/SKILL.md",
        "---\nname: hidden\ndescription: Only for users.\ndisable-model-invocation: true\n---\nHidden body.\n",
    );
}

fn echo_handler() -> impl Fn(Call) -> std::future::Ready<Result<Output, BoxError>> + Clone {
    |call: Call| {
        std::future::ready(Ok(Output::Json(serde_json::json!({
            "skill": call.skill.name,
            "flags": skill_runtime::wire::flags_shape(&call.invocation.flags),
            "positionals": call.invocation.positionals,
            "arguments": call.arguments,
            "allowed_tools": call.allowed_tools,
            "profile": call.profile,
        }))))
    }
}

fn base(root: &Path) -> skill_runtime::exec::RuntimeBuilder {
    skills(root);
    Runtime::builder(registry(root, false))
        .handler_fn("greet", echo_handler())
        .handler_fn("Assistant.Notes.Save", echo_handler())
        .tool_fn("compile_plan", |call: Call| async move {
            Ok::<_, BoxError>(Output::Text(format!("compiled: {}", call.arguments)))
        })
}

#[tokio::test]
async fn a_handler_registered_by_skill_name_gets_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut profiles = BTreeMap::new();
    profiles.insert(
        "safe".to_owned(),
        Profile {
            tools: vec!["read".into(), "search".into()],
        },
    );
    let rt = base(dir.path())
        .config(RuntimeConfig {
            profiles,
            ..RuntimeConfig::default()
        })
        .build();
    let o = rt
        .execute(
            &inv("greet", &["bob"], &[("loud", &[])]),
            &Context::model().with_profile("safe"),
        )
        .await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.kind, Some(Kind::Handler));
    assert_eq!(o.output["skill"], "greet");
    assert_eq!(o.output["flags"]["loud"], true);
    assert_eq!(o.output["positionals"][0], "bob");
    assert_eq!(o.output["arguments"], "bob --loud");
    // allowed-tools (read write shell) intersected with the profile (read search).
    assert_eq!(o.output["allowed_tools"], serde_json::json!(["read"]));
    assert_eq!(o.allowed_tools, Some(vec!["read".to_owned()]));
    assert!(!o.requires_interpretation);
    // Without a profile the skill's own list travels.
    let o = rt.execute(&inv("greet", &[], &[]), &Context::model()).await;
    assert_eq!(o.allowed_tools.unwrap().len(), 3);
}

#[tokio::test]
async fn a_handler_is_found_by_the_actions_handler_field_or_reported_missing() {
    let dir = tempfile::tempdir().unwrap();
    let rt = base(dir.path()).build();
    let o = rt
        .execute(
            &inv("notes.save", &[], &[("text", &["hi"])]),
            &Context::model(),
        )
        .await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.kind, Some(Kind::Handler));
    assert_eq!(o.output["flags"]["text"], "hi");
    let o = rt
        .execute(&inv("notes.find", &[], &[]), &Context::model())
        .await;
    assert!(!o.ok);
    assert_eq!(o.kind, Some(Kind::Handler));
    assert_eq!(o.code(), Some("handler_not_registered"));
    assert!(o.error.unwrap().message.contains("Assistant.Notes.Find"));
}

#[tokio::test]
async fn handler_errors_keep_their_code() {
    let dir = tempfile::tempdir().unwrap();
    skills(dir.path());
    let rt = Runtime::builder(registry(dir.path(), false))
        .handler_fn("greet", |_call: Call| async {
            Err::<Output, BoxError>(Box::new(HandlerError::new("missing_flags", "missing --to")))
        })
        .handler_fn("notes.save", |_call: Call| async {
            Err::<Output, BoxError>("disk full".into())
        })
        .build();
    let o = rt.execute(&inv("greet", &[], &[]), &Context::model()).await;
    assert_eq!(o.code(), Some("missing_flags"));
    assert_eq!(o.error.unwrap().message, "missing --to");
    let o = rt
        .execute(&inv("notes.save", &[], &[]), &Context::model())
        .await;
    assert_eq!(o.code(), Some("handler_failed"));
    assert_eq!(o.error.unwrap().message, "disk full");
}

#[tokio::test]
async fn tool_dispatch_calls_the_command_tool() {
    let dir = tempfile::tempdir().unwrap();
    let rt = base(dir.path()).build();
    let o = rt
        .execute(&inv("plan", &["ship", "it"], &[]), &Context::model())
        .await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.kind, Some(Kind::Tool));
    assert_eq!(o.output, "compiled: ship it");
    // Through a user's lily /<command> alias as well.
    let o = rt.invoke("/plan the launch", &Context::user()).await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.output, "compiled: the launch");
}

#[tokio::test]
async fn tool_dispatch_respects_the_profile_and_registration() {
    let dir = tempfile::tempdir().unwrap();
    let mut profiles = BTreeMap::new();
    profiles.insert(
        "locked".to_owned(),
        Profile {
            tools: vec!["read".into()],
        },
    );
    let rt = base(dir.path())
        .config(RuntimeConfig {
            profiles,
            ..RuntimeConfig::default()
        })
        .build();
    let o = rt
        .execute(
            &inv("plan", &[], &[]),
            &Context::model().with_profile("locked"),
        )
        .await;
    assert_eq!(o.code(), Some("tool_not_allowed"));
    let bare = Runtime::builder(rt.registry().clone()).build();
    let o = bare
        .execute(&inv("plan", &[], &[]), &Context::model())
        .await;
    assert_eq!(o.code(), Some("tool_not_registered"));
    assert_eq!(o.kind, Some(Kind::Tool));
}

#[tokio::test]
async fn a_skill_without_a_handler_is_a_template() {
    let dir = tempfile::tempdir().unwrap();
    let rt = base(dir.path()).build();
    let o = rt.invoke("/hidden now", &Context::user()).await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.kind, Some(Kind::Template));
    assert!(o.requires_interpretation);
    assert_eq!(o.output, "Hidden body.\n\n\nARGUMENTS: now");
    // The model may not invoke it (disable-model-invocation).
    let o = rt
        .execute(&inv("hidden", &[], &[]), &Context::model())
        .await;
    assert!(!o.ok);
    assert_eq!(o.code(), Some("model_invocation_disabled"));
    let o = rt.execute(&inv("nope", &[], &[]), &Context::model()).await;
    assert_eq!(o.code(), Some("unknown_skill"));
    assert_eq!(o.kind, None);
}

#[tokio::test]
async fn slash_lines_that_are_not_skills() {
    let dir = tempfile::tempdir().unwrap();
    let rt = base(dir.path()).build();
    let o = rt.invoke("/help", &Context::user()).await;
    assert_eq!(o.code(), Some("builtin_command"));
    assert_eq!(o.output["route"], "builtin");
    let o = rt.invoke("just chatting", &Context::user()).await;
    assert_eq!(o.code(), Some("not_a_command"));
    let o = rt.invoke("/skills", &Context::user()).await;
    assert!(o.ok);
    assert_eq!(o.kind, Some(Kind::Help));
    assert!(o.output.as_str().unwrap().contains("/greet"));
}

#[tokio::test]
async fn a_forked_template_runs_as_a_task() {
    let dir = tempfile::tempdir().unwrap();
    let rt = base(dir.path()).build();
    let o = rt.invoke("/review PR 42", &Context::user()).await;
    assert!(o.ok, "{o:?}");
    assert_eq!(o.kind, Some(Kind::Fork));
    let id = o.task.unwrap();
    assert_eq!(o.output["status"], "spawned");
    let done = rt.wait_task(id).await.unwrap();
    assert_eq!(done.status, TaskStatus::Succeeded);
    let result = done.outcome.unwrap();
    assert_eq!(result.kind, Some(Kind::Template));
    assert!(result.requires_interpretation);
    assert_eq!(result.output, "Review PR 42 carefully.\n");
    assert_eq!(result.task, Some(id));
    assert!(done.finished_ms.is_some());
    assert_eq!(rt.tasks().len(), 1);
    assert_eq!(rt.task(id).unwrap().status, TaskStatus::Succeeded);
    assert!(rt.task(id + 1).is_none());
}

/// A handler that reports it started and then waits to be released.
fn gated(
    started: mpsc::UnboundedSender<()>,
    gate: Arc<Notify>,
    fail: bool,
) -> impl Fn(
    Call,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Output, BoxError>> + Send>>
+ Clone {
    move |_call: Call| {
        let started = started.clone();
        let gate = gate.clone();
        Box::pin(async move {
            let _ = started.send(());
            gate.notified().await;
            if fail {
                Err::<Output, BoxError>(Box::new(HandlerError::new("boom", "it broke")))
            } else {
                Ok(Output::Text("done".into()))
            }
        })
    }
}

#[tokio::test]
async fn forked_task_lifecycle_with_bounded_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    skills(dir.path());
    let (tx, mut started) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let rt = Runtime::builder(registry(dir.path(), false))
        .handler_fn("slowfork", gated(tx, gate.clone(), false))
        .config(RuntimeConfig {
            fork_concurrency: 1,
            ..RuntimeConfig::default()
        })
        .build();
    let a = rt
        .execute(&inv("slowfork", &[], &[]), &Context::model())
        .await
        .task
        .unwrap();
    let b = rt
        .execute(&inv("slowfork", &[], &[]), &Context::model())
        .await
        .task
        .unwrap();
    started.recv().await.unwrap();
    assert_eq!(rt.task(a).unwrap().status, TaskStatus::Running);
    // One slot: the second waits in the queue.
    assert_eq!(rt.task(b).unwrap().status, TaskStatus::Queued);
    gate.notify_one();
    let done = rt.wait_task(a).await.unwrap();
    assert_eq!(done.status, TaskStatus::Succeeded);
    assert_eq!(done.outcome.unwrap().output, "done");
    started.recv().await.unwrap();
    assert_eq!(rt.task(b).unwrap().status, TaskStatus::Running);
    assert!(rt.cancel_task(b));
    let cancelled = rt.wait_task(b).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(cancelled.outcome.unwrap().code(), Some("cancelled"));
    assert!(!rt.cancel_task(b), "already over");
    let ids: Vec<u64> = rt.tasks().iter().map(|t| t.id).collect();
    assert_eq!(ids, vec![a, b]);
}

#[tokio::test]
async fn a_failing_forked_task_is_failed_and_history_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    skills(dir.path());
    let (tx, _started) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let rt = Runtime::builder(registry(dir.path(), false))
        .handler_fn("slowfork", gated(tx, gate.clone(), true))
        .config(RuntimeConfig {
            task_history: 2,
            max_pending_tasks: 3,
            ..RuntimeConfig::default()
        })
        .build();
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(
            rt.execute(&inv("slowfork", &[], &[]), &Context::model())
                .await
                .task
                .unwrap(),
        );
    }
    // A fourth is over the pending limit.
    let o = rt
        .execute(&inv("slowfork", &[], &[]), &Context::model())
        .await;
    assert_eq!(o.code(), Some("too_many_tasks"));
    for id in &ids {
        // Release one waiter at a time until this task is done.
        loop {
            gate.notify_one();
            let t = rt.task(*id);
            if t.as_ref().is_none_or(|t| t.status.is_finished()) {
                break;
            }
            tokio::task::yield_now().await;
        }
    }
    let kept = rt.tasks();
    assert_eq!(kept.len(), 2, "history keeps the last two");
    assert!(kept.iter().all(|t| t.status == TaskStatus::Failed));
    assert_eq!(kept[0].outcome.as_ref().unwrap().code(), Some("boom"));
    assert!(rt.task(ids[0]).is_none());
}

#[tokio::test]
async fn shutdown_cancels_tasks_and_refuses_new_work() {
    let dir = tempfile::tempdir().unwrap();
    skills(dir.path());
    let (tx, mut started) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let rt = Runtime::builder(registry(dir.path(), false))
        .handler_fn("slowfork", gated(tx, gate, false))
        .build();
    let id = rt
        .execute(&inv("slowfork", &[], &[]), &Context::model())
        .await
        .task
        .unwrap();
    started.recv().await.unwrap();
    rt.shutdown().await;
    assert!(rt.is_shut_down());
    assert_eq!(rt.task(id).unwrap().status, TaskStatus::Cancelled);
    let o = rt.execute(&inv("greet", &[], &[]), &Context::model()).await;
    assert_eq!(o.code(), Some("shutting_down"));
}

#[tokio::test]
async fn model_output_runs_in_order_and_a_failure_hides_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    skills(dir.path());
    let rt = Runtime::builder(registry(dir.path(), false))
        .handler_fn("greet", move |call: Call| {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, BoxError>(Output::Text(format!("{n}:{}", call.arguments))) }
        })
        .build();
    let output =
        "Doing it.\n```cmd\ngreet first\nnosuch.skill --x 1\ngreet second\nget_skill: notes\n```\n";
    let results = rt.execute_output(output, &Context::model()).await;
    assert_eq!(results.len(), 4);
    assert_eq!(results[0].command, "greet first");
    assert_eq!(results[0].outcome.output, "0:first");
    assert!(!results[1].outcome.ok);
    assert_eq!(results[1].outcome.code(), Some("unknown_skill"));
    assert_eq!(results[1].line, 4);
    assert!(results[2].outcome.ok);
    assert_eq!(results[2].outcome.output, "1:second");
    assert_eq!(results[3].outcome.kind, Some(Kind::Help));
    assert!(
        results[3]
            .outcome
            .output
            .as_str()
            .unwrap()
            .contains("notes.save")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // As the HTTP layer writes it.
    let json = serde_json::to_value(skill_runtime::wire::ResultsShape::new(&results)).unwrap();
    assert_eq!(
        json["results"][1]["outcome"]["error"]["code"],
        "unknown_skill"
    );
    assert_eq!(json["results"][0]["outcome"]["kind"], "handler");
}

fn fire(rt: &Runtime, name: &str) -> Fire {
    let snapshot = rt.registry().snapshot();
    Fire {
        name: name.to_owned(),
        scheduled: skill_scheduler::DateTime::<skill_scheduler::Utc>::from_timestamp(
            1_800_000_000,
            0,
        )
        .unwrap(),
        generation: snapshot.generation(),
        skill: snapshot.get(name).unwrap().clone(),
    }
}

#[tokio::test]
async fn the_runtime_is_the_schedulers_dispatcher() {
    let dir = tempfile::tempdir().unwrap();
    skills(dir.path());
    let rt = Runtime::builder(registry(dir.path(), false))
        .handler_fn("greet", |_c: Call| async {
            Ok::<_, BoxError>(Output::Text("hi".into()))
        })
        .handler_fn("notes.save", |_c: Call| async {
            Err::<Output, BoxError>(Box::new(HandlerError::new("offline", "no network")))
        })
        .build();
    let mut runs = rt.scheduled_runs();
    assert_eq!(rt.dispatch(fire(&rt, "greet")).await, Ok(()));
    let run = runs.recv().await.unwrap();
    assert_eq!(run.skill, "greet");
    assert_eq!(run.scheduled, "2027-01-15T08:00:00Z");
    assert_eq!(run.outcome.output, "hi");
    assert_eq!(
        rt.dispatch(fire(&rt, "notes.save")).await,
        Err("offline: no network".to_owned())
    );
    // Trigger control does not apply to the scheduler: a model-hidden skill runs.
    assert_eq!(rt.dispatch(fire(&rt, "hidden")).await, Ok(()));
    let _ = runs.recv().await.unwrap();
    let hidden = runs.recv().await.unwrap();
    assert!(hidden.outcome.requires_interpretation);
    // A forked skill is waited for, so the run reports the task's result.
    assert_eq!(rt.dispatch(fire(&rt, "review")).await, Ok(()));
    let review = runs.recv().await.unwrap();
    assert_eq!(review.outcome.kind, Some(Kind::Template));
    assert!(review.outcome.task.is_some());
    assert_eq!(rt.tasks().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_scheduled_skill_fires_through_the_runtime_into_the_history() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "tick/SKILL.md",
        "---\nname: tick\ndescription: Runs every minute.\nschedule: \"* * * * *\"\n---\nTick.\n",
    );
    let (tx, mut called) = mpsc::unbounded_channel();
    let rt = Runtime::builder(registry(dir.path(), false))
        .handler_fn("tick", move |call: Call| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(call.caller);
                Ok::<_, BoxError>(Output::Text("ticked".into()))
            }
        })
        .build();
    let start = skill_scheduler::DateTime::<skill_scheduler::Utc>::from_timestamp(1_800_000_000, 0)
        .unwrap();
    let scheduler = skill_scheduler::Scheduler::start(
        rt.registry().clone(),
        Arc::new(rt.clone()),
        skill_scheduler::SchedulerConfig {
            clock: skill_scheduler::Clock::StartingAt(start),
            ..Default::default()
        },
    )
    .unwrap();
    // The paused clock advances by itself while every task waits.
    assert_eq!(called.recv().await.unwrap(), Caller::Model);
    let mut history = scheduler.history();
    for _ in 0..1000 {
        if history
            .iter()
            .any(|r| r.outcome == skill_scheduler::Outcome::Succeeded)
        {
            break;
        }
        tokio::task::yield_now().await;
        history = scheduler.history();
    }
    assert!(
        history
            .iter()
            .any(|r| r.name == "tick" && r.outcome == skill_scheduler::Outcome::Succeeded),
        "{history:?}"
    );
    scheduler.shutdown();
}
