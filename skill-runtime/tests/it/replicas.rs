//! Several replicas and webhooks from the runtime's side: in-process webhook delivery with
//! retries against a receiver that fails its first attempts (no database), forked tasks
//! answered by every replica, notes search on PostgreSQL against the tantivy notes index on
//! `tests/data/notes`, and the retention of finished rows (these three need a database:
//! `SKILLS_TEST_DATABASE_URL` or `target/ci-postgres/url`; `#[ignore]`d, so the summary
//! counts them as ignored until run with `-- --include-ignored`, where no database fails them).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use skill_registry::{RegistryConfig, Source};
use skill_runtime::exec::TaskStatus;
use skill_runtime::replicas::{Replicas, WebhookConfig, signature};
use skill_runtime::{Engine, EngineConfig};
use skill_search::NotesIndex;
use skill_store::{NoteRow, Store};

/// What the receiver saw: each request's headers and body.
type Requests = Arc<Mutex<Vec<(BTreeMap<String, String>, String)>>>;

/// A receiver answering 503 to the first `fail_first` requests of each idempotency key, 200
/// after (so the runs of later seconds do not change what an earlier run sees); it records
/// each request's headers and body.
fn receiver(fail_first: usize) -> (String, Requests) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut headers = BTreeMap::new();
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line.trim_end() != "" {
                if let Some((k, v)) = line.trim_end().split_once(':') {
                    headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
                }
                line.clear();
            }
            let len: usize = headers["content-length"].parse().unwrap();
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let n = {
                let mut l = log.lock().unwrap();
                let key = headers.get("idempotency-key").cloned();
                l.push((headers, String::from_utf8(body).unwrap()));
                l.iter()
                    .filter(|(h, _)| h.get("idempotency-key") == key.as_ref())
                    .count()
            };
            let status = if n <= fail_first {
                "503 Service Unavailable"
            } else {
                "200 OK"
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
    });
    (url, seen)
}

