//! Loading: discover every source, parse every file on all cores, resolve precedence, judge
//! eligibility, and build a [`Snapshot`].
//!
//! A [`Loader`] keeps what the previous load found (each source's discovery and each file's
//! parse), so a reload re-reads only what changed: files named as changed are parsed again,
//! a source is walked again only when a change could add or remove a skill, and everything
//! else is reused as is. When a file that loaded before now has errors, its last good version
//! stays served (with a `last-good-served` warning) until the file is valid again.
//!
//! The edit fast path (`Loader::load_edits`) runs when every changed path is a skill file the
//! loader already knows. It parses only those files and re-resolves only the names they had or
//! now have. Every other `Arc<Skill>` of the previous snapshot is reused as is. Anything that
//! could add or remove files (a new `.md`, a folder, a deletion) walks that source again, and
//! still parses only the files named as changed. A folder whose `SKILL.md` declares `domain:`
//! is an actions domain index; its sibling `*.md` files are parsed as `domain.action` skills.
//! Results keep the walk's order, so a snapshot is the same on any number of cores.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use skill_format::{Code, Diagnostic, FileKind, Origin};

use crate::RegistryConfig;
use crate::discover::{Discovery, Found, Prefetched, Visited, Visitor, discover_on};
use crate::manifest::HashCache;
use crate::pathcmp::{PathSet, touches};
use crate::skill::Skill;
use crate::snapshot::{Snapshot, sort_diagnostics};

mod file;
mod parallel;
mod parse;
mod resolve;

use file::{Listed, file_name, stem};

use parse::{Parsed, Request, parse_listed, parse_request};
use resolve::{resolve, resolve_name};

/// A load indexes the manifests made during its parse on another thread (while it
/// resolves precedence) only when there are at least this many skills.
const PARALLEL_INDEX_MIN: usize = 1024;

/// A note's id: the slug of its name (lowercase ASCII letters and digits, runs of anything
/// else become one `-`).
pub fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// What the previous load knew about one file.
#[derive(Debug)]
struct Cached {
    origin: Origin,
    source: usize,
    /// The file as last parsed (before precedence and eligibility).
    parsed: Arc<Skill>,
    /// The last version of the file that had no errors, if any.
    good: Option<Arc<Skill>>,
}

/// Which files a load may have to read again.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    /// Walk every source and parse every file.
    All,
    /// Only these paths changed (in the form the sources name them).
    Paths(&'a HashSet<PathBuf>),
}

/// Loads snapshots and remembers enough of the last load to make the next one incremental.
#[derive(Debug, Default)]
pub(crate) struct Loader {
    discoveries: Vec<Option<Discovery>>,
    files: HashMap<PathBuf, Cached>,
    /// File digests for the per-file manifests (`manifest.rs`).
    pub(crate) hashes: HashCache,
    /// The last snapshot before the trust policy's pass (`trust.rs`), which the next
    /// incremental load starts from.
    pub(crate) base: Option<Arc<Snapshot>>,
    /// Whether the last load walked every source (so each discovery's listings are that
    /// load's own, fit for [`Loader::attach`]).
    walked_all: bool,
    /// A loader for one load and no reload ([`load_snapshot`]): it keeps no record of the
    /// files it parsed, which only a reload would read.
    one_shot: bool,
    /// Tests: parse every file after the walks, never as its folder is listed (the path a
    /// load of only some paths takes), to compare the two.
    #[cfg(test)]
    parse_after_walk: bool,
}

impl Loader {
    /// Build the snapshot for `generation`, re-reading what `scope` says may have changed.
    pub(crate) fn load(
        &mut self,
        config: &RegistryConfig,
        generation: u64,
        scope: Scope<'_>,
    ) -> Snapshot {
        self.discoveries.resize_with(config.sources.len(), || None);
        self.walked_all = matches!(scope, Scope::All);
        let mut walked = vec![false; config.sources.len()];
        let digests = crate::manifest::wanted(config).then_some(&self.hashes);
        // What each walk's visitor made of the skill files it found, by source.
        let mut visits: Vec<Vec<Option<Visited>>> = Vec::new();
        visits.resize_with(config.sources.len(), Vec::new);
        for (i, source) in config.sources.iter().enumerate() {
            let walk = match (&self.discoveries[i], scope) {
                (None, _) | (_, Scope::All) => true,
                (Some(_), Scope::Paths(paths)) => paths
                    .iter()
                    .any(|p| touches(&source.path, p) && self.is_structural(p)),
            };
            if walk {
                walked[i] = true;
                // A load of everything parses every skill file found: each is read with
                // its folder's listing, and parsed then, on the thread that listed it.
                let visit =
                    |dir: &Path, file: &Path, read: Prefetched<'_>, lone: bool| -> Visited {
                        Box::new(parse_listed(i, (dir, file), read, lone, config, digests))
                    };
                let visit: Visitor<'_> = &visit;
                let (found, visited) = discover_on(
                    &source.path,
                    source.layout,
                    &config.discover_options(i),
                    config.threads,
                    (matches!(scope, Scope::All) && !self.parses_after_walk()).then_some(visit),
                );
                self.discoveries[i] = Some(found);
                visits[i] = visited;
            }
        }
        let fresh = |path: &Path| match scope {
            Scope::All => true,
            Scope::Paths(paths) => paths.contains(path),
        };
        let mut next: HashMap<PathBuf, Cached> = HashMap::with_capacity(self.files.len());
        let mut extra = Vec::new();

