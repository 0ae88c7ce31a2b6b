//! Loading: discover every source, parse every file on all cores, resolve precedence, judge
//! eligibility, and build a [`Snapshot`].

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use skill_format::{
    Code, Diagnostic, FileKind, MAX_FILE_BYTES, Origin, ParseOptions, SkillFile, parse_skill,
};

use crate::discover::{Found, discover};
use crate::eligibility;
use crate::snapshot::{Skill, Snapshot, Status};
use crate::{RegistryConfig, Source};

/// One unit of parallel work: a discovered folder or note of one source.
struct Job<'a> {
    source: usize,
    found: &'a Found,
}

/// Read a file with the checks that must come before reading: a regular file, under the cap.
fn read_checked(path: &Path) -> Result<Vec<u8>, Diagnostic> {
    let meta = fs::metadata(path).map_err(|e| {
        Diagnostic::error(
            Code::Unreadable,
            path,
            format!("cannot read the file ({e})"),
        )
    })?;
    if !meta.is_file() {
        return Err(Diagnostic::error(
            Code::NotAFile,
            path,
            "this is a folder, not a file: a skill's SKILL.md must be a regular file",
        ));
    }
    if meta.len() > MAX_FILE_BYTES as u64 {
        return Err(Diagnostic::error(
            Code::FileTooLarge,
            path,
            format!(
                "file is {} bytes; skill files are read up to {MAX_FILE_BYTES} bytes: move detail into references/",
                meta.len()
            ),
        ));
    }
    fs::read(path).map_err(|e| {
        Diagnostic::error(
            Code::Unreadable,
            path,
            format!("cannot read the file ({e})"),
        )
    })
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

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

fn parse_one(path: &Path, origin: Origin, source: &Source, config: &RegistryConfig) -> SkillFile {
    let opts = ParseOptions {
        path: path.to_path_buf(),
        origin: origin.clone(),
        dialect: source.dialect,
        mode: config.mode,
    };
    match read_checked(path) {
        Ok(bytes) => parse_skill(&bytes, &opts),
        Err(d) => {
            let mut f = parse_skill(b"", &opts);
            f.diagnostics = vec![d];
            f.kind = FileKind::Skill;
            f
        }
    }
}

fn to_skill(
    file: SkillFile,
    source_index: usize,
    source: &Source,
    dir: &Path,
    domain: Option<String>,
) -> Skill {
    Skill {
        name: file.name,
        description: file.description,
        dialect: file.dialect,
        kind: file.kind,
        layer: source.layer.clone(),
        source: source_index,
        path: file.path,
        dir: dir.to_path_buf(),
        domain,
        manifest: file.manifest,
        body: file.body,
        body_line: file.body_line,
        status: Status::Loaded,
        diagnostics: file.diagnostics,
    }
}

/// Parse everything one discovered item holds: a skill, or a domain index and its actions.
fn run_job(job: &Job<'_>, config: &RegistryConfig) -> Vec<Skill> {
    let source = &config.sources[job.source];
    match job.found {
        Found::Note { path } => {
            let file = parse_one(path, Origin::Note { stem: stem(path) }, source, config);
            if file.kind == FileKind::NotASkill {
                return Vec::new();
            }
            let mut skill = to_skill(
                file,
                job.source,
                source,
                path.parent().unwrap_or(Path::new("")),
                None,
            );
            skill.name = slug(&skill.name);
            vec![skill]
        }
        Found::Folder {
            dir,
            skill_file,
            lowercase,
            markdown,
        } => {
            let folder_name = file_name(dir);
            let mut file = parse_one(
                skill_file,
                Origin::folder(folder_name.clone()),
                source,
                config,
            );
            if *lowercase {
                file.diagnostics.push(Diagnostic::warning(
                    Code::LowercaseSkillFile,
                    skill_file,
                    "the file is named `skill.md`; the standard name is `SKILL.md`",
                ));
            }
            if file.kind != FileKind::DomainIndex {
                return vec![to_skill(file, job.source, source, dir, None)];
            }
            let mut out = Vec::with_capacity(markdown.len() + 1);
            for action_file in markdown {
                let origin = Origin::Action {
                    domain: folder_name.clone(),
                    action: stem(action_file),
                };
                let f = parse_one(action_file, origin, source, config);
                out.push(to_skill(
                    f,
                    job.source,
                    source,
                    dir,
                    Some(folder_name.clone()),
                ));
            }
            out.push(to_skill(file, job.source, source, dir, Some(folder_name)));
            out
        }
    }
}

/// Run the jobs on up to `threads` threads, keeping job order in the result.
fn run_parallel(jobs: &[Job<'_>], config: &RegistryConfig) -> Vec<Vec<Skill>> {
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        config.threads
    }
    .min(jobs.len().max(1));
    if threads <= 1 || jobs.len() < 64 {
        return jobs.iter().map(|j| run_job(j, config)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, Vec<Skill>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut local = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        local.push((i, run_job(job, config)));
                    }
                    local
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, s)| s).collect()
}

