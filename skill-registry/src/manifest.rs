//! The per-file manifest: for every skill, each of its files with its relative path, size and
//! SHA-256, and a digest of the whole folder derived from them.
//!
//! It is what proves which bytes a host serves: the MCP server's per-resource digests, the
//! lock file (`skill-server lock` / `verify`) and `require_lock` all read it. A manifest is
//! computed once per snapshot; a file's digest is kept with the file's size, modification
//! time, inode and change time, and reused by every later snapshot while those stay the same,
//! so a reload hashes only the files it touched. A skill file is hashed and scanned from the
//! bytes its parse read ([`HashCache::prehash`], by the loader), so a load reads it once.
//!
//! The files of a manifest are the skill file and the files
//! [`Skill::resource_listing`] lists (the files the host serves, with the same limits and the
//! same exclusions: hidden entries, `.git`, `node_modules`, links leaving the folder). A
//! skill without a folder of its own (a note, an action, a domain index) has its one file.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use sha2::{Digest, Sha256 as Hasher};

use skill_format::{Diagnostic, Kept, KeptFrontmatter};

use crate::disclose::open_without_waiting;
use crate::discover::Discovery;
use crate::files::{FileEntry, FileManifest, Sha256};
use crate::pathcmp::{ByPath, Changed, Compared};
use crate::skill::Skill;
use crate::snapshot::Snapshot;
use crate::{RegistryConfig, Trust};

/// The most files one manifest holds: a skill file and as many resources as a listing
/// gives ([`crate::MAX_RESOURCE_ENTRIES`]).
pub const MAX_MANIFEST_FILES: usize = crate::MAX_RESOURCE_ENTRIES + 1;
/// The largest file that is hashed; a larger one is listed with its size and no digest.
pub const MAX_HASHED_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most bytes hashed for one skill; files past it are listed without a digest.
pub const MAX_HASHED_SKILL_BYTES: u64 = 256 * 1024 * 1024;

/// The limits a `manifest-incomplete` finding names.
const LIMITS: crate::incomplete::Limits = crate::incomplete::Limits {
    entries: crate::MAX_RESOURCE_ENTRIES,
    depth: crate::MAX_RESOURCE_DEPTH,
    file_bytes: MAX_HASHED_FILE_BYTES,
    skill_bytes: MAX_HASHED_SKILL_BYTES,
};
/// Read size while hashing.
const CHUNK: usize = 64 * 1024;
/// A pass computes manifests on several threads only when each gets at least this many
/// skills (below that, starting threads costs more than it saves).
const PARALLEL_MIN_SKILLS: usize = 32;

impl FileManifest {
    /// Compute a skill's manifest now, reading and hashing (and scanning) every file; a
    /// snapshot's manifests ([`Snapshot::manifest`]) are computed once and reused instead.
    pub fn compute(skill: &Skill) -> FileManifest {
        Arc::unwrap_or_clone(compute(
            skill,
            || false,
            &mut HashCache::default(),
            &mut HashSet::new(),
        ))
    }
}

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    /// Inode, device and change time (Unix): a file replaced by a rename or rewritten
    /// within the modification time's granularity still gets a new stamp.
    ino: u64,
    dev: u64,
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Self {
        #[cfg(unix)]
        let (ino, dev, ctime) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ino(), meta.dev(), (meta.ctime(), meta.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (ino, dev, ctime) = (0, 0, (0, 0));
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            ino,
            dev,
            ctime,
        }
    }
}

/// A file as last hashed (and scanned, when it is text).
#[derive(Debug, Clone)]
struct Hashed {
    stamp: Stamp,
    sha256: Option<Sha256>,
    findings: Arc<[Diagnostic]>,
    /// The [`HashCache::pass`] in which a parse read these bytes ([`HashCache::prime`]); 0
    /// for a file hashed by a manifest pass.
    read_in: u64,
    /// For a skill file whose folder held nothing else when the load that read it listed
    /// it: the skill's whole manifest, made with the digest ([`HashCache::prehash`]) and
    /// taken as is by that load's manifest pass.
    manifest: Option<Arc<FileManifest>>,
}