        // Phase A: every SKILL.md and note.
        let found_count = self
            .discoveries
            .iter()
            .flatten()
            .map(|d| d.found.len())
            .sum();
        let mut first = Vec::new();
        // What each found file loads as, in order: in a load that keeps no record of its
        // files, one parsed as its folder was listed is taken as it is; the others are
        // parsed below (`at`: where each of `first` goes).
        let mut first_parsed: Vec<Option<Arc<Skill>>> = Vec::with_capacity(found_count);
        let mut at = Vec::new();
        let mut primed = Vec::with_capacity(found_count);
        for (source, d) in self.discoveries.iter().enumerate() {
            let Some(d) = d else { continue };
            let mut visited = std::mem::take(&mut visits[source]).into_iter();
            for (k, found) in d.found.iter().enumerate() {
                // Parsed as its folder was listed (a walk of every source).
                let parsed = visited
                    .next()
                    .flatten()
                    .and_then(|v| v.downcast::<Parsed>().ok());
                if self.one_shot {
                    if let Some(done) = parsed {
                        let Parsed { skill, primed: p } = *done;
                        primed.extend(p);
                        first_parsed.push(Some(skill));
                        continue;
                    }
                }
                at.push(first_parsed.len());
                first_parsed.push(None);
                first.push(match found {
                    Found::Note { path } => Request {
                        path: path.clone(),
                        listed: Listed::Unknown,
                        origin: Origin::Note { stem: stem(path) },
                        source,
                        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
                        domain: None,
                        lone: false,
                        parsed: Mutex::new(parsed),
                    },
                    Found::Folder {
                        dir, skill_file, ..
                    } => Request {
                        path: skill_file.clone(),
                        // A listing from an earlier load may be out of date.
                        listed: if walked.get(source) == Some(&true) && d.listed_regular(skill_file)
                        {
                            Listed::Regular
                        } else {
                            Listed::Unknown
                        },
                        origin: Origin::folder(file_name(dir)),
                        source,
                        dir: dir.clone(),
                        domain: None,
                        // As `Loader::attach` takes it: only after a walk of every source.
                        lone: self.walked_all && d.found_lone.get(k) == Some(&true),
                        parsed: Mutex::new(parsed),
                    },
                });
            }
        }
        // Sized up front: growing rehashes every path key, and a `Path` hashes by component.
        if !self.one_shot {
            next.reserve(first.len());
        }
        let parsed = self.parse_all(&first, config, &fresh, &mut next, &mut extra, &mut primed);
        for (i, skill) in at.into_iter().zip(parsed) {
            if let Some(slot) = first_parsed.get_mut(i) {
                *slot = Some(skill);
            }
        }
        // `parse_all` answers every request, so every slot is filled.
        let first_parsed: Vec<Arc<Skill>> = first_parsed.into_iter().flatten().collect();

        // Phase B: the action files of every domain index.
        let mut second = Vec::new();
        let mut found_iter = self
            .discoveries
            .iter()
            .flat_map(|d| d.iter().flat_map(|d| d.found.iter()));
        for parsed in &first_parsed {
            let found = found_iter.next();
            let Some(Found::Folder { markdown, .. }) = found else {
                continue;
            };
            if parsed.kind != FileKind::DomainIndex {
                continue;
            }
            // A skill's folder and source are its request's.
            let domain = file_name(&parsed.dir);
            for action in markdown {
                second.push(Request {
                    path: action.clone(),
                    listed: Listed::Unknown,
                    origin: Origin::Action {
                        domain: domain.clone(),
                        action: stem(action),
                    },
                    source: parsed.source,
                    dir: parsed.dir.clone(),
                    domain: Some(domain.clone()),
                    lone: false,
                    parsed: Mutex::new(None),
                });
            }
        }
        let second_parsed =
            self.parse_all(&second, config, &fresh, &mut next, &mut extra, &mut primed);
        self.hashes.prime(primed, !self.one_shot);

