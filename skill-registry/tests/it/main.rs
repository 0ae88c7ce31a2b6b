//! skill-registry's integration tests: one binary, one module per area.

mod sources;
mod trust;
