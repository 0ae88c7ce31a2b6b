//! One folder's listing: its entries (name, path, type without following links), sorted by
//! name, and for a skill folder a load is about to parse, its skill file read while the
//! folder is open.
//!
//! On Unix the folder is read through `rustix`: glibc's `opendir`, which
//! `std::fs::read_dir` uses, first asks the open folder for its block size, one more system
//! call per folder. On Linux the entries are read with `getdents64` into a buffer on the
//! stack, with no allocation per entry, and a folder under the walk's root is opened
//! relative to the root, held open ([`Root`]), so that the root's own path is not resolved
//! again for every folder. As with `std::fs::read_dir`, an error partway through ends the
//! listing with the entries read so far.

use std::cell::Cell;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A folder entry: its path, and its type without following links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    /// The folder's path joined with the entry's name.
    pub(super) path: PathBuf,
    /// Where the name starts in `path`'s bytes.
    name_at: usize,
    /// What it is, links not followed.
    pub(super) kind: EntryType,
}

/// `dir.join(name)`, with room for both (and a separator) made at once: `Path::join`
/// copies `dir` at its own length and then grows the copy, a reallocation for every path a
/// walk makes. `PathBuf::push` onto an empty path is that copy, so the result is the same.
pub(super) fn joined(dir: &Path, name: impl AsRef<Path>) -> PathBuf {
    let name = name.as_ref();
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.as_os_str().len());
    path.push(dir);
    path.push(name);
    path
}

impl Entry {
    fn new(dir: &Path, name: &std::ffi::OsStr, kind: EntryType) -> Self {
        let path = joined(dir, name);
        let name_at = path.as_os_str().len().saturating_sub(name.len());
        Entry {
            path,
            name_at,
            kind,
        }
    }

    /// Its name's bytes.
    fn name_bytes(&self) -> &[u8] {
        let bytes = self.path.as_os_str().as_encoded_bytes();
        bytes.get(self.name_at..).unwrap_or_default()
    }

    /// Whether its name is `name` (as decoded: the bytes are those of `name`, since a name
    /// that is not UTF-8 decodes with replacement characters no `name` here holds).
    pub(super) fn is_named(&self, name: &str) -> bool {
        self.name_bytes() == name.as_bytes()
    }

    /// Its name (lossily decoded; borrowed when it is UTF-8, as names mostly are).
    pub(super) fn name(&self) -> std::borrow::Cow<'_, str> {
        let bytes = self.name_bytes();
        match std::str::from_utf8(bytes) {
            Ok(name) => std::borrow::Cow::Borrowed(name),
            Err(_) => String::from_utf8_lossy(bytes),
        }
    }
}

/// Sort entries by name as decoded ([`Entry::name`]): by their bytes, which is the same
/// order when both are UTF-8 (most names; no decoding per comparison then).
fn sort_by_name(entries: &mut [Entry]) {
    // One folder's names are distinct, so when all are ASCII their bytes order them with no
    // ties: an unstable sort (no scratch buffer) gives the stable sort's order.
    if entries.iter().all(|e| e.name_bytes().is_ascii()) {
        entries.sort_unstable_by(|a, b| a.name_bytes().cmp(b.name_bytes()));
        return;
    }
    entries.sort_by(|a, b| {
        let (x, y) = (a.name_bytes(), b.name_bytes());
        if x.is_ascii() && y.is_ascii() {
            x.cmp(y)
        } else {
            a.name().cmp(&b.name())
        }
    });
}

/// What a folder entry is, links not followed, as the listing tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EntryType {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link.
    Symlink,
    /// Anything else: a named pipe, a socket, a device.
    Other,
}

impl EntryType {
    pub(super) fn is_file(self) -> bool {
        self == EntryType::File
    }

    pub(super) fn is_dir(self) -> bool {
        self == EntryType::Dir
    }

    pub(super) fn is_symlink(self) -> bool {
        self == EntryType::Symlink
    }

