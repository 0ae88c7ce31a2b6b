//! The Agent Skills discovery index as Engine operations: which skills a server publishes at
//! `/.well-known/agent-skills/index.json` (the model-visible skills of the engine's own
//! profile) with the SHA-256 of each one's artifact, and that artifact's bytes.
//!
//! The format is the discovery RFC's schema `discovery/0.2.0` (`cloudflare/agent-skills-discovery-rfc`,
//! "Discovery Index" and "Archive Distribution"): a skill whose folder holds only its skill
//! file is `type: "skill-md"`, its artifact that file; a folder skill with more files is
//! `type: "archive"`, its artifact a zip of the whole folder with `SKILL.md` at the root
//! (see `crate::zip`: stored, fixed time stamps, files in the manifest's order, so the same
//! files make the same bytes). Digests of skill files come from the registry's per-snapshot
//! manifest; an archive's digest is computed from the files' verified reads once per folder
//! content (the manifest's folder digest) and kept.
//!
//! Only what a conforming client accepts is listed: a name that follows the Agent Skills
//! rule (so no `namespace:name`), a description of 1 to
//! [`MAX_DESCRIPTION_CHARS`](skill_format::MAX_DESCRIPTION_CHARS) characters, a skill file
//! whose frontmatter gives that name and a description, and an archive of at most
//! [`MAX_ARCHIVE_BYTES`] and [`MAX_ARCHIVE_FILES`]. Nothing is mended on the way out (a
//! client checks the artifact it downloads against the entry): the rest is left out, each
//! with its reason ([`Engine::discovery_left_out`], logged at debug when the index is
//! served). A skill without a digest (over the hashing caps, unreadable) is left out too.
//! Files are read from disk when served, so between an edit and the reload that follows it
//! the bytes can differ from the listed digest: that is what the digest lets a client detect.

use skill_format::{MAX_DESCRIPTION_CHARS, is_kebab_name};
use skill_registry::{Caller, FileManifest, Sha256, Skill, Snapshot, Status};

use crate::engine::Engine;
use crate::error::Error;
use crate::ops::Scope;
use crate::ops::files::SKILL_FILE;
use crate::zip::{MAX_ZIP_ENTRIES, stored_zip};

/// The `$schema` of the index (discovery RFC 0.2.0).
pub const DISCOVERY_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// The path prefix of the index and of every published artifact.
pub const WELL_KNOWN_PREFIX: &str = "/.well-known/agent-skills";

/// The file name of an archive under its skill's path (`<name>/skill.zip`).
pub const ARCHIVE_FILE: &str = "skill.zip";

/// The largest archive the index lists (the SEP-2640 per-skill limit, 16 MiB of files; the
/// vercel `skills` CLI unpacks up to 50 MiB).
pub const MAX_ARCHIVE_BYTES: u64 = 16 * 1024 * 1024;

/// The most files an archive holds (the SEP-2640 per-skill limit; the vercel CLI takes
/// up to 1,000).
pub const MAX_ARCHIVE_FILES: usize = 512;

/// Archive digests kept at most (one per folder content); past it the cache starts over.
const MAX_CACHED_ARCHIVES: usize = 65_536;

/// What a published skill's artifact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArtifactKind {
    /// Its skill file alone (`type: "skill-md"`).
    SkillMd,
    /// A zip of its folder (`type: "archive"`).
    Archive,
}

/// One published skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryEntry {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its artifact's kind.
    pub kind: ArtifactKind,
    /// The SHA-256 of its artifact's bytes.
    pub digest: Sha256,
}

impl DiscoveryEntry {
    /// The path its artifact is served at: `/.well-known/agent-skills/<name>/SKILL.md`, or
    /// `/.well-known/agent-skills/<name>/skill.zip` for an archive.
    pub fn url(&self) -> String {
        let file = match self.kind {
            ArtifactKind::SkillMd => SKILL_FILE,
            ArtifactKind::Archive => ARCHIVE_FILE,
        };
        format!("{WELL_KNOWN_PREFIX}/{}/{file}", self.name)
    }
}

