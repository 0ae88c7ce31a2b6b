//! Scheduled runs shared by replicas: the claim that makes each (job, instant) fire once,
//! the lease that tells a live run from one whose replica died, and the shared history.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::{Error, Store};

/// What [`Store::claim_fire`] decided for one (job, instant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// This replica runs it; the run's row id.
    Run(i64),
    /// Another replica already claimed (or skipped) this instant: do nothing.
    Taken,
    /// A run of the job is still going (on some replica, its lease alive): recorded as
    /// `skipped-overlap` with this row id.
    SkippedOverlap(i64),
    /// Another replica held the job's claim for longer than the store's claim wait (it
    /// stalled mid-claim): this instant is recorded `failed` (not run) with this row id.
    NotRun(i64),
}

/// The message of an instant recorded as not run because the job's claim was held too
/// long.
pub(crate) const CLAIM_HELD: &str =
    "not run: another replica held this job's claim past the claim wait (stalled mid-claim?)";

/// One run as the shared history holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    /// Row id, increasing across the cluster.
    pub id: i64,
    /// The job (skill) name.
    pub job: String,
    /// The instant the schedule named.
    pub scheduled: DateTime<Utc>,
    /// The replica that claimed it.
    pub replica: String,
    /// The snapshot generation on that replica.
    pub generation: i64,
    /// When it was claimed.
    pub started: DateTime<Utc>,
    /// When it finished, once it has.
    pub finished: Option<DateTime<Utc>>,
    /// `running`, `succeeded`, `failed` or `skipped-overlap`.
    pub outcome: String,
    /// Why it failed, when it did.
    pub message: Option<String>,
}

/// The message a run gets when its replica stopped renewing its lease.
pub(crate) const LEASE_EXPIRED: &str =
    "its replica stopped answering (lease expired): the run's result is unknown";

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

