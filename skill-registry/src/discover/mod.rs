//! Discovery: walking a source root for skill files, bounded and symlink-safe.
//!
//! Policy (documented in docs/decisions.md, "Discovery"):
//! - A folder that holds `SKILL.md` (or, failing that, a lowercase `skill.md`) is a skill
//!   folder and is not searched further; every other folder is searched, down to
//!   [`DiscoverOptions::max_depth`] folders below the root.
//! - `.git` and `node_modules` are never entered; other hidden folders (`.name`) are skipped
//!   unless [`DiscoverOptions::include_hidden`] is set.
//! - A symbolic link is followed only when its target, resolved, lies inside the resolved
//!   root; every folder and file is visited once by its canonical path, so links that loop
//!   or point at something already seen are skipped (a loop is reported).
//! - At most [`DiscoverOptions::max_folders`] folders are read per root.
//!
//! A walk yields, sorted by path, skill folders (each with the other `*.md` files directly in
//! it: an actions domain's action files, resources otherwise) or, in a notes layout, notes. The
//! walk's order is the load's order, so the snapshot does not depend on the number of cores.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};

use skill_format::{Code, Diagnostic};

mod listing;
mod read_ahead;

use listing::{Entry as Listed, Root, joined};
pub(crate) use listing::{Prefetched, Visited, Visitor};
use read_ahead::{ReadAhead, Shared, Ticket};
use std::collections::hash_map::Entry;

/// Default depth bound: folders below the root that discovery enters.
pub const DEFAULT_MAX_DEPTH: usize = 8;
/// Default bound on folders read per root.
pub const DEFAULT_MAX_FOLDERS: usize = 50_000;

/// Folder names never entered, in any letter case (a case-insensitive file system opens
/// `.GIT` as `.git`).
const ALWAYS_SKIPPED: &[&str] = &[".git", "node_modules"];

/// Whether `name` is one of [`ALWAYS_SKIPPED`], in any letter case.
fn always_skipped(name: &str) -> bool {
    ALWAYS_SKIPPED.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// How a source root is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Layout {
    /// Skill folders (`<name>/SKILL.md`) and actions domain folders, told apart by the
    /// domain index's `domain:` key.
    #[default]
    Folders,
    /// A folder of markdown notes; a note is a skill when it has `name` and `description`.
    Notes,
}

/// Bounds and switches for one walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscoverOptions {
    /// Deepest folder level entered below the root (the root is level 0).
    pub max_depth: usize,
    /// Most folders read under one root.
    pub max_folders: usize,
    /// Whether hidden folders (other than `.git` and `node_modules`) are searched.
    pub include_hidden: bool,
}

impl Default for DiscoverOptions {
    fn default() -> Self {
        DiscoverOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            max_folders: DEFAULT_MAX_FOLDERS,
            include_hidden: false,
        }
    }
}

/// Something discovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A folder holding a skill file.
    Folder {
        /// The folder.
        dir: PathBuf,
        /// Its `SKILL.md` (or `skill.md`).
        skill_file: PathBuf,
        /// Whether the file is the lowercase `skill.md`.
        lowercase: bool,
        /// The other `*.md` files directly in the folder, sorted (actions for a domain
        /// index, resources otherwise).
        markdown: Vec<PathBuf>,
    },
    /// A markdown note (notes layout).
    Note {
        /// The note file.
        path: PathBuf,
    },
}

/// What a walk found, in a deterministic order, with what it had to skip.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Skill folders or notes, sorted by path.
    pub found: Vec<Found>,
    /// Symlink, bound and access problems.
    pub diagnostics: Vec<Diagnostic>,
    /// The skill files (spelled as in [`Found::Folder::skill_file`]) that their folder's
    /// listing did not show as a regular file: links, entries of another type, and a root
    /// that is itself a file. Usually empty.
    pub(crate) unlisted: HashSet<OsString>,
    /// For each of [`Discovery::found`], in order, whether its folder, when listed, held
    /// nothing else but its skill file: its resource listing was empty then, so a load that
    /// walked the folder just now need not list it again for the manifest.
    pub(crate) found_lone: Vec<bool>,
}

