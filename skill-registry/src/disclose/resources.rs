//! A skill's resources: the other files of its folder, listed and read safely.
//!
//! Only skills with a folder of their own (a `SKILL.md` folder, not an actions file or a
//! note) have resources. Reading resolves the requested relative path against the skill
//! folder, `..` and symbolic links included, and refuses anything that ends up outside it.

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::Disclosure;
use crate::error::Error;
use crate::snapshot::Skill;

/// The largest resource [`Disclosure::read_resource`] reads.
pub const MAX_RESOURCE_BYTES: u64 = 1024 * 1024;
/// The most entries [`Disclosure::resources`] lists for one skill.
pub const MAX_RESOURCE_ENTRIES: usize = 10_000;
/// How deep below the skill folder the listing goes.
pub const MAX_RESOURCE_DEPTH: usize = 8;

/// What a resource is for, by where it sits (the Agent Skills folder convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceKind {
    /// Under `scripts/`.
    Script,
    /// Under `references/`, or a markdown file elsewhere in the folder.
    Reference,
    /// Under `assets/`.
    Asset,
    /// Anything else.
    Other,
}

/// One file of a skill's folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resource {
    /// The path relative to the skill folder, with `/` separators.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// What it is for.
    pub kind: ResourceKind,
}

/// The folder whose files are a skill's resources, if it has one.
fn resource_root(skill: &Skill) -> Option<&Path> {
    if skill.domain.is_some() || skill.kind != skill_format::FileKind::Skill {
        return None;
    }
    let is_folder_skill = skill
        .path
        .file_name()
        .is_some_and(|n| n == "SKILL.md" || n == "skill.md");
    is_folder_skill.then_some(skill.dir.as_path())
}

fn kind_of(rel: &str) -> ResourceKind {
    let first = rel.split('/').next().unwrap_or("");
    match first {
        "scripts" => ResourceKind::Script,
        "references" => ResourceKind::Reference,
        "assets" => ResourceKind::Asset,
        _ if rel.to_ascii_lowercase().ends_with(".md") => ResourceKind::Reference,
        _ => ResourceKind::Other,
    }
}

