//! The engine's typed operations: the one doorway HTTP, the command line, MCP and the pack
//! report go through.
//!
//! Every question a front door can ask (list, show, disclose, route, execute, search,
//! select, schedules, diagnostics, reload, events) is one method on [`Engine`] with typed
//! arguments and a typed answer. The routing settings are the engine's one
//! [`RouterConfig`](skill_router::RouterConfig) (from [`EngineConfig::router`]), used the
//! same way by `route`, `execute`, `execute_output` and `invoke`; a request's profile
//! overrides only its profile. Wire formats (JSON shapes, status codes) are not here: see the
//! `wire` module.
//!
//! [`EngineConfig::router`]: crate::EngineConfig::router
//!
//! Every door asks an operation here and renders the typed answer with a `wire` shape: HTTP's
//! handlers, the CLI's `*_cmd.rs`, `skill_pack::report` and skill-mcp. The operations live
//! in this folder by area: this file (skills, disclosure, routing, execution, search, tasks),
//! `files` (what only MCP asks), `schedules`, `sections`, `discovery`, `integrity` (findings,
//! lock, verify) and `evals` (trigger evals). So `audit`, `lock`, `verify`, `eval` and the pack report agree
//! with the server. A skill the trust policy excluded is refused by the disclosure view and by
//! the operator's inspection alike (`show`, `Lookup::Inspect`: `registry::Error::Excluded`,
//! wire code `skill_excluded`). `EngineConfig::one_shot` is the command line's engine: no
//! watcher, no scheduler thread, and the search index built on the first search.

pub(crate) mod discovery;
pub(crate) mod evals;
pub(crate) mod files;
pub(crate) mod integrity;
pub(crate) mod profiles;
pub(crate) mod schedules;
pub(crate) mod sections;

use std::sync::Arc;

use skill_registry::{
    Affinity, Budget, Caller, Catalog, CatalogFormat, Disclosure, ResourceListing, Skill, Snapshot,
    Status, Trust, closest_names,
};
use skill_router::{Extraction, Flags, Route, RoutedOutput, Router};
use skill_scheduler::scheduled_skills;
use skill_search::{Filter, Match, NoteHit, SearchRequest, SelectOptions, Selection};

use crate::activation::{self, Trigger};
use crate::engine::{ChangeEvent, Engine};
use crate::error::Error;
use crate::exec::{CommandOutcome, Context, Outcome, TaskInfo};

/// Who asks, and under which profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// The model (default) or a user: trigger control follows it.
    pub caller: Caller,
    /// The processing profile (`None`: the engine's configured one, if any).
    pub profile: Option<String>,
}

impl Scope {
    /// The model, under the engine's profile.
    pub fn model() -> Self {
        Scope::default()
    }

    /// A user, under the engine's profile.
    pub fn user() -> Self {
        Scope {
            caller: Caller::User,
            profile: None,
        }
    }

    /// The same scope under a profile (`None` leaves it as is).
    pub fn with_profile(mut self, profile: Option<String>) -> Self {
        if profile.is_some() {
            self.profile = profile;
        }
        self
    }
}

/// Which skills [`Engine::skills`] lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillQuery {
    /// Invalid, ineligible and shadowed-out entries too (default: loaded skills only).
    pub all: bool,
    /// Only this layer.
    pub layer: Option<String>,
    /// Only this actions domain.
    pub domain: Option<String>,
    /// Only skills this caller may invoke.
    pub invocable_by: Option<Caller>,
    /// Leave out skills this profile excludes.
    pub profile: Option<String>,
}

/// The skills [`Engine::skills`] lists, by name.
#[derive(Debug, Clone)]
pub struct SkillList {
    /// The snapshot generation they come from.
    pub generation: u64,
    /// The skills.
    pub skills: Vec<Arc<Skill>>,
    /// The trust level of each skill's source, in the order of `skills`.
    pub trust: Vec<Trust>,
}

