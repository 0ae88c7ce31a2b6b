//! Diagnostics: what is wrong with a skill file, where, and how bad it is.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The skill still loads; something deserves a look.
    Warning,
    /// The skill (or file) is excluded, or the pack does not validate.
    Error,
}

impl Severity {
    /// The lowercase name used in text and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident => $text:literal,)*) => {
        /// A stable diagnostic code. The kebab-case text (see [`Code::as_str`]) never changes
        /// meaning once released, so hosts and CI scripts may match on it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable kebab-case text of the code, e.g. `name-too-long`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }
        }
    };
}

codes! {
    // --- The file itself -------------------------------------------------------------------
    /// The file could not be read (permissions, vanished, ...).
    Unreadable => "unreadable",
    /// The path named `SKILL.md` (or a skill file) is not a regular file.
    NotAFile => "not-a-file",
    /// The file is larger than the size cap.
    FileTooLarge => "file-too-large",
    /// The file holds NUL bytes: it is binary, not markdown.
    BinaryFile => "binary-file",
    /// The file is not valid UTF-8.
    NotUtf8 => "not-utf8",
    // --- Document grammar ------------------------------------------------------------------
    /// The dialect needs frontmatter and the file has none.
    MissingFrontmatter => "missing-frontmatter",
    /// The opening `---` line has no closing `---` (or `...`) line.
    UnclosedFrontmatter => "unclosed-frontmatter",
    /// The frontmatter is not valid YAML and could not be recovered.
    InvalidYaml => "invalid-yaml",
    /// The frontmatter is valid YAML but expands past the reader's budget (100,000 nodes or
    /// 16 MiB of text, an alias counting every node it repeats).
    YamlTooLarge => "yaml-too-large",
    /// The frontmatter was not valid YAML, but a lenient rewrite of unquoted `: ` made it load.
    YamlRecovered => "yaml-recovered",
    /// The frontmatter is valid YAML but not a mapping of keys to values.
    FrontmatterNotMapping => "frontmatter-not-mapping",
    /// A frontmatter key appears twice.
    DuplicateKey => "duplicate-key",
    /// The frontmatter uses a construct the strict standard rejects (flow style, anchors, tags).
    StrictYaml => "strict-yaml",
    // --- Fields ----------------------------------------------------------------------------
    /// A key that no dialect of this skill defines.
    UnknownField => "unknown-field",
    /// A field holds a value of the wrong type (a list where a string is expected, ...).
    InvalidFieldType => "invalid-field-type",
    /// A field holds a value outside its allowed set.
    InvalidFieldValue => "invalid-field-value",
    /// The skill has no `name` and the dialect requires one.
    MissingName => "missing-name",
    /// The name holds characters the dialect does not allow.
    InvalidName => "invalid-name",
    /// The name is longer than the dialect allows.
    NameTooLong => "name-too-long",
    /// The name has upper-case characters.
    NameNotLowercase => "name-not-lowercase",
    /// The name starts or ends with a hyphen.
    NameHyphenEdge => "name-hyphen-edge",
    /// The name contains `--`.
    NameConsecutiveHyphens => "name-consecutive-hyphens",
    /// The name differs from the folder name or path-derived name.
    NameMismatch => "name-mismatch",
    /// The name is reserved (`all`, `help` as an action).
    ReservedName => "reserved-name",
    /// The skill has no description (or summary) and the dialect requires one.
    MissingDescription => "missing-description",
    /// The description is present but empty.
    EmptyDescription => "empty-description",
    /// The description is longer than the dialect allows.
    DescriptionTooLong => "description-too-long",
    /// The `compatibility` field is empty or over its limit.
    InvalidCompatibility => "invalid-compatibility",
    /// `metadata` is not a map of strings to strings.
    InvalidMetadata => "invalid-metadata",
    /// `allowed-tools` is not the standard's space-separated string.
    AllowedToolsFormat => "allowed-tools-format",
    /// Lily `tool_dispatch` without `command_tool`.
    MissingCommandTool => "missing-command-tool",
    /// A lily `command` that does not match `^[a-z0-9_-]+$`.
    InvalidCommand => "invalid-command",
    /// A toolsets `version` that is not semantic versioning.
    InvalidVersion => "invalid-version",
    /// A toolsets entry that is not `path:Export`.
    InvalidToolset => "invalid-toolset",
    /// A trigger pattern that does not compile as a regular expression, compiles past the
    /// size limit, or is past the index's budget for patterns.
    InvalidTriggerPattern => "invalid-trigger-pattern",
    /// The body is longer than the standard recommends (500 lines).
    BodyTooLong => "body-too-long",
    /// The skill's text has more distinct terms than the search index keeps for one skill
    /// (20,000): the words past them are not searchable.
    IndexTruncated => "index-truncated",
    // --- Discovery and the registry ---------------------------------------------------------
    /// A lowercase `skill.md` was used; `SKILL.md` is the standard spelling.
    LowercaseSkillFile => "lowercase-skill-file",
    /// A `SKILL.md` inside another skill's folder: a resource of that skill, not a skill.
    NestedSkill => "nested-skill",
    /// A symbolic link points outside its source root and was not followed.
    SymlinkEscape => "symlink-escape",
    /// A symbolic link leads back into a folder already visited.
    SymlinkLoop => "symlink-loop",
    /// Two skill paths are one file (one of them through a symbolic link): it is loaded
    /// once.
    LinkedTwice => "linked-twice",
    /// Discovery stopped descending: the folder is deeper than the depth bound.
    DepthLimit => "depth-limit",
    /// Discovery stopped: the source holds more folders than the folder bound.
    FolderLimit => "folder-limit",
    /// The source folder does not exist or cannot be listed.
    SourceUnavailable => "source-unavailable",
    /// A path given to `validate` holds no skill file (a folder without `SKILL.md`, or, in
    /// strict mode, a file that is not one).
    NoSkillFile => "no-skill-file",
    /// Two skills of one layer have the same name.
    DuplicateName => "duplicate-name",
    /// A skill is hidden by a same-named skill of a higher layer.
    Shadowed => "shadowed",
    /// Two served names a reader cannot tell apart: they differ only in letter case,
    /// Unicode normalization or look-alike characters (UTS #39 confusables), and at least
    /// one of them has a capital letter or a character outside ASCII.
    LookalikeName => "lookalike-name",
    /// The skill's `eligibility.os` does not include this operating system.
    IneligibleOs => "ineligible-os",
    /// A variable named in `eligibility.env` is not set.
    IneligibleEnv => "ineligible-env",
    /// A binary named in `eligibility.binaries` is not on `PATH`.
    IneligibleBinary => "ineligible-binary",
    /// A tool of `requires_tools` is not allowed by the tool policy.
    MissingRequiredTool => "missing-required-tool",
    /// `command_tool` names a tool the host has not registered.
    UnknownCommandTool => "unknown-command-tool",
    /// A `command` collides with a built-in command.
    CommandCollision => "command-collision",
    /// A `toolsets` entry names no toolset the host registered.
    UnknownToolset => "unknown-toolset",
    /// The skill is disabled (by config or `default_enabled: false`).
    Disabled => "disabled",
    /// On a reload the file had errors, so its last version that loaded is still served.
    LastGoodServed => "last-good-served",
    /// An `## Examples` line does not route to its own skill or fails its flag schema.
    ExampleDoesNotRoute => "example-does-not-route",
    /// A `schedule` that is not a crontab(5) expression, or can never fire.
    InvalidSchedule => "invalid-schedule",
    // --- Content scan and trust (skill-registry's scan, trust policy and lock) ------------
    /// Text telling the model to ignore or override its earlier instructions.
    ScanOverrideInstructions => "scan-override-instructions",
    /// Text asking to reveal the system prompt, secrets, credentials or the environment.
    ScanRevealSecrets => "scan-reveal-secrets",
    /// Invisible characters (zero-width, tag characters) that hide text from a reviewer.
    ScanHiddenUnicode => "scan-hidden-unicode",
    /// Bidirectional-control characters that make text display in another order than read.
    ScanBidiControl => "scan-bidi-control",
    /// A long base64 or hex blob: content a reviewer cannot read.
    ScanEncodedBlob => "scan-encoded-blob",
    /// A link or command that sends secrets, environment or credential files out.
    ScanExfiltration => "scan-exfiltration",
    /// A download piped straight into a shell or interpreter (`curl ... | sh`).
    ScanPipeToShell => "scan-pipe-to-shell",
    /// A `data:` URI carrying inline content.
    ScanDataUri => "scan-data-uri",
    /// An HTML comment (invisible when rendered) that carries instructions.
    ScanCommentInstructions => "scan-comment-instructions",
    /// A command that destroys data, weakens the system or persists access, or an
    /// instruction to act without the user's consent.
    ScanDangerousCommand => "scan-dangerous-command",
    /// A skill from a low-trust source has scan findings, so it is not loaded.
    UntrustedFindings => "untrusted-findings",
    /// The skill's files do not match the lock file (`require_lock`).
    LockMismatch => "lock-mismatch",
    /// The lock file could not be read or parsed (`require_lock`): nothing is loaded.
    LockUnreadable => "lock-unreadable",
    /// Files of the skill past the manifest's limits (more files or deeper folders than a
    /// listing takes, or too large to hash): they are not hashed or scanned, and not served.
    ManifestIncomplete => "manifest-incomplete",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Serialize a path as text, with any bytes that are not UTF-8 replaced by U+FFFD (serde
/// refuses such a path, and one folder with such a name turned a whole JSON report into an
/// error). For `#[serde(serialize_with = "...")]` on path fields of wire shapes.
pub fn serialize_path<P: AsRef<std::path::Path>, S: serde::Serializer>(
    path: &P,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.as_ref().to_string_lossy())
}

/// One finding about one file: a stable code, a severity, a message a person can act on,
/// the file, and the 1-based line and column in that file where there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file the finding is about.
    #[serde(serialize_with = "serialize_path")]
    pub path: PathBuf,
    /// 1-based line in the file, when the finding has a place.
    pub line: Option<u32>,
    /// 1-based column (in characters) in the file, when the finding has a place.
    pub column: Option<u32>,
    /// Error or warning.
    pub severity: Severity,
    /// The stable code.
    pub code: Code,
    /// What is wrong and what to do about it.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic with no position.
    pub fn new(
        severity: Severity,
        code: Code,
        path: impl Into<PathBuf>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            path: path.into(),
            line: None,
            column: None,
            severity,
            code,
            message: message.into(),
        }
    }

    /// An error with no position.
    pub fn error(code: Code, path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, path, message)
    }

    /// A warning with no position.
    pub fn warning(code: Code, path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, path, message)
    }

    /// The same diagnostic at a 1-based line and column.
    pub fn at(mut self, line: u32, column: u32) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// The same diagnostic at an optional position.
    pub fn at_opt(mut self, pos: Option<(u32, u32)>) -> Self {
        if let Some((line, column)) = pos {
            self.line = Some(line);
            self.column = Some(column);
        }
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The path as shown in output.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Compiler-style: `path:line:col: error[code]: message`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": {}[{}]: {}", self.severity, self.code, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn codes_are_unique_kebab_case() {
        let mut seen = BTreeSet::new();
        for code in Code::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code text {s}");
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{s} is not kebab-case"
            );
        }
    }

    /// A path that is not UTF-8 is written with U+FFFD: serde refused it, and `validate
    /// --format json` printed an internal error instead of the diagnostics.
    #[cfg(unix)]
    #[test]
    #[allow(clippy::unwrap_used)]
    fn paths_that_are_not_utf8_serialize_lossily() {
        use std::os::unix::ffi::OsStrExt;
        let path = std::path::Path::new(std::ffi::OsStr::from_bytes(b"ok\xff/SKILL.md"));
        let d = Diagnostic::error(Code::NameTooLong, path, "too long");
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["path"], "ok\u{fffd}/SKILL.md");
    }

    #[test]
    fn display_is_compiler_style() {
        let d = Diagnostic::error(Code::NameTooLong, "a/SKILL.md", "too long").at(2, 7);
        assert_eq!(
            d.to_string(),
            "a/SKILL.md:2:7: error[name-too-long]: too long"
        );
        let d = Diagnostic::warning(Code::Shadowed, "b/SKILL.md", "hidden");
        assert_eq!(d.to_string(), "b/SKILL.md: warning[shadowed]: hidden");
    }
}
