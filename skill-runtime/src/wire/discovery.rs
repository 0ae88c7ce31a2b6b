//! The JSON of the Agent Skills discovery index (`/.well-known/agent-skills/index.json`,
//! schema `discovery/0.2.0`): `$schema` and `skills`, each with `name`, `type`,
//! `description`, `url` and `digest` (`sha256:` and 64 lowercase hex digits); `type` is
//! `skill-md` for a skill file alone and `archive` for a zip of a skill's folder.

use serde::Serialize;

use crate::ops::discovery::{ArtifactKind, DISCOVERY_SCHEMA, DiscoveryEntry};

/// The artifact type of an entry whose artifact is the skill file itself.
pub const SKILL_MD_TYPE: &str = "skill-md";

/// The artifact type of an entry whose artifact is an archive of the skill's folder.
pub const ARCHIVE_TYPE: &str = "archive";

/// One entry of the index.
#[derive(Debug, Serialize)]
pub struct DiscoveryEntryShape<'a> {
    /// The skill's name.
    pub name: &'a str,
    /// [`SKILL_MD_TYPE`] or [`ARCHIVE_TYPE`].
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The skill's description.
    pub description: &'a str,
    /// Where its artifact is served (path-absolute).
    pub url: String,
    /// `sha256:<hex>` of the artifact's bytes.
    pub digest: String,
}

/// The index.
#[derive(Debug, Serialize)]
pub struct DiscoveryIndexShape<'a> {
    /// [`DISCOVERY_SCHEMA`].
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    /// The published skills, by name.
    pub skills: Vec<DiscoveryEntryShape<'a>>,
}

impl<'a> DiscoveryIndexShape<'a> {
    /// The index of these entries.
    pub fn new(entries: &'a [DiscoveryEntry]) -> Self {
        DiscoveryIndexShape {
            schema: DISCOVERY_SCHEMA,
            skills: entries
                .iter()
                .map(|e| DiscoveryEntryShape {
                    name: &e.name,
                    kind: match e.kind {
                        ArtifactKind::SkillMd => SKILL_MD_TYPE,
                        ArtifactKind::Archive => ARCHIVE_TYPE,
                    },
                    description: &e.description,
                    url: e.url(),
                    digest: format!("sha256:{}", e.digest.to_hex()),
                })
                .collect(),
        }
    }
}
