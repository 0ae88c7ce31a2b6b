//! Section-level disclosure as Engine operations: a skill's outline and one section by
//! slug, for every door (the router's `get_skill: name#slug` and `get_skill: name
//! --outline`, HTTP `/v1/skills/{name}/outline` and `/v1/skills/{name}/sections/{slug}`,
//! the CLI's `show NAME --outline` / `--section SLUG`, `load_skill` and MCP). The registry
//! computes both ([`skill_registry::Outline`], [`skill_registry::SectionText`]); this file
//! applies the caller's scope and counts a section read as a use of the skill.

use skill_registry::{Outline, SectionText};

use crate::engine::Engine;
use crate::error::Error;
use crate::ops::{Lookup, inspect};

impl Engine {
    /// The outline of a skill: every heading outside fenced code with its path, level,
    /// slug, characters and estimated tokens. [`Lookup::Disclosed`]: a skill this caller
    /// may use; [`Lookup::Inspect`]: any entry (`show --outline`).
    pub fn outline(&self, name: &str, lookup: &Lookup) -> Result<Outline, Error> {
        let snapshot = self.registry().snapshot();
        match lookup {
            Lookup::Disclosed(scope) => self
                .view(&snapshot, scope)
                .outline(name)
                .map_err(Error::disclosure),
            Lookup::Inspect => Ok(inspect(&snapshot, name)?.outline()),
        }
    }

    /// One section of a skill, with its subsections, found as [`Engine::outline`] finds
    /// the skill. An unknown slug is the `unknown_section` error naming the valid ones.
    /// A section the model or a user reads counts as a use of the skill (search ranking);
    /// an inspection does not.
    pub fn section(&self, name: &str, slug: &str, lookup: &Lookup) -> Result<SectionText, Error> {
        let snapshot = self.registry().snapshot();
        match lookup {
            Lookup::Disclosed(scope) => {
                let section = self
                    .view(&snapshot, scope)
                    .section(name, slug)
                    .map_err(Error::disclosure)?;
                self.record_use(&section.name);
                Ok(section)
            }
            Lookup::Inspect => inspect(&snapshot, name)?
                .section(slug)
                .map_err(Error::disclosure),
        }
    }
}