/// The digest of a skill's own file in the snapshot's manifest, if it has one.
fn own_digest(manifest: &FileManifest, own: &str) -> Option<Sha256> {
    manifest.files().iter().find(|f| f.path == own)?.sha256
}

/// Whether a skill is a folder skill (its file is its folder's `SKILL.md`).
fn is_folder_skill(skill: &Skill) -> bool {
    skill.domain.is_none()
        && skill.kind == skill_format::FileKind::Skill
        && skill
            .path
            .file_name()
            .is_some_and(|n| n == SKILL_FILE || n == "skill.md")
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
    /// under the engine's profile that a conforming client accepts (see the module docs).
    pub fn discovery_index(&self) -> Vec<DiscoveryEntry> {
        let (entries, left_out) = self.discovery();
        for (name, reason) in &left_out {
            tracing::debug!(skill = %name, %reason, "not listed in the discovery index");
        }
        entries
    }

    /// The skills the discovery index leaves out, each with the reason.
    pub fn discovery_left_out(&self) -> Vec<(String, String)> {
        self.discovery().1
    }

    fn discovery(&self) -> (Vec<DiscoveryEntry>, Vec<(String, String)>) {
        let snapshot = self.registry().snapshot();
        let mut entries = Vec::new();
        let mut left_out = Vec::new();
        for s in snapshot.skills().filter(|s| s.status == Status::Loaded) {
            if self.published(&snapshot, &s.name).is_err() {
                continue;
            }
            match self.discovery_entry(&snapshot, s) {
                Ok(entry) => entries.push(entry),
                Err(reason) => left_out.push((s.name.clone(), reason)),
            }
        }
        (entries, left_out)
    }

    /// One skill's entry, or why a client would not accept it.
    fn discovery_entry(&self, snapshot: &Snapshot, s: &Skill) -> Result<DiscoveryEntry, String> {
        if !is_kebab_name(&s.name) {
            return Err(
                "not an Agent Skills name (1-64 of a-z, 0-9 and single inner hyphens)".to_owned(),
            );
        }
        let chars = s.description.chars().count();
        if chars == 0 || chars > MAX_DESCRIPTION_CHARS {
            return Err(format!(
                "its description has {chars} characters, not 1 to {MAX_DESCRIPTION_CHARS}"
            ));
        }
        if s.manifest.name.as_deref() != Some(s.name.as_str())
            || s.manifest.description.as_deref() != Some(s.description.as_str())
        {
            return Err(
                "its skill file's frontmatter does not give its name and description".to_owned(),
            );
        }
        let manifest = snapshot
            .manifest_of(s)
            .ok_or("no file manifest (its files were not listed)")?;
        let own = s
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or("its skill file's name is not UTF-8")?;
        let multi = is_folder_skill(s) && manifest.files().len() > 1;
        let (kind, digest) = if multi {
            (
                ArtifactKind::Archive,
                self.archive_digest(snapshot, s, manifest, own)?,
            )
        } else {
            let digest = own_digest(manifest, own).ok_or("its skill file has no digest")?;
            (ArtifactKind::SkillMd, digest)
        };
        Ok(DiscoveryEntry {
            name: s.name.clone(),
            description: s.description.clone(),
            kind,
            digest,
        })
    }

    /// The digest of a folder skill's archive: kept per folder content, made once.
    fn archive_digest(
        &self,
        snapshot: &Snapshot,
        skill: &Skill,
        manifest: &FileManifest,
        own: &str,
    ) -> Result<Sha256, String> {
        let key = (manifest.digest(), own.to_owned());
        let cache = &self.archive_digests().0;
        let cached = match cache.lock() {
            Ok(map) => map.get(&key).copied(),
            Err(poisoned) => poisoned.into_inner().get(&key).copied(),
        };
        if let Some(digest) = cached {
            return Ok(digest);
        }
        let digest = Sha256::of(&archive(snapshot, skill, manifest, own)?);
        let mut map = match cache.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        };
        if map.len() >= MAX_CACHED_ARCHIVES {
            map.clear();
        }
        map.insert(key, digest);
        Ok(digest)
    }

    /// The bytes of a published skill's file (what `<name>/SKILL.md` serves): a skill the
    /// index would list, its file read now and capped at [`MAX_SKILL_FILE_BYTES`](crate::MAX_SKILL_FILE_BYTES).
    pub fn discovery_file(&self, name: &str) -> Result<Vec<u8>, Error> {
        let snapshot = self.registry().snapshot();
        let skill = self.listed(&snapshot, name)?;
        // The one read every door makes: the manifest's file, verified with `require_lock`.
        snapshot
            .read_file(skill, SKILL_FILE)
            .map_err(Error::disclosure)
    }

    /// The zip a published folder skill's `archive` entry names (what `<name>/skill.zip`
    /// serves), made now from the files' verified reads.
    pub fn discovery_archive(&self, name: &str) -> Result<Vec<u8>, Error> {
        let snapshot = self.registry().snapshot();
        let skill = self.listed(&snapshot, name)?;
        let manifest = snapshot.manifest_of(skill).filter(|m| m.files().len() > 1);
        let own = skill.path.file_name().and_then(|n| n.to_str());
        match (manifest, own) {
            (Some(manifest), Some(own)) if is_folder_skill(skill) => {
                archive(&snapshot, skill, manifest, own).map_err(|message| Error::Disclosure {
                    code: "unknown_skill",
                    message,
                })
            }
            _ => Err(not_published(name)),
        }
    }

    /// A skill the index lists; anything else is simply not there (404), whatever the
    /// reason.
    fn listed<'s>(&self, snapshot: &'s Snapshot, name: &str) -> Result<&'s Skill, Error> {
        let skill = self
            .published(snapshot, name)
            .map_err(|_| not_published(name))?;
        if skill.status != Status::Loaded || !is_kebab_name(&skill.name) {
            return Err(not_published(name));
        }
        Ok(skill)
    }
}

