//! Lock files: the manifest of every skill of a tree, written down so that a later tree can
//! be checked against it (`skill-server lock` / `verify`, `require_lock` in `serve`).
//!
//! The format (JSON, pretty-printed, skills sorted by name then layer, files by path, so a
//! change shows up as a small diff in review):
//!
//! ```json
//! {
//!   "version": 1,
//!   "skills": [
//!     {
//!       "name": "pdf-forms",
//!       "layer": "project",
//!       "digest": "<sha-256 of the folder, see FileManifest::digest>",
//!       "files": [
//!         { "path": "SKILL.md", "size": 120, "sha256": "<64 hex digits>" }
//!       ]
//!     }
//!   ]
//! }
//! ```
//!
//! A skill is looked up by name; when the lock holds the name in several layers, the entry
//! of the skill's own layer is used.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::files::{FileEntry, FileManifest, Sha256};
use crate::snapshot::Snapshot;

/// The largest lock file read.
pub const MAX_LOCK_BYTES: u64 = 64 * 1024 * 1024;
/// The lock format this crate reads and writes.
pub const LOCK_VERSION: u32 = 1;
/// A temporary lock file (`.{name}.tmp-{digits}`) older than this is left over from a writer
/// that was killed (a write takes milliseconds); the next write removes it.
const STALE_TMP_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// A lock file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The format version ([`LOCK_VERSION`]).
    pub version: u32,
    /// Every locked skill, by name then layer.
    pub skills: Vec<LockedSkill>,
}

/// One skill in a lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedSkill {
    /// Its name.
    pub name: String,
    /// The layer of its source when it was locked.
    pub layer: String,
    /// The folder digest ([`FileManifest::digest`]).
    pub digest: Sha256,
    /// Its files ([`FileManifest::files`]), by path.
    pub files: Vec<FileEntry>,
}

/// How a skill's files compare with its lock entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// The files match.
    Same,
    /// The lock has no entry for the skill.
    NotLocked,
    /// Files differ: paths added since the lock, removed, and changed (size or digest).
    Changed {
        /// Files in the tree and not in the lock.
        added: Vec<String>,
        /// Files in the lock and not in the tree.
        removed: Vec<String>,
        /// Files in both whose size or SHA-256 differ.
        changed: Vec<String>,
    },
    /// The listed files match, but some of the folder's files were past the listing
    /// limits (depth or count) when the manifest was made, so they cannot be checked.
    Unlisted,
}

impl Drift {
    /// Compare a lock entry's files with a manifest's.
    pub fn between(locked: &[FileEntry], now: &FileManifest) -> Drift {
        let then: BTreeMap<&str, &FileEntry> =
            locked.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut added = Vec::new();
        let mut changed = Vec::new();
        for f in now.files() {
            match then.get(f.path.as_str()) {
                None => added.push(f.path.clone()),
                // A file without a digest (too large, unreadable) never matches: nothing
                // proves it is the file that was locked.
                Some(l) if l.size != f.size || l.sha256 != f.sha256 || f.sha256.is_none() => {
                    changed.push(f.path.clone());
                }
                Some(_) => {}
            }
        }
        let removed: Vec<String> = locked
            .iter()
            .filter(|l| now.get(&l.path).is_none())
            .map(|l| l.path.clone())
            .collect();
        if added.is_empty() && removed.is_empty() && changed.is_empty() {
            Drift::Same
        } else {
            Drift::Changed {
                added,
                removed,
                changed,
            }
        }
    }

    /// `None` when the files match; otherwise a sentence naming at most `max` files of
    /// each kind.
    pub fn describe(&self, max: usize) -> Option<String> {
        let list = |kind: &str, v: &[String]| -> Option<String> {
            if v.is_empty() {
                return None;
            }
            let mut shown: Vec<&str> = v.iter().take(max).map(String::as_str).collect();
            let more = v.len().saturating_sub(max);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            shown.sort_unstable();
            Some(format!("{kind} {}{tail}", shown.join(", ")))
        };
        match self {
            Drift::Same => None,
            Drift::NotLocked => Some("the lock has no entry for it".to_owned()),
            Drift::Unlisted => Some(
                "some of its files are past the listing limits (too deep or too many), so they cannot be checked: move them up or out of the skill's folder"
                    .to_owned(),
            ),
            Drift::Changed {
                added,
                removed,
                changed,
            } => {
                let parts: Vec<String> = [
                    list("added", added),
                    list("removed", removed),
                    list("changed", changed),
                ]
                .into_iter()
                .flatten()
                .collect();
                Some(parts.join("; "))
            }
        }
    }
}

