//! `serve`'s settings for several replicas and webhook delivery: `database_url` (or
//! `SKILLS_DATABASE_URL`), `replica_name`, `retention_days`, `claim_wait_ms`, and the
//! `[webhook]` table (see docs/operator.md, "Running several replicas").
//!
//! They need the `postgres` feature (on by default), which builds the runtime's replicas in:
//! a server built without it still reads the keys, and refuses a file or environment that
//! sets any of them ([`without_postgres`]) rather than run alone where replicas were meant.

#[cfg(feature = "postgres")]
use std::time::Duration;

use serde::Deserialize;
#[cfg(feature = "postgres")]
use skill_runtime::replicas::{DEFAULT_MAX_ATTEMPTS, Replicas, WebhookConfig};

/// The environment variable naming the shared database (skill-store's
/// `DATABASE_URL_ENV`, named here too for builds without the `postgres` feature).
pub(crate) const DATABASE_URL_ENV: &str = "SKILLS_DATABASE_URL";

/// Most attempts a webhook delivery may be configured to make.
#[cfg(feature = "postgres")]
pub(crate) const MAX_WEBHOOK_ATTEMPTS: u32 = 20;
/// Most days `retention_days` may keep finished rows in the shared database (ten years).
#[cfg(feature = "postgres")]
pub(crate) const MAX_RETENTION_DAYS: u32 = 3650;
/// Most milliseconds `claim_wait_ms` may let a claim wait for another replica's claim of
/// the same job. A waiting claim holds one of the pool's connections, up to about twice
/// this long when it then records the miss: kept well below the 10 s a history read or a
/// task waits for a connection, so that a stalled replica cannot starve the pool.
#[cfg(feature = "postgres")]
pub(crate) const MAX_CLAIM_WAIT_MS: u64 = 5_000;

/// The `[webhook]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) struct WebhookFile {
    /// `http://host:port/path` of the receiver.
    url: String,
    /// The signing key itself (prefer `secret_env`).
    secret: Option<String>,
    /// The environment variable holding the signing key.
    secret_env: Option<String>,
    /// Attempts per delivery (default [`DEFAULT_MAX_ATTEMPTS`]).
    max_attempts: Option<u32>,
    /// The wait before the first retry, in milliseconds (default 1000; doubles per attempt).
    first_backoff_ms: Option<u64>,
    /// Deliver to loopback, link-local and private addresses too (default false).
    allow_private_destinations: Option<bool>,
}

/// The database to share, this replica's name in it, and how long its claims wait.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Database {
    pub(crate) url: String,
    pub(crate) replica: String,
    pub(crate) claim_wait: Duration,
}

/// Without the `postgres` feature there is never a database to share.
#[cfg(not(feature = "postgres"))]
pub(crate) type Database = std::convert::Infallible;

/// Without the `postgres` feature: an error naming the replica settings that are set
/// (`set` pairs each key with whether the file sets it; [`DATABASE_URL_ENV`] is read
/// from `env`), since this build cannot honour them; else `Ok`.
#[cfg_attr(feature = "postgres", allow(dead_code))]
pub(crate) fn without_postgres(
    set: &[(&str, bool)],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
    let mut named: Vec<&str> = set.iter().filter(|(_, s)| *s).map(|(k, _)| *k).collect();
    if env(DATABASE_URL_ENV).is_some_and(|u| !u.trim().is_empty()) {
        named.push(DATABASE_URL_ENV);
    }
    if named.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} set, but this skill-server is built without its `postgres` feature (shared \
         state of several replicas and webhook delivery): rebuild it with default features, \
         or remove the setting",
        named.join(", ")
    ))
}

