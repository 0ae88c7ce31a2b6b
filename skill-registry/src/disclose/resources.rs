//! A skill's resources: the other files of its folder, listed and read safely.
//!
//! Only skills with a folder of their own (a `SKILL.md` folder, not an actions file or a
//! note) have resources. Reading resolves the requested relative path against the skill
//! folder, `..` and symbolic links included, and refuses anything that ends up outside it.

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::Disclosure;
use crate::error::Error;
use crate::skill::Skill;

/// The largest resource [`Skill::read_resource`] reads.
pub const MAX_RESOURCE_BYTES: u64 = 1024 * 1024;
/// The most files [`Skill::resource_listing`] lists for one skill.
pub const MAX_RESOURCE_ENTRIES: usize = 10_000;
/// How deep below the skill folder the listing goes.
pub const MAX_RESOURCE_DEPTH: usize = 8;

/// What a resource is for, by where it sits (the Agent Skills folder convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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

impl ResourceKind {
    /// Its lowercase name: `script`, `reference`, `asset` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Script => "script",
            ResourceKind::Reference => "reference",
            ResourceKind::Asset => "asset",
            ResourceKind::Other => "other",
        }
    }
}

/// One file of a skill's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The path relative to the skill folder, with `/` separators.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// What it is for.
    pub kind: ResourceKind,
    /// The SHA-256 of its bytes as the snapshot's manifest recorded them, when the listing
    /// came through a snapshot ([`Disclosure::resource_listing`],
    /// [`Snapshot::resource_listing`](crate::Snapshot::resource_listing)) and the file was
    /// hashed; `None` from [`Skill::resource_listing`], which reads no manifest.
    pub sha256: Option<crate::Sha256>,
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

/// Whether the listing skips an entry of this name, and so no door serves or runs what is
/// under it: hidden entries (`.git` and `.GIT` among them) and `node_modules` in any
/// letter case (a case-insensitive file system opens `Node_Modules` as `node_modules`).
pub(crate) fn skipped(name: &str) -> bool {
    name.starts_with('.') || name.eq_ignore_ascii_case("node_modules")
}

/// Whether a path below a skill folder passes through an entry the listing skips.
fn through_skipped(rel: &Path) -> bool {
    rel.components().any(|c| match c {
        Component::Normal(n) => skipped(&n.to_string_lossy()),
        _ => false,
    })
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

/// A skill's files as [`Skill::resource_listing`] found them, and whether the listing
/// was cut short by one of its limits (nothing is left out without saying so).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceListing {
    /// The files, sorted by path.
    pub resources: Vec<Resource>,
    /// More than [`MAX_RESOURCE_ENTRIES`] files: the rest (in walk order: sorted names,
    /// depth first) are not listed.
    pub too_many: bool,
    /// Folders deeper than [`MAX_RESOURCE_DEPTH`] levels exist and were not entered.
    pub too_deep: bool,
}

impl ResourceListing {
    /// Whether a limit left files out of the listing.
    pub fn is_truncated(&self) -> bool {
        self.too_many || self.too_deep
    }
}

/// The bounds of one listing (the public constants, smaller in unit tests).
#[derive(Debug, Clone, Copy)]
struct Limits {
    entries: usize,
    depth: usize,
}

const LIMITS: Limits = Limits {
    entries: MAX_RESOURCE_ENTRIES,
    depth: MAX_RESOURCE_DEPTH,
};

impl Disclosure<'_> {
    /// The files of a skill this caller may use, as [`Skill::resource_listing`] lists them.
    pub fn resource_listing(&self, name: &str) -> Result<ResourceListing, Error> {
        self.snapshot.resource_listing(self.skill(name)?)
    }

    /// The files of [`Disclosure::resource_listing`], without saying whether a limit cut
    /// the list short; use `resource_listing` where that matters.
    pub fn resources(&self, name: &str) -> Result<Vec<Resource>, Error> {
        self.resource_listing(name).map(|l| l.resources)
    }

    /// Read one resource of a skill this caller may use, as [`Snapshot::read_resource`]
    /// does (the manifest's files only; verified against the lock with `require_lock`).
    ///
    /// [`Snapshot::read_resource`]: crate::Snapshot::read_resource
    pub fn read_resource(&self, name: &str, relative: &str) -> Result<Vec<u8>, Error> {
        self.snapshot
            .read_resource(self.skill_for_files(name)?, relative)
    }
}