/// The digests of every file hashed so far, by absolute path, reused while a file's
/// [`Stamp`] stays the same.
#[derive(Debug, Default)]
pub(crate) struct HashCache {
    files: HashMap<PathBuf, Hashed>,
    /// How many files were read and hashed, ever (the tests and the benchmark read it).
    hashed: u64,
    /// Counts [`HashCache::prime`]s and manifest passes: a file primed in the current pass
    /// was read by the parse of the snapshot being given manifests, so its manifest entry
    /// is taken from that read without asking the file for its metadata again. Every pass
    /// ends by moving on, so a later pass asks.
    pass: u64,
    /// The manifests made with the digests of the current pass ([`HashCache::prehash`]), by
    /// skill file, for the manifest pass of the load that primed them.
    made: Vec<(PathBuf, Arc<FileManifest>)>,
    /// [`HashCache::made`] as a map, when the load built it ([`HashCache::take_made`]).
    made_by_path: Option<ByPath<Arc<FileManifest>>>,
}

impl HashCache {
    /// How many files this cache has read and hashed.
    #[cfg(test)]
    pub(crate) fn hashed(&self) -> u64 {
        self.hashed
    }

    /// The digest of the file at `path`, whose metadata is `meta`: the cached one when the
    /// stamp matches, else read and hashed now. `None` when the file is too large for the
    /// remaining `budget` or cannot be read.
    #[cfg(test)]
    fn digest(&mut self, path: &Path, meta: &fs::Metadata, budget: &mut u64) -> Option<Sha256> {
        self.digest_and_scan(path, meta, budget).0
    }

    /// [`HashCache::digest`], and the content scan's findings when the file is text.
    fn digest_and_scan(
        &mut self,
        path: &Path,
        meta: &fs::Metadata,
        budget: &mut u64,
    ) -> (Option<Sha256>, Arc<[Diagnostic]>) {
        let stamp = Stamp::of(meta);
        if let Some(hit) = cached(self.files.get(path), stamp, budget) {
            return hit;
        }
        match hash_now(path, stamp, budget) {
            Some(h) => {
                self.hashed += 1;
                let out = (h.sha256, h.findings.clone());
                self.files.insert(path.to_path_buf(), h);
                out
            }
            None => (None, no_findings()),
        }
    }