/// The destination policy: a webhook on loopback (here, the receiver's own URL) is
/// refused when the engine starts unless the host allows private destinations, and so are
/// the URLs of the attack run; nothing is delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_to_a_private_destination_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = receiver(0);
    for url in [
        url.as_str(),
        "http://169.254.169.254/latest/meta-data/",
        "http:///nohost",
        "http://h/a\r\nX-Injected: 1",
        "http://[::ffff:7f00:1]:9/",
        "http://2130706433:9/",
    ] {
        let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "project",
        )]));
        config.watch = None;
        config.replicas = Replicas {
            store: None,
            webhook: Some(WebhookConfig::new(url)),
            ..Replicas::default()
        };
        let Err(e) = Engine::start(config) else {
            panic!("{url:?} accepted");
        };
        assert!(!e.to_string().is_empty());
    }
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_template_run_is_posted_and_retried_with_one_key_until_accepted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tick")).unwrap();
    std::fs::write(
        dir.path().join("tick/SKILL.md"),
        "---\nname: tick\ndescription: Report the time.\nschedule: \"* * * * * *\"\n---\nSay what time it is.\n",
    )
    .unwrap();
    let (url, seen) = receiver(2);
    let mut hook = WebhookConfig::new(url.clone());
    // The receiver is on loopback, which the destination policy refuses by default.
    hook.allow_private_destinations = true;
    hook.secret = Some("s3cret".into());
    hook.first_backoff = Duration::from_millis(50);
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        dir.path(),
        "project",
    )]));
    config.watch = None;
    config.replicas = Replicas {
        store: None,
        webhook: Some(hook),
        ..Replicas::default()
    };
    let engine = Engine::start(config).unwrap();
    // Wait until the first run's delivery got through (two 503s first). The next second's
    // run may take one of the receiver's answers meanwhile, so follow the first run's key.
    let mut waited = 0;
    while !engine.deliveries().first().is_some_and(|d| d.delivered) {
        assert!(
            waited < 100,
            "no delivery accepted: {:?}",
            engine.deliveries()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    // `/v1/schedules` shows the delivery with its attempts: two retries after the first.
    let listing = engine.schedules(&skill_runtime::ScheduleQuery {
        next: 1,
        ..Default::default()
    });
    let shown = serde_json::to_value(skill_runtime::wire::SchedulesShape::from(&listing)).unwrap();
    let delivery = &shown["deliveries"][0];
    assert_eq!(delivery["delivered"], true, "{shown}");
    assert_eq!(delivery["retries"], 2, "{shown}");
    assert_eq!(delivery["attempts"][0]["status"], 503);
    assert!(delivery["key"].as_str().unwrap().starts_with("run-"));
    engine.shutdown().await;
    let first = engine.deliveries()[0].clone();
    assert!(first.delivered);
    let statuses: Vec<Option<u16>> = first.attempts.iter().map(|a| a.status).collect();
    assert_eq!(statuses, [Some(503), Some(503), Some(200)]);
    let seen: Vec<_> = (seen.lock().unwrap().iter())
        .filter(|(h, _)| h["idempotency-key"] == first.key)
        .cloned()
        .collect();
    assert_eq!(seen.len(), 3);
    let (h, body) = &seen[0];
    // Every attempt of the run carries the same key, its number, and a valid signature.
    for (i, (hh, b)) in seen.iter().enumerate() {
        assert_eq!(hh["x-skills-attempt"], (i + 1).to_string());
        assert_eq!(hh["x-skills-signature"], signature("s3cret", b.as_bytes()));
    }
    assert_eq!(h["content-type"], "application/json");
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(json["skill"], "tick");
    assert!(
        json["content"].to_string().contains("Say what time it is."),
        "{json}"
    );
    assert_eq!(json["requires_interpretation"], true);
}

/// A note as the PostgreSQL index stores it: frontmatter `title` and `tags` when present.
fn note_row(root: &Path, file: &Path) -> NoteRow {
    let rel = file
        .strip_prefix(root)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/");
    let text = std::fs::read_to_string(file).unwrap();
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    let (front, body) = match text
        .strip_prefix("---\n")
        .and_then(|t| t.split_once("\n---\n"))
    {
        Some((f, b)) => (f.to_owned(), b.to_owned()),
        None => (String::new(), text.clone()),
    };
    let mut fm = serde_json::Map::new();
    let mut tags = Vec::new();
    for line in front.lines() {
        if let Some(t) = line.strip_prefix("title: ") {
            fm.insert("title".into(), t.trim().into());
        }
        if let Some(t) = line.strip_prefix("tags: ") {
            tags = t
                .trim_matches(['[', ']'])
                .split(',')
                .map(|s| s.trim().to_owned())
                .collect();
        }
    }
    let title = fm
        .get("title")
        .and_then(|t| t.as_str())
        .unwrap_or(&stem)
        .to_owned();
    NoteRow {
        path: rel,
        file_name: stem,
        title,
        frontmatter: serde_json::Value::Object(fm),
        tags,
        content: body,
    }
}

fn notes_in(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            notes_in(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn notes_search_on_postgresql_agrees_with_the_tantivy_index() {
    let url = common_db::fresh_database().await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/notes");
    let store = Store::connect(&url, "t").await.unwrap();
    let mut files = Vec::new();
    notes_in(&root, &mut files);
    let rows: Vec<NoteRow> = files.iter().map(|f| note_row(&root, f)).collect();
    store.upsert_notes(&rows).await.unwrap();
    let tantivy = NotesIndex::build(&root).unwrap();
    let queries = [
        "enterprise revenue",
        "database backup",
        "tomato basil",
        "search",
        "hiring engineers",
        "budget",
        "sales renewals",
        "disk",
        "passport train",
        "designer",
        "garden soil",
        "roadmap",
    ];
    let (mut same_top1, mut overlap, mut possible) = (0, 0, 0);
    for q in queries {
        let a: Vec<String> = tantivy
            .search(q, 3)
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect();
        let b: Vec<String> = store
            .search_notes(q, 3)
            .await
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect();
        assert!(!a.is_empty() && !b.is_empty(), "{q}: {a:?} {b:?}");
        same_top1 += usize::from(a[0] == b[0]);
        overlap += a.iter().filter(|p| b.contains(p)).count();
        possible += a.len().min(3);
        eprintln!("{q:>18}: tantivy {a:?} postgres {b:?}");
    }
    eprintln!(
        "notes: top-1 agrees on {same_top1}/{} queries; top-3 overlap {overlap}/{possible}",
        queries.len()
    );
    // Measured: the same first result on 9 of 12 queries and 22 of 23 top-3 paths in common;
    // where they differ, both notes match the query words in their body and tantivy's BM25
    // and PostgreSQL's ts_rank order the near-tie differently. The one top-3 difference is
    // such a tie for third place on "database backup": two notes say "backup" once each,
    // and BM25 (whose length normalisation counts words after stop words) prefers the
    // shorter one.
    assert!(
        overlap + 1 >= possible,
        "top-3 overlap {overlap}/{possible}"
    );
    assert!(
        same_top1 * 4 >= queries.len() * 3,
        "top-1 agreement {same_top1}/{}",
        queries.len()
    );
    let hit = &store.search_notes("backup", 1).await.unwrap()[0];
    assert!(hit.snippet.contains("**backup"), "{}", hit.snippet);
}

/// An engine on `dir` sharing `url`'s database; `slowfork` answers once `gate` opens.
async fn replica(dir: &Path, url: &str, name: &str, gate: Arc<tokio::sync::Notify>) -> Arc<Engine> {
    let store = Store::connect(url, name).await.unwrap();
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        dir, "project",
    )]));
    config.watch = None;
    config.schedule = None;
    config.replicas = Replicas {
        store: Some(store),
        webhook: None,
        ..Replicas::default()
    };
    Engine::start_with(config, move |b| {
        b.handler_fn("slowfork", move |_call| {
            let gate = gate.clone();
            async move {
                gate.notified().await;
                Ok::<_, skill_runtime::exec::BoxError>(skill_runtime::exec::Output::Text(
                    "done".into(),
                ))
            }
        })
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn a_forked_task_is_answered_by_every_replica_and_a_lost_one_fails() {
    let url = common_db::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("slowfork")).unwrap();
    std::fs::write(
        dir.path().join("slowfork/SKILL.md"),
        "---\nname: slowfork\ndescription: A forked handler that waits.\ncontext: fork\n---\nWaits.\n",
    )
    .unwrap();
    let gate = Arc::new(tokio::sync::Notify::new());
    let a = replica(dir.path(), &url, "a", gate.clone()).await;
    let b = replica(dir.path(), &url, "b", Arc::new(tokio::sync::Notify::new())).await;
    let scope = skill_runtime::Scope::model();

    // Started on A: the id it answers is the database's, and B knows the task.
    let started = a.execute("slowfork", &scope).await.outcome.unwrap();
    assert!(started.ok, "{started:?}");
    let id = started.task.unwrap();
    assert_eq!(started.output["task_id"], id);
    let seen = b.task(id).await.unwrap();
    assert_eq!(
        (seen.skill.as_str(), seen.status),
        ("slowfork", TaskStatus::Running)
    );
    assert!(b.tasks().await.unwrap().iter().any(|t| t.id == id));

    // It ends on A; B reads its end and result.
    gate.notify_one();
    let mut waited = 0;
    let done = loop {
        let t = b.task(id).await.unwrap();
        if t.status.is_finished() {
            break t;
        }
        assert!(waited < 200, "still {:?}", t.status);
        tokio::time::sleep(Duration::from_millis(25)).await;
        waited += 1;
    };
    assert_eq!(done.status, TaskStatus::Succeeded);
    let outcome = done.outcome.unwrap();
    assert_eq!((outcome.ok, outcome.task), (true, Some(id)));
    assert_eq!(outcome.output, "done");

    // A task whose replica stopped renewing it (a lease already over) is failed, with why.
    let ghost = Store::connect(&url, "gone").await.unwrap();
    let lost = ghost.create_task("slowfork", Duration::ZERO).await.unwrap();
    let lost = b.task(u64::try_from(lost).unwrap()).await.unwrap();
    assert_eq!(lost.status, TaskStatus::Failed);
    let error = lost.outcome.unwrap().error.unwrap();
    assert_eq!(error.code, "task_lost");
    assert!(error.message.contains("lease expired"), "{}", error.message);
    // An id no replica gave is unknown everywhere.
    assert!(matches!(
        a.task(u64::MAX).await,
        Err(skill_runtime::Error::UnknownTask(_))
    ));
    a.shutdown().await;
    b.shutdown().await;
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let target = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &target);
        } else {
            std::fs::copy(&p, &target).unwrap();
        }
    }
}

