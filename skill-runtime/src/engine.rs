//! The engine: one registry and everything kept in step with it by change sets (the search
//! index, the notes index, the event stream, the scheduler), and the executor.
//!
//! The registry's subscriber runs on the reloading thread: it applies the change set to the
//! search index (only the changed documents) and then publishes an [`Event::Change`] on a
//! bounded broadcast channel, which the HTTP event stream relays. Scheduled runs reach the
//! same channel as [`Event::Scheduled`] (SPEC section 8: a fire that needs a model, such as
//! a template or a workflow of instructions, is delivered to the host on the event stream).
//! A slow event reader loses old events (and is told how many), never blocks a reload.
//!
//! Forked tasks, notes search, the scheduler's history and the readiness a shared database
//! degrades are read through one `state::SharedState`, picked once at start (this process's,
//! or PostgreSQL's with the `replicas` feature and a store): the engine never asks which.
//!
//! The scheduler subscribes to change sets on its own, not through the engine's subscriber. The
//! executor (`exec::Runtime`) is the scheduler's dispatcher; with replicas or a webhook, the
//! `ReplicaDispatcher` wraps it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use skill_registry::{ChangeSet, Registry, RegistryConfig, Subscription};
#[cfg(feature = "watch")]
use skill_registry::{WatchOptions, Watcher, watch_folders};
use skill_router::RouterConfig;
use skill_scheduler::{JobInfo, RunRecord, Scheduler, SchedulerConfig};
use skill_search::{NotesIndex, SkillIndex, Storage};
use tokio::sync::broadcast;

use crate::exec::{Outcome, Runtime, RuntimeBuilder, RuntimeConfig, ScheduledRun};
#[cfg(not(feature = "replicas"))]
use crate::state::LocalState;
use crate::state::SharedState;

use crate::error::Error;

/// How many events a slow event-stream reader may fall behind before it loses some.
pub const EVENT_BUFFER: usize = 256;

/// What to start.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The sources and loading settings.
    pub registry: RegistryConfig,
    /// Watch the sources and reload on change (`None`: reload only on request). Feature
    /// `watch`.
    #[cfg(feature = "watch")]
    pub watch: Option<WatchOptions>,
    /// A folder of markdown notes to index for `markdown.search` and `/v1/notes/search`.
    pub notes: Option<PathBuf>,
    /// Routing settings.
    pub router: RouterConfig,
    /// Execution settings (script limits, environment, profiles' tools, forks).
    pub runtime: RuntimeConfig,
    /// Run scheduled skills (`None`: no scheduler; `/v1/schedules` still lists next fires).
    pub schedule: Option<SchedulerConfig>,
    /// Keep the skill search index in this folder, memory-mapped, instead of in RAM
    /// (`None`, the default): in its subfolder `skill-index`
    /// ([`skill_search::DISK_INDEX_DIR`]), rebuilt from the skills at start. Nothing else in
    /// the folder is touched.
    pub index_dir: Option<PathBuf>,
    /// Build the skill search index on its first use instead of at start (default
    /// false). A one-shot command that never searches then never pays for it.
    pub lazy_index: bool,
    /// A sentence-embedding model folder (such as all-MiniLM-L6-v2's) whose similarity of
    /// the request and the first candidate also gates selection
    /// ([`SkillIndex::with_transformer`]); default none. Feature `transformer`.
    #[cfg(feature = "transformer")]
    pub transformer: Option<PathBuf>,
    /// Shared state of several replicas and webhook delivery (default: neither). Feature
    /// `http`.
    #[cfg(feature = "replicas")]
    pub replicas: crate::replicas::Replicas,
}

impl EngineConfig {
    /// Defaults around a registry configuration: watching on, no notes, default routing and
    /// execution, the scheduler on (UTC, state in memory).
    pub fn new(registry: RegistryConfig) -> Self {
        EngineConfig {
            registry,
            #[cfg(feature = "watch")]
            watch: Some(WatchOptions::default()),
            notes: None,
            router: RouterConfig::default(),
            runtime: RuntimeConfig::default(),
            schedule: Some(SchedulerConfig::default()),
            index_dir: None,
            lazy_index: false,
            #[cfg(feature = "transformer")]
            transformer: None,
            #[cfg(feature = "replicas")]
            replicas: crate::replicas::Replicas::default(),
        }
    }

    /// For one question and out (a command-line run, the pack report): no watcher, no
    /// scheduler thread, the search index built only if a search asks for it.
    pub fn one_shot(registry: RegistryConfig) -> Self {
        EngineConfig {
            #[cfg(feature = "watch")]
            watch: None,
            schedule: None,
            lazy_index: true,
            ..EngineConfig::new(registry)
        }
    }
}

