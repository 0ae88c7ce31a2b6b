//! `serve`'s settings for several replicas and webhook delivery: `database_url` (or
//! `SKILLS_DATABASE_URL`), `replica_name`, and the `[webhook]` table (see docs/operator.md,
//! "Running several replicas").

use std::time::Duration;

use serde::Deserialize;
use skill_runtime::replicas::{DEFAULT_MAX_ATTEMPTS, WebhookConfig};

/// Most attempts a webhook delivery may be configured to make.
pub const MAX_WEBHOOK_ATTEMPTS: u32 = 20;

/// The `[webhook]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
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
}

/// The database to share and this replica's name in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Database {
    pub(crate) url: String,
    pub(crate) replica: String,
}

/// The database from the file, else from `SKILLS_DATABASE_URL`.
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
    })
}

/// The webhook settings, checked.
pub(crate) fn webhook(
    file: Option<WebhookFile>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<WebhookConfig>, String> {
    let Some(w) = file else {
        return Ok(None);
    };
    if !w.url.starts_with("http://") {
        return Err(format!(
            "webhook url `{}`: only http:// is supported (put a TLS-terminating proxy in front of an https receiver)",
            w.url
        ));
    }
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
    config.secret = secret;
    config.max_attempts = max_attempts;
    if let Some(ms) = w.first_backoff_ms {
        config.first_backoff = Duration::from_millis(ms);
    }
    Ok(Some(config))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn file(text: &str) -> WebhookFile {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn the_database_comes_from_the_file_then_the_environment() {
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
    fn webhook_settings_are_checked_at_their_edges() {
        let none = |_: &str| None;
        let ok = webhook(
            Some(file("url = \"http://127.0.0.1:9/h\"\nmax_attempts = 20")),
            &none,
        )
        .unwrap()
        .unwrap();
        assert_eq!(ok.max_attempts, MAX_WEBHOOK_ATTEMPTS);
        let over = webhook(Some(file("url = \"http://h/\"\nmax_attempts = 21")), &none);
        assert!(over.unwrap_err().contains("out of range"));
        let zero = webhook(Some(file("url = \"http://h/\"\nmax_attempts = 0")), &none);
        assert!(zero.is_err());
        assert!(
            webhook(Some(file("url = \"https://h/\"")), &none)
                .unwrap_err()
                .contains("TLS")
        );
        let missing = webhook(Some(file("url = \"http://h/\"\nsecret_env = \"K\"")), &none);
        assert!(missing.unwrap_err().contains("not set"));
        let env = |k: &str| (k == "K").then(|| "s3cret".to_owned());
        let signed = webhook(Some(file("url = \"http://h/\"\nsecret_env = \"K\"")), &env).unwrap();
        assert_eq!(signed.unwrap().secret.as_deref(), Some("s3cret"));
    }
}
