//! Migrations once, claims once, overlap skips and lease expiry.

use std::time::Duration;

use chrono::{TimeZone, Utc};
use skill_store::{Claim, MIGRATIONS, Store};

use crate::support::{fresh_database, store};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn replicas_starting_together_apply_each_migration_once() {
    let url = fresh_database().await;
    let mut starts = Vec::new();
    for i in 0..6 {
        let url = url.clone();
        starts.push(tokio::spawn(async move {
            Store::connect(&url, &format!("r{i}")).await
        }));
    }
    for s in starts {
        s.await.unwrap().unwrap();
    }
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let rows = client
        .query(
            "SELECT version FROM skills_schema_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap();
    let versions: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
    let expected: Vec<i32> = MIGRATIONS.iter().map(|m| m.0).collect();
    assert_eq!(versions, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn each_instant_is_claimed_by_exactly_one_replica() {
    let (url, first) = store("r0").await;
    let mut stores = vec![first];
    for i in 1..4 {
        stores.push(Store::connect(&url, &format!("r{i}")).await.unwrap());
    }
    let lease = Duration::from_secs(30);
    for second in 0..20 {
        let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap();
        let mut claims = Vec::new();
        for s in &stores {
            let s = s.clone();
            claims.push(tokio::spawn(async move {
                let c = s.claim_fire("digest", at, 1, lease).await.unwrap();
                if let Claim::Run(id) = c {
                    s.finish_run(id, None).await.unwrap();
                }
                c
            }));
        }
        let mut runs = 0;
        for c in claims {
            match c.await.unwrap() {
                Claim::Run(_) => runs += 1,
                Claim::Taken => {}
                Claim::SkippedOverlap(_) => panic!("no run was going at {at}"),
                Claim::NotRun(_) => panic!("no claim waited past the wait at {at}"),
            }
        }
        assert_eq!(runs, 1, "instant {at}");
    }
    let history = stores[0].recent_runs(100).await.unwrap();
    assert_eq!(history.len(), 20);
    assert!(history.iter().all(|r| r.outcome == "succeeded"));
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn a_run_going_makes_the_next_instant_a_recorded_skip_until_its_lease_runs_out() {
    let (url, a) = store("a").await;
    let b = Store::connect(&url, "b").await.unwrap();
    let t = |s| Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, s).unwrap();
    let short = Duration::from_millis(300);
    let Claim::Run(first) = a.claim_fire("job", t(0), 1, short).await.unwrap() else {
        panic!("first claim runs");
    };
    // Still leased: b's claim of the next instant is a skip, recorded.
    let skip = b.claim_fire("job", t(1), 1, short).await.unwrap();
    assert!(matches!(skip, Claim::SkippedOverlap(_)), "{skip:?}");
    // a renews, then dies (stops renewing): once the lease is over the run is failed and
    // the next instant runs.
    assert!(a.renew_run(first, short).await.unwrap());
    tokio::time::sleep(Duration::from_millis(450)).await;
    let next = b.claim_fire("job", t(2), 1, short).await.unwrap();
    assert!(matches!(next, Claim::Run(_)), "{next:?}");
    let history = b.recent_runs(10).await.unwrap();
    let outcomes: Vec<(&str, Option<&str>)> = history
        .iter()
        .map(|r| (r.outcome.as_str(), r.message.as_deref().map(|m| &m[..16])))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("failed", Some("its replica stop")),
            ("skipped-overlap", None),
            ("running", None)
        ]
    );
    // A renewal after expiry is refused: the run is over as far as the cluster knows.
    assert!(!a.renew_run(first, short).await.unwrap());
}

/// A replica that stalls mid-claim (paused while it holds the job's lock) held every other
/// replica's fires of that job until it woke: they ran late, and the instants between went
/// unrecorded. Past the claim wait, an instant is now recorded as not run, once.
#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn a_claim_held_past_the_wait_records_the_instant_as_not_run() {
    let (url, a) = store("a").await;
    let a = a.with_claim_wait(Duration::from_millis(200));
    let b = Store::connect(&url, "b")
        .await
        .unwrap()
        .with_claim_wait(Duration::from_millis(200));
    // A stalled claim: the job's lock taken and held.
    let (mut holder, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let held = holder.transaction().await.unwrap();
    held.execute(
        "SELECT pg_advisory_xact_lock(hashtext('skills-run:' || $1))",
        &[&"tick"],
    )
    .await
    .unwrap();
    let at = chrono::Utc::now();
    let started = std::time::Instant::now();
    let claim = a
        .claim_fire("tick", at, 1, Duration::from_secs(30))
        .await
        .unwrap();
    assert!(matches!(claim, Claim::NotRun(_)), "{claim:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "it waited");
    // Another replica giving up on the same instant finds it recorded.
    assert_eq!(
        b.claim_fire("tick", at, 1, Duration::from_secs(30))
            .await
            .unwrap(),
        Claim::Taken
    );
    let runs = b.recent_runs(10).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].outcome, "failed");
    assert!(
        runs[0]
            .message
            .as_deref()
            .unwrap_or("")
            .starts_with("not run")
    );
    // Another job is not held up, and once the lock is let go the job claims again.
    assert!(matches!(
        a.claim_fire("other", at, 1, Duration::from_secs(30))
            .await
            .unwrap(),
        Claim::Run(_)
    ));
    held.rollback().await.unwrap();
    // Stalled after inserting its row for this very instant, before committing: the
    // recording of the miss waits no longer than the claim did either.
    let held = holder.transaction().await.unwrap();
    held.execute(
        "SELECT pg_advisory_xact_lock(hashtext('skills-run:' || $1))",
        &[&"late"],
    )
    .await
    .unwrap();
    held.execute(
        "INSERT INTO skills_runs (job, scheduled, replica, outcome) VALUES ('late', $1, 'z', 'running')",
        &[&at],
    )
    .await
    .unwrap();
    let started = std::time::Instant::now();
    assert_eq!(
        a.claim_fire("late", at, 1, Duration::from_secs(30))
            .await
            .unwrap(),
        Claim::Taken
    );
    assert!(started.elapsed() < Duration::from_secs(5), "it waited");
    held.rollback().await.unwrap();
    let next = at + chrono::Duration::seconds(5);
    assert!(matches!(
        a.claim_fire("tick", next, 1, Duration::from_secs(30))
            .await
            .unwrap(),
        Claim::Run(_)
    ));
}

