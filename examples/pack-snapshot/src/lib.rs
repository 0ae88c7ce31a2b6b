//! An example skill pack repository. The skills are in `skills/`; the library is empty on
//! purpose: the point of this package is `tests/report.rs`, the pack's snapshot test.
