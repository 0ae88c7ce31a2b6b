//! Engine operations for doors that serve a skill's files and tiers to another protocol
//! (the MCP server in `skill-mcp`): which skills a profile may see, each skill's files,
//! reading one, and the disclosure, search, selection and routing operations with their
//! results as JSON values.
//!
//! These are additive: they call the same registry, search index, router and runtime as
//! the HTTP API, so a question asked over MCP gets the answer it gets over HTTP. The door
//! above decides the wire format; nothing here knows MCP.

use std::sync::Arc;

use serde_json::{Value, json};
use skill_registry::{Caller, Disclosure, Skill, Snapshot, Status};
use skill_router::{Route, Router};
use skill_search::{Filter, SearchRequest, SelectOptions};

use crate::engine::Engine;
use crate::exec::Context;

/// The name of a folder skill's main file.
pub const SKILL_FILE: &str = "SKILL.md";

/// Largest `SKILL.md` [`Engine::read_skill_file`] reads (the registry's resource cap).
pub const MAX_SKILL_FILE_BYTES: u64 = skill_registry::MAX_RESOURCE_BYTES;

/// One skill a profile may see, as a door lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSummary {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// For a skill with a folder of its own (`<folder>/SKILL.md`), the folder's path
    /// relative to its source, `/`-separated (empty when the source is the skill folder
    /// itself); `None` for actions files, domain indexes and notes.
    pub folder: Option<String>,
    /// The model may invoke it (`disable-model-invocation` not set).
    pub model_invocable: bool,
    /// A user may invoke it by slash command (`user-invocable` not false).
    pub user_invocable: bool,
    /// Pegasus `argument-hint`, if any.
    pub argument_hint: Option<String>,
}

/// A skill's files: `SKILL.md` first, then every other file of its folder sorted by path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFiles {
    /// Paths relative to the skill folder, `/`-separated.
    pub paths: Vec<String>,
    /// A listing limit left files out (too many, or too deep).
    pub truncated: bool,
}

/// Why a door operation on one skill failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DoorError {
    /// No skill of that name, or not one this caller and profile may see.
    #[error("{0}")]
    NotFound(String),
    /// The path is not a file of the skill (outside it, hidden, missing, too large...).
    #[error("{0}")]
    BadPath(String),
    /// Reading or searching failed on the server's side.
    #[error("{0}")]
    Internal(String),
}

fn from_registry(e: skill_registry::Error) -> DoorError {
    use skill_registry::Error as E;
    match e {
        E::ResourcePath { .. } => DoorError::BadPath(e.to_string()),
        E::Io { .. } => DoorError::BadPath(e.to_string()),
        other => DoorError::NotFound(other.to_string()),
    }
}

fn folder_of(snapshot: &Snapshot, skill: &Skill) -> Option<String> {
    let is_folder_skill = skill.domain.is_none()
        && skill.kind == skill_format::FileKind::Skill
        && skill
            .path
            .file_name()
            .is_some_and(|n| n == SKILL_FILE || n == "skill.md");
    if !is_folder_skill {
        return None;
    }
    let source = snapshot.sources().get(skill.source)?;
    let rel = skill.dir.strip_prefix(&source.path).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

fn summary(snapshot: &Snapshot, skill: &Skill) -> SkillSummary {
    SkillSummary {
        name: skill.name.clone(),
        description: skill.description.clone(),
        folder: folder_of(snapshot, skill),
        model_invocable: skill.model_invocable(),
        user_invocable: skill.user_invocable(),
        argument_hint: skill.manifest.argument_hint.clone(),
    }
}

/// The view for a caller and profile.
fn view<'a>(snapshot: &'a Snapshot, caller: Caller, profile: Option<&str>) -> Disclosure<'a> {
    Disclosure::new(snapshot).caller(caller).profile(profile)
}

/// The skill if the model or a user may see it under the profile (a host decides which
/// of the two asks; the frontmatter it is given carries the trigger-control fields).
fn seen<'a>(
    snapshot: &'a Snapshot,
    name: &str,
    profile: Option<&str>,
) -> Result<&'a Arc<Skill>, DoorError> {
    match view(snapshot, Caller::Model, profile).skill(name) {
        Ok(s) => Ok(s),
        Err(first) => view(snapshot, Caller::User, profile)
            .skill(name)
            .map_err(|_| from_registry(first)),
    }
}

