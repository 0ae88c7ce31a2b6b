//! Validation rules per dialect (SPEC section 2), and the Agent Skills reference checks whose
//! messages are reproduced word for word in strict mode.

use std::sync::OnceLock;

use regex::Regex;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

use crate::diagnostic::Code;
use crate::dialect::{Dialect, Mode};
use crate::manifest::{Finding, InvocationMode, Manifest, ToolListStyle};
use crate::yaml::{Node, ScalarKind};

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
/// Largest compiled size of one trigger pattern, in bytes (guards against huge regexes).
pub const MAX_PATTERN_SIZE: usize = 1 << 20;

/// The six fields the Agent Skills reference library allows.
const REFERENCE_FIELDS: &[&str] = &[
    "allowed-tools",
    "compatibility",
    "description",
    "license",
    "metadata",
    "name",
];

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
    s.nfkc().collect()
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
fn reference_string(node: &Node) -> Option<&str> {
    node.as_scalar()
}

/// The reference library's `validate` over a parsed frontmatter, in its order, with its
/// messages. Divergences decided for this engine (see ARCHITECTURE.md) are marked.
pub(crate) fn reference_checks(root: &Node, dir_name: Option<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    let Node::Map(entries) = root else {
        return out;
    };
    let mut unexpected: Vec<&str> = entries
        .iter()
        .map(|(k, _)| k.as_str())
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

/// What validation concluded about names and descriptions.
pub(crate) struct Resolved {
    pub name: String,
    pub description: String,
}

/// The first paragraph of a body: headings, fences and blank lines before it are skipped.
pub fn first_paragraph(body: &str) -> String {
    let mut lines = Vec::new();
    let mut in_fence = false;
    for line in body.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            if !lines.is_empty() {
                break;
            }
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            if lines.is_empty() {
                continue;
            }
            break;
        }
        lines.push(t);
    }
    lines.join(" ")
}

