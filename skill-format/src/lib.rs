//! `skill-format`: what a skill file *is*, with no I/O.
//!
//! A skill is a markdown file with YAML frontmatter. This crate owns the document grammar
//! (BOM, LF/CRLF, `---` delimiter lines, `...` closer), reading the frontmatter into a typed
//! [`Manifest`] that is the union of all five dialects' fields (scalar source text kept,
//! unknown keys kept), detecting the [`Dialect`], validating per dialect in a lenient or strict
//! [`Mode`] with [`Diagnostic`]s that carry stable codes and file positions, the man-page body
//! sections and `## Flags` schema, and `$ARGUMENTS` substitution.
//!
//! It is pure: bytes in, [`SkillFile`] out. Finding files on disk, precedence and eligibility
//! belong to `skill-registry`.
//!
//! ```
//! use skill_format::{parse_skill, Origin, ParseOptions};
//!
//! let text = b"---\nname: pdf-forms\ndescription: Fill PDF forms. Use when a form is attached.\n---\n# PDF forms\n";
//! let file = parse_skill(text, &ParseOptions::new("pdf-forms/SKILL.md", Origin::folder("pdf-forms")));
//! assert!(file.is_loadable());
//! assert_eq!(file.name, "pdf-forms");
//! assert_eq!(file.description, "Fill PDF forms. Use when a form is attached.");
//! ```

#![deny(missing_docs)]

pub mod args;
mod diagnostic;
mod dialect;
mod document;
mod error;
mod manifest;
pub mod sections;
mod validate;
pub mod yaml;

use std::path::{Path, PathBuf};

pub use diagnostic::{Code, Diagnostic, Severity};
pub use dialect::{Dialect, Mode, detect};
pub use document::{Document, Frontmatter, UnclosedFrontmatter, split};
pub use error::Error;
pub use manifest::{
    ContextMode, Eligibility, InvocationMode, KNOWN_KEYS, Manifest, ToolListStyle, ToolsetRef,
    Triggers, split_tool_list,
};
pub use validate::{
    KNOWN_OS, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_PATTERN_SIZE,
    MAX_TOOLSETS_DESCRIPTION_CHARS, Origin, RECOMMENDED_MAX_BODY_LINES, RESERVED_ACTIONS,
    first_paragraph, first_sentence, nfkc,
};

use manifest::Finding;
use yaml::Node;

/// Largest skill file read, in bytes. Larger files get a `file-too-large` error.
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;

/// What to parse a file as.
#[derive(Debug, Clone)]
pub struct ParseOptions {
    /// The path shown in diagnostics.
    pub path: PathBuf,
    /// Where the file sits (folder skill, action file, note).
    pub origin: Origin,
    /// The dialect, or `None` to detect it from the frontmatter.
    pub dialect: Option<Dialect>,
    /// Lenient (default) or strict.
    pub mode: Mode,
}

impl ParseOptions {
    /// Options with the dialect detected and lenient mode.
    pub fn new(path: impl Into<PathBuf>, origin: Origin) -> Self {
        ParseOptions {
            path: path.into(),
            origin,
            dialect: None,
            mode: Mode::Lenient,
        }
    }
}

impl Origin {
    /// `<folder_name>/SKILL.md`.
    pub fn folder(folder_name: impl Into<String>) -> Self {
        Origin::Folder {
            folder_name: folder_name.into(),
        }
    }
}

/// What a parsed file turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A skill.
    Skill,
    /// An actions domain index (`<domain>/SKILL.md` with `domain:`).
    DomainIndex,
    /// A markdown note without `name` and `description`: not a skill, no diagnostics.
    NotASkill,
}

