//! Forked tasks: shared across replicas, failed after their lease runs out.

use std::time::Duration;

use skill_store::Store;

use crate::support::store;

#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn a_task_is_read_on_any_replica_and_failed_when_its_replica_dies() {
    let (url, a) = store("a").await;
    let b = Store::connect(&url, "b").await.unwrap();
    let done = a
        .create_task("report", Duration::from_secs(30))
        .await
        .unwrap();
    a.finish_task(done, "succeeded", &serde_json::json!({"ok": true}))
        .await
        .unwrap();
    let seen = b.task(done).await.unwrap().unwrap();
    assert_eq!(seen.status, "succeeded");
    assert_eq!(seen.replica, "a");
    assert_eq!(seen.outcome, Some(serde_json::json!({"ok": true})));

    let lost = a
        .create_task("report", Duration::from_millis(200))
        .await
        .unwrap();
    assert_eq!(b.task(lost).await.unwrap().unwrap().status, "running");
    tokio::time::sleep(Duration::from_millis(350)).await;
    let failed = b.task(lost).await.unwrap().unwrap();
    assert_eq!(failed.status, "failed");
    assert!(failed.reason.unwrap().contains("lease expired"));
    // Too late to finish or renew.
    assert!(!a.renew_task(lost, Duration::from_secs(1)).await.unwrap());
    assert!(b.task(9_999_999).await.unwrap().is_none());
    assert_eq!(b.tasks(10).await.unwrap().len(), 2);
}
