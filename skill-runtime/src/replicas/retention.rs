//! Retention of the shared database: each replica with a store deletes finished runs,
//! deliveries (with their attempts) and tasks older than [`Replicas::retention`] shortly
//! after it starts and then every [`PRUNE_EVERY`]. Replicas pruning at the same time skip
//! each other's rows ([`Store::prune`]). A failure is a warning, and the next round tries
//! again.
//!
//! [`Replicas::retention`]: super::Replicas::retention

use std::time::Duration;

use skill_store::Store;

/// How long after start the first round runs (the migrations and the first loads come
/// first).
const FIRST_PRUNE_AFTER: Duration = Duration::from_secs(5);
/// How often a replica prunes.
const PRUNE_EVERY: Duration = Duration::from_secs(60 * 60);

/// Prune `store` of rows finished more than `retention` ago, now and then for ever.
pub(crate) async fn pruner(store: Store, retention: Duration) {
    tokio::time::sleep(FIRST_PRUNE_AFTER).await;
    loop {
        match store.prune(retention).await {
            Ok(pruned) if pruned.total() > 0 => tracing::info!(
                runs = pruned.runs,
                deliveries = pruned.deliveries,
                attempts = pruned.attempts,
                tasks = pruned.tasks,
                retention_secs = retention.as_secs(),
                "deleted finished rows older than the retention from the shared database"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(
                error = %e,
                "cannot delete old rows from the shared database; trying again in an hour"
            ),
        }
        tokio::time::sleep(PRUNE_EVERY).await;
    }
}
