//! Remote sources (the hub): skills published by another server at
//! `/.well-known/agent-skills/index.json` (the discovery RFC's index, `skill-md` and
//! `archive` entries), taken in verified and loaded as a folder.
//!
//! [`fetch`] reads the index, downloads every listed skill's artifact (the skill file, or a
//! zip of its folder) through the engine's one HTTP client, checks each artifact against
//! the entry's `sha256:` digest and each archive entry's path ([`safe_path`]), and returns
//! the files. Nothing is written until everything is verified: a remote that lies (a wrong
//! digest, an artifact or index over its cap, an archive that unpacks past its cap, a path that leaves the skill's folder, a body
//! that never ends or comes too slowly) is refused whole with the reason, and what was
//! served before stays served. Every limit is a named constant below.
//!
//! [`sync`] materialises a fetch into a cache folder on disk: the files are written into a
//! staging folder beside it, which then takes the cache folder's place in one atomic
//! exchange (`renameat2(RENAME_EXCHANGE)` on Linux). The cache folder is an ordinary folder
//! source, so the scan, the trust policy (a remote source is `low` trust by default, as
//! every layer but builtin, user and project) and the lock apply to it as to any folder,
//! and it survives restarts: a server that cannot reach the remote serves the cache and
//! says so in readiness ([`crate::Engine::set_degraded`]).
//!
//! Entry URLs may be absolute, path-absolute or relative to the index, and must stay on the
//! index's origin (scheme, host and port): an index cannot send the engine elsewhere.

mod unzip;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use skill_format::is_kebab_name;
use skill_registry::Sha256;

use crate::outbound::{Client, Limits};
use crate::wire::remote::{RemoteEntry as Entry, RemoteIndex as Index};
use crate::wire::{ARCHIVE_TYPE, SKILL_MD_TYPE};

/// The largest index read.
pub const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;
/// The most skills one index may list.
pub const MAX_INDEX_SKILLS: usize = 4096;
/// The largest artifact (a skill file or an archive) downloaded: the largest archive this
/// engine's own index lists ([`crate::ops::discovery::MAX_ARCHIVE_BYTES`]).
pub const MAX_ARTIFACT_BYTES: u64 = crate::ops::discovery::MAX_ARCHIVE_BYTES;
/// The most files one archive may hold (as this engine's own index).
pub const MAX_ARCHIVE_FILES: usize = crate::ops::discovery::MAX_ARCHIVE_FILES;
/// The most bytes one archive may unpack to, its entries' sizes together (the
/// decompression-bomb cap; SEP-2640's most bytes of one skill's files).
pub const MAX_UNPACKED_BYTES: u64 = 16 * 1024 * 1024;
/// The most bytes one remote source may bring in, all skills together.
pub const MAX_SOURCE_BYTES: u64 = 256 * 1024 * 1024;
/// The longest relative path inside a skill, in bytes.
pub const MAX_PATH_BYTES: usize = 512;
/// How long one download (the index, or one artifact) may take, body included.
pub const FETCH_DEADLINE: Duration = Duration::from_secs(30);

/// The skill file at the root of every skill folder.
const SKILL_FILE: &str = "SKILL.md";

/// One verified skill of a remote source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSkill {
    /// Its name (a folder name: the Agent Skills name rule).
    pub name: String,
    /// Its files, relative paths (`SKILL.md` among them) and bytes.
    pub files: Vec<(String, Vec<u8>)>,
}

/// What to take from a remote index.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Only these skills (`None`: every one listed); a name not listed is an error.
    pub only: Option<Vec<String>>,
    /// The deadline of one download (default [`FETCH_DEADLINE`]).
    pub deadline: Option<Duration>,
}

/// A relative path inside a skill, checked: `/`-separated, no empty, `.` or `..` part, not
/// absolute, no backslash, no control character, at most [`MAX_PATH_BYTES`]. Returned as
/// given.
pub fn safe_path(path: &str) -> Result<String, String> {
    let bad = |why: &str| Err(format!("path `{}` {why}", path.escape_debug()));
    if path.is_empty() {
        return bad("is empty");
    }
    if path.len() > MAX_PATH_BYTES {
        return bad(&format!("is over {MAX_PATH_BYTES} bytes"));
    }
    if path.starts_with('/') || path.contains('\\') || path.contains(':') {
        return bad("is not a plain relative path (leading `/`, `\\` or `:`)");
    }
    if path.chars().any(char::is_control) {
        return bad("contains a control character");
    }
    if path
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return bad("leaves its folder or has an empty, `.` or `..` part");
    }
    Ok(path.to_owned())
}

