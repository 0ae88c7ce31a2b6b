//! Path comparisons that read bytes where bytes give `Path`'s own answer.
//!
//! `Path`'s `==` and `starts_with` compare components, parsing both paths each time. A
//! reload compares the changed paths with every skill's path and folder, and with
//! thousands of skills that parsing cost more than the rest of the reload. A path written
//! exactly as its components join (what the registry builds from a clean source root) is
//! compared by its bytes instead; any other path falls back to `Path`.
//!
//! A one-file reload still visits every entry (the new snapshot's maps, its manifests, the
//! change set), so each visit must stay cheap:
//! - `ByPath` keys the registry's own maps by a path's bytes; it is looked up only with an
//!   entry's own path, never with a path spelled another way.
//! - `Compared` compares a changed path with an entry's path by bytes when both are written
//!   as their components join; otherwise, and off Unix, it falls back to `Path`'s component
//!   rules.
//! - `Changed` indexes a burst of many changed paths first, so each entry costs a few set
//!   lookups instead of one comparison per changed path.
//! - `respell` names a changed path spelled unlike its source (relative against absolute, a
//!   leading `./`) from that source, so it still matches the source's files.
//!
//! The loader's edit fast path then takes its own spelling of a changed file that `Path` finds
//! equal.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A map keyed by a path's bytes, for paths the registry made itself (every entry's own
/// `path`), looked up with `path.as_os_str()`. A path spelled another way (`a//b`, `./a`)
/// is a different key: lookups use the entry's own path, never a caller's spelling.
/// Hashing a [`Path`] walks its components, and SipHash over the bytes was most of what
/// remained, so the hasher is foldhash (seeded per map).
pub(crate) type ByPath<V> = HashMap<OsString, V, foldhash::fast::RandomState>;

/// A set of paths by their bytes, as [`ByPath`].
pub(crate) type PathSet = HashSet<OsString, foldhash::fast::RandomState>;

/// A path looked at once, to be compared with many others: with its bytes when they can
/// stand for its components.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Compared<'a> {
    path: &'a Path,
    plain: Option<&'a [u8]>,
}

impl<'a> Compared<'a> {
    /// Look at `path` once, to compare it with many others.
    pub(crate) fn new(path: &'a Path) -> Self {
        Compared {
            path,
            plain: plain(path),
        }
    }

    /// `self == other`, as `Path` compares them.
    pub(crate) fn same(&self, other: &Compared<'_>) -> bool {
        match (self.plain, other.plain) {
            (Some(x), Some(y)) => x == y,
            _ => self.path == other.path,
        }
    }

    /// `self.starts_with(other)`, as `Path` answers it: `other`'s components begin
    /// `self`'s.
    pub(crate) fn under(&self, other: &Compared<'_>) -> bool {
        match (self.plain, other.plain) {
            (Some(x), Some(y)) => {
                y.is_empty()
                    || x == y
                    || (x.starts_with(y) && (y == b"/" || x.get(y.len()) == Some(&b'/')))
            }
            _ => self.path.starts_with(other.path),
        }
    }
}

/// Up to this many changed paths (an editor's save, the usual reload), comparing with each
/// is cheaper than the set lookups of the index.
const LINEAR_MAX: usize = 8;

/// The changed paths of a reload, indexed so that asking about one entry costs a few set
/// lookups per level of its folder, not one comparison per changed path (a burst of
/// thousands of changed files over thousands of skills would otherwise be quadratic).
/// Answers exactly as comparing every changed path with [`Compared::same`] and
/// [`Compared::under`] would.
#[derive(Debug, Default)]
pub(crate) struct Changed<'a> {
    /// The plain changed paths' bytes.
    exact: HashSet<&'a [u8], foldhash::fast::RandomState>,
    /// Every folder a plain changed path lies in (its ancestors, and itself), by bytes.
    within: HashSet<&'a [u8], foldhash::fast::RandomState>,
    /// Changed paths that are not plain, compared one by one.
    odd: Vec<Compared<'a>>,
    /// Every changed path, for an entry whose own path is not plain.
    all: Vec<Compared<'a>>,
}

