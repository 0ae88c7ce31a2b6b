//! The Agent Skills reference library's checks, with its messages word for word: what strict
//! agentskills mode reports. Python semantics are kept where they differ from Rust's (NFKC
//! before counting, `str.isalnum` by general category).

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

use crate::diagnostic::Code;
use crate::manifest::Finding;
use crate::yaml::{Node, ScalarKind};

use super::{MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, finding};

/// The six fields the Agent Skills reference library allows.
const REFERENCE_FIELDS: &[&str] = &[
    "allowed-tools",
    "compatibility",
    "description",
    "license",
    "metadata",
    "name",
];

/// Python's `str.isalnum` for one character: a letter (L*) or a number (N*) by general
/// category. Rust's `char::is_alphanumeric` differs (it accepts combining marks).
fn is_reference_alnum(c: char) -> bool {
    use GeneralCategory::*;
    matches!(
        get_general_category(c),
        UppercaseLetter
            | LowercaseLetter
            | TitlecaseLetter
            | ModifierLetter
            | OtherLetter
            | DecimalNumber
            | LetterNumber
            | OtherNumber
    )
}

/// NFKC of a string, as the reference applies to names and folder names.
pub fn nfkc(s: &str) -> String {
    // ASCII text is its own NFKC form (the common case: skip the normaliser).
    if s.is_ascii() {
        return s.to_owned();
    }
    s.nfkc().collect()
}

/// The reference library's name checks, messages word for word. `name` is the raw value.
pub(crate) fn reference_name_checks(raw: &str, dir_name: Option<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    let n = nfkc(raw.trim());
    let len = n.chars().count();
    let soft = |code, msg: String| finding(code, "name", false, msg);
    if len > MAX_NAME_CHARS {
        out.push(soft(
            Code::NameTooLong,
            format!("Skill name '{n}' exceeds {MAX_NAME_CHARS} character limit ({len} chars)"),
        ));
    }
    if n != n.to_lowercase() {
        out.push(soft(
            Code::NameNotLowercase,
            format!("Skill name '{n}' must be lowercase"),
        ));
    }
    if n.starts_with('-') || n.ends_with('-') {
        out.push(soft(
            Code::NameHyphenEdge,
            "Skill name cannot start or end with a hyphen".to_owned(),
        ));
    }
    if n.contains("--") {
        out.push(soft(
            Code::NameConsecutiveHyphens,
            "Skill name cannot contain consecutive hyphens".to_owned(),
        ));
    }
    if !n.chars().all(|c| c == '-' || is_reference_alnum(c)) {
        out.push(soft(
            Code::InvalidName,
            format!(
                "Skill name '{n}' contains invalid characters. Only letters, digits, and hyphens are allowed."
            ),
        ));
    }
    if let Some(dir) = dir_name {
        if nfkc(dir) != n {
            out.push(soft(
                Code::NameMismatch,
                format!("Directory name '{dir}' must match skill name '{n}'"),
            ));
        }
    }
    out
}

/// A scalar's text when the node is a scalar (strictyaml reads every scalar as a string).
fn reference_string<'n>(node: &'n Node<'_>) -> Option<&'n str> {
    node.as_scalar()
}

/// The reference library's `validate` over a parsed frontmatter, in its order, with its
/// messages. Divergences decided for this engine (see docs/decisions.md) are marked.
pub(crate) fn reference_checks(root: &Node, dir_name: Option<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    let Node::Map(entries) = root else {
        return out;
    };
    let mut unexpected: Vec<&str> = entries
        .iter()
        .map(|(k, _)| k.as_ref())
        .filter(|k| !REFERENCE_FIELDS.contains(k))
        .collect();
    unexpected.sort_unstable();
    unexpected.dedup();
    if !unexpected.is_empty() {
        out.push(finding(
            Code::UnknownField,
            unexpected[0],
            false,
            format!(
                "Unexpected fields in frontmatter: {}. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed.",
                unexpected.join(", ")
            ),
        ));
    }
    match root.get("name") {
        None => out.push(finding(
            Code::MissingName,
            "name",
            false,
            "Missing required field in frontmatter: name",
        )),
        Some(node) => match reference_string(node) {
            Some(s) if !s.trim().is_empty() => out.extend(reference_name_checks(s, dir_name)),
            _ => out.push(finding(
                Code::InvalidFieldType,
                "name",
                false,
                "Field 'name' must be a non-empty string",
            )),
        },
    }
    match root.get("description") {
        None => out.push(finding(
            Code::MissingDescription,
            "description",
            false,
            "Missing required field in frontmatter: description",
        )),
        Some(node) => match reference_string(node) {
            Some(s) if !s.trim().is_empty() => {
                let len = s.chars().count();
                if len > MAX_DESCRIPTION_CHARS {
                    out.push(finding(
                        Code::DescriptionTooLong,
                        "description",
                        false,
                        format!(
                            "Description exceeds {MAX_DESCRIPTION_CHARS} character limit ({len} chars)"
                        ),
                    ));
                }
            }
            _ => out.push(finding(
                Code::EmptyDescription,
                "description",
                false,
                "Field 'description' must be a non-empty string",
            )),
        },
    }
    if let Some(node) = root.get("compatibility") {
        match reference_string(node) {
            None => out.push(finding(
                Code::InvalidCompatibility,
                "compatibility",
                false,
                "Field 'compatibility' must be a string",
            )),
            Some(s) => {
                let len = s.chars().count();
                if len > MAX_COMPATIBILITY_CHARS {
                    out.push(finding(
                        Code::InvalidCompatibility,
                        "compatibility",
                        false,
                        format!(
                            "Compatibility exceeds {MAX_COMPATIBILITY_CHARS} character limit ({len} chars)"
                        ),
                    ));
                } else if len == 0 {
                    // Divergence: the reference accepts "", the specification says 1-500.
                    out.push(finding(
                        Code::InvalidCompatibility,
                        "compatibility",
                        false,
                        "Field 'compatibility' must be 1-500 characters when present (it is empty)",
                    ));
                }
            }
        }
    }
    // Divergences: the specification types these, the reference does not check them.
    if let Some(node) = root.get("metadata") {
        metadata_strict(node, &mut out);
    }
    if let Some(node) = root.get("allowed-tools") {
        if !matches!(node, Node::Scalar { .. }) {
            out.push(finding(
                Code::AllowedToolsFormat,
                "allowed-tools",
                false,
                format!(
                    "Field 'allowed-tools' must be a space-separated string, found {}",
                    node.type_name()
                ),
            ));
        }
    }
    out
}