/// The scheme and authority of a URL (`https://host:port`), or why it has none.
fn origin(url: &str) -> Result<&str, String> {
    let rest_at = if url.starts_with("https://") {
        8
    } else if url.starts_with("http://") {
        7
    } else {
        return Err(format!("`{url}` is not an http:// or https:// URL"));
    };
    let end = url[rest_at..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| rest_at + i);
    Ok(&url[..end])
}

/// An entry's URL resolved against the index's, on the index's origin.
fn resolve(index_url: &str, url: &str) -> Result<String, String> {
    let base_origin = origin(index_url)?;
    let full = if url.starts_with("http://") || url.starts_with("https://") {
        url.to_owned()
    } else if url.starts_with("//") {
        return Err(format!("entry URL `{url}` names another host"));
    } else if url.starts_with('/') {
        format!("{base_origin}{url}")
    } else {
        let dir = index_url
            .split(['?', '#'])
            .next()
            .and_then(|u| u.rsplit_once('/'))
            .map_or(index_url, |(d, _)| d);
        format!("{dir}/{url}")
    };
    if origin(&full)? != base_origin {
        return Err(format!(
            "entry URL `{url}` leaves the index's origin {base_origin}"
        ));
    }
    Ok(full)
}

/// `sha256:<64 lowercase hex>` read.
fn digest_of(entry: &Entry) -> Result<Sha256, String> {
    entry
        .digest
        .strip_prefix("sha256:")
        .and_then(Sha256::from_hex)
        .ok_or_else(|| {
            format!(
                "skill `{}`: digest `{}` is not `sha256:` and 64 hex digits",
                entry.name, entry.digest
            )
        })
}

async fn download(
    client: &Client,
    url: &str,
    max: u64,
    deadline: Duration,
) -> Result<Bytes, String> {
    let limits = Limits {
        deadline,
        max_body: max,
        public_only: false,
    };
    let answer = client
        .send(http::Request::get("/"), url, Bytes::new(), limits)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if answer.status != 200 {
        return Err(format!("{url} answered {}", answer.status));
    }
    Ok(answer.body)
}

/// Download and verify the skills an index lists (see the module docs). The error names
/// the skill and says what was wrong.
pub async fn fetch(
    client: &Client,
    index_url: &str,
    options: &FetchOptions,
) -> Result<Vec<RemoteSkill>, crate::Error> {
    fetch_inner(client, index_url, options)
        .await
        .map_err(|e| crate::Error::Remote(format!("remote source {index_url}: {e}")))
}

async fn fetch_inner(
    client: &Client,
    index_url: &str,
    options: &FetchOptions,
) -> Result<Vec<RemoteSkill>, String> {
    let deadline = options.deadline.unwrap_or(FETCH_DEADLINE);
    origin(index_url)?;
    let text = download(client, index_url, MAX_INDEX_BYTES, deadline).await?;
    let index: Index = serde_json::from_slice(&text)
        .map_err(|e| format!("the index is not a discovery index: {e}"))?;
    if index.skills.len() > MAX_INDEX_SKILLS {
        return Err(format!(
            "the index lists {} skills, over {MAX_INDEX_SKILLS}",
            index.skills.len()
        ));
    }
    let mut wanted: Vec<&Entry> = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for entry in &index.skills {
        if !is_kebab_name(&entry.name) {
            return Err(format!(
                "skill name `{}` is not a folder name (lowercase letters, digits, inner `-`)",
                entry.name.escape_debug()
            ));
        }
        if !names.insert(entry.name.as_str()) {
            return Err(format!("skill `{}` is listed twice", entry.name));
        }
        if options
            .only
            .as_ref()
            .is_none_or(|only| only.contains(&entry.name))
        {
            wanted.push(entry);
        }
    }
    if let Some(only) = &options.only {
        if let Some(missing) = only.iter().find(|n| !names.contains(n.as_str())) {
            return Err(format!("the index lists no skill `{missing}`"));
        }
    }
    let mut total = 0u64;
    let mut skills = Vec::with_capacity(wanted.len());
    for entry in wanted {
        let digest = digest_of(entry)?;
        let url = resolve(index_url, &entry.url)?;
        let bytes = download(client, &url, MAX_ARTIFACT_BYTES, deadline).await?;
        total += bytes.len() as u64;
        if total > MAX_SOURCE_BYTES {
            return Err(format!(
                "the skills together are over {MAX_SOURCE_BYTES} bytes"
            ));
        }
        if Sha256::of(&bytes) != digest {
            return Err(format!(
                "skill `{}`: {url} does not match its digest {} (got sha256:{})",
                entry.name,
                entry.digest,
                Sha256::of(&bytes).to_hex()
            ));
        }
        let files = match entry.kind.as_str() {
            SKILL_MD_TYPE => vec![(SKILL_FILE.to_owned(), bytes.to_vec())],
            ARCHIVE_TYPE => {
                let files =
                    unzip::read_zip(&bytes).map_err(|e| format!("skill `{}`: {e}", entry.name))?;
                if !files.iter().any(|(p, _)| p == SKILL_FILE) {
                    return Err(format!(
                        "skill `{}`: the archive has no {SKILL_FILE} at its root",
                        entry.name
                    ));
                }
                files
            }
            other => {
                return Err(format!(
                    "skill `{}`: artifact type `{other}` is not skill-md or archive",
                    entry.name
                ));
            }
        };
        // What is written to disk counts, not what came down (an archive's deflated
        // entries unpack to more than its bytes).
        let unpacked: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
        total = total
            .saturating_sub(bytes.len() as u64)
            .saturating_add(unpacked);
        if total > MAX_SOURCE_BYTES {
            return Err(format!(
                "the skills together are over {MAX_SOURCE_BYTES} bytes"
            ));
        }
        skills.push(RemoteSkill {
            name: entry.name.clone(),
            files,
        });
    }
    Ok(skills)
}

