//! The trust policy: what a source's trust level and the content scan decide about loading
//! and running a skill, and the lock check of `require_lock`.
//!
//! It runs after precedence and eligibility, on the snapshot with its manifests: a winner
//! from a [`Trust::Low`] source whose findings reach [`TrustPolicy::exclude_at`] is
//! excluded (`untrusted-findings`) unless [`TrustPolicy::allow_low_trust_findings`] is set
//! (then its findings are listed as warnings); with [`TrustPolicy::require_lock`], a winner
//! whose files do not match the lock is excluded (`lock-mismatch`), and an unreadable lock
//! excludes everything (`lock-unreadable`), and so does, with
//! [`TrustPolicy::require_signature`], a lock whose minisign signature does not verify.
//! Excluded means [`Status::Invalid`], with no
//! fallback to a lower layer. The registry keeps the snapshot from before this pass, so a
//! later reload judges every skill afresh (a lock that now matches lets the skill back in).

use std::collections::BTreeMap;
use std::sync::Arc;

use skill_format::{Code, Diagnostic, Severity};

use crate::lock::{Drift, Lock};
use crate::skill::{Skill, Status};
use crate::snapshot::{Snapshot, sort_diagnostics};
use crate::{RegistryConfig, Trust, TrustPolicy};

/// How many drifted files a `lock-mismatch` diagnostic names.
const MAX_DRIFT_NAMED: usize = 5;

impl RegistryConfig {
    /// The trust level of the source a skill came from (low for an unknown source).
    pub fn trust_of(&self, skill: &Skill) -> Trust {
        self.sources
            .get(skill.source)
            .map_or(Trust::Low, |s| s.trust)
    }

    /// Whether a skill's scripts may run: not from a low-trust source, unless the policy
    /// allows it ([`TrustPolicy::allow_low_trust_scripts`]).
    pub fn may_run_scripts(&self, skill: &Skill) -> bool {
        self.trust.allow_low_trust_scripts || self.trust_of(skill) > Trust::Low
    }
}

impl TrustPolicy {
    /// Whether the policy is coherent: [`TrustPolicy::require_signature`] checks the
    /// signature of the lock [`TrustPolicy::require_lock`] names, so it needs one (a
    /// registry given it alone serves nothing, and says why).
    pub fn check(&self) -> Result<(), crate::Error> {
        if self.require_signature.is_some() && self.require_lock.is_none() {
            return Err(crate::Error::Policy {
                reason: SIGNATURE_WITHOUT_LOCK,
            });
        }
        Ok(())
    }
}

/// Why a policy with `require_signature` and no `require_lock` is refused.
const SIGNATURE_WITHOUT_LOCK: &str = "require_signature checks the signature of the lock require_lock names, and require_lock is not set: set require_lock to the lock file (`skill-server lock` writes it) or remove require_signature";

/// A file's name, as messages write a lock or key file: a `/v1` answer names no folder of
/// the server outside its sources (the diagnostic's own path says where it is).
fn file_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// An error reading the lock or key, without the file's folder.
fn without_folder(e: &crate::Error) -> String {
    match e {
        crate::Error::Lock { path, reason } => format!("lock file {}: {reason}", file_name(path)),
        crate::Error::Io { path, source } => format!("{}: {source}", file_name(path)),
        other => other.to_string(),
    }
}

/// The lock at `path`, its signature checked with the public key at `key` when one is
/// required.
fn read_lock(path: &std::path::Path, key: Option<&std::path::Path>) -> Result<Lock, crate::Error> {
    match key {
        None => Lock::read(path),
        Some(key) => Lock::read_signed(path, &crate::PublicKey::read(key)?),
    }
}

