//! Remote sources in `serve`: a `[[sources]]` entry with `url` instead of `path` takes the
//! skills another server publishes at `/.well-known/agent-skills/index.json`
//! (`skill_runtime::hub`), verified, into a cache folder under `cache_dir`, and loads that
//! folder as an ordinary source (low trust unless the entry says otherwise; the scan, the
//! trust policy and `require_lock` apply to it as to any folder).
//!
//! At start each remote is fetched once; one that does not answer (or does not verify) is
//! served from its cache of an earlier run, or as an empty source when there is none, and
//! `/v1/ready` says so under `degraded`. Then every `remote_refresh_ms` each remote is
//! fetched again: a new content takes the cache folder's place whole and the engine
//! reloads; a failure keeps the cache and says so until a fetch succeeds again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use skill_runtime::Engine;
use skill_runtime::Sha256;
use skill_runtime::hub::{FetchOptions, sync};
use skill_runtime::outbound::Client;

/// How often remote sources are fetched again unless configured.
pub(crate) const DEFAULT_REFRESH: Duration = Duration::from_secs(300);
/// The shortest refresh interval accepted.
pub(crate) const MIN_REFRESH: Duration = Duration::from_secs(1);

/// One remote source: its index URL and its cache folder.
#[derive(Debug, Clone)]
pub(crate) struct Remote {
    pub(crate) url: String,
    pub(crate) folder: PathBuf,
}

/// The cache folder of `url` under `cache_dir`: a name readable by an operator (the URL's
/// letters and digits) with a digest of the whole URL, so two URLs never share one.
pub(crate) fn cache_folder(cache_dir: &Path, url: &str) -> PathBuf {
    let readable: String = url
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(48)
        .collect();
    let digest = Sha256::of(url.as_bytes()).to_hex();
    cache_dir.join(format!("{readable}-{}", &digest[..16]))
}

/// The refresh interval from the file, checked.
pub(crate) fn refresh(ms: Option<u64>) -> Result<Duration, String> {
    match ms.map(Duration::from_millis) {
        None => Ok(DEFAULT_REFRESH),
        Some(d) if d < MIN_REFRESH => Err(format!(
            "remote_refresh_ms = {} is too short: at least {} ms",
            d.as_millis(),
            MIN_REFRESH.as_millis()
        )),
        Some(d) => Ok(d),
    }
}

/// What to say in readiness while `remote` is served from its cache.
fn degraded(remote: &Remote, error: &str) -> String {
    let cached = std::fs::read_dir(&remote.folder).is_ok_and(|mut d| d.next().is_some());
    let from = if cached {
        "its cache of an earlier fetch"
    } else {
        "nothing (no cache yet)"
    };
    format!(
        "remote source {} is served from {from}: {error}",
        remote.url
    )
}

/// Fetch every remote once before the engine starts; the failures, as readiness words.
pub(crate) async fn first_fetch(client: &Client, remotes: &[Remote]) -> Vec<(String, String)> {
    let mut failed = Vec::new();
    for remote in remotes {
        match sync(
            client,
            &remote.url,
            &remote.folder,
            &FetchOptions::default(),
        )
        .await
        {
            Ok(s) => tracing::info!(
                url = remote.url,
                skills = s.skills.len(),
                "remote source fetched"
            ),
            Err(e) => {
                tracing::warn!(url = remote.url, error = %e, "remote source not fetched");
                failed.push((remote.url.clone(), degraded(remote, &e.to_string())));
            }
        }
        // A source folder must exist to be loaded: an empty one until a fetch succeeds.
        if let Err(e) = std::fs::create_dir_all(&remote.folder) {
            tracing::warn!(folder = %remote.folder.display(), error = %e, "cannot create the cache folder");
        }
    }
    failed
}

/// Fetch every remote every `interval`, reloading the engine when one changed and keeping
/// readiness's `degraded` in step. Runs until the task is dropped.
pub(crate) async fn refresh_loop(
    engine: Arc<Engine>,
    client: Client,
    remotes: Vec<Remote>,
    interval: Duration,
) {
    loop {
        tokio::time::sleep(interval).await;
        let mut changed = false;
        for remote in &remotes {
            match sync(
                &client,
                &remote.url,
                &remote.folder,
                &FetchOptions::default(),
            )
            .await
            {
                Ok(s) => {
                    changed |= s.changed;
                    engine.set_degraded(&remote.url, None);
                }
                Err(e) => {
                    tracing::warn!(url = remote.url, error = %e, "remote source not refreshed");
                    engine.set_degraded(&remote.url, Some(degraded(remote, &e.to_string())));
                }
            }
        }
        if changed {
            let engine = engine.clone();
            let _ = tokio::task::spawn_blocking(move || engine.reload()).await;
        }
    }
}