impl Discovery {
    /// The skill files (as [`Found::Folder::skill_file`] spells them) whose folder held
    /// nothing else ([`Discovery::found_lone`]).
    pub(crate) fn lone_files(&self) -> impl Iterator<Item = &OsStr> {
        self.found
            .iter()
            .zip(&self.found_lone)
            .filter(|(_, lone)| **lone)
            .map(|(found, _)| found_path(found).as_os_str())
    }

    /// Whether the walk listed `skill_file` as a regular file (not a link): a load that
    /// walked just now may open it without asking its path what it is first.
    pub(crate) fn listed_regular(&self, skill_file: &Path) -> bool {
        self.unlisted.is_empty() || !self.unlisted.contains(skill_file.as_os_str())
    }
}

struct Walker<'a, 'scope, 'env> {
    opts: &'a DiscoverOptions,
    /// Listings of the folders the walk will enter, read ahead on other threads.
    ahead: ReadAhead<'scope, 'env>,
    layout: Layout,
    root_canon: PathBuf,
    /// Folders and skill files seen, by canonical path. Every path put here is spelled
    /// canonically (the canonical root joined with entry names, or a `canonicalize`
    /// result), so comparing the bytes is comparing the paths; bytes hash far faster than
    /// `Path`'s component-wise hash.
    seen_dirs: HashSet<OsString>,
    /// Whether skill folders' skill files are visited ([`discover_on`]).
    visit: bool,
    /// What was found, in walk order, with whether its folder held nothing else and what
    /// the visitor made of its skill file.
    found: Vec<(Found, bool, Option<Visited>)>,
    /// Skill files seen, by canonical path: the path each was first reached by, and
    /// whether that path is a symbolic link.
    seen_files: HashMap<OsString, (PathBuf, bool)>,
    /// Skill files found first through a link and then reached directly: their entries
    /// are dropped when the walk ends (the file is loaded from its own folder).
    linked_first: HashSet<PathBuf>,
    folders: usize,
    depth_cut: Vec<PathBuf>,
    folder_limit_hit: bool,
    out: Discovery,
}

/// Walk `root`. A root that is a file is taken as one skill file (its folder is the skill
/// folder). A missing root gives a `source-unavailable` diagnostic and nothing else.
///
/// Folder listings are read ahead on the machine's other cores; the result is the same as
/// a walk on one thread.
pub fn discover(root: &Path, layout: Layout, opts: &DiscoverOptions) -> Discovery {
    discover_on(root, layout, opts, 0, None).0
}

/// [`discover`] on at most `threads` threads (0: one per core). With `visit` (a load about
/// to parse every skill file found), each skill folder's skill file is read along with the
/// folder's listing, while the folder is open, and handed to `visit` on the thread that
/// listed it (so files are parsed as they are found, on every thread the walk uses); what
/// it made of each is returned beside [`Discovery::found`], in the same order.
pub(crate) fn discover_on(
    root: &Path,
    layout: Layout,
    opts: &DiscoverOptions,
    threads: usize,
    visit: Option<Visitor<'_>>,
) -> (Discovery, Vec<Option<Visited>>) {
    let mut out = Discovery::default();
    let meta = match fs::metadata(root) {
        Ok(m) => m,
        Err(e) => {
            out.diagnostics.push(Diagnostic::warning(
                Code::SourceUnavailable,
                root,
                format!("skill source cannot be read ({e}); it contributes no skills"),
            ));
            return (out, Vec::new());
        }
    };
    if meta.is_file() {
        let is_md = root
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md"));
        if layout == Layout::Notes && is_md {
            out.found.push(Found::Note {
                path: root.to_path_buf(),
            });
        } else {
            let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
            let lowercase = root.file_name().is_some_and(|n| n == "skill.md");
            out.unlisted.insert(root.as_os_str().to_owned());
            out.found.push(Found::Folder {
                dir,
                skill_file: root.to_path_buf(),
                lowercase,
                markdown: Vec::new(),
            });
        }
        out.found_lone.push(false);
        return (out, vec![None]);
    }
    // Without a canonical form, at least a normalised spelling (see `Walker::seen_dirs`).
    let root_canon =
        fs::canonicalize(root).unwrap_or_else(|_| root.components().collect::<PathBuf>());
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        threads
    };
    let shared = Shared::new(Root::open(root), visit);
    let run = |ahead: ReadAhead<'_, '_>| {
        let mut walker = Walker {
            opts,
            ahead,
            layout,
            visit: visit.is_some() && layout == Layout::Folders,
            found: Vec::new(),
            root_canon: root_canon.clone(),
            seen_dirs: HashSet::new(),
            seen_files: HashMap::new(),
            linked_first: HashSet::new(),
            folders: 0,
            depth_cut: Vec::new(),
            folder_limit_hit: false,
            out,
        };
        walker.seen_dirs.insert(root_canon.clone().into_os_string());
        walker.walk(root, &root_canon, 0, None);
        walker.finish(root)
    };
    if threads <= 1 {
        run(ReadAhead::new(&shared, None, 0))
    } else {
        std::thread::scope(|scope| run(ReadAhead::new(&shared, Some(scope), threads - 1)))
    }
}

