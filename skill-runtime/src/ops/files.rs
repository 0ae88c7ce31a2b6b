//! Typed Engine operations for a door that serves skills' files to another protocol (the
//! MCP server in `skill-mcp`): which skills a profile may see, a skill's files with their
//! sizes and SHA-256 from the registry's per-snapshot manifest, reading one file, a skill's
//! prompt text and `load_skill`.
//!
//! They answer with domain types and [`Error`], never JSON: the door above renders them
//! (with the shapes of `wire` where HTTP has the same question). They use the same
//! disclosure view as the other operations (profile, caller, low-trust marking).

use std::sync::Arc;

use skill_registry::{Caller, Disclosure, FileEntry, FileManifest, Skill, Snapshot, Status};

use crate::activation::{self, Trigger};
use crate::engine::Engine;
use crate::error::Error;
use crate::ops::Scope;

/// The name of a folder skill's main file.
pub const SKILL_FILE: &str = "SKILL.md";

/// Largest `SKILL.md` [`Engine::skill_file`] reads (the registry's resource cap).
pub const MAX_SKILL_FILE_BYTES: u64 = skill_registry::MAX_RESOURCE_BYTES;

/// One skill a profile may see, as a door lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSummary {
    /// Its name (`namespace:name` when its source has a namespace).
    pub name: String,
    /// Its source's namespace, if any: [`SkillSummary::name`] is then `namespace:name`.
    pub namespace: Option<String>,
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
    /// Its own name (after `namespace:`) follows the Agent Skills name rule (see
    /// [`skill_format::is_kebab_name`]), as a door serving only such names needs to know.
    pub kebab_name: bool,
}

/// A skill's files from the snapshot's manifest: `SKILL.md` first, then every other file
/// of its folder sorted by path, each with its size and SHA-256 as of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFiles {
    /// The files (`path` relative to the skill folder, `/`-separated).
    pub files: Vec<FileEntry>,
    /// A listing limit left files out, or a file has no digest (too large, unreadable).
    pub incomplete: bool,
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
    let namespace = snapshot
        .sources()
        .get(skill.source)
        .and_then(|s| s.namespace.as_ref())
        .map(ToString::to_string);
    let own_name = namespace
        .as_deref()
        .and_then(|ns| skill.name.strip_prefix(ns)?.strip_prefix(':'))
        .unwrap_or(&skill.name);
    SkillSummary {
        kebab_name: skill_format::is_kebab_name(own_name),
        name: skill.name.clone(),
        namespace,
        description: skill.description.clone(),
        folder: folder_of(snapshot, skill),
        model_invocable: skill.model_invocable(),
        user_invocable: skill.user_invocable(),
        argument_hint: skill.manifest.argument_hint.clone(),
    }
}

fn internal(path: &std::path::Path, e: impl std::fmt::Display) -> Error {
    Error::Disclosure {
        code: "internal",
        message: format!("{}: {e}", path.display()),
    }
}

impl Engine {
    fn scope(caller: Caller, profile: Option<&str>) -> Scope {
        Scope {
            caller,
            profile: profile.map(str::to_owned),
        }
    }

