//! The immutable snapshot of loaded skills that readers share: every source's entries at
//! one generation, with the name index built once beside them.
//!
//! A snapshot holds the served skills by name, the actions domain indexes, the shadowed
//! entries, the diagnostics sorted by path and line, the sources, and every entry's file
//! manifest. The registry publishes it behind an `ArcSwap`: `Registry::snapshot` is a pointer
//! load, and a reload stores a new snapshot instead of changing this one. Resolving a routed
//! name goes through the name index (`index.rs`), so it touches no `Skill` unless that skill
//! is used.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use skill_format::{Diagnostic, Severity};

use crate::Source;
use crate::files::FileManifest;
use crate::index::{Indexed, NameIndex, Resolved};
use crate::pathcmp::ByPath;
use crate::skill::{Skill, Status};
use crate::verified::Stamps;

/// An immutable view of every source at one moment.
#[derive(Clone, Default)]
pub struct Snapshot {
    generation: u64,
    skills: BTreeMap<String, Arc<Skill>>,
    /// The same entries as `skills`, hashed by name, with copies of what a lookup reads:
    /// lookups by name (every routed command makes one) take one hash and one comparison
    /// instead of a walk down the ordered map, and rarely touch a skill. Built once with
    /// the snapshot, which never changes afterwards.
    by_name: NameIndex,
    domains: BTreeMap<String, Arc<Skill>>,
    shadowed: Vec<Arc<Skill>>,
    diagnostics: Vec<Diagnostic>,
    sources: Vec<Source>,
    /// Every entry's files, by the entry's file path (see `manifest.rs`). Shared: a
    /// snapshot that only changes statuses (the trust policy's pass) keeps the same map.
    manifests: Arc<ByPath<Arc<FileManifest>>>,
    /// How its files may be served (`served.rs`): only those of a manifest, and with
    /// `require_lock` only bytes that hash as they did.
    pub(crate) rule: ServeRule,
    /// The stamps of files a verified read found matching (`verified.rs`): this snapshot's
    /// own, shared by its clones.
    pub(crate) stamps: Arc<Stamps>,
}

/// What the registry's config says about serving the files of a snapshot's skills.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ServeRule {
    /// The snapshot carries manifests: a door serves or runs only the files they list.
    pub(crate) by_manifest: bool,
    /// `require_lock` is set: every read hashes what it serves and compares it with the
    /// manifest (which matched the lock when the skill was admitted).
    pub(crate) verify: bool,
}

impl fmt::Debug for Snapshot {
    /// Every field but the name index (the same entries as `skills`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("generation", &self.generation)
            .field("skills", &self.skills)
            .field("domains", &self.domains)
            .field("shadowed", &self.shadowed)
            .field("diagnostics", &self.diagnostics)
            .field("sources", &self.sources)
            .finish()
    }
}

impl Snapshot {
    pub(crate) fn new(
        generation: u64,
        skills: BTreeMap<String, Arc<Skill>>,
        domains: BTreeMap<String, Arc<Skill>>,
        shadowed: Vec<Arc<Skill>>,
        diagnostics: Vec<Diagnostic>,
        sources: Vec<Source>,
    ) -> Self {
        let by_name = NameIndex::new(skills.iter().map(|(name, skill)| (name.as_str(), skill)));
        Snapshot {
            generation,
            skills,
            by_name,
            domains,
            shadowed,
            diagnostics,
            sources,
            manifests: Arc::default(),
            rule: ServeRule::default(),
            stamps: Arc::default(),
        }
    }

