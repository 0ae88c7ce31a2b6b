//! Who runs an execution and against what: the [`Context`] of a call.

use std::sync::Arc;

use skill_registry::{Caller, Snapshot};

/// Who runs an execution and against what.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The model or a user: trigger control (`disable-model-invocation`,
    /// `user-invocable`) follows it.
    pub caller: Caller,
    /// The profile (affinity exclusions and the tool allowlist).
    pub profile: Option<String>,
    /// The snapshot to resolve skills in (`None`: the registry's current one).
    pub snapshot: Option<Arc<Snapshot>>,
    /// A scheduled run: trigger control does not apply (the skill's own `schedule` asked
    /// for it), only that the skill is loaded and not excluded for the profile.
    pub scheduler: bool,
}

impl Context {
    /// The model, no profile, the current snapshot.
    pub fn model() -> Self {
        Context::default()
    }

    /// A user (slash commands), no profile, the current snapshot.
    pub fn user() -> Self {
        Context {
            caller: Caller::User,
            ..Context::default()
        }
    }

    /// The scheduler.
    pub fn scheduler() -> Self {
        Context {
            scheduler: true,
            ..Context::default()
        }
    }

    /// The same context under a profile.
    pub fn with_profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = Some(profile.into());
        self
    }

    /// The same context pinned to a snapshot.
    pub fn with_snapshot(mut self, snapshot: Arc<Snapshot>) -> Self {
        self.snapshot = Some(snapshot);
        self
    }
}
