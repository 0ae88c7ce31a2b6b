//! Disclosure: what the model and the user see of the snapshot, level by level.
//!
//! A [`Disclosure`] is a view of one snapshot for one caller (the model or a user) and one
//! profile. It answers the catalog for the system prompt ([`Disclosure::catalog`]), the
//! `get_skill` tiers of markdown-first sections 3.3 and 6 ([`Disclosure::get_skill`]),
//! `load_skill` (agent-skills-integration 3.8), `use_skill` (pegasus), the scoped listing for
//! a sub-agent (markdown-first 11.1), a skill's resources, and its outline and sections
//! (`sections`).
//!
//! Catalogs do not embed outlines: the budget is for choosing a skill, and an outline helps
//! only once one is chosen (docs/host-author.md says more).

mod catalog;
mod resources;
mod sections;
pub(crate) use resources::{open_without_waiting, open_without_waiting_or_following};
mod tiers;

use std::sync::Arc;

use crate::eligibility::Affinity;
use crate::error::{Error, Unavailable};
use crate::index::Resolved;
use crate::skill::{Skill, Status};
use crate::snapshot::Snapshot;
use crate::suggest::closest_names;

/// Characters per token, wherever the engine estimates tokens from text: a budget derived
/// from a context window, a section's cost in an outline, a selection's disclosed text.
pub const CHARS_PER_TOKEN: u64 = 4;

pub use catalog::{
    Budget, BudgetReport, CONTEXT_WINDOW_PERCENT, Catalog, CatalogEntry, CatalogFormat,
    DEFAULT_BUDGET_CHARS, DEFAULT_ENTRY_CAP_CHARS, MIN_DESCRIPTION_CHARS, TRUNCATION_MARK,
};
pub use resources::{
    MAX_RESOURCE_BYTES, MAX_RESOURCE_DEPTH, MAX_RESOURCE_ENTRIES, Resource, ResourceKind,
    ResourceListing,
};
pub use sections::{
    MAX_LISTED_SLUGS, Outline, OutlineSection, SECTION_SEPARATOR, SectionCache, SectionText,
};
pub use tiers::{MAX_AVAILABLE_NAMES, UseSkill, UseSkillMode};

/// Who is asking: the model (through its tools) or a user (through slash commands).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Caller {
    /// The model: `disable-model-invocation` skills are invisible to it.
    #[default]
    Model,
    /// A user: `user-invocable: false` skills are invisible to them.
    User,
}

/// A view of one snapshot for one caller and profile.
#[derive(Debug, Clone)]
pub struct Disclosure<'a> {
    snapshot: &'a Snapshot,
    profile: Option<String>,
    caller: Caller,
    /// Prefix the catalog descriptions of low-trust skills with [`LOW_TRUST_MARK`].
    mark_low_trust: bool,
}

/// What [`Disclosure::mark_low_trust`] puts before the catalog description of a skill from
/// a low-trust source.
pub const LOW_TRUST_MARK: &str = "[untrusted source] ";

impl<'a> Disclosure<'a> {
    /// The model's view with no profile.
    pub fn new(snapshot: &'a Snapshot) -> Self {
        Disclosure {
            snapshot,
            profile: None,
            caller: Caller::Model,
            mark_low_trust: false,
        }
    }

    /// Mark skills from low-trust sources in the catalog: their description starts with
    /// [`LOW_TRUST_MARK`] (counted in the budget like the rest of the text).
    pub fn mark_low_trust(mut self, yes: bool) -> Self {
        self.mark_low_trust = yes;
        self
    }

    /// The same view for a profile (agent-skills-integration 3.3 affinity).
    pub fn profile(mut self, profile: Option<&str>) -> Self {
        self.profile = profile.map(str::to_owned);
        self
    }

