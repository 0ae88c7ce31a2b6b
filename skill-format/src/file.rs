//! What [`parse_skill`](crate::parse_skill) is asked ([`ParseOptions`]) and what it gives
//! ([`SkillFile`], [`FileKind`]): the crate's one input and one output.

use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::dialect::{Dialect, Mode};
use crate::manifest::Manifest;
use crate::validate::{Origin, first_sentence};

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

/// Shorthand used by callers that only have a path: the parent folder's name.
pub fn folder_name_of(path: &Path) -> String {
    path.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What [`parse_skill_keeping`](crate::parse_skill_keeping) keeps of a file besides the
/// [`SkillFile`]: the text its stages checked and the frontmatter they read, for a caller
/// that looks at the same bytes again (the registry's content scan), so that it need not
/// check, split and read them a second time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Kept<'t> {
    /// The whole file as text, when the parse found the bytes within the size cap, free of
    /// NUL bytes and valid UTF-8 (`None`: it stopped before, or at, one of those checks).
    pub text: Option<&'t str>,
    /// The frontmatter as the grammar and YAML stages left it.
    pub frontmatter: KeptFrontmatter<'t>,
}

/// The frontmatter of a [`Kept`] file, as far as the parse read it: what
/// [`split`](crate::split) of the file's text gave and, when the YAML stage ran, what
/// [`yaml::parse`](crate::yaml::parse) of its text gave (before any lenient recovery).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum KeptFrontmatter<'t> {
    /// The parse stopped before it split the text.
    #[default]
    NotSplit,
    /// The split found no frontmatter, or one that is never closed.
    Absent,
    /// The frontmatter's text, which the parse stopped before reading as YAML.
    Unread(crate::document::Frontmatter<'t>),
    /// Frontmatter whose text `yaml::parse` refuses.
    Invalid(crate::document::Frontmatter<'t>),
    /// Frontmatter and the tree `yaml::parse` read from its text.
    Read(crate::document::Frontmatter<'t>, crate::yaml::Node<'t>),
}
