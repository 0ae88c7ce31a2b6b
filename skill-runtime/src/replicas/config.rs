//! What the host configures for several replicas and webhook delivery.

use std::time::Duration;

use skill_store::Store;

use super::webhook::WebhookConfig;

/// Shared state and webhook delivery (both optional; the default is neither).
#[derive(Debug, Clone)]
pub struct Replicas {
    /// The database replicas share (`None`: this process's state only).
    pub store: Option<Store>,
    /// Where scheduled runs that need a model are POSTed (`None`: the event stream only).
    pub webhook: Option<WebhookConfig>,
    /// With a store, how long finished runs, deliveries (with their attempts) and tasks are
    /// kept in the database: every replica deletes older ones shortly after it starts and
    /// then every hour ([`Store::prune`]). Default [`Replicas::DEFAULT_RETENTION`].
    pub retention: Duration,
}

impl Replicas {
    /// How long finished rows are kept in the shared database unless configured: 30 days.
    pub const DEFAULT_RETENTION: Duration = Duration::from_secs(30 * 24 * 60 * 60);

    /// Whether anything is configured.
    pub fn is_active(&self) -> bool {
        self.store.is_some() || self.webhook.is_some()
    }
}

impl Default for Replicas {
    fn default() -> Self {
        Replicas {
            store: None,
            webhook: None,
            retention: Replicas::DEFAULT_RETENTION,
        }
    }
}