    /// The same view for another caller.
    pub fn caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    /// The snapshot it reads.
    pub fn snapshot(&self) -> &'a Snapshot {
        self.snapshot
    }

    /// Whether this caller may see and use a loaded skill at all (not listed in the catalog
    /// does not mean unavailable: `include_in_prompt_default: false` skills can be loaded).
    fn check(&self, skill: &Skill) -> Result<(), Unavailable> {
        self.check_facts(
            skill.status,
            skill.model_invocable(),
            skill.user_invocable(),
            skill,
        )
    }

    /// [`Disclosure::check`] with the status and the invocation settings given (the name
    /// index keeps copies of them): only a profile makes it read the skill.
    fn check_facts(
        &self,
        status: Status,
        model_invocable: bool,
        user_invocable: bool,
        skill: &Skill,
    ) -> Result<(), Unavailable> {
        match status {
            Status::Invalid if skill.exclusion().is_some() => return Err(Unavailable::Excluded),
            Status::Invalid => return Err(Unavailable::Invalid),
            Status::Ineligible => return Err(Unavailable::Ineligible),
            Status::Loaded | Status::Shadowed => {}
        }
        match self.caller {
            Caller::Model if !model_invocable => {
                return Err(Unavailable::ModelInvocationDisabled);
            }
            Caller::User if !user_invocable => return Err(Unavailable::NotUserInvocable),
            _ => {}
        }
        // Without a profile nothing is excluded.
        if let Some(profile) = self.profile.as_deref() {
            if skill.affinity(Some(profile)) == Affinity::Excluded {
                return Err(Unavailable::Profile);
            }
        }
        Ok(())
    }

    /// Every loaded skill this caller may use, by name.
    fn visible(&self) -> impl Iterator<Item = &'a Arc<Skill>> + '_ {
        self.snapshot
            .skills()
            .filter(move |s| self.check(s).is_ok())
    }

    /// Whether the skill may be listed in the catalog (visible and not `NotListed`).
    fn listed(&self, skill: &Skill) -> bool {
        self.check(skill).is_ok() && skill.affinity(self.profile.as_deref()) != Affinity::NotListed
    }

    /// A skill this caller may use, or the error that says why not (with suggestions).
    pub fn skill(&self, name: &str) -> Result<&'a Arc<Skill>, Error> {
        self.resolve(name).map(|r| r.skill)
    }

    /// [`Disclosure::skill`] for a door that serves the skill's files and nothing of its
    /// parse: the same checks and errors, except that with `require_lock` the skill file is
    /// not checked here, since every file read ([`Snapshot::read_file`]) checks the bytes it
    /// serves, the skill file's included (one check per read, not two).
    pub fn skill_for_files(&self, name: &str) -> Result<&'a Arc<Skill>, Error> {
        self.resolve_checked(name, false).map(|r| r.skill)
    }

    /// [`Disclosure::skill`] with what a router copies from the skill at hand
    /// ([`Resolved`]): the same checks and errors.
    pub fn resolve(&self, name: &str) -> Result<Resolved<'a>, Error> {
        self.resolve_checked(name, true)
    }

    /// [`Disclosure::resolve`]; `verify`: with `require_lock`, check the skill file too.
    fn resolve_checked(&self, name: &str, verify: bool) -> Result<Resolved<'a>, Error> {
        let name = name.trim();
        match self.snapshot.indexed(name) {
            Some((key, indexed)) => {
                match self.check_facts(
                    indexed.status,
                    indexed.model_invocable,
                    indexed.user_invocable,
                    &indexed.skill,
                ) {
                    // With `require_lock`, a skill whose file changed since it was
                    // admitted is not served from its parse either.
                    Ok(()) => {
                        if verify {
                            self.snapshot.verify_skill_file(&indexed.skill)?;
                        }
                        Ok(indexed.resolved(key))
                    }
                    Err(reason) => Err(Error::refused(name, reason, &indexed.skill)),
                }
            }
            None => Err(Error::UnknownSkill {
                name: name.to_owned(),
                suggestions: self.suggest(name),
            }),
        }
    }

    /// The closest names this caller could have meant.
    fn suggest(&self, name: &str) -> Vec<String> {
        closest_names(name, self.visible().map(|s| s.name.as_str()))
    }
}

/// One line of text from a description: inner whitespace runs (newlines included) become
/// one space.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::{RegistryConfig, Source, load_snapshot};

    #[test]
    fn resolve_decides_from_the_index_as_check_does_from_the_skill() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, extra: &str| {
            let folder = dir.path().join(name);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(
                folder.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: The {name} skill.\n{extra}---\nbody\n"),
            )
            .unwrap();
        };
        write("plain", "");
        write("quiet", "disable-model-invocation: true\n");
        write("hidden", "user-invocable: false\n");
        write("scoped", "exclude_from_prompt_profile_ids: [p1]\n");
        write("broken", "license: [\n");
        let snapshot = load_snapshot(
            &RegistryConfig::with_sources(vec![Source::new(dir.path(), "user")]),
            1,
        );
        let names = ["plain", "quiet", "hidden", "scoped", "broken"];
        let mut refused = 0;
        for caller in [Caller::Model, Caller::User] {
            for profile in [None, Some("p1"), Some("p2")] {
                let d = Disclosure::new(&snapshot).profile(profile).caller(caller);
                for name in names {
                    let entry = snapshot.entry(name).unwrap();
                    match (d.resolve(name), d.check(entry)) {
                        (Ok(r), Ok(())) => {
                            assert!(Arc::ptr_eq(r.skill, entry));
                            assert_eq!((r.name, &**r.layer), (name, "user"));
                        }
                        (Err(Error::NotAvailable { reason, .. }), Err(want)) => {
                            assert_eq!(reason, want, "{name} {caller:?} {profile:?}");
                            refused += 1;
                        }
                        (got, want) => panic!("{name} {caller:?} {profile:?}: {got:?} vs {want:?}"),
                    }
                    assert_eq!(
                        d.skill(name).ok().map(Arc::as_ptr),
                        d.resolve(name).ok().map(|r| Arc::as_ptr(r.skill))
                    );
                }
            }
        }
        // broken (6 views), quiet (3 model views), hidden (3 user views), scoped (2 p1 views).
        assert_eq!(refused, 14);
        assert!(matches!(
            Disclosure::new(&snapshot).resolve(" nosuch "),
            Err(Error::UnknownSkill { name, .. }) if name == "nosuch"
        ));
    }
}