/// Everything a registry holds: winners, domain indexes and shadowed entries
/// ([`Engine::entries`]).
#[derive(Debug, Clone)]
pub struct Entries {
    /// The snapshot generation.
    pub generation: u64,
    /// The winning skill of each name, by name.
    pub skills: Vec<Arc<Skill>>,
    /// Domain index entries.
    pub domains: Vec<Arc<Skill>>,
    /// Entries a higher layer hides.
    pub shadowed: Vec<Arc<Skill>>,
}

/// One entry in full, whatever its status ([`Engine::entry`]).
#[derive(Debug, Clone)]
pub struct Shown {
    /// The snapshot generation.
    pub generation: u64,
    /// The entry (a skill or a domain index).
    pub skill: Arc<Skill>,
    /// The entries of the same name and kind it hides, lowest layer first.
    pub shadows: Vec<Arc<Skill>>,
    /// The trust level of its source.
    pub trust: Trust,
    /// Its affinity under each profile the engine knows ([`Engine::profiles`]), by name.
    pub profiles: Vec<(String, Affinity)>,
}

/// A catalog with the generation it was built from ([`Engine::catalog`]).
#[derive(Debug, Clone)]
pub struct CatalogView {
    /// The snapshot generation.
    pub generation: u64,
    /// The catalog and its budget report.
    pub catalog: Catalog,
}

/// How [`Engine::resources`] and [`Engine::resource`] find the skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// As the caller may see it: loaded, available to the caller and profile.
    Disclosed(Scope),
    /// Any entry of that name (a skill or a domain index), whatever its status: for
    /// inspection (`skill-server resources`).
    Inspect,
}

/// A skill search ([`Engine::search`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchQuery {
    /// The query text.
    pub text: String,
    /// Most results.
    pub limit: usize,
    /// Leave out skills this profile excludes.
    pub profile: Option<String>,
}

/// Every diagnostic of a snapshot, sorted by place ([`Engine::diagnostics`]).
#[derive(Debug, Clone)]
pub struct Diagnostics {
    /// The snapshot generation.
    pub generation: u64,
    /// How many are errors.
    pub errors: usize,
    /// How many are warnings.
    pub warnings: usize,
    /// The diagnostics: the registry's, failing `## Examples` lines, lily commands the
    /// router cannot dispatch, schedules that do not parse.
    pub diagnostics: Vec<skill_format::Diagnostic>,
}

/// One model command routed and executed ([`Engine::execute`]).
#[derive(Debug)]
pub struct Executed {
    /// Where the command went.
    pub route: Route,
    /// What running it gave; `None` when the route invokes nothing (help, an error).
    pub outcome: Option<Outcome>,
}

/// One `## Examples` line of a skill ([`Engine::examples`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// The skill whose section it is in.
    pub skill: String,
    /// The line, trimmed, as the model or a user would type it.
    pub text: String,
}

/// Liveness ([`Engine::health`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    /// The snapshot generation.
    pub generation: u64,
    /// Loaded skills.
    pub skills: usize,
    /// Seconds since start.
    pub uptime_seconds: u64,
}

/// Readiness ([`Engine::ready`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    /// The snapshot generation.
    pub generation: u64,
    /// Why it is not ready (index rebuilds that failed); empty when ready.
    pub problems: Vec<String>,
    /// What does not work while it stays ready: with replicas, a shared database that does
    /// not answer or answers with an error (only claims of scheduled fires, forked tasks
    /// and notes search need it, and every replica shares it, so failing readiness would
    /// take every replica's whole API out of a load balancer at once).
    pub degraded: Vec<String>,
}

impl Readiness {
    /// Whether skills are loaded and indexed.
    pub fn is_ready(&self) -> bool {
        self.problems.is_empty()
    }
}

impl Engine {
    /// Liveness: generation, loaded skills, uptime.
    pub fn health(&self) -> Health {
        let snapshot = self.registry().snapshot();
        Health {
            generation: snapshot.generation(),
            skills: snapshot.skills().count(),
            uptime_seconds: self.uptime_seconds(),
        }
    }

    /// Readiness: ready once no index rebuild failed; with a database shared by replicas
    /// that does not answer (or answers with an error), ready but degraded, saying why.
    pub fn ready(&self) -> Readiness {
        Readiness {
            generation: self.registry().snapshot().generation(),
            problems: self.index_errors(),
            degraded: self
                .state()
                .degraded()
                .into_iter()
                .chain(self.degraded_notes())
                .collect(),
        }
    }