impl Walker<'_, '_, '_> {
    fn finish(mut self, root: &Path) -> (Discovery, Vec<Option<Visited>>) {
        if let Some(first) = self.depth_cut.first() {
            self.out.diagnostics.push(Diagnostic::warning(
                Code::DepthLimit,
                first,
                format!(
                    "{} folder(s) deeper than {} levels below {} were not searched, this one first: move skills up or raise the depth bound",
                    self.depth_cut.len(),
                    self.opts.max_depth,
                    root.display()
                ),
            ));
        }
        if self.folder_limit_hit {
            self.out.diagnostics.push(Diagnostic::warning(
                Code::FolderLimit,
                root,
                format!(
                    "stopped after {} folders: the rest of this source was not searched; point the source at a smaller folder or raise the folder bound",
                    self.opts.max_folders
                ),
            ));
        }
        if !self.linked_first.is_empty() {
            let linked = &self.linked_first;
            self.found
                .retain(|(f, _, _)| !linked.contains(found_path(f)));
        }
        // Sorted by path (the walk found them nearly in order).
        self.found
            .sort_by(|a, b| found_path(&a.0).cmp(found_path(&b.0)));
        let mut visited = Vec::with_capacity(self.found.len());
        self.out.found.reserve(self.found.len());
        self.out.found_lone.reserve(self.found.len());
        for (found, lone, visit) in self.found {
            self.out.found.push(found);
            self.out.found_lone.push(lone);
            visited.push(visit);
        }
        (self.out, visited)
    }

    /// `canon` is `dir`'s canonical path: the root's is resolved once, and a real (not
    /// linked) subfolder's is its parent's plus its name, so no per-folder system call.
    /// `ticket` is the read-ahead listing of `dir`, when it was queued.
    fn walk(&mut self, dir: &Path, canon: &Path, depth: usize, ticket: Option<Ticket>) {
        if self.folders >= self.opts.max_folders {
            self.folder_limit_hit = true;
            return;
        }
        self.folders += 1;
        let (entries, mut visited) = match self.ahead.take(dir, ticket, self.visit) {
            Ok(listing) => (listing.entries, listing.skill_file),
            Err(e) => {
                self.out.diagnostics.push(Diagnostic::warning(
                    Code::Unreadable,
                    dir,
                    format!("folder cannot be listed ({e}); skills in it are not loaded"),
                ));
                return;
            }
        };

        if self.layout == Layout::Folders {
            let upper = entries.iter().find(|e| e.is_named("SKILL.md"));
            let lower = entries.iter().find(|e| e.is_named("skill.md"));
            if let Some(entry) = upper.or(lower) {
                let (name, path, ft) = (entry.name(), &entry.path, entry.kind);
                if !self.accept_file(path, joined(canon, &*name), ft.is_symlink()) {
                    return;
                }
                let markdown = entries
                    .iter()
                    .filter(|e| {
                        !e.is_named("SKILL.md")
                            && !e.is_named("skill.md")
                            && Path::new(&*e.name())
                                .extension()
                                .is_some_and(|x| x.eq_ignore_ascii_case("md"))
                            && (e.kind.is_file() || (e.kind.is_symlink() && e.path.is_file()))
                    })
                    .map(|e| e.path.clone())
                    .collect();
                let lone = entries.len() == 1;
                if !ft.is_file() {
                    self.out.unlisted.insert(path.as_os_str().to_owned());
                }
                let found = Found::Folder {
                    dir: dir.to_path_buf(),
                    skill_file: path.clone(),
                    lowercase: name == "skill.md",
                    markdown,
                };
                // The listing visited the same file the walk picked (`SKILL.md`, else
                // `skill.md`), if it was a regular file.
                self.found.push((found, lone, visited.take()));
                self.report_nested(dir, dir, &entries, depth);
                return;
            }
        }

        let tickets = self.read_ahead(&entries, depth, self.visit);
        // Each entry may add a folder and a skill file to the sets: room made once.
        self.seen_dirs.reserve(entries.len());
        self.seen_files.reserve(entries.len());
        for (entry, ticket) in entries.iter().zip(every(tickets)) {
            let (name, path, ft) = (entry.name(), &entry.path, entry.kind);
            let is_link = ft.is_symlink();
            let (is_dir, is_file) = if is_link {
                match fs::metadata(path) {
                    Ok(meta) => (meta.is_dir(), meta.is_file()),
                    Err(_) => {
                        self.out.diagnostics.push(Diagnostic::warning(
                            Code::SymlinkEscape,
                            path,
                            "symbolic link is broken; it is skipped",
                        ));
                        continue;
                    }
                }
            } else {
                (ft.is_dir(), ft.is_file())
            };
            if is_dir {
                if skipped(self.opts, &name) {
                    continue;
                }
                let child_canon = if is_link {
                    match self.resolve(path, true) {
                        Some(c) => c,
                        None => continue,
                    }
                } else {
                    joined(canon, &*name)
                };
                if !self.seen_dirs.insert(child_canon.as_os_str().to_owned()) {
                    if is_link && canon.starts_with(&child_canon) {
                        self.out.diagnostics.push(Diagnostic::warning(
                            Code::SymlinkLoop,
                            path,
                            "symbolic link points back to a folder above it; it is not followed",
                        ));
                    }
                    continue;
                }
                if depth + 1 > self.opts.max_depth {
                    self.depth_cut.push(path.clone());
                    continue;
                }
                self.walk(path, &child_canon, depth + 1, ticket);
                if self.folder_limit_hit {
                    return;
                }
            } else if self.layout == Layout::Notes
                && is_file
                && Path::new(&*name)
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("md"))
                && self.accept_file(path, joined(canon, &*name), is_link)
            {
                let path = path.clone();
                self.found.push((Found::Note { path }, false, None));
            }
        }
    }

    /// Look below a skill folder for further skill files and report each: they are
    /// resources of the outer skill, never skills of their own. Same bounds as the walk.
    fn report_nested(&mut self, skill_dir: &Path, dir: &Path, entries: &[Listed], depth: usize) {
        for Listed { path, kind, .. } in entries
            .iter()
            .filter(|e| e.is_named("SKILL.md") || e.is_named("skill.md"))
        {
            if dir != skill_dir && kind.is_file() {
                self.out.diagnostics.push(Diagnostic::warning(
                    Code::NestedSkill,
                    path,
                    format!(
                        "this skill file sits inside the skill folder {}; it is one of that skill's resources, not a skill: move its folder out to load it",
                        skill_dir.display()
                    ),
                ));
            }
        }
        // What lies below a skill folder is never loaded: no skill file is read.
        let tickets = self.read_ahead(entries, depth, false);
        for (entry, ticket) in entries.iter().zip(every(tickets)) {
            let (path, ft) = (&entry.path, entry.kind);
            if skipped(self.opts, &entry.name())
                || depth + 1 > self.opts.max_depth
                || self.folders >= self.opts.max_folders
            {
                continue;
            }
            // Links are not followed here: a skill's own resources are listed elsewhere.
            if !ft.is_dir() {
                continue;
            }
            self.folders += 1;
            let Ok(sub) = self.ahead.take(path, ticket, false) else {
                continue;
            };
            self.report_nested(skill_dir, path, &sub.entries, depth + 1);
        }
    }

    /// Queue for reading ahead the listings of the real (not linked) folders among
    /// `entries` (of a folder at `depth`) that the walk may enter, within the folder bound,
    /// with their skill files visited as `visit` says. One ticket per entry, in
    /// order, or none at all when none is queued ([`every`] pads them).
    fn read_ahead(&mut self, entries: &[Listed], depth: usize, visit: bool) -> Vec<Option<Ticket>> {
        let (opts, folders) = (self.opts, self.folders);
        self.ahead.queue(entries, visit, |entry, pending| {
            entry.kind.is_dir()
                && !skipped(opts, &entry.name())
                && depth < opts.max_depth
                && folders + pending < opts.max_folders
        })
    }

    /// The canonical path of an entry, or `None` (with a diagnostic) when a link leaves the
    /// root or leads into a folder the walk does not enter (`.git`, `node_modules`, and
    /// hidden folders unless they are included): a link is no way around the rule. For a
    /// folder (`is_dir`) every folder from the root down to it is checked; for a file,
    /// the folders it is in.
    fn resolve(&mut self, path: &Path, is_dir: bool) -> Option<PathBuf> {
        let canon = match fs::canonicalize(path) {
            Ok(c) => c,
            Err(e) => {
                // A link that loops or leads nowhere: said, never skipped in silence.
                let looping = e.raw_os_error() == Some(ELOOP);
                self.out.diagnostics.push(if looping {
                    Diagnostic::error(
                        Code::SymlinkLoop,
                        path,
                        "symbolic link loops back on itself; nothing is read through it: point it at a file",
                    )
                } else {
                    Diagnostic::error(
                        Code::Unreadable,
                        path,
                        format!("symbolic link is broken ({e}); nothing is read through it: point it at a file or remove it"),
                    )
                });
                return None;
            }
        };
        if !canon.starts_with(&self.root_canon) {
            self.out.diagnostics.push(Diagnostic::warning(
                Code::SymlinkEscape,
                path,
                format!(
                    "symbolic link leads outside the source root (to {}); it is not followed",
                    canon.display()
                ),
            ));
            return None;
        }
        let below = canon
            .strip_prefix(&self.root_canon)
            .unwrap_or(Path::new(""));
        let mut folders = below.components();
        if !is_dir {
            folders.next_back();
        }
        let skipped_folder = folders
            .map(|c| c.as_os_str().to_string_lossy())
            .find(|name| skipped(self.opts, name));
        if let Some(folder) = skipped_folder {
            self.out.diagnostics.push(Diagnostic::warning(
                Code::SymlinkEscape,
                path,
                format!(
                    "symbolic link leads into `{folder}` (to {}), a folder discovery does not enter; it is not followed{}",
                    canon.display(),
                    if always_skipped(&folder) {
                        ""
                    } else {
                        ": include hidden folders for this source to load it"
                    }
                ),
            ));
            return None;
        }
        Some(canon)
    }

    /// Whether a skill file is new (by canonical path) and inside the root.
    /// `canon` is the file's canonical path when it is not a link.
    ///
    /// A file reached twice is loaded once, and the second path gets a `linked-twice`
    /// warning; when the first path was a link and the second is the file itself, the file
    /// is loaded from its own folder instead, and the link gets the warning.
    fn accept_file(&mut self, path: &Path, canon: PathBuf, is_link: bool) -> bool {
        let canon = if is_link {
            match self.resolve(path, false) {
                Some(c) => c,
                None => return false,
            }
        } else {
            canon
        };
        match self.seen_files.entry(canon.into_os_string()) {
            Entry::Vacant(e) => {
                e.insert((path.to_path_buf(), is_link));
                true
            }
            Entry::Occupied(mut e) => {
                let (first, first_is_link) = e.get().clone();
                if first_is_link && !is_link {
                    e.insert((path.to_path_buf(), false));
                    self.out.diagnostics.push(Diagnostic::warning(
                        Code::LinkedTwice,
                        &first,
                        format!(
                            "symbolic link to {}, which is loaded from its own folder; the link is skipped: remove it, or make it a copy if both skills are meant",
                            path.display()
                        ),
                    ));
                    self.linked_first.insert(first);
                    true
                } else {
                    self.out.diagnostics.push(Diagnostic::warning(
                        Code::LinkedTwice,
                        path,
                        format!(
                            "same file as {} (through a symbolic link), which is loaded already; it is loaded once, from there: remove the link, or make it a copy if both skills are meant",
                            first.display()
                        ),
                    ));
                    false
                }
            }
        }
    }
}

