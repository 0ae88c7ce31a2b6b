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
//!
//! Module map, from the top (module edges only go down; tidy checks there is no cycle):
//! `registry.rs` (`Registry`: the `ArcSwap`, reloads, subscribers; its settings in
//! `config.rs`) sits over `load/` (snapshot building, the incremental `Loader`, reading one file, parsing on all cores, precedence).
//! Below it are `discover/` (the walk, folder listings read ahead, skill files read with them),
//! `eligibility.rs`, `watch.rs`, `change.rs` (`ChangeSet`), `pathcmp.rs` (path comparisons by
//! bytes) and `disclose/` (catalog, tiers, sections, resources). `snapshot.rs` sits over
//! `index.rs` (the name index, `Resolved`), which sits over `skill.rs` (`Skill`, `Status`). The
//! manifest's data types (`files.rs`) sit below the snapshot, which holds them; computing them
//! (`manifest.rs`) sits above it, and `served.rs` (what a door may serve or run, and the
//! verified read) above that. The content scan is the `skill-scan` crate.
//!
//! Three ways to reload: `Registry::reload_paths` first tries the loader's edit fast path, then
//! falls back to a walk of the touched sources. `Registry::reload` walks and parses everything.
//! The watcher calls `reload_paths` for a burst, and `reload` after a lost-events overflow or a
//! root that was replaced.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod change;
mod config;
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
mod registry;
mod served;
mod skill;
mod snapshot;
mod suggest;
#[cfg(test)]
mod test_util;
mod trust;
mod verified;
#[cfg(feature = "watch")]
mod watch;

pub use change::{ChangeSet, Subscription};
pub use config::{RegistryConfig, Source, Trust, TrustPolicy};
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
pub use load::{load_snapshot, slug};
pub use lock::{Drift, LOCK_VERSION, Lock, LockedSkill, MAX_LOCK_BYTES, SkillDrift};
pub use lock_sign::{
    MAX_KEY_BYTES, MAX_SIGNATURE_BYTES, PublicKey, SIGNATURE_SUFFIX, sign_lock, signature_path,
};
pub use manifest::{MAX_HASHED_FILE_BYTES, MAX_HASHED_SKILL_BYTES, MAX_MANIFEST_FILES};
pub use namespace::{MAX_NAMESPACE_CHARS, NAMESPACE_SEPARATOR, Namespace};
pub use registry::Registry;
pub use skill::{Skill, Status};
pub use skill_scan::{MAX_SCAN_BYTES, SCAN_CODES, scan_text};
pub use snapshot::Snapshot;
pub use suggest::{MAX_SUGGESTIONS, closest_names};
#[cfg(feature = "watch")]
pub use watch::{
    Changes, DEFAULT_DEBOUNCE, DEFAULT_MAX_DELAY, WatchOptions, Watcher, watch_folders,
};

// Every resource a host serves is scanned: the scan reads files up to the served cap.
const _: () = assert!(MAX_SCAN_BYTES == MAX_RESOURCE_BYTES);

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