    /// Skills, by name, filtered.
    pub fn skills(&self, query: &SkillQuery) -> SkillList {
        let snapshot = self.registry().snapshot();
        let profile = query.profile.as_deref();
        let skills = snapshot
            .entries()
            .filter(|s| query.all || s.status == Status::Loaded)
            .filter(|s| query.layer.as_ref().is_none_or(|l| &s.layer == l))
            .filter(|s| query.domain.is_none() || s.domain == query.domain)
            .filter(|s| match query.invocable_by {
                None => true,
                Some(Caller::Model) => s.model_invocable(),
                Some(Caller::User) => s.user_invocable(),
            })
            .filter(|s| s.affinity(profile) != Affinity::Excluded)
            .cloned()
            .collect::<Vec<_>>();
        let config = self.registry().config();
        SkillList {
            generation: snapshot.generation(),
            trust: skills.iter().map(|s| config.trust_of(s)).collect(),
            skills,
        }
    }

    /// Every `## Examples` line of every loaded skill, skills by name, lines in order.
    pub fn examples(&self) -> Vec<Example> {
        let snapshot = self.registry().snapshot();
        snapshot
            .skills()
            .flat_map(|s| {
                skill_format::sections::example_lines(&s.body)
                    .into_iter()
                    .map(|e| Example {
                        skill: s.name.clone(),
                        text: e.text.to_owned(),
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Every entry the sources load: winners, domain indexes and shadowed entries.
    pub fn entries(&self) -> Entries {
        let snapshot = self.registry().snapshot();
        Entries {
            generation: snapshot.generation(),
            skills: snapshot.entries().cloned().collect(),
            domains: snapshot.domains().cloned().collect(),
            shadowed: snapshot.shadowed().to_vec(),
        }
    }

    /// The refusal of the entry `name` when the trust policy excluded it (`skill_excluded`
    /// with its reason); `None` when no excluded entry has that name. A door that cannot
    /// find what was asked for uses it to say why instead of "not found"; it costs one
    /// lookup (no suggestions are computed).
    pub fn exclusion(&self, name: &str) -> Option<Error> {
        let snapshot = self.registry().snapshot();
        let name = name.trim();
        let found = snapshot.entry(name).or_else(|| snapshot.domain(name))?;
        skill_registry::Error::excluded(found).map(Error::disclosure)
    }

    /// One entry (a skill or a domain index) in full, whatever its status, with the
    /// entries it shadows. Unknown: [`Error::UnknownSkill`] with the closest names; one the
    /// trust policy excluded: the `skill_excluded` error with its reason.
    pub fn entry(&self, name: &str) -> Result<Shown, Error> {
        let snapshot = self.registry().snapshot();
        let skill = inspect(&snapshot, name)?;
        let shadows = snapshot
            .shadowed()
            .iter()
            .filter(|h| h.name == skill.name && h.kind == skill.kind)
            .cloned()
            .collect();
        let profiles = self
            .profile_names(&snapshot)
            .iter()
            .map(|p| (p.clone(), skill.affinity(Some(p))))
            .collect();
        Ok(Shown {
            generation: snapshot.generation(),
            trust: self.registry().config().trust_of(&skill),
            profiles,
            skill,
            shadows,
        })
    }

    /// The `get_skill` tiers (an empty path: the domain listing). Loading one skill's
    /// instructions counts as a use of it (search ranking), a listing does not.
    #[tracing::instrument(name = "skills.get_skill", skip_all, fields(gen_ai.operation.name = "get_skill"))]
    pub fn get_skill(&self, path: Option<&str>, scope: &Scope) -> Result<String, Error> {
        let snapshot = self.registry().snapshot();
        let path = path.map(str::trim).filter(|p| !p.is_empty());
        let text = self
            .view(&snapshot, scope)
            .get_skill(path)
            .map_err(Error::disclosure)?;
        if let Some(skill) = path.and_then(|p| snapshot.entry(p)) {
            self.record_use(&skill.name);
            if scope.caller == Caller::Model {
                activation::activated(&snapshot, Trigger::Model, &skill.name);
            }
        }
        Ok(text)
    }

    /// The catalog for the system prompt, fitted to a budget, with its report.
    #[tracing::instrument(name = "skills.catalog", skip_all, fields(gen_ai.operation.name = "catalog"))]
    pub fn catalog(&self, format: CatalogFormat, budget: &Budget, scope: &Scope) -> CatalogView {
        let snapshot = self.registry().snapshot();
        CatalogView {
            generation: snapshot.generation(),
            catalog: self.view(&snapshot, scope).catalog(format, budget),
        }
    }

    /// A skill's files: relative path, size, kind and the digest its manifest holds
    /// (capped; the listing says when).
    pub fn resources(&self, name: &str, lookup: &Lookup) -> Result<ResourceListing, Error> {
        let snapshot = self.registry().snapshot();
        match lookup {
            Lookup::Disclosed(scope) => self
                .view(&snapshot, scope)
                .resource_listing(name)
                .map_err(Error::disclosure),
            Lookup::Inspect => snapshot
                .resource_listing(&*inspect(&snapshot, name)?)
                .map_err(Error::disclosure),
        }
    }

    /// One resource's bytes, confined to the skill folder and size-capped: only a file of
    /// the skill's manifest, and with `require_lock` only bytes that hash as locked
    /// (`lock_mismatch` otherwise; [`skill_registry::Snapshot::read_file`]).
    pub fn resource(&self, name: &str, path: &str, lookup: &Lookup) -> Result<Vec<u8>, Error> {
        let snapshot = self.registry().snapshot();
        match lookup {
            Lookup::Disclosed(scope) => self
                .view(&snapshot, scope)
                .read_resource(name, path)
                .map_err(Error::disclosure),
            Lookup::Inspect => snapshot
                .read_resource(&*inspect(&snapshot, name)?, path)
                .map_err(Error::disclosure),
        }
    }

    /// Ranked, explained skills for a query.
    pub fn search(&self, query: &SearchQuery) -> Result<Vec<Match>, Error> {
        self.index()?
            .search(&SearchRequest {
                text: &query.text,
                recent_turns: &[],
                limit: query.limit,
                filter: Filter {
                    profile: query.profile.clone(),
                    model_invocable_only: false,
                },
            })
            .map_err(|e| Error::Search(Arc::new(e)))
    }

    /// The skills to pre-load for a message, with the disclosure tier.
    #[tracing::instrument(
        name = "skills.select",
        skip_all,
        fields(gen_ai.operation.name = "select", skills.input = activation::content(message))
    )]
    pub fn select(&self, message: &str, options: &SelectOptions) -> Result<Selection, Error> {
        let started = std::time::Instant::now();
        let selection = self
            .index()?
            .select(message, options)
            .map_err(|e| Error::Search(Arc::new(e)))?;
        activation::selected(&self.registry().snapshot(), &selection, started.elapsed());
        Ok(selection)
    }

    /// What the search index reports about the skills it indexed (trigger patterns that
    /// do not compile, and the like); builds the index if it was deferred.
    pub fn index_diagnostics(&self) -> Result<Vec<skill_format::Diagnostic>, Error> {
        Ok(self.index()?.diagnostics())
    }

    /// Notes the notes index skipped, and why (empty without a notes folder).
    pub fn notes_warnings(&self) -> Vec<String> {
        self.notes().map(|n| n.warnings()).unwrap_or_default()
    }

    /// Ranked markdown notes with highlighted snippets; [`Error::NoNotes`] when no notes
    /// folder is configured. With a database shared by replicas, PostgreSQL ranks the
    /// notes (the folder is mirrored into it); otherwise the in-process tantivy index, on
    /// tokio's blocking pool, so that a long search does not stall the async workers.
    pub async fn notes_search(&self, text: &str, limit: usize) -> Result<Vec<NoteHit>, Error> {
        let notes = self.notes().ok_or(Error::NoNotes)?;
        self.state().notes_search(notes, text, limit).await
    }

    /// Every diagnostic of the current snapshot: the registry's, failing `## Examples`
    /// lines, lily commands the router cannot dispatch, schedules that do not parse;
    /// sorted by file, line, column and code. What `skill-server validate`, the pack report
    /// and `/v1/diagnostics` report.
    pub fn diagnostics(&self) -> Diagnostics {
        let snapshot = self.registry().snapshot();
        let diagnostics = all_diagnostics(&snapshot, self.router_config());
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        Diagnostics {
            generation: snapshot.generation(),
            errors,
            warnings: diagnostics.len() - errors,
            diagnostics,
        }
    }

    /// Split model output into `cmd`-block commands and conversational text.
    pub fn extract<'o>(&self, output: &'o str) -> Extraction<'o> {
        skill_router::extract(output)
    }

    /// [`Engine::extract`] over bytes: [`skill_router::Error::InvalidUtf8`] when they are
    /// not UTF-8.
    pub fn extract_bytes<'o>(&self, output: &'o [u8]) -> Result<Extraction<'o>, Error> {
        skill_router::extract_bytes(output).map_err(|e| Error::route(&e))
    }

    /// Route one line from the model or a user with the engine's routing settings.
    #[tracing::instrument(
        name = "skills.route",
        skip_all,
        fields(gen_ai.operation.name = "route", skills.input = activation::content(text))
    )]
    pub fn route(&self, text: &str, scope: &Scope) -> Route {
        let snapshot = self.registry().snapshot();
        let route = self.router(&snapshot, scope).route(text, scope.caller);
        routed(&snapshot, &route, scope.caller);
        route
    }

    /// [`Engine::route`] over bytes (bytes that are not UTF-8 route to the router's
    /// `invalid-utf8` error).
    #[tracing::instrument(name = "skills.route", skip_all, fields(gen_ai.operation.name = "route"))]
    pub fn route_bytes(&self, text: &[u8], scope: &Scope) -> Route {
        let snapshot = self.registry().snapshot();
        let route = self
            .router(&snapshot, scope)
            .route_bytes(text, scope.caller);
        routed(&snapshot, &route, scope.caller);
        route
    }

    /// Route the commands of a whole model output, in order: the first
    /// [`MAX_OUTPUT_COMMANDS`](crate::exec::MAX_OUTPUT_COMMANDS), those an execution would
    /// run. The extraction still lists every command; the rest are not routed (a 1 MB
    /// output of one-word commands made a 60 MB answer).
    #[tracing::instrument(name = "skills.route_output", skip_all, fields(gen_ai.operation.name = "route"))]
    pub fn route_output<'o>(&self, output: &'o str, scope: &Scope) -> RoutedOutput<'o> {
        let snapshot = self.registry().snapshot();
        self.router(
            &snapshot,
            &Scope::model().with_profile(scope.profile.clone()),
        )
        .route_output_first(output, crate::exec::MAX_OUTPUT_COMMANDS)
    }

    /// Route one model command and execute it when it invokes a skill. A successful
    /// execution counts as a use of its skill.
    #[tracing::instrument(
        name = "skills.execute",
        skip_all,
        fields(skills.operation = "execute", skills.input = activation::content(command))
    )]
    pub async fn execute(&self, command: &str, scope: &Scope) -> Executed {
        let snapshot = self.registry().snapshot();
        let scope = Scope::model().with_profile(scope.profile.clone());
        let route = self.router(&snapshot, &scope).route(command, Caller::Model);
        self.run_routed(snapshot, &scope, route).await
    }

    /// Execute one skill by its typed name with `arguments` (its `$ARGUMENTS`, read as the
    /// words after a name), as the model, with no command line to parse: MCP's
    /// `use_skill`. [`Error::Disclosure`] when the model may not see the skill under the
    /// profile; otherwise what [`Engine::execute`] gives for the same invocation.
    #[tracing::instrument(
        name = "skills.execute",
        skip_all,
        fields(skills.operation = "invoke_skill", skills.input = activation::content(name))
    )]
    pub async fn invoke_skill(
        &self,
        name: &str,
        arguments: Option<&str>,
        scope: &Scope,
    ) -> Result<Executed, Error> {
        let snapshot = self.registry().snapshot();
        let scope = Scope::model().with_profile(scope.profile.clone());
        self.view(&snapshot, &scope)
            .skill(name)
            .map_err(Error::disclosure)?;
        let route = self.router(&snapshot, &scope).route_skill(name, arguments);
        Ok(self.run_routed(snapshot, &scope, route).await)
    }

    /// Execute a model's route when it invokes a skill; a successful execution counts as
    /// a use of its skill.
    async fn run_routed(
        &self,
        snapshot: Arc<skill_registry::Snapshot>,
        scope: &Scope,
        route: Route,
    ) -> Executed {
        routed(&snapshot, &route, Caller::Model);
        let outcome = match &route {
            Route::Invoke(inv) => {
                let mut o = self
                    .runtime()
                    .execute(inv, &self.context(scope).with_snapshot(snapshot))
                    .await;
                self.share_task(&mut o).await;
                Some(o)
            }
            _ => None,
        };
        self.record_outcomes(outcome.as_ref());
        Executed { route, outcome }
    }

    /// Route a whole model output and execute its commands in order (one failure does
    /// not stop the rest), within the limits of
    /// [`Runtime::execute_output`](crate::exec::Runtime::execute_output): at most
    /// [`MAX_OUTPUT_COMMANDS`](crate::exec::MAX_OUTPUT_COMMANDS) commands and
    /// [`MAX_EXECUTION_OUTPUT_BYTES`](crate::exec::MAX_EXECUTION_OUTPUT_BYTES) of output,
    /// one last result naming the first command not executed. Successful executions count
    /// as uses. The commands' activations are logged at DEBUG, with one INFO summary.
    #[tracing::instrument(name = "skills.execute_output", skip_all, fields(skills.operation = "execute_output"))]
    pub async fn execute_output(&self, output: &str, scope: &Scope) -> Vec<CommandOutcome> {
        let scope = Scope::model().with_profile(scope.profile.clone());
        let snapshot = self.registry().snapshot();
        let mut results = self
            .runtime()
            .execute_output(
                output,
                &self.context(&scope).with_snapshot(snapshot.clone()),
            )
            .await;
        for r in &mut results {
            self.share_task(&mut r.outcome).await;
        }
        // An outcome with a kind ran its skill (route errors have none).
        let ran_skill = results.iter().filter(|r| r.outcome.kind.is_some());
        activation::commands_ran(
            &snapshot,
            ran_skill.filter_map(|r| r.outcome.skill.as_deref()),
        );
        self.record_outcomes(results.iter().map(|r| &r.outcome));
        results
    }

    /// Run a user's slash line (`/skill name args`, `/command args`, `/name args`).
    #[tracing::instrument(
        name = "skills.invoke",
        skip_all,
        fields(skills.operation = "invoke", skills.input = activation::content(line))
    )]
    pub async fn invoke(&self, line: &str, scope: &Scope) -> Outcome {
        let scope = Scope::user().with_profile(scope.profile.clone());
        let snapshot = self.registry().snapshot();
        let mut outcome = self
            .runtime()
            .invoke(line, &self.context(&scope).with_snapshot(snapshot.clone()))
            .await;
        self.share_task(&mut outcome).await;
        ran(&snapshot, &outcome, Trigger::UserSlashCommand);
        self.record_outcomes([&outcome]);
        outcome
    }

    /// Create a workflow with the built-in `workflow.build` handler, as a user.
    pub async fn build_workflow(&self, flags: Flags) -> Outcome {
        self.runtime()
            .build_workflow(flags, &self.context(&Scope::user()))
            .await
    }

    /// Forked tasks (`context: fork`) with their status and outcome, each outcome without
    /// its output (`null`; [`Engine::task`] has it): this process's, or with a database
    /// shared by replicas the cluster's most recent ones.
    pub async fn tasks(&self) -> Result<Vec<TaskInfo>, Error> {
        self.state().tasks(self.runtime()).await
    }

    /// One forked task; [`Error::UnknownTask`] when it is unknown or dropped. With a
    /// database shared by replicas, any replica's task (one whose replica died is failed
    /// with the reason once its lease has run out).
    pub async fn task(&self, id: u64) -> Result<TaskInfo, Error> {
        self.state().task(self.runtime(), id).await
    }

    /// Reload every source now and return the change set. It reads the disk: from async
    /// code, call it on a blocking thread.
    pub fn reload(&self) -> ChangeEvent {
        ChangeEvent::from(&self.registry().reload())
    }

    /// The profile a request runs under: its own, else the engine's configured one. The one
    /// place a request's profile overrides the engine's, for routing, disclosure and
    /// execution alike.
    fn profile<'a>(&'a self, scope: &'a Scope) -> Option<&'a str> {
        scope
            .profile
            .as_deref()
            .or(self.router_config().profile.as_deref())
    }

    fn router<'s>(&self, snapshot: &'s Snapshot, scope: &Scope) -> Router<'s> {
        Router::with_config(snapshot, self.runtime().router_under(self.profile(scope)))
    }

    pub(crate) fn view<'s>(&self, snapshot: &'s Snapshot, scope: &Scope) -> Disclosure<'s> {
        Disclosure::new(snapshot)
            .profile(self.profile(scope))
            .caller(scope.caller)
            .mark_low_trust(self.registry().config().trust.mark_low_trust)
    }

    fn context(&self, scope: &Scope) -> Context {
        let ctx = match scope.caller {
            Caller::User => Context::user(),
            Caller::Model => Context::model(),
        };
        match self.profile(scope) {
            Some(p) => ctx.with_profile(p.to_owned()),
            None => ctx,
        }
    }
}

