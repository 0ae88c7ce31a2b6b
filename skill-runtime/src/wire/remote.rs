//! The JSON a remote source serves, as the hub reads it: a discovery index (schema
//! `discovery/0.2.0`, the shape [`super::DiscoveryIndexShape`] writes) with, per skill, its
//! `name`, `type` (`skill-md` or `archive`), `url` and `digest`. Other fields (`$schema`,
//! `description`) are read past.

use serde::Deserialize;

/// A remote discovery index.
#[derive(Debug, Deserialize)]
pub(crate) struct RemoteIndex {
    /// Its skills, in the order listed.
    pub(crate) skills: Vec<RemoteEntry>,
}

/// One skill of a remote discovery index.
#[derive(Debug, Deserialize)]
pub(crate) struct RemoteEntry {
    /// The skill's name.
    pub(crate) name: String,
    /// [`super::SKILL_MD_TYPE`] or [`super::ARCHIVE_TYPE`].
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// Where its artifact is: absolute, path-absolute or relative to the index.
    pub(crate) url: String,
    /// `sha256:` and 64 hex digits of the artifact's bytes.
    pub(crate) digest: String,
}
