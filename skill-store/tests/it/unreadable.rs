//! Rows written by hand or by another program with values this version cannot read, and
//! connection errors: an error that names the row or the cause, never a panic.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{server_url, store};

async fn sql(url: &str, statement: &str) {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client.batch_execute(statement).await.unwrap();
}

/// An infinite timestamp in the run history or the tasks (which chrono cannot hold)
/// panicked the reader: the history loop died and `/v1/tasks` dropped its connection. A
/// list now skips the row; a read of that one row says which it is.
#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn unreadable_rows_are_skipped_in_lists_and_named_when_read_alone() {
    let (url, s) = store("a").await;
    let at = chrono::Utc::now();
    let good = s
        .claim_fire("tick", at, 1, Duration::from_secs(30))
        .await
        .unwrap();
    assert!(matches!(good, skill_store::Claim::Run(_)));
    sql(
        &url,
        "INSERT INTO skills_runs (job, scheduled, replica, generation, outcome, started)
         VALUES ('ghost', '2026-01-01', 'x', 1, 'weird', 'infinity');
         INSERT INTO skills_tasks (skill, replica, status, lease_until, created)
         VALUES ('bg', 'x', 'succeeded', 'infinity', '-infinity');",
    )
    .await;
    let runs = s.recent_runs(10).await.unwrap();
    assert_eq!(
        runs.iter().map(|r| r.job.as_str()).collect::<Vec<_>>(),
        ["tick"]
    );
    // Read again (as the history loop does every half second): the same, no panic.
    assert_eq!(s.recent_runs(10).await.unwrap().len(), 1);

    let ok = s.create_task("bg", Duration::from_secs(30)).await.unwrap();
    let listed = s.tasks(10).await.unwrap();
    assert_eq!(listed.iter().map(|t| t.id).collect::<Vec<_>>(), [ok]);
    let bad = ok - 1;
    let e = s.task(bad).await.unwrap_err().to_string();
    assert!(
        e.contains(&format!("row {bad} of skills_tasks cannot be read")),
        "{e}"
    );
    assert!(s.task(ok).await.unwrap().is_some());

    // A due instant too far to read is no instant, not a panic.
    sql(
        &url,
        "INSERT INTO skills_deliveries (idempotency_key, url, body, next_attempt)
         VALUES ('k', 'http://127.0.0.1:9/', '{}', 'infinity')",
    )
    .await;
    assert_eq!(s.next_delivery_due().await.unwrap(), None);
}

/// The reason behind a database error is in its message: a refused connection, a
/// database that does not exist (`tokio_postgres` alone says "db error").
#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn connection_errors_say_why() {
    let url = server_url();
    // Port 1 on loopback: nothing listens.
    let e = skill_store::Store::connect("postgresql://skills@127.0.0.1:1/none", "a")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.to_lowercase().contains("refused"), "{e}");
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap();
    let missing = format!("{base}/skills_no_such_database");
    let e = skill_store::Store::connect(&missing, "a")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not exist"), "{e}");
}

/// Every log line of this test binary, as text: one subscriber for the whole process,
/// installed once (a thread's own subscriber would miss events a callsite first met on
/// another thread, which then caches that nobody listens).
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    /// The process's log, capturing from the first call on.
    fn global() -> &'static Logs {
        static LOGS: std::sync::OnceLock<Logs> = std::sync::OnceLock::new();
        LOGS.get_or_init(|| {
            let logs = Logs::default();
            let writer = logs.clone();
            let subscriber = tracing_subscriber::fmt()
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .finish();
            tracing::subscriber::set_global_default(subscriber).unwrap();
            logs
        })
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// A note has no number: an unreadable one (a NULL among its tags, which `TEXT[] NOT NULL`
/// allows) is named by its path. Before, every note row was "row -1", so a second
/// unreadable note was never reported and none said which it was.
#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn unreadable_notes_are_named_by_their_path_once_each() {
    let (url, s) = store("a").await;
    let note = |path: &str| skill_store::NoteRow {
        path: path.to_owned(),
        file_name: path.trim_end_matches(".md").to_owned(),
        title: path.to_owned(),
        frontmatter: serde_json::json!({}),
        tags: vec!["t".to_owned()],
        content: "the quarterly budget review".to_owned(),
    };
    let logs = Logs::global();
    s.upsert_notes(&[note("bad-a.md"), note("bad-b.md"), note("good.md")])
        .await
        .unwrap();
    sql(
        &url,
        "UPDATE skills_notes SET tags = ARRAY[NULL]::text[] WHERE path LIKE 'bad-%'",
    )
    .await;
    for _ in 0..2 {
        let hits = s.search_notes("budget", 10).await.unwrap();
        let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(paths, ["good.md"]);
    }
    let text = logs.text();
    for path in ["bad-a.md", "bad-b.md"] {
        assert_eq!(
            text.matches(&format!("row {path} of skills_notes cannot be read"))
                .count(),
            1,
            "{text}"
        );
    }
}

/// A delivery attempt is named by its delivery and its number: two unreadable attempts of
/// one delivery are two warnings (column 0 alone, the delivery's id, named them alike, so
/// the second was never reported).
#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn unreadable_attempts_are_named_by_delivery_and_number() {
    let (url, s) = store("a").await;
    let logs = Logs::global();
    sql(
        &url,
        "INSERT INTO skills_deliveries (id, idempotency_key, url, body)
         VALUES (7001, 'attempts', 'http://127.0.0.1:9/', '{}');
         INSERT INTO skills_delivery_attempts (delivery_id, attempt, replica, at)
         VALUES (7001, 1, 'x', 'infinity'), (7001, 2, 'x', '-infinity'), (7001, 3, 'x', now());",
    )
    .await;
    let attempts = s.attempts(7001).await.unwrap();
    assert_eq!(attempts.iter().map(|a| a.attempt).collect::<Vec<_>>(), [3]);
    let text = logs.text();
    for key in ["7001/1", "7001/2"] {
        assert_eq!(
            text.matches(&format!(
                "row {key} of skills_delivery_attempts cannot be read"
            ))
            .count(),
            1,
            "{text}"
        );
    }
}