        self.files = next;
        let mut candidates = Vec::with_capacity(first_parsed.len() + second_parsed.len());
        for parsed in first_parsed {
            if parsed.kind == FileKind::NotASkill {
                continue;
            }
            candidates.push(parsed);
        }
        candidates.extend(second_parsed);
        let mut diagnostics = extra;
        for d in self.discoveries.iter().flatten() {
            diagnostics.extend(d.diagnostics.iter().cloned());
        }
        // The manifests made as files were parsed are put in a map by path on another
        // thread while this one resolves precedence (the two are independent).
        let made = self.hashes.take_made();
        let index = move || {
            let mut by_path: crate::pathcmp::ByPath<_> =
                HashMap::with_capacity_and_hasher(made.len(), Default::default());
            by_path.extend(made.into_iter().map(|(p, m)| (p.into_os_string(), m)));
            by_path
        };
        let threads = if config.threads == 0 {
            std::thread::available_parallelism().map_or(1, usize::from)
        } else {
            config.threads
        };
        let (snapshot, made) = if threads > 1 && candidates.len() >= PARALLEL_INDEX_MIN {
            std::thread::scope(|scope| {
                let by_path = scope.spawn(index);
                let snapshot = resolve(candidates, diagnostics, config, generation);
                // A thread that died leaves the map empty: the manifests are computed.
                (snapshot, by_path.join().unwrap_or_default())
            })
        } else {
            (
                resolve(candidates, diagnostics, config, generation),
                index(),
            )
        };
        self.hashes.set_made(made);
        snapshot
    }

    /// Whether files are parsed only after the walks (a test switch; never otherwise).
    fn parses_after_walk(&self) -> bool {
        #[cfg(test)]
        return self.parse_after_walk;
        #[cfg(not(test))]
        false
    }

    /// Give `snapshot` its manifests ([`crate::manifest::attach`]) with this loader's digest
    /// cache; after a load that walked every source, a skill folder that walk found holding
    /// nothing but its skill file is not listed again.
    pub(crate) fn attach(
        &mut self,
        snapshot: Snapshot,
        previous: Option<&Snapshot>,
        recompute: crate::manifest::Recompute<'_>,
        config: &RegistryConfig,
    ) -> Snapshot {
        let lone: Vec<&Discovery> = if self.walked_all {
            self.discoveries.iter().flatten().collect()
        } else {
            Vec::new()
        };
        crate::manifest::attach(
            snapshot,
            previous,
            recompute,
            &mut self.hashes,
            &lone,
            config,
        )
    }

    /// Keep `snapshot` (with its manifests) as the base of the next incremental load, and
    /// return it as served: after the trust policy's pass.
    pub(crate) fn keep_base(
        &mut self,
        snapshot: Snapshot,
        config: &RegistryConfig,
    ) -> Arc<Snapshot> {
        let base = Arc::new(snapshot);
        self.base = Some(base.clone());
        crate::trust::apply(base, config)
    }

    /// The fast path for edits of files already known (the common case of hot reload):
    /// parse only those files and resolve precedence only for the names they had or now
    /// have, reusing everything else of `previous`. `None` when a change could add or remove
    /// files, or turns a domain index into a skill or back; the caller then runs
    /// [`Loader::load`].
    pub(crate) fn load_edits(
        &mut self,
        config: &RegistryConfig,
        previous: &Snapshot,
        generation: u64,
        paths: &HashSet<PathBuf>,
    ) -> Option<Snapshot> {
        self.walked_all = false;
        if self.discoveries.len() != config.sources.len()
            || self.discoveries.iter().any(Option::is_none)
        {
            return None;
        }
        let mut edited = Vec::new();
        for p in paths {
            if !config.sources.iter().any(|s| touches(&s.path, p)) {
                continue;
            }
            if self.is_structural(p) {
                return None;
            }
            // The path as this loader knows it when the caller's spelling differs only in
            // what `Path` ignores (an inner `.`, a doubled or trailing separator): the skill,
            // its diagnostics and its manifest keep that spelling.
            if let Some((known, _)) = self.files.get_key_value(p) {
                edited.push(known.clone());
            }
        }
        // Parse the edited files; give up before changing anything if a kind flips.
        let mut parsed = Vec::with_capacity(edited.len());
        for path in &edited {
            let Some(cached) = self.files.get(path) else {
                continue;
            };
            let domain = match &cached.origin {
                Origin::Action { domain, .. } => Some(domain.clone()),
                _ => None,
            };
            let req = Request {
                path: path.clone(),
                listed: Listed::Unknown,
                origin: cached.origin.clone(),
                source: cached.source,
                dir: cached.parsed.dir.clone(),
                domain,
                lone: false,
                parsed: Mutex::new(None),
            };
            let skill = self.mark_broken_edit(
                cached.source,
                Arc::new(parse_request(&req, config)),
                cached.good.as_ref(),
            );
            let was_index = cached.parsed.kind == FileKind::DomainIndex;
            if was_index != (skill.kind == FileKind::DomainIndex) {
                return None;
            }
            parsed.push(skill);
        }
        let mut affected = Affected::default();
        // By the paths' bytes (the loader's own spelling): every diagnostic of the previous
        // snapshot is looked up.
        let mut touched_paths = PathSet::default();
        for (path, skill) in edited.iter().zip(parsed) {
            let Some(entry) = self.files.get_mut(path) else {
                continue;
            };
            affected.add(served_key(entry));
            entry.good = if skill.kind == FileKind::NotASkill {
                None
            } else if has_errors(&skill) {
                entry.good.clone()
            } else {
                Some(skill.clone())
            };
            entry.parsed = skill;
            affected.add(served_key(entry));
            touched_paths.insert(path.clone().into_os_string());
        }
        if affected.is_empty() {
            return None;
        }
        // Every candidate of the affected names, as served.
        let mut candidates: BTreeMap<(bool, String), Vec<Arc<Skill>>> = BTreeMap::new();
        let mut extra = Vec::new();
        for entry in self.files.values() {
            let Some(key) = served_key(entry).filter(|&k| affected.has(k)) else {
                continue;
            };
            let served = match &entry.good {
                Some(good) if has_errors(&entry.parsed) => {
                    extra.extend(entry.parsed.diagnostics.iter().cloned());
                    serve_last_good(good, &entry.parsed)
                }
                _ => entry.parsed.clone(),
            };
            touched_paths.insert(served.path.clone().into_os_string());
            candidates
                .entry((key.0, key.1.to_owned()))
                .or_default()
                .push(served);
        }
        let mut skills = previous.entry_map().clone();
        let mut domains = previous.domain_map().clone();
        let mut shadowed: Vec<Arc<Skill>> = Vec::with_capacity(previous.shadowed().len());
        for s in previous.shadowed() {
            if affected.has((s.kind == FileKind::DomainIndex, &s.name)) {
                touched_paths.insert(s.path.clone().into_os_string());
            } else {
                shadowed.push(s.clone());
            }
        }
        for (is_domain, name) in affected.iter() {
            let map = if is_domain { &mut domains } else { &mut skills };
            if let Some(old) = map.remove(name) {
                touched_paths.insert(old.path.clone().into_os_string());
            }
        }
        let mut fresh = Vec::new();
        for ((is_domain, name), list) in candidates {
            let Some((winner, losers)) = resolve_name(&name, is_domain, list, config) else {
                continue;
            };
            fresh.extend(winner.diagnostics.iter().cloned());
            for l in &losers {
                fresh.extend(l.diagnostics.iter().cloned());
            }
            shadowed.extend(losers);
            if is_domain {
                domains.insert(name, winner);
            } else {
                skills.insert(name, winner);
            }
        }
        shadowed.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
        let mut diagnostics: Vec<Diagnostic> = previous
            .diagnostics()
            .iter()
            .filter(|d| !touched_paths.contains(d.path.as_os_str()))
            .cloned()
            .collect();
        for d in self.discoveries.iter().flatten() {
            diagnostics.extend(
                d.diagnostics
                    .iter()
                    .filter(|d| touched_paths.contains(d.path.as_os_str()))
                    .cloned(),
            );
        }
        diagnostics.extend(fresh);
        diagnostics.extend(extra);
        // Whether a name looks like another depends on every name served, not only on the
        // names this edit touched: recomputed over the whole maps (one pass when every
        // name is lowercase ASCII).
        crate::lookalike::refresh(&[&skills, &domains], &mut diagnostics);
        sort_diagnostics(&mut diagnostics);
        Some(Snapshot::new(
            generation,
            skills,
            domains,
            shadowed,
            diagnostics,
            config.sources.clone(),
        ))
    }

    /// Whether a change at `path` can add or remove skills (so its source must be walked
    /// again), rather than only edit a file already known.
    /// A file that had a good version and now is empty, or lost the frontmatter it had in a
    /// source whose other skills all have frontmatter, is a broken edit (an editor that
    /// truncates and then writes, a bad save): it gets an error, so the last good version
    /// stays served with `last-good-served`.
    fn mark_broken_edit(
        &self,
        source: usize,
        skill: Arc<Skill>,
        good: Option<&Arc<Skill>>,
    ) -> Arc<Skill> {
        let Some(good) = good else { return skill };
        if has_errors(&skill) || skill.kind == FileKind::NotASkill {
            return skill;
        }
        let lacks = |s: &Skill| {
            s.diagnostics
                .iter()
                .any(|d| d.code == Code::MissingFrontmatter)
        };
        let emptied = skill.body.trim().is_empty() && lacks(&skill);
        let lost = lacks(&skill)
            && !lacks(good)
            && self.files.values().all(|c| {
                c.source != source
                    || c.parsed.path == skill.path
                    || c.parsed.kind == FileKind::NotASkill
                    || !lacks(&c.parsed)
            });
        if !emptied && !lost {
            return skill;
        }
        let mut broken = (*skill).clone();
        broken.diagnostics.push(
            Diagnostic::error(
                Code::MissingFrontmatter,
                &skill.path,
                if emptied {
                    "the file is now empty (a truncated or half-written save?): write the skill back"
                } else {
                    "the frontmatter this skill had is gone, as every other skill of its source has one: put the `---` lines back"
                },
            )
            .at(1, 1),
        );
        Arc::new(broken)
    }

    fn is_structural(&self, path: &Path) -> bool {
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() => {
                !self.files.contains_key(path)
                    && path
                        .extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("md"))
            }
            // A folder appeared or changed, or something vanished: walk again.
            _ => true,
        }
    }
}

