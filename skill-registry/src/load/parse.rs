//! Parsing the files of a load: the request each found file makes, the parse on all cores
//! (or as its folder was listed), and what a parse result becomes as a [`Skill`].
//!
//! A load of every source parses each skill file as its folder is listed, on whichever walk
//! thread lists it. That visitor reads the file with the folder's own descriptor, then parses,
//! hashes and scans it in one go. Other files (notes, action files, a reload's paths) are
//! parsed after the walks, on all cores (`parallel.rs`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use skill_format::{Code, Diagnostic, FileKind, Origin, SkillFile};

use super::file::{Listed, file_name, parse_one, to_skill, unparsed_file};
use super::parallel::{Job, run_parallel_with};
use super::{Cached, Loader, has_errors, serve_last_good, slug};
use crate::discover::Prefetched;
use crate::manifest::{HashCache, Primed};
use crate::skill::Skill;
use crate::{NAMESPACE_SEPARATOR, RegistryConfig, Source};

/// One file to parse: where it is, what decides its derived name, and its source.
pub(super) struct Request {
    pub(super) path: PathBuf,
    /// How the file was found: listed as a regular file, or not known to be one.
    pub(super) listed: Listed,
    pub(super) origin: Origin,
    pub(super) source: usize,
    pub(super) dir: PathBuf,
    pub(super) domain: Option<String>,
    /// The file's folder held nothing else when a load that walks every source listed it
    /// just now: its whole manifest follows from the file's own digest and scan.
    pub(super) lone: bool,
    /// The file parsed already, as its folder was listed ([`parse_listed`]): taken by
    /// [`Loader::parse_all`] instead of parsing it again.
    pub(super) parsed: Mutex<Option<Box<Parsed>>>,
}

/// A file as a parse worker leaves it: the skill, and its digest and scan when the file was
/// hashed from the bytes its parse read.
pub(super) struct Parsed {
    pub(super) skill: Arc<Skill>,
    pub(super) primed: Option<Primed>,
}

impl From<Skill> for Parsed {
    fn from(skill: Skill) -> Self {
        Parsed {
            skill: Arc::new(skill),
            primed: None,
        }
    }
}

impl Job for Request {
    fn crashed(&self, config: &RegistryConfig) -> Skill {
        crashed_request(self, config)
    }
}

impl Loader {
    /// Parse (or reuse) each request's file, recording the result in `next`. Returns the
    /// skill to use for each request, in order.
    pub(super) fn parse_all(
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
        // Files parsed as their folders were listed need no parse here.
        let done: Vec<Option<Box<Parsed>>> = requests
            .iter()
            .map(|r| r.parsed.lock().ok().and_then(|mut p| p.take()))
            .collect();
        let to_parse: Vec<&Request> = requests
            .iter()
            .zip(reuse.iter().zip(&done))
            .filter(|(_, (c, d))| c.is_none() && d.is_none())
            .map(|(r, _)| r)
            .collect();
        // When the snapshot gets manifests, each file is hashed and scanned from the bytes
        // its parse read ([`parse_one`]); the digests are handed to the loader's cache.
        let digests = crate::manifest::wanted(config).then_some(&self.hashes);
        let parse = |req: &Request, config: &RegistryConfig| {
            let (skill, primed) = parse_request_priming(req, config, digests);
            Parsed {
                skill: Arc::new(skill),
                primed,
            }
        };
        let mut parsed = run_parallel_with(&to_parse, config, &parse).into_iter();
        primed.reserve(requests.len());
        let mut done = done.into_iter();
        let mut out = Vec::with_capacity(requests.len());
        for (req, cached) in requests.iter().zip(reuse) {
            let done = done.next().flatten();
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
            let Parsed { skill, primed: p } = match done {
                Some(done) => *done,
                None => parsed
                    .next()
                    .unwrap_or_else(|| Parsed::from(crashed_request(req, config))),
            };
            primed.extend(p);
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
            if !self.one_shot {
                next.insert(
                    req.path.clone(),
                    Cached {
                        origin: req.origin.clone(),
                        source: req.source,
                        parsed: skill,
                        good,
                    },
                );
            }
            out.push(served);
        }
        out
    }
}

/// Parse a skill file of source `source` read with its folder's listing (`dir`, `file`), as
/// [`Loader::parse_all`] parses the request the walk's find makes of it: the walk's
/// visitor, run on the thread that listed the folder.
pub(super) fn parse_listed(
    source: usize,
    (dir, file): (&Path, &Path),
    read: Prefetched<'_>,
    lone: bool,
    config: &RegistryConfig,
    digests: Option<&HashCache>,
) -> Parsed {
    let (parsed, primed) = parse_one(
        file,
        (Listed::Regular, Some(read)),
        Origin::folder(file_name(dir)),
        &config.sources[source],
        config,
        digests.map(|cache| (cache, lone)),
    );
    let skill = finish(parsed, (source, OriginKind::Folder), dir, None, config);
    Parsed {
        skill: Arc::new(skill),
        primed,
    }
}

pub(super) fn parse_request(req: &Request, config: &RegistryConfig) -> Skill {
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
        (req.listed, None),
        req.origin.clone(),
        source,
        config,
        digests.map(|cache| (cache, req.lone)),
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
    let kind = match req.origin {
        Origin::Note { .. } => OriginKind::Note,
        Origin::Folder { .. } => OriginKind::Folder,
        Origin::Action { .. } => OriginKind::Action,
    };
    finish(
        file,
        (req.source, kind),
        &req.dir,
        req.domain.clone(),
        config,
    )
}

/// Refuse a name that holds the namespace separator (it would pass for a namespaced name,
/// and could take one from another source), then put the skill (and its domain) in its
/// source's namespace, if it has one.
fn namespaced(skill: &mut Skill, source: &Source) {
    if skill.name.contains(NAMESPACE_SEPARATOR) {
        let message = format!(
            "name `{}` holds `{NAMESPACE_SEPARATOR}`, which separates a source's namespace from a skill's name (`namespace:name`): rename the skill, and give its source a namespace in the configuration instead",
            skill.name
        );
        skill
            .diagnostics
            .push(Diagnostic::error(Code::InvalidName, &skill.path, message));
    }
    if let Some(ns) = &source.namespace {
        skill.name = ns.qualify(&skill.name);
        if let Some(domain) = &mut skill.domain {
            *domain = ns.qualify(domain);
        }
    }
}

/// What [`finish`] needs of a request's origin.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OriginKind {
    Note,
    Folder,
    Action,
}

/// A parsed file as a [`Skill`] of source `source_index`, found in `dir`: named and placed
/// as its origin says.
fn finish(
    file: SkillFile,
    (source_index, origin): (usize, OriginKind),
    dir: &Path,
    domain: Option<String>,
    config: &RegistryConfig,
) -> Skill {
    let source = &config.sources[source_index];
    let mut skill = to_skill(file, source_index, source, dir, domain);
    if origin == OriginKind::Note {
        skill.name = slug(&skill.name);
    }
    if skill.kind == FileKind::DomainIndex {
        skill.domain = Some(file_name(dir));
    }
    if skill.kind != FileKind::NotASkill {
        namespaced(&mut skill, source);
    }
    // The skill's path is its request's (the parse keeps the path it was given).
    if origin == OriginKind::Folder && skill.path.file_name().is_some_and(|n| n == "skill.md") {
        let warning = Diagnostic::warning(
            Code::LowercaseSkillFile,
            &skill.path,
            "the file is named `skill.md`; the standard name is `SKILL.md`",
        );
        skill.diagnostics.push(warning);
    }
    skill
}
