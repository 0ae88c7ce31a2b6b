//! Validation rules per dialect (SPEC section 2): one module per dialect, and the Agent
//! Skills reference checks whose messages strict mode reproduces word for word.
//!
//! [`check`] runs what every dialect shares (keys outside the dialect in strict mode, the
//! name and description as declared, the body's length in strict mode) around the
//! dialect's own rules. Rules return [`Finding`]s; the parse turns them into diagnostics.

mod actions;
mod agentskills;
mod lily;
mod pegasus;
mod reference;
mod text;
mod toolsets;

use std::sync::OnceLock;

use regex::Regex;

use crate::diagnostic::Code;
use crate::dialect::{Dialect, Mode};
use crate::manifest::{Finding, Manifest};
use crate::yaml::Node;

pub use reference::nfkc;
pub use text::{first_paragraph, first_sentence};

/// Longest name, in code points, for agentskills, pegasus and toolsets names.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest agentskills description, in code points.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest toolsets description, in code points.
pub const MAX_TOOLSETS_DESCRIPTION_CHARS: usize = 500;
/// Longest `compatibility`, in code points.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The standard's recommended maximum body length, in lines (a warning in strict mode).
pub const RECOMMENDED_MAX_BODY_LINES: usize = 500;
/// Action names reserved by `get_skill` (`email.all`) and help (`email.help`).
pub const RESERVED_ACTIONS: &[&str] = &["all", "help"];
/// Operating system names lily's `eligibility.os` understands.
pub const KNOWN_OS: &[&str] = &["darwin", "linux", "win32"];
/// Largest compiled size of one trigger pattern, in bytes, compiled as search matches it
/// (case-insensitively, Unicode classes). Real trigger patterns take 2 to 60 KiB (each
/// Unicode `\w` about 50 KiB); a counted repetition of `\w` grows past this, and each
/// pattern costs memory and compile time in proportion.
pub const MAX_PATTERN_SIZE: usize = 256 * 1024;

fn regex(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

fn action_name_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    regex(&RE, r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")
}

fn segment_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    regex(&RE, r"^[a-z][a-z0-9_]*$")
}

fn command_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    regex(&RE, r"^[a-z0-9_-]+$")
}

fn semver_re() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    regex(
        &RE,
        r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$",
    )
}

fn matches(re: Option<&Regex>, s: &str) -> bool {
    re.is_some_and(|re| re.is_match(s))
}

/// A finding-to-be from a rule: code, the key it is about, message, and whether it is hard.
pub(crate) fn finding(code: Code, key: &str, hard: bool, message: impl Into<String>) -> Finding {
    Finding {
        code,
        key: key.to_owned(),
        message: message.into(),
        hard,
    }
}

/// Whether `name` follows the Agent Skills name rule: 1 to [`MAX_NAME_CHARS`] of `a-z`,
/// `0-9` and `-`, with no hyphen at either end and none doubled (the rule the kebab-case
/// dialects check, for doors that must serve only such names).
pub fn is_kebab_name(name: &str) -> bool {
    !name.is_empty() && kebab_name_checks(name, Dialect::AgentSkills).is_empty()
}

