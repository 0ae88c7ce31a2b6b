//! Loading: discover every source, parse every file on all cores, resolve precedence, judge
//! eligibility, and build a [`Snapshot`].
//!
//! A [`Loader`] keeps what the previous load found (each source's discovery and each file's
//! parse), so a reload re-reads only what changed: files named as changed are parsed again,
//! a source is walked again only when a change could add or remove a skill, and everything
//! else is reused as is. When a file that loaded before now has errors, its last good version
//! stays served (with a `last-good-served` warning) until the file is valid again.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;

use skill_format::{Code, Diagnostic, FileKind, Origin, SkillFile};

use crate::RegistryConfig;
use crate::discover::{Discovery, Found, discover_on};
use crate::manifest::{HashCache, Primed};
use crate::skill::Skill;
use crate::snapshot::{Snapshot, sort_diagnostics};

mod file;
mod parallel;
mod resolve;

use file::{Listed, file_name, parse_one, stem, to_skill, unparsed_file};

use parallel::run_parallel_with;
use resolve::{resolve, resolve_name};

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

/// One file to parse: where it is, what decides its derived name, and its source.
struct Request {
    path: PathBuf,
    /// How the file was found: listed as a regular file, or not known to be one.
    listed: Listed,
    origin: Origin,
    source: usize,
    dir: PathBuf,
    domain: Option<String>,
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
        for (i, source) in config.sources.iter().enumerate() {
            let walk = match (&self.discoveries[i], scope) {
                (None, _) | (_, Scope::All) => true,
                (Some(_), Scope::Paths(paths)) => paths
                    .iter()
                    .any(|p| touches(&source.path, p) && self.is_structural(p)),
            };
            if walk {
                walked[i] = true;
                self.discoveries[i] = Some(discover_on(
                    &source.path,
                    source.layout,
                    &config.discover,
                    config.threads,
                ));
            }
        }
        let fresh = |path: &Path| match scope {
            Scope::All => true,
            Scope::Paths(paths) => paths.contains(path),
        };
        let mut next: HashMap<PathBuf, Cached> = HashMap::with_capacity(self.files.len());
        let mut extra = Vec::new();

        // Phase A: every SKILL.md and note.
        let mut first = Vec::new();
        for (source, d) in self.discoveries.iter().enumerate() {
            let Some(d) = d else { continue };
            for found in &d.found {
                first.push(match found {
                    Found::Note { path } => Request {
                        path: path.clone(),
                        listed: Listed::Unknown,
                        origin: Origin::Note { stem: stem(path) },
                        source,
                        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
                        domain: None,
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
                    },
                });
            }
        }
        // Sized up front: growing rehashes every path key, and a `Path` hashes by component.
        next.reserve(first.len());
        let mut primed = Vec::new();
        let first_parsed =
            self.parse_all(&first, config, &fresh, &mut next, &mut extra, &mut primed);