/// Any entry of that name (a skill or a domain index), whatever its status, except one the
/// trust policy excluded: that is the `skill_excluded` error with its reason (excluded
/// means excluded in every door, inspection included).
pub(crate) fn inspect(snapshot: &Snapshot, name: &str) -> Result<Arc<Skill>, Error> {
    let name = name.trim();
    let found = snapshot.entry(name).or_else(|| snapshot.domain(name));
    if let Some(excluded) = found.and_then(|s| skill_registry::Error::excluded(s)) {
        return Err(Error::disclosure(excluded));
    }
    // With `require_lock`, a skill file changed since it was admitted is not shown either.
    if let Some(s) = found {
        snapshot.verify_skill_file(s).map_err(Error::disclosure)?;
    }
    found.cloned().ok_or_else(|| {
        Error::disclosure(skill_registry::Error::UnknownSkill {
            name: name.to_owned(),
            suggestions: closest_names(
                name,
                snapshot
                    .entries()
                    .chain(snapshot.domains())
                    .map(|s| s.name.as_str()),
            ),
        })
    })
}

/// Every diagnostic of a snapshot (see [`Engine::diagnostics`]), sorted.
pub(crate) fn all_diagnostics(
    snapshot: &Snapshot,
    router: &skill_router::RouterConfig,
) -> Vec<skill_format::Diagnostic> {
    let mut all = snapshot.diagnostics().to_vec();
    all.extend(skill_router::lint_examples(snapshot));
    all.extend_from_slice(Router::with_config(snapshot, router.clone()).diagnostics());
    all.extend(scheduled_skills(snapshot).1);
    all.sort_by(|a, b| {
        (&a.path, a.line, a.column, a.code).cmp(&(&b.path, b.line, b.column, b.code))
    });
    all
}

/// An activation for a route that invokes a skill (the model's command or a user's).
fn routed(snapshot: &Snapshot, route: &Route, caller: Caller) {
    if let Route::Invoke(inv) = route {
        let trigger = match caller {
            Caller::Model => Trigger::Model,
            Caller::User => Trigger::UserSlashCommand,
        };
        activation::activated(snapshot, trigger, &inv.skill);
    }
}

/// An activation for an outcome that ran a skill (one with a kind; route errors have none).
fn ran(snapshot: &Snapshot, outcome: &Outcome, trigger: Trigger) {
    if let (Some(skill), Some(_)) = (&outcome.skill, &outcome.kind) {
        activation::activated(snapshot, trigger, skill);
    }
}
