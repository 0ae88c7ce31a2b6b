//! The `[trust]` table of `serve`'s configuration file and a source's `trust` key, turned
//! into the registry's [`TrustPolicy`] and [`Trust`] levels.

use std::path::PathBuf;

use serde::Deserialize;
use skill_runtime::format::Severity;
use skill_runtime::registry::{Trust, TrustPolicy};

/// `[trust]` in the configuration file; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TrustConfig {
    /// `error` (default) or `warning`: findings at or above it exclude a low-trust skill.
    exclude_at: Option<String>,
    /// Load low-trust skills whatever their findings.
    allow_low_trust_findings: Option<bool>,
    /// Let the scripts of low-trust skills run.
    allow_low_trust_scripts: Option<bool>,
    /// Serve only skills whose files match this lock file (relative to the config file).
    pub(crate) require_lock: Option<PathBuf>,
    /// Serve the lock only when its minisign signature (`<lock>.minisig`) verifies with the
    /// public key in this file (relative to the config file); needs `require_lock`.
    pub(crate) require_signature: Option<PathBuf>,
    /// Mark skills from low-trust sources in the catalog (`[untrusted source] `).
    mark_low_trust: Option<bool>,
}

impl TrustConfig {
    /// The registry's policy.
    pub(crate) fn policy(&self) -> Result<TrustPolicy, String> {
        let mut p = TrustPolicy::default();
        if let Some(s) = &self.exclude_at {
            p.exclude_at = severity_named(s)?;
        }
        p.allow_low_trust_findings = self.allow_low_trust_findings.unwrap_or(false);
        p.allow_low_trust_scripts = self.allow_low_trust_scripts.unwrap_or(false);
        p.require_lock = self.require_lock.clone();
        if self.require_signature.is_some() && self.require_lock.is_none() {
            return Err(
                "[trust] require_signature checks the lock's signature: set require_lock too"
                    .to_owned(),
            );
        }
        p.require_signature = self.require_signature.clone();
        p.mark_low_trust = self.mark_low_trust.unwrap_or(false);
        Ok(p)
    }
}

/// A severity by its lowercase name.
pub(crate) fn severity_named(name: &str) -> Result<Severity, String> {
    match name {
        "warning" => Ok(Severity::Warning),
        "error" => Ok(Severity::Error),
        other => Err(format!("unknown severity `{other}`: use warning or error")),
    }
}

/// A trust level by its lowercase name.
pub(crate) fn trust_named(name: &str) -> Result<Trust, String> {
    match name {
        "low" => Ok(Trust::Low),
        "medium" => Ok(Trust::Medium),
        "high" => Ok(Trust::High),
        other => Err(format!(
            "unknown trust level `{other}`: use low, medium or high"
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_bad_ones_say_what_to_use() {
        assert_eq!(trust_named("medium").unwrap(), Trust::Medium);
        assert!(
            trust_named("max")
                .unwrap_err()
                .contains("low, medium or high")
        );
        assert_eq!(severity_named("warning").unwrap(), Severity::Warning);
        assert!(
            severity_named("info")
                .unwrap_err()
                .contains("warning or error")
        );
        let c: TrustConfig = toml::from_str(
            "exclude_at = \"warning\"\nallow_low_trust_scripts = true\nrequire_lock = \"l.json\"\n",
        )
        .unwrap();
        let p = c.policy().unwrap();
        assert_eq!(p.exclude_at, Severity::Warning);
        assert!(p.allow_low_trust_scripts && !p.allow_low_trust_findings);
        assert_eq!(p.require_lock, Some(PathBuf::from("l.json")));
        assert_eq!(p.require_signature, None);
        let c: TrustConfig = toml::from_str("require_signature = \"k.pub\"\n").unwrap();
        assert!(c.policy().unwrap_err().contains("set require_lock too"));
        let c: TrustConfig =
            toml::from_str("require_lock = \"l.json\"\nrequire_signature = \"k.pub\"\n").unwrap();
        assert_eq!(
            c.policy().unwrap().require_signature,
            Some(PathBuf::from("k.pub"))
        );
    }
}
