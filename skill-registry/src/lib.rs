//! `skill-registry`: skills from layered folders, as an immutable [`Snapshot`], disclosed
//! level by level and kept current as files change.
//!
//! It owns:
//! - **discovery** (recursive, bounded, symlink-safe walks of each source) and **loading**
//!   (every file parsed by `skill-format`, on all cores);
//! - **precedence** (sources are ordered lowest to highest; a same-named skill of a higher
//!   layer shadows the others, which are kept and reported; a malformed or ineligible winner is
//!   excluded with **no fallback** to a lower layer; duplicates inside one layer are errors
//!   with a deterministic winner) and **eligibility** (OS, environment, binaries, tool policy,
//!   registered tools, built-in command collisions, enablement, profile affinity);
//! - **publishing**: the current snapshot sits behind an atomic pointer, so readers never lock
//!   against a reload; reloads are incremental ([`Registry::reload_paths`]), keep a broken
//!   file's last good version served, and send a [`ChangeSet`] to subscribers;
//! - **disclosure** ([`Disclosure`]): the catalog for the system prompt within a budget
//!   ([`Catalog`], [`BudgetReport`]), the `get_skill` tiers, `load_skill`, `use_skill`, the
//!   scoped listing for a sub-agent, and a skill's resources;
//! - **trust and integrity**: every entry's files with their SHA-256 ([`FileManifest`],
//!   computed once per snapshot, reused across reloads), a content scan of its text
//!   ([`scan_text`], `scan-*` codes), a per-source [`TrustPolicy`] (low-trust skills with
//!   findings excluded, their scripts refused) and lock files ([`Lock`], `require_lock`);
//! - **hot reload** (feature `watch`): `Registry::watch` turns file events into reloads.
//!
//! ```no_run
//! use skill_registry::{Budget, CatalogFormat, Disclosure, Registry, RegistryConfig, Source};
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
//! let view = Disclosure::new(&snapshot);
//! let catalog = view.catalog(CatalogFormat::Xml, &Budget::default());
//! assert!(catalog.report.used_chars <= catalog.report.budget_chars);
//! ```

#![deny(missing_docs)]

mod change;
mod disclose;
mod discover;
mod eligibility;
mod error;
mod files;
mod incomplete;
mod index;
mod load;
mod lock;
mod lock_sign;
mod lookalike;
mod manifest;
mod namespace;
mod outline;
mod pathcmp;
mod read;
mod scan;
mod served;
mod skill;
mod snapshot;
mod suggest;
#[cfg(test)]
mod test_util;
mod trust;
#[cfg(feature = "watch")]
mod watch;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use skill_format::{Dialect, Mode};

