//! Rows written by hand or by another program with values this version cannot read, and
//! connection errors: an error that names the row or the cause, never a panic.

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
async fn unreadable_rows_are_skipped_in_lists_and_named_when_read_alone() {
    let Some((url, s)) = store("a").await else {
        return;
    };
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
async fn connection_errors_say_why() {
    let Some(url) = server_url() else {
        return;
    };
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
