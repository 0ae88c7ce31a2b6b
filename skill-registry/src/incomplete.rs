//! The `manifest-incomplete` finding: a skill whose files a manifest could not all list and
//! hash (past the listing's limits, too large, unreadable). Those files are not hashed,
//! scanned or served, so the finding is an error: `audit` reports it and a low-trust
//! source excludes the skill (fail closed). `manifest.rs` adds it when it computes a
//! manifest; the limits it names come from there.

use skill_format::{Code, Diagnostic};

use crate::files::FileManifest;
use crate::skill::Skill;

/// How many files without a digest the finding names.
const MAX_UNHASHED_NAMED: usize = 5;

/// The limits the finding names.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The most files a listing takes.
    pub(crate) entries: usize,
    /// How deep a listing goes.
    pub(crate) depth: usize,
    /// The largest file hashed.
    pub(crate) file_bytes: u64,
    /// The most bytes hashed for one skill.
    pub(crate) skill_bytes: u64,
}

/// The finding of `manifest` (`cut`: the listing's `too_many` and `too_deep`, `None` when
/// the folder could not be listed).
pub(crate) fn finding(
    skill: &Skill,
    manifest: &FileManifest,
    cut: Option<(bool, bool)>,
    limits: Limits,
) -> Diagnostic {
    let mut why = Vec::new();
    match cut {
        Some((too_many, too_deep)) => {
            if too_many {
                why.push(format!(
                    "it has more than {} files (the rest are not listed)",
                    limits.entries
                ));
            }
            if too_deep {
                why.push(format!(
                    "it has folders deeper than {} levels (not entered)",
                    limits.depth
                ));
            }
        }
        None => why.push("its folder could not be listed".to_owned()),
    }
    let unhashed: Vec<&str> = manifest
        .files()
        .iter()
        .filter(|f| f.sha256.is_none())
        .map(|f| f.path.as_str())
        .collect();
    if !unhashed.is_empty() {
        let named = unhashed[..unhashed.len().min(MAX_UNHASHED_NAMED)].join(", ");
        let more = unhashed.len().saturating_sub(MAX_UNHASHED_NAMED);
        why.push(format!(
            "{} file(s) could not be hashed (over {} bytes, past {} bytes in all, or unreadable): {named}{}",
            unhashed.len(),
            limits.file_bytes,
            limits.skill_bytes,
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    Diagnostic::error(
        Code::ManifestIncomplete,
        &skill.path,
        format!(
            "`{}`: {}; those files are not hashed or scanned and no door serves or runs them: split the skill or remove what it does not need",
            skill.name,
            why.join("; ")
        ),
    )
}