use change::Subscribers;
pub use change::{ChangeSet, Subscription};
pub use disclose::{
    Budget, BudgetReport, CHARS_PER_TOKEN, CONTEXT_WINDOW_PERCENT, Caller, Catalog, CatalogEntry,
    CatalogFormat, DEFAULT_BUDGET_CHARS, DEFAULT_ENTRY_CAP_CHARS, Disclosure, LOW_TRUST_MARK,
    MAX_AVAILABLE_NAMES, MAX_LISTED_SLUGS, MAX_RESOURCE_BYTES, MAX_RESOURCE_DEPTH,
    MAX_RESOURCE_ENTRIES, MIN_DESCRIPTION_CHARS, Outline, OutlineSection, Resource, ResourceKind,
    ResourceListing, SECTION_SEPARATOR, SectionCache, SectionText, TRUNCATION_MARK, UseSkill,
    UseSkillMode,
};
pub use discover::{
    DEFAULT_MAX_DEPTH, DEFAULT_MAX_FOLDERS, DiscoverOptions, Discovery, Found, Layout, discover,
};
pub use eligibility::{
    Affinity, DEFAULT_BUILTIN_COMMANDS, Environment, Probe, affinity, current_os,
};
pub use error::{Error, Unavailable};
pub use files::{FileEntry, FileManifest, Sha256};
pub use index::Resolved;
use load::{Loader, Scope};
pub use load::{load_snapshot, slug};
pub use lock::{Drift, LOCK_VERSION, Lock, LockedSkill, MAX_LOCK_BYTES, SkillDrift};
pub use lock_sign::{
    MAX_KEY_BYTES, MAX_SIGNATURE_BYTES, PublicKey, SIGNATURE_SUFFIX, sign_lock, signature_path,
};
use manifest::Recompute;
pub use manifest::{MAX_HASHED_FILE_BYTES, MAX_HASHED_SKILL_BYTES, MAX_MANIFEST_FILES};
pub use namespace::{MAX_NAMESPACE_CHARS, NAMESPACE_SEPARATOR, Namespace};
pub use scan::{
    MAX_FINDINGS_PER_CODE, MAX_SCAN_BYTES, MIN_BLOB_CHARS, SCAN_CODES, scan_text, severity_of,
};
pub use skill::{Skill, Status};
pub use snapshot::Snapshot;
pub use suggest::{MAX_SUGGESTIONS, closest_names};
pub use trust::TrustPolicy;
#[cfg(feature = "watch")]
pub use watch::{
    Changes, DEFAULT_DEBOUNCE, DEFAULT_MAX_DELAY, WatchOptions, Watcher, watch_folders,
};

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
    /// Whether discovery also enters its hidden folders (`.curated`, `.system`: a pack may
    /// keep skills there), as [`DiscoverOptions::include_hidden`] does for every source.
    /// `.git` and `node_modules` are never entered.
    pub include_hidden: bool,
    /// A namespace for its skills: each is served as `namespace:name`
    /// ([`Namespace::qualify`]; domain indexes and actions too), so it neither shadows nor
    /// is shadowed by a same-named skill of another namespace. `None` (the default): names
    /// as written, with layer precedence between sources.
    pub namespace: Option<Namespace>,
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
            include_hidden: false,
            namespace: None,
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
    /// Threads for discovery (folder listings read ahead), parsing and manifests; 0 uses
    /// every core.
    pub threads: usize,
    /// What trust levels, scan findings and a lock file decide ([`TrustPolicy`]).
    pub trust: TrustPolicy,
    /// Compute every snapshot's per-file manifests ([`Snapshot::manifest`]: each file read
    /// and hashed, its text scanned). Default: true. A one-shot check that reads neither
    /// digests nor findings (`skill-server validate`) turns it off; they are computed
    /// anyway when the trust policy needs them (a low-trust source, `require_lock`).
    pub manifests: bool,
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
            trust: TrustPolicy::default(),
            manifests: true,
        }
    }

    /// The discovery options for the source at `index`: [`RegistryConfig::discover`], with
    /// hidden folders entered when that source asks ([`Source::include_hidden`]).
    pub fn discover_options(&self, index: usize) -> DiscoverOptions {
        let hidden = self.sources.get(index).is_some_and(|s| s.include_hidden);
        DiscoverOptions {
            include_hidden: self.discover.include_hidden || hidden,
            ..self.discover
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

/// The live registry: a configuration, the current snapshot behind an atomic pointer, the
/// state that makes reloads incremental, and the subscribers told of every change.
#[derive(Debug)]
pub struct Registry {
    config: RegistryConfig,
    current: ArcSwap<Snapshot>,
    loader: Mutex<Loader>,
    subscribers: Subscribers,
}

impl Registry {
    /// Load every source and publish the first snapshot (generation 1).
    ///
    /// ```
    /// use skill_registry::{Budget, CatalogFormat, Disclosure, Registry, RegistryConfig, Source};
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::create_dir(dir.path().join("pdf-forms"))?;
    /// std::fs::write(
    ///     dir.path().join("pdf-forms/SKILL.md"),
    ///     "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nSteps.\n",
    /// )?;
    /// let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
    ///     dir.path(),
    ///     "project",
    /// )]));
    /// let snapshot = registry.snapshot();
    /// assert_eq!(snapshot.generation(), 1);
    /// assert_eq!(snapshot.get("pdf-forms").map(|s| s.body.as_str()), Some("Steps.\n"));
    ///
    /// let catalog = Disclosure::new(&snapshot).catalog(CatalogFormat::Markdown, &Budget::default());
    /// assert_eq!(catalog.text, "Available skills:\n- pdf-forms: Fill in PDF forms.\n");
    /// assert!(catalog.report.is_complete());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[tracing::instrument(name = "skills.registry.load", skip_all, fields(skills.count))]
    pub fn load(config: RegistryConfig) -> Self {
        let mut loader = Loader::default();
        let snapshot = loader.load(&config, 1, Scope::All);
        let snapshot = loader.attach(snapshot, None, Recompute::All, &config);
        let snapshot = loader.keep_base(snapshot, &config);
        tracing::Span::current().record("skills.count", snapshot.skills().count());
        Registry {
            config,
            current: ArcSwap::new(snapshot),
            loader: Mutex::new(loader),
            subscribers: Subscribers::default(),
        }
    }

    /// The current snapshot. Cheap; never blocks on a reload.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Walk every source and parse every file again. Files that loaded before and now have
    /// errors keep their last good version served. When anything changed, the result is
    /// published as the next generation and subscribers are told; otherwise the change set
    /// is empty and the generation stays.
    pub fn reload(&self) -> ChangeSet {
        self.reload_scoped(Scope::All)
    }

    /// Reload after the files or folders at `paths` changed (paths as the sources name
    /// them: a source `packs/x` gives `packs/x/a/SKILL.md`). Only those files are parsed
    /// again; a source is walked again only when a change could add or remove a skill. A
    /// path spelled unlike its source (relative where the source is absolute or the
    /// reverse, a leading `./`) is first named from that source, against the current
    /// directory.
    pub fn reload_paths<I, P>(&self, paths: I) -> ChangeSet
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let cwd = std::env::current_dir().ok();
        let roots = self.config.sources.iter().map(|s| s.path.as_path());
        let paths: HashSet<PathBuf> = paths
            .into_iter()
            .map(|p| match &cwd {
                Some(cwd) => pathcmp::respell(roots.clone(), p.into(), cwd),
                None => p.into(),
            })
            .collect();
        self.reload_scoped(Scope::Paths(&paths))
    }

    #[tracing::instrument(name = "skills.registry.reload", skip_all)]
    fn reload_scoped(&self, scope: Scope<'_>) -> ChangeSet {
        // One reload at a time; readers never take this lock.
        let mut loader = match self.loader.lock() {
            Ok(l) => l,
            Err(poisoned) => poisoned.into_inner(),
        };
        let old = self.current.load_full();
        // Incremental work starts from the snapshot before the trust policy's pass.
        let base = loader.base.clone().unwrap_or_else(|| old.clone());
        let generation = old.generation() + 1;
        let fast = match scope {
            Scope::Paths(paths) => loader.load_edits(&self.config, &base, generation, paths),
            Scope::All => None,
        };
        let next = match fast {
            Some(snapshot) => snapshot,
            None => loader.load(&self.config, generation, scope),
        };
        let recompute = match scope {
            Scope::All => Recompute::All,
            Scope::Paths(paths) => Recompute::Paths(paths),
        };
        let next = loader.attach(next, Some(&base), recompute, &self.config);
        let next = loader.keep_base(next, &self.config);
        let change = ChangeSet::between(&old, next.clone());
        if change.is_empty()
            && old.same_files(&next)
            && old.diagnostics() == next.diagnostics()
            && old.shadowed().len() == next.shadowed().len()
        {
            return ChangeSet {
                generation: old.generation(),
                snapshot: old,
                ..change
            };
        }
        self.current.store(next);
        // Published before the reload lock is released, so change sets reach subscribers
        // in generation order, each one following the last (`previous_generation` is the
        // generation they saw before). Readers never take this lock, so they do not wait.
        self.subscribers.publish(&change);
        drop(loader);
        change
    }

    /// Call `f` with every change set published from now on, in generation order, on the
    /// thread that reloaded, while that reload still holds the registry's reload lock: keep
    /// `f` short (hand the change set to a channel or task), and do not reload this
    /// registry from inside `f` (it would wait on itself). Dropping the returned
    /// [`Subscription`] unsubscribes.
    pub fn subscribe<F>(&self, f: F) -> Subscription
    where
        F: Fn(&ChangeSet) + Send + Sync + 'static,
    {
        self.subscribers.add(Arc::new(f))
    }

    /// The configuration it loads from.
    pub fn config(&self) -> &RegistryConfig {
        &self.config
    }
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