/// Write `skills` into `folder/<name>/...` (the folder must not exist yet).
pub fn write_skills(folder: &Path, skills: &[RemoteSkill]) -> Result<(), crate::Error> {
    let io = |p: &Path, e: std::io::Error| crate::Error::Remote(format!("{}: {e}", p.display()));
    std::fs::create_dir_all(folder).map_err(|e| io(folder, e))?;
    for skill in skills {
        let root = folder.join(&skill.name);
        for (path, bytes) in &skill.files {
            let file = root.join(path);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            std::fs::write(&file, bytes).map_err(|e| io(&file, e))?;
        }
    }
    Ok(())
}

/// Replace `folder` by `staging` whole: one atomic exchange where the platform has one
/// (Linux), then the old content is removed. Readers see the old folder or the new one,
/// never a mix.
fn swap_in(staging: &Path, folder: &Path) -> std::io::Result<()> {
    if !folder.exists() {
        return std::fs::rename(staging, folder);
    }
    #[cfg(target_os = "linux")]
    {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            staging,
            rustix::fs::CWD,
            folder,
            rustix::fs::RenameFlags::EXCHANGE,
        )?;
    }
    #[cfg(not(target_os = "linux"))]
    {
        let old = staging.with_extension("old");
        std::fs::rename(folder, &old)?;
        std::fs::rename(staging, folder)?;
        std::fs::rename(&old, staging)?;
    }
    std::fs::remove_dir_all(staging)
}

/// What one [`sync`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    /// The skills now in the cache folder.
    pub skills: Vec<String>,
    /// Whether the content differs from what the folder held before.
    pub changed: bool,
}

/// Fetch a remote source and make `folder` hold exactly its verified skills (see the module
/// docs). On any error the folder is left as it was.
pub async fn sync(
    client: &Client,
    index_url: &str,
    folder: &Path,
    options: &FetchOptions,
) -> Result<Synced, crate::Error> {
    let skills = fetch(client, index_url, options).await?;
    let names = skills.iter().map(|s| s.name.clone()).collect();
    let fresh: BTreeMap<PathBuf, &Vec<u8>> = skills
        .iter()
        .flat_map(|s| s.files.iter().map(|(p, b)| (Path::new(&s.name).join(p), b)))
        .collect();
    if read_tree(folder).is_some_and(|old| {
        old.len() == fresh.len() && old.iter().all(|(p, b)| fresh.get(p) == Some(&b))
    }) {
        return Ok(Synced {
            skills: names,
            changed: false,
        });
    }
    let staging = staging_path(folder);
    let _ = std::fs::remove_dir_all(&staging);
    let written = write_skills(&staging, &skills).and_then(|()| {
        swap_in(&staging, folder)
            .map_err(|e| crate::Error::Remote(format!("{}: {e}", folder.display())))
    });
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    written.map(|()| Synced {
        skills: names,
        changed: true,
    })
}

/// The staging folder beside a cache folder (`.<name>.staging`).
fn staging_path(folder: &Path) -> PathBuf {
    let name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    folder.with_file_name(format!(".{name}.staging"))
}

/// Every file under `folder` with its bytes, relative paths; `None` when it cannot be read.
fn read_tree(folder: &Path) -> Option<BTreeMap<PathBuf, Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![folder.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()? {
            let entry = entry.ok()?;
            let kind = entry.file_type().ok()?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else {
                let rel = entry.path().strip_prefix(folder).ok()?.to_path_buf();
                out.insert(rel, std::fs::read(entry.path()).ok()?);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
