//! Served names a reader cannot tell apart (`lookalike-name` warnings).
//!
//! Two layers may serve `pdf-forms` and `pdf-fоrms` (a Cyrillic `о`), `café` written
//! composed and decomposed, or `Report` and `report`: different names to the registry and
//! the router, the same name to the person reading a catalog or approving a model's
//! command. Each such name is reported, naming the others.
//!
//! Two names look alike when their keys are equal: the name in NFKC, lowercased, then its
//! UTS #39 skeleton (the confusables mapping rustc's own lint uses). Only groups in which
//! some name has a capital letter or a character outside ASCII are reported: lowercase
//! ASCII names that skeletons would also join (`rn` and `m`, `l` and `1`) are left alone,
//! as every reader sees those letters as written. So a registry whose names are all
//! lowercase ASCII, the common case, costs one pass over the names and no key at all.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use skill_format::{Code, Diagnostic};
use unicode_security::skeleton;

use crate::skill::Skill;

/// Whether a name could look like another name without being lowercase ASCII itself.
fn is_odd(name: &str) -> bool {
    name.bytes()
        .any(|b| !b.is_ascii() || b.is_ascii_uppercase())
}

/// The key two look-alike names share (see the module's documentation).
fn key(name: &str) -> String {
    skeleton(&skill_format::nfkc(name).to_lowercase()).collect()
}

/// Replace the `lookalike-name` warnings in `diagnostics` with those of `entries` (the
/// served skills, or the served domain indexes; pass each map): one warning at each name
/// of a look-alike group, naming the others.
pub(crate) fn refresh(maps: &[&BTreeMap<String, Arc<Skill>>], diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.retain(|d| d.code != Code::LookalikeName);
    for entries in maps {
        if !entries.keys().any(|n| is_odd(n)) {
            continue;
        }
        let mut groups: HashMap<String, Vec<&Skill>> = HashMap::new();
        for (name, skill) in entries.iter() {
            groups.entry(key(name)).or_default().push(skill);
        }
        // The map's order (by name), so that the warnings come out the same every time.
        let mut found: Vec<&Vec<&Skill>> = groups
            .values()
            .filter(|g| g.len() > 1 && g.iter().any(|s| is_odd(&s.name)))
            .collect();
        found.sort_by(|a, b| a.first().map(|s| &s.name).cmp(&b.first().map(|s| &s.name)));
        for group in found {
            for skill in group {
                let others: Vec<String> = group
                    .iter()
                    .filter(|o| o.name != skill.name)
                    .map(|o| format!("`{}` ({})", o.name, o.path.display()))
                    .collect();
                diagnostics.push(Diagnostic::warning(
                    Code::LookalikeName,
                    &skill.path,
                    format!(
                        "`{}` looks like {}: only letter case, Unicode normalization or look-alike characters tell them apart, so a reader (or a model) can take one for the other; rename one of them",
                        skill.name,
                        others.join(", ")
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn skill(name: &str) -> Arc<Skill> {
        crate::test_util::skill(name, "")
    }

    fn warned(names: &[&str]) -> Vec<String> {
        let map: BTreeMap<String, Arc<Skill>> =
            names.iter().map(|n| ((*n).to_owned(), skill(n))).collect();
        let mut diagnostics = vec![Diagnostic::warning(
            Code::LookalikeName,
            "stale/SKILL.md",
            "from an earlier snapshot",
        )];
        refresh(&[&map], &mut diagnostics);
        diagnostics
            .iter()
            .map(|d| {
                assert_eq!(d.code, Code::LookalikeName);
                d.path.to_string_lossy().into_owned()
            })
            .collect()
    }

    #[test]
    fn confusables_case_and_normalization_are_reported_at_each_name() {
        // A Cyrillic `о` in the middle.
        assert_eq!(
            warned(&["pdf-forms", "pdf-f\u{43e}rms", "other"]),
            ["pdf-forms/SKILL.md", "pdf-f\u{43e}rms/SKILL.md"]
        );
        // Composed and decomposed `é` (in the order of the names' bytes).
        assert_eq!(
            warned(&["caf\u{e9}", "cafe\u{301}"]),
            ["cafe\u{301}/SKILL.md", "caf\u{e9}/SKILL.md"]
        );
        // Letter case, with a space as Composio-style names have.
        assert_eq!(
            warned(&["Excel Automation", "excel automation", "excel-automation"]),
            ["Excel Automation/SKILL.md", "excel automation/SKILL.md"]
        );
        // A fullwidth letter is its ASCII letter under NFKC.
        assert_eq!(warned(&["\u{ff41}pi", "api"]).len(), 2);
    }

    #[test]
    fn lowercase_ascii_names_are_left_alone_and_stale_warnings_go() {
        // Skeletons join `rn` and `m`, and `1` and `l`: every reader sees those as written.
        assert!(warned(&["modern", "rnodern", "tool-1", "tool-l"]).is_empty());
        assert!(warned(&[]).is_empty());
        // A capital letter or a non-ASCII name alone, with nothing like it, is fine.
        assert!(warned(&["Report", "caf\u{e9}", "notes"]).is_empty());
    }

    #[test]
    fn the_message_names_the_others_with_their_paths() {
        let map: BTreeMap<String, Arc<Skill>> = ["Notes", "notes", "NOTES"]
            .iter()
            .map(|n| ((*n).to_owned(), skill(n)))
            .collect();
        let mut diagnostics = Vec::new();
        refresh(&[&map], &mut diagnostics);
        assert_eq!(diagnostics.len(), 3);
        let first = diagnostics.first().unwrap();
        assert_eq!(first.path.to_string_lossy(), "NOTES/SKILL.md");
        assert!(
            first
                .message
                .contains("`Notes` (Notes/SKILL.md), `notes` (notes/SKILL.md)"),
            "{}",
            first.message
        );
    }
}