/// Poll `engine`'s notes search for `query` until `done` holds of the paths (bounded).
async fn notes_until(engine: &Engine, query: &str, done: impl Fn(&[String]) -> bool) {
    for _ in 0..400 {
        let paths: Vec<String> = engine
            .notes_search(query, 5)
            .await
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect();
        if done(&paths) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("notes search for {query:?} never reached the expected state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn with_a_database_notes_are_mirrored_and_searched_there() {
    let url = common_db::fresh_database().await;
    let notes = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/notes");
    copy_dir(&data, notes.path());
    let mut files = Vec::new();
    notes_in(notes.path(), &mut files);
    let skills = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        skills.path(),
        "project",
    )]));
    config.schedule = None;
    config.notes = Some(notes.path().to_path_buf());
    config.watch = Some(skill_registry::WatchOptions {
        debounce: Duration::from_millis(20),
        max_delay: Duration::from_millis(200),
    });
    config.replicas = Replicas {
        store: Some(Store::connect(&url, "notes").await.unwrap()),
        webhook: None,
        ..Replicas::default()
    };
    let engine = Engine::start(config).unwrap();

    // The first answer waits for the whole folder: every note is in the table, and the
    // hit comes with PostgreSQL's headline.
    let hits = engine.notes_search("backup", 3).await.unwrap();
    assert!(hits[0].snippet.contains("**backup"), "{:?}", hits[0]);
    let store = Store::connect(&url, "reader").await.unwrap();
    assert_eq!(store.note_paths().await.unwrap().len(), files.len());
    // A huge query is searched by its first words, not refused by the database.
    let huge = format!("backup {}", "zz ".repeat(400_000));
    let hits = engine.notes_search(&huge, 3).await.unwrap();
    assert!(
        hits.iter().any(|h| h.snippet.contains("**backup")),
        "{hits:?}"
    );

    // A note written while serving is found by its words; deleted, it is gone.
    let added = notes.path().join("work/quokka.md");
    std::fs::write(
        &added,
        "---\ntitle: Island survey\n---\nCount the quokkas on Rottnest.\n",
    )
    .unwrap();
    notes_until(&engine, "quokkas", |p| {
        p.first().map(String::as_str) == Some("work/quokka.md")
    })
    .await;
    std::fs::remove_file(&added).unwrap();
    notes_until(&engine, "quokkas", <[String]>::is_empty).await;
    engine.shutdown().await;
}