        // Phase B: the action files of every domain index.
        let mut second = Vec::new();
        let mut found_iter = self
            .discoveries
            .iter()
            .flat_map(|d| d.iter().flat_map(|d| d.found.iter()));
        for (req, parsed) in first.iter().zip(&first_parsed) {
            let found = found_iter.next();
            let Some(Found::Folder { markdown, .. }) = found else {
                continue;
            };
            if parsed.kind != FileKind::DomainIndex {
                continue;
            }
            let domain = file_name(&req.dir);
            for action in markdown {
                second.push(Request {
                    path: action.clone(),
                    listed: Listed::Unknown,
                    origin: Origin::Action {
                        domain: domain.clone(),
                        action: stem(action),
                    },
                    source: req.source,
                    dir: req.dir.clone(),
                    domain: Some(domain.clone()),
                });
            }
        }
        let second_parsed =
            self.parse_all(&second, config, &fresh, &mut next, &mut extra, &mut primed);
        self.hashes.prime(primed);

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
        resolve(candidates, diagnostics, config, generation)
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
        let lone: Vec<&HashSet<OsString>> = if self.walked_all {
            self.discoveries.iter().flatten().map(|d| &d.lone).collect()
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
            if self.files.contains_key(p) {
                edited.push(p.clone());
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
        let mut affected: HashSet<(bool, String)> = HashSet::new();
        let mut touched_paths: HashSet<PathBuf> = HashSet::new();
        for (path, skill) in edited.iter().zip(parsed) {
            let Some(entry) = self.files.get_mut(path) else {
                continue;
            };
            if let Some(key) = served_key(entry) {
                affected.insert(key);
            }
            entry.good = if skill.kind == FileKind::NotASkill {
                None
            } else if has_errors(&skill) {
                entry.good.clone()
            } else {
                Some(skill.clone())
            };
            entry.parsed = skill;
            if let Some(key) = served_key(entry) {
                affected.insert(key);
            }
            touched_paths.insert(path.clone());
        }
        if affected.is_empty() {
            return None;
        }
        // Every candidate of the affected names, as served.
        let mut candidates: BTreeMap<(bool, String), Vec<Arc<Skill>>> = BTreeMap::new();
        let mut extra = Vec::new();
        for entry in self.files.values() {
            let Some(key) = served_key(entry) else {
                continue;
            };
            if !affected.contains(&key) {
                continue;
            }
            let served = match &entry.good {
                Some(good) if has_errors(&entry.parsed) => {
                    extra.extend(entry.parsed.diagnostics.iter().cloned());
                    serve_last_good(good, &entry.parsed)
                }
                _ => entry.parsed.clone(),
            };
            touched_paths.insert(served.path.clone());
            candidates.entry(key).or_default().push(served);
        }
        let mut skills = previous.entry_map().clone();
        let mut domains = previous.domain_map().clone();
        let mut shadowed: Vec<Arc<Skill>> = Vec::with_capacity(previous.shadowed().len());
        for s in previous.shadowed() {
            let key = (s.kind == FileKind::DomainIndex, s.name.clone());
            if affected.contains(&key) {
                touched_paths.insert(s.path.clone());
            } else {
                shadowed.push(s.clone());
            }
        }
        for (is_domain, name) in &affected {
            let map = if *is_domain {
                &mut domains
            } else {
                &mut skills
            };
            if let Some(old) = map.remove(name) {
                touched_paths.insert(old.path.clone());
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
            .filter(|d| !touched_paths.contains(&d.path))
            .cloned()
            .collect();
        for d in self.discoveries.iter().flatten() {
            diagnostics.extend(
                d.diagnostics
                    .iter()
                    .filter(|d| touched_paths.contains(&d.path))
                    .cloned(),
            );
        }
        diagnostics.extend(fresh);
        diagnostics.extend(extra);
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

    /// Parse (or reuse) each request's file, recording the result in `next`. Returns the
    /// skill to use for each request, in order.
    fn parse_all(
        &self,
        requests: &[Request],
        config: &RegistryConfig,
        fresh: &dyn Fn(&Path) -> bool,
        next: &mut HashMap<PathBuf, Cached>,
        extra: &mut Vec<Diagnostic>,
        primed: &mut Vec<Primed>,
    ) -> Vec<Arc<Skill>> {
        let reuse: Vec<Option<&Cached>> = requests
            .iter()
            .map(|r| {
                self.files
                    .get(&r.path)
                    .filter(|c| !fresh(&r.path) && c.origin == r.origin && c.source == r.source)
            })
            .collect();
        let to_parse: Vec<&Request> = requests
            .iter()
            .zip(&reuse)
            .filter(|(_, c)| c.is_none())
            .map(|(r, _)| r)
            .collect();
        // When the snapshot gets manifests, each file is hashed and scanned from the bytes
        // its parse read ([`parse_one`]); the digests are handed to the loader's cache.
        let digests = crate::manifest::wanted(config).then_some(&self.hashes);
        let found = Mutex::new(Vec::new());
        let parse = |req: &Request, config: &RegistryConfig| {
            let (skill, p) = parse_request_priming(req, config, digests);
            if let Some(p) = p {
                if let Ok(mut found) = found.lock() {
                    found.push(p);
                }
            }
            Arc::new(skill)
        };
        let mut parsed = run_parallel_with(&to_parse, config, &parse).into_iter();
        primed.extend(found.into_inner().unwrap_or_default());
        let mut out = Vec::with_capacity(requests.len());
        for (req, cached) in requests.iter().zip(reuse) {
            if let Some(c) = cached {
                let served = match &c.good {
                    Some(good) if has_errors(&c.parsed) => {
                        extra.extend(c.parsed.diagnostics.iter().cloned());
                        serve_last_good(good, &c.parsed)
                    }
                    _ => c.parsed.clone(),
                };
                next.insert(
                    req.path.clone(),
                    Cached {
                        origin: c.origin.clone(),
                        source: c.source,
                        parsed: c.parsed.clone(),
                        good: c.good.clone(),
                    },
                );
                out.push(served);
                continue;
            }
            // `run_parallel_with` answers every request; should one ever be missing, the file is
            // reported, never dropped.
            let skill = parsed
                .next()
                .unwrap_or_else(|| Arc::new(crashed_request(req, config)));
            let previous = self
                .files
                .get(&req.path)
                .filter(|c| c.origin == req.origin && c.source == req.source);
            let skill = match previous {
                Some(c) => self.mark_broken_edit(c.source, skill, c.good.as_ref()),
                None => skill,
            };
            let good = if skill.kind == FileKind::NotASkill {
                None
            } else if has_errors(&skill) {
                previous.and_then(|c| c.good.clone())
            } else {
                Some(skill.clone())
            };
            let served = match &good {
                Some(g) if has_errors(&skill) => {
                    extra.extend(skill.diagnostics.iter().cloned());
                    serve_last_good(g, &skill)
                }
                _ => skill.clone(),
            };
            next.insert(
                req.path.clone(),
                Cached {
                    origin: req.origin.clone(),
                    source: req.source,
                    parsed: skill,
                    good,
                },
            );
            out.push(served);
        }
        out
    }
}

/// Whether `path` lies under (or above) a source root, so a change there concerns it.
fn touches(root: &Path, path: &Path) -> bool {
    path.starts_with(root) || root.starts_with(path)
}

/// The name (and whether it is a domain index) a cached file is served under, if any.
fn served_key(entry: &Cached) -> Option<(bool, String)> {
    let served = match &entry.good {
        Some(good) if has_errors(&entry.parsed) => good,
        _ => &entry.parsed,
    };
    (served.kind != FileKind::NotASkill)
        .then(|| (served.kind == FileKind::DomainIndex, served.name.clone()))
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

fn parse_request(req: &Request, config: &RegistryConfig) -> Skill {
    parse_request_priming(req, config, None).0
}

/// [`parse_request`], and the file's digest and scan when `digests` is given
/// ([`parse_one`]).
fn parse_request_priming(
    req: &Request,
    config: &RegistryConfig,
    digests: Option<&HashCache>,
) -> (Skill, Option<Primed>) {
    let source = &config.sources[req.source];
    let (file, primed) = parse_one(
        &req.path,
        req.listed,
        req.origin.clone(),
        source,
        config,
        digests,
    );
    (finish_request(req, config, file), primed)
}

/// What a file whose parse crashed (a bug in the parser) is loaded as: an entry with an
/// error naming the file, so the crash costs that one file and is reported, never a skill
/// dropped or mislabelled.
fn crashed_request(req: &Request, config: &RegistryConfig) -> Skill {
    let source = &config.sources[req.source];
    let diagnostic = Diagnostic::error(
        Code::Unreadable,
        &req.path,
        "the parser failed on this file (an internal error: please report it with the file); it is not loaded",
    );
    let file = unparsed_file(&req.path, req.origin.clone(), source, config, diagnostic);
    finish_request(req, config, file)
}

fn finish_request(req: &Request, config: &RegistryConfig, file: SkillFile) -> Skill {
    let source = &config.sources[req.source];
    let mut skill = to_skill(file, req.source, source, &req.dir, req.domain.clone());
    if let Origin::Note { .. } = req.origin {
        skill.name = slug(&skill.name);
    }
    if skill.kind == FileKind::DomainIndex {
        skill.domain = Some(file_name(&req.dir));
    }
    if let Origin::Folder { .. } = req.origin {
        if req.path.file_name().is_some_and(|n| n == "skill.md") {
            skill.diagnostics.push(Diagnostic::warning(
                Code::LowercaseSkillFile,
                &req.path,
                "the file is named `skill.md`; the standard name is `SKILL.md`",
            ));
        }
    }
    skill
}

/// Build a snapshot from the configuration's sources in one go (no reload state kept).
pub fn load_snapshot(config: &RegistryConfig, generation: u64) -> Snapshot {
    let mut loader = Loader::default();
    let snapshot = loader.load(config, generation, Scope::All);
    let snapshot = loader.attach(snapshot, None, crate::manifest::Recompute::All, config);
    let served = crate::trust::apply(Arc::new(snapshot), config);
    Arc::unwrap_or_clone(served)
}

#[cfg(test)]
mod tests;
