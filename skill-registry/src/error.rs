//! The crate's error type. Problems in skill files are diagnostics in the snapshot; this
//! type covers operations that can fail as a whole.

use std::path::PathBuf;

/// An error from `skill-registry`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No loaded skill has this name.
    #[error("no skill named `{0}`")]
    UnknownSkill(String),
    /// A file or folder operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