    fn of(ft: fs::FileType) -> Self {
        if ft.is_symlink() {
            EntryType::Symlink
        } else if ft.is_dir() {
            EntryType::Dir
        } else if ft.is_file() {
            EntryType::File
        } else {
            EntryType::Other
        }
    }
}

/// A folder's listing.
pub(super) struct Listing {
    /// Its entries, sorted by name.
    pub(super) entries: Vec<Entry>,
    /// What the walk's [`Visitor`] made of its skill file (`SKILL.md`, else `skill.md`),
    /// when asked for and the file is listed as a regular file and read whole.
    pub(super) skill_file: Option<Visited>,
}

/// What a [`Visitor`] makes of a skill file (a load: the file parsed, hashed and scanned),
/// kept as is for the one who asked for the walk.
pub(crate) type Visited = Box<dyn std::any::Any + Send>;

/// Called, on whichever thread lists a skill folder, with the folder, its skill file's
/// path, the file as read with the listing, and whether the folder held nothing else.
pub(crate) type Visitor<'v> = &'v (dyn Fn(&Path, &Path, Prefetched<'_>, bool) -> Visited + Sync);

/// A skill file read along with its folder's listing, as a load reads a file its folder's
/// listing showed as a regular file (`read::read_open_into`): its metadata as read and
/// its bytes (in a buffer the listing thread reuses).
pub(crate) struct Prefetched<'b> {
    /// The metadata the bytes were read under.
    pub(crate) meta: fs::Metadata,
    /// The whole file.
    pub(crate) bytes: &'b [u8],
}

impl std::fmt::Debug for Prefetched<'_> {
    /// The size only (the bytes are the file's).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prefetched")
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// The bytes of the buffer that `getdents64` fills (a few hundred entries per call).
#[cfg(any(target_os = "linux", target_os = "android"))]
const LISTING_BUFFER_BYTES: usize = 8 * 1024;

/// The root of a walk, held open: folders under it are opened relative to it.
#[cfg_attr(not(unix), allow(dead_code))]
pub(super) struct Root {
    #[cfg(unix)]
    fd: rustix::fd::OwnedFd,
    /// The root's path as the walk spells it (every path of the walk starts with it).
    path: PathBuf,
}

impl Root {
    /// The root at `path`, opened as a folder; `None` when it cannot be (then every folder
    /// is opened by its own path).
    pub(super) fn open(path: &Path) -> Option<Root> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let fd = rustix::fs::open(path, flags, Mode::empty()).ok()?;
            Some(Root {
                fd,
                path: path.to_path_buf(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            None
        }
    }

    /// `dir` relative to the root, when the walk's spelling of it starts with the root's
    /// (and it is not the root itself).
    #[cfg(unix)]
    fn relative<'d>(&self, dir: &'d Path) -> Option<&'d std::ffi::OsStr> {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let rest = dir
            .as_os_str()
            .as_bytes()
            .strip_prefix(self.path.as_os_str().as_bytes())?;
        // The root's spelling ends at a separator, or is followed by one.
        let ends_at_separator = self.path.as_os_str().as_bytes().ends_with(b"/");
        if !ends_at_separator && !rest.starts_with(b"/") {
            return None;
        }
        let start = rest.iter().position(|&b| b != b'/')?;
        rest.get(start..).map(OsStr::from_bytes)
    }
}

