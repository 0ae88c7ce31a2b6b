//! Disclosure: what the model and the user see of the snapshot, level by level.
//!
//! A [`Disclosure`] is a view of one snapshot for one caller (the model or a user) and one
//! profile. It answers the catalog for the system prompt ([`Disclosure::catalog`]), the
//! `get_skill` tiers of markdown-first sections 3.3 and 6 ([`Disclosure::get_skill`]),
//! `load_skill` (agent-skills-integration 3.8), `use_skill` (pegasus), the scoped listing for
//! a sub-agent (markdown-first 11.1), and a skill's resources.

mod catalog;
mod resources;
mod tiers;

use std::sync::Arc;

use crate::eligibility::Affinity;
use crate::error::{Error, Unavailable};
use crate::snapshot::{Skill, Snapshot, Status};
use crate::suggest::closest_names;

pub use catalog::{
    Budget, BudgetReport, CHARS_PER_TOKEN, CONTEXT_WINDOW_PERCENT, Catalog, CatalogEntry,
    CatalogFormat, DEFAULT_BUDGET_CHARS, DEFAULT_ENTRY_CAP_CHARS, MIN_DESCRIPTION_CHARS,
    TRUNCATION_MARK,
};
pub use resources::{
    MAX_RESOURCE_BYTES, MAX_RESOURCE_DEPTH, MAX_RESOURCE_ENTRIES, Resource, ResourceKind,
    ResourceListing,
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
}

impl<'a> Disclosure<'a> {
    /// The model's view with no profile.
    pub fn new(snapshot: &'a Snapshot) -> Self {
        Disclosure {
            snapshot,
            profile: None,
            caller: Caller::Model,
        }
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
        match skill.status {
            Status::Invalid => return Err(Unavailable::Invalid),
            Status::Ineligible => return Err(Unavailable::Ineligible),
            Status::Loaded | Status::Shadowed => {}
        }
        match self.caller {
            Caller::Model if !skill.model_invocable() => {
                return Err(Unavailable::ModelInvocationDisabled);
            }
            Caller::User if !skill.user_invocable() => return Err(Unavailable::NotUserInvocable),
            _ => {}
        }
        if skill.affinity(self.profile.as_deref()) == Affinity::Excluded {
            return Err(Unavailable::Profile);
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
        let name = name.trim();
        match self.snapshot.entry(name) {
            Some(skill) => match self.check(skill) {
                Ok(()) => Ok(skill),
                Err(reason) => Err(Error::NotAvailable {
                    name: name.to_owned(),
                    reason,
                }),
            },
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