/// A parsed and validated skill file.
#[derive(Debug, Clone)]
pub struct SkillFile {
    /// The path given in [`ParseOptions::path`].
    pub path: PathBuf,
    /// The dialect it was read as.
    pub dialect: Dialect,
    /// Skill, domain index, or not a skill.
    pub kind: FileKind,
    /// The resolved name: declared, or derived from the folder or path as the dialect says.
    pub name: String,
    /// The resolved description (lily: `summary`; pegasus: first paragraph when absent),
    /// trimmed; empty when there is none.
    pub description: String,
    /// The typed frontmatter (all defaults when the file has none or it could not be read).
    pub manifest: Manifest,
    /// The body, byte for byte.
    pub body: String,
    /// 1-based line of the file where the body starts.
    pub body_line: u32,
    /// Everything found, in file order where positions exist.
    pub diagnostics: Vec<Diagnostic>,
}

impl SkillFile {
    /// Whether the skill can be used: no error diagnostics and it is a skill or domain index.
    pub fn is_loadable(&self) -> bool {
        self.kind != FileKind::NotASkill && !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The toolsets dialect's brief description: `brief_description`, else the first
    /// sentence of the description.
    pub fn brief(&self) -> String {
        match self.manifest.brief_description.as_deref().map(str::trim) {
            Some(b) if !b.is_empty() => b.to_owned(),
            _ => first_sentence(&self.description),
        }
    }
}

/// The 1-based line and column of byte `offset` in `text` (column in characters).
fn position_of(text: &str, offset: usize) -> (u32, u32) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

fn failed(opts: &ParseOptions, dialect: Dialect, diagnostic: Diagnostic) -> SkillFile {
    SkillFile {
        path: opts.path.clone(),
        dialect,
        kind: FileKind::Skill,
        name: path_name(&opts.origin),
        description: String::new(),
        manifest: Manifest::default(),
        body: String::new(),
        body_line: 1,
        diagnostics: vec![diagnostic],
    }
}

fn path_name(origin: &Origin) -> String {
    match origin {
        Origin::Folder { folder_name } => folder_name.clone(),
        Origin::Action { domain, action } => format!("{domain}.{action}"),
        Origin::Note { stem } => stem.clone(),
    }
}

/// Whether this file is judged by the Agent Skills reference rules in strict mode.
fn reference_mode(dialect: Dialect, mode: Mode) -> bool {
    dialect == Dialect::AgentSkills && mode == Mode::Strict
}

/// Parse and validate one skill file. Never panics, whatever the bytes.
pub fn parse_skill(bytes: &[u8], opts: &ParseOptions) -> SkillFile {
    let forced = match opts.origin {
        Origin::Action { .. } => Some(Dialect::Actions),
        _ => opts.dialect,
    };
    let fallback_dialect = forced.unwrap_or(Dialect::AgentSkills);
    let path = &opts.path;
    if bytes.len() > MAX_FILE_BYTES {
        return failed(
            opts,
            fallback_dialect,
            Diagnostic::error(
                Code::FileTooLarge,
                path,
                format!(
                    "file is {} bytes; skill files are read up to {MAX_FILE_BYTES} bytes: move detail into references/",
                    bytes.len()
                ),
            ),
        );
    }
    if let Some(nul) = bytes
        .contains(&0)
        .then(|| bytes.iter().position(|b| *b == 0))
        .flatten()
    {
        let (line, col) = position_of(&String::from_utf8_lossy(&bytes[..nul]), nul);
        return failed(
            opts,
            fallback_dialect,
            Diagnostic::error(
                Code::BinaryFile,
                path,
                "file holds NUL bytes: it is binary, not markdown",
            )
            .at(line, col),
        );
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = e.valid_up_to();
            let prefix = String::from_utf8_lossy(&bytes[..good]);
            let (line, col) = position_of(&prefix, prefix.len());
            return failed(
                opts,
                fallback_dialect,
                Diagnostic::error(
                    Code::NotUtf8,
                    path,
                    format!(
                        "file is not valid UTF-8 (bad byte 0x{:02x}): save it as UTF-8",
                        bytes[good]
                    ),
                )
                .at(line, col),
            );
        }
    };
    let doc = match split(text) {
        Ok(d) => d,
        Err(UnclosedFrontmatter { line }) => {
            let msg = if opts.mode == Mode::Strict {
                "SKILL.md frontmatter not properly closed with ---".to_owned()
            } else {
                "frontmatter opened with `---` is never closed: add a line `---` after the last key"
                    .to_owned()
            };
            return failed(
                opts,
                fallback_dialect,
                Diagnostic::error(Code::UnclosedFrontmatter, path, msg).at(line, 1),
            );
        }
    };
    let mut diagnostics = Vec::new();
    let mut root: Option<Node> = None;
    let mut duplicate_keys = Vec::new();
    let mut fm_text = String::new();
    let mut fm_first_line = 1;
    if let Some(fm) = doc.frontmatter {
        fm_first_line = fm.first_line;
        fm_text = fm.text.to_owned();
        match yaml::parse(fm.text) {
            Ok(p) => {
                root = Some(p.root);
                duplicate_keys = p.duplicate_keys;
            }
            Err(e) => {
                let recovered = if opts.mode == Mode::Lenient {
                    yaml::recover_unquoted_colons(fm.text)
                        .and_then(|(fixed, lines)| yaml::parse(&fixed).ok().map(|p| (p, lines)))
                } else {
                    None
                };
                match recovered {
                    Some((p, lines)) => {
                        for l in lines {
                            diagnostics.push(
                                Diagnostic::warning(
                                    Code::YamlRecovered,
                                    path,
                                    "value holds an unquoted `: ` (invalid YAML); it was read as a quoted string: quote the value",
                                )
                                .at(fm.first_line + l - 1, 1),
                            );
                        }
                        root = Some(p.root);
                        duplicate_keys = p.duplicate_keys;
                    }
                    None => {
                        let pos = e
                            .line
                            .map(|l| (fm.first_line + l - 1, e.column.unwrap_or(1)));
                        let msg = if opts.mode == Mode::Strict {
                            format!("Invalid YAML in frontmatter: {}", e.message)
                        } else {
                            format!("frontmatter is not valid YAML: {}", e.message)
                        };
                        return failed(
                            opts,
                            fallback_dialect,
                            Diagnostic::error(Code::InvalidYaml, path, msg).at_opt(pos),
                        );
                    }
                }
            }
        }
    }
    let key_pos =
        |key: &str| yaml::key_position(&fm_text, key).map(|(l, c)| (fm_first_line + l - 1, c));
    // Non-mapping frontmatter.
    match &root {
        Some(Node::Map(_)) | None => {}
        Some(node) if node.is_null() => {
            if reference_mode(forced.unwrap_or(Dialect::AgentSkills), opts.mode) {
                return failed(
                    opts,
                    fallback_dialect,
                    Diagnostic::error(
                        Code::FrontmatterNotMapping,
                        path,
                        "SKILL.md frontmatter must be a YAML mapping",
                    )
                    .at(fm_first_line, 1),
                );
            }
            root = Some(Node::Map(Vec::new()));
        }
        Some(node) => {
            let msg = if opts.mode == Mode::Strict {
                "SKILL.md frontmatter must be a YAML mapping".to_owned()
            } else {
                format!(
                    "frontmatter is {}, not a mapping of `key: value` lines",
                    node.type_name()
                )
            };
            return failed(
                opts,
                fallback_dialect,
                Diagnostic::error(Code::FrontmatterNotMapping, path, msg).at(fm_first_line, 1),
            );
        }
    }
    let (manifest, findings) = match &root {
        Some(r) => manifest::from_node(r),
        None => (Manifest::default(), Vec::new()),
    };
    let dialect = forced.unwrap_or_else(|| detect(root.as_ref()));

