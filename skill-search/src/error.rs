//! The crate's one error type.

use std::path::PathBuf;

/// What can go wrong while building, updating or querying an index.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// tantivy failed (out of memory for the writer, a corrupt on-disk directory, ...).
    #[error("search index error: {0}; rebuild the index (delete its folder if it is on disk)")]
    Index(#[from] tantivy::TantivyError),
    /// The on-disk index folder could not be opened or created.
    #[error("cannot open the index folder {path}: {message}")]
    Directory {
        /// The folder.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A notes folder could not be read.
    #[error("cannot read notes folder {path}: {source}")]
    Notes {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A trigger-eval file is not valid.
    #[error(
        "trigger eval: {0}; expected a JSON array of {{\"query\": \"...\", \"should_trigger\": true|false}}"
    )]
    TriggerEval(String),
    /// The static embedding table compiled into the crate is unusable (truncated, wrong
    /// format version, checksum mismatch): the build's `data/static-embeddings.bin` is
    /// damaged.
    #[error(
        "the bundled embedding table is unusable: {message}; reinstall or rebuild skill-search (its data/static-embeddings.bin is damaged)"
    )]
    Embeddings {
        /// What is wrong with it.
        message: String,
    },
    /// The sentence-embedding model (crate feature `transformer`) could not be loaded from
    /// its folder, or failed to run.
    #[error("transformer model in {path}: {message}")]
    Transformer {
        /// The model's folder.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A lock was poisoned by a panic on another thread.
    #[error("the search index was left inconsistent by a crash on another thread; rebuild it")]
    Poisoned,
}