/// One registry change, as the event stream sends it (`event: change`) and
/// `POST /v1/reload` answers it.
#[derive(Debug, Clone)]
pub struct ChangeEvent {
    /// The generation before.
    pub previous_generation: u64,
    /// The new generation.
    pub generation: u64,
    /// Skills added.
    pub added: Vec<String>,
    /// Skills changed.
    pub changed: Vec<String>,
    /// Skills removed.
    pub removed: Vec<String>,
    /// Domain indexes added, changed or removed.
    pub domains: Vec<String>,
}

impl From<&ChangeSet> for ChangeEvent {
    fn from(c: &ChangeSet) -> Self {
        ChangeEvent {
            previous_generation: c.previous_generation,
            generation: c.generation,
            added: c.added.clone(),
            changed: c.changed.clone(),
            removed: c.removed.clone(),
            domains: c.domains.clone(),
        }
    }
}

/// One event of the engine's event stream ([`Engine::events`], `GET /v1/events`).
#[derive(Debug, Clone)]
pub enum Event {
    /// The registry changed (`event: change`).
    Change(ChangeEvent),
    /// A scheduled run finished (`event: scheduled`). When its outcome has
    /// `requires_interpretation` (a template, a workflow of instructions), the host hands
    /// `outcome.output` to its model.
    Scheduled(ScheduledRun),
}

impl Event {
    /// The SSE event name: `change` or `scheduled`.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Change(_) => "change",
            Event::Scheduled(_) => "scheduled",
        }
    }
}

/// The running engine. Share it as `Arc<Engine>`.
pub struct Engine {
    registry: Arc<Registry>,
    index: Arc<LazyIndex>,
    notes: Option<Arc<NotesIndex>>,
    events: broadcast::Sender<Arc<Event>>,
    started: Instant,
    index_errors: Arc<Mutex<Vec<String>>>,
    runtime: Runtime,
    scheduler: Mutex<Option<Scheduler>>,
    /// Tasks, notes search, the run history and readiness: this process's, or the
    /// database's that replicas share.
    state: Arc<dyn SharedState>,
    /// The webhook deliveries this process attempted, when replicas are configured.
    #[cfg(feature = "replicas")]
    deliveries: Option<crate::replicas::DeliveryLog>,
    _subscription: Subscription,
    #[cfg(feature = "watch")]
    watchers: Mutex<Vec<Watcher>>,
    /// The discovery index's archive digests, per folder content.
    archive_digests: ArchiveDigests,
    /// What works but not as configured, by what it is about (a remote source served from
    /// its cache): readiness reports it as degraded.
    degraded: Mutex<std::collections::BTreeMap<String, String>>,
    /// The profile names of the last snapshot asked about, with its generation: one
    /// skill's detail names its affinity under each, and walking every skill for them on
    /// each request made the detail cost grow with the pack.
    profile_names: ProfileNames,
}

