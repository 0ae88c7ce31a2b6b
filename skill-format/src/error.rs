//! The crate's error type. Problems *in skill files* are [`crate::Diagnostic`]s, not errors;
//! this type covers misuse of the API itself, such as an unknown dialect name.

/// An error from `skill-format`'s API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A dialect name that is not one of the five.
    #[error("unknown dialect `{0}`: expected one of agentskills, actions, lily, pegasus, toolsets")]
    UnknownDialect(String),
}
