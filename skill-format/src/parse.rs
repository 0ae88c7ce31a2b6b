//! [`parse_skill`]: bytes to a [`SkillFile`], as a pipeline of named stages.
//!
//! The stages run in this order; each either passes its result on or stops the parse with
//! the one diagnostic that explains why (a [`Stop`]):
//!
//! 1. **size cap**: at most [`MAX_FILE_BYTES`];
//! 2. **NUL**: a NUL byte means a binary file;
//! 3. **UTF-8**: the bytes decode, or the first bad byte is reported;
//! 4. **grammar**: BOM, line endings and the `---` / `...` delimiter lines ([`split`]);
//! 5. **YAML**: the frontmatter parses, and in lenient mode
//! 6. **recovery**: unquoted `: ` inside values is read as a quoted string, with a warning;
//! 7. **mapping**: the frontmatter is a mapping (an empty one counts, except in the strict
//!    reference mode);
//! 8. **typing**: the mapping becomes a [`Manifest`] plus typing findings;
//! 9. **dialect detection**: the forced dialect, or [`detect`]; notes without `name` and
//!    `description` stop here as [`FileKind::NotASkill`];
//! 10. **validation**: frontmatter presence, duplicate keys and the dialect's rules;
//! 11. **diagnostics**: findings become diagnostics with a severity and a file position,
//!     sorted by position.
//!
//! A file stopped early keeps the dialect it was being read as (the forced one, else
//! agentskills, before detection), the name derived from its path, and no description.

use std::path::Path;

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::dialect::{Dialect, Mode, detect};
use crate::document::{Document, Frontmatter, UnclosedFrontmatter, split};
use crate::file::{FileKind, Kept, KeptFrontmatter, ParseOptions, SkillFile};
use crate::manifest::{self, Finding, Manifest};
use crate::validate::{self, Origin};
use crate::yaml::{self, Node};

/// Largest skill file read, in bytes. Larger files get a `file-too-large` error.
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;

/// Parse and validate one skill file. Never panics, whatever the bytes.
pub fn parse_skill(bytes: &[u8], opts: &ParseOptions) -> SkillFile {
    parse_skill_keeping(bytes, opts).0
}

/// [`parse_skill`], and what its stages checked and read of the bytes ([`Kept`]): the text
/// and the frontmatter with its YAML tree, for a caller that looks at the same bytes again.
pub fn parse_skill_keeping<'t>(bytes: &'t [u8], opts: &ParseOptions) -> (SkillFile, Kept<'t>) {
    let run = Run::new(opts);
    let mut kept = Kept::default();
    let file = match run.stages(bytes, &mut kept) {
        Ok(file) => file,
        Err(stop) => run.stopped(stop),
    };
    (file, kept)
}

/// Why a parse stopped before validation: the diagnostic that explains it, the dialect
/// the file was being read as, and the body when the document had been split.
struct Stop<'t> {
    dialect: Dialect,
    diagnostic: Diagnostic,
    body: &'t str,
}

/// The frontmatter as the YAML stages leave it.
struct Yaml<'t> {
    /// The root node; `None` when the file has no frontmatter.
    root: Option<Node<'t>>,
    /// Keys set more than once (`a`, `a.b`, `a[0]`), in file order.
    duplicate_keys: Vec<String>,
    /// The frontmatter's text (empty without frontmatter), for key positions.
    text: &'t str,
    /// The file line of its first line.
    first_line: u32,
    /// Warnings of the recovery stage.
    recovered: Vec<Diagnostic>,
    /// Whether `root` is what `yaml::parse` read from `text` (not a recovered reading).
    as_written: bool,
}

/// One parse: the options and what follows from them before reading a byte.
struct Run<'o> {
    opts: &'o ParseOptions,
    path: &'o Path,
    /// The dialect the origin or options impose, if any.
    forced: Option<Dialect>,
    strict: bool,
}

impl<'o> Run<'o> {
    fn new(opts: &'o ParseOptions) -> Self {
        let forced = match opts.origin {
            Origin::Action { .. } => Some(Dialect::Actions),
            _ => opts.dialect,
        };
        Run {
            opts,
            path: &opts.path,
            forced,
            strict: opts.mode == Mode::Strict,
        }
    }

