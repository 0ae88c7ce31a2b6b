//! One loaded entry ([`Skill`]) and what became of it ([`Status`]): the record the snapshot,
//! its name index and every reader share. It depends on nothing else in the crate but
//! eligibility, so the snapshot and the index can both use it without depending on each other.

use std::path::PathBuf;

use skill_format::{Code, Diagnostic, Dialect, FileKind, Manifest, Severity};

use crate::eligibility::{self, Affinity};
use crate::outline::SectionCache;

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
    /// Its outline, computed from `body` on first use and kept (see [`SectionCache`]); a
    /// new skill starts with `SectionCache::default()`.
    pub outline_cache: SectionCache,
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

    /// Why the trust policy excluded it (an `untrusted-findings`, `lock-mismatch` or
    /// `lock-unreadable` error diagnostic), or `None` when it did not. An excluded skill's
    /// body, files and sections are served by no door.
    pub fn exclusion(&self) -> Option<&Diagnostic> {
        if self.status != Status::Invalid {
            return None;
        }
        self.diagnostics.iter().find(|d| {
            d.severity == Severity::Error
                && matches!(
                    d.code,
                    Code::UntrustedFindings | Code::LockMismatch | Code::LockUnreadable
                )
        })
    }
}
