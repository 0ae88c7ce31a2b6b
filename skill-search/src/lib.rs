//! `skill-search` (in progress).

#![deny(missing_docs)]
