//! `skill-scheduler` (in progress).

#![deny(missing_docs)]
