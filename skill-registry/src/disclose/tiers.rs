//! The `get_skill` tiers, `load_skill`, `use_skill` and the scoped listing.

use skill_format::ContextMode;
use skill_format::args::substitute_arguments;

use super::{Disclosure, one_line};
use crate::error::Error;
use crate::skill::{Skill, Status};
use crate::suggest::closest_names;

/// The most skill names a `load_skill` "not found" answer lists; the rest are counted.
pub const MAX_AVAILABLE_NAMES: usize = 100;

/// Width the seed pads names to in `get_skill` and scoped listings.
const NAME_COLUMN: usize = 12;

/// The usage lines that end the top-level `get_skill` answer (markdown-first 6.2).
pub(crate) const DOMAIN_USAGE: &str = "Use: get_skill: <domain> for domain details\n\
Use: get_skill: <domain>.<command> for specific skill details\n\
Use: get_skill: <domain>.all to load all skills in a domain\n";

/// How a `use_skill` result is to be delivered (pegasus `context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseSkillMode {
    /// Return the content to the model in the current conversation.
    Inline,
    /// Run the content as an isolated background task; the runtime spawns it and returns a
    /// task id.
    Fork,
}

/// The result of `use_skill`: the body after `$ARGUMENTS` substitution and how to deliver it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseSkill {
    /// The skill's name.
    pub name: String,
    /// The body with the arguments substituted.
    pub content: String,
    /// Inline or fork.
    pub mode: UseSkillMode,
    /// Pegasus `agent` (the task type for a fork), if set.
    pub agent: Option<String>,
    /// Pegasus `model`, if set.
    pub model: Option<String>,
    /// The skill's `allowed-tools`, as declared (`None`: no restriction declared).
    pub allowed_tools: Option<Vec<String>>,
}

/// One `  name        description` line, as the seed pads it.
fn listing_line(out: &mut String, name: &str, description: &str, width: usize) {
    let line = format!("  {name:<width$} {}", one_line(description));
    out.push_str(line.trim_end());
    out.push('\n');
}