impl Store {
    /// Claim `job`'s fire at `scheduled` for this replica, in one transaction holding a
    /// per-job lock: runs of the job whose lease ran out are marked failed first; an instant
    /// already in the table is [`Claim::Taken`]; a run still going makes this instant a
    /// recorded skip; otherwise a `running` row leased for `lease` is this replica's. A lock
    /// held by another replica past the claim wait ([`Store::with_claim_wait`]) makes the
    /// instant a recorded [`Claim::NotRun`].
    pub async fn claim_fire(
        &self,
        job: &str,
        scheduled: DateTime<Utc>,
        generation: u64,
        lease: Duration,
    ) -> Result<Claim, Error> {
        let generation = i64::try_from(generation).unwrap_or(i64::MAX);
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // `SET LOCAL` takes no parameters: the wait is written as whole milliseconds.
        let wait_ms = self.claim_wait.as_millis().clamp(1, i32::MAX as u128);
        tx.batch_execute(&format!("SET LOCAL lock_timeout = {wait_ms}"))
            .await?;
        let locked = tx
            .execute(
                "SELECT pg_advisory_xact_lock(hashtext('skills-run:' || $1))",
                &[&job],
            )
            .await;
        if let Err(e) = locked {
            if e.code() != Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE) {
                return Err(e.into());
            }
            // The transaction is aborted; the instant is recorded on its own, in a
            // transaction that waits no longer either (the stalled claim may hold the row of
            // this very instant, inserted and not committed). Its unique (job, instant)
            // keeps it once however many replicas gave up waiting; a second wait that runs
            // out means another replica is recording it.
            tx.rollback().await?;
            let tx = client.transaction().await?;
            tx.batch_execute(&format!("SET LOCAL lock_timeout = {wait_ms}"))
                .await?;
            let row = match tx
                .query_opt(
                    "INSERT INTO skills_runs (job, scheduled, replica, generation, outcome, message, finished)
                     VALUES ($1, $2, $3, $4, 'failed', $5, clock_timestamp())
                     ON CONFLICT (job, scheduled) DO NOTHING
                     RETURNING id",
                    &[&job, &scheduled, &self.replica, &generation, &CLAIM_HELD],
                )
                .await
            {
                Ok(row) => row,
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE) => {
                    return Ok(Claim::Taken);
                }
                Err(e) => return Err(e.into()),
            };
            tx.commit().await?;
            return match row {
                None => Ok(Claim::Taken),
                Some(r) => Ok(Claim::NotRun(crate::rows::one("skills_runs", &r, |r| {
                    r.try_get(0)
                })?)),
            };
        }
        tx.execute(
            "UPDATE skills_runs SET outcome = 'failed', message = $2, finished = clock_timestamp()
             WHERE job = $1 AND outcome = 'running' AND lease_until < clock_timestamp()",
            &[&job, &LEASE_EXPIRED],
        )
        .await?;
        let taken = tx
            .query_opt(
                "SELECT id FROM skills_runs WHERE job = $1 AND scheduled = $2",
                &[&job, &scheduled],
            )
            .await?;
        if taken.is_some() {
            tx.commit().await?;
            return Ok(Claim::Taken);
        }
        let running = tx
            .query_opt(
                "SELECT id FROM skills_runs WHERE job = $1 AND outcome = 'running' LIMIT 1",
                &[&job],
            )
            .await?
            .is_some();
        let (outcome, lease_secs): (&str, Option<f64>) = if running {
            ("skipped-overlap", None)
        } else {
            ("running", Some(secs(lease)))
        };
        let row = tx
            .query_opt(
                "INSERT INTO skills_runs (job, scheduled, replica, generation, outcome, lease_until, finished)
                 VALUES ($1, $2, $3, $4, $5,
                         clock_timestamp() + make_interval(secs => $6::float8),
                         CASE WHEN $5 = 'running' THEN NULL ELSE clock_timestamp() END)
                 ON CONFLICT (job, scheduled) DO NOTHING
                 RETURNING id",
                &[&job, &scheduled, &self.replica, &generation, &outcome, &lease_secs],
            )
            .await?;
        tx.commit().await?;
        Ok(match row {
            None => Claim::Taken,
            Some(r) => {
                let id = crate::rows::one("skills_runs", &r, |r| r.try_get(0))?;
                if running {
                    Claim::SkippedOverlap(id)
                } else {
                    Claim::Run(id)
                }
            }
        })
    }

    /// Extend a running run's lease by `lease` from now. False when the run is no longer
    /// running (finished, or already marked failed after its lease ran out).
    pub async fn renew_run(&self, id: i64, lease: Duration) -> Result<bool, Error> {
        let client = self.client().await?;
        let n = client
            .execute(
                "UPDATE skills_runs SET lease_until = clock_timestamp() + make_interval(secs => $2::float8)
                 WHERE id = $1 AND outcome = 'running'",
                &[&id, &secs(lease)],
            )
            .await?;
        Ok(n == 1)
    }

    /// Record the end of run `id`: succeeded (`error` is `None`) or failed with `error`.
    pub async fn finish_run(&self, id: i64, error: Option<&str>) -> Result<(), Error> {
        let outcome = if error.is_some() {
            "failed"
        } else {
            "succeeded"
        };
        let client = self.client().await?;
        client
            .execute(
                "UPDATE skills_runs SET outcome = $2, message = $3, finished = clock_timestamp(),
                        lease_until = NULL
                 WHERE id = $1 AND outcome = 'running'",
                &[&id, &outcome, &error],
            )
            .await?;
        Ok(())
    }

    /// The most recent `limit` runs of every job, oldest first (runs whose lease ran out
    /// are reported failed). A row this version cannot read is skipped, with a warning the
    /// first time.
    pub async fn recent_runs(&self, limit: usize) -> Result<Vec<RunRow>, Error> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        client
            .execute(
                "UPDATE skills_runs SET outcome = 'failed', message = $1, finished = clock_timestamp()
                 WHERE outcome = 'running' AND lease_until < clock_timestamp()",
                &[&LEASE_EXPIRED],
            )
            .await?;
        let rows = client
            .query(
                "SELECT id, job, scheduled, replica, generation, started, finished, outcome, message
                 FROM (SELECT * FROM skills_runs ORDER BY id DESC LIMIT $1) recent ORDER BY id",
                &[&limit],
            )
            .await?;
        Ok(self.runs(&rows))
    }

    /// The latest run (by instant) of every job that has one, by job name. However busy
    /// other jobs are, a daily job's last run is here, while [`Store::recent_runs`] may
    /// have moved past it. One index probe per job (a loose scan of the `(job, scheduled)`
    /// index), not a pass over the table.
    pub async fn last_run_of_each_job(&self) -> Result<Vec<RunRow>, Error> {
        let client = self.client().await?;
        let rows = client
            .query(
                "WITH RECURSIVE jobs(job) AS (
                     (SELECT job FROM skills_runs ORDER BY job LIMIT 1)
                     UNION ALL
                     SELECT (SELECT r.job FROM skills_runs r WHERE r.job > jobs.job
                             ORDER BY r.job LIMIT 1)
                     FROM jobs WHERE jobs.job IS NOT NULL)
                 SELECT last.id, last.job, last.scheduled, last.replica, last.generation,
                        last.started, last.finished, last.outcome, last.message
                 FROM jobs, LATERAL (SELECT * FROM skills_runs r WHERE r.job = jobs.job
                                     ORDER BY r.scheduled DESC LIMIT 1) last
                 WHERE jobs.job IS NOT NULL
                 ORDER BY last.job",
                &[],
            )
            .await?;
        Ok(self.runs(&rows))
    }
}

impl Store {
    /// The runs of `rows` this version can read (see [`crate::rows::all`]).
    fn runs(&self, rows: &[tokio_postgres::Row]) -> Vec<RunRow> {
        crate::rows::all(&self.reported, "skills_runs", rows, run_row)
    }
}

/// A run as [`RunRow`], from its nine columns in order.
fn run_row(r: &tokio_postgres::Row) -> Result<RunRow, tokio_postgres::Error> {
    Ok(RunRow {
        id: r.try_get(0)?,
        job: r.try_get(1)?,
        scheduled: r.try_get(2)?,
        replica: r.try_get(3)?,
        generation: r.try_get(4)?,
        started: r.try_get(5)?,
        finished: r.try_get(6)?,
        outcome: r.try_get(7)?,
        message: r.try_get(8)?,
    })
}
