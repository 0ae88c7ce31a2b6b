//! One suite for the state the engine reads through its one seam (forked tasks, notes
//! search, the scheduler's jobs and history, readiness), run once against each
//! implementation: this process's, and PostgreSQL's with the `replicas` feature (ignored
//! without a database, like every database test). Both must answer alike.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use skill_registry::{RegistryConfig, Source};
use skill_runtime::exec::{BoxError, Output, TaskStatus};
use skill_runtime::{Engine, EngineConfig, Error, Scope};

/// How often, and how many times, the suite reads a task until it has ended.
const POLL: Duration = Duration::from_millis(10);
const POLLS: usize = 1000;

/// Skills (`slowfork`: a forked handler that answers once its gate opens) and notes.
fn folders(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let skills = root.join("skills");
    std::fs::create_dir_all(skills.join("slowfork")).unwrap();
    std::fs::write(
        skills.join("slowfork/SKILL.md"),
        "---\nname: slowfork\ndescription: A forked handler that waits.\ncontext: fork\n---\nWaits.\n",
    )
    .unwrap();
    let notes = root.join("notes");
    std::fs::create_dir_all(notes.join("garden")).unwrap();
    std::fs::write(
        notes.join("garden/lantern.md"),
        "---\ntitle: Lantern\n---\nThe quartz lantern glows by the pond.\n",
    )
    .unwrap();
    std::fs::write(
        notes.join("other.md"),
        "---\ntitle: Other\n---\nNothing to see.\n",
    )
    .unwrap();
    (skills, notes)
}

/// The suite: `configure` picks the implementation (it sets the shared database or not).
async fn suite(configure: impl FnOnce(&mut EngineConfig)) {
    let dir = tempfile::tempdir().unwrap();
    let (skills, notes) = folders(dir.path());
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        &skills, "project",
    )]));
    #[cfg(feature = "watch")]
    {
        config.watch = None;
    }
    config.notes = Some(notes);
    configure(&mut config);
    let gate = Arc::new(tokio::sync::Notify::new());
    let opens = gate.clone();
    let engine = Engine::start_with(config, move |b| {
        b.handler_fn("slowfork", move |_call| {
            let gate = opens.clone();
            async move {
                gate.notified().await;
                Ok::<_, BoxError>(Output::Text("done".into()))
            }
        })
    })
    .unwrap();

    // Ready, nothing degraded.
    let ready = engine.ready();
    assert!(ready.is_ready() && ready.degraded.is_empty(), "{ready:?}");

    // Notes: the note holding the words, by its path in the folder.
    let hits = engine.notes_search("quartz lantern", 5).await.unwrap();
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["garden/lantern.md"]);
    assert!(engine.notes_search("zyzzyva", 5).await.unwrap().is_empty());

    // The scheduler (on, with nothing scheduled): no jobs, no runs.
    assert_eq!(engine.schedule_jobs(3).map(|j| j.len()), Some(0));
    assert_eq!(engine.schedule_history().map(|h| h.len()), Some(0));

    // A fork: listed and readable while it runs, then with its end and result.
    let started = engine
        .execute("slowfork", &Scope::model())
        .await
        .outcome
        .unwrap();
    assert!(started.ok, "{started:?}");
    let id = started.task.unwrap();
    // Queued or running (a local fork may not have its slot yet), not ended: its handler
    // waits for the gate.
    let going = engine.task(id).await.unwrap().status;
    assert!(
        matches!(going, TaskStatus::Queued | TaskStatus::Running),
        "{going:?}"
    );
    let listed = engine.tasks().await.unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|t| (t.id, t.skill.as_str()))
            .collect::<Vec<_>>(),
        [(id, "slowfork")]
    );
    gate.notify_one();
    let mut done = None;
    for _ in 0..POLLS {
        let t = engine.task(id).await.unwrap();
        if t.status.is_finished() {
            done = Some(t);
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    let done = done.expect("the task ended");
    assert_eq!(done.status, TaskStatus::Succeeded);
    let outcome = done.outcome.unwrap();
    assert_eq!((outcome.ok, outcome.task), (true, Some(id)));
    assert_eq!(outcome.output, "done");
    assert!(matches!(
        engine.task(u64::MAX).await,
        Err(Error::UnknownTask(_))
    ));
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_state_keeps_the_contract() {
    suite(|_| {}).await;
}

#[cfg(feature = "replicas")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn the_postgresql_state_keeps_the_contract() {
    let url = crate::replicas::common_db::fresh_database().await;
    let store = skill_store::Store::connect(&url, "suite").await.unwrap();
    suite(move |config| {
        config.replicas = skill_runtime::replicas::Replicas {
            store: Some(store),
            webhook: None,
            ..skill_runtime::replicas::Replicas::default()
        };
    })
    .await;
}
