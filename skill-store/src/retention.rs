//! Retention: finished rows older than an age are deleted from the shared tables (runs,
//! deliveries with their attempts, tasks), in bounded batches so that no statement holds
//! its locks for long. Rows still going (a `running` run or task, a `pending` delivery) are
//! never deleted, whatever their age.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::{Error, Store};

/// Most rows of one table a single retention statement deletes. Each batch is its own
/// statement (and transaction), so the row locks it takes are held only while it runs;
/// [`Store::prune`] repeats batches until a table has nothing older left.
pub const PRUNE_BATCH_ROWS: i64 = 1000;

/// Ages above this are taken as this (nothing is that old, and PostgreSQL intervals have a
/// range): 100 years.
const MAX_AGE: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// How many rows one [`Store::prune`] deleted, per table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Rows of `skills_runs`.
    pub runs: u64,
    /// Rows of `skills_deliveries`.
    pub deliveries: u64,
    /// Rows of `skills_delivery_attempts` (the attempts of the deleted deliveries).
    pub attempts: u64,
    /// Rows of `skills_tasks`.
    pub tasks: u64,
}

impl Pruned {
    /// Rows deleted in all.
    pub fn total(&self) -> u64 {
        self.runs + self.deliveries + self.attempts + self.tasks
    }
}

// Each statement takes up to $2 rows finished before $1, oldest first, skipping rows another
// session holds (a replica pruning at the same time takes those), and deletes them. Rows are
// chosen by primary key rather than `ctid`: a row's ctid changes when it is updated, its id
// does not, and the lock taken by `FOR UPDATE` keeps the chosen rows as they were read.

/// Finished deliveries and their attempts; returns (deliveries, attempts). The attempts are
/// deleted explicitly (not only by the foreign key's cascade) so that they are counted.
const PRUNE_DELIVERIES: &str = "
    WITH doomed AS (
        SELECT id FROM skills_deliveries
        WHERE state IN ('delivered', 'failed') AND finished < $1
        ORDER BY finished LIMIT $2
        FOR UPDATE SKIP LOCKED),
    attempts AS (
        DELETE FROM skills_delivery_attempts
        WHERE delivery_id IN (SELECT id FROM doomed) RETURNING 1),
    gone AS (
        DELETE FROM skills_deliveries WHERE id IN (SELECT id FROM doomed) RETURNING 1)
    SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM attempts)";

/// Finished runs, except one a pending delivery still names (kept until it is delivered or
/// given up, so the delivery keeps its link).
const PRUNE_RUNS: &str = "
    WITH doomed AS (
        SELECT id FROM skills_runs r
        WHERE outcome <> 'running' AND finished < $1
          AND NOT EXISTS (SELECT 1 FROM skills_deliveries d
                          WHERE d.run_id = r.id AND d.state = 'pending')
        ORDER BY finished LIMIT $2
        FOR UPDATE SKIP LOCKED)
    DELETE FROM skills_runs WHERE id IN (SELECT id FROM doomed)";

/// Finished tasks (succeeded, failed, cancelled).
const PRUNE_TASKS: &str = "
    WITH doomed AS (
        SELECT id FROM skills_tasks
        WHERE status <> 'running' AND finished < $1
        ORDER BY finished LIMIT $2
        FOR UPDATE SKIP LOCKED)
    DELETE FROM skills_tasks WHERE id IN (SELECT id FROM doomed)";

impl Store {
    /// Delete every row that finished more than `older_than` ago (by the database's clock)
    /// from the shared tables: runs that are not `running` (except one a pending delivery
    /// still names), deliveries that were delivered or failed together with their
    /// attempts, and tasks that are no longer running. Running runs and tasks and pending
    /// deliveries are kept whatever their age. `Duration::ZERO` deletes every finished row.
    ///
    /// Rows go in batches of at most [`PRUNE_BATCH_ROWS`] per statement, oldest first,
    /// repeated until nothing older than the cutoff (fixed when the call starts) is left, so
    /// a large backlog never holds locks for long. Several replicas may prune at once: each
    /// skips the rows another is deleting. Returns how many rows went from each table; on
    /// an error, the batches already done stay done.
    pub async fn prune(&self, older_than: Duration) -> Result<Pruned, Error> {
        let client = self.client().await?;
        let age = older_than.min(MAX_AGE).as_secs_f64();
        let cutoff: DateTime<Utc> = client
            .query_one(
                "SELECT clock_timestamp() - make_interval(secs => $1::float8)",
                &[&age],
            )
            .await?
            .try_get(0)?;
        let mut pruned = Pruned::default();
        // Deliveries first: the runs they named then have no delivery left to update.
        let deliveries = client.prepare(PRUNE_DELIVERIES).await?;
        loop {
            let row = client
                .query_one(&deliveries, &[&cutoff, &PRUNE_BATCH_ROWS])
                .await?;
            let gone: i64 = row.try_get(0)?;
            let attempts: i64 = row.try_get(1)?;
            pruned.deliveries += count(gone);
            pruned.attempts += count(attempts);
            if gone < PRUNE_BATCH_ROWS {
                break;
            }
        }
        pruned.runs = batches(&client, PRUNE_RUNS, cutoff).await?;
        pruned.tasks = batches(&client, PRUNE_TASKS, cutoff).await?;
        Ok(pruned)
    }
}

/// Run the deleting statement `sql` until a batch deletes fewer than [`PRUNE_BATCH_ROWS`];
/// the rows deleted in all.
async fn batches(
    client: &deadpool_postgres::Object,
    sql: &str,
    cutoff: DateTime<Utc>,
) -> Result<u64, Error> {
    let statement = client.prepare(sql).await?;
    let batch = count(PRUNE_BATCH_ROWS);
    let mut total = 0;
    loop {
        let gone = client
            .execute(&statement, &[&cutoff, &PRUNE_BATCH_ROWS])
            .await?;
        total += gone;
        if gone < batch {
            return Ok(total);
        }
    }
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or_default()
}