/// One ticket per entry: those queued, then none ([`ReadAhead::queue`] gives none at all
/// when it queues nothing).
fn every(tickets: Vec<Option<Ticket>>) -> impl Iterator<Item = Option<Ticket>> {
    tickets.into_iter().chain(std::iter::repeat(None))
}

/// Whether a folder named `name` is never entered.
fn skipped(opts: &DiscoverOptions, name: &str) -> bool {
    always_skipped(name) || (name.starts_with('.') && !opts.include_hidden)
}

#[cfg(test)]
mod skipped_tests {
    use super::*;

    #[test]
    fn git_and_node_modules_are_skipped_in_any_letter_case() {
        let opts = DiscoverOptions {
            include_hidden: true,
            ..DiscoverOptions::default()
        };
        for name in [".git", ".GIT", ".Git", "node_modules", "Node_Modules"] {
            assert!(skipped(&opts, name), "{name}");
        }
        for name in [".curated", "git", "node-modules", "modules"] {
            assert!(!skipped(&opts, name), "{name}");
        }
    }
}

/// The `errno` of a path whose symbolic links loop (Linux and the BSDs differ).
#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
const ELOOP: i32 = 62;
#[cfg(not(any(target_os = "macos", target_os = "ios", target_os = "freebsd")))]
const ELOOP: i32 = 40;