/// The profile names of one snapshot generation, cached.
pub(crate) type ProfileNames = Mutex<Option<(u64, Arc<[String]>)>>;

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("generation", &self.registry.snapshot().generation())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Load the registry, build the indexes, subscribe them to change sets, build the
    /// executor with the built-in handlers, start the scheduler and the watchers. Call it
    /// within a tokio runtime when the scheduler is on (finished scheduled runs are then
    /// relayed to [`Engine::events`] by a task on that runtime).
    ///
    /// ```
    /// use skill_registry::{RegistryConfig, Source};
    /// use skill_runtime::{Engine, EngineConfig};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let dir = tempfile::tempdir()?;
    /// std::fs::create_dir_all(dir.path().join("greet"))?;
    /// std::fs::write(
    ///     dir.path().join("greet/SKILL.md"),
    ///     "---\nname: greet\ndescription: Greet the user by name.\n---\nSay hello to $ARGUMENTS.\n",
    /// )?;
    /// let mut config =
    ///     EngineConfig::new(RegistryConfig::with_sources(vec![Source::new(dir.path(), "project")]));
    /// # #[cfg(feature = "watch")] {
    /// config.watch = None; // reload on request only
    /// # }
    /// config.schedule = None; // no scheduler, so no tokio runtime is needed
    /// let engine = Engine::start(config)?;
    ///
    /// assert_eq!(engine.health().skills, 1);
    /// let query = skill_runtime::SearchQuery {
    ///     text: "greet someone".into(),
    ///     limit: 3,
    ///     profile: None,
    /// };
    /// assert_eq!(engine.search(&query)?[0].name, "greet");
    /// # Ok(())
    /// # }
    /// ```
    pub fn start(config: EngineConfig) -> Result<Arc<Engine>, Error> {
        Engine::start_with(config, |b| b)
    }

    /// [`Engine::start`], letting the host add its own handlers and tools to the executor.
    pub fn start_with(
        config: EngineConfig,
        customize: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder,
    ) -> Result<Arc<Engine>, Error> {
        // A webhook URL the destination policy refuses is refused before anything starts.
        #[cfg(feature = "replicas")]
        if let Some(hook) = &config.replicas.webhook {
            hook.check()
                .map_err(|m| Error::Scheduler(crate::error::message(m)))?;
        }
        // A trust policy that contradicts itself is the host's mistake: said before loading.
        config
            .registry
            .trust
            .check()
            .map_err(|e| Error::Config(e.to_string()))?;
        let registry = Arc::new(Registry::load(config.registry));
        let storage = match config.index_dir {
            Some(dir) => Storage::Disk(dir),
            None => Storage::Ram,
        };
        #[cfg(feature = "transformer")]
        let transformer = match &config.transformer {
            Some(dir) => Some(Arc::new(
                skill_search::Transformer::load(dir).map_err(|e| Error::Index(Arc::new(e)))?,
            )),
            None => None,
        };
        let index = Arc::new(LazyIndex {
            storage,
            built: Mutex::new(None),
            #[cfg(feature = "transformer")]
            transformer,
        });
        if !config.lazy_index {
            index.get(&registry)?;
        }
        let notes = match &config.notes {
            Some(root) => Some(Arc::new(
                NotesIndex::build(root).map_err(|e| Error::Index(Arc::new(e)))?,
            )),
            None => None,
        };
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let index_errors = Arc::new(Mutex::new(Vec::new()));
        let subscription = {
            let index = index.clone();
            let events = events.clone();
            let errors = index_errors.clone();
            registry.subscribe(move |change| {
                // Held while the change applies, so a first build waits for it.
                let built = index.built.lock();
                if let Ok(Some(index)) = built.as_deref() {
                    if let Err(e) = index.apply(change) {
                        tracing::warn!(error = %e, "search index update failed; rebuilding");
                        if let Err(e) = index.rebuild(change.snapshot.clone()) {
                            if let Ok(mut list) = errors.lock() {
                                list.push(e.to_string());
                            }
                        }
                    }
                }
                drop(built);
                // No receiver is fine: nobody is listening.
                let _ = events.send(Arc::new(Event::Change(ChangeEvent::from(change))));
            })
        };
        let mut builder = Runtime::builder(registry.clone())
            .config(config.runtime)
            .router(config.router)
            .workflow_builder();
        if let Some(n) = &notes {
            builder = builder.markdown_search(n.clone());
        }
        let runtime = customize(builder).build();
        forward_scheduled_runs(&runtime, &events);
        #[cfg(feature = "replicas")]
        let crate::replicas::Composed {
            dispatcher,
            state,
            deliveries,
        } = crate::replicas::compose(&runtime, config.replicas, notes.clone());
        #[cfg(not(feature = "replicas"))]
        let (dispatcher, state): (
            Arc<dyn skill_scheduler::Dispatcher>,
            Arc<dyn SharedState>,
        ) = (Arc::new(runtime.clone()), Arc::new(LocalState));
        let scheduler = match config.schedule {
            Some(sc) => Some(
                Scheduler::start(registry.clone(), dispatcher, sc)
                    .map_err(|e| Error::Scheduler(Arc::new(e)))?,
            ),
            None => None,
        };
        let engine = Engine {
            registry,
            index,
            notes,
            events,
            started: Instant::now(),
            index_errors,
            runtime,
            scheduler: Mutex::new(scheduler),
            state,
            #[cfg(feature = "replicas")]
            deliveries,
            _subscription: subscription,
            #[cfg(feature = "watch")]
            watchers: Mutex::new(Vec::new()),
            archive_digests: Default::default(),
            degraded: Mutex::default(),
            profile_names: Mutex::new(None),
        };
        #[cfg(feature = "watch")]
        if let Some(options) = config.watch {
            let watcher = engine
                .registry
                .watch(options)
                .map_err(|e| Error::Watch(Arc::new(e)))?;
            engine.keep(watcher);
            if let Some(notes) = &engine.notes {
                let notes = notes.clone();
                let state = engine.state.clone();
                let watcher = watch_folders(vec![notes.root().to_path_buf()], options, move |c| {
                    let paths: Vec<PathBuf> = if c.rescan {
                        Vec::new()
                    } else {
                        c.paths.into_iter().collect()
                    };
                    state.notes_changed(&paths);
                    let result = if paths.is_empty() {
                        notes.rebuild()
                    } else {
                        notes.update_paths(&paths)
                    };
                    if let Err(e) = result {
                        tracing::warn!(error = %e, "notes index update failed");
                    }
                    true
                })
                .map_err(|e| Error::Watch(Arc::new(e)))?;
                engine.keep(watcher);
            }
        }
        Ok(Arc::new(engine))
    }

    /// Record that the host used a skill (executed or loaded it): recent use breaks ties
    /// in search ranking.
    pub fn record_use(&self, skill: &str) {
        if let Ok(Some(index)) = self.index.built.lock().as_deref() {
            index.record_use(skill);
        }
    }

    /// Record a use of the skill of each successful outcome (see [`Engine::record_use`]).
    pub fn record_outcomes<'a>(&self, outcomes: impl IntoIterator<Item = &'a Outcome>) {
        for o in outcomes {
            if let (true, Some(skill)) = (o.ok, &o.skill) {
                self.record_use(skill);
            }
        }
    }

    /// Where tasks, notes search, the run history and readiness are read.
    pub(crate) fn state(&self) -> &dyn SharedState {
        &*self.state
    }

    /// With a database shared by replicas, record a started fork there and give it the
    /// cluster's id (see `replicas::tasks`); otherwise nothing.
    pub(crate) async fn share_task(&self, outcome: &mut Outcome) {
        self.state.share_task(self.runtime(), outcome).await;
    }

    #[cfg(feature = "watch")]
    fn keep(&self, watcher: Watcher) {
        if let Ok(mut w) = self.watchers.lock() {
            w.push(watcher);
        }
    }

    /// Say (`Some`) or unsay (`None`) why `what` works but not as configured, such as a
    /// remote source served from its cache because the remote does not answer; readiness
    /// lists it under `degraded` until unsaid.
    pub fn set_degraded(&self, what: &str, why: Option<String>) {
        if let Ok(mut map) = self.degraded.lock() {
            match why {
                Some(why) => map.insert(what.to_owned(), why),
                None => map.remove(what),
            };
        }
    }

    pub(crate) fn degraded_notes(&self) -> Vec<String> {
        self.degraded
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn profile_names_cache(&self) -> &ProfileNames {
        &self.profile_names
    }

    pub(crate) fn archive_digests(&self) -> &ArchiveDigests {
        &self.archive_digests
    }

    /// The registry (front doors go through the operations instead).
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The skill search index (kept current by change sets), built now if
    /// [`EngineConfig::lazy_index`] deferred it.
    pub(crate) fn index(&self) -> Result<Arc<SkillIndex>, Error> {
        self.index.get(&self.registry)
    }

    /// The notes index, when a notes folder is configured.
    pub(crate) fn notes(&self) -> Option<&Arc<NotesIndex>> {
        self.notes.as_ref()
    }

    /// The routing settings every operation routes with (one copy, the runtime's).
    pub fn router_config(&self) -> &RouterConfig {
        self.runtime.router()
    }

    /// A receiver of every event from now on: registry changes and finished scheduled
    /// runs.
    pub fn events(&self) -> broadcast::Receiver<Arc<Event>> {
        self.events.subscribe()
    }

    /// Seconds since start.
    pub fn uptime_seconds(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// Index rebuilds that failed (the index then serves its last state).
    pub(crate) fn index_errors(&self) -> Vec<String> {
        self.index_errors
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// The registry's current snapshot: the sources a door writes answers' paths
    /// relative to.
    pub fn snapshot(&self) -> Arc<skill_registry::Snapshot> {
        self.registry.snapshot()
    }

    /// The domains the built-in `workflow.build` handler accepts (the runtime's setting).
    pub fn workflow_domains(&self) -> &[String] {
        &self.runtime.config().workflow_domains
    }

    /// The executor.
    pub(crate) fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// How long a script may run before it is killed (the configured timeout, raised to
    /// its lower bound): a front door's time limit for executing calls goes past it, so
    /// that a script's own timeout is reported first.
    pub fn script_timeout(&self) -> std::time::Duration {
        self.runtime.config().limits.effective_timeout()
    }

    /// The scheduler's jobs with their next `next` fire times, when the scheduler runs.
    /// With a shared database, each job's last run and whether it runs are the cluster's.
    pub fn schedule_jobs(&self, next: usize) -> Option<Vec<JobInfo>> {
        let guard = self.scheduler.lock().ok()?;
        Some(self.state.jobs(guard.as_ref()?, next))
    }

    /// The scheduler's recent runs, when the scheduler runs: with a shared database, the
    /// cluster's (every replica shows the same), plus the fires only this process knows it
    /// missed (not run because the database did not answer its claim); else this
    /// process's.
    pub fn schedule_history(&self) -> Option<Vec<RunRecord>> {
        let guard = self.scheduler.lock().ok()?;
        Some(self.state.history(guard.as_ref()?))
    }

    /// The webhook deliveries (each with its attempts), oldest first: with a database every
    /// replica's as last read from the outbox, else this process's; empty without a webhook.
    #[cfg(feature = "replicas")]
    pub fn deliveries(&self) -> Vec<crate::replicas::DeliveryRecord> {
        self.deliveries
            .as_ref()
            .map(|log| log.list())
            .unwrap_or_default()
    }

    /// Stop everything that runs in the background: watchers, the scheduler (its state is
    /// saved as it goes), running scripts and forked tasks.
    pub async fn shutdown(&self) {
        #[cfg(feature = "watch")]
        self.stop_watching();
        let scheduler = self.scheduler.lock().ok().and_then(|mut s| s.take());
        if let Some(s) = scheduler {
            s.shutdown();
        }
        self.runtime.shutdown().await;
    }

    /// Stop watching files (reloads on request still work).
    #[cfg(feature = "watch")]
    pub fn stop_watching(&self) {
        let watchers = match self.watchers.lock() {
            Ok(mut w) => std::mem::take(&mut *w),
            Err(_) => Vec::new(),
        };
        for w in watchers {
            w.stop();
        }
    }
}

impl Engine {
    /// Whether search and selection run a sentence-embedding model (feature
    /// `transformer`, [`EngineConfig`]'s `transformer`): milliseconds of CPU a request, so an
    /// async host should call them off its executor's threads.
    pub fn runs_model(&self) -> bool {
        #[cfg(feature = "transformer")]
        if self.index.transformer.is_some() {
            return true;
        }
        false
    }
}

/// The skill search index, built at start or on first use.
struct LazyIndex {
    storage: Storage,
    built: Mutex<Option<Arc<SkillIndex>>>,
    /// The sentence-embedding model the index gates with, loaded at start.
    #[cfg(feature = "transformer")]
    transformer: Option<Arc<skill_search::Transformer>>,
}

impl LazyIndex {
    /// The index, built from the registry's current snapshot if it is not yet.
    fn get(&self, registry: &Registry) -> Result<Arc<SkillIndex>, Error> {
        let mut built = self.built.lock().map_err(|_| {
            Error::Index(crate::error::message("the search index lock is poisoned"))
        })?;
        if let Some(index) = &*built {
            return Ok(index.clone());
        }
        let index = SkillIndex::build_in(registry.snapshot(), self.storage.clone())
            .map_err(|e| Error::Index(Arc::new(e)))?;
        #[cfg(feature = "transformer")]
        let index = match &self.transformer {
            Some(model) => index.with_transformer(Arc::clone(model)),
            None => index,
        };
        let index = Arc::new(index);
        *built = Some(index.clone());
        Ok(index)
    }
}

/// Relay the runtime's finished scheduled runs onto the event channel, from a task on the
/// current tokio runtime. Without one there is no scheduler either (it needs one), so no
/// scheduled run to relay. The task ends when the runtime is dropped.
fn forward_scheduled_runs(runtime: &Runtime, events: &broadcast::Sender<Arc<Event>>) {
    use tokio::sync::broadcast::error::RecvError;
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let mut runs = runtime.scheduled_runs();
    let events = events.clone();
    handle.spawn(async move {
        loop {
            match runs.recv().await {
                Ok(run) => {
                    // No receiver is fine: nobody is listening.
                    let _ = events.send(Arc::new(Event::Scheduled(run)));
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "scheduled runs lost before the event stream");
                }
                Err(RecvError::Closed) => return,
            }
        }
    });
}

/// Archive digests by (folder digest, skill file name): the same files make the same zip
/// (the discovery index's `archive` entries; kept here, with the engine that owns them).
#[derive(Debug, Default)]
pub(crate) struct ArchiveDigests(
    pub(crate)  std::sync::Mutex<
        std::collections::HashMap<(skill_registry::Sha256, String), skill_registry::Sha256>,
    >,
);