/// One skill's result in [`Lock::verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDrift {
    /// The skill's name.
    pub name: String,
    /// Its layer (in the tree, or in the lock for a removed skill).
    pub layer: String,
    /// What differs. [`Drift::NotLocked`] is a skill added since the lock; a skill in the
    /// lock and gone from the tree is a [`Drift::Changed`] with every file removed.
    pub drift: Drift,
}

impl Lock {
    /// The lock of a snapshot: every winning entry (skills and domain indexes, whatever
    /// their status) with its manifest.
    pub fn from_snapshot(snapshot: &Snapshot) -> Lock {
        let mut skills: Vec<LockedSkill> = snapshot
            .entries()
            .chain(snapshot.domains())
            .filter_map(|s| {
                snapshot.manifest_of(s).map(|m| LockedSkill {
                    name: s.name.clone(),
                    layer: s.layer.clone(),
                    digest: m.digest(),
                    files: m.files().to_vec(),
                })
            })
            .collect();
        skills.sort_by(|a, b| a.name.cmp(&b.name).then(a.layer.cmp(&b.layer)));
        Lock {
            version: LOCK_VERSION,
            skills,
        }
    }

    /// Parse a lock file's text.
    pub fn parse(text: &str) -> Result<Lock, String> {
        let lock: Lock = serde_json::from_str(text).map_err(|e| format!("not a lock file: {e}"))?;
        if lock.version != LOCK_VERSION {
            return Err(format!(
                "lock format version {} is not supported (this build reads version {LOCK_VERSION}): write the lock again with this build",
                lock.version
            ));
        }
        Ok(lock)
    }

    /// Read and parse a lock file (at most [`MAX_LOCK_BYTES`]).
    pub fn read(path: &Path) -> Result<Lock, Error> {
        let fail = |reason: String| Error::Lock {
            path: path.to_path_buf(),
            reason,
        };
        let file = fs::File::open(path).map_err(|e| fail(format!("cannot read it ({e})")))?;
        let mut text = String::new();
        file.take(MAX_LOCK_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| fail(format!("cannot read it as UTF-8 text ({e})")))?;
        if text.len() as u64 > MAX_LOCK_BYTES {
            return Err(fail(format!("it is larger than {MAX_LOCK_BYTES} bytes")));
        }
        Lock::parse(&text).map_err(fail)
    }

