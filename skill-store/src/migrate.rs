//! Versioned migrations: embedded SQL files applied in order, each in its own transaction,
//! recorded in `skills_schema_migrations`. A session advisory lock is held while applying,
//! so replicas starting together wait for one another and each version is applied once.

use crate::Error;

/// The migrations, lowest version first: (version, file name, SQL).
pub const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "0001_runs_outbox_tasks.sql",
        include_str!("../migrations/0001_runs_outbox_tasks.sql"),
    ),
    (
        2,
        "0002_notes.sql",
        include_str!("../migrations/0002_notes.sql"),
    ),
    (
        3,
        "0003_retention_indexes.sql",
        include_str!("../migrations/0003_retention_indexes.sql"),
    ),
];

/// The advisory lock key the migrations are applied under (any fixed number; this one is
/// "skills" in ASCII).
const MIGRATION_LOCK: i64 = 0x736b_696c_6c73;

/// Apply every migration not yet recorded.
pub(crate) async fn apply(client: &mut deadpool_postgres::Object) -> Result<(), Error> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    let result = apply_locked(client).await;
    // The lock is released even when a migration failed (the session may outlive us in
    // the pool).
    let unlock = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await;
    result?;
    unlock?;
    Ok(())
}

async fn apply_locked(client: &mut deadpool_postgres::Object) -> Result<(), Error> {
    client
        .batch_execute(
            // `IF NOT EXISTS` on a table that exists is a NOTICE, which the client logs at
            // INFO at every start: notices are not wanted on this connection.
            "SET client_min_messages = warning;
             CREATE TABLE IF NOT EXISTS skills_schema_migrations (
                 version INTEGER PRIMARY KEY,
                 name TEXT NOT NULL,
                 applied TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())",
        )
        .await?;
    let rows = client
        .query("SELECT version FROM skills_schema_migrations", &[])
        .await?;
    let applied = rows
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<Vec<i32>, _>>()?;
    for (version, name, sql) in MIGRATIONS {
        if applied.contains(version) {
            continue;
        }
        let tx = client.transaction().await?;
        let fail = |source| Error::Migration {
            version: *version,
            name,
            source,
        };
        tx.batch_execute(sql).await.map_err(fail)?;
        tx.execute(
            "INSERT INTO skills_schema_migrations (version, name) VALUES ($1, $2)",
            &[version, name],
        )
        .await
        .map_err(fail)?;
        tx.commit().await.map_err(fail)?;
        tracing::info!(version, name, "applied database migration");
    }
    Ok(())
}