/// List `dir` (opened relative to `root` when it lies under it); with `visit`, also read
/// its skill file when the listing shows one as a regular file, and hand it to `visit` (a
/// failure to read it, or a panic in `visit`, leaves it unvisited: the load reads it again
/// and reports why).
#[cfg(unix)]
pub(super) fn list_dir(
    dir: &Path,
    root: Option<&Root>,
    visit: Option<Visitor<'_>>,
) -> io::Result<Listing> {
    use rustix::fs::{FileType, Mode, OFlags};
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = match root.and_then(|r| Some((r, r.relative(dir)?))) {
        Some((root, rel)) => rustix::fs::openat(&root.fd, rel, flags, Mode::empty())?,
        None => rustix::fs::open(dir, flags, Mode::empty())?,
    };
    let mut entries = Vec::new();
    let mut add = |name: &[u8], listed: FileType| {
        if name == b"." || name == b".." {
            return;
        }
        let entry = Entry::new(dir, OsStr::from_bytes(name), EntryType::Other);
        if let Some(kind) = entry_type(listed, &entry.path) {
            entries.push(Entry { kind, ..entry });
        }
    };
    let fd = read_entries(fd, &mut add)?;
    sort_by_name(&mut entries);
    let lone = entries.len() == 1;
    let skill_file = match (fd, visit) {
        (Some(fd), Some(visit)) => read_skill_file_at(&fd, &entries, |path, read| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                visit(dir, path, read, lone)
            }))
            .ok()
        })
        .flatten(),
        _ => None,
    };
    Ok(Listing {
        entries,
        skill_file,
    })
}

/// Give `add` every entry of the open folder `fd`; returns the descriptor when it is still
/// open for reading the skill file.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn read_entries(
    fd: rustix::fd::OwnedFd,
    add: &mut dyn FnMut(&[u8], rustix::fs::FileType),
) -> io::Result<Option<rustix::fd::OwnedFd>> {
    use std::mem::MaybeUninit;
    let mut buf = [MaybeUninit::<u8>::uninit(); LISTING_BUFFER_BYTES];
    let mut listing = rustix::fs::RawDir::new(&fd, &mut buf);
    while let Some(Ok(entry)) = listing.next() {
        add(entry.file_name().to_bytes(), entry.file_type());
    }
    Ok(Some(fd))
}

/// Give `add` every entry of the open folder `fd` (which the listing keeps).
#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
fn read_entries(
    fd: rustix::fd::OwnedFd,
    add: &mut dyn FnMut(&[u8], rustix::fs::FileType),
) -> io::Result<Option<rustix::fd::OwnedFd>> {
    let mut listing = rustix::fs::Dir::new(fd)?;
    while let Some(Ok(entry)) = listing.read() {
        add(entry.file_name().to_bytes(), entry.file_type());
    }
    Ok(None)
}