/// A daily job's last run fell out of the recent runs once busier jobs filled them, and
/// `/v1/schedules` then said it had never run: the last run of each job is read on its own.
#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn the_last_run_of_each_job_is_found_however_busy_the_others_are() {
    let (_url, s) = store("a").await;
    let lease = Duration::from_secs(30);
    let day = Utc.with_ymd_and_hms(2026, 11, 27, 6, 0, 0).unwrap();
    for back in [2, 1] {
        let at = day - chrono::Duration::days(back);
        if let Claim::Run(id) = s.claim_fire("daily", at, 1, lease).await.unwrap() {
            s.finish_run(id, None).await.unwrap();
        }
    }
    for i in 0..30 {
        let at = day + chrono::Duration::seconds(5 * i);
        if let Claim::Run(id) = s.claim_fire("busy", at, 1, lease).await.unwrap() {
            s.finish_run(id, Some("boom")).await.unwrap();
        }
    }
    assert!(
        s.recent_runs(10)
            .await
            .unwrap()
            .iter()
            .all(|r| r.job == "busy")
    );
    let last = s.last_run_of_each_job().await.unwrap();
    let seen: Vec<(&str, chrono::DateTime<Utc>, &str)> = last
        .iter()
        .map(|r| (r.job.as_str(), r.scheduled, r.outcome.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("busy", day + chrono::Duration::seconds(145), "failed"),
            ("daily", day - chrono::Duration::days(1), "succeeded"),
        ]
    );
}
