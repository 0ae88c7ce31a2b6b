//! The vocabulary the doors need from the crates below the runtime, in one curated list.
//!
//! A door (HTTP, MCP, the command line, the pack report) depends on skill-runtime alone
//! (the layer table in xtask's tidy checks it): what it names of the lower crates
//! (configuration, the types an answer carries, the limits its flags document) is
//! re-exported here, one module per crate, and nothing else is.

/// Skill files: dialects, diagnostics and their codes, the Agent Skills field limits.
pub mod format {
    pub use skill_format::{
        Code, Diagnostic, Dialect, FileKind, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, Mode,
        Severity,
    };
}

/// The registry: sources and their configuration, skills, disclosure budgets, trust and
/// lock files.
pub mod registry {
    pub use skill_registry::{
        Budget, Caller, CatalogFormat, DiscoverOptions, Drift, Environment, Lock,
        MAX_NAMESPACE_CHARS, MAX_RESOURCE_DEPTH, MAX_RESOURCE_ENTRIES, Namespace, PublicKey,
        RegistryConfig, SECTION_SEPARATOR, Sha256, Skill, Snapshot, Source, Status, Trust,
        TrustPolicy, sign_lock, signature_path,
    };
    /// The watcher's settings (the `watch` feature).
    #[cfg(feature = "watch")]
    pub use skill_registry::{DEFAULT_DEBOUNCE, WatchOptions};
}

/// Routing: a route and the router's settings.
pub mod router {
    pub use skill_router::{FlagValue, Flags, Prevalidate, Route, RouterConfig};
}

/// Search and selection: options, their defaults and limits, trigger evals.
pub mod search {
    pub use skill_search::{
        DEFAULT_BUDGET_TOKENS, DEFAULT_MAX_SKILLS, DEFAULT_THRESHOLD, DISK_INDEX_DIR, MAX_LIMIT,
        MAX_MAX_SKILLS, MAX_NOTE_RESULTS, PROACTIVE_REASON, SelectOptions, TRIGGER_EVAL_FILE,
        TriggerReport, evaluate_triggers,
    };
}

/// Schedules: the scheduler's settings, time zones and instants.
pub mod scheduler {
    pub use skill_scheduler::{
        CatchUp, DEFAULT_HISTORY_LIMIT, DateTime, LAST_YEAR, MAX_HISTORY_LIMIT, SchedulerConfig,
        SecondsFormat, Tz, Utc, parse_timezone,
    };
}
