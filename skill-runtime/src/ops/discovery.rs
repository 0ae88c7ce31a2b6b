//! The Agent Skills discovery index as Engine operations: which skills a server publishes at
//! `/.well-known/agent-skills/index.json` (the model-visible skills of the engine's own
//! profile) with the SHA-256 of each one's skill file, and that file's bytes.
//!
//! The format is the discovery proposal's schema `discovery/0.2.0` (`agentskills/agentskills`,
//! `docs/well-known-uri.mdx`): every entry is `type: "skill-md"`, its artifact the skill's own
//! file. Digests come from the registry's per-snapshot file manifest; a skill whose file has
//! no digest there (over the hashing caps, unreadable) is left out rather than listed with a
//! digest that was never computed. The file is read from disk when served, so between an
//! edit and the reload that follows it the bytes can differ from the listed digest: that is
//! what the digest lets a client detect.

use skill_registry::{Caller, Sha256, Skill, Snapshot, Status};

use crate::engine::Engine;
use crate::error::Error;
use crate::ops::Scope;

/// The `$schema` of the index (discovery proposal 0.2.0).
pub const DISCOVERY_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// The path prefix of the index and of every published skill file.
pub const WELL_KNOWN_PREFIX: &str = "/.well-known/agent-skills";

/// One published skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryEntry {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The SHA-256 of its skill file's bytes, from the snapshot's manifest.
    pub digest: Sha256,
}

impl DiscoveryEntry {
    /// The path the skill file is served at: `/.well-known/agent-skills/<name>/SKILL.md`.
    pub fn url(&self) -> String {
        format!("{WELL_KNOWN_PREFIX}/{}/SKILL.md", self.name)
    }
}

/// The digest of a skill's own file in the snapshot's manifest, if it has one.
fn own_digest(snapshot: &Snapshot, skill: &Skill) -> Option<Sha256> {
    let own = skill.path.file_name()?.to_str()?;
    snapshot
        .manifest_of(skill)?
        .files()
        .iter()
        .find(|f| f.path == own)?
        .sha256
}

impl Engine {
    fn published<'s>(&self, snapshot: &'s Snapshot, name: &str) -> Result<&'s Skill, Error> {
        let scope = Scope {
            caller: Caller::Model,
            profile: None,
        };
        self.view(snapshot, &scope)
            .skill(name)
            .map(|s| &**s)
            .map_err(Error::disclosure)
    }

    /// The skills the discovery index lists, by name: every loaded skill the model may use
    /// under the engine's profile that has a digest in the snapshot's manifest.
    pub fn discovery_index(&self) -> Vec<DiscoveryEntry> {
        let snapshot = self.registry().snapshot();
        snapshot
            .skills()
            .filter(|s| s.status == Status::Loaded)
            .filter(|s| self.published(&snapshot, &s.name).is_ok())
            .filter_map(|s| {
                Some(DiscoveryEntry {
                    name: s.name.clone(),
                    description: s.description.clone(),
                    digest: own_digest(&snapshot, s)?,
                })
            })
            .collect()
    }

    /// The bytes of a published skill's file (what `<name>/SKILL.md` serves): a skill the
    /// index would list, its file read now and capped at [`MAX_SKILL_FILE_BYTES`](crate::MAX_SKILL_FILE_BYTES).
    pub fn discovery_file(&self, name: &str) -> Result<Vec<u8>, Error> {
        let snapshot = self.registry().snapshot();
        // Anything not listed is simply not there (404), whatever the reason.
        let skill = self
            .published(&snapshot, name)
            .map_err(|_| Error::Disclosure {
                code: "unknown_skill",
                message: format!("no published skill `{name}`; see {WELL_KNOWN_PREFIX}/index.json"),
            })?;
        // The one read every door makes: the manifest's file, verified with `require_lock`.
        snapshot
            .read_file(skill, crate::ops::files::SKILL_FILE)
            .map_err(Error::disclosure)
    }
}