impl Disclosure<'_> {
    /// `get_skill` with an optional dot path, as markdown-first sections 3.3 and 6:
    ///
    /// - `None`: every domain summary (and every folder skill), then the usage lines;
    /// - `email`: the domain index's body (or, for a folder skill named so, its body);
    /// - `email.send`: that skill's body;
    /// - `email.all`: every skill of the domain, sorted by name, as `# name\n\nbody`, joined
    ///   by `\n\n---\n\n`;
    /// - `name#slug`: one section of a skill with its subsections
    ///   ([`Disclosure::section`]).
    ///
    /// An unknown domain or skill gives the seed's text and the closest existing names.
    pub fn get_skill(&self, path: Option<&str>) -> Result<String, Error> {
        let Some(path) = path.map(str::trim).filter(|p| !p.is_empty()) else {
            return Ok(self.top_level());
        };
        // `name#slug`: one section of a skill.
        if let Some((name, slug)) = path.split_once(super::SECTION_SEPARATOR) {
            return self.section(name.trim(), slug).map(|s| s.text);
        }
        // A skill whose full name is the path (folder skills, `email.send`).
        if let Some(skill) = self.snapshot.entry(path) {
            return self.skill(&skill.name).map(|s| s.body.clone());
        }
        match path.split_once('.') {
            None => self.domain_help(path),
            Some((domain, "all")) => self.domain_all(domain),
            Some(_) => Err(Error::UnknownSkill {
                name: path.to_owned(),
                suggestions: self.suggest(path),
            }),
        }
    }

    fn top_level(&self) -> String {
        let mut out = String::new();
        let domains: Vec<_> = self
            .snapshot
            .domains()
            .filter(|d| d.status == Status::Loaded && self.domain_skills(&d.name).next().is_some())
            .collect();
        let folder: Vec<_> = self.visible().filter(|s| s.domain.is_none()).collect();
        if !domains.is_empty() || folder.is_empty() {
            out.push_str("Available skill domains:\n\n");
            for d in &domains {
                listing_line(&mut out, &d.name, &d.description, NAME_COLUMN);
            }
            out.push('\n');
            out.push_str(DOMAIN_USAGE);
        }
        if !folder.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str("Available skills:\n\n");
            for s in &folder {
                listing_line(&mut out, &s.name, &s.description, NAME_COLUMN);
            }
            out.push_str("\nUse: get_skill: <name> for a skill's full instructions\n");
        }
        out
    }

    /// The visible skills of a domain, by name.
    fn domain_skills<'s>(&'s self, domain: &'s str) -> impl Iterator<Item = &'s Skill> + 's {
        self.visible()
            .filter(move |s| s.domain.as_deref() == Some(domain))
            .map(|s| &**s)
    }

    fn domain_names(&self) -> Vec<&str> {
        self.snapshot
            .domains()
            .filter(|d| d.status == Status::Loaded)
            .map(|d| d.name.as_str())
            .collect()
    }

    fn domain_help(&self, domain: &str) -> Result<String, Error> {
        match self.snapshot.domain(domain) {
            Some(index) if index.status == Status::Loaded => {
                // With `require_lock`, the index file must still hash as admitted.
                self.snapshot.verify_skill_file(index)?;
                Ok(index.body.clone())
            }
            _ => {
                let folder = self
                    .visible()
                    .filter(|s| s.domain.is_none())
                    .map(|s| s.name.as_str());
                Err(Error::UnknownDomain {
                    domain: domain.to_owned(),
                    suggestions: closest_names(
                        domain,
                        self.domain_names().into_iter().chain(folder),
                    ),
                })
            }
        }
    }

    fn domain_all(&self, domain: &str) -> Result<String, Error> {
        let mut parts: Vec<String> = Vec::new();
        for s in self.domain_skills(domain) {
            // With `require_lock`, every action file served must still hash as admitted.
            self.snapshot.verify_skill_file(s)?;
            parts.push(format!("# {}\n\n{}", s.name, s.body));
        }
        if parts.is_empty() {
            return Err(Error::EmptyDomain {
                domain: domain.to_owned(),
                suggestions: closest_names(domain, self.domain_names()),
            });
        }
        Ok(parts.join("\n\n---\n\n"))
    }

    /// `load_skill` (agent-skills-integration 3.8): `# <name>\n\n<instructions>`. Skills left
    /// out of the catalog (`include_in_prompt_default: false`) can still be loaded; skills
    /// excluded for the profile cannot. An unknown name gives the seed's text,
    /// `Skill '<id>' not found. Available: <names>` (the first [`MAX_AVAILABLE_NAMES`] this
    /// caller may load, by name, and how many more), then the closest names.
    ///
    /// `name#slug` loads one section (with its subsections) the same way:
    /// `# <name>\n\n<section>`.
    pub fn load_skill(&self, id: &str) -> Result<String, Error> {
        if let Some((name, slug)) = id.split_once(super::SECTION_SEPARATOR) {
            let name = name.trim();
            // An unknown name answers as a plain `load_skill` of it would.
            self.load_skill(name)?;
            let section = self.section(name, slug)?;
            return Ok(format!("# {}\n\n{}", section.name, section.text));
        }
        let skill = match self.skill(id) {
            Ok(skill) => skill,
            Err(Error::UnknownSkill { name, suggestions }) => {
                let mut available: Vec<String> = Vec::new();
                let mut more = 0;
                for s in self.visible() {
                    if available.len() < MAX_AVAILABLE_NAMES {
                        available.push(s.name.clone());
                    } else {
                        more += 1;
                    }
                }
                return Err(Error::SkillNotFound {
                    name,
                    available,
                    more,
                    suggestions,
                });
            }
            Err(e) => return Err(e),
        };
        Ok(format!("# {}\n\n{}", skill.name, skill.body))
    }

    /// `use_skill` (pegasus): the body after `$ARGUMENTS` substitution, to return inline or
    /// to run as a forked task (`context: fork`).
    pub fn use_skill(&self, name: &str, arguments: Option<&str>) -> Result<UseSkill, Error> {
        let skill = self.skill(name)?;
        let m = &skill.manifest;
        Ok(UseSkill {
            name: skill.name.clone(),
            content: substitute_arguments(&skill.body, arguments.unwrap_or("")),
            mode: match m.context {
                Some(ContextMode::Fork) => UseSkillMode::Fork,
                _ => UseSkillMode::Inline,
            },
            agent: m.agent.clone(),
            model: m.model.clone(),
            allowed_tools: m.allowed_tools.clone(),
        })
    }

    /// The sub-agent listing of markdown-first 11.1 for exactly these skills, in the order
    /// given. Every name must be a skill this caller may use, or the listing is an error,
    /// never a list with names silently dropped: names that do not exist are reported
    /// together, each with its closest names; when every name exists, the first that this
    /// caller may not use is reported with the reason.
    pub fn scoped_listing<S: AsRef<str>>(&self, names: &[S]) -> Result<String, Error> {
        let mut unknown = Vec::new();
        let mut unavailable = None;
        let mut found = Vec::new();
        for name in names {
            let name = name.as_ref().trim();
            match self.skill(name) {
                Ok(s) => found.push(s),
                Err(Error::UnknownSkill { name, suggestions }) => unknown.push((name, suggestions)),
                Err(e) => {
                    unavailable.get_or_insert(e);
                }
            }
        }
        if !unknown.is_empty() {
            return Err(Error::UnknownSkills { names: unknown });
        }
        if let Some(e) = unavailable {
            return Err(e);
        }
        let width = found
            .iter()
            .map(|s| s.name.chars().count() + 2)
            .max()
            .unwrap_or(0)
            .max(NAME_COLUMN);
        let mut out = String::from("Available skills:\n");
        for s in &found {
            listing_line(&mut out, &s.name, &brief(s), width);
        }
        if found.iter().any(|s| s.domain.is_some()) {
            out.push_str("\nUse: get_skill: <domain>.<command> for skill details\n");
        } else {
            out.push_str("\nUse: get_skill: <name> for skill details\n");
        }
        Ok(out)
    }
}

/// A skill's short description: toolsets `brief_description`, lily `summary` (already the
/// resolved description), else the description.
pub(crate) fn brief(skill: &Skill) -> String {
    match skill.manifest.brief_description.as_deref().map(str::trim) {
        Some(b) if !b.is_empty() => b.to_owned(),
        _ => skill.description.clone(),
    }
}
