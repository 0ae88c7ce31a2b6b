//! The crate's error type. Problems in skill files are diagnostics in the snapshot; this
//! type covers lookups and operations that fail as a whole. The texts of the lookup errors
//! are the seeds' (`Unknown domain: x`, `Unknown skill: x`), followed by the closest existing
//! names, because they are shown to the model as well as to people.

use std::path::PathBuf;

/// Why a skill that exists cannot be disclosed or used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unavailable {
    /// The profile is in the skill's `exclude_from_prompt_profile_ids`.
    Profile,
    /// The skill sets `disable-model-invocation` and the model asked for it.
    ModelInvocationDisabled,
    /// The skill sets `user-invocable: false` and a user asked for it.
    NotUserInvocable,
    /// The skill has errors.
    Invalid,
    /// The skill fails eligibility on this host.
    Ineligible,
    /// The trust policy excluded the skill (scan findings from a low-trust source, or a
    /// lock it does not match): [`Error::Excluded`] carries the reason.
    Excluded,
}

/// An error from `skill-registry`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No skill has this name.
    #[error("Unknown skill: {name}{}", did_you_mean(suggestions))]
    UnknownSkill {
        /// The name asked for.
        name: String,
        /// The closest existing names, best first.
        suggestions: Vec<String>,
    },
    /// `load_skill` for a name no skill this caller may load has: the seed's text
    /// (agent-skills-integration 3.8), `Skill 'x' not found. Available: ...`, then the
    /// closest names.
    #[error(
        "Skill '{name}' not found. Available: {}{}",
        available_list(available, *more),
        did_you_mean(suggestions)
    )]
    SkillNotFound {
        /// The name asked for.
        name: String,
        /// The skills this caller may load, by name (at most
        /// [`MAX_AVAILABLE_NAMES`](crate::MAX_AVAILABLE_NAMES)).
        available: Vec<String>,
        /// How many more could be loaded but are not named.
        more: usize,
        /// The closest existing names, best first.
        suggestions: Vec<String>,
    },
    /// No actions domain has this name.
    #[error("Unknown domain: {domain}{}", did_you_mean(suggestions))]
    UnknownDomain {
        /// The domain asked for.
        domain: String,
        /// The closest existing domains and skill names, best first.
        suggestions: Vec<String>,
    },
    /// `get_skill: <domain>.all` for a domain with no skills.
    #[error("Unknown domain or no skills: {domain}{}", did_you_mean(suggestions))]
    EmptyDomain {
        /// The domain asked for.
        domain: String,
        /// The closest domains that have skills, best first.
        suggestions: Vec<String>,
    },
    /// A scoped listing named skills that do not exist (none is dropped silently).
    #[error("Unknown skills for the scoped listing: {}", unknown_list(names))]
    UnknownSkills {
        /// Each unknown name with its closest existing names.
        names: Vec<(String, Vec<String>)>,
    },
    /// The skill exists but may not be used by this caller or profile.
    #[error("{}", unavailable(name, *reason))]
    NotAvailable {
        /// The skill.
        name: String,
        /// Why.
        reason: Unavailable,
    },
    /// The trust policy excluded the skill ([`Skill::exclusion`](crate::Skill::exclusion)):
    /// no door serves its body, files or sections.
    #[error("Skill '{name}' is excluded by the trust policy ({code}): {reason}")]
    Excluded {
        /// The skill.
        name: String,
        /// The diagnostic code of the exclusion (`untrusted-findings`, `lock-mismatch`,
        /// `lock-unreadable`).
        code: skill_format::Code,
        /// The exclusion diagnostic's message.
        reason: String,
    },
    /// A section slug the skill does not have (`get_skill: name#slug`).
    #[error(
        "Skill '{skill}' has no section '{slug}'. Sections: {}",
        available_list(valid, *more)
    )]
    UnknownSection {
        /// The skill.
        skill: String,
        /// The slug asked for.
        slug: String,
        /// The skill's slugs in body order (at most
        /// [`MAX_LISTED_SLUGS`](crate::MAX_LISTED_SLUGS)).
        valid: Vec<String>,
        /// How many more slugs there are.
        more: usize,
    },
    /// A resource path that may not be read (absolute, `..` out of the folder, NUL, ...).
    #[error("resource path `{path}` is not allowed: {reason}")]
    ResourcePath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// With `require_lock`, the bytes of a file as read now are not those the lock (and the
    /// manifest the skill was admitted with) names: it was changed after the load, and is
    /// not served or run.
    #[error(
        "`{path}` of skill `{skill}` does not match the lock: its bytes changed after the skill was loaded, so it is not served or run; review the change, then run `skill-server lock` again (or restore the file)"
    )]
    LockMismatch {
        /// The skill.
        skill: String,
        /// The file, relative to the skill's folder.
        path: String,
    },
    /// A file that is not in the skill's manifest (a hidden folder, `node_modules`, a
    /// linked folder, past the listing's limits, or added after the load): not hashed or
    /// scanned, so no door serves or runs it.
    #[error(
        "skill `{skill}` does not serve `{path}`: only the files of its manifest are served or run (not hidden files, `node_modules`, linked folders, files past the listing's limits or added since the load)"
    )]
    NotServed {
        /// The skill.
        skill: String,
        /// The file, relative to the skill's folder.
        path: String,
    },
    /// No such resource in the skill's folder.
    #[error("skill `{skill}` has no resource `{path}`")]
    ResourceNotFound {
        /// The skill.
        skill: String,
        /// The relative path asked for.
        path: String,
    },
    /// The resource is over the read cap.
    #[error("resource `{path}` is {size} bytes; resources are read up to {limit} bytes")]
    ResourceTooLarge {
        /// The relative path.
        path: String,
        /// Its size.
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// The file watcher could not be started or could not watch a source.
    #[error("cannot watch {}: {message}", path.display())]
    Watch {
        /// The path that could not be watched.
        path: PathBuf,
        /// What the platform said.
        message: String,
    },
    /// A file or folder operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A source's namespace breaks the namespace rule ([`Namespace::new`](crate::Namespace::new)).
    #[error(
        "namespace `{namespace}` is not allowed: {reason} (a namespace is 1 to 64 of a-z, 0-9 and inner `-`)"
    )]
    InvalidNamespace {
        /// The namespace as given.
        namespace: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A trust policy that contradicts itself ([`TrustPolicy::check`](crate::TrustPolicy::check)).
    #[error("trust policy: {reason}")]
    Policy {
        /// What is wrong and what to set.
        reason: &'static str,
    },
    /// A lock file (`skill-server lock`) could not be read, parsed or written.
    #[error("lock file {}: {reason}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// What is wrong, in words a person can act on.
        reason: String,
    },
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(". Did you mean: {}?", suggestions.join(", "))
    }
}