impl Disclosure<'_> {
    /// The files of a skill's folder (its `SKILL.md` excepted), sorted by path. Hidden
    /// entries, `.git` and `node_modules` are skipped; links are listed only when they
    /// resolve inside the folder. At most [`MAX_RESOURCE_ENTRIES`], down to
    /// [`MAX_RESOURCE_DEPTH`] levels.
    pub fn resources(&self, name: &str) -> Result<Vec<Resource>, Error> {
        let skill = self.skill(name)?;
        let Some(root) = resource_root(skill) else {
            return Ok(Vec::new());
        };
        let canon_root = fs::canonicalize(root).map_err(|source| Error::Io {
            path: root.to_path_buf(),
            source,
        })?;
        let mut out = Vec::new();
        walk(&canon_root, &canon_root, "", 0, &skill.path, &mut out);
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// Read one resource by its path relative to the skill folder. Absolute paths, NUL
    /// bytes, and paths that leave the folder (by `..` or through a link) are refused, as
    /// are folders and files over [`MAX_RESOURCE_BYTES`].
    pub fn read_resource(&self, name: &str, relative: &str) -> Result<Vec<u8>, Error> {
        let skill = self.skill(name)?;
        let refuse = |reason| Error::ResourcePath {
            path: relative.to_owned(),
            reason,
        };
        if relative.contains('\0') {
            return Err(refuse("it contains a NUL byte"));
        }
        if relative.trim().is_empty() {
            return Err(refuse("it is empty"));
        }
        let rel = Path::new(relative);
        if rel.is_absolute() || rel.has_root() || relative.starts_with('\\') {
            return Err(refuse(
                "it is absolute; give a path relative to the skill folder",
            ));
        }
        if rel
            .components()
            .any(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
        {
            return Err(refuse(
                "it is absolute; give a path relative to the skill folder",
            ));
        }
        let Some(root) = resource_root(skill) else {
            return Err(Error::ResourceNotFound {
                skill: skill.name.clone(),
                path: relative.to_owned(),
            });
        };
        let canon_root = fs::canonicalize(root).map_err(|source| Error::Io {
            path: root.to_path_buf(),
            source,
        })?;
        let hidden = rel.components().any(|c| match c {
            Component::Normal(n) => n.to_string_lossy().starts_with('.'),
            _ => false,
        });
        if hidden {
            return Err(refuse("hidden files are not resources"));
        }
        // Lexically first: `a/../../x` is refused even when it happens to exist.
        let mut depth: usize = 0;
        for c in rel.components() {
            match c {
                Component::ParentDir if depth == 0 => {
                    return Err(refuse("it leaves the skill folder"));
                }
                Component::ParentDir => depth -= 1,
                Component::Normal(_) => depth += 1,
                _ => {}
            }
        }
        let not_found = || Error::ResourceNotFound {
            skill: skill.name.clone(),
            path: relative.to_owned(),
        };
        let target = match fs::canonicalize(canon_root.join(rel)) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found()),
            Err(source) => {
                return Err(Error::Io {
                    path: root.join(rel),
                    source,
                });
            }
        };
        if !target.starts_with(&canon_root) || target == canon_root {
            return Err(refuse("it resolves outside the skill folder"));
        }
        let mut file = fs::File::open(&target).map_err(|source| Error::Io {
            path: root.join(rel),
            source,
        })?;
        let meta = file.metadata().map_err(|source| Error::Io {
            path: root.join(rel),
            source,
        })?;
        if !meta.is_file() {
            return Err(refuse("it is a folder, not a file"));
        }
        if meta.len() > MAX_RESOURCE_BYTES {
            return Err(Error::ResourceTooLarge {
                path: relative.to_owned(),
                size: meta.len(),
                limit: MAX_RESOURCE_BYTES,
            });
        }
        // Read at most one byte past the cap, in case the file grew since `metadata`.
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.by_ref()
            .take(MAX_RESOURCE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| Error::Io {
                path: root.join(rel),
                source,
            })?;
        if bytes.len() as u64 > MAX_RESOURCE_BYTES {
            return Err(Error::ResourceTooLarge {
                path: relative.to_owned(),
                size: bytes.len() as u64,
                limit: MAX_RESOURCE_BYTES,
            });
        }
        Ok(bytes)
    }
}

fn walk(
    root: &Path,
    dir: &Path,
    prefix: &str,
    depth: usize,
    skill_file: &Path,
    out: &mut Vec<Resource>,
) {
    if depth > MAX_RESOURCE_DEPTH || out.len() >= MAX_RESOURCE_ENTRIES {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    let skill_name = skill_file.file_name();
    for entry in entries {
        if out.len() >= MAX_RESOURCE_ENTRIES {
            return;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "node_modules" {
            continue;
        }
        if depth == 0 && Some(entry.file_name().as_os_str()) == skill_name {
            continue;
        }
        let rel = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let path: PathBuf = entry.path();
        let (is_dir, size) = if file_type.is_symlink() {
            match fs::canonicalize(&path) {
                Ok(t) if t.starts_with(root) && t != root => match fs::metadata(&t) {
                    // Linked folders are not entered (no loops, no double listing).
                    Ok(m) if m.is_file() => (false, m.len()),
                    _ => continue,
                },
                _ => continue,
            }
        } else if file_type.is_dir() {
            (true, 0)
        } else {
            match entry.metadata() {
                Ok(m) => (false, m.len()),
                Err(_) => continue,
            }
        };
        if is_dir {
            walk(root, &path, &rel, depth + 1, skill_file, out);
        } else {
            out.push(Resource {
                kind: kind_of(&rel),
                path: rel,
                size,
            });
        }
    }
}