/// The name (and whether it is a domain index) a cached file is served under, if any.
fn served_key(entry: &Cached) -> Option<(bool, &str)> {
    let served = match &entry.good {
        Some(good) if has_errors(&entry.parsed) => good,
        _ => &entry.parsed,
    };
    (served.kind != FileKind::NotASkill)
        .then_some((served.kind == FileKind::DomainIndex, served.name.as_str()))
}

/// The names an edit touches (skills and domain indexes apart: they share no namespace),
/// looked up by borrowed name, as the fast path asks once for every known file.
#[derive(Default)]
struct Affected([HashSet<String>; 2]);

impl Affected {
    /// Note the name a file is served under, if it is served.
    fn add(&mut self, key: Option<(bool, &str)>) {
        if let Some((is_domain, name)) = key {
            let set = &mut self.0[usize::from(is_domain)];
            if !set.contains(name) {
                set.insert(name.to_owned());
            }
        }
    }

    /// Whether an edit touches this name.
    fn has(&self, (is_domain, name): (bool, &str)) -> bool {
        self.0[usize::from(is_domain)].contains(name)
    }

    /// Whether an edit touches no name.
    fn is_empty(&self) -> bool {
        self.0.iter().all(HashSet::is_empty)
    }

    /// Every name touched, with whether it is a domain index's.
    fn iter(&self) -> impl Iterator<Item = (bool, &str)> {
        let [skills, domains] = &self.0;
        let skills = skills.iter().map(|n| (false, n.as_str()));
        skills.chain(domains.iter().map(|n| (true, n.as_str())))
    }
}