/// The first sentence of a text: up to and including the first `.`, `!` or `?` that ends a
/// word, or the whole text.
pub fn first_sentence(text: &str) -> String {
    let t = text.trim();
    let mut prev_end = None;
    for (i, c) in t.char_indices() {
        if let Some(end) = prev_end {
            if c.is_whitespace() {
                return t[..end].to_owned();
            }
            prev_end = None;
        }
        if matches!(c, '.' | '!' | '?') {
            prev_end = Some(i + c.len_utf8());
        }
    }
    t.to_owned()
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
                if !dialect.keys().contains(&k.as_str()) {
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

    let mut name = declared_name
        .map(str::to_owned)
        .unwrap_or(path_name.clone());
    let mut description = declared_description.map(str::to_owned).unwrap_or_default();

    match dialect {
        Dialect::AgentSkills => {
            if mode == Mode::Strict {
                if let Some(root) = root {
                    out.extend(reference_checks(root, dir_name));
                }
            } else {
                agentskills_lenient(m, dir_name, &path_name, declared_name, &mut out);
            }
            if declared_description.is_none() {
                let (code, msg) = missing_description_message(m.description.is_some());
                if mode == Mode::Lenient {
                    out.push(finding(code, "description", true, msg));
                } else {
                    // The reference message is already in `out`; make it exclude the skill.
                    for f in out.iter_mut().filter(|f| f.key == "description") {
                        f.hard = true;
                    }
                }
            }
            if mode == Mode::Lenient {
                if let Some(style) = m.allowed_tools_style {
                    if style != ToolListStyle::Spaces {
                        out.push(finding(
                            Code::AllowedToolsFormat,
                            "allowed-tools",
                            false,
                            format!(
                                "`allowed-tools` is {}; the standard wants one space-separated string such as `Read Bash(git:*)`",
                                if style == ToolListStyle::List { "a YAML list" } else { "comma-separated" }
                            ),
                        ));
                    }
                }
            }
        }
        Dialect::Pegasus => {
            if let Some(n) = declared_name {
                out.extend(kebab_name_checks(n, dialect));
            }
            if declared_description.is_none() {
                description = first_paragraph(body);
                if description.is_empty() {
                    out.push(finding(
                        Code::MissingDescription,
                        "description",
                        true,
                        "no `description` and no first paragraph in the body to take it from: add a `description:` saying when to use the skill",
                    ));
                }
            }
        }
        Dialect::Toolsets => {
            match declared_name {
                Some(n) => out.extend(kebab_name_checks(n, dialect)),
                None => out.push(finding(
                    Code::MissingName,
                    "name",
                    false,
                    format!("no `name`: the toolsets dialect requires one; using the folder name `{path_name}`"),
                )),
            }
            if declared_description.is_none() {
                let (code, msg) = missing_description_message(m.description.is_some());
                out.push(finding(code, "description", true, msg));
            } else {
                let len = description.chars().count();
                if len > MAX_TOOLSETS_DESCRIPTION_CHARS {
                    out.push(finding(
                        Code::DescriptionTooLong,
                        "description",
                        false,
                        format!(
                            "description is {len} characters; toolsets descriptions have at most {MAX_TOOLSETS_DESCRIPTION_CHARS}"
                        ),
                    ));
                }
            }
            if let Some(v) = &m.version {
                if !matches(semver_re(), v) {
                    out.push(finding(
                        Code::InvalidVersion,
                        "version",
                        false,
                        format!("version `{v}` is not semantic versioning (MAJOR.MINOR.PATCH, e.g. `1.0.0`)"),
                    ));
                }
            }
            for p in &m.triggers.patterns {
                if let Err(e) = regex::RegexBuilder::new(p)
                    .size_limit(MAX_PATTERN_SIZE)
                    .build()
                {
                    let first = e.to_string().lines().last().unwrap_or("").trim().to_owned();
                    out.push(finding(
                        Code::InvalidTriggerPattern,
                        "triggers",
                        false,
                        format!("trigger pattern `{p}` does not compile ({first}); it is ignored"),
                    ));
                }
            }
        }
        Dialect::Lily => {
            if let Some(summary) = m.summary.as_deref().map(str::trim) {
                description = summary.to_owned();
            }
            if m.invocation_mode == Some(InvocationMode::ToolDispatch)
                && m.command_tool
                    .as_deref()
                    .is_none_or(|t| t.trim().is_empty())
            {
                out.push(finding(
                    Code::MissingCommandTool,
                    "invocation_mode",
                    true,
                    "`invocation_mode: tool_dispatch` needs `command_tool` naming the tool to call; the skill is excluded",
                ));
            }
            if let Some(c) = &m.command {
                if !matches(command_re(), c) {
                    out.push(finding(
                        Code::InvalidCommand,
                        "command",
                        true,
                        format!("command `{c}` must match ^[a-z0-9_-]+$; the skill is excluded"),
                    ));
                }
            }
            if let Some(e) = &m.eligibility {
                for os in &e.os {
                    if !KNOWN_OS.contains(&os.as_str()) {
                        out.push(finding(
                            Code::InvalidFieldValue,
                            "eligibility",
                            false,
                            format!("eligibility.os `{os}` is not one of darwin, linux, win32"),
                        ));
                    }
                }
            }
        }
        Dialect::Actions => match origin {
            Origin::Action { domain, action } => {
                name = path_name.clone();
                if !matches(segment_re(), domain) || !matches(segment_re(), action) {
                    out.push(finding(
                        Code::InvalidName,
                        "name",
                        true,
                        format!(
                            "path-derived name `{path_name}` must match ^[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*$: rename the file or folder"
                        ),
                    ));
                } else if RESERVED_ACTIONS.contains(&action.as_str()) {
                    out.push(finding(
                        Code::ReservedName,
                        "name",
                        true,
                        format!("`{path_name}` is reserved (`{domain}.all` and `{domain}.help` address the whole domain): rename the file"),
                    ));
                }
                match declared_name {
                    None => out.push(finding(
                        Code::MissingName,
                        "name",
                        false,
                        format!("no `name`: add `name: {path_name}`"),
                    )),
                    Some(n) if n != path_name => {
                        let detail = if matches(action_name_re(), n) {
                            String::new()
                        } else {
                            " (and it is not `domain.action`)".to_owned()
                        };
                        out.push(finding(
                            Code::NameMismatch,
                            "name",
                            false,
                            format!(
                                "name `{n}` differs from the path-derived name `{path_name}`{detail}; the skill is routed as `{path_name}`"
                            ),
                        ));
                    }
                    Some(_) => {}
                }
                if declared_description.is_none() {
                    let (code, msg) = missing_description_message(m.description.is_some());
                    out.push(finding(code, "description", true, msg));
                }
            }
            _ => {
                // A domain index.
                let domain = m.domain.as_deref().map(str::trim).unwrap_or_default();
                name = path_name.clone();
                if !matches(segment_re(), &path_name) {
                    out.push(finding(
                        Code::InvalidName,
                        "domain",
                        true,
                        format!("domain folder `{path_name}` must match ^[a-z][a-z0-9_]*$"),
                    ));
                }
                if domain != path_name {
                    out.push(finding(
                        Code::NameMismatch,
                        "domain",
                        false,
                        format!("`domain: {domain}` differs from the folder name `{path_name}`; the folder name is used"),
                    ));
                }
                if declared_description.is_none() {
                    out.push(finding(
                        Code::MissingDescription,
                        "description",
                        false,
                        "the domain index has no `description`; `get_skill` lists domains by it",
                    ));
                }
            }
        },
    }

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
    (out, Resolved { name, description })
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

fn agentskills_lenient(
    m: &Manifest,
    dir_name: Option<&str>,
    path_name: &str,
    declared_name: Option<&str>,
    out: &mut Vec<Finding>,
) {
    match declared_name {
        None => out.push(finding(
            Code::MissingName,
            "name",
            false,
            format!("no `name`: using the folder name `{path_name}`; add `name: {path_name}`"),
        )),
        Some(n) => out.extend(reference_name_checks(n, dir_name)),
    }
    if let Some(d) = &m.description {
        let len = d.chars().count();
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
    if let Some(c) = &m.compatibility {
        let len = c.chars().count();
        if len == 0 || len > MAX_COMPATIBILITY_CHARS {
            out.push(finding(
                Code::InvalidCompatibility,
                "compatibility",
                false,
                format!(
                    "`compatibility` is {len} characters; it must be 1-{MAX_COMPATIBILITY_CHARS}"
                ),
            ));
        }
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
    fn name_is_trimmed_and_nfkc_before_checks_and_folder_compare() {
        assert!(reference_name_checks("  ab  ", Some("ab")).is_empty());
        // Full-width letters normalise to ASCII under NFKC, on both sides.
        assert!(reference_name_checks("ａｂ", Some("ab")).is_empty());
        assert!(reference_name_checks("ab", Some("ａｂ")).is_empty());
        assert_eq!(reference_name_checks("ab", Some("AB")).len(), 1);
    }

    #[test]
    fn first_paragraph_skips_headings() {
        assert_eq!(
            first_paragraph("# Title\n\nLine one\nline two\n\nNext"),
            "Line one line two"
        );
        assert_eq!(first_paragraph("```\ncode\n```\nText"), "Text");
        assert_eq!(first_paragraph("# Only a title\n"), "");
    }

    #[test]
    fn first_sentence_rules() {
        assert_eq!(first_sentence("Does a thing. Then more."), "Does a thing.");
        assert_eq!(
            first_sentence("Version 1.2 is here! Yes"),
            "Version 1.2 is here!"
        );
        assert_eq!(first_sentence("No end"), "No end");
    }
}
