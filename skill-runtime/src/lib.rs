//! `skill-runtime`: executing routed skills, and the Engine that composes the skills engine.
//!
//! It owns:
//! - [`exec`]: execution of routed skills by kind (host handlers as tower services, lily
//!   `tool_dispatch`, scripts under limits, templates for the model, `context: fork` as
//!   background tasks), multi-command model output in order, user slash commands, and the
//!   scheduler's [`Dispatcher`](skill_scheduler::Dispatcher);
//! - [`builtin`]: the built-in handlers `workflow.build` and `markdown.search`;
//! - [`Engine`]: the composition a server runs: one registry with its search index, notes
//!   index, scheduler, executor and event stream, all kept in step by registry change sets.
//!
//! The doors stand on it: `skill-http` (the JSON API under `/v1`), `skill-mcp`, the pack
//! report and `skill-server`'s command line; `skill-server serve` only reads configuration
//! and composes them.
//!
//! ## Naming of the Engine's operations
//!
//! One scheme, which the doors follow in their own handler names:
//! - a read is named for what it answers, a noun: `skills`, `entry`, `entries`,
//!   `skill_files`, `skill_file`, `skill_text`, `catalog`, `outline`, `section`,
//!   `schedules`, `profiles`, `health`, `events`;
//! - an action (it changes state, or computes an answer from the request's input) is a
//!   verb: `route`, `execute`, `invoke`, `search`, `select`, `extract`, `reload`, `lock`,
//!   `verify`, `shutdown`;
//! - a variant of an operation adds what differs after its name (`route_bytes`,
//!   `route_output`, `execute_output`, `invoke_skill`), and the operations of one area
//!   share its prefix (`discovery_*`, `notes_*`, `schedule_*`, `trigger_eval*`);
//! - a yes-or-no question starts with `is_` or a verb in the third person (`is_ready`,
//!   `runs_model`);
//! - an operation a protocol names keeps the protocol's name (`get_skill`).
//!
//! Features: `watch` (on by default), reloading on file changes (`EngineConfig::watch`,
//! skill-registry's notify watcher); `default-features = false` leaves execution, the engine
//! and the scheduler. Off by default: `replicas`, several replicas on one PostgreSQL database
//! and webhook delivery (the `replicas` module, `EngineConfig::replicas`); it brings
//! skill-store, its database client and an HTTP/1.1 client, so only hosts that share state
//! build them; `outbound`, the one HTTP client for what the engine sends (http, and https
//! over rustls; `replicas` turns it on); `hub`, remote sources (the `hub` module: skills
//! from another server's discovery index, verified and cached on disk).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod activation;
pub mod builtin;
mod engine;
mod error;
pub mod exec;
#[cfg(feature = "hub")]
pub mod hub;
mod ops;
#[cfg(feature = "outbound")]
pub mod outbound;
#[cfg(feature = "replicas")]
pub mod replicas;
mod state;
mod vocab;
// Above the engine and the executor both (a test inside `exec` would make a module cycle).
#[cfg(all(test, target_os = "linux"))]
mod verified_run_tests;
pub mod wire;
mod zip;

pub use engine::{ChangeEvent, EVENT_BUFFER, Engine, EngineConfig, Event};
pub use error::Error;
pub use ops::discovery::{
    ARCHIVE_FILE, ArtifactKind, DISCOVERY_SCHEMA, DiscoveryEntry, MAX_ARCHIVE_BYTES,
    MAX_ARCHIVE_FILES, WELL_KNOWN_PREFIX,
};
pub use ops::evals::{MAX_TRIGGER_EVAL_BYTES, read_trigger_cases};
pub use ops::files::{
    MAX_SKILL_FILE_BYTES, SKILL_FILE, SkillFiles, SkillSummary, frontmatter_refusal,
};
pub use ops::integrity::Locked;
pub use ops::profiles::{ProfileInfo, Profiles};
pub use ops::schedules::{ScheduleEntry, ScheduleQuery, Schedules};
pub use ops::{
    CatalogView, Diagnostics, Entries, Example, Executed, Health, Lookup, Readiness, Scope,
    SearchQuery, Shown, SkillList, SkillQuery,
};
/// The longest skill name the Agent Skills rule allows (see `SkillSummary::kebab_name`).
pub use skill_format::MAX_NAME_CHARS;
pub use skill_registry::{SECTION_SEPARATOR, Sha256};
pub use vocab::{format, registry, router, scheduler, search};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
