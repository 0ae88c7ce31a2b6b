//! The one rule for the bytes a door serves or runs, and verified reads.
//!
//! Every door reads a skill's files through [`Snapshot::read_file`] (HTTP resources, MCP
//! `resources/read`, the CLI) and checks a script before it starts through
//! [`Snapshot::check_run`]. When the snapshot carries manifests (every registry but
//! `validate`'s), a file is served or run only if it is one of the skill's manifest files:
//! listed, hashed, counted and scanned (and, with `require_lock`, locked). Hidden folders,
//! `node_modules`, linked folders, files past the listing's limits and files added after the
//! load never are. Without manifests the listing's own rules still hold (hidden entries,
//! `node_modules`, depth, links: see `disclose/resources.rs`).
//!
//! With `require_lock` every such read hashes the bytes it serves and compares them with
//! the manifest's digest, which matched the lock when the skill was admitted: an edit no
//! reload saw (no watcher, the watcher's debounce, a hard link edited through its other
//! name) is refused with [`Error::LockMismatch`], never served. What a door serves from the
//! skill file's parse (`load_skill`, `get_skill`, sections, templates) is checked by
//! [`Snapshot::verify_skill_file`]: the file must still hash as it did when admitted.

use std::io::Read;
use std::path::Path;

use crate::disclose::open_without_waiting;
use crate::error::Error;
use crate::files::{FileEntry, FileManifest, Sha256};
use crate::manifest::hash_file;
use crate::skill::Skill;
use crate::snapshot::Snapshot;

/// The name every door gives a folder skill's own file, whatever its case on disk.
const SKILL_FILE: &str = "SKILL.md";

impl Snapshot {
    /// Whether reads are verified against the lock (`require_lock` is set).
    pub fn verifies_reads(&self) -> bool {
        self.rule.verify
    }

    /// The bytes of one file of `skill` as a door serves them: `SKILL.md` (or the skill
    /// file's own name) is the skill's file, read up to
    /// [`MAX_RESOURCE_BYTES`](crate::MAX_RESOURCE_BYTES); anything else is a resource,
    /// read as [`Skill::read_resource`] reads it. The file must be in the skill's manifest
    /// ([`Error::NotServed`]) and, with `require_lock`, hash as it did
    /// ([`Error::LockMismatch`]). This does not ask who may see the skill.
    pub fn read_file(&self, skill: &Skill, relative: &str) -> Result<Vec<u8>, Error> {
        let own = own_name(skill);
        if relative == SKILL_FILE || relative == own {
            let bytes = read_capped(&skill.path, relative)?;
            self.check_bytes(skill, &own, &bytes)?;
            return Ok(bytes);
        }
        self.read_resource(skill, relative)
    }

    /// One resource of `skill` (a file of its folder, as [`Skill::read_resource`] reads
    /// it; a skill without a folder of its own has none), under the same rule as
    /// [`Snapshot::read_file`].
    pub fn read_resource(&self, skill: &Skill, relative: &str) -> Result<Vec<u8>, Error> {
        // The path's own checks first (absolute, `..`, hidden, links out): their messages
        // say what is wrong with the request.
        let bytes = skill.read_resource(relative)?;
        let rel = normalise(relative).ok_or_else(|| not_served(skill, relative))?;
        self.check_bytes(skill, &rel, &bytes)?;
        Ok(bytes)
    }

    /// Whether the script `entry` (a `scripts:` entry, relative to the skill folder), found
    /// at `resolved`, may run: it must be one of the skill's manifest files
    /// ([`Error::NotServed`]) and, with `require_lock`, hash as it did
    /// ([`Error::LockMismatch`]; read now, just before the launch).
    pub fn check_run(&self, skill: &Skill, entry: &str, resolved: &Path) -> Result<(), Error> {
        let rel = normalise(entry).ok_or_else(|| not_served(skill, entry))?;
        let Some(file) = self.served(skill, &rel)? else {
            return Ok(());
        };
        if !self.rule.verify {
            return Ok(());
        }
        match (file.sha256, hash_file(resolved, file.size)) {
            (Some(locked), Some(now)) if locked == now => Ok(()),
            _ => Err(mismatch(skill, &rel)),
        }
    }

    /// With `require_lock`: whether the skill's file still hashes as it did when the skill
    /// was admitted, so that what a door serves from its parse (body, sections) is what
    /// the lock names ([`Error::LockMismatch`] otherwise). Without it, nothing is read.
    pub fn verify_skill_file(&self, skill: &Skill) -> Result<(), Error> {
        if !self.rule.verify {
            return Ok(());
        }
        let own = own_name(skill);
        let Some(file) = self.served(skill, &own)? else {
            return Ok(());
        };
        match (file.sha256, hash_file(&skill.path, file.size)) {
            (Some(locked), Some(now)) if locked == now => Ok(()),
            _ => Err(mismatch(skill, &own)),
        }
    }

    /// The manifest entry of `rel`, which must exist when the snapshot carries manifests;
    /// `None` when it carries none (then only the listing's rules apply).
    fn served(&self, skill: &Skill, rel: &str) -> Result<Option<&FileEntry>, Error> {
        if !self.rule.by_manifest {
            return Ok(None);
        }
        self.manifest_of(skill)
            .and_then(|m: &FileManifest| m.get(rel))
            .map(Some)
            .ok_or_else(|| not_served(skill, rel))
    }

    /// The manifest rule and, with `require_lock`, the digest of `bytes`, read from `rel`.
    fn check_bytes(&self, skill: &Skill, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        let Some(file) = self.served(skill, rel)? else {
            return Ok(());
        };
        if self.rule.verify && file.sha256 != Some(Sha256::of(bytes)) {
            return Err(mismatch(skill, rel));
        }
        Ok(())
    }
}

fn not_served(skill: &Skill, path: &str) -> Error {
    Error::NotServed {
        skill: skill.name.clone(),
        path: path.to_owned(),
    }
}

fn mismatch(skill: &Skill, path: &str) -> Error {
    Error::LockMismatch {
        skill: skill.name.clone(),
        path: path.to_owned(),
    }
}

/// The skill file's name in its manifest.
fn own_name(skill: &Skill) -> String {
    skill
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A relative path as a manifest writes it: `/`-separated, without empty or `.` parts and
/// with `..` applied; `None` when it climbs out.
fn normalise(relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// A skill's own file, read whole up to the resource cap without waiting on anything but
/// a regular file.
fn read_capped(path: &Path, relative: &str) -> Result<Vec<u8>, Error> {
    let limit = crate::MAX_RESOURCE_BYTES;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = open_without_waiting(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(Error::ResourcePath {
            path: relative.to_owned(),
            reason: "it is not a regular file (a named pipe, socket or device)",
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(limit)).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(Error::ResourceTooLarge {
            path: relative.to_owned(),
            size: meta.len().max(bytes.len() as u64),
            limit,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
#[path = "served_tests.rs"]
mod tests;