    /// The digest and scan of a file whose bytes were just read (a skill file, by its
    /// parse), to be [`HashCache::prime`]d: `meta` is the metadata the bytes were read
    /// under. `None` when this cache already knows that version of the file, or when the
    /// bytes are not what `meta` describes (the file changed meanwhile) or too large to hash.
    /// With `lone` (the load that read the file walked every source and found its folder
    /// holding nothing else), the skill's manifest is made too, as [`compute`] would make it
    /// (this runs on the parse's threads, so the manifest pass is left a lookup).
    pub(crate) fn prehash(
        &self,
        path: &Path,
        meta: &fs::Metadata,
        (bytes, kept): (&[u8], &Kept<'_>),
        lone: bool,
    ) -> Option<Primed> {
        let stamp = Stamp::of(meta);
        if self.files.get(path).is_some_and(|h| h.stamp == stamp) {
            return None;
        }
        if bytes.len() as u64 != stamp.len
            || stamp.len > MAX_HASHED_FILE_BYTES
            || stamp.len > MAX_HASHED_SKILL_BYTES
        {
            return None;
        }
        // As `hash_now` does: text up to the scan's cap is scanned too.
        let findings = if stamp.len <= crate::MAX_SCAN_BYTES {
            match kept.text {
                // The parse checked these very bytes: no NUL, valid UTF-8.
                Some(text) => scan_found(path, text, &kept.frontmatter),
                None => scan_bytes(path, bytes),
            }
        } else {
            no_findings()
        };
        let sha256 = Some(Sha256::of(bytes));
        let manifest = lone.then(|| {
            let file = FileEntry {
                path: file_name(path),
                size: stamp.len,
                sha256,
            };
            let mut manifest = FileManifest::new(vec![file], true);
            manifest.findings = findings.to_vec();
            Arc::new(manifest)
        });
        Some(Primed {
            path: path.to_path_buf(),
            hashed: Hashed {
                stamp,
                sha256,
                findings,
                read_in: 0,
                manifest,
            },
        })
    }

    /// Remember digests computed from bytes read elsewhere ([`HashCache::prehash`]); each
    /// counts as a file hashed, unless the cache learnt that version meanwhile. The
    /// manifests made with them are kept for this pass's [`attach`]; without `keep` (a load
    /// after which the cache is dropped), a file whose manifest was made is not remembered
    /// otherwise.
    pub(crate) fn prime(&mut self, primed: Vec<Primed>, keep: bool) {
        self.pass += 1;
        self.made.clear();
        self.made_by_path = None;
        self.files.reserve(primed.len());
        for Primed { path, mut hashed } in primed {
            hashed.read_in = self.pass;
            if !keep {
                if let Some(made) = hashed.manifest.take() {
                    self.made.push((path, made));
                    self.hashed += 1;
                    continue;
                }
            }
            let made = hashed.manifest.clone();
            match self.files.entry(path) {
                Entry::Occupied(known) if known.get().stamp == hashed.stamp => continue,
                Entry::Occupied(mut known) => {
                    if let Some(made) = made {
                        self.made.push((known.key().clone(), made));
                    }
                    known.insert(hashed);
                }
                Entry::Vacant(new) => {
                    if let Some(made) = made {
                        self.made.push((new.key().clone(), made));
                    }
                    new.insert(hashed);
                }
            }
            self.hashed += 1;
        }
    }

    /// The manifests made in this pass, to be indexed by path (off the load's critical
    /// path) and handed back with [`HashCache::set_made`].
    pub(crate) fn take_made(&mut self) -> Vec<(PathBuf, Arc<FileManifest>)> {
        std::mem::take(&mut self.made)
    }

    /// The manifests made in this pass, by path, for this pass's [`attach`].
    pub(crate) fn set_made(&mut self, made: ByPath<Arc<FileManifest>>) {
        self.made_by_path = Some(made);
    }

    /// Forget every file not in `keep` and not read by this pass's parse (after a full
    /// pass, so removed files do not pile up). A full pass computes the manifest of every
    /// entry, so every file its parse read is one of them.
    fn retain(&mut self, keep: &HashSet<PathBuf>) {
        let pass = self.pass;
        self.files
            .retain(|p, h| (pass != 0 && h.read_in == pass) || keep.contains(p));
    }
}

/// A file's digest and scan computed from bytes read by its parse, for [`HashCache::prime`].
#[derive(Debug)]
pub(crate) struct Primed {
    path: PathBuf,
    hashed: Hashed,
}

/// The digest (and findings) a cache entry gives for a file now stamped `stamp`, if it
/// is of that version; the file's size then counts against the skill's `budget`.
fn cached(
    hashed: Option<&Hashed>,
    stamp: Stamp,
    budget: &mut u64,
) -> Option<(Option<Sha256>, Arc<[Diagnostic]>)> {
    let h = hashed.filter(|h| h.stamp == stamp)?;
    if h.sha256.is_some() {
        *budget = budget.saturating_sub(stamp.len);
    }
    Some((h.sha256, h.findings.clone()))
}

/// Read, hash and scan the file at `path` (stamped `stamp`) now; `None` when it is too
/// large for the cap or the remaining `budget` (nothing to remember then).
fn hash_now(path: &Path, stamp: Stamp, budget: &mut u64) -> Option<Hashed> {
    if stamp.len > MAX_HASHED_FILE_BYTES || stamp.len > *budget {
        return None;
    }
    let (sha256, findings) = if stamp.len <= crate::MAX_SCAN_BYTES {
        match read_small(path, stamp.len) {
            Some(bytes) => (Some(Sha256::of(&bytes)), scan_bytes(path, &bytes)),
            None => (None, no_findings()),
        }
    } else {
        (hash_file(path, stamp.len), no_findings())
    };
    if sha256.is_some() {
        *budget = budget.saturating_sub(stamp.len);
    }
    Some(Hashed {
        stamp,
        sha256,
        findings,
        read_in: 0,
        manifest: None,
    })
}

/// Where [`compute`] gets a file's digest: the cache itself, or one worker's view of it in
/// a parallel pass.
trait Digests {
    /// The digest and findings of the file at `path` (metadata `meta`), hashed now unless
    /// known for its stamp.
    fn digest_and_scan(
        &mut self,
        path: &Path,
        meta: &fs::Metadata,
        budget: &mut u64,
    ) -> (Option<Sha256>, Arc<[Diagnostic]>);

