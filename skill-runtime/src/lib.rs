//! `skill-runtime`: executing routed skills, and the whole skills engine over HTTP.
//!
//! It owns:
//! - [`exec`]: execution of routed skills by kind (host handlers as tower services, lily
//!   `tool_dispatch`, scripts under limits, templates for the model, `context: fork` as
//!   background tasks), multi-command model output in order, user slash commands, and the
//!   scheduler's [`Dispatcher`](skill_scheduler::Dispatcher);
//! - [`builtin`]: the built-in handlers `workflow.build` and `markdown.search`;
//! - [`Engine`]: the composition a server runs: one registry with its search index, notes
//!   index, scheduler, executor and event stream, all kept in step by registry change sets;
//! - [`http`]: the JSON API under `/v1` on hyper 1.x and tower middleware, with an event
//!   stream (registry change sets and finished scheduled runs) and an OpenAPI document
//!   generated from the same route table.
//!
//! `skill-server serve` only reads configuration and composes these.
//!
//! Features (both on by default): `http`, the HTTP API and its hyper dependencies, and
//! `watch`, reloading on file changes (`EngineConfig::watch`, skill-registry's notify
//! watcher). `default-features = false` leaves execution, the engine and the scheduler.
//! Off by default: `replicas` (with `http`), several replicas on one PostgreSQL database
//! and webhook delivery (the `replicas` module, `EngineConfig::replicas`); it brings skill-store
//! and its database client, so only hosts that share state build them.
//!
//! ```no_run
//! # #[cfg(feature = "http")] mod demo {
//! use skill_registry::{RegistryConfig, Source};
//! use skill_runtime::http::{App, HttpConfig};
//! use skill_runtime::{Engine, EngineConfig};
//!
//! # async fn run() -> Result<(), skill_runtime::Error> {
//! let config = EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(
//!     "packs/actions",
//!     "builtin",
//! )]));
//! let engine = Engine::start(config)?;
//! let (listener, addr) = skill_runtime::http::bind("127.0.0.1:0".parse().map_err(|_| {
//!     skill_runtime::Error::Internal("bad address".into())
//! })?)
//! .await?;
//! println!("listening on http://{addr}/v1/");
//! let app = App::new(engine.clone(), HttpConfig::default());
//! skill_runtime::http::serve(listener, app, async {
//!     let _ = tokio::signal::ctrl_c().await;
//! })
//! .await?;
//! engine.shutdown().await;
//! # Ok(())
//! # }
//! # }
//! ```

#![deny(missing_docs)]

pub mod activation;
pub mod builtin;
mod engine;
mod error;
mod evals;
pub mod exec;
#[cfg(feature = "http")]
pub mod http;
mod integrity;
mod ops;
mod ops_discovery;
mod ops_files;
mod ops_profiles;
mod ops_schedules;
mod ops_sections;
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
pub use evals::{MAX_TRIGGER_EVAL_BYTES, read_trigger_cases};
pub use integrity::Locked;
pub use ops::{
    CatalogView, Diagnostics, Entries, Example, Executed, Health, Lookup, Readiness, Scope,
    SearchQuery, Shown, SkillList, SkillQuery,
};
pub use ops_discovery::{
    ARCHIVE_FILE, ArtifactKind, DISCOVERY_SCHEMA, DiscoveryEntry, MAX_ARCHIVE_BYTES,
    MAX_ARCHIVE_FILES, WELL_KNOWN_PREFIX,
};
pub use ops_files::{
    MAX_SKILL_FILE_BYTES, SKILL_FILE, SkillFiles, SkillSummary, frontmatter_refusal,
};
pub use ops_profiles::{ProfileInfo, Profiles};
pub use ops_schedules::{ScheduleEntry, ScheduleQuery, Schedules};
/// The longest skill name the Agent Skills rule allows (see `SkillSummary::kebab_name`).
pub use skill_format::MAX_NAME_CHARS;
pub use skill_registry::{SECTION_SEPARATOR, Sha256};
pub use vocab::{format, registry, router, scheduler, search};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