    /// The dialect a file is read as before detection.
    fn fallback(&self) -> Dialect {
        self.forced.unwrap_or(Dialect::AgentSkills)
    }

    /// A stop before detection, with no body.
    fn stop<'t>(&self, diagnostic: Diagnostic) -> Stop<'t> {
        Stop {
            dialect: self.fallback(),
            diagnostic,
            body: "",
        }
    }

    /// The stages, noting in `kept` what they checked and read as they go.
    fn stages<'t>(&self, bytes: &'t [u8], kept: &mut Kept<'t>) -> Result<SkillFile, Stop<'t>> {
        self.size_cap(bytes)?;
        self.no_nul(bytes)?;
        let text = self.utf8(bytes)?;
        kept.text = Some(text);
        let doc = split(text);
        kept.frontmatter = match &doc {
            Ok(Document {
                frontmatter: Some(fm),
                ..
            }) => KeptFrontmatter::Unread(*fm),
            _ => KeptFrontmatter::Absent,
        };
        let doc = self.grammar(doc)?;
        let frontmatter = doc.frontmatter;
        let mut yaml = self.yaml(frontmatter).inspect_err(|_| {
            // The stage stops only when `yaml::parse` refused the text.
            if let Some(fm) = frontmatter {
                kept.frontmatter = KeptFrontmatter::Invalid(fm);
            }
        })?;
        let out = self.typed(doc, &mut yaml);
        if let Some(fm) = frontmatter {
            kept.frontmatter = match yaml.root {
                Some(root) if yaml.as_written => KeptFrontmatter::Read(fm, root),
                _ => KeptFrontmatter::Invalid(fm),
            };
        }
        out
    }

    /// Stages 7 to 11, over the frontmatter as the YAML stages left it.
    fn typed<'t>(&self, doc: Document<'t>, yaml: &mut Yaml<'t>) -> Result<SkillFile, Stop<'t>> {
        self.mapping(yaml)?;
        let (manifest, findings) = match &yaml.root {
            Some(root) => manifest::from_node(root),
            None => (Manifest::default(), Vec::new()),
        };
        let dialect = self.forced.unwrap_or_else(|| detect(yaml.root.as_ref()));
        if self.is_plain_note(&manifest) {
            return Ok(self.plain_note(dialect, manifest, &doc));
        }
        self.validate(dialect, doc, yaml, manifest, findings)
    }

    /// The file a stop leaves.
    fn stopped(&self, stop: Stop<'_>) -> SkillFile {
        SkillFile {
            path: self.opts.path.clone(),
            dialect: stop.dialect,
            kind: FileKind::Skill,
            name: path_name(&self.opts.origin),
            description: String::new(),
            manifest: Manifest::default(),
            body: stop.body.to_owned(),
            body_line: 1,
            diagnostics: vec![stop.diagnostic],
        }
    }

