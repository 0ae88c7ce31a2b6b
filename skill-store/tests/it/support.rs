//! A fresh database per test on the test server.

use std::sync::atomic::{AtomicU32, Ordering};

use skill_store::Store;

/// The test server's URL, or `None` (with a message) outside CI when there is none.
pub fn server_url() -> Option<String> {
    if let Ok(url) = std::env::var("SKILLS_TEST_DATABASE_URL") {
        if !url.is_empty() {
            return Some(url);
        }
    }
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/ci-postgres/url");
    if let Ok(url) = std::fs::read_to_string(file) {
        let url = url.trim().to_owned();
        if !url.is_empty() {
            return Some(url);
        }
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "CI is set but no database: run `bash .ci/postgres` or set SKILLS_TEST_DATABASE_URL"
        );
    }
    eprintln!("skipped: no PostgreSQL (set SKILLS_TEST_DATABASE_URL or run `bash .ci/postgres`)");
    None
}

/// A new empty database on the test server; its URL.
pub async fn fresh_database() -> Option<String> {
    static N: AtomicU32 = AtomicU32::new(0);
    let url = server_url()?;
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
    Some(format!("{base}/{name}"))
}

/// A store on a fresh database.
pub async fn store(replica: &str) -> Option<(String, Store)> {
    let url = fresh_database().await?;
    let store = Store::connect(&url, replica).await.unwrap();
    Some((url, store))
}
