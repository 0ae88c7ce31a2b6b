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
//! Modules, from the top: `parse` runs the stages of [`parse_skill`] over `document` (the `nom`
//! grammar), `yaml` (YAML to a tree that keeps scalar source text, and lenient recovery),
//! `manifest` (typing), `dialect` (detection and modes), `validate` (what every dialect shares,
//! one module per dialect, and `reference` for the reference library's checks), `diagnostic`
//! (the stable codes) and `file` ([`ParseOptions`], [`SkillFile`]). Beside the parse sit
//! `sections` (man-page sections, the `## Flags` schema, outlines) and `args` (`$ARGUMENTS`).
//! xtask's tidy test checks that no module cycle exists.
//!
//! The user-facing choices (grammar, dialect detection, modes, names, the divergences from the
//! reference library) are written down in the repository's docs/decisions.md.
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
#![warn(unreachable_pub)]

pub mod args;
mod data;
mod diagnostic;
mod dialect;
mod document;
mod error;
mod file;
mod manifest;
mod parse;
pub mod sections;
mod validate;
pub mod yaml;

pub use data::{FrontmatterData, frontmatter_data};
pub use diagnostic::{Code, Diagnostic, Severity, serialize_path};
pub use dialect::{Dialect, Mode, detect};
pub use document::{Document, Frontmatter, UnclosedFrontmatter, split};
pub use error::Error;
pub use file::{FileKind, Kept, KeptFrontmatter, ParseOptions, SkillFile, folder_name_of};
pub use manifest::{
    ContextMode, Eligibility, InvocationMode, KNOWN_KEYS, MAX_WHEN_ENTRIES, MAX_WHEN_ENTRY_CHARS,
    Manifest, ToolListStyle, ToolsetRef, Triggers, split_tool_list,
};
pub use parse::{MAX_FILE_BYTES, parse_skill, parse_skill_keeping};
pub use validate::{
    KNOWN_OS, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_PATTERN_SIZE,
    MAX_TOOLSETS_DESCRIPTION_CHARS, Origin, RECOMMENDED_MAX_BODY_LINES, RESERVED_ACTIONS,
    first_paragraph, first_sentence, is_kebab_name, nfkc,
};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