impl<'a> Changed<'a> {
    /// Index `paths`.
    pub(crate) fn new(paths: impl IntoIterator<Item = &'a Path>) -> Self {
        let mut changed = Changed::default();
        for path in paths {
            let compared = Compared::new(path);
            match compared.plain {
                Some(bytes) => {
                    changed.exact.insert(bytes);
                    for prefix in prefixes(bytes) {
                        changed.within.insert(prefix);
                    }
                }
                None => changed.odd.push(compared),
            }
            changed.all.push(compared);
        }
        changed
    }

    /// Whether `path` is one of the changed paths.
    pub(crate) fn names(&self, path: &Compared<'_>) -> bool {
        if self.all.len() <= LINEAR_MAX {
            return self.all.iter().any(|p| p.same(path));
        }
        match path.plain {
            Some(bytes) => self.exact.contains(bytes) || self.odd.iter().any(|p| p.same(path)),
            None => self.all.iter().any(|p| p.same(path)),
        }
    }

    /// Whether a changed path lies in `dir`, or `dir` lies in a changed path.
    pub(crate) fn near(&self, dir: &Compared<'_>) -> bool {
        let linear = |list: &[Compared<'_>]| list.iter().any(|p| p.under(dir) || dir.under(p));
        if self.all.len() <= LINEAR_MAX {
            return linear(&self.all);
        }
        match dir.plain {
            Some(bytes) => {
                self.within.contains(bytes)
                    || prefixes(bytes).any(|prefix| self.exact.contains(prefix))
                    || linear(&self.odd)
            }
            None => linear(&self.all),
        }
    }
}

/// Every `y` that plain `x` lies under by [`Compared::under`]'s rule: the empty path, the
/// root when `x` has one, `x` up to each separator, and `x` itself.
fn prefixes(x: &[u8]) -> impl Iterator<Item = &[u8]> {
    let root = x.get(..1).filter(|r| *r == b"/");
    let inner = memchr::memchr_iter(b'/', x)
        .filter(|&i| i > 0)
        .filter_map(move |i| x.get(..i));
    std::iter::once(&x[..0])
        .chain(root)
        .chain(inner)
        .chain(std::iter::once(x))
}

/// `path`'s bytes when they are its components joined by `/`: no repeated separator, no
/// trailing one (but the root itself), no `.` other than a leading one. Comparing the bytes
/// of two such paths is comparing their components. One pass, no allocation.
#[cfg(unix)]
fn plain(path: &Path) -> Option<&[u8]> {
    let b = path.as_os_str().as_encoded_bytes();
    let mut odd = b.len() > 1 && (b.ends_with(b"/") || b.ends_with(b"/."));
    // At each separator, look back: `//` or `/./` make the bytes differ from the joined
    // components.
    let mut last = [0u8; 2];
    for &c in b {
        if c == b'/' {
            odd |= last[1] == b'/' || last == *b"/.";
        }
        last = [last[1], c];
    }
    (!odd).then_some(b)
}

#[cfg(not(unix))]
fn plain(_: &Path) -> Option<&[u8]> {
    None
}

/// Whether `path` lies under (or above) a source root, so a change there concerns it.
pub(crate) fn touches(root: &Path, path: &Path) -> bool {
    path.starts_with(root) || root.starts_with(path)
}

/// `path` as the source root it lies under names it: that root joined with the rest. Only
/// for a path that lies under none of `roots` as written, but under one once both are
/// made absolute against `cwd` (a relative path where the roots are absolute or the
/// reverse, a leading `./`); any other path comes back as it is. Without this, a changed
/// path spelled unlike its source would match no file, and the file's manifest would keep
/// its old digests.
pub(crate) fn respell<'r, R>(roots: R, path: PathBuf, cwd: &Path) -> PathBuf
where
    R: IntoIterator<Item = &'r Path>,
    R::IntoIter: Clone,
{
    let roots = roots.into_iter();
    if roots.clone().any(|root| touches(root, &path)) {
        return path;
    }
    let absolute = absolute_in(cwd, &path);
    for root in roots {
        if let Ok(rest) = absolute.strip_prefix(absolute_in(cwd, root)) {
            return if rest.as_os_str().is_empty() {
                root.to_path_buf()
            } else {
                root.join(rest)
            };
        }
    }
    path
}

/// `path` made absolute against `cwd` without touching the file system: a leading `./` is
/// dropped, and the components are joined again (so `.` and doubled separators go; `..`
/// stays, as a symbolic link may stand before it).
fn absolute_in(cwd: &Path, path: &Path) -> PathBuf {
    let path = path.strip_prefix(".").unwrap_or(path);
    if path.is_absolute() {
        path.components().collect()
    } else {
        cwd.join(path).components().collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Paths from parts that exercise every rule: roots, empty parts (repeated
    /// separators), `.`, `..`, names that share a prefix.
    fn path() -> impl Strategy<Value = String> {
        (
            proptest::bool::ANY,
            proptest::collection::vec(
                prop_oneof![
                    Just(""),
                    Just("."),
                    Just(".."),
                    Just("a"),
                    Just("ab"),
                    Just("b")
                ],
                0..5,
            ),
        )
            .prop_map(|(root, parts)| {
                let joined = parts.join("/");
                if root { format!("/{joined}") } else { joined }
            })
    }

    proptest! {
        #[test]
        fn same_and_under_agree_with_path(a in path(), b in path()) {
            let (a, b) = (Path::new(&a), Path::new(&b));
            let (x, y) = (Compared::new(a), Compared::new(b));
            prop_assert_eq!(x.same(&y), a == b, "{:?} == {:?}", a, b);
            prop_assert_eq!(x.under(&y), a.starts_with(b), "{:?} under {:?}", a, b);
            prop_assert_eq!(y.under(&x), b.starts_with(a), "{:?} under {:?}", b, a);
        }
    }

    proptest! {
        /// The index answers as comparing with every changed path one by one does, with
        /// few changed paths (compared one by one) and many (indexed).
        #[test]
        fn changed_paths_answer_as_the_comparisons_do(
            changed in proptest::collection::vec(path(), 0..20),
            asked in proptest::collection::vec(path(), 1..6),
        ) {
            let list: Vec<Compared<'_>> =
                changed.iter().map(|p| Compared::new(Path::new(p))).collect();
            let index = Changed::new(changed.iter().map(Path::new));
            for a in &asked {
                let a = Compared::new(Path::new(a));
                prop_assert_eq!(index.names(&a), list.iter().any(|p| p.same(&a)), "{:?}", a);
                prop_assert_eq!(
                    index.near(&a),
                    list.iter().any(|p| p.under(&a) || a.under(p)),
                    "{:?}",
                    a
                );
            }
        }
    }

    #[test]
    fn plain_paths_are_read_as_bytes() {
        for p in ["/a/b", "a", "./a", "/", "", ".", "../a"] {
            assert!(plain(Path::new(p)).is_some() || cfg!(not(unix)), "{p}");
        }
        for p in ["/a//b", "a/", "a/./b", "a/.", "/."] {
            assert!(plain(Path::new(p)).is_none(), "{p}");
        }
        let under =
            |a: &str, b: &str| Compared::new(Path::new(a)).under(&Compared::new(Path::new(b)));
        assert!(under("/a/b/SKILL.md", "/a/b"));
        assert!(!under("/a/bc", "/a/b"));
        assert!(under("/a/b", "/"));
    }

    #[test]
    fn changed_paths_are_respelled_from_the_root_they_lie_under() {
        let cwd = Path::new("/work");
        // (roots, changed path, the path reloaded)
        let cases: &[(&[&str], &str, &str)] = &[
            // Already named as a root names it: unchanged, whatever else it holds.
            (&["/work/tree"], "/work/tree/a/x.sh", "/work/tree/a/x.sh"),
            (&["tree"], "tree//a/x.sh", "tree//a/x.sh"),
            // Relative against absolute roots, and the reverse; a leading `./`.
            (&["/work/tree"], "tree/a/x.sh", "/work/tree/a/x.sh"),
            (&["/work/tree"], "./tree/a", "/work/tree/a"),
            (&["tree"], "/work/tree/a/SKILL.md", "tree/a/SKILL.md"),
            (&["tree"], "./tree/a", "tree/a"),
            (&["./tree"], "/work/./tree", "./tree"),
            // The root it lies under, not the first one.
            (&["/elsewhere", "tree"], "/work/tree/b", "tree/b"),
            // Under no root at all, or only through `..`: as it was.
            (&["/work/tree"], "other/a", "other/a"),
            (&["/work/tree"], "x/../tree/a", "x/../tree/a"),
        ];
        for (roots, path, want) in cases {
            let got = respell(roots.iter().map(Path::new), PathBuf::from(path), cwd);
            assert_eq!(got, Path::new(want), "{roots:?} {path}");
        }
    }
}
