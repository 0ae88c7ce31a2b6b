//! Retention: finished rows older than the age go, in batches, with their attempts; newer
//! rows and rows still going stay.

use std::time::Duration;

use skill_store::{PRUNE_BATCH_ROWS, Pruned};

use crate::support::store;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// A client of its own on `url`, for writing rows with chosen ages.
async fn raw(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

async fn ids(client: &tokio_postgres::Client, table: &str) -> Vec<i64> {
    let rows = client
        .query(&format!("SELECT id FROM {table} ORDER BY id"), &[])
        .await
        .unwrap();
    rows.iter().map(|r| r.get(0)).collect()
}

async fn count(client: &tokio_postgres::Client, table: &str) -> i64 {
    client
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn old_finished_rows_go_with_their_attempts_and_the_rest_stays() {
    let (url, store) = store("a").await;
    let db = raw(&url).await;
    // Runs 1..=6: old succeeded, old skipped, old failed still named by a pending delivery,
    // new succeeded, old running (lease alive), old running whose lease ran out.
    db.batch_execute(
        "INSERT INTO skills_runs (id, job, scheduled, replica, outcome, started, finished, lease_until) VALUES
           (1, 'j', now() - interval '41 days', 'a', 'succeeded', now() - interval '41 days', now() - interval '40 days', NULL),
           (2, 'j', now() - interval '40 days', 'a', 'skipped-overlap', now() - interval '40 days', now() - interval '40 days', NULL),
           (3, 'j', now() - interval '39 days', 'a', 'failed', now() - interval '39 days', now() - interval '39 days', NULL),
           (4, 'j', now() - interval '1 day', 'a', 'succeeded', now() - interval '1 day', now() - interval '1 day', NULL),
           (5, 'k', now() - interval '40 days', 'a', 'running', now() - interval '40 days', NULL, now() + interval '1 hour'),
           (6, 'l', now() - interval '40 days', 'a', 'running', now() - interval '40 days', NULL, now() - interval '39 days');
         -- Deliveries 1..=4: old delivered, old failed, old pending (of run 3), new delivered.
         INSERT INTO skills_deliveries (id, run_id, idempotency_key, url, body, state, created, finished) VALUES
           (1, 1, 'run-1', 'http://x', '{}', 'delivered', now() - interval '40 days', now() - interval '40 days'),
           (2, NULL, 'run-x', 'http://x', '{}', 'failed', now() - interval '40 days', now() - interval '40 days'),
           (3, 3, 'run-3', 'http://x', '{}', 'pending', now() - interval '39 days', NULL),
           (4, 4, 'run-4', 'http://x', '{}', 'delivered', now() - interval '1 day', now() - interval '1 day');
         INSERT INTO skills_delivery_attempts (delivery_id, attempt, replica, status) VALUES
           (1, 1, 'a', 503), (1, 2, 'a', 200), (2, 1, 'a', 500), (3, 1, 'a', 503), (4, 1, 'a', 200);
         -- Tasks 1..=5: old succeeded, old cancelled, new failed, old running, old failed.
         INSERT INTO skills_tasks (id, skill, replica, status, created, finished, lease_until) VALUES
           (1, 's', 'a', 'succeeded', now() - interval '40 days', now() - interval '40 days', now() - interval '40 days'),
           (2, 's', 'a', 'cancelled', now() - interval '40 days', now() - interval '31 days', now() - interval '40 days'),
           (3, 's', 'a', 'failed', now() - interval '40 days', now() - interval '29 days', now() - interval '40 days'),
           (4, 's', 'a', 'running', now() - interval '40 days', NULL, now() + interval '1 hour'),
           (5, 's', 'a', 'failed', now() - interval '40 days', now() - interval '35 days', now() - interval '40 days');",
    )
    .await
    .unwrap();

    let pruned = store.prune(30 * DAY).await.unwrap();
    assert_eq!(
        pruned,
        Pruned {
            runs: 2,
            deliveries: 2,
            attempts: 3,
            tasks: 3,
        }
    );
    assert_eq!(pruned.total(), 10);
    // Run 3 stays while its delivery is pending; the running ones stay whatever their age
    // (run 6's expired lease is for the claim or the history refresh to mark, not for us).
    assert_eq!(ids(&db, "skills_runs").await, [3, 4, 5, 6]);
    assert_eq!(ids(&db, "skills_deliveries").await, [3, 4]);
    let attempts: Vec<i64> = db
        .query(
            "SELECT delivery_id FROM skills_delivery_attempts ORDER BY delivery_id",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(attempts, [3, 4]);
    assert_eq!(ids(&db, "skills_tasks").await, [3, 4]);
    // Nothing left to do.
    assert_eq!(store.prune(30 * DAY).await.unwrap(), Pruned::default());

    // Once its delivery is given up, run 3 goes too; the pending one never did.
    db.batch_execute(
        "UPDATE skills_deliveries SET state = 'failed', finished = now() - interval '31 days'
         WHERE id = 3",
    )
    .await
    .unwrap();
    let pruned = store.prune(30 * DAY).await.unwrap();
    assert_eq!((pruned.runs, pruned.deliveries, pruned.attempts), (1, 1, 1));
    assert_eq!(ids(&db, "skills_runs").await, [4, 5, 6]);

    // Rows written through the store, once finished, go with an age of zero.
    let task = store
        .create_task("s", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(store.prune(Duration::ZERO).await.unwrap().tasks, 1);
    store
        .finish_task(task, "succeeded", &serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(store.prune(Duration::ZERO).await.unwrap().tasks, 1);
    assert_eq!(ids(&db, "skills_tasks").await, [4]);
    // An age no interval holds deletes nothing rather than failing.
    assert_eq!(store.prune(Duration::MAX).await.unwrap(), Pruned::default());
}

/// `n` old finished rows in every table (each delivery with two attempts) and one new one.
async fn backlog(db: &tokio_postgres::Client, n: i64) {
    db.execute(
        "INSERT INTO skills_runs (job, scheduled, replica, outcome, started, finished)
         SELECT 'j', now() - i * interval '1 second', 'a', 'succeeded',
                now() - interval '40 days', now() - interval '40 days' + i * interval '1 ms'
         FROM generate_series(1, $1::bigint) i",
        &[&n],
    )
    .await
    .unwrap();
    db.execute(
        "INSERT INTO skills_deliveries (idempotency_key, url, body, state, finished)
         SELECT 'k' || i, 'http://x', '{}', 'delivered', now() - interval '40 days'
         FROM generate_series(1, $1::bigint) i",
        &[&n],
    )
    .await
    .unwrap();
    db.batch_execute(
        "INSERT INTO skills_delivery_attempts (delivery_id, attempt, replica)
         SELECT id, a, 'a' FROM skills_deliveries, generate_series(1, 2) a;
         INSERT INTO skills_runs (job, scheduled, replica, outcome, finished)
         VALUES ('new', now(), 'a', 'succeeded', now());
         INSERT INTO skills_deliveries (idempotency_key, url, body, state, finished)
         VALUES ('new', 'http://x', '{}', 'delivered', now());
         INSERT INTO skills_delivery_attempts (delivery_id, attempt, replica)
         SELECT id, 1, 'a' FROM skills_deliveries WHERE idempotency_key = 'new';
         INSERT INTO skills_tasks (skill, replica, status, finished, lease_until)
         VALUES ('new', 'a', 'succeeded', now(), now());",
    )
    .await
    .unwrap();
    db.execute(
        "INSERT INTO skills_tasks (skill, replica, status, created, finished, lease_until)
         SELECT 's', 'a', 'failed', now() - interval '40 days', now() - interval '40 days',
                now() - interval '40 days'
         FROM generate_series(1, $1::bigint) i",
        &[&n],
    )
    .await
    .unwrap();
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn batches_repeat_until_nothing_older_is_left() {
    for n in [
        PRUNE_BATCH_ROWS - 1,
        PRUNE_BATCH_ROWS,
        PRUNE_BATCH_ROWS + 1,
        2 * PRUNE_BATCH_ROWS + 1,
    ] {
        let (url, store) = store("a").await;
        let db = raw(&url).await;
        backlog(&db, n).await;
        let pruned = store.prune(30 * DAY).await.unwrap();
        let n = u64::try_from(n).unwrap();
        assert_eq!(
            pruned,
            Pruned {
                runs: n,
                deliveries: n,
                attempts: 2 * n,
                tasks: n,
            },
            "{n} rows"
        );
        for table in [
            "skills_runs",
            "skills_deliveries",
            "skills_delivery_attempts",
            "skills_tasks",
        ] {
            assert_eq!(count(&db, table).await, 1, "{table} after {n} rows");
        }
    }
}