    /// The JSON text: pretty-printed, with a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Write the lock to `path` atomically: into a temporary file in the same folder,
    /// flushed to disk, then renamed over `path` (a reader sees the old lock or the new
    /// one, never half of one).
    pub fn write(&self, path: &Path) -> Result<(), Error> {
        let fail = |reason: String| Error::Lock {
            path: path.to_path_buf(),
            reason,
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "skills-lock.json".to_owned());
        remove_stale_tmp(&dir, &name);
        let (tmp, mut f) = create_tmp(&dir, &name).map_err(|e| {
            fail(format!(
                "cannot create a temporary file beside it in {} ({e})",
                dir.display()
            ))
        })?;
        let result = (|| -> std::io::Result<()> {
            f.write_all(self.to_json().as_bytes())?;
            f.sync_all()?;
            fs::rename(&tmp, path)?;
            // The rename itself survives a crash once the folder is on disk too.
            #[cfg(unix)]
            fs::File::open(&dir)?.sync_all()?;
            Ok(())
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(fail(format!("cannot write it ({e})")));
        }
        Ok(())
    }

    /// The entry for a skill: by name, preferring the given layer when the lock holds the
    /// name more than once.
    pub fn entry(&self, name: &str, layer: &str) -> Option<&LockedSkill> {
        let start = self.skills.partition_point(|s| s.name.as_str() < name);
        let same: Vec<&LockedSkill> = self.skills[start..]
            .iter()
            .take_while(|s| s.name == name)
            .collect();
        same.iter()
            .find(|s| s.layer == layer)
            .or_else(|| same.first())
            .copied()
    }

    /// Compare one skill's manifest with its entry.
    pub fn check(&self, name: &str, layer: &str, manifest: &FileManifest) -> Drift {
        match self.entry(name, layer) {
            None => Drift::NotLocked,
            Some(l) if l.digest == manifest.digest() && manifest.is_complete() => Drift::Same,
            // Files past the listing limits are in neither the lock nor the manifest, so
            // the comparison alone found them equal: they were run unchecked.
            Some(l) => match Drift::between(&l.files, manifest) {
                Drift::Same if !manifest.is_complete() => Drift::Unlisted,
                drift => drift,
            },
        }
    }

    /// Compare a whole snapshot with the lock: every skill that differs (added, changed, or
    /// removed since the lock), by name. Empty when the tree matches.
    pub fn verify(&self, snapshot: &Snapshot) -> Vec<SkillDrift> {
        let now = Lock::from_snapshot(snapshot);
        let mut out = Vec::new();
        for s in snapshot.entries().chain(snapshot.domains()) {
            let Some(m) = snapshot.manifest_of(s) else {
                continue;
            };
            let drift = self.check(&s.name, &s.layer, m);
            if drift != Drift::Same {
                out.push(SkillDrift {
                    name: s.name.clone(),
                    layer: s.layer.clone(),
                    drift,
                });
            }
        }
        for l in &self.skills {
            if now.entry(&l.name, &l.layer).is_none() {
                out.push(SkillDrift {
                    name: l.name.clone(),
                    layer: l.layer.clone(),
                    drift: Drift::Changed {
                        added: Vec::new(),
                        removed: l.files.iter().map(|f| f.path.clone()).collect(),
                        changed: Vec::new(),
                    },
                });
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name).then(a.layer.cmp(&b.layer)));
        out
    }
}

/// Temporary names tried before a write gives up.
const TMP_ATTEMPTS: u32 = 16;

/// Create a new temporary file `.NAME.tmp-DIGITS` in `dir` (the digits: this process's id
/// and the clock's nanoseconds, so that the name is hard to guess).
fn create_tmp(dir: &Path, name: &str) -> std::io::Result<(std::path::PathBuf, fs::File)> {
    create_first((0..TMP_ATTEMPTS).map(|attempt| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        dir.join(format!(
            ".{name}.tmp-{}{nanos:09}{attempt:02}",
            std::process::id()
        ))
    }))
}