/// The skill file of the folder open as `fd` with these entries, read whole and handed to
/// `then`: `SKILL.md`, else `skill.md` (as the walk picks it), when it is listed as a
/// regular file; opened without waiting and without following a link, as the load opens
/// such a file. It is read into this thread's buffer, kept for the next file.
#[cfg(unix)]
fn read_skill_file_at<T>(
    fd: &rustix::fd::OwnedFd,
    entries: &[Entry],
    then: impl FnOnce(&Path, Prefetched<'_>) -> T,
) -> Option<T> {
    use rustix::fs::{Mode, OFlags};
    let named = |want: &str| entries.iter().find(|e| e.is_named(want));
    let entry = named("SKILL.md").or_else(|| named("skill.md"))?;
    if !entry.kind.is_file() {
        return None;
    }
    let flags =
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let name = entry.name();
    let file = fs::File::from(rustix::fs::openat(fd, &*name, flags, Mode::empty()).ok()?);
    let mut buf = BUFFER.with(Cell::take);
    let out = crate::read::read_open_into(&file, &mut buf)
        .map(|meta| then(&entry.path, Prefetched { meta, bytes: &buf }));
    if buf.capacity() <= KEPT_BUFFER_BYTES {
        BUFFER.with(|b| b.set(buf));
    }
    out
}

thread_local! {
    /// The buffer skill files are read into on this thread.
    static BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The largest read buffer a thread keeps for the next file (a larger one, for a rare
/// large file, is freed).
const KEPT_BUFFER_BYTES: usize = 256 * 1024;

/// The type a listing gives an entry; when it gives none (some file systems never do), the
/// entry at `path` is asked, without following links. `None`: it cannot be (it is gone).
#[cfg(unix)]
fn entry_type(listed: rustix::fs::FileType, path: &Path) -> Option<EntryType> {
    use rustix::fs::FileType;
    Some(match listed {
        FileType::RegularFile => EntryType::File,
        FileType::Directory => EntryType::Dir,
        FileType::Symlink => EntryType::Symlink,
        FileType::Unknown => EntryType::of(fs::symlink_metadata(path).ok()?.file_type()),
        _ => EntryType::Other,
    })
}

/// A folder's entries as (name, path, type without following links), sorted by name.
#[cfg(not(unix))]
pub(super) fn list_dir(
    dir: &Path,
    root: Option<&Root>,
    visit: Option<Visitor<'_>>,
) -> io::Result<Listing> {
    let _ = (root, visit);
    let mut entries: Vec<Entry> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let ft = e.file_type().ok()?;
            Some(Entry::new(dir, &e.file_name(), EntryType::of(ft)))
        })
        .collect();
    sort_by_name(&mut entries);
    Ok(Listing {
        entries,
        skill_file: None,
    })
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use rustix::fs::FileType;

    /// The sort of an all-ASCII listing (unstable) gives the order of the stable sort by
    /// decoded name it stands in for; a listing with other names takes that sort itself.
    /// An entry's path is its folder joined with its name, as `Path::join` spells it.
    #[test]
    fn listings_sort_as_by_decoded_name() {
        let stable = |entries: &mut Vec<Entry>| {
            entries.sort_by(|a, b| a.name().cmp(&b.name()));
        };
        let names: &[&[&str]] = &[
            &[
                "b", "a", "SKILL.md", "skill.md", "_x", "a.md", "A", "a-b", "10", "9",
            ],
            &["z", "caf\u{e9}", "cafe", "\u{2014}", "a", "Z"],
            &[],
            &["only"],
        ];
        // A name that is a whole path replaces the folder, as with `Path::join`.
        for name in ["/abs/x", "a/b", ""] {
            for dir in ["/r/d", "rel", ""] {
                assert_eq!(joined(Path::new(dir), name), Path::new(dir).join(name));
            }
        }
        for dir in [
            Path::new("/r/d"),
            Path::new("/r/d/"),
            Path::new("rel"),
            Path::new(""),
        ] {
            for list in names {
                let mut fast: Vec<Entry> = list
                    .iter()
                    .map(|n| Entry::new(dir, std::ffi::OsStr::new(n), EntryType::File))
                    .collect();
                for (e, n) in fast.iter().zip(list.iter()) {
                    assert_eq!(e.path, dir.join(n));
                    assert_eq!(joined(dir, n), dir.join(n));
                    assert!(e.is_named(n));
                }
                let mut slow = fast.clone();
                sort_by_name(&mut fast);
                stable(&mut slow);
                assert_eq!(fast, slow, "{list:?}");
            }
        }
    }

    /// A type the listing does not give is asked of the entry itself, links not followed;
    /// an entry gone meanwhile is left out.
    #[test]
    fn an_entry_of_unknown_type_is_asked_what_it_is() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("f.md");
        fs::write(&file, "x").unwrap();
        let link = t.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let ask = |p: &Path| entry_type(FileType::Unknown, p);
        assert_eq!(ask(&file), Some(EntryType::File));
        assert_eq!(ask(t.path()), Some(EntryType::Dir));
        assert_eq!(ask(&link), Some(EntryType::Symlink));
        assert_eq!(ask(&t.path().join("gone")), None);
        // A type the listing gives is taken as given.
        assert_eq!(entry_type(FileType::Fifo, &file), Some(EntryType::Other));
        assert_eq!(entry_type(FileType::Directory, &file), Some(EntryType::Dir));
    }

    /// A folder is opened relative to the root only when the walk's spelling of it starts
    /// with the root's, at a separator.
    #[test]
    fn folders_under_the_root_are_found_relative_to_it() {
        let t = tempfile::tempdir().unwrap();
        let root = Root::open(t.path()).unwrap();
        let rel = |p: &Path| root.relative(p).map(|r| r.to_owned());
        assert_eq!(rel(&t.path().join("a")), Some("a".into()));
        assert_eq!(rel(&t.path().join("a/b")), Some("a/b".into()));
        assert_eq!(rel(t.path()), None);
        let mut sibling = t.path().as_os_str().to_owned();
        sibling.push("x/a");
        assert_eq!(rel(Path::new(&sibling)), None);
        assert_eq!(rel(Path::new("/elsewhere/a")), None);
        let slash = Root::open(Path::new("/")).unwrap();
        assert_eq!(
            slash.relative(Path::new("/tmp")),
            Some(std::ffi::OsStr::new("tmp"))
        );
        let trailing = Root::open(&t.path().join("")).unwrap();
        assert_eq!(
            trailing.relative(&t.path().join("a")),
            Some(std::ffi::OsStr::new("a"))
        );
    }

    /// Listed relative to the root or by path, a folder gives the same entries; its skill
    /// file is read (as `fs::read` reads it) and visited only when asked for and listed as a
    /// regular file, `SKILL.md` before `skill.md`, a link never; a visitor that panics
    /// leaves it unvisited.
    #[test]
    fn a_listing_reads_the_skill_file_the_walk_picks() {
        let t = tempfile::tempdir().unwrap();
        let root = Root::open(t.path()).unwrap();
        let dir = |name: &str| {
            let d = t.path().join(name);
            fs::create_dir_all(&d).unwrap();
            d
        };
        let both = dir("both");
        fs::write(both.join("SKILL.md"), "upper").unwrap();
        fs::write(both.join("skill.md"), "lower").unwrap();
        fs::write(both.join("notes.md"), "n").unwrap();
        let lower = dir("lower");
        fs::write(lower.join("skill.md"), "lower only").unwrap();
        let linked = dir("linked");
        std::os::unix::fs::symlink(both.join("SKILL.md"), linked.join("SKILL.md")).unwrap();
        fs::write(linked.join("skill.md"), "not picked").unwrap();
        let none = dir("none");
        fs::write(none.join("README.md"), "r").unwrap();
        let visit = |d: &Path, f: &Path, read: Prefetched<'_>, lone: bool| -> Visited {
            assert_eq!(f.parent(), Some(d));
            assert_eq!(read.meta.len(), read.bytes.len() as u64);
            assert_eq!(read.bytes, fs::read(f).unwrap());
            Box::new((String::from_utf8(read.bytes.to_vec()).unwrap(), lone))
        };
        for (d, want) in [
            (&both, Some(("upper", false))),
            (&lower, Some(("lower only", true))),
            (&linked, None),
            (&none, None),
        ] {
            let by_root = list_dir(d, Some(&root), Some(&visit)).unwrap();
            let by_path = list_dir(d, None, None).unwrap();
            assert_eq!(by_root.entries, by_path.entries, "{}", d.display());
            assert!(by_path.skill_file.is_none());
            let got = by_root
                .skill_file
                .map(|v| *v.downcast::<(String, bool)>().unwrap());
            let got = got.as_ref().map(|(s, lone)| (s.as_str(), *lone));
            assert_eq!(got, want, "{}", d.display());
        }
        let panics =
            |_: &Path, _: &Path, _: Prefetched<'_>, _: bool| -> Visited { panic!("visit") };
        let listed = list_dir(&lower, Some(&root), Some(&panics)).unwrap();
        assert!(listed.skill_file.is_none());
        assert_eq!(listed.entries.len(), 1);
        let gone = list_dir(&t.path().join("gone"), Some(&root), Some(&visit));
        assert!(gone.is_err());
    }
}
