//! The registry's configuration: its sources ([`Source`], each with a [`Trust`] level) and
//! everything else loading needs ([`RegistryConfig`], its [`TrustPolicy`]). Plain data, so that a host builds it
//! from its own config file and the loader only reads it.

use std::path::PathBuf;

use skill_format::{Dialect, Mode, Severity};

use crate::{DiscoverOptions, Environment, Layout, Namespace};

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

impl Trust {
    /// Its lowercase name, as a configuration file writes it: `low`, `medium` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Low => "low",
            Trust::Medium => "medium",
            Trust::High => "high",
        }
    }
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
    /// Compute every snapshot's per-file manifests ([`Snapshot::manifest`](crate::Snapshot::manifest): each file read
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

/// What a registry does with trust levels, scan findings and a lock file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPolicy {
    /// Findings at or above this severity exclude a skill from a low-trust source
    /// (default: [`Severity::Error`]).
    pub exclude_at: Severity,
    /// Load low-trust skills whatever their findings (the findings are then listed as
    /// warnings). Default: false.
    pub allow_low_trust_findings: bool,
    /// Let the scripts of low-trust skills run. Default: false.
    pub allow_low_trust_scripts: bool,
    /// Serve only skills whose files match this lock file (`skill-server lock`); it is read
    /// again on every reload. Default: none.
    pub require_lock: Option<PathBuf>,
    /// With [`TrustPolicy::require_lock`], serve only a lock whose minisign signature
    /// (`<lock>.minisig`, see [`signature_path`](crate::signature_path)) verifies with the
    /// public key in this file; otherwise every skill is excluded (`lock-unreadable`).
    /// Default: none.
    pub require_signature: Option<PathBuf>,
    /// Mark skills from low-trust sources in the catalogs a host discloses through the
    /// engine ([`Disclosure::mark_low_trust`](crate::Disclosure::mark_low_trust)). Default:
    /// false.
    pub mark_low_trust: bool,
}

impl Default for TrustPolicy {
    fn default() -> Self {
        TrustPolicy {
            exclude_at: Severity::Error,
            allow_low_trust_findings: false,
            allow_low_trust_scripts: false,
            require_lock: None,
            require_signature: None,
            mark_low_trust: false,
        }
    }
}