/// The database from the file, else from `SKILLS_DATABASE_URL`.
#[cfg(feature = "postgres")]
pub(crate) fn database(
    url: Option<String>,
    replica: Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Database> {
    let url = url.or_else(|| env(skill_store::DATABASE_URL_ENV))?;
    if url.trim().is_empty() {
        return None;
    }
    Some(Database {
        url,
        replica: replica.unwrap_or_else(skill_store::default_replica_name),
        claim_wait: skill_store::DEFAULT_CLAIM_WAIT,
    })
}

#[cfg(feature = "postgres")]
/// A setting that only a shared database uses, checked against `1..=max` (in `unit`).
struct DatabaseSetting {
    key: &'static str,
    max: u64,
    unit: &'static str,
    /// What happens without a database (said in the warning when it is set anyway).
    instead: &'static str,
}

#[cfg(feature = "postgres")]
impl DatabaseSetting {
    /// `value` when it is in range; set without a database it does nothing, which is said
    /// in `warnings`.
    fn check(
        &self,
        value: u64,
        database: Option<&Database>,
        warnings: &mut Vec<String>,
    ) -> Result<u64, String> {
        let DatabaseSetting {
            key,
            max,
            unit,
            instead,
        } = self;
        if !(1..=*max).contains(&value) {
            return Err(format!(
                "{key} = {value} is out of range: keep between 1 and {max} {unit}"
            ));
        }
        if database.is_none() {
            warnings.push(format!(
                "{key} = {value} does nothing without a database (database_url or {}): {instead}",
                skill_store::DATABASE_URL_ENV
            ));
        }
        Ok(value)
    }
}

#[cfg(feature = "postgres")]
/// How long a claim waits for another replica's claim of the same job: `claim_wait_ms` (1
/// to [`MAX_CLAIM_WAIT_MS`]), else [`skill_store::DEFAULT_CLAIM_WAIT`]. Set without a
/// database it does nothing, which is said in `warnings`.
pub(crate) fn claim_wait(
    ms: Option<u64>,
    database: Option<&Database>,
    warnings: &mut Vec<String>,
) -> Result<Duration, String> {
    let Some(ms) = ms else {
        return Ok(skill_store::DEFAULT_CLAIM_WAIT);
    };
    let setting = DatabaseSetting {
        key: "claim_wait_ms",
        max: MAX_CLAIM_WAIT_MS,
        unit: "milliseconds",
        instead: "only replicas sharing one claim scheduled fires",
    };
    Ok(Duration::from_millis(
        setting.check(ms, database, warnings)?,
    ))
}

#[cfg(feature = "postgres")]
/// How long finished rows stay in the shared database: `retention_days` (1 to
/// [`MAX_RETENTION_DAYS`]), else [`Replicas::DEFAULT_RETENTION`]. Set without a database it
/// does nothing, which is said in `warnings`.
pub(crate) fn retention(
    days: Option<u32>,
    database: Option<&Database>,
    warnings: &mut Vec<String>,
) -> Result<Duration, String> {
    let Some(days) = days else {
        return Ok(Replicas::DEFAULT_RETENTION);
    };
    let setting = DatabaseSetting {
        key: "retention_days",
        max: u64::from(MAX_RETENTION_DAYS),
        unit: "days",
        instead: "this process keeps history_limit runs in memory",
    };
    let days = setting.check(u64::from(days), database, warnings)?;
    Ok(Duration::from_secs(days * 24 * 60 * 60))
}

#[cfg(feature = "postgres")]
/// The webhook settings, checked.
pub(crate) fn webhook(
    file: Option<WebhookFile>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<WebhookConfig>, String> {
    let Some(w) = file else {
        return Ok(None);
    };
    let secret = match (&w.secret_env, w.secret) {
        (Some(var), _) => Some(env(var).ok_or_else(|| {
            format!("the [webhook] section names secret_env = \"{var}\" but it is not set")
        })?),
        (None, s) => s,
    };
    let max_attempts = w.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS);
    if !(1..=MAX_WEBHOOK_ATTEMPTS).contains(&max_attempts) {
        return Err(format!(
            "webhook max_attempts = {max_attempts} is out of range: keep between 1 and {MAX_WEBHOOK_ATTEMPTS}"
        ));
    }
    let mut config = WebhookConfig::new(w.url);
    config.allow_private_destinations = w.allow_private_destinations.unwrap_or(false);
    config.check()?;
    config.secret = secret;
    config.max_attempts = max_attempts;
    if let Some(ms) = w.first_backoff_ms {
        config.first_backoff = Duration::from_millis(ms);
    }
    Ok(Some(config))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod without_tests {
    use super::*;

    /// A build without the `postgres` feature refuses every replica setting, from the
    /// file or the environment, naming each; with none set it goes on.
    #[test]
    fn replica_settings_are_refused_without_postgres() {
        let none = |_: &str| None;
        assert_eq!(without_postgres(&[("database_url", false)], &none), Ok(()));
        let blank = |k: &str| (k == DATABASE_URL_ENV).then(|| " ".to_owned());
        assert_eq!(without_postgres(&[], &blank), Ok(()));
        let env = |k: &str| (k == DATABASE_URL_ENV).then(|| "postgresql://e/db".to_owned());
        let e =
            without_postgres(&[("database_url", false), ("[webhook]", true)], &env).unwrap_err();
        assert!(
            e.starts_with("[webhook], SKILLS_DATABASE_URL set, but this skill-server is built without its `postgres` feature"),
            "{e}"
        );
    }
}

#[cfg(all(test, feature = "postgres"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn file(text: &str) -> WebhookFile {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn the_database_comes_from_the_file_then_the_environment() {
        assert_eq!(DATABASE_URL_ENV, skill_store::DATABASE_URL_ENV);
        let env = |k: &str| (k == "SKILLS_DATABASE_URL").then(|| "postgresql://e/db".to_owned());
        let none = |_: &str| None;
        assert_eq!(database(None, None, &none), None);
        assert_eq!(
            database(None, Some("r1".into()), &env).unwrap().url,
            "postgresql://e/db"
        );
        let f = database(Some("postgresql://f/db".into()), Some("r1".into()), &env).unwrap();
        assert_eq!(
            (f.url.as_str(), f.replica.as_str()),
            ("postgresql://f/db", "r1")
        );
    }

    #[test]
    fn claim_wait_is_checked_at_its_edges() {
        let db = Database {
            url: "postgresql://h/db".into(),
            replica: "r".into(),
            claim_wait: skill_store::DEFAULT_CLAIM_WAIT,
        };
        let mut warnings = Vec::new();
        let mut wait = |ms, database| claim_wait(ms, database, &mut warnings);
        assert_eq!(
            wait(None, Some(&db)).unwrap(),
            skill_store::DEFAULT_CLAIM_WAIT
        );
        for ok in [1, MAX_CLAIM_WAIT_MS] {
            assert_eq!(
                wait(Some(ok), Some(&db)).unwrap(),
                Duration::from_millis(ok)
            );
        }
        for bad in [0, MAX_CLAIM_WAIT_MS + 1, u64::MAX] {
            let e = wait(Some(bad), Some(&db)).unwrap_err();
            assert!(
                e.contains(&format!("claim_wait_ms = {bad} is out of range")),
                "{e}"
            );
        }
        assert!(wait(Some(500), None).is_ok());
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("claim_wait_ms = 500 does nothing"),
            "{warnings:?}"
        );
    }

    #[test]
    fn retention_days_are_checked_at_their_edges() {
        const DAY: u64 = 24 * 60 * 60;
        let db = Database {
            url: "postgresql://h/db".into(),
            replica: "r".into(),
            claim_wait: skill_store::DEFAULT_CLAIM_WAIT,
        };
        let mut warnings = Vec::new();
        let mut days = |d, database| retention(d, database, &mut warnings);
        assert_eq!(days(None, Some(&db)).unwrap(), Replicas::DEFAULT_RETENTION);
        assert_eq!(Replicas::DEFAULT_RETENTION, Duration::from_secs(30 * DAY));
        assert_eq!(days(Some(1), Some(&db)).unwrap(), Duration::from_secs(DAY));
        assert_eq!(
            days(Some(MAX_RETENTION_DAYS), Some(&db)).unwrap(),
            Duration::from_secs(u64::from(MAX_RETENTION_DAYS) * DAY)
        );
        for bad in [0, MAX_RETENTION_DAYS + 1, u32::MAX] {
            let e = days(Some(bad), Some(&db)).unwrap_err();
            assert!(
                e.contains(&format!("retention_days = {bad} is out of range")),
                "{e}"
            );
        }
        assert!(warnings.is_empty(), "{warnings:?}");
        // Without a database: accepted, with a warning; absent, no warning.
        assert_eq!(
            retention(Some(7), None, &mut warnings).unwrap(),
            Duration::from_secs(7 * DAY)
        );
        assert!(retention(None, None, &mut warnings).is_ok());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("without a database"), "{warnings:?}");
    }

    #[test]
    fn webhook_settings_are_checked_at_their_edges() {
        let none = |_: &str| None;
        let ok = webhook(
            Some(file(
                "url = \"http://127.0.0.1:9/h\"\nmax_attempts = 20\nallow_private_destinations = true",
            )),
            &none,
        )
        .unwrap()
        .unwrap();
        assert_eq!(ok.max_attempts, MAX_WEBHOOK_ATTEMPTS);
        assert!(ok.allow_private_destinations);
        // The attack run's URLs, refused at start.
        for (url, what) in [
            ("http://127.0.0.1:9/h", "allow_private_destinations"),
            ("http://169.254.169.254/latest/meta-data/", "link-local"),
            ("http://[::ffff:127.0.0.1]/", "loopback"),
            ("http:///nohost", "no host"),
            ("http://h/a\\r\\nX-Injected: 1", "'\\r'"),
            ("http://h:70000/", "65535"),
        ] {
            let e = webhook(Some(file(&format!("url = \"{url}\""))), &none).unwrap_err();
            assert!(e.contains(what), "{url}: {e}");
        }
        let over = webhook(Some(file("url = \"http://h/\"\nmax_attempts = 21")), &none);
        assert!(over.unwrap_err().contains("out of range"));
        let zero = webhook(Some(file("url = \"http://h/\"\nmax_attempts = 0")), &none);
        assert!(zero.is_err());
        // https is sent over rustls (skill_runtime::outbound).
        let tls = webhook(Some(file("url = \"https://h/\"")), &none).unwrap();
        assert_eq!(tls.unwrap().url, "https://h/");
        let missing = webhook(Some(file("url = \"http://h/\"\nsecret_env = \"K\"")), &none);
        assert!(missing.unwrap_err().contains("not set"));
        let env = |k: &str| (k == "K").then(|| "s3cret".to_owned());
        let signed = webhook(Some(file("url = \"http://h/\"\nsecret_env = \"K\"")), &env).unwrap();
        assert_eq!(signed.unwrap().secret.as_deref(), Some("s3cret"));
    }
}