fn has_errors(skill: &Skill) -> bool {
    skill.diagnostics.iter().any(Diagnostic::is_error)
}

/// The last good version of a file, marked as such; `now` is the file as it is on disk.
fn serve_last_good(good: &Arc<Skill>, now: &Skill) -> Arc<Skill> {
    let mut s = (**good).clone();
    let errors = now.diagnostics.iter().filter(|d| d.is_error()).count();
    let first = now
        .diagnostics
        .iter()
        .find(|d| d.is_error())
        .map(|d| match d.line {
            Some(line) => format!(" (first, line {line}: {})", d.message),
            None => format!(" (first: {})", d.message),
        })
        .unwrap_or_default();
    s.diagnostics.push(Diagnostic::warning(
        Code::LastGoodServed,
        &now.path,
        format!(
            "the file now has {errors} error(s){first}; its last version that loaded is still served until it is fixed"
        ),
    ));
    Arc::new(s)
}

/// Build a snapshot from the configuration's sources in one go (no reload state kept).
pub fn load_snapshot(config: &RegistryConfig, generation: u64) -> Snapshot {
    let mut loader = Loader {
        one_shot: true,
        ..Loader::default()
    };
    let snapshot = loader.load(config, generation, Scope::All);
    let snapshot = loader.attach(snapshot, None, crate::manifest::Recompute::All, config);
    let served = crate::trust::apply(Arc::new(snapshot), config);
    Arc::unwrap_or_clone(served)
}

#[cfg(test)]
mod tests;