    /// Stage 1: the size cap.
    fn size_cap(&self, bytes: &[u8]) -> Result<(), Stop<'static>> {
        if bytes.len() <= MAX_FILE_BYTES {
            return Ok(());
        }
        Err(self.stop(Diagnostic::error(
            Code::FileTooLarge,
            self.path,
            format!(
                "file is {} bytes; skill files are read up to {MAX_FILE_BYTES} bytes: move detail into references/",
                bytes.len()
            ),
        )))
    }

    /// Stage 2: no NUL byte.
    fn no_nul(&self, bytes: &[u8]) -> Result<(), Stop<'static>> {
        // A SIMD memchr: this looks at every byte of every file.
        let Some(nul) = memchr::memchr(0, bytes) else {
            return Ok(());
        };
        let (line, col) = position_of(&String::from_utf8_lossy(&bytes[..nul]), nul);
        Err(self.stop(
            Diagnostic::error(
                Code::BinaryFile,
                self.path,
                "file holds NUL bytes: it is binary, not markdown",
            )
            .at(line, col),
        ))
    }

    /// Stage 3: UTF-8.
    fn utf8<'t>(&self, bytes: &'t [u8]) -> Result<&'t str, Stop<'t>> {
        std::str::from_utf8(bytes).map_err(|e| {
            let good = e.valid_up_to();
            let prefix = String::from_utf8_lossy(&bytes[..good]);
            let (line, col) = position_of(&prefix, prefix.len());
            let bad = bytes.get(good).copied().unwrap_or_default();
            self.stop(
                Diagnostic::error(
                    Code::NotUtf8,
                    self.path,
                    format!("file is not valid UTF-8 (bad byte 0x{bad:02x}): save it as UTF-8"),
                )
                .at(line, col),
            )
        })
    }

    /// Stage 4: the document grammar, over what [`split`] made of the text.
    fn grammar<'t>(
        &self,
        doc: Result<Document<'t>, UnclosedFrontmatter>,
    ) -> Result<Document<'t>, Stop<'t>> {
        let doc = doc.map_err(|UnclosedFrontmatter { line }| {
            let msg = if self.strict {
                "SKILL.md frontmatter not properly closed with ---"
            } else {
                "frontmatter opened with `---` is never closed: add a line `---` after the last key"
            };
            self.stop(Diagnostic::error(Code::UnclosedFrontmatter, self.path, msg).at(line, 1))
        })?;
        // The standard closes frontmatter with `---` only; strict mode agrees with the
        // reference library that a `...` line leaves it open.
        if self.strict && doc.frontmatter.is_some_and(|fm| fm.dot_closer) {
            return Err(self.stop(
                Diagnostic::error(
                    Code::UnclosedFrontmatter,
                    self.path,
                    "SKILL.md frontmatter not properly closed with ---",
                )
                .at(1, 1),
            ));
        }
        Ok(doc)
    }

    /// Stages 5 and 6: the frontmatter as YAML, recovered in lenient mode when a value holds
    /// an unquoted `: `.
    fn yaml<'t>(&self, fm: Option<Frontmatter<'t>>) -> Result<Yaml<'t>, Stop<'t>> {
        let Some(fm) = fm else {
            return Ok(Yaml {
                root: None,
                duplicate_keys: Vec::new(),
                text: "",
                first_line: 1,
                recovered: Vec::new(),
                as_written: true,
            });
        };
        let mut yaml = Yaml {
            root: None,
            duplicate_keys: Vec::new(),
            text: fm.text,
            first_line: fm.first_line,
            recovered: Vec::new(),
            as_written: true,
        };
        let error = match yaml::parse(fm.text) {
            Ok(parsed) => {
                yaml.root = Some(parsed.root);
                yaml.duplicate_keys = parsed.duplicate_keys;
                return Ok(yaml);
            }
            Err(e) => e,
        };
        yaml.as_written = false;
        let too_large = |error: yaml::YamlError| {
            let pos = error
                .line
                .map(|l| (fm.first_line + l - 1, error.column.unwrap_or(1)));
            self.stop(Diagnostic::error(Code::YamlTooLarge, self.path, error.message).at_opt(pos))
        };
        if error.kind == yaml::YamlErrorKind::TooLarge {
            // Recovery only quotes values: the document would expand as far again.
            return Err(too_large(error));
        }
        let recovered = if self.strict {
            None
        } else {
            yaml::recover_unquoted_colons(fm.text).map(|(fixed, lines)| {
                // The recovered text is this function's own: the tree keeps nothing of it.
                yaml::parse(&fixed).map(|parsed| {
                    let parsed = yaml::Parsed {
                        root: parsed.root.into_owned(),
                        duplicate_keys: parsed.duplicate_keys,
                    };
                    (parsed, lines)
                })
            })
        };
        let (parsed, lines) = match recovered {
            Some(Ok(recovered)) => recovered,
            // Quoting a value keeps every line where it was.
            Some(Err(e)) if e.kind == yaml::YamlErrorKind::TooLarge => return Err(too_large(e)),
            Some(Err(_)) | None => {
                let pos = error
                    .line
                    .map(|l| (fm.first_line + l - 1, error.column.unwrap_or(1)));
                let msg = if self.strict {
                    format!("Invalid YAML in frontmatter: {}", error.message)
                } else {
                    format!("frontmatter is not valid YAML: {}", error.message)
                };
                return Err(
                    self.stop(Diagnostic::error(Code::InvalidYaml, self.path, msg).at_opt(pos))
                );
            }
        };
        for l in lines {
            yaml.recovered.push(
                Diagnostic::warning(
                    Code::YamlRecovered,
                    self.path,
                    "value holds an unquoted `: ` (invalid YAML); it was read as a quoted string: quote the value",
                )
                .at(fm.first_line + l - 1, 1),
            );
        }
        yaml.root = Some(parsed.root);
        yaml.duplicate_keys = parsed.duplicate_keys;
        Ok(yaml)
    }

    /// Stage 7: the frontmatter is a mapping. An empty (null) one becomes an empty mapping,
    /// except in the strict reference mode, which rejects it as the reference library does.
    fn mapping(&self, yaml: &mut Yaml<'_>) -> Result<(), Stop<'static>> {
        match &yaml.root {
            Some(Node::Map(_)) | None => Ok(()),
            Some(node) if node.is_null() => {
                if reference_mode(self.fallback(), self.opts.mode) {
                    return Err(self.stop(
                        Diagnostic::error(
                            Code::FrontmatterNotMapping,
                            self.path,
                            "SKILL.md frontmatter must be a YAML mapping",
                        )
                        .at(yaml.first_line, 1),
                    ));
                }
                yaml.root = Some(Node::Map(Vec::new()));
                Ok(())
            }
            Some(node) => {
                let msg = if self.strict {
                    "SKILL.md frontmatter must be a YAML mapping".to_owned()
                } else {
                    format!(
                        "frontmatter is {}, not a mapping of `key: value` lines",
                        node.type_name()
                    )
                };
                Err(self.stop(
                    Diagnostic::error(Code::FrontmatterNotMapping, self.path, msg)
                        .at(yaml.first_line, 1),
                ))
            }
        }
    }

    /// Stage 9, for notes: a note is a skill only when it declares both `name` and
    /// `description`.
    fn is_plain_note(&self, manifest: &Manifest) -> bool {
        let has = |s: &Option<String>| s.as_deref().is_some_and(|v| !v.trim().is_empty());
        matches!(self.opts.origin, Origin::Note { .. })
            && !(has(&manifest.name) && has(&manifest.description))
    }

    /// A note that is not a skill: [`FileKind::NotASkill`], with no diagnostics.
    fn plain_note(&self, dialect: Dialect, manifest: Manifest, doc: &Document<'_>) -> SkillFile {
        SkillFile {
            path: self.opts.path.clone(),
            dialect,
            kind: FileKind::NotASkill,
            name: path_name(&self.opts.origin),
            description: String::new(),
            manifest,
            body: doc.body.to_owned(),
            body_line: doc.body_line,
            diagnostics: Vec::new(),
        }
    }

    /// Stages 10 and 11: frontmatter presence, duplicate keys and the dialect's rules, then
    /// every finding as a diagnostic, sorted by position.
    fn validate<'t>(
        &self,
        dialect: Dialect,
        doc: Document<'t>,
        yaml: &mut Yaml<'t>,
        manifest: Manifest,
        findings: Vec<Finding>,
    ) -> Result<SkillFile, Stop<'t>> {
        let path = self.path;
        let mut diagnostics = std::mem::take(&mut yaml.recovered);
        let no_frontmatter = yaml.root.is_none();
        // A `---` line ended by a lone carriage return: the frontmatter is there, but the
        // file has classic Mac OS line endings, which no dialect reads as lines.
        let cr_only = no_frontmatter
            && doc
                .body
                .strip_prefix("---\r")
                .is_some_and(|rest| !rest.starts_with('\n'));
        let line_endings = if cr_only {
            "; this file's lines end with a lone carriage return (classic Mac OS line endings): save it with LF or CRLF line endings"
        } else {
            ""
        };
        if no_frontmatter && self.forced.is_none() && dialect == Dialect::Lily {
            diagnostics.push(
                Diagnostic::warning(
                    Code::MissingFrontmatter,
                    path,
                    format!("no frontmatter: read as a lily skill named after its folder, with no summary; other dialects need `name` and `description` between `---` lines (a source can set its dialect to silence this){line_endings}"),
                )
                .at(1, 1),
            );
        }
        let kind = match (&self.opts.origin, &manifest.domain) {
            (Origin::Folder { .. }, Some(_)) if dialect == Dialect::Actions => {
                FileKind::DomainIndex
            }
            _ => FileKind::Skill,
        };
        let reference = reference_mode(dialect, self.opts.mode);
        if no_frontmatter
            && matches!(
                dialect,
                Dialect::AgentSkills | Dialect::Actions | Dialect::Toolsets
            )
        {
            let msg = if reference {
                "SKILL.md must start with YAML frontmatter (---)".to_owned()
            } else {
                format!(
                    "no frontmatter: {dialect} skills start with a `---` line, `name:` and `description:`, and a closing `---`{line_endings}"
                )
            };
            return Err(Stop {
                dialect,
                diagnostic: Diagnostic::error(Code::MissingFrontmatter, path, msg).at(1, 1),
                body: doc.body,
            });
        }
        if doc.bom && reference {
            // The reference library does not strip a BOM; strict mode agrees with it.
            return Err(Stop {
                dialect,
                diagnostic: Diagnostic::error(
                    Code::MissingFrontmatter,
                    path,
                    "SKILL.md must start with YAML frontmatter (---)",
                )
                .at(1, 1),
                body: doc.body,
            });
        }

        if let Some(fm) = doc.frontmatter.filter(|fm| fm.dot_closer) {
            let closer = fm.first_line + u32::try_from(fm.text.lines().count()).unwrap_or(0);
            diagnostics.push(
                Diagnostic::warning(
                    Code::UnclosedFrontmatter,
                    path,
                    "frontmatter is closed by `...`; the standard closes it with `---`: replace the line",
                )
                .at(closer, 1),
            );
        }
        let key_pos = |key: &str| {
            yaml::key_position(yaml.text, key).map(|(l, c)| (yaml.first_line + l - 1, c))
        };
        for key in &yaml.duplicate_keys {
            let top = key.split(['.', '[']).next().unwrap_or(key);
            let severity = if self.strict {
                Severity::Error
            } else {
                Severity::Warning
            };
            let message = if self.strict {
                // The reference library's YAML reader refuses a repeated key.
                format!("Invalid YAML in frontmatter: duplicate key `{key}`")
            } else {
                format!("`{key}` is set more than once; the last value is used: remove the others")
            };
            diagnostics.push(
                Diagnostic::new(severity, Code::DuplicateKey, path, message).at_opt(key_pos(top)),
            );
        }

        let (rule_findings, resolved) = validate::check(
            dialect,
            self.opts.mode,
            &self.opts.origin,
            yaml.root.as_ref(),
            &manifest,
            doc.body,
        );
        let to_diag = |f: Finding| {
            // Recommendations stay warnings, and strict mode reports keys outside a
            // non-standard dialect as warnings; otherwise hard findings and strict mode
            // make errors.
            let severity = match f.code {
                Code::BodyTooLong => Severity::Warning,
                Code::UnknownField if self.strict && !reference => Severity::Warning,
                _ if f.hard || self.strict => Severity::Error,
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
            // In strict reference mode the reference checks report the six standard fields
            // with their own messages; typing findings about them would repeat those.
            if reference && validate_covers(&f) {
                continue;
            }
            diagnostics.push(to_diag(f));
        }
        for f in rule_findings {
            diagnostics.push(to_diag(f));
        }
        diagnostics.sort_by_key(|d| (d.line.unwrap_or(u32::MAX), d.column.unwrap_or(0)));

        Ok(SkillFile {
            path: self.opts.path.clone(),
            dialect,
            kind,
            name: resolved.name,
            description: resolved.description,
            manifest,
            body: doc.body.to_owned(),
            body_line: doc.body_line,
            diagnostics,
        })
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

/// The name a file gets from where it sits.
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

/// Whether a typing finding duplicates what the strict reference checks report.
fn validate_covers(f: &Finding) -> bool {
    matches!(
        f.key.as_str(),
        "name" | "description" | "compatibility" | "metadata" | "allowed-tools"
    )
}