fn found_path(f: &Found) -> &Path {
    match f {
        Found::Folder { skill_file, .. } => skill_file,
        Found::Note { path } => path,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod read_ahead_tests {
    use super::*;
    use crate::test_util::write;

    /// Everything a walk reports, in a form two walks can be compared by.
    fn summary(d: &Discovery) -> (String, String, Vec<OsString>) {
        let mut lone: Vec<OsString> = d.lone_files().map(OsStr::to_owned).collect();
        lone.sort();
        (
            format!("{:?}", d.found),
            format!("{:?}", d.diagnostics),
            lone,
        )
    }

    /// A visitor that keeps the bytes it was given, with the path and lone flag.
    fn keep(dir: &Path, file: &Path, read: Prefetched<'_>, lone: bool) -> Visited {
        assert_eq!(file.parent(), Some(dir));
        Box::new((file.to_path_buf(), read.bytes.to_vec(), lone))
    }

    /// A walk with a visitor visited each skill file it found listed as a regular file, and
    /// only those, with the bytes `fs::read` reads and the folder's lone flag, in the order
    /// of what it found.
    fn check_visits(d: &Discovery, visited: Vec<Option<Visited>>, visit: bool) {
        assert_eq!(visited.len(), d.found.len());
        assert_eq!(d.found_lone.len(), d.found.len());
        for ((found, got), lone) in d.found.iter().zip(visited).zip(&d.found_lone) {
            let want = match found {
                Found::Folder { skill_file, .. } if visit && d.listed_regular(skill_file) => {
                    Some((skill_file.clone(), fs::read(skill_file).unwrap(), *lone))
                }
                _ => None,
            };
            let got = got.map(|v| *v.downcast::<(PathBuf, Vec<u8>, bool)>().unwrap());
            assert_eq!(got, want, "{found:?}");
        }
    }

    /// A tree with more folders than start a helper: plain and lone skill folders, skill
    /// folders with subfolders (one holding a nested skill file), folders of folders, a
    /// hidden and an always-skipped folder, and (on Unix) links to a folder inside the root,
    /// to one outside it and back up to an ancestor.
    fn tree(root: &Path, outside: &Path) {
        for i in 0..3 * read_ahead::START_AFTER {
            let group = i % 2;
            let skill = format!("g{group}/s{i:03}/SKILL.md");
            write(root, &skill, &skill);
            if i % 3 == 0 {
                write(root, &format!("g{group}/s{i:03}/references/a.md"), "x");
                write(root, &format!("g{group}/s{i:03}/scripts/deep/b.sh"), "x");
            }
            if i % 7 == 0 {
                write(root, &format!("g{group}/s{i:03}/extra.md"), "x");
                write(root, &format!("g{group}/s{i:03}/inner/SKILL.md"), "x");
            }
        }
        write(root, "g1/.hidden/h/SKILL.md", "x");
        write(root, "g2/node_modules/n/SKILL.md", "x");
        write(root, "g3/a/b/c/d/e/SKILL.md", "x");
        write(outside, "o/SKILL.md", "x");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("g0"), root.join("g9-link")).unwrap();
            std::os::unix::fs::symlink(outside, root.join("g8-out")).unwrap();
            std::os::unix::fs::symlink(root.join("g3"), root.join("g3/a/up")).unwrap();
        }
    }

    /// Reading ahead on other threads changes nothing a walk reports: the same skills,
    /// diagnostics and lone folders as one thread, under every folder and depth bound
    /// (the bounds decide which read-ahead listings are wasted, so their edges are where
    /// the two could differ).
    #[test]
    fn read_ahead_reports_what_one_thread_reports() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        tree(&root, outside.path());
        let (one, _) = discover_on(&root, Layout::Folders, &DiscoverOptions::default(), 1, None);
        assert!(
            one.found.len() > 3 * read_ahead::START_AFTER,
            "{}",
            one.found.len()
        );
        let mut bounds = vec![DiscoverOptions::default()];
        for max_folders in [1, 2, 5, 33, 34, 100, 250, 251, 252] {
            bounds.push(DiscoverOptions {
                max_folders,
                ..DiscoverOptions::default()
            });
        }
        for max_depth in [0, 1, 2, 3, 5] {
            bounds.push(DiscoverOptions {
                max_depth,
                include_hidden: true,
                ..DiscoverOptions::default()
            });
        }
        for opts in &bounds {
            for layout in [Layout::Folders, Layout::Notes] {
                let (alone, visited) = discover_on(&root, layout, opts, 1, None);
                check_visits(&alone, visited, false);
                let alone = summary(&alone);
                let visitor: Visitor<'_> = &keep;
                for threads in [1, 2, 3, 8] {
                    for visit in [None, Some(visitor)] {
                        let (ahead, visited) = discover_on(&root, layout, opts, threads, visit);
                        check_visits(
                            &ahead,
                            visited,
                            visit.is_some() && layout == Layout::Folders,
                        );
                        let ahead = summary(&ahead);
                        assert_eq!(alone, ahead, "{opts:?} {layout:?} {threads} threads");
                    }
                }
            }
        }
    }

    /// The folder bound holds with helpers reading ahead: exactly `max_folders` folders are
    /// read, and the cut is reported.
    #[test]
    fn folder_bound_edge_with_read_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let n = 2 * read_ahead::START_AFTER;
        for i in 0..n {
            write(dir.path(), &format!("s{i:03}/SKILL.md"), "x");
        }
        // The root and every skill folder.
        let exact = DiscoverOptions {
            max_folders: n + 1,
            ..DiscoverOptions::default()
        };
        let (d, _) = discover_on(dir.path(), Layout::Folders, &exact, 4, Some(&keep));
        assert_eq!(d.found.len(), n);
        assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
        let short = DiscoverOptions {
            max_folders: n,
            ..DiscoverOptions::default()
        };
        let (d, _) = discover_on(dir.path(), Layout::Folders, &short, 4, Some(&keep));
        assert_eq!(d.found.len(), n - 1);
        assert_eq!(d.diagnostics.len(), 1);
        assert_eq!(d.diagnostics[0].code, Code::FolderLimit);
    }
}
