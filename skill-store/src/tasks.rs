//! Forked tasks in the database: created `running` with a lease the running replica renews;
//! reading a task whose lease ran out marks it failed with the reason, so a task whose
//! replica died is never left running.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::{Error, Store};

/// The reason a task gets when its replica stopped renewing its lease.
const TASK_LEASE_EXPIRED: &str =
    "the replica running this task stopped answering (lease expired); its result is lost";

/// One forked task as the database holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    /// Cluster-wide id.
    pub id: i64,
    /// The skill.
    pub skill: String,
    /// The replica running it.
    pub replica: String,
    /// `running`, `succeeded`, `failed` or `cancelled`.
    pub status: String,
    /// The outcome (wire JSON), once finished.
    pub outcome: Option<serde_json::Value>,
    /// Why it failed without an outcome (lease expired).
    pub reason: Option<String>,
    /// When it was created.
    pub created: DateTime<Utc>,
    /// When it finished.
    pub finished: Option<DateTime<Utc>>,
}

const TASK_COLUMNS: &str = "id, skill, replica, status, outcome, reason, created, finished";

fn task(r: &tokio_postgres::Row) -> Result<TaskRow, tokio_postgres::Error> {
    Ok(TaskRow {
        id: r.try_get(0)?,
        skill: r.try_get(1)?,
        replica: r.try_get(2)?,
        status: r.try_get(3)?,
        outcome: r.try_get(4)?,
        reason: r.try_get(5)?,
        created: r.try_get(6)?,
        finished: r.try_get(7)?,
    })
}

impl Store {
    /// Record a new running task of `skill`, leased for `lease`; returns its id.
    pub async fn create_task(&self, skill: &str, lease: Duration) -> Result<i64, Error> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "INSERT INTO skills_tasks (skill, replica, status, lease_until)
                 VALUES ($1, $2, 'running', clock_timestamp() + make_interval(secs => $3::float8))
                 RETURNING id",
                &[&skill, &self.replica, &lease.as_secs_f64()],
            )
            .await?;
        crate::rows::one("skills_tasks", &row, |r| r.try_get(0))
    }

    /// Extend task `id`'s lease; false when it is no longer running.
    pub async fn renew_task(&self, id: i64, lease: Duration) -> Result<bool, Error> {
        let client = self.client().await?;
        let n = client
            .execute(
                "UPDATE skills_tasks SET lease_until = clock_timestamp() + make_interval(secs => $2::float8)
                 WHERE id = $1 AND status = 'running'",
                &[&id, &lease.as_secs_f64()],
            )
            .await?;
        Ok(n == 1)
    }

    /// Record task `id`'s end with its status and outcome.
    pub async fn finish_task(
        &self,
        id: i64,
        status: &str,
        outcome: &serde_json::Value,
    ) -> Result<(), Error> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE skills_tasks SET status = $2, outcome = $3, finished = clock_timestamp()
                 WHERE id = $1 AND status = 'running'",
                &[&id, &status, outcome],
            )
            .await?;
        Ok(())
    }

    async fn expire_tasks(&self, client: &deadpool_postgres::Object) -> Result<(), Error> {
        client
            .execute(
                "UPDATE skills_tasks SET status = 'failed', reason = $1, finished = clock_timestamp()
                 WHERE status = 'running' AND lease_until < clock_timestamp()",
                &[&TASK_LEASE_EXPIRED],
            )
            .await?;
        Ok(())
    }

    /// Task `id`, whichever replica runs it (`None`: unknown; [`Error::Unreadable`] when its
    /// row holds a value this version cannot read).
    pub async fn task(&self, id: i64) -> Result<Option<TaskRow>, Error> {
        let client = self.client().await?;
        self.expire_tasks(&client).await?;
        let row = client
            .query_opt(
                &format!("SELECT {TASK_COLUMNS} FROM skills_tasks WHERE id = $1"),
                &[&id],
            )
            .await?;
        row.as_ref()
            .map(|r| crate::rows::one("skills_tasks", r, task))
            .transpose()
    }

    /// The most recent `limit` tasks, oldest first (a row this version cannot read is
    /// skipped, with a warning the first time).
    pub async fn tasks(&self, limit: usize) -> Result<Vec<TaskRow>, Error> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        self.expire_tasks(&client).await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {TASK_COLUMNS} FROM
                     (SELECT * FROM skills_tasks ORDER BY id DESC LIMIT $1) t ORDER BY id"
                ),
                &[&limit],
            )
            .await?;
        Ok(crate::rows::all(
            &self.reported,
            "skills_tasks",
            &rows,
            task,
        ))
    }
}