fn context(caller: Caller, profile: Option<&str>, snapshot: Arc<Snapshot>) -> Context {
    let ctx = match caller {
        Caller::User => Context::user(),
        Caller::Model => Context::model(),
    };
    let ctx = match profile {
        Some(p) => ctx.with_profile(p.to_owned()),
        None => ctx,
    };
    ctx.with_snapshot(snapshot)
}

impl Engine {
    /// The registry's current generation (it changes on every reload that changed
    /// something).
    pub fn generation(&self) -> u64 {
        self.registry().snapshot().generation()
    }

    /// Every loaded skill the model or a user may see under the profile, sorted by name.
    pub fn visible_skills(&self, profile: Option<&str>) -> Vec<SkillSummary> {
        let snapshot = self.registry().snapshot();
        let mut out: Vec<SkillSummary> = snapshot
            .skills()
            .filter(|s| s.status == Status::Loaded)
            .filter(|s| seen(&snapshot, &s.name, profile).is_ok())
            .map(|s| summary(&snapshot, s))
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// One skill the model or a user may see under the profile.
    pub fn skill_summary(
        &self,
        name: &str,
        profile: Option<&str>,
    ) -> Result<SkillSummary, DoorError> {
        let snapshot = self.registry().snapshot();
        seen(&snapshot, name, profile).map(|s| summary(&snapshot, s))
    }

    /// A folder skill's files, `SKILL.md` first (a skill without a folder of its own has
    /// only its file, listed as `SKILL.md`).
    pub fn skill_files(&self, name: &str, profile: Option<&str>) -> Result<SkillFiles, DoorError> {
        let snapshot = self.registry().snapshot();
        let skill = seen(&snapshot, name, profile)?;
        let listing = skill.resource_listing().map_err(from_registry)?;
        let truncated = listing.is_truncated();
        let mut paths = Vec::with_capacity(listing.resources.len() + 1);
        paths.push(SKILL_FILE.to_owned());
        paths.extend(
            listing
                .resources
                .into_iter()
                .map(|r| r.path)
                .filter(|p| p != SKILL_FILE),
        );
        Ok(SkillFiles { paths, truncated })
    }

    /// The bytes of one file of a skill: `SKILL.md` is the skill's own file, anything else
    /// is read as the registry reads resources (confined to the folder, size-capped).
    pub fn read_skill_file(
        &self,
        name: &str,
        profile: Option<&str>,
        relative: &str,
    ) -> Result<Vec<u8>, DoorError> {
        let snapshot = self.registry().snapshot();
        let skill = seen(&snapshot, name, profile)?;
        if relative == SKILL_FILE {
            let meta = std::fs::metadata(&skill.path)
                .map_err(|e| DoorError::Internal(format!("{}: {e}", skill.path.display())))?;
            if meta.len() > MAX_SKILL_FILE_BYTES {
                return Err(DoorError::BadPath(format!(
                    "{} is {} bytes, over the {MAX_SKILL_FILE_BYTES}-byte limit",
                    skill.path.display(),
                    meta.len()
                )));
            }
            return std::fs::read(&skill.path)
                .map_err(|e| DoorError::Internal(format!("{}: {e}", skill.path.display())));
        }
        skill.read_resource(relative).map_err(from_registry)
    }

    /// `get_skill` with an optional dot path (the four tiers), for the model under the
    /// profile; loading one skill's instructions counts as a use of it.
    pub fn get_skill_text(
        &self,
        path: Option<&str>,
        profile: Option<&str>,
    ) -> Result<String, DoorError> {
        let snapshot = self.registry().snapshot();
        let path = path.map(str::trim).filter(|p| !p.is_empty());
        let text = view(&snapshot, Caller::Model, profile)
            .get_skill(path)
            .map_err(from_registry)?;
        if let Some(skill) = path.and_then(|p| snapshot.entry(p)) {
            self.record_use(&skill.name);
        }
        Ok(text)
    }

    /// `load_skill` (agent-skills-integration 3.8) for the model under the profile.
    pub fn load_skill_text(&self, id: &str, profile: Option<&str>) -> Result<String, DoorError> {
        let snapshot = self.registry().snapshot();
        let text = view(&snapshot, Caller::Model, profile)
            .load_skill(id)
            .map_err(from_registry)?;
        if let Some(skill) = snapshot.entry(id.trim()) {
            self.record_use(&skill.name);
        }
        Ok(text)
    }

    /// A skill's body with `$ARGUMENTS` substituted, as a user's slash command gets it
    /// (the text of an MCP prompt): `user-invocable: false` skills are refused, and
    /// `disable-model-invocation` ones are not.
    pub fn prompt_text(
        &self,
        name: &str,
        arguments: Option<&str>,
        profile: Option<&str>,
    ) -> Result<String, DoorError> {
        let snapshot = self.registry().snapshot();
        view(&snapshot, Caller::User, profile)
            .use_skill(name, arguments)
            .map(|u| u.content)
            .map_err(from_registry)
    }

    /// `use_skill` (pegasus) by the model: the skill executes as a routed command would
    /// (a template returns its body after `$ARGUMENTS` substitution; `context: fork`
    /// returns a task id at once). The JSON is the route and the outcome.
    pub async fn use_skill_json(
        &self,
        name: &str,
        arguments: Option<&str>,
        profile: Option<&str>,
    ) -> Result<Value, DoorError> {
        let snapshot = self.registry().snapshot();
        view(&snapshot, Caller::Model, profile)
            .skill(name)
            .map_err(from_registry)?;
        let line = match arguments.map(str::trim).filter(|a| !a.is_empty()) {
            Some(args) => format!("{} {args}", name.trim()),
            None => name.trim().to_owned(),
        };
        Ok(self.execute_command_json(&line, profile).await)
    }

    /// Route one command line as the model would send it, and execute it when it routes
    /// to an invocation: `{"route": ..., "outcome": ...}`.
    pub async fn execute_command_json(&self, command: &str, profile: Option<&str>) -> Value {
        let snapshot = self.registry().snapshot();
        let mut config = self.router_config().clone();
        if profile.is_some() {
            config.profile = profile.map(str::to_owned);
        }
        let route = Router::with_config(&snapshot, config).route(command, Caller::Model);
        let ctx = context(Caller::Model, profile, snapshot.clone());
        let outcome = match &route {
            Route::Invoke(inv) => Some(self.runtime().execute(inv, &ctx).await),
            _ => None,
        };
        self.record_outcomes(outcome.as_ref());
        json!({ "route": route, "outcome": outcome })
    }

    /// Route model output (its ```` ```cmd ```` blocks) without executing anything.
    pub fn route_output_json(&self, output: &str, profile: Option<&str>) -> Value {
        let snapshot = self.registry().snapshot();
        let mut config = self.router_config().clone();
        if profile.is_some() {
            config.profile = profile.map(str::to_owned);
        }
        let routed = Router::with_config(&snapshot, config).route_output(output);
        serde_json::to_value(&routed).unwrap_or(Value::Null)
    }

    /// Execute every command of model output in order: `{"results": [...]}`.
    pub async fn execute_output_json(&self, output: &str, profile: Option<&str>) -> Value {
        let snapshot = self.registry().snapshot();
        let ctx = context(Caller::Model, profile, snapshot);
        let results = self.runtime().execute_output(output, &ctx).await;
        self.record_outcomes(results.iter().map(|r| &r.outcome));
        json!({ "results": results })
    }

    /// Ranked skills for a query: `{"query": ..., "matches": [...]}`.
    pub fn search_json(
        &self,
        query: &str,
        limit: usize,
        profile: Option<&str>,
    ) -> Result<Value, DoorError> {
        let matches = self
            .index()
            .map_err(|e| DoorError::Internal(e.to_string()))?
            .search(&SearchRequest {
                text: query,
                recent_turns: &[],
                limit,
                filter: Filter {
                    profile: profile.map(str::to_owned),
                    model_invocable_only: false,
                },
            })
            .map_err(|e| DoorError::Internal(e.to_string()))?;
        Ok(json!({ "query": query, "matches": matches }))
    }

    /// The selection JSON (`selected_skills`, `no_skill_needed`, ...) for a message.
    pub fn select_json(
        &self,
        message: &str,
        recent_turns: Vec<String>,
        max_skills: Option<usize>,
        profile: Option<&str>,
    ) -> Result<Value, DoorError> {
        let mut opts = SelectOptions {
            recent_turns,
            profile: profile.map(str::to_owned),
            ..SelectOptions::default()
        };
        if let Some(n) = max_skills {
            opts.max_skills = n;
        }
        let selection = self
            .index()
            .map_err(|e| DoorError::Internal(e.to_string()))?
            .select(message, &opts)
            .map_err(|e| DoorError::Internal(e.to_string()))?;
        serde_json::to_value(&selection).map_err(|e| DoorError::Internal(e.to_string()))
    }

    /// Reload every source now (blocking: call it off the async workers); whether
    /// anything changed.
    pub fn reload_now(&self) -> bool {
        !self.registry().reload().is_empty()
    }
}
