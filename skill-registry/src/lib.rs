//! `skill-registry`: skills from layered folders, as an immutable [`Snapshot`].
//!
//! It owns discovery (recursive, bounded, symlink-safe walks of each source), loading (every
//! file parsed by `skill-format`, on all cores), precedence (sources are ordered lowest to
//! highest; a same-named skill of a higher layer shadows the others, which are kept and
//! reported; a malformed or ineligible winner is excluded with **no fallback** to a lower
//! layer; duplicates inside one layer are errors with a deterministic winner), eligibility
//! (OS, environment, binaries, tool policy, registered tools, built-in command collisions,
//! enablement, profile affinity), and publishing: the current snapshot sits behind an atomic
//! pointer, so readers never lock against a reload.
//!
//! ```no_run
//! use skill_registry::{Registry, RegistryConfig, Source};
//!
//! let config = RegistryConfig::with_sources(vec![
//!     Source::new("packs/agentskills", "builtin"),
//!     Source::new(".agents/skills", "project"),
//! ]);
//! let registry = Registry::load(config);
//! let snapshot = registry.snapshot();
//! for skill in snapshot.skills() {
//!     println!("{} ({}): {}", skill.name, skill.layer, skill.description);
//! }
//! ```

#![deny(missing_docs)]

mod discover;
mod eligibility;
mod error;
mod load;
mod snapshot;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arc_swap::ArcSwap;
use skill_format::{Dialect, Mode};

pub use discover::{
    DEFAULT_MAX_DEPTH, DEFAULT_MAX_FOLDERS, DiscoverOptions, Discovery, Found, Layout, discover,
};
pub use eligibility::{
    Affinity, DEFAULT_BUILTIN_COMMANDS, Environment, Probe, affinity, current_os,
};
pub use error::Error;
pub use load::{load_snapshot, slug};
pub use snapshot::{Skill, Snapshot, Status};

/// How much a source is trusted (agent-skills-integration 7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Trust {
    /// External repositories.
    Low,
    /// The user's own skills.
    Medium,
    /// Skills shipped with the host.
    High,
}

/// One folder of skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The folder (or a single skill file).
    pub path: PathBuf,
    /// The layer name (`builtin`, `user`, `project`, ...).
    pub layer: String,
    /// The dialect of its files, or `None` to detect per file.
    pub dialect: Option<Dialect>,
    /// Skill folders or notes.
    pub layout: Layout,
    /// Whether the host may write into it (e.g. `workflow.build`).
    pub writable: bool,
    /// Its trust level.
    pub trust: Trust,
}

impl Source {
    /// A skill-folder source with the dialect detected per file. Trust follows the layer:
    /// `builtin` high, `user` and `project` medium, anything else low.
    pub fn new(path: impl Into<PathBuf>, layer: impl Into<String>) -> Self {
        let layer = layer.into();
        let trust = match layer.as_str() {
            "builtin" => Trust::High,
            "user" | "project" => Trust::Medium,
            _ => Trust::Low,
        };
        Source {
            path: path.into(),
            layer,
            dialect: None,
            layout: Layout::Folders,
            writable: false,
            trust,
        }
    }
}

/// Everything loading needs.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// Sources, lowest precedence first.
    pub sources: Vec<Source>,
    /// Lenient (default) or strict validation.
    pub mode: Mode,
    /// Discovery bounds.
    pub discover: DiscoverOptions,
    /// Host facts for eligibility.
    pub environment: Environment,
    /// Parsing threads; 0 uses every core.
    pub threads: usize,
}

impl RegistryConfig {
    /// A configuration over these sources with every other setting at its default.
    pub fn with_sources(sources: Vec<Source>) -> Self {
        RegistryConfig {
            sources,
            mode: Mode::Lenient,
            discover: DiscoverOptions::default(),
            environment: Environment::default(),
            threads: 0,
        }
    }

    /// The cross-client default sources: `builtin` (the given bundled folder),
    /// `~/.agents/skills` (`user`, when a home folder is given) and `./.agents/skills`
    /// relative to `project_dir` (`project`).
    pub fn default_sources(
        builtin: Option<PathBuf>,
        home: Option<PathBuf>,
        project_dir: PathBuf,
    ) -> Vec<Source> {
        let mut out = Vec::new();
        if let Some(b) = builtin {
            out.push(Source::new(b, "builtin"));
        }
        if let Some(h) = home {
            out.push(Source::new(h.join(".agents").join("skills"), "user"));
        }
        out.push(Source::new(
            project_dir.join(".agents").join("skills"),
            "project",
        ));
        out
    }
}

/// The live registry: a configuration and the current snapshot behind an atomic pointer.
#[derive(Debug)]
pub struct Registry {
    config: RegistryConfig,
    current: ArcSwap<Snapshot>,
    generation: AtomicU64,
}

impl Registry {
    /// Load every source and publish the first snapshot (generation 1).
    pub fn load(config: RegistryConfig) -> Self {
        let snapshot = load_snapshot(&config, 1);
        Registry {
            config,
            current: ArcSwap::from_pointee(snapshot),
            generation: AtomicU64::new(1),
        }
    }

    /// The current snapshot. Cheap; never blocks on a reload.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Load every source again and publish the result as the next generation.
    pub fn reload(&self) -> Arc<Snapshot> {
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let snapshot = Arc::new(load_snapshot(&self.config, generation));
        self.current.store(snapshot.clone());
        snapshot
    }

    /// The configuration it loads from.
    pub fn config(&self) -> &RegistryConfig {
        &self.config
    }
}
