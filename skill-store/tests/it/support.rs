//! A fresh database per test on the test server.

use std::sync::atomic::{AtomicU32, Ordering};

use skill_store::Store;

/// Why a database test did not run: the reason every such test is `#[ignore]`d with, and
/// what one run with `--include-ignored` and no database fails with.
pub const NEEDS_POSTGRES: &str = "needs PostgreSQL: run bash .ci/postgres first";

/// The test server's URL: `SKILLS_TEST_DATABASE_URL`, else `target/ci-postgres/url`.
/// These tests are ignored unless asked for, so without either this fails the test.
pub fn server_url() -> String {
    if let Ok(url) = std::env::var("SKILLS_TEST_DATABASE_URL") {
        if !url.is_empty() {
            return url;
        }
    }
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/ci-postgres/url");
    let url = std::fs::read_to_string(file).unwrap_or_default();
    let url = url.trim();
    assert!(
        !url.is_empty(),
        "{NEEDS_POSTGRES} (or set SKILLS_TEST_DATABASE_URL)"
    );
    url.to_owned()
}

/// A new empty database on the test server; its URL.
pub async fn fresh_database() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let url = server_url();
    let name = format!(
        "skills_t_{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        chrono::Utc::now().timestamp_subsec_nanos()
    );
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap();
    format!("{base}/{name}")
}

/// A store on a fresh database.
pub async fn store(replica: &str) -> (String, Store) {
    let url = fresh_database().await;
    let store = Store::connect(&url, replica).await.unwrap();
    (url, store)
}