/// The ASCII name rule of pegasus and toolsets: `[a-z0-9-]`, 1-64, no edge or double hyphen.
fn kebab_name_checks(name: &str, dialect: Dialect) -> Vec<Finding> {
    let mut out = Vec::new();
    let len = name.chars().count();
    if len > MAX_NAME_CHARS {
        out.push(finding(
            Code::NameTooLong,
            "name",
            false,
            format!(
                "name `{name}` is {len} characters; {dialect} names have at most {MAX_NAME_CHARS}"
            ),
        ));
    }
    if name.chars().any(|c| c.is_uppercase()) {
        out.push(finding(
            Code::NameNotLowercase,
            "name",
            false,
            format!("name `{name}` must be lowercase"),
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c.is_uppercase())
    {
        out.push(finding(
            Code::InvalidName,
            "name",
            false,
            format!("name `{name}` may only hold a-z, 0-9 and `-`"),
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push(finding(
            Code::NameHyphenEdge,
            "name",
            false,
            format!("name `{name}` must not start or end with `-`"),
        ));
    }
    if name.contains("--") {
        out.push(finding(
            Code::NameConsecutiveHyphens,
            "name",
            false,
            format!("name `{name}` must not contain `--`"),
        ));
    }
    out
}

/// Where a file sits, which decides its path-derived name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `<folder>/SKILL.md`: a skill folder, or a domain index when it declares `domain`.
    Folder {
        /// The folder's name.
        folder_name: String,
    },
    /// `<domain>/<action>.md` inside an actions domain folder.
    Action {
        /// The domain folder's name.
        domain: String,
        /// The file stem.
        action: String,
    },
    /// A markdown note in a notes folder: a skill only when it has `name` and `description`.
    Note {
        /// The file stem.
        stem: String,
    },
}

impl Origin {
    /// `<folder_name>/SKILL.md`.
    pub fn folder(folder_name: impl Into<String>) -> Self {
        Origin::Folder {
            folder_name: folder_name.into(),
        }
    }
}

/// What validation concluded about names and descriptions.
pub(crate) struct Resolved {
    pub name: String,
    pub description: String,
}

/// What every dialect's rules read: the file, its frontmatter, and the name and description
/// as declared (trimmed; `None` when absent or empty).
#[derive(Clone, Copy)]
struct Context<'a> {
    dialect: Dialect,
    mode: Mode,
    origin: &'a Origin,
    /// The raw frontmatter (`None` when the file has none).
    root: Option<&'a Node<'a>>,
    m: &'a Manifest,
    body: &'a str,
    /// The name the file's place gives it.
    path_name: &'a str,
    /// The skill folder's name, for folder skills.
    dir_name: Option<&'a str>,
    declared_name: Option<&'a str>,
    declared_description: Option<&'a str>,
}

/// Rules of each dialect over a typed manifest. Returns findings and the resolved name and
/// description. `root` is the raw frontmatter (None when the file has none).
pub(crate) fn check(
    dialect: Dialect,
    mode: Mode,
    origin: &Origin,
    root: Option<&Node>,
    m: &Manifest,
    body: &str,
) -> (Vec<Finding>, Resolved) {
    let mut out = Vec::new();
    let path_name = match origin {
        Origin::Folder { folder_name } => folder_name.clone(),
        Origin::Action { domain, action } => format!("{domain}.{action}"),
        Origin::Note { stem } => stem.clone(),
    };
    let dir_name = match origin {
        Origin::Folder { folder_name } => Some(folder_name.as_str()),
        _ => None,
    };
    let declared_name = m.name.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let declared_description = m
        .description
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());

    // Strict mode reports keys outside the dialect.
    if mode == Mode::Strict && dialect != Dialect::AgentSkills {
        if let Some(Node::Map(entries)) = root {
            for (k, _) in entries {
                if !dialect.keys().contains(&k.as_ref()) {
                    out.push(finding(
                        Code::UnknownField,
                        k,
                        false,
                        format!("`{k}` is not a {dialect} field; it is kept but has no effect"),
                    ));
                }
            }
        }
    }

    let mut resolved = Resolved {
        name: declared_name
            .map(str::to_owned)
            .unwrap_or(path_name.clone()),
        description: declared_description.map(str::to_owned).unwrap_or_default(),
    };
    let c = Context {
        dialect,
        mode,
        origin,
        root,
        m,
        body,
        path_name: &path_name,
        dir_name,
        declared_name,
        declared_description,
    };
    let rules = match dialect {
        Dialect::AgentSkills => agentskills::rules,
        Dialect::Pegasus => pegasus::rules,
        Dialect::Toolsets => toolsets::rules,
        Dialect::Lily => lily::rules,
        Dialect::Actions => actions::rules,
    };
    rules(&c, &mut out, &mut resolved);

    if mode == Mode::Strict {
        let lines = body.lines().count();
        if lines > RECOMMENDED_MAX_BODY_LINES {
            out.push(finding(
                Code::BodyTooLong,
                "",
                false,
                format!(
                    "the body has {lines} lines; the standard recommends under {RECOMMENDED_MAX_BODY_LINES}: move detail into references/"
                ),
            ));
        }
    }
    (out, resolved)
}

fn missing_description_message(present_but_empty: bool) -> (Code, String) {
    if present_but_empty {
        (
            Code::EmptyDescription,
            "`description` is empty: say what the skill does and when to use it; the skill is excluded".to_owned(),
        )
    } else {
        (
            Code::MissingDescription,
            "no `description`: add one saying what the skill does and when to use it; the skill is excluded".to_owned(),
        )
    }
}

#[cfg(test)]
mod name_rule_tests {
    use super::{MAX_NAME_CHARS, is_kebab_name};

    #[test]
    fn the_name_rule_at_its_edges() {
        assert!(is_kebab_name("a"));
        assert!(is_kebab_name("a-1"));
        assert!(is_kebab_name(&"a".repeat(MAX_NAME_CHARS)));
        assert!(!is_kebab_name(&"a".repeat(MAX_NAME_CHARS + 1)));
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a.b", "é"] {
            assert!(!is_kebab_name(bad), "{bad}");
        }
    }
}