    /// The skill if the model or a user may see it under the profile (a host decides which
    /// of the two asks; the frontmatter it is given carries the trigger-control fields).
    fn seen<'a>(
        &self,
        snapshot: &'a Snapshot,
        name: &str,
        profile: Option<&str>,
    ) -> Result<&'a Arc<Skill>, Error> {
        self.seen_by(snapshot, name, profile, Disclosure::skill)
    }

    /// [`Engine::seen`] for a read of the skill's files: the file read checks the bytes
    /// it serves against the lock, so the skill file is not checked first as well
    /// ([`skill_registry::Disclosure::skill_for_files`]).
    fn seen_for_files<'a>(
        &self,
        snapshot: &'a Snapshot,
        name: &str,
        profile: Option<&str>,
    ) -> Result<&'a Arc<Skill>, Error> {
        self.seen_by(snapshot, name, profile, Disclosure::skill_for_files)
    }

    /// `look` up `name` as the model, then as a user; the model's refusal when neither may.
    fn seen_by<'a>(
        &self,
        snapshot: &'a Snapshot,
        name: &str,
        profile: Option<&str>,
        look: fn(&Disclosure<'a>, &str) -> Result<&'a Arc<Skill>, skill_registry::Error>,
    ) -> Result<&'a Arc<Skill>, Error> {
        let model = self.view(snapshot, &Self::scope(Caller::Model, profile));
        match look(&model, name) {
            Ok(s) => Ok(s),
            Err(first) => look(
                &self.view(snapshot, &Self::scope(Caller::User, profile)),
                name,
            )
            .map_err(|_| Error::disclosure(first)),
        }
    }

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
            .filter(|s| self.seen(&snapshot, &s.name, profile).is_ok())
            .map(|s| summary(&snapshot, s))
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// One skill the model or a user may see under the profile.
    pub fn skill_summary(&self, name: &str, profile: Option<&str>) -> Result<SkillSummary, Error> {
        let snapshot = self.registry().snapshot();
        self.seen(&snapshot, name, profile)
            .map(|s| summary(&snapshot, s))
    }

    /// A folder skill's files, `SKILL.md` first (a skill without a folder of its own has
    /// only its file, listed as `SKILL.md`).
    pub fn skill_files(&self, name: &str, profile: Option<&str>) -> Result<SkillFiles, Error> {
        let snapshot = self.registry().snapshot();
        let skill = self.seen(&snapshot, name, profile)?;
        let computed;
        let manifest = match snapshot.manifest_of(skill) {
            Some(m) => m,
            None => {
                computed = FileManifest::compute(skill);
                &computed
            }
        };
        let own = skill
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(SKILL_FILE);
        let mut files = Vec::with_capacity(manifest.files().len());
        let mut rest = Vec::with_capacity(manifest.files().len());
        for f in manifest.files() {
            if f.path == own {
                files.push(FileEntry {
                    path: SKILL_FILE.to_owned(),
                    ..f.clone()
                });
            } else if f.path != SKILL_FILE {
                rest.push(f.clone());
            }
        }
        if files.is_empty() {
            return Err(internal(&skill.path, "not in the snapshot's manifest"));
        }
        files.extend(rest);
        Ok(SkillFiles {
            files,
            incomplete: !manifest.is_complete(),
        })
    }

    /// The bytes of one file of a skill: `SKILL.md` is the skill's own file, anything else
    /// is read as the registry reads resources (confined to the folder, size-capped); only
    /// a file of the skill's manifest, verified against the lock with `require_lock`
    /// ([`skill_registry::Snapshot::read_file`]).
    pub fn skill_file(
        &self,
        name: &str,
        profile: Option<&str>,
        relative: &str,
    ) -> Result<Vec<u8>, Error> {
        let snapshot = self.registry().snapshot();
        let skill = self.seen_for_files(&snapshot, name, profile)?;
        snapshot
            .read_file(skill, relative)
            .map_err(Error::disclosure)
    }

    /// A skill's frontmatter as data, every field as its `SKILL.md` has it now (for a door
    /// that hands it on verbatim); [`Error::Frontmatter`] when it has no data form.
    pub fn skill_frontmatter(
        &self,
        name: &str,
        profile: Option<&str>,
    ) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
        let bytes = self.skill_file(name, profile, SKILL_FILE)?;
        let data = skill_format::frontmatter_data(&bytes).map_err(Error::Frontmatter)?;
        match serde_json::to_value(&data) {
            Ok(serde_json::Value::Object(map)) => Ok(map),
            Ok(_) => Err(Error::Frontmatter(skill_format::Error::NotAMapping)),
            Err(e) => Err(Error::Frontmatter(skill_format::Error::NoJsonForm(
                e.to_string(),
            ))),
        }
    }

    /// `load_skill` (agent-skills-integration 3.8) for the model under the profile.
    pub fn skill_text(&self, id: &str, profile: Option<&str>) -> Result<String, Error> {
        let snapshot = self.registry().snapshot();
        let text = self
            .view(&snapshot, &Self::scope(Caller::Model, profile))
            .load_skill(id)
            .map_err(Error::disclosure)?;
        if let Some(skill) = snapshot.entry(id.trim()) {
            self.record_use(&skill.name);
            activation::activated(&snapshot, Trigger::Model, &skill.name);
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
    ) -> Result<String, Error> {
        let snapshot = self.registry().snapshot();
        let text = self
            .view(&snapshot, &Self::scope(Caller::User, profile))
            .use_skill(name, arguments)
            .map(|u| u.content)
            .map_err(Error::disclosure)?;
        activation::activated(&snapshot, Trigger::UserSlashCommand, name);
        Ok(text)
    }
}

/// Why a host would refuse a skill whose frontmatter (as data, `name` and `description`
/// taken out into `description`) a door serves verbatim, such as a SEP-2640 `skills/list`
/// entry (the TypeScript SDK's `SkillsClient.list()` throws for the whole listing when one
/// entry breaks one): a description over
/// [`MAX_DESCRIPTION_CHARS`](skill_format::MAX_DESCRIPTION_CHARS) characters, a
/// `compatibility` that is not a text of 1 to
/// [`MAX_COMPATIBILITY_CHARS`](skill_format::MAX_COMPATIBILITY_CHARS), a `metadata` map with
/// a value that is not a string, a `__proto__` field. `None` when it would accept it.
/// Such a skill cannot be mended on the way out (a host also checks the served file's
/// frontmatter against the entry, field by field): a door leaves it out with the reason.
pub fn frontmatter_refusal(
    description: &str,
    fields: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    use skill_format::{MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS};
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        return Some(format!(
            "its description has {chars} characters, over the {MAX_DESCRIPTION_CHARS} a host accepts"
        ));
    }
    match fields.get("compatibility") {
        None => {}
        Some(serde_json::Value::String(c))
            if !c.is_empty() && c.chars().count() <= MAX_COMPATIBILITY_CHARS => {}
        Some(_) => {
            return Some(format!(
                "its `compatibility` is not a text of 1 to {MAX_COMPATIBILITY_CHARS} characters"
            ));
        }
    }
    match fields.get("metadata") {
        None => {}
        Some(serde_json::Value::Object(map)) if map.values().all(serde_json::Value::is_string) => {}
        Some(_) => {
            return Some(
                "its `metadata` does not map strings to strings (a host refuses other values)"
                    .to_owned(),
            );
        }
    }
    if fields.contains_key("__proto__") {
        return Some("its frontmatter has a `__proto__` field, which a host refuses".to_owned());
    }
    None
}
