//! The one rule for the bytes a door serves or runs, and verified reads.
//!
//! Every door reads a skill's files through [`Snapshot::read_file`] (HTTP resources, MCP
//! `resources/read`, the CLI) and checks a script before it starts through
//! [`Snapshot::check_run`] (or, to run exactly the verified bytes,
//! [`Snapshot::verified_run`]). When the snapshot carries manifests (every registry but
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
//!
//! A read need not hash bytes it can prove unchanged: after a hash matched, the file's
//! stamp (size, modification and change times, inode, device, from the open file the
//! bytes came from, after the read) is kept, and a later read showing the same stamp is
//! served without hashing, once the change time is older than the hash by a safety margin
//! (see `verified.rs`, which says why each way around it fails). A file changed since, by
//! any name or any means the kernel records, is hashed as before.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

use crate::disclose::open_without_waiting;
use crate::error::Error;
use crate::files::{FileEntry, FileManifest, Sha256};
use crate::manifest::hash_open;
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
            let started = self.stamps.now();
            let (bytes, after) = read_capped(&skill.path, relative)?;
            self.check_bytes(skill, &own, &bytes, (&skill.path, &after), started)?;
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
        let started = self.stamps.now();
        let (bytes, opened, after) = skill.read_resource_opened(relative)?;
        let rel = normalise(relative).ok_or_else(|| not_served(skill, relative))?;
        self.check_bytes(skill, &rel, &bytes, (&opened, &after), started)?;
        Ok(bytes)
    }

    /// Whether the script `entry` (a `scripts:` entry, relative to the skill folder), found
    /// at `resolved`, may run: it must be one of the skill's manifest files
    /// ([`Error::NotServed`]) and, with `require_lock`, hold what it did
    /// ([`Error::LockMismatch`]; checked now, just before the launch).
    pub fn check_run(&self, skill: &Skill, entry: &str, resolved: &Path) -> Result<(), Error> {
        let rel = normalise(entry).ok_or_else(|| not_served(skill, entry))?;
        let Some(file) = self.served(skill, &rel)? else {
            return Ok(());
        };
        if !self.rule.verify {
            return Ok(());
        }
        self.check_path(skill, &rel, resolved, file)
    }

    /// [`Snapshot::check_run`], returning with `require_lock` the bytes that were verified:
    /// read from one open file of `resolved` and checked as [`Snapshot::read_file`] checks
    /// a resource (hashed, or vouched for by the open file's stamp), so that the launch runs
    /// exactly them and not what the path names a moment later (a file renamed over it, or
    /// rewritten in place, between the check and the start). `None` without
    /// `require_lock`: nothing was verified, the path is run.
    pub fn verified_run(
        &self,
        skill: &Skill,
        entry: &str,
        resolved: &Path,
    ) -> Result<Option<Vec<u8>>, Error> {
        let rel = normalise(entry).ok_or_else(|| not_served(skill, entry))?;
        let Some(file) = self.served(skill, &rel)? else {
            return Ok(None);
        };
        if !self.rule.verify {
            return Ok(None);
        }
        let started = self.stamps.now();
        let Ok(open) = open_without_waiting(resolved) else {
            return Err(mismatch(skill, &rel));
        };
        if !open.metadata().is_ok_and(|m| m.is_file()) {
            return Err(mismatch(skill, &rel));
        }
        // One byte past the locked size is enough to see that the file grew.
        let mut bytes = Vec::new();
        let mut open = open;
        if (&mut open)
            .take(file.size.saturating_add(1))
            .read_to_end(&mut bytes)
            .is_err()
        {
            return Err(mismatch(skill, &rel));
        }
        let Ok(after) = open.metadata() else {
            return Err(mismatch(skill, &rel));
        };
        self.check_bytes(skill, &rel, &bytes, (resolved, &after), started)?;
        Ok(Some(bytes))
    }

    /// With `require_lock`: whether the skill's file still holds what it did when the skill
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
        self.check_path(skill, &own, &skill.path, file)
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

    /// The manifest rule and, with `require_lock`, the digest of `bytes`, read from `rel`
    /// (opened at `opened.0`, whose open file's metadata after the read is `opened.1`) in
    /// a read that began at `started`: the bytes are hashed unless the stamp vouches for
    /// them (`verified.rs`).
    fn check_bytes(
        &self,
        skill: &Skill,
        rel: &str,
        bytes: &[u8],
        opened: (&Path, &fs::Metadata),
        started: SystemTime,
    ) -> Result<(), Error> {
        let Some(file) = self.served(skill, rel)? else {
            return Ok(());
        };
        if !self.rule.verify {
            return Ok(());
        }
        let Some(locked) = file.sha256 else {
            return Err(mismatch(skill, rel));
        };
        let (path, after) = opened;
        if after.len() == bytes.len() as u64 && self.stamps.vouch(path, after, &locked) {
            return Ok(());
        }
        self.stamps.count_hash();
        if Sha256::of(bytes) != locked {
            return Err(mismatch(skill, rel));
        }
        self.stamps.remember(path, after, locked, started);
        Ok(())
    }

    /// With `require_lock`: whether the file at `path` (manifest entry `file`, named `rel`)
    /// holds the locked bytes: the stamp of what the path names now vouches for them, or
    /// its bytes, read from one open file whose own metadata makes the stamp kept, hash to
    /// them. Nothing is served from the file's bytes here (the caller serves a parse, or
    /// runs the path), so the fast path needs one `stat` of the path (what opening it and
    /// asking the open file would see at that moment too), not an open.
    fn check_path(
        &self,
        skill: &Skill,
        rel: &str,
        path: &Path,
        file: &FileEntry,
    ) -> Result<(), Error> {
        let Some(locked) = file.sha256 else {
            return Err(mismatch(skill, rel));
        };
        if let Ok(meta) = fs::metadata(path)
            && meta.is_file()
            && self.stamps.vouch(path, &meta, &locked)
        {
            return Ok(());
        }
        let Ok(mut open) = open_without_waiting(path) else {
            return Err(mismatch(skill, rel));
        };
        if !open.metadata().is_ok_and(|m| m.is_file()) {
            return Err(mismatch(skill, rel));
        }
        let started = self.stamps.now();
        self.stamps.count_hash();
        if hash_open(&mut open, file.size) != Some(locked) {
            return Err(mismatch(skill, rel));
        }
        if let Ok(after) = open.metadata() {
            self.stamps.remember(path, &after, locked, started);
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
/// a regular file, with the open file's metadata taken after the read.
fn read_capped(path: &Path, relative: &str) -> Result<(Vec<u8>, fs::Metadata), Error> {
    let limit = crate::MAX_RESOURCE_BYTES;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = open_without_waiting(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(Error::ResourcePath {
            path: relative.to_owned(),
            reason: "it is not a regular file (a named pipe, socket or device)",
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(limit)).unwrap_or(0));
    (&mut file)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(Error::ResourceTooLarge {
            path: relative.to_owned(),
            size: meta.len().max(bytes.len() as u64),
            limit,
        });
    }
    let after = file.metadata().map_err(io)?;
    Ok((bytes, after))
}

#[cfg(test)]
#[path = "served_tests.rs"]
mod tests;