impl crate::Snapshot {
    /// A skill's files as [`Skill::resource_listing`] lists them, each with the digest this
    /// snapshot's manifest holds for it (the bytes the verified reads serve).
    ///
    /// Like [`Skill::resource_listing`], this does not ask who may see the skill.
    pub fn resource_listing(&self, skill: &Skill) -> Result<ResourceListing, Error> {
        let mut listing = skill.resource_listing()?;
        if let Some(manifest) = self.manifest_of(skill) {
            for r in &mut listing.resources {
                r.sha256 = manifest.get(&r.path).and_then(|f| f.sha256);
            }
        }
        Ok(listing)
    }
}

impl Skill {
    /// The files of the skill's folder (its `SKILL.md` excepted), sorted by path. Hidden
    /// entries, `.git` and `node_modules` are skipped; links are listed only when they
    /// resolve inside the folder; named pipes, sockets and devices are not listed. At most
    /// [`MAX_RESOURCE_ENTRIES`] files, down to [`MAX_RESOURCE_DEPTH`] levels of folders; the
    /// listing says when either limit left files out. Skills without a folder of their own
    /// have none.
    ///
    /// This does not ask who may see the skill: a host serving a model or a user goes
    /// through [`Disclosure::resource_listing`].
    pub fn resource_listing(&self) -> Result<ResourceListing, Error> {
        self.listing_within(LIMITS)
    }

    fn listing_within(&self, limits: Limits) -> Result<ResourceListing, Error> {
        let Some(root) = resource_root(self) else {
            return Ok(ResourceListing::default());
        };
        // The folder is walked as named; its canonical path, which only a link's target is
        // checked against, is resolved at the first link (most folders have none, and
        // resolving costs a system call per component of the path).
        let mut walk = Walk {
            root,
            canon_root: None,
            skill_file: &self.path,
            limits,
            out: ResourceListing::default(),
        };
        if !walk.dir(root, "", 0) {
            // A folder that cannot be listed: an error when it cannot be resolved either
            // (gone, or not reachable), as when the folder was resolved first.
            fs::canonicalize(root).map_err(|source| Error::Io {
                path: root.to_path_buf(),
                source,
            })?;
        }
        let mut out = walk.out;
        out.resources.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// Read one resource by its path relative to the skill folder. Absolute paths, NUL
    /// bytes, hidden files and paths that leave the folder (by `..` or through a link) are
    /// refused, as are folders, anything but a regular file (checked before opening, so a
    /// named pipe never blocks the read) and files over [`MAX_RESOURCE_BYTES`].
    ///
    /// Like [`Skill::resource_listing`], this does not ask who may see the skill.
    pub fn read_resource(&self, relative: &str) -> Result<Vec<u8>, Error> {
        self.read_resource_opened(relative)
            .map(|(bytes, _, _)| bytes)
    }

    /// [`Skill::read_resource`], with the path that was opened and the metadata of the
    /// open file the bytes came from, taken after they were read (what a verified read's
    /// stamp is made of: never a second lookup of the path, which may have been replaced).
    pub(crate) fn read_resource_opened(
        &self,
        relative: &str,
    ) -> Result<(Vec<u8>, PathBuf, fs::Metadata), Error> {
        let skill = self;
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
        if through_skipped(rel) {
            return Err(refuse(
                "hidden files and folders and `node_modules` are not resources",
            ));
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
        // A file in a folder the listing does not enter is not served either.
        if depth > MAX_RESOURCE_DEPTH + 1 {
            return Err(refuse(
                "it is deeper than the listing goes (MAX_RESOURCE_DEPTH folders)",
            ));
        }
        let not_found = || Error::ResourceNotFound {
            skill: skill.name.clone(),
            path: relative.to_owned(),
        };
        // A file used as a folder (`FORMS.md/x`) names nothing; a link loop or a folder
        // that cannot be searched is the request's problem, not the server's.
        let target = match fs::canonicalize(canon_root.join(rel)) {
            Ok(t) => t,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Err(not_found());
            }
            Err(_) => {
                return Err(refuse(
                    "it cannot be resolved (a link loop or a folder that cannot be read)",
                ));
            }
        };
        let Some(inner) = target
            .strip_prefix(&canon_root)
            .ok()
            .filter(|r| !r.as_os_str().is_empty())
        else {
            return Err(refuse("it resolves outside the skill folder"));
        };
        // A link to `.git/config` or into `node_modules` is no way around the rule.
        if through_skipped(inner) {
            return Err(refuse(
                "it resolves into a hidden folder or `node_modules`, which are not resources",
            ));
        }
        // Checked before opening: opening a named pipe would wait for a writer forever,
        // and a device could be endless.
        let meta = fs::metadata(&target).map_err(|source| Error::Io {
            path: root.join(rel),
            source,
        })?;
        if meta.is_dir() {
            return Err(refuse("it is a folder, not a file"));
        }
        if !meta.is_file() {
            return Err(refuse(
                "it is not a regular file (a named pipe, socket or device)",
            ));
        }
        if meta.len() > MAX_RESOURCE_BYTES {
            return Err(Error::ResourceTooLarge {
                path: relative.to_owned(),
                size: meta.len(),
                limit: MAX_RESOURCE_BYTES,
            });
        }
        let io = |source| Error::Io {
            path: root.join(rel),
            source,
        };
        let mut file = open_without_waiting(&target).map_err(io)?;
        // Checked again on what was opened: the path may have been replaced since.
        if !file.metadata().map_err(io)?.is_file() {
            return Err(refuse(
                "it is not a regular file (a named pipe, socket or device)",
            ));
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
        let after = file.metadata().map_err(|source| Error::Io {
            path: root.join(rel),
            source,
        })?;
        Ok((bytes, target, after))
    }
}

/// One listing's walk: the folder, its bounds, and what it found so far.
struct Walk<'a> {
    /// The skill folder, as the skill names it.
    root: &'a Path,
    /// Its canonical path once resolved (`Some(None)`: it could not be).
    canon_root: Option<Option<PathBuf>>,
    skill_file: &'a Path,
    limits: Limits,
    out: ResourceListing,
}

impl Walk<'_> {
    /// Whether `target` (a canonical path) lies inside the skill folder, and is not the
    /// folder itself.
    fn inside(&mut self, target: &Path) -> bool {
        let root = self.root;
        let canon = self
            .canon_root
            .get_or_insert_with(|| fs::canonicalize(root).ok());
        canon
            .as_deref()
            .is_some_and(|c| target.starts_with(c) && target != c)
    }