/// A replica whose shared database stops answering said nothing of it: it stays ready (all
/// replicas share the database; failing readiness would take them all out at once) and
/// says why it is degraded, until the database answers again; a database that answers with
/// errors is told apart from one that does not answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn readiness_says_when_the_shared_database_does_not_answer() {
    let url = common_db::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let engine = replica(dir.path(), &url, "a", Arc::new(tokio::sync::Notify::new())).await;
    let (base, name) = url.rsplit_once('/').unwrap();
    let (admin, conn) = tokio_postgres::connect(&format!("{base}/postgres"), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    // Polls until the engine is (or is no longer) degraded; it is ready all along.
    let until = |degraded: bool| {
        let engine = engine.clone();
        async move {
            for _ in 0..200 {
                let r = engine.ready();
                assert!(r.is_ready(), "{:?}", r.problems);
                if r.degraded.is_empty() != degraded {
                    return r;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!(
                "degraded never became {degraded}: {:?}",
                engine.ready().degraded
            );
        }
    };
    until(false).await;
    // The database refuses this replica: connections cut, new ones not accepted.
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {name} ALLOW_CONNECTIONS false;
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = '{name}' AND pid <> pg_backend_pid();"
        ))
        .await
        .unwrap();
    let down = until(true).await;
    assert!(
        down.degraded
            .iter()
            .any(|p| p.starts_with("the shared database does not answer")),
        "{:?}",
        down.degraded
    );
    admin
        .batch_execute(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true"))
        .await
        .unwrap();
    until(false).await;
    // A database that answers, with an error (the history's table renamed by hand), is
    // not said to be silent: the operator reads which of the two it is.
    let (own, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    own.batch_execute("ALTER TABLE skills_runs RENAME TO skills_runs_moved")
        .await
        .unwrap();
    let failing = until(true).await;
    assert!(
        failing.degraded.iter().any(|p| p
            .starts_with("the shared database answers with an error: database error")
            && p.contains("skills_runs")),
        "{:?}",
        failing.degraded
    );
    own.batch_execute("ALTER TABLE skills_runs_moved RENAME TO skills_runs")
        .await
        .unwrap();
    until(false).await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn a_replica_deletes_finished_rows_past_the_retention_shortly_after_start() {
    let url = common_db::fresh_database().await;
    let store = Store::connect(&url, "old").await.unwrap();
    let done = store
        .create_task("report", Duration::from_secs(60))
        .await
        .unwrap();
    store
        .finish_task(done, "succeeded", &serde_json::json!({}))
        .await
        .unwrap();
    let going = store
        .create_task("report", Duration::from_secs(60))
        .await
        .unwrap();
    let skills = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
        skills.path(),
        "project",
    )]));
    config.watch = None;
    config.schedule = None;
    config.replicas = Replicas {
        store: Some(Store::connect(&url, "pruner").await.unwrap()),
        webhook: None,
        retention: Duration::ZERO,
    };
    let engine = Engine::start(config).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while store.task(done).await.unwrap().is_some() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the finished task is still there"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(store.task(going).await.unwrap().unwrap().status, "running");
    engine.shutdown().await;
}

/// A fresh database per test on the test server.
pub(crate) mod common_db {
    pub async fn fresh_database() -> String {
        let mut url = std::env::var("SKILLS_TEST_DATABASE_URL").unwrap_or_default();
        if url.is_empty() {
            let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/ci-postgres/url");
            url = std::fs::read_to_string(file)
                .unwrap_or_default()
                .trim()
                .to_owned();
        }
        assert!(
            !url.is_empty(),
            "needs PostgreSQL: run bash .ci/postgres first (or set SKILLS_TEST_DATABASE_URL)"
        );
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let name = format!(
            "skills_rt_{}_{}",
            std::process::id(),
            chrono::Utc::now().timestamp_micros()
        );
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        let base = url.rsplit_once('/').map(|(b, _)| b).unwrap();
        format!("{base}/{name}")
    }
}
