//! The crate's error type. Problems *in skill files* are [`crate::Diagnostic`]s, not errors;
//! this type covers misuse of the API itself, such as an unknown dialect name.

/// An error from `skill-format`'s API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A dialect name that is not one of the five.
    #[error("unknown dialect `{0}`: expected one of agentskills, actions, lily, pegasus, toolsets")]
    UnknownDialect(String),
    /// A skill file that is not UTF-8 ([`crate::frontmatter_data`]).
    #[error("SKILL.md is not UTF-8")]
    NotUtf8,
    /// A frontmatter that is never closed ([`crate::frontmatter_data`]).
    #[error("the frontmatter opened on line {0} is never closed")]
    UnclosedFrontmatter(u32),
    /// A skill file without frontmatter ([`crate::frontmatter_data`]).
    #[error("SKILL.md has no frontmatter")]
    NoFrontmatter,
    /// A frontmatter that does not parse as YAML ([`crate::frontmatter_data`]); the
    /// parser's message.
    #[error("frontmatter is not YAML: {0}")]
    NotYaml(String),
    /// A frontmatter that is not a mapping ([`crate::frontmatter_data`]).
    #[error("frontmatter is not a mapping")]
    NotAMapping,
    /// A frontmatter JSON cannot hold (a non-text key, say), found by the door that
    /// serializes [`crate::FrontmatterData`]; serde's message.
    #[error("frontmatter has no JSON form: {0}")]
    NoJsonForm(String),
}