    /// Whether `target` (a canonical path inside the folder) lies under an entry the
    /// listing skips: a link to `.git/config` is not listed.
    fn leads_into_skipped(&self, target: &Path) -> bool {
        let canon = self.canon_root.as_ref().and_then(|c| c.as_deref());
        canon
            .and_then(|c| target.strip_prefix(c).ok().map(through_skipped))
            .unwrap_or(true)
    }

    /// List `dir`, which is `depth` folders below the skill folder (0 for the folder
    /// itself). Returns whether `dir` could be listed.
    fn dir(&mut self, dir: &Path, prefix: &str, depth: usize) -> bool {
        let Ok(entries) = fs::read_dir(dir) else {
            return false;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        let skill_name = self.skill_file.file_name();
        for entry in entries {
            if self.out.too_many {
                return true;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if skipped(&name) {
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
                    Ok(t) if self.inside(&t) && !self.leads_into_skipped(&t) => {
                        match fs::metadata(&t) {
                            // Linked folders are not entered (no loops, no double listing).
                            Ok(m) if m.is_file() => (false, m.len()),
                            _ => continue,
                        }
                    }
                    _ => continue,
                }
            } else if file_type.is_dir() {
                (true, 0)
            } else if file_type.is_file() {
                match entry.metadata() {
                    Ok(m) => (false, m.len()),
                    Err(_) => continue,
                }
            } else {
                // Named pipes, sockets and devices are not resources (they cannot be read).
                continue;
            };
            if is_dir {
                if depth + 1 > self.limits.depth {
                    self.out.too_deep = true;
                } else {
                    self.dir(&path, &rel, depth + 1);
                }
            } else if self.out.resources.len() >= self.limits.entries {
                self.out.too_many = true;
            } else {
                self.out.resources.push(Resource {
                    kind: kind_of(&rel),
                    path: rel,
                    size,
                    sha256: None,
                });
            }
        }
        true
    }
}

/// Open a file for reading without waiting: on Unix with `O_NONBLOCK`, so that opening a
/// named pipe (swapped in after the regular-file check) returns at once instead of waiting
/// for a writer. Reads of a regular file are unaffected by the flag.
pub(crate) fn open_without_waiting(path: &Path) -> std::io::Result<fs::File> {
    open_for_reading(path, false)
}

/// [`open_without_waiting`], and on Unix without following a link in the last component
/// of `path` either (`O_NOFOLLOW`; a link is refused with `ELOOP`): for a file its
/// folder's listing showed as a regular file, so that whatever took its place since is
/// refused rather than followed.
pub(crate) fn open_without_waiting_or_following(path: &Path) -> std::io::Result<fs::File> {
    open_for_reading(path, true)
}

fn open_for_reading(path: &Path, refuse_link: bool) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = OFlags::NONBLOCK | OFlags::NOCTTY;
        if refuse_link {
            flags |= OFlags::NOFOLLOW;
        }
        // The flags' bits fit an `i32` on every Unix (they are a C `int`).
        options.custom_flags(i32::try_from(flags.bits()).unwrap_or(0));
    }
    #[cfg(not(unix))]
    let _ = refuse_link;
    options.open(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::{Registry, RegistryConfig, Source};

    use crate::test_util::write;

    /// A registry over one skill `s` at `root/s`.
    fn one_skill(root: &Path) -> Registry {
        write(
            root,
            "s/SKILL.md",
            "---\nname: s\ndescription: A skill.\n---\nbody\n",
        );
        Registry::load(RegistryConfig::with_sources(vec![Source::new(
            root, "project",
        )]))
    }

    fn paths(l: &ResourceListing) -> Vec<&str> {
        l.resources.iter().map(|r| r.path.as_str()).collect()
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_refused_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let r = one_skill(dir.path());
        write(dir.path(), "s/notes.md", "notes\n");
        let fifo = dir.path().join("s/pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: `mkfifo` is not available here");
            return;
        }
        let snap = r.snapshot();
        // Run the read on its own thread so a regression fails the test instead of
        // hanging it.
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = snap.clone();
        std::thread::spawn(move || {
            let _ = tx.send(
                Disclosure::new(&reader)
                    .read_resource("s", "pipe")
                    .map_err(|e| e.to_string()),
            );
        });
        let result = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("reading a named pipe hung");
        let message = result.unwrap_err();
        assert!(message.contains("not a regular file"), "{message}");
        // It is not listed either; the other files are.
        let listing = Disclosure::new(&snap).resource_listing("s").unwrap();
        assert_eq!(paths(&listing), ["notes.md"]);
        assert!(!listing.is_truncated());
    }

    #[cfg(unix)]
    #[test]
    fn opening_a_named_pipe_does_not_wait_for_a_writer() {
        // The guard against a file swapped for a pipe after the regular-file check.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: `mkfifo` is not available here");
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(open_without_waiting(&fifo).map(|f| f.metadata().map(|m| m.is_file())));
        });
        let opened = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("opening a named pipe waited for a writer");
        assert!(matches!(opened, Ok(Ok(false))), "{opened:?}");
    }

    #[test]
    fn the_entry_limit_is_exact_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let r = one_skill(dir.path());
        let limits = Limits {
            entries: 3,
            depth: MAX_RESOURCE_DEPTH,
        };
        for f in ["a.txt", "b/c.txt", "d.txt"] {
            write(dir.path(), &format!("s/{f}"), "x");
        }
        let snap = r.snapshot();
        let skill = snap.get("s").unwrap();
        let at = skill.listing_within(limits).unwrap();
        assert_eq!(paths(&at), ["a.txt", "b/c.txt", "d.txt"]);
        assert!(!at.too_many && !at.is_truncated());
        write(dir.path(), "s/e.txt", "x");
        let over = skill.listing_within(limits).unwrap();
        assert_eq!(paths(&over), ["a.txt", "b/c.txt", "d.txt"]);
        assert!(over.too_many && !over.too_deep && over.is_truncated());
    }

    #[test]
    fn the_depth_limit_is_exact_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let r = one_skill(dir.path());
        // A file in a folder MAX_RESOURCE_DEPTH levels down is listed.
        let deepest: Vec<String> = (1..=MAX_RESOURCE_DEPTH).map(|i| format!("d{i}")).collect();
        let at = format!("{}/f.txt", deepest.join("/"));
        write(dir.path(), &format!("s/{at}"), "x");
        let snap = r.snapshot();
        let listing = Disclosure::new(&snap).resource_listing("s").unwrap();
        assert_eq!(paths(&listing), [at.as_str()]);
        assert!(!listing.is_truncated());
        // One level more is not entered, and the listing says so.
        let below = format!("{}/d{}/g.txt", deepest.join("/"), MAX_RESOURCE_DEPTH + 1);
        write(dir.path(), &format!("s/{below}"), "x");
        let listing = Disclosure::new(&snap).resource_listing("s").unwrap();
        assert_eq!(paths(&listing), [at.as_str()]);
        assert!(listing.too_deep && !listing.too_many);
        assert_eq!(
            Disclosure::new(&snap).resources("s").unwrap(),
            listing.resources
        );
    }
}