/// Create the first of `candidates` that nothing has the name of yet. An entry planted
/// there, a symbolic link to a file elsewhere in particular, is never followed or written
/// through: the next name is tried.
fn create_first(
    candidates: impl Iterator<Item = std::path::PathBuf>,
) -> std::io::Result<(std::path::PathBuf, fs::File)> {
    let mut last = std::io::Error::other("no name tried");
    for tmp in candidates {
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Remove the temporary files of lock `name` in `dir` that a killed writer left
/// (`.{name}.tmp-{digits}`, older than [`STALE_TMP_AGE`]). Best effort: what cannot be read
/// or removed stays, and the write goes on.
fn remove_stale_tmp(dir: &Path, name: &str) {
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let stale = entry.path().symlink_metadata().is_ok_and(|meta| {
            meta.file_type().is_file()
                && meta
                    .modified()
                    .ok()
                    .and_then(|m| m.elapsed().ok())
                    .is_some_and(|age| age > STALE_TMP_AGE)
        });
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::test_util::write;
    use crate::{RegistryConfig, Source, load_snapshot};

    fn snapshot(root: &Path) -> Snapshot {
        load_snapshot(
            &RegistryConfig::with_sources(vec![Source::new(root, "project")]),
            1,
        )
    }

    fn tree(root: &Path) {
        for n in ["a", "b"] {
            write(
                root,
                &format!("{n}/SKILL.md"),
                &format!("---\nname: {n}\ndescription: D.\n---\nbody\n"),
            );
            write(root, &format!("{n}/scripts/run.sh"), "echo hi\n");
        }
    }

    #[test]
    fn lock_then_verify_is_clean_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let lock = Lock::from_snapshot(&snapshot(dir.path()));
        assert_eq!(lock.skills.len(), 2);
        let path = dir.path().join("skills-lock.json");
        lock.write(&path).unwrap();
        let read = Lock::read(&path).unwrap();
        assert_eq!(read, lock);
        assert!(read.verify(&snapshot(dir.path())).is_empty());
        // No temporary file is left behind.
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
    }

    /// A temporary name already taken, by a link to a file elsewhere in particular, is
    /// never written through: `lock --output` into a shared folder overwrote the link's
    /// target (the name was `.NAME.tmp-PID`, easy to plant) and left the lock a link to it.
    #[cfg(unix)]
    #[test]
    fn a_planted_temporary_name_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let out = dir.path().join("shared");
        fs::create_dir(&out).unwrap();
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, "VICTIM").unwrap();
        let pid = std::process::id();
        for planted in [format!(".skills-lock.json.tmp-{pid}"), "taken".to_owned()] {
            std::os::unix::fs::symlink(&victim, out.join(planted)).unwrap();
        }
        let path = out.join("skills-lock.json");
        let lock = Lock::from_snapshot(&snapshot(dir.path()));
        lock.write(&path).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "VICTIM");
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
        assert_eq!(Lock::read(&path).unwrap(), lock);
        // The candidates in turn: a planted link is passed over, the next name is made.
        let (made, _) = create_first([out.join("taken"), out.join("free")].into_iter()).unwrap();
        assert_eq!(made, out.join("free"));
        assert_eq!(fs::read_to_string(&victim).unwrap(), "VICTIM");
        let e = create_first([out.join("taken")].into_iter()).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    }

    /// A writer killed mid-write leaves its temporary file; the next write removes it once
    /// it is older than `STALE_TMP_AGE`, and leaves a fresh one (a writer still going) and
    /// anything not of the pattern.
    #[test]
    fn a_killed_writers_temporary_file_is_removed_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let path = dir.path().join("skills-lock.json");
        let old = std::time::SystemTime::now() - STALE_TMP_AGE - std::time::Duration::from_secs(5);
        let just_stale =
            std::time::SystemTime::now() - STALE_TMP_AGE - std::time::Duration::from_secs(1);
        for (name, when) in [
            (".skills-lock.json.tmp-99999", Some(old)),
            (".skills-lock.json.tmp-99997", Some(just_stale)),
            (".skills-lock.json.tmp-99998", None),
            (".skills-lock.json.tmp-abc", Some(old)),
            (".other.json.tmp-99999", Some(old)),
        ] {
            let f = fs::File::create(dir.path().join(name)).unwrap();
            if let Some(t) = when {
                f.set_modified(t).unwrap();
            }
        }
        fs::create_dir(dir.path().join(".skills-lock.json.tmp-12345")).unwrap();
        Lock::from_snapshot(&snapshot(dir.path()))
            .write(&path)
            .unwrap();
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                ".other.json.tmp-99999",
                ".skills-lock.json.tmp-12345",
                ".skills-lock.json.tmp-99998",
                ".skills-lock.json.tmp-abc"
            ]
        );
    }

    /// A file past the listing depth is in neither the lock nor the manifest: the skill is
    /// reported as not checkable, before and after that file changes (verify said "ok",
    /// and require_lock served the skill with the file changed).
    #[test]
    fn files_past_the_listing_limits_make_a_skill_unverifiable() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(root);
        let deep = format!("a/scripts/{}x.sh", "d/".repeat(crate::MAX_RESOURCE_DEPTH));
        write(root, &deep, "echo ok\n");
        let lock = Lock::from_snapshot(&snapshot(root));
        let unlisted = |lock: &Lock| {
            lock.verify(&snapshot(root))
                .into_iter()
                .map(|d| (d.name, d.drift))
                .collect::<Vec<_>>()
        };
        assert_eq!(unlisted(&lock), [("a".to_owned(), Drift::Unlisted)]);
        write(root, &deep, "echo EVIL\n");
        assert_eq!(unlisted(&lock), [("a".to_owned(), Drift::Unlisted)]);
        assert!(
            Drift::Unlisted
                .describe(3)
                .is_some_and(|d| d.contains("past the listing limits"))
        );
        // One level up, within the limit: listed, locked and verified.
        fs::remove_dir_all(root.join("a/scripts/d")).unwrap();
        let shallow = format!(
            "a/scripts/{}x.sh",
            "d/".repeat(crate::MAX_RESOURCE_DEPTH - 1)
        );
        write(root, &shallow, "echo ok\n");
        let lock = Lock::from_snapshot(&snapshot(root));
        assert!(lock.verify(&snapshot(root)).is_empty());
    }

    #[test]
    fn edits_additions_and_removals_are_each_reported() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(root);
        let lock = Lock::from_snapshot(&snapshot(root));
        // One byte changed, same size.
        write(root, "a/scripts/run.sh", "echo ho\n");
        // A file added to b, b's script removed.
        write(root, "b/references/new.md", "new\n");
        fs::remove_file(root.join("b/scripts/run.sh")).unwrap();
        // A new skill c.
        write(
            root,
            "c/SKILL.md",
            "---\nname: c\ndescription: D.\n---\nbody\n",
        );
        let drift = lock.verify(&snapshot(root));
        assert_eq!(
            drift,
            [
                SkillDrift {
                    name: "a".into(),
                    layer: "project".into(),
                    drift: Drift::Changed {
                        added: vec![],
                        removed: vec![],
                        changed: vec!["scripts/run.sh".into()]
                    }
                },
                SkillDrift {
                    name: "b".into(),
                    layer: "project".into(),
                    drift: Drift::Changed {
                        added: vec!["references/new.md".into()],
                        removed: vec!["scripts/run.sh".into()],
                        changed: vec![]
                    }
                },
                SkillDrift {
                    name: "c".into(),
                    layer: "project".into(),
                    drift: Drift::NotLocked
                },
            ]
        );
        // A removed skill is reported with every file removed.
        fs::remove_dir_all(root.join("a")).unwrap();
        let drift = lock.verify(&snapshot(root));
        assert!(drift.iter().any(|d| d.name == "a"
            && matches!(&d.drift, Drift::Changed { removed, .. } if removed.len() == 2)));
    }

    #[test]
    fn bad_lock_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.json");
        assert!(
            Lock::read(&p)
                .unwrap_err()
                .to_string()
                .contains("cannot read")
        );
        fs::write(&p, "{").unwrap();
        assert!(
            Lock::read(&p)
                .unwrap_err()
                .to_string()
                .contains("not a lock file")
        );
        fs::write(&p, "{\"version\": 2, \"skills\": []}").unwrap();
        assert!(
            Lock::read(&p)
                .unwrap_err()
                .to_string()
                .contains("version 2")
        );
        fs::write(&p, "{\"version\": 1, \"skills\": [{\"name\": \"a\", \"layer\": \"x\", \"digest\": \"zz\", \"files\": []}]}").unwrap();
        assert!(
            Lock::read(&p)
                .unwrap_err()
                .to_string()
                .contains("64 hex digits")
        );
        // One byte over the cap (a sparse file of NUL bytes) is refused by size.
        let f = fs::File::create(&p).unwrap();
        f.set_len(MAX_LOCK_BYTES + 1).unwrap();
        assert!(
            Lock::read(&p)
                .unwrap_err()
                .to_string()
                .contains("larger than")
        );
    }

    #[test]
    fn describe_names_at_most_max_files() {
        let d = Drift::Changed {
            added: (0..7).map(|i| format!("f{i}")).collect(),
            removed: vec![],
            changed: vec!["x".into()],
        };
        assert_eq!(
            d.describe(5).unwrap(),
            "added f0, f1, f2, f3, f4 and 2 more; changed x"
        );
        assert_eq!(Drift::Same.describe(5), None);
    }
}