fn not_published(name: &str) -> Error {
    Error::Disclosure {
        code: "unknown_skill",
        message: format!("no published skill `{name}`; see {WELL_KNOWN_PREFIX}/index.json"),
    }
}

/// The zip of a folder skill: its own file as `SKILL.md` first, then every other file of
/// its manifest by path, each read as a door reads it (verified with `require_lock`).
fn archive(
    snapshot: &Snapshot,
    skill: &Skill,
    manifest: &FileManifest,
    own: &str,
) -> Result<Vec<u8>, String> {
    if !manifest.is_complete() {
        return Err("the registry could not list or hash every file of its folder".to_owned());
    }
    let count = manifest.files().len();
    if count > MAX_ARCHIVE_FILES.min(MAX_ZIP_ENTRIES) {
        return Err(format!(
            "{count} files, over the {MAX_ARCHIVE_FILES} an archive holds"
        ));
    }
    let total: u64 = manifest.files().iter().map(|f| f.size).sum();
    if total > MAX_ARCHIVE_BYTES {
        return Err(format!(
            "{total} bytes of files, over the {MAX_ARCHIVE_BYTES} an archive holds"
        ));
    }
    let mut files = Vec::with_capacity(count);
    let read = |relative: &str| {
        snapshot
            .read_file(skill, relative)
            .map_err(|e| format!("{relative}: {e}"))
    };
    files.push((SKILL_FILE.to_owned(), read(SKILL_FILE)?));
    for f in manifest.files() {
        if f.path != own && f.path != SKILL_FILE {
            files.push((f.path.clone(), read(&f.path)?));
        }
    }
    stored_zip(&files).map_err(|_| "too large for a zip archive".to_owned())
}
