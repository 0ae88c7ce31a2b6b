//! `skill-store`: the state several `skill-server` replicas share in one PostgreSQL database
//! (issue 16, SPEC section 8 "Several replicas"). Without a database the engine keeps its
//! embedded defaults (the scheduler's state file, in-process history and tasks, the tantivy
//! notes index) and this crate is not used.
//!
//! It owns:
//!
//! - the connection pool and the versioned migrations ([`Store::connect`]), applied in order
//!   under a session advisory lock, so replicas that start together apply each one once;
//! - scheduled runs ([`Store::claim_fire`]): one row per (job, scheduled instant), inserted
//!   under a per-job transaction lock, so each instant fires once across replicas, a run
//!   still going (its lease alive) makes the next instant a recorded skip, and a run whose
//!   replica died is marked failed once its lease runs out;
//! - the webhook outbox ([`Store::enqueue_delivery`], [`Store::take_due_delivery`]): rows
//!   claimed with `FOR UPDATE SKIP LOCKED` and a lease, every attempt recorded;
//! - forked tasks with a lease ([`Store::create_task`]);
//! - notes full-text search ([`Store::upsert_notes`], [`Store::search_notes`]);
//! - retention ([`Store::prune`]): finished runs, deliveries (with their attempts) and tasks
//!   older than an age are deleted in bounded batches.
//!
//! Times come from the database's clock (`clock_timestamp()`), so replicas with skewed
//! clocks agree on leases.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod migrate;
mod notes;
mod outbox;
mod retention;
mod rows;
mod runs;
mod tasks;

use std::time::Duration;

use deadpool_postgres::{Config, Pool, Runtime};
use tokio_postgres::NoTls;

pub use migrate::MIGRATIONS;
pub use notes::{NoteRow, StoreNoteHit};
pub use outbox::{Attempt, Delivery, DeliveryState};
pub use retention::{PRUNE_BATCH_ROWS, Pruned};
pub use runs::{Claim, RunRow};
pub use tasks::TaskRow;

/// The environment variable that names the database when the configuration does not.
pub const DATABASE_URL_ENV: &str = "SKILLS_DATABASE_URL";
/// Most connections one replica opens.
pub const MAX_CONNECTIONS: usize = 8;
/// How long a claim waits by default for another replica's claim of the same job
/// ([`Store::with_claim_wait`]).
pub const DEFAULT_CLAIM_WAIT: Duration = Duration::from_secs(2);
/// How long to wait for a connection from the pool before giving up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything that can go wrong talking to the database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL does not parse or the pool cannot be built.
    #[error("database configuration: {0} (expected a URL such as postgresql://user@host:5432/db)")]
    Config(String),
    /// No connection could be had (server down, wrong credentials, pool exhausted).
    #[error("cannot reach the database: {0}")]
    Connect(String),
    /// A statement failed (the message carries the server's reason).
    #[error("database error: {}", chain(.0))]
    Query(#[from] tokio_postgres::Error),
    /// A row holds a value this version cannot read (an infinite timestamp, a NULL where a
    /// value belongs): written by hand or by another program, not by a replica.
    #[error("row {key} of {table} cannot be read ({reason}): correct or delete it")]
    Unreadable {
        /// The table.
        table: &'static str,
        /// The row's key: its id, or for a note its path (`?` when even that cannot be
        /// read).
        key: String,
        /// Why.
        reason: String,
    },
    /// A migration failed; the database is left at the version before it.
    #[error("migration {version} ({name}) failed: {}", chain(.source))]
    Migration {
        /// The migration's version.
        version: i32,
        /// Its file name.
        name: &'static str,
        /// The statement's error.
        source: tokio_postgres::Error,
    },
}

impl Error {
    /// Whether the database did not answer, as opposed to answering with an error (a
    /// statement it refused, a row it holds that cannot be read, a value this version
    /// cannot take): no connection could be had from the pool ([`Error::Connect`], whose
    /// causes are not told apart), the connection was closed or failed on the wire, or
    /// the server said it is shutting down, starting up or lost the connection (SQLSTATE
    /// class `08`, `57P01`–`57P03`).
    pub fn is_unreachable(&self) -> bool {
        match self {
            Error::Connect(_) => true,
            Error::Query(e) => {
                if e.is_closed() {
                    return true;
                }
                match e.code() {
                    Some(state) => {
                        let code = state.code();
                        code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
                    }
                    None => std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()),
                }
            }
            Error::Config(_) | Error::Unreadable { .. } | Error::Migration { .. } => false,
        }
    }
}

/// A pool of connections to the shared database, and this replica's name in it.
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    replica: String,
    /// Unreadable rows already reported.
    reported: rows::Reported,
    /// How long a claim waits for the job's lock.
    claim_wait: Duration,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Connect to `url`, apply the migrations this version knows and not yet applied, and
    /// name this replica `replica` (recorded with every run, task and delivery attempt).
    pub async fn connect(url: &str, replica: &str) -> Result<Store, Error> {
        let mut cfg = Config::new();
        cfg.url = Some(url.to_owned());
        cfg.pool = Some(deadpool_postgres::PoolConfig {
            max_size: MAX_CONNECTIONS,
            timeouts: deadpool_postgres::Timeouts {
                wait: Some(CONNECT_TIMEOUT),
                create: Some(CONNECT_TIMEOUT),
                recycle: Some(CONNECT_TIMEOUT),
            },
            ..Default::default()
        });
        let pool = cfg
            .create_pool(Some(Runtime::Tokio1), NoTls)
            .map_err(|e| Error::Config(e.to_string()))?;
        let store = Store {
            pool,
            replica: replica.to_owned(),
            reported: rows::Reported::default(),
            claim_wait: DEFAULT_CLAIM_WAIT,
        };
        let mut client = store.client().await?;
        migrate::apply(&mut client).await?;
        Ok(store)
    }

    /// This store, its claims waiting at most `wait` (at least a millisecond) for another
    /// replica's claim of the same job ([`DEFAULT_CLAIM_WAIT`] by default). A replica that
    /// stalls mid-claim (paused, swapped out) would otherwise hold every other replica's
    /// fires of that job until it wakes; past the wait the instant is recorded as not run
    /// ([`Claim::NotRun`]).
    pub fn with_claim_wait(mut self, wait: Duration) -> Store {
        self.claim_wait = wait.max(Duration::from_millis(1));
        self
    }

    /// This replica's name.
    pub fn replica(&self) -> &str {
        &self.replica
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, Error> {
        self.pool.get().await.map_err(|e| Error::Connect(chain(&e)))
    }
}

/// An error and its causes, joined by `: ` (a cause already in the text before it is not
/// repeated): `tokio_postgres` keeps the server's reason, or the refused connection, in the
/// error's source, and its own text alone ("db error") says nothing.
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        if !text.is_empty() && !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = cause.source();
    }
    out
}

/// A replica name for this process: the host name (when known) and the process id.
pub fn default_replica_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    let host = if host.is_empty() { "host".into() } else { host };
    format!("{host}-{}", std::process::id())
}
