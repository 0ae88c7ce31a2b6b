//! The JSON of the Agent Skills discovery index (`/.well-known/agent-skills/index.json`,
//! schema `discovery/0.2.0`): `$schema` and `skills`, each with `name`, `type`,
//! `description`, `url` and `digest` (`sha256:` and 64 lowercase hex digits).

use serde::Serialize;

use crate::ops::discovery::{DISCOVERY_SCHEMA, DiscoveryEntry};

/// The artifact type of every entry: the skill file itself.
pub const SKILL_MD_TYPE: &str = "skill-md";

/// One entry of the index.
#[derive(Debug, Serialize)]
pub struct DiscoveryEntryShape<'a> {
    /// The skill's name.
    pub name: &'a str,
    /// Always [`SKILL_MD_TYPE`].
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The skill's description.
    pub description: &'a str,
    /// Where its file is served (path-absolute).
    pub url: String,
    /// `sha256:<hex>` of the file's bytes.
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
                    kind: SKILL_MD_TYPE,
                    description: &e.description,
                    url: e.url(),
                    digest: format!("sha256:{}", e.digest.to_hex()),
                })
                .collect(),
        }
    }
}