    /// The file at `path` as the parse of this pass read it ([`HashCache::prime`]), if it did.
    fn just_read(&self, path: &Path) -> Option<&Hashed>;
}

impl Digests for HashCache {
    fn digest_and_scan(
        &mut self,
        path: &Path,
        meta: &fs::Metadata,
        budget: &mut u64,
    ) -> (Option<Sha256>, Arc<[Diagnostic]>) {
        HashCache::digest_and_scan(self, path, meta, budget)
    }

    fn just_read(&self, path: &Path) -> Option<&Hashed> {
        just_read(&self.files, self.pass, path)
    }
}

/// The entry of `files` for `path` when the parse of pass `pass` read it.
fn just_read<'f>(
    files: &'f HashMap<PathBuf, Hashed>,
    pass: u64,
    path: &Path,
) -> Option<&'f Hashed> {
    files.get(path).filter(|h| pass != 0 && h.read_in == pass)
}

/// One worker of a parallel pass: reads the cache as it was, keeps what it hashes apart
/// (merged into the cache after the pass).
struct Worker<'c> {
    old: &'c HashMap<PathBuf, Hashed>,
    new: HashMap<PathBuf, Hashed>,
    /// The cache's [`HashCache::pass`].
    pass: u64,
}

impl Digests for Worker<'_> {
    fn digest_and_scan(
        &mut self,
        path: &Path,
        meta: &fs::Metadata,
        budget: &mut u64,
    ) -> (Option<Sha256>, Arc<[Diagnostic]>) {
        let stamp = Stamp::of(meta);
        if let Some(hit) = cached(self.new.get(path), stamp, budget)
            .or_else(|| cached(self.old.get(path), stamp, budget))
        {
            return hit;
        }
        match hash_now(path, stamp, budget) {
            Some(h) => {
                let out = (h.sha256, h.findings.clone());
                self.new.insert(path.to_path_buf(), h);
                out
            }
            None => (None, no_findings()),
        }
    }

    fn just_read(&self, path: &Path) -> Option<&Hashed> {
        just_read(self.old, self.pass, path)
    }
}