fn available_list(available: &[String], more: usize) -> String {
    let mut out = if available.is_empty() {
        "none".to_owned()
    } else {
        available.join(", ")
    };
    if more > 0 {
        out.push_str(&format!(" and {more} more"));
    }
    out
}

fn unknown_list(names: &[(String, Vec<String>)]) -> String {
    names
        .iter()
        .map(|(n, s)| {
            format!(
                "{n}{}",
                did_you_mean(s).replace(". Did", " (did").replace('?', "?)")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn unavailable(name: &str, reason: Unavailable) -> String {
    match reason {
        Unavailable::Profile => format!("Skill '{name}' is not available for this profile."),
        Unavailable::ModelInvocationDisabled => {
            format!("Skill '{name}' can only be invoked by the user (disable-model-invocation).")
        }
        Unavailable::NotUserInvocable => {
            format!("Skill '{name}' cannot be invoked by the user (user-invocable: false).")
        }
        Unavailable::Invalid => {
            format!("Skill '{name}' has errors and is not loaded; see its diagnostics.")
        }
        Unavailable::Ineligible => format!(
            "Skill '{name}' is not available on this host (eligibility); see its diagnostics."
        ),
        Unavailable::Excluded => {
            format!("Skill '{name}' is excluded by the trust policy; see its diagnostics.")
        }
    }
}

impl Error {
    /// [`Error::Excluded`] for a skill the trust policy excluded, `None` for any other.
    pub fn excluded(skill: &crate::Skill) -> Option<Error> {
        skill.exclusion().map(|d| Error::Excluded {
            name: skill.name.clone(),
            code: d.code,
            reason: d.message.clone(),
        })
    }

    /// The error for a skill this caller may not use: [`Error::Excluded`] with its reason
    /// when the trust policy excluded it, [`Error::NotAvailable`] otherwise.
    pub(crate) fn refused(name: &str, reason: Unavailable, skill: &crate::Skill) -> Error {
        if reason == Unavailable::Excluded {
            if let Some(e) = Error::excluded(skill) {
                return e;
            }
        }
        Error::NotAvailable {
            name: name.to_owned(),
            reason,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn lookup_errors_keep_the_seed_text_and_add_suggestions() {
        let e = Error::UnknownDomain {
            domain: "emial".into(),
            suggestions: vec!["email".into()],
        };
        assert_eq!(e.to_string(), "Unknown domain: emial. Did you mean: email?");
        let e = Error::UnknownSkill {
            name: "zzz".into(),
            suggestions: vec![],
        };
        assert_eq!(e.to_string(), "Unknown skill: zzz");
        let e = Error::SkillNotFound {
            name: "pdf-form".into(),
            available: vec!["docx".into(), "pdf-forms".into()],
            more: 0,
            suggestions: vec!["pdf-forms".into()],
        };
        assert_eq!(
            e.to_string(),
            "Skill 'pdf-form' not found. Available: docx, pdf-forms. Did you mean: pdf-forms?"
        );
        let e = Error::SkillNotFound {
            name: "x".into(),
            available: vec!["a".into()],
            more: 2,
            suggestions: vec![],
        };
        assert_eq!(
            e.to_string(),
            "Skill 'x' not found. Available: a and 2 more"
        );
        let e = Error::SkillNotFound {
            name: "x".into(),
            available: vec![],
            more: 0,
            suggestions: vec![],
        };
        assert_eq!(e.to_string(), "Skill 'x' not found. Available: none");
        let e = Error::UnknownSkills {
            names: vec![("a.b".into(), vec!["a.c".into()]), ("q".into(), vec![])],
        };
        assert_eq!(
            e.to_string(),
            "Unknown skills for the scoped listing: a.b (did you mean: a.c?), q"
        );
    }
}
