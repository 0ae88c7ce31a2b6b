//! The outbox: one holder at a time, retries, and redelivery after a holder dies.

use std::time::Duration;

use serde_json::json;
use skill_store::{DeliveryState, Store};

use crate::support::store;

#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn a_delivery_is_held_by_one_replica_and_retaken_after_its_lease() {
    let (url, a) = store("a").await;
    let b = Store::connect(&url, "b").await.unwrap();
    let body = json!({"skill": "digest"});
    let id = a
        .enqueue_delivery(None, "run-1", "http://127.0.0.1:9/hook", &body)
        .await
        .unwrap();
    // The same key is not queued twice.
    let again = b
        .enqueue_delivery(None, "run-1", "http://127.0.0.1:9/hook", &body)
        .await
        .unwrap();
    assert_eq!(id, again);
    let lease = Duration::from_millis(300);
    let taken = a.take_due_delivery(lease).await.unwrap().unwrap();
    assert_eq!(
        (taken.id, taken.attempts, taken.key.as_str()),
        (id, 1, "run-1")
    );
    assert!(
        b.take_due_delivery(lease).await.unwrap().is_none(),
        "held by a"
    );
    // a dies without recording: b retakes it after the lease, same key, attempt 2.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let retaken = b.take_due_delivery(lease).await.unwrap().unwrap();
    assert_eq!((retaken.id, retaken.attempts), (id, 2));
    b.record_attempt(id, 2, Some(503), Some("503"), false, Some(Duration::ZERO))
        .await
        .unwrap();
    let third = b.take_due_delivery(lease).await.unwrap().unwrap();
    b.record_attempt(id, third.attempts, Some(200), None, true, None)
        .await
        .unwrap();
    assert!(b.take_due_delivery(lease).await.unwrap().is_none());
    let listed = a.deliveries(10).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].state, DeliveryState::Delivered);
    let attempts = a.attempts(id).await.unwrap();
    let seen: Vec<(i32, Option<i32>)> = attempts.iter().map(|t| (t.attempt, t.status)).collect();
    assert_eq!(seen, [(2, Some(503)), (3, Some(200))]);
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run bash .ci/postgres first"]
async fn a_delivery_out_of_attempts_is_failed() {
    let (_url, a) = store("a").await;
    let id = a
        .enqueue_delivery(None, "k", "http://127.0.0.1:9/", &json!({}))
        .await
        .unwrap();
    let d = a
        .take_due_delivery(Duration::from_secs(5))
        .await
        .unwrap()
        .unwrap();
    a.record_attempt(
        id,
        d.attempts,
        None,
        Some("connection refused"),
        false,
        None,
    )
    .await
    .unwrap();
    assert!(
        a.take_due_delivery(Duration::from_secs(5))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        a.deliveries(1).await.unwrap()[0].state,
        DeliveryState::Failed
    );
    assert_eq!(a.next_delivery_due().await.unwrap(), None);
}