/// Apply the policy to `base` (a snapshot with manifests, before this pass). Returns
/// `base` itself when the policy changes nothing.
pub(crate) fn apply(base: Arc<Snapshot>, config: &RegistryConfig) -> Arc<Snapshot> {
    let policy = &config.trust;
    let lock = match (&policy.require_lock, &policy.require_signature) {
        (Some(path), key) => Some((path, read_lock(path, key.as_deref()))),
        // Fail closed: a signature asked for and nothing to check it on.
        (None, Some(key)) => Some((
            key,
            Err(crate::Error::Policy {
                reason: SIGNATURE_WITHOUT_LOCK,
            }),
        )),
        (None, None) => None,
    };
    let any_low = config.sources.iter().any(|s| s.trust == Trust::Low);
    // Without a lock, only the findings of low-trust skills can change anything.
    if lock.is_none() && (!any_low || !base.any_findings()) {
        return base;
    }
    let mut added: Vec<Diagnostic> = Vec::new();
    // Every entry is judged, loaded or not: an ineligible or invalid skill is still served
    // by name for inspection (detail, files, sections), so a low-trust one with findings,
    // or one that does not match the lock, must carry its exclusion too (an `os` it does
    // not match must not be a way around the scan).
    let mut judge = |skill: &Arc<Skill>| -> Option<Arc<Skill>> {
        let mut extra: Vec<Diagnostic> = Vec::new();
        let mut exclude = false;
        if config.trust_of(skill) == Trust::Low {
            let findings = base.manifest_of(skill).map(|m| m.findings()).unwrap_or(&[]);
            let serious: Vec<&Diagnostic> = findings
                .iter()
                .filter(|d| d.severity >= policy.exclude_at)
                .collect();
            if !serious.is_empty() && !policy.allow_low_trust_findings {
                exclude = true;
                let first = serious[0];
                extra.push(Diagnostic::error(
                    Code::UntrustedFindings,
                    &skill.path,
                    format!(
                        "`{}` comes from the low-trust layer `{}` and the content scan found {} problem(s) (first: {}:{}: {}[{}]); it is not loaded: review and fix it, move it to a trusted source, or set allow_low_trust_findings",
                        skill.name,
                        skill.layer,
                        serious.len(),
                        first.path.display(),
                        first.line.unwrap_or(0),
                        first.severity,
                        first.code,
                    ),
                ));
                extra.extend(serious.into_iter().cloned());
            } else {
                extra.extend(findings.iter().map(|d| Diagnostic {
                    severity: Severity::Warning,
                    ..d.clone()
                }));
            }
        }
        if let Some((path, lock)) = &lock {
            match lock {
                Err(message) => {
                    exclude = true;
                    extra.push(Diagnostic::error(
                        Code::LockUnreadable,
                        path.as_path(),
                        match policy.require_lock {
                            Some(_) => format!(
                                "`{}` is not loaded: require_lock is set and {}",
                                skill.name,
                                without_folder(message)
                            ),
                            None => format!(
                                "`{}` is not loaded: {}",
                                skill.name,
                                without_folder(message)
                            ),
                        },
                    ));
                }
                Ok(lock) => {
                    let drift = match base.manifest_of(skill) {
                        Some(m) => lock.check(&skill.name, &skill.layer, m),
                        None => Drift::NotLocked,
                    };
                    if let Some(message) = drift.describe(MAX_DRIFT_NAMED) {
                        exclude = true;
                        extra.push(Diagnostic::error(
                            Code::LockMismatch,
                            &skill.path,
                            format!(
                                "`{}` ({}) does not match the lock {}: {message}; it is not loaded: review the change, then run `skill-server lock` again",
                                skill.name,
                                skill.layer,
                                file_name(path)
                            ),
                        ));
                    }
                }
            }
        }
        if extra.is_empty() {
            return None;
        }
        let mut s = (**skill).clone();
        if exclude {
            s.status = Status::Invalid;
        }
        added.extend(extra.iter().cloned());
        s.diagnostics.extend(extra);
        Some(Arc::new(s))
    };
    // Judged first, copied only when something changes (most loads change nothing).
    let mut judged: [Vec<(String, Arc<Skill>)>; 2] = [Vec::new(), Vec::new()];
    for (map, out) in [base.entry_map(), base.domain_map()]
        .into_iter()
        .zip(judged.iter_mut())
    {
        for (name, skill) in map {
            if let Some(j) = judge(skill) {
                out.push((name.clone(), j));
            }
        }
    }
    if judged.iter().all(Vec::is_empty) {
        return base;
    }
    let [judged_skills, judged_domains] = judged;
    let mut skills: BTreeMap<String, Arc<Skill>> = base.entry_map().clone();
    skills.extend(judged_skills);
    let mut domains: BTreeMap<String, Arc<Skill>> = base.domain_map().clone();
    domains.extend(judged_domains);
    let mut diagnostics = base.diagnostics().to_vec();
    diagnostics.extend(added);
    sort_diagnostics(&mut diagnostics);
    let mut next = Snapshot::new(
        base.generation(),
        skills,
        domains,
        base.shadowed().to_vec(),
        diagnostics,
        base.sources().to_vec(),
    );
    next.share_manifests(&base);
    Arc::new(next)
}
