//! The immutable snapshot of loaded skills that readers share.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use skill_format::{Diagnostic, Dialect, FileKind, Manifest, Severity};

use crate::Source;
use crate::eligibility::{self, Affinity};

/// What became of a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Valid and eligible: in use.
    Loaded,
    /// Has error diagnostics: excluded (no fallback to a lower layer).
    Invalid,
    /// Valid but fails eligibility here: excluded (no fallback to a lower layer).
    Ineligible,
    /// Lost to a same-named skill of higher precedence.
    Shadowed,
}

impl Status {
    /// Lowercase name for output.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Loaded => "loaded",
            Status::Invalid => "invalid",
            Status::Ineligible => "ineligible",
            Status::Shadowed => "shadowed",
        }
    }
}

/// One skill (or actions domain index) as loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The resolved name (`pdf-forms`, `email.send`; notes: the slug of the name).
    pub name: String,
    /// The resolved description.
    pub description: String,
    /// The dialect it was read as.
    pub dialect: Dialect,
    /// Skill or domain index.
    pub kind: FileKind,
    /// The layer of its source.
    pub layer: String,
    /// Index of its source in the configuration (higher wins).
    pub source: usize,
    /// Its file.
    pub path: PathBuf,
    /// Its folder (for actions, the domain folder).
    pub dir: PathBuf,
    /// Its actions domain, if any.
    pub domain: Option<String>,
    /// The typed frontmatter.
    pub manifest: Manifest,
    /// The body, byte for byte.
    pub body: String,
    /// 1-based line where the body starts.
    pub body_line: u32,
    /// What became of it.
    pub status: Status,
    /// Its diagnostics (file, precedence and eligibility).
    pub diagnostics: Vec<Diagnostic>,
}

impl Skill {
    /// Whether the model may invoke it (pegasus `disable-model-invocation` not set).
    pub fn model_invocable(&self) -> bool {
        self.manifest.disable_model_invocation != Some(true)
    }

    /// Whether a user may invoke it by slash command (pegasus `user-invocable` not false).
    pub fn user_invocable(&self) -> bool {
        self.manifest.user_invocable != Some(false)
    }

    /// Its affinity for a profile.
    pub fn affinity(&self, profile: Option<&str>) -> Affinity {
        eligibility::affinity(&self.manifest, profile)
    }
}

/// An immutable view of every source at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    generation: u64,
    skills: BTreeMap<String, Arc<Skill>>,
    domains: BTreeMap<String, Arc<Skill>>,
    shadowed: Vec<Arc<Skill>>,
    diagnostics: Vec<Diagnostic>,
    sources: Vec<Source>,
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
        Snapshot {
            generation,
            skills,
            domains,
            shadowed,
            diagnostics,
            sources,
        }
    }

    /// Increases by one with every reload.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A loaded skill by name.
    pub fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        self.skills.get(name).filter(|s| s.status == Status::Loaded)
    }

    /// The winning entry for a name, whatever its status.
    pub fn entry(&self, name: &str) -> Option<&Arc<Skill>> {
        self.skills.get(name)
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

    /// The sources it was loaded from, lowest precedence first.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }
}