    // Notes are skills only when they declare both fields; others are just notes.
    if let Origin::Note { .. } = opts.origin {
        let has = |s: &Option<String>| s.as_deref().is_some_and(|v| !v.trim().is_empty());
        if !(has(&manifest.name) && has(&manifest.description)) {
            return SkillFile {
                path: path.clone(),
                dialect,
                kind: FileKind::NotASkill,
                name: path_name(&opts.origin),
                description: String::new(),
                manifest,
                body: doc.body.to_owned(),
                body_line: doc.body_line,
                diagnostics: Vec::new(),
            };
        }
    }

    if root.is_none() && forced.is_none() && dialect == Dialect::Lily {
        diagnostics.push(
            Diagnostic::warning(
                Code::MissingFrontmatter,
                path,
                "no frontmatter: read as a lily skill named after its folder, with no summary; other dialects need `name` and `description` between `---` lines (a source can set its dialect to silence this)",
            )
            .at(1, 1),
        );
    }

    let kind = match (&opts.origin, &manifest.domain) {
        (Origin::Folder { .. }, Some(_)) if dialect == Dialect::Actions => FileKind::DomainIndex,
        _ => FileKind::Skill,
    };

    if root.is_none()
        && matches!(
            dialect,
            Dialect::AgentSkills | Dialect::Actions | Dialect::Toolsets
        )
    {
        let msg = if reference_mode(dialect, opts.mode) {
            "SKILL.md must start with YAML frontmatter (---)".to_owned()
        } else {
            format!(
                "no frontmatter: {dialect} skills start with a `---` line, `name:` and `description:`, and a closing `---`"
            )
        };
        let mut file = failed(
            opts,
            dialect,
            Diagnostic::error(Code::MissingFrontmatter, path, msg).at(1, 1),
        );
        file.body = doc.body.to_owned();
        return file;
    }
    if doc.bom && reference_mode(dialect, opts.mode) {
        // The reference library does not strip a BOM; strict mode agrees with it.
        let mut file = failed(
            opts,
            dialect,
            Diagnostic::error(
                Code::MissingFrontmatter,
                path,
                "SKILL.md must start with YAML frontmatter (---)",
            )
            .at(1, 1),
        );
        file.body = doc.body.to_owned();
        return file;
    }

