//! `skill-router` (in progress).

#![deny(missing_docs)]