    /// Increases by one with every reload.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A loaded skill by name.
    pub fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        self.by_name
            .get(name)
            .filter(|(_, i)| i.status == Status::Loaded)
            .map(|(_, i)| &i.skill)
    }

    /// The winning entry for a name, whatever its status.
    pub fn entry(&self, name: &str) -> Option<&Arc<Skill>> {
        self.by_name.get(name).map(|(_, i)| &i.skill)
    }

    /// The winning entry for a name, whatever its status, with what a router copies from
    /// it ([`Resolved`]).
    pub fn resolve(&self, name: &str) -> Option<Resolved<'_>> {
        self.by_name.get(name).map(|(key, i)| i.resolved(key))
    }

    /// The index's record of a name.
    pub(crate) fn indexed(&self, name: &str) -> Option<(&str, &Indexed)> {
        self.by_name.get(name)
    }

    /// Loaded skills, by name.
    pub fn skills(&self) -> impl Iterator<Item = &Arc<Skill>> {
        self.skills.values().filter(|s| s.status == Status::Loaded)
    }

    /// Every winning entry (loaded, invalid, ineligible), by name.
    pub fn entries(&self) -> impl Iterator<Item = &Arc<Skill>> {
        self.skills.values()
    }

    /// Actions domain indexes, by domain.
    pub fn domains(&self) -> impl Iterator<Item = &Arc<Skill>> {
        self.domains.values()
    }

    /// A domain index by domain name.
    pub fn domain(&self, name: &str) -> Option<&Arc<Skill>> {
        self.domains.get(name)
    }

    /// Entries that lost to a same-named one, by name then path.
    pub fn shadowed(&self) -> &[Arc<Skill>] {
        &self.shadowed
    }

    /// Every diagnostic, by path, line and column.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Number of error diagnostics.
    pub fn error_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }

    /// Number of warning diagnostics.
    pub fn warning_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }

    pub(crate) fn entry_map(&self) -> &BTreeMap<String, Arc<Skill>> {
        &self.skills
    }

    pub(crate) fn domain_map(&self) -> &BTreeMap<String, Arc<Skill>> {
        &self.domains
    }

    /// The files of the winning entry for a name (whatever its status): each file's
    /// relative path, size and SHA-256, and the folder digest ([`FileManifest`]).
    pub fn manifest(&self, name: &str) -> Option<&FileManifest> {
        self.entry(name).and_then(|s| self.manifest_of(s))
    }

    /// The files of any entry of this snapshot (a winner, a domain index or a shadowed one),
    /// found by the entry's `path` exactly as the registry wrote it.
    pub fn manifest_of(&self, skill: &Skill) -> Option<&FileManifest> {
        self.manifest_by_path(&skill.path).map(|m| &**m)
    }

    pub(crate) fn manifest_by_path(&self, path: &std::path::Path) -> Option<&Arc<FileManifest>> {
        self.manifests.get(path.as_os_str())
    }

    /// Whether any entry's manifest has content scan findings.
    pub(crate) fn any_findings(&self) -> bool {
        self.manifests.values().any(|m| !m.findings().is_empty())
    }

    pub(crate) fn share_manifests(&mut self, other: &Snapshot) {
        self.manifests = Arc::clone(&other.manifests);
        self.rule = other.rule;
    }

    pub(crate) fn set_manifests(&mut self, manifests: ByPath<Arc<FileManifest>>) {
        self.manifests = Arc::new(manifests);
    }

    /// Whether every entry has the same files as in `other` (compared by pointer first).
    pub(crate) fn same_files(&self, other: &Snapshot) -> bool {
        Arc::ptr_eq(&self.manifests, &other.manifests)
            || self.manifests.len() == other.manifests.len()
                && self.manifests.iter().all(|(p, m)| {
                    other
                        .manifests
                        .get(p)
                        .is_some_and(|o| Arc::ptr_eq(m, o) || **m == **o)
                })
    }

    /// The sources it was loaded from, lowest precedence first.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }
}

/// A snapshot's diagnostics order: by path, line, column and code, without repeats.
pub(crate) fn sort_diagnostics(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(|a, b| {
        a.path
            .cmp(&b.path)
            .then(a.line.cmp(&b.line))
            .then(a.column.cmp(&b.column))
            .then(a.code.cmp(&b.code))
    });
    diagnostics.dedup();
}
