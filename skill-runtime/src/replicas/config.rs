//! What the host configures for several replicas and webhook delivery.

use skill_store::Store;

use super::webhook::WebhookConfig;

/// Shared state and webhook delivery (both optional; the default is neither).
#[derive(Debug, Clone, Default)]
pub struct Replicas {
    /// The database replicas share (`None`: this process's state only).
    pub store: Option<Store>,
    /// Where scheduled runs that need a model are POSTed (`None`: the event stream only).
    pub webhook: Option<WebhookConfig>,
}

impl Replicas {
    /// Whether anything is configured.
    pub fn is_active(&self) -> bool {
        self.store.is_some() || self.webhook.is_some()
    }
}