/// Build a snapshot from the configuration's sources.
pub fn load_snapshot(config: &RegistryConfig, generation: u64) -> Snapshot {
    let mut diagnostics = Vec::new();
    let discoveries: Vec<_> = config
        .sources
        .iter()
        .map(|s| discover(&s.path, s.layout, &config.discover))
        .collect();
    let jobs: Vec<Job<'_>> = discoveries
        .iter()
        .enumerate()
        .flat_map(|(source, d)| d.found.iter().map(move |found| Job { source, found }))
        .collect();
    for d in &discoveries {
        diagnostics.extend(d.diagnostics.iter().cloned());
    }
    let parsed = run_parallel(&jobs, config);
    let mut by_name: BTreeMap<(bool, String), Vec<Skill>> = BTreeMap::new();
    for skill in parsed.into_iter().flatten() {
        let is_domain = skill.kind == FileKind::DomainIndex;
        by_name
            .entry((is_domain, skill.name.clone()))
            .or_default()
            .push(skill);
    }
    let mut skills = BTreeMap::new();
    let mut domains = BTreeMap::new();
    let mut shadowed = Vec::new();
    for ((is_domain, name), mut candidates) in by_name {
        // Highest precedence first; within a source, the lexicographically first path wins.
        candidates.sort_by(|a, b| b.source.cmp(&a.source).then_with(|| a.path.cmp(&b.path)));
        let mut iter = candidates.into_iter();
        let Some(mut winner) = iter.next() else {
            continue;
        };
        for mut loser in iter {
            if loser.layer == winner.layer {
                loser.diagnostics.push(Diagnostic::error(
                    Code::DuplicateName,
                    &loser.path,
                    format!(
                        "`{name}` is also defined by {} in the same layer `{}`; that one wins (first path in order): rename one of them",
                        winner.path.display(),
                        winner.layer
                    ),
                ));
            } else {
                loser.diagnostics.push(Diagnostic::warning(
                    Code::Shadowed,
                    &loser.path,
                    format!(
                        "`{name}` is shadowed by {} from the higher layer `{}`",
                        winner.path.display(),
                        winner.layer
                    ),
                ));
            }
            loser.status = Status::Shadowed;
            shadowed.push(Arc::new(loser));
        }
        if winner.diagnostics.iter().any(Diagnostic::is_error) {
            winner.status = Status::Invalid;
        } else if !is_domain {
            let failures = eligibility::check(&name, &winner.manifest, &config.environment);
            if !failures.is_empty() {
                winner.status = Status::Ineligible;
                for f in failures {
                    winner
                        .diagnostics
                        .push(Diagnostic::warning(f.code, &winner.path, f.message));
                }
            }
        }
        let winner = Arc::new(winner);
        if is_domain {
            domains.insert(name, winner);
        } else {
            skills.insert(name, winner);
        }
    }
    for s in skills
        .values()
        .chain(domains.values())
        .chain(shadowed.iter())
    {
        diagnostics.extend(s.diagnostics.iter().cloned());
    }
    diagnostics.sort_by(|a, b| {
        a.path
            .cmp(&b.path)
            .then(a.line.cmp(&b.line))
            .then(a.column.cmp(&b.column))
            .then(a.code.cmp(&b.code))
    });
    shadowed.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    Snapshot::new(
        generation,
        skills,
        domains,
        shadowed,
        diagnostics,
        config.sources.clone(),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("Meeting Notes Helper"), "meeting-notes-helper");
        assert_eq!(slug("  Home -- Automation! "), "home-automation");
        assert_eq!(slug("!!!"), "");
    }
}