/// Hash a regular file, reading at most `expected` bytes plus one: a file that grew or
/// shrank since its metadata was read gives `None` (it is hashed again next time, since its
/// stamp changed too).
pub(crate) fn hash_file(path: &Path, expected: u64) -> Option<Sha256> {
    let mut file = open_without_waiting(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    hash_open(&mut file, expected)
}

/// [`hash_file`] on a file already opened (and checked to be a regular file).
pub(crate) fn hash_open(file: &mut fs::File, expected: u64) -> Option<Sha256> {
    let mut h = Hasher::new();
    let mut buf = vec![0u8; CHUNK];
    let mut total: u64 = 0;
    let mut limited = file.take(expected.saturating_add(1));
    loop {
        let n = match limited.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        total += n as u64;
        h.update(&buf[..n]);
    }
    (total == expected).then(|| Sha256(h.finalize().into()))
}

/// Read a whole file of `expected` bytes (small: at most [`crate::MAX_SCAN_BYTES`]);
/// `None` when it cannot be read or its size changed.
fn read_small(path: &Path, expected: u64) -> Option<Vec<u8>> {
    let mut file = open_without_waiting(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    (&mut file)
        .take(expected.saturating_add(1))
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 == expected).then_some(bytes)
}

/// No findings: one shared empty list per thread (an empty `Arc<[_]>` is still an
/// allocation, and most files have no findings).
fn no_findings() -> Arc<[Diagnostic]> {
    thread_local! {
        static NONE: Arc<[Diagnostic]> = Arc::from([]);
    }
    NONE.with(Arc::clone)
}

/// The content scan of a file's bytes, decoded as a host would serve them as text
/// (`skill_scan::scan_bytes`: UTF-8, UTF-16 by its byte-order mark, else latin-1); a file
/// named as text that holds a NUL byte is a finding, other binary files are hashed only.
fn scan_bytes(path: &Path, bytes: &[u8]) -> Arc<[Diagnostic]> {
    let found = skill_scan::scan_bytes(path, bytes);
    if found.is_empty() {
        no_findings()
    } else {
        Arc::from(found)
    }
}

/// The content scan of a text file, given what its parse made of its frontmatter.
fn scan_found(path: &Path, text: &str, frontmatter: &KeptFrontmatter<'_>) -> Arc<[Diagnostic]> {
    let found = skill_scan::scan_parsed(path, text, frontmatter);
    if found.is_empty() {
        no_findings()
    } else {
        Arc::from(found)
    }
}

/// The relative path of a skill's own file in its manifest: its name.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Compute one skill's manifest, hashing only files whose stamp changed. `lone`: the load
/// listed the skill's folder just now and found nothing but the skill file, so its
/// resource listing is empty and is not taken again. Every file looked up, but those this
/// pass's parse read, is added to `seen`.
fn compute(
    skill: &Skill,
    lone: impl FnOnce() -> bool,
    cache: &mut impl Digests,
    seen: &mut HashSet<PathBuf>,
) -> Arc<FileManifest> {
    let mut budget = MAX_HASHED_SKILL_BYTES;
    let mut files = Vec::new();
    let mut findings = Vec::new();
    let mut complete = true;
    // The skill file as its parse read it, when the parse of this pass did: no metadata
    // query, and the digest is of the very bytes that parse read.
    let just_read = cache.just_read(&skill.path);
    // Its folder held nothing else (so `lone` holds): the manifest was made with the digest.
    if let Some(made) = just_read.and_then(|h| h.manifest.clone()) {
        return made;
    }
    let read = just_read.and_then(|h| Some((h.stamp.len, cached(Some(h), h.stamp, &mut budget)?)));
    let read_by_parse = read.is_some();
    // (Not added to `seen`: the cache keeps what this pass's parse read by its pass.)
    if let Some((size, (sha256, found))) = read {
        findings.extend(found.iter().cloned());
        files.push(FileEntry {
            path: file_name(&skill.path),
            size,
            sha256,
        });
    }
    let mut add = |abs: PathBuf, rel: String, files: &mut Vec<FileEntry>| {
        match fs::metadata(&abs) {
            Ok(meta) if meta.is_file() => {
                let (sha256, found) = cache.digest_and_scan(&abs, &meta, &mut budget);
                findings.extend(found.iter().cloned());
                files.push(FileEntry {
                    path: rel,
                    size: meta.len(),
                    sha256,
                });
                seen.insert(abs);
            }
            // Vanished or replaced since the listing: listed without a digest, so a lock
            // check reports it rather than passing it.
            _ => files.push(FileEntry {
                path: rel,
                size: 0,
                sha256: None,
            }),
        }
    };
    if !read_by_parse {
        add(skill.path.clone(), file_name(&skill.path), &mut files);
    }
    if lone() {
        let mut manifest = FileManifest::new(files, complete);
        manifest.findings = findings;
        return Arc::new(manifest);
    }
    let mut cut = None;
    match skill.resource_listing() {
        Ok(listing) => {
            complete &= !listing.is_truncated();
            cut = Some((listing.too_many, listing.too_deep));
            for r in listing.resources.into_iter().take(MAX_MANIFEST_FILES - 1) {
                let abs = skill.dir.join(&r.path);
                add(abs, r.path, &mut files);
            }
        }
        Err(_) => complete = false,
    }
    let mut manifest = FileManifest::new(files, complete);
    if !manifest.is_complete() {
        findings.push(crate::incomplete::finding(skill, &manifest, cut, LIMITS));
    }
    manifest.findings = findings;
    Arc::new(manifest)
}

/// The manifests of `skills[i]` for every `i` in `todo`, in that order, computed on up to
/// `threads` threads (0: every core) when there are enough of them. Every file hashed is
/// added to `cache` and its path to `seen` (as [`compute`] says). `lone`: skill files whose folder held nothing
/// else when this load listed it ([`compute`]).
fn compute_all(
    skills: &[Arc<Skill>],
    todo: &[usize],
    lone: &[&Discovery],
    cache: &mut HashCache,
    seen: &mut HashSet<PathBuf>,
    threads: usize,
) -> Vec<Arc<FileManifest>> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        threads
    }
    .min(todo.len() / PARALLEL_MIN_SKILLS);
    // Asked only of a skill without a manifest made with its digest (after a reload that
    // found the file unchanged): the set is built the first time.
    let lone_files: OnceLock<HashSet<&OsStr>> = OnceLock::new();
    let is_lone = |skill: &Skill| {
        lone_files
            .get_or_init(|| lone.iter().flat_map(|d| d.lone_files()).collect())
            .contains(skill.path.as_os_str())
    };
    if threads <= 1 {
        return todo
            .iter()
            .map(|&i| compute(&skills[i], || is_lone(&skills[i]), cache, seen))
            .collect();
    }
    let next = AtomicUsize::new(0);
    let (old, pass) = (&cache.files, cache.pass);
    let parts: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut worker = Worker {
                        old,
                        new: HashMap::new(),
                        pass,
                    };
                    let mut seen = HashSet::new();
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(skill) = todo.get(k).and_then(|&i| skills.get(i)) else {
                            break;
                        };
                        done.push((k, compute(skill, || is_lone(skill), &mut worker, &mut seen)));
                    }
                    (done, worker.new, seen)
                })
            })
            .collect();
        // A worker that died took its results with it; those skills are computed below.
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let mut slots: Vec<Option<Arc<FileManifest>>> =
        std::iter::repeat_with(|| None).take(todo.len()).collect();
    let mut merged = HashSet::new();
    for (done, new, worker_seen) in parts {
        for (k, manifest) in done {
            if let Some(slot) = slots.get_mut(k) {
                *slot = Some(manifest);
            }
        }
        for (path, hashed) in new {
            // Two workers may hash a file two skills share: it counts once, as in one pass.
            if merged.insert(path.clone()) {
                cache.hashed += 1;
            }
            cache.files.insert(path, hashed);
        }
        seen.extend(worker_seen);
    }
    slots
        .into_iter()
        .zip(todo)
        .map(|(slot, &i)| {
            slot.unwrap_or_else(|| compute(&skills[i], || is_lone(&skills[i]), cache, seen))
        })
        .collect()
}