    let strict = opts.mode == Mode::Strict;
    for key in &duplicate_keys {
        let top = key.split(['.', '[']).next().unwrap_or(key);
        let severity = if strict {
            Severity::Error
        } else {
            Severity::Warning
        };
        diagnostics.push(
            Diagnostic::new(
                severity,
                Code::DuplicateKey,
                path,
                format!("`{key}` is set more than once; the last value is used: remove the others"),
            )
            .at_opt(key_pos(top)),
        );
    }

    let (rule_findings, resolved) = validate::check(
        dialect,
        opts.mode,
        &opts.origin,
        root.as_ref(),
        &manifest,
        doc.body,
    );
    let reference = reference_mode(dialect, opts.mode);
    let to_diag = |f: Finding| {
        // Recommendations stay warnings, and strict mode reports keys outside a non-standard
        // dialect as warnings; otherwise hard findings and strict mode make errors.
        let severity = match f.code {
            Code::BodyTooLong => Severity::Warning,
            Code::UnknownField if strict && !reference => Severity::Warning,
            _ if f.hard || strict => Severity::Error,
            _ => Severity::Warning,
        };
        let pos = if f.key.is_empty() {
            None
        } else {
            key_pos(&f.key)
        };
        Diagnostic::new(severity, f.code, path, f.message).at_opt(pos)
    };
    for f in findings {
        // In strict reference mode the reference checks report the six standard fields with
        // their own messages; typing findings about them would repeat those.
        if reference && validate_covers(&f) {
            continue;
        }
        diagnostics.push(to_diag(f));
    }
    for f in rule_findings {
        diagnostics.push(to_diag(f));
    }
    diagnostics.sort_by_key(|d| (d.line.unwrap_or(u32::MAX), d.column.unwrap_or(0)));

    SkillFile {
        path: path.clone(),
        dialect,
        kind,
        name: resolved.name,
        description: resolved.description,
        manifest,
        body: doc.body.to_owned(),
        body_line: doc.body_line,
        diagnostics,
    }
}

/// Whether a typing finding duplicates what the strict reference checks report.
fn validate_covers(f: &Finding) -> bool {
    matches!(
        f.key.as_str(),
        "name" | "description" | "compatibility" | "metadata" | "allowed-tools"
    )
}

/// Shorthand used by callers that only have a path: the parent folder's name.
pub fn folder_name_of(path: &Path) -> String {
    path.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