fn metadata_strict(node: &Node, out: &mut Vec<Finding>) {
    match node {
        Node::Map(entries) => {
            for (k, v) in entries {
                if !matches!(v, Node::Scalar { .. }) {
                    out.push(finding(
                        Code::InvalidMetadata,
                        "metadata",
                        false,
                        format!(
                            "Field 'metadata' must map strings to strings: 'metadata.{k}' is {}",
                            v.type_name()
                        ),
                    ));
                }
            }
        }
        Node::Scalar {
            kind: ScalarKind::Null,
            ..
        } => {}
        other => out.push(finding(
            Code::InvalidMetadata,
            "metadata",
            false,
            format!(
                "Field 'metadata' must be a mapping of strings to strings, found {}",
                other.type_name()
            ),
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn messages(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(|f| f.message.clone()).collect()
    }

    #[test]
    fn name_length_edge_64_65() {
        let n64 = "a".repeat(64);
        assert!(reference_name_checks(&n64, Some(&n64)).is_empty());
        let n65 = "a".repeat(65);
        assert_eq!(
            messages(&reference_name_checks(&n65, Some(&n65))),
            vec![format!(
                "Skill name '{n65}' exceeds 64 character limit (65 chars)"
            )]
        );
    }

    #[test]
    fn name_length_counts_code_points_after_nfkc() {
        // U+FB01 (the "fi" ligature) becomes two code points under NFKC.
        let name = format!("{}\u{fb01}", "a".repeat(63));
        let f = reference_name_checks(&name, None);
        assert_eq!(f.len(), 1);
        assert!(f[0].message.ends_with("(65 chars)"), "{}", f[0].message);
        let ok = format!("{}é", "a".repeat(63));
        assert!(reference_name_checks(&ok, None).is_empty());
    }

    #[test]
    fn unicode_names_follow_the_reference() {
        for ok in ["技能", "мой-навык", "straße", "café"] {
            assert!(reference_name_checks(ok, None).is_empty(), "{ok}");
        }
        for upper in ["НАВЫК", "Σοφία", "ǅ"] {
            let codes: Vec<_> = reference_name_checks(upper, None)
                .iter()
                .map(|f| f.code)
                .collect();
            assert!(
                codes.contains(&Code::NameNotLowercase),
                "{upper}: {codes:?}"
            );
        }
        // Combining marks are not alphanumeric for Python; Hindi is rejected.
        let codes: Vec<_> = reference_name_checks("हिन्दी", None)
            .iter()
            .map(|f| f.code)
            .collect();
        assert_eq!(codes, vec![Code::InvalidName]);
    }

    #[test]
    fn reference_messages_word_for_word() {
        let f = reference_name_checks("-Bad--name_", Some("folder"));
        assert_eq!(
            messages(&f),
            vec![
                "Skill name '-Bad--name_' must be lowercase".to_owned(),
                "Skill name cannot start or end with a hyphen".to_owned(),
                "Skill name cannot contain consecutive hyphens".to_owned(),
                "Skill name '-Bad--name_' contains invalid characters. Only letters, digits, and hyphens are allowed.".to_owned(),
                "Directory name 'folder' must match skill name '-Bad--name_'".to_owned(),
            ]
        );
    }

    #[test]
    fn ascii_is_its_own_nfkc_form() {
        use unicode_normalization::UnicodeNormalization;
        let all: String = (0u8..128).map(char::from).collect();
        assert_eq!(nfkc(&all), all.nfkc().collect::<String>());
        assert_eq!(nfkc("ﬁle ａｂ"), "file ab");
    }

    #[test]
    fn name_is_trimmed_and_nfkc_before_checks_and_folder_compare() {
        assert!(reference_name_checks("  ab  ", Some("ab")).is_empty());
        // Full-width letters normalise to ASCII under NFKC, on both sides.
        assert!(reference_name_checks("ａｂ", Some("ab")).is_empty());
        assert!(reference_name_checks("ab", Some("ａｂ")).is_empty());
        assert_eq!(reference_name_checks("ab", Some("AB")).len(), 1);
    }
}