/// Which skills need their manifest computed again.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Recompute<'a> {
    /// Every skill (files whose stamp did not change are still not read again).
    All,
    /// Only skills with a file under one of these paths, or not in the previous snapshot.
    Paths(&'a HashSet<PathBuf>),
}

/// Whether snapshots loaded with `config` carry manifests: when it asks for them, or when
/// the trust policy reads them (a low-trust source's findings, a lock's digests).
pub(crate) fn wanted(config: &RegistryConfig) -> bool {
    config.manifests
        || config.trust.require_lock.is_some()
        || config.sources.iter().any(|s| s.trust == Trust::Low)
}

/// Give `snapshot` a manifest for every entry (winners, domain indexes, shadowed), reusing
/// `previous`'s for skills that `recompute` does not name; none at all when `config` does
/// not want them ([`RegistryConfig::manifests`]). `lone`: skill files whose folder held
/// nothing else when the load that built `snapshot` listed it (empty unless that load
/// walked every source).
pub(crate) fn attach(
    mut snapshot: Snapshot,
    previous: Option<&Snapshot>,
    recompute: Recompute<'_>,
    cache: &mut HashCache,
    lone: &[&Discovery],
    config: &RegistryConfig,
) -> Snapshot {
    if !wanted(config) {
        return snapshot;
    }
    snapshot.rule = crate::snapshot::ServeRule {
        by_manifest: true,
        verify: config.trust.require_lock.is_some(),
    };
    let mut seen = HashSet::new();
    let skills: Vec<Arc<Skill>> = snapshot
        .entries()
        .chain(snapshot.domains())
        .chain(snapshot.shadowed().iter())
        .cloned()
        .collect();
    // A first load of everything: the manifests made with the parse's digests are every
    // entry's whose folder held nothing else; only the others are computed.
    let made = std::mem::take(&mut cache.made);
    let made_by_path = cache.made_by_path.take();
    if previous.is_none() && matches!(recompute, Recompute::All) {
        let mut out = made_by_path.unwrap_or_default();
        out.reserve(skills.len().saturating_sub(out.len()));
        out.extend(made.into_iter().map(|(p, m)| (p.into_os_string(), m)));
        // Each made one is an entry's, so as many of them as entries are all of them.
        let todo: Vec<usize> = if out.len() == skills.len() {
            Vec::new()
        } else {
            (0..skills.len())
                .filter(|&i| !out.contains_key(skills[i].path.as_os_str()))
                .collect()
        };
        let fresh = compute_all(&skills, &todo, lone, cache, &mut seen, config.threads);
        for (&i, fresh) in todo.iter().zip(fresh) {
            out.insert(skills[i].path.clone().into_os_string(), fresh);
        }
        cache.retain(&seen);
        cache.pass += 1;
        snapshot.set_manifests(out);
        return snapshot;
    }
    let old_of = |skill: &Skill| previous.and_then(|p| p.manifest_by_path(&skill.path));
    let mut manifests: Vec<Option<Arc<FileManifest>>> = Vec::with_capacity(skills.len());
    let mut todo: Vec<usize> = Vec::new();
    // The changed paths, indexed once, then asked about every skill.
    let changed = match recompute {
        Recompute::Paths(paths) => Changed::new(paths.iter().map(PathBuf::as_path)),
        Recompute::All => Changed::default(),
    };
    for (i, skill) in skills.iter().enumerate() {
        let reuse = match (recompute, old_of(skill)) {
            (Recompute::Paths(_), Some(old)) => {
                let own_folder = skill
                    .path
                    .file_name()
                    .is_some_and(|n| n.eq_ignore_ascii_case("SKILL.md") && skill.domain.is_none());
                let path = Compared::new(&skill.path);
                let dir = own_folder.then(|| Compared::new(&skill.dir));
                let touched = changed.names(&path) || dir.is_some_and(|dir| changed.near(&dir));
                (!touched).then(|| old.clone())
            }
            _ => None,
        };
        if reuse.is_none() {
            todo.push(i);
        }
        manifests.push(reuse);
    }
    let fresh = compute_all(&skills, &todo, lone, cache, &mut seen, config.threads);
    for (&i, fresh) in todo.iter().zip(fresh) {
        // The same files as before keep the same `Arc`, so a reload can tell that nothing
        // changed by pointer.
        manifests[i] = Some(match old_of(&skills[i]) {
            Some(o) if **o == *fresh => o.clone(),
            _ => fresh,
        });
    }
    let mut out: ByPath<Arc<FileManifest>> =
        HashMap::with_capacity_and_hasher(skills.len(), Default::default());
    out.extend(
        skills
            .iter()
            .zip(manifests)
            .filter_map(|(skill, m)| Some((skill.path.clone().into_os_string(), m?))),
    );
    if matches!(recompute, Recompute::All) {
        cache.retain(&seen);
    }
    // What the parse read is not taken as current by a later pass.
    cache.pass += 1;
    snapshot.set_manifests(out);
    snapshot
}

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod tests;
