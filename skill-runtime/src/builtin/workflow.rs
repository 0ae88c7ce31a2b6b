//! `workflow.build` (markdown-first 9): write a new workflow skill into a writable source.
//!
//! Flags: `--name` and `--description` (required), `--domain` (default
//! [`DEFAULT_WORKFLOW_DOMAIN`]), `--steps`, `--schedule`, `--overwrite` (replace a workflow
//! this handler could have written: same file, no `handler`). Steps, in order; any
//! refusal happens before anything is written:
//!
//! 1. the name and the domain match `^[a-z][a-z0-9_]*$` (at most
//!    [`MAX_WORKFLOW_NAME_CHARS`] characters each), so no path separator, `..` or dot can
//!    reach the file system; `all` and `help` are reserved (`get_skill` routing), and so
//!    are the built-in handlers' names ([`BUILTIN_HANDLERS`](super::BUILTIN_HANDLERS));
//!    the domain must be one of the configured workflow domains
//!    ([`RuntimeConfig::workflow_domains`](crate::exec::RuntimeConfig::workflow_domains),
//!    default [`DEFAULT_WORKFLOW_DOMAIN`]; `not_a_workflow_domain`), so a request cannot
//!    write into another domain's folder;
//! 2. `{domain}.{name}` must not exist in the registry (whatever its status or layer) nor
//!    as a file on disk (`conflict`);
//! 3. a `--schedule` must parse as a crontab expression (`invalid_schedule`);
//! 4. the target is a writable source of the registry: the one that already holds the
//!    domain, else the highest-precedence writable source (`no_writable_source`); the
//!    domain folder must resolve inside it (no symbolic link out, `unsafe_path`);
//! 5. the generated file (the seed's template) is parsed with `skill-format` and must be a
//!    loadable skill (`invalid_workflow`);
//! 6. it is written atomically (temporary file in the same folder, fsync, then a hard
//!    link that fails if the name was taken meanwhile, or a rename for `--overwrite`, then
//!    the folder fsynced); the domain's `SKILL.md` index is regenerated the same way
//!    (its `## Available Skills` table rewritten from the workflow files in the domain's
//!    folder, read from disk, not from the request or the snapshot, so an index a crash
//!    left behind catches up on the next build; everything else kept; created from the
//!    snapshot's index or a generated one when the folder has none); if the index cannot
//!    be written the new file is removed again;
//! 7. `Registry::reload_paths` with both files, so the workflow is visible at once and
//!    its `schedule` reaches the scheduler through the change set. If it does not load,
//!    both files are rolled back (`not_loaded`).
//!
//! The answer is JSON: `{name, path, index, schedule, generation, message}`.
//!
//! Temporary files are named `.{file}.{pid}.{n}.tmp`. One left by a process killed mid-
//! write is removed when the handler is created (the runtime starts) and after every
//! reload of the registry that changes something: in the workflow domains' folders of the writable sources, a
//! file of that pattern whose process is gone, or (our own process) when no build is
//! under way, or that is older than [`STALE_TMP_AGE`](crate::builtin::STALE_TMP_AGE).

use std::fs;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use skill_format::{FileKind, Origin, ParseOptions, RESERVED_ACTIONS, parse_skill};
use skill_registry::{Layout, Registry, Snapshot, Subscription};
use skill_scheduler::{Schedule, Utc};

use crate::builtin::{BUILTIN_HANDLERS, text_flag};
use crate::exec::{BoxError, Call, HandlerError, Output};

pub use crate::builtin::workflow_tmp::STALE_TMP_AGE;
use crate::builtin::workflow_tmp::{Place, clean_stale_tmp, write_atomic};
pub use crate::exec::DEFAULT_WORKFLOW_DOMAIN;
/// Longest workflow name (and domain name), in characters.
pub const MAX_WORKFLOW_NAME_CHARS: usize = 64;
/// Longest `--steps` text, in bytes.
pub const MAX_STEPS_BYTES: usize = 16 * 1024;
/// Description of a domain index this handler creates from nothing.
pub const GENERATED_INDEX_DESCRIPTION: &str = "User/assistant-created workflows";

/// The `workflow.build` handler.
#[derive(Debug, Clone)]
pub struct WorkflowBuild {
    registry: Arc<Registry>,
    /// The domains workflows may be written to.
    domains: Arc<[String]>,
    /// One build at a time: index regeneration reads then writes.
    lock: Arc<Mutex<()>>,
    /// Cleans stale temporary files after every reload while the handler lives.
    _cleaner: Arc<Subscription>,
}

impl WorkflowBuild {
    /// A handler writing into `registry`'s writable sources, in the domain
    /// [`DEFAULT_WORKFLOW_DOMAIN`] only.
    pub fn new(registry: Arc<Registry>) -> Self {
        WorkflowBuild::with_domains(registry, vec![DEFAULT_WORKFLOW_DOMAIN.to_owned()])
    }

    /// A handler writing into `registry`'s writable sources, in these domains only. Stale
    /// temporary files in their folders are removed now and after every reload.
    pub fn with_domains(registry: Arc<Registry>, domains: Vec<String>) -> Self {
        let domains: Arc<[String]> = domains.into();
        let lock = Arc::new(Mutex::new(()));
        let folders: Vec<PathBuf> = registry
            .config()
            .sources
            .iter()
            .filter(|s| s.writable && s.layout == Layout::Folders)
            .flat_map(|s| domains.iter().map(|d| s.path.join(d)))
            .collect();
        // At start nothing of ours is in flight.
        clean_stale_tmp(&folders, true);
        let cleaner = {
            let lock = Arc::downgrade(&lock);
            registry.subscribe(move |_| {
                // A build holds the lock while it writes (and reloads, which calls this on
                // the same thread): then our own files are in flight.
                let idle = lock.upgrade().is_some_and(|l| l.try_lock().is_ok());
                clean_stale_tmp(&folders, idle);
            })
        };
        WorkflowBuild {
            registry,
            domains,
            lock,
            _cleaner: Arc::new(cleaner),
        }
    }
}

impl tower::Service<Call> for WorkflowBuild {
    type Response = Output;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Output, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let res = tokio::task::spawn_blocking(move || {
                let _guard = match this.lock.lock() {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
                build(&this.registry, &this.domains, &call)
            })
            .await
            .map_err(|e| HandlerError::new("write_failed", e.to_string()))?;
            res.map_err(Into::into)
        })
    }
}

fn err(code: &str, message: impl Into<String>) -> HandlerError {
    HandlerError::new(code, message)
}

/// Check a name part (workflow name or domain) against `^[a-z][a-z0-9_]*$`.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), HandlerError> {
    if RESERVED_ACTIONS.contains(&name) {
        return Err(err(
            "reserved_name",
            format!("Name '{name}' is reserved (used by get_skill routing)"),
        ));
    }
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(err(
            "invalid_name",
            format!(
                "{what} `{name}` is not allowed: use lowercase letters, digits and underscores, starting with a letter"
            ),
        ));
    }
    if name.chars().count() > MAX_WORKFLOW_NAME_CHARS {
        return Err(err(
            "invalid_name",
            format!("{what} `{name}` is longer than {MAX_WORKFLOW_NAME_CHARS} characters"),
        ));
    }
    Ok(())
}

struct Request {
    name: String,
    domain: String,
    full: String,
    description: String,
    steps: Option<String>,
    schedule: Option<String>,
    overwrite: bool,
}

fn request(call: &Call, domains: &[String]) -> Result<Request, HandlerError> {
    let flags = &call.invocation.flags;
    let name = text_flag(flags, "name")?;
    let description = text_flag(flags, "description")?;
    let missing: Vec<&str> = [("--name", &name), ("--description", &description)]
        .iter()
        .filter(|(_, v)| v.as_deref().is_none_or(|s| s.trim().is_empty()))
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        return Err(err(
            "missing_flags",
            format!("missing required flags: {}", missing.join(", ")),
        ));
    }
    let name = name.unwrap_or_default().trim().to_owned();
    let description = description
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let domain = text_flag(flags, "domain")?
        .map(|d| d.trim().to_owned())
        .unwrap_or_else(|| DEFAULT_WORKFLOW_DOMAIN.to_owned());
    check_name("workflow name", &name)?;
    check_name("domain", &domain)?;
    let full = format!("{domain}.{name}");
    if BUILTIN_HANDLERS.contains(&full.as_str()) {
        return Err(err(
            "reserved_name",
            format!("`{full}` is a built-in handler and cannot be replaced by a workflow"),
        ));
    }
    if !domains.contains(&domain) {
        return Err(err(
            "not_a_workflow_domain",
            format!(
                "`{domain}` is not a workflow domain: workflows may be written to {} (the runtime's workflow_domains)",
                if domains.is_empty() {
                    "no domain".to_owned()
                } else {
                    domains.join(", ")
                }
            ),
        ));
    }
    if description.chars().count() > skill_format::MAX_DESCRIPTION_CHARS {
        return Err(err(
            "invalid_value",
            format!(
                "--description is longer than {} characters",
                skill_format::MAX_DESCRIPTION_CHARS
            ),
        ));
    }
    let steps = text_flag(flags, "steps")?.filter(|s| !s.trim().is_empty());
    if steps.as_ref().is_some_and(|s| s.len() > MAX_STEPS_BYTES) {
        return Err(err(
            "invalid_value",
            format!("--steps is longer than {MAX_STEPS_BYTES} bytes"),
        ));
    }
    let schedule = text_flag(flags, "schedule")?.map(|s| s.trim().to_owned());
    if let Some(s) = &schedule {
        if let Err(e) = Schedule::parse(s) {
            return Err(err(
                "invalid_schedule",
                format!("--schedule `{s}` is not a valid cron expression: {e}"),
            ));
        }
    }
    Ok(Request {
        name,
        domain,
        full,
        description,
        steps,
        schedule,
        overwrite: call.invocation.flags.contains("overwrite"),
    })
}

/// The writable source to write `domain` into: the one holding the domain, else the
/// highest-precedence writable one.
fn target_source(
    registry: &Registry,
    snapshot: &Snapshot,
    domain: &str,
) -> Result<PathBuf, HandlerError> {
    let sources = &registry.config().sources;
    let writable = |i: usize| {
        sources
            .get(i)
            .filter(|s| s.writable && s.layout == Layout::Folders)
    };
    let holding = snapshot
        .domain(domain)
        .map(|d| d.source)
        .into_iter()
        .chain(
            snapshot
                .skills()
                .filter(|s| s.domain.as_deref() == Some(domain))
                .map(|s| s.source),
        )
        .filter_map(writable)
        .max_by_key(|s| sources.iter().position(|x| x == *s));
    if let Some(s) = holding {
        return Ok(s.path.clone());
    }
    sources
        .iter()
        .rev()
        .find(|s| s.writable && s.layout == Layout::Folders)
        .map(|s| s.path.clone())
        .ok_or_else(|| {
            err(
                "no_writable_source",
                "no writable skill source is configured: mark a source `writable` to save workflows",
            )
        })
}

fn generate(req: &Request) -> String {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
    let mut fm = format!(
        "---\nname: {}\ndescription: {}\n",
        req.full,
        quote(&req.description)
    );
    if let Some(s) = &req.schedule {
        fm.push_str(&format!("schedule: {}\n", quote(s)));
    }
    fm.push_str(&format!(
        "author: assistant\ncreated: {}\n---\n",
        Utc::now().format("%Y-%m-%d")
    ));
    let steps = req
        .steps
        .clone()
        .unwrap_or_else(|| "Execute the skill as described above.".to_owned());
    format!(
        "{fm}\n# {full}\n\n{desc}\n\n## Usage\n\n{full}\n\n## Behavior\n\n{steps}\n\n## Examples\n\n{full}\n",
        full = req.full,
        desc = req.description,
        steps = steps.trim_end(),
    )
}

/// One table cell: one line, `|` escaped.
fn cell(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The `## Available Skills` section for these (name, description) rows.
fn table(rows: &[(String, String)]) -> String {
    let mut t =
        String::from("## Available Skills\n\n| Skill | Description |\n|-------|-------------|\n");
    for (n, d) in rows {
        t.push_str(&format!("| {} | {} |\n", cell(n), cell(d)));
    }
    t
}

/// `text` with its `## Available Skills` section replaced by `section` (appended when it
/// has none). Everything else is kept byte for byte.
fn replace_section(text: &str, section: &str) -> String {
    let mut out = String::with_capacity(text.len() + section.len());
    let mut in_fence = false;
    let mut state = 0u8; // 0 before, 1 inside, 2 after
    for line in text.split_inclusive('\n') {
        let t = line.trim_end();
        if t.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let heading = !in_fence && (t.starts_with("## ") || t.starts_with("# "));
        match state {
            0 if !in_fence && t == "## Available Skills" => {
                state = 1;
                out.push_str(section);
            }
            1 if heading => {
                state = 2;
                out.push('\n');
                out.push_str(line);
            }
            1 => {}
            _ => out.push_str(line),
        }
    }
    if state == 0 {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out.push_str(section);
    }
    out
}

fn title_of(domain: &str) -> String {
    let mut c = domain.chars();
    match c.next() {
        Some(f) => f
            .to_uppercase()
            .chain(c)
            .collect::<String>()
            .replace('_', " "),
        None => String::new(),
    }
}

/// The table rows of a domain folder: every loadable action file in it (`*.md` but
/// `SKILL.md`, not hidden, a regular file, not a link), read from disk, by name.
fn folder_rows(dir: &Path, domain: &str) -> io::Result<Vec<(String, String)>> {
    let mut rows = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Some(action) = name.strip_suffix(".md") else {
            continue;
        };
        if name == "SKILL.md" || name.starts_with('.') || action.is_empty() {
            continue;
        }
        let path = entry.path();
        let is_file = path
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_file());
        if !is_file || check_name("action", action).is_err() {
            continue;
        }
        let Ok(bytes) = fs::read(&path) else {
            continue;
        };
        let parsed = parse_skill(
            &bytes,
            &ParseOptions::new(
                &path,
                Origin::Action {
                    domain: domain.to_owned(),
                    action: action.to_owned(),
                },
            ),
        );
        if parsed.is_loadable() && parsed.kind == FileKind::Skill {
            rows.push((parsed.name, parsed.description));
        }
    }
    rows.sort();
    rows.dedup_by(|a, b| a.0 == b.0);
    Ok(rows)
}

/// The regenerated index text for `domain`, its table from the folder's files.
fn index_text(
    existing: Option<String>,
    snapshot: &Snapshot,
    req: &Request,
    rows: &[(String, String)],
) -> String {
    let section = table(rows);
    let base = existing.unwrap_or_else(|| match snapshot.domain(&req.domain) {
        Some(d) => format!(
            "---\ndomain: {}\ndescription: {}\n---\n{}",
            req.domain,
            serde_json::to_string(&d.description).unwrap_or_default(),
            d.body
        ),
        None => format!(
            "---\ndomain: {}\ndescription: {GENERATED_INDEX_DESCRIPTION}\n---\n\n# {}\n\n{GENERATED_INDEX_DESCRIPTION}.\n",
            req.domain,
            title_of(&req.domain)
        ),
    });
    replace_section(&base, &section)
}

fn io_err(path: &Path, e: &io::Error) -> HandlerError {
    err(
        "write_failed",
        format!("cannot write {}: {e}", path.display()),
    )
}

fn build(registry: &Registry, domains: &[String], call: &Call) -> Result<Output, HandlerError> {
    let req = request(call, domains)?;
    let snapshot = registry.snapshot();
    let source = target_source(registry, &snapshot, &req.domain)?;
    let root = source.canonicalize().map_err(|e| {
        err(
            "no_writable_source",
            format!(
                "the writable source {} cannot be used: {e}",
                source.display()
            ),
        )
    })?;
    let domain_dir = source.join(&req.domain);
    let target = domain_dir.join(format!("{}.md", req.name));
    let index = domain_dir.join("SKILL.md");

    // Conflicts: any entry of that name, shadowed ones included, or a file on disk.
    let existing = snapshot.entry(&req.full).cloned().or_else(|| {
        snapshot
            .shadowed()
            .iter()
            .find(|s| s.name == req.full)
            .cloned()
    });
    let replacing = match &existing {
        None => false,
        Some(s) if req.overwrite && s.path == target && s.manifest.handler.is_none() => true,
        Some(s) => {
            return Err(err(
                "conflict",
                format!(
                    "Skill '{}' already exists (layer {}). Choose a different name{}.",
                    req.full,
                    s.layer,
                    if req.overwrite {
                        ": --overwrite only replaces a workflow file in the writable source"
                    } else {
                        ""
                    }
                ),
            ));
        }
    };
    match fs::symlink_metadata(&target) {
        Ok(m) if replacing && m.file_type().is_file() => {}
        Ok(_) => {
            return Err(err(
                "conflict",
                format!(
                    "{}/{}.md already exists in the writable source. Choose a different name.",
                    req.domain, req.name
                ),
            ));
        }
        Err(_) => {}
    }

    // The domain folder must be a real folder inside the source.
    let mut created_dir = false;
    match fs::symlink_metadata(&domain_dir) {
        Ok(m) if m.file_type().is_dir() => {}
        Ok(_) => {
            return Err(err(
                "unsafe_path",
                format!(
                    "{} is not a plain folder (a symbolic link or a file); refusing to write through it",
                    domain_dir.display()
                ),
            ));
        }
        Err(_) => {
            fs::create_dir(&domain_dir).map_err(|e| io_err(&domain_dir, &e))?;
            created_dir = true;
        }
    }
    let undo_dir = |created: bool| {
        if created {
            let _ = fs::remove_dir(&domain_dir);
        }
    };
    match domain_dir.canonicalize() {
        Ok(c) if c.starts_with(&root) => {}
        _ => {
            undo_dir(created_dir);
            return Err(err(
                "unsafe_path",
                format!("{} resolves outside the source", domain_dir.display()),
            ));
        }
    }

    let content = generate(&req);
    let parsed = parse_skill(
        content.as_bytes(),
        &ParseOptions::new(
            &target,
            Origin::Action {
                domain: req.domain.clone(),
                action: req.name.clone(),
            },
        ),
    );
    if !parsed.is_loadable() || parsed.name != req.full {
        undo_dir(created_dir);
        let problems: Vec<String> = parsed
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect();
        return Err(err(
            "invalid_workflow",
            format!(
                "the generated workflow would not load: {}",
                problems.join("; ")
            ),
        ));
    }

    let old_index = match fs::symlink_metadata(&index) {
        Ok(m) if m.file_type().is_file() => {
            Some(fs::read_to_string(&index).map_err(|e| io_err(&index, &e))?)
        }
        Ok(_) => {
            undo_dir(created_dir);
            return Err(err(
                "unsafe_path",
                format!("{} is not a regular file", index.display()),
            ));
        }
        Err(_) => None,
    };
    let old_target = if replacing {
        Some(fs::read(&target).map_err(|e| io_err(&target, &e))?)
    } else {
        None
    };
    let place = if replacing {
        Place::Replace
    } else {
        Place::New
    };
    if let Err(e) = write_atomic(&target, content.as_bytes(), place) {
        undo_dir(created_dir);
        if e.kind() == io::ErrorKind::AlreadyExists {
            return Err(err(
                "conflict",
                format!(
                    "{} was created meanwhile. Choose a different name.",
                    target.display()
                ),
            ));
        }
        return Err(io_err(&target, &e));
    }
    let rollback = |restore_index: bool| {
        match &old_target {
            Some(bytes) => {
                let _ = write_atomic(&target, bytes, Place::Replace);
            }
            None => {
                let _ = fs::remove_file(&target);
            }
        }
        if restore_index {
            match &old_index {
                Some(text) => {
                    let _ = write_atomic(&index, text.as_bytes(), Place::Replace);
                }
                None => {
                    let _ = fs::remove_file(&index);
                }
            }
        }
        undo_dir(created_dir);
    };
    // The table from what the folder holds now (the new file included).
    let rows = match folder_rows(&domain_dir, &req.domain) {
        Ok(rows) => rows,
        Err(e) => {
            rollback(false);
            return Err(io_err(&domain_dir, &e));
        }
    };
    let new_index = index_text(old_index.clone(), &snapshot, &req, &rows);
    if let Err(e) = write_atomic(&index, new_index.as_bytes(), Place::Replace) {
        rollback(false);
        return Err(io_err(&index, &e));
    }

    let change = registry.reload_paths([target.clone(), index.clone()]);
    let loaded = change
        .snapshot
        .get(&req.full)
        .is_some_and(|s| s.path == target);
    if !loaded {
        rollback(true);
        registry.reload_paths([target.clone(), index.clone()]);
        let why: Vec<String> = change
            .snapshot
            .entry(&req.full)
            .map(|s| s.diagnostics.iter().map(|d| d.message.clone()).collect())
            .unwrap_or_default();
        return Err(err(
            "not_loaded",
            format!(
                "the registry did not load {} ({}); nothing was kept",
                target.display(),
                if why.is_empty() {
                    "is the source's dialect `actions`?".to_owned()
                } else {
                    why.join("; ")
                }
            ),
        ));
    }
    Ok(Output::Json(serde_json::json!({
        "name": req.full,
        "path": target.to_string_lossy(),
        "index": index.to_string_lossy(),
        "schedule": req.schedule,
        "generation": change.snapshot.generation(),
        "message": format!(
            "{} skill '{}' at {}. It is now available.",
            if replacing { "Replaced" } else { "Created" },
            req.full,
            target.display()
        ),
    })))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_seed_rules() {
        assert!(check_name("n", "weekly_report").is_ok());
        assert!(check_name("n", "a1").is_ok());
        for bad in [
            "", "Weekly", "1abc", "a-b", "../x", "a/b", "a.b", "a b", "é",
        ] {
            assert_eq!(
                check_name("n", bad).unwrap_err().code,
                "invalid_name",
                "{bad}"
            );
        }
        for reserved in ["all", "help"] {
            assert_eq!(check_name("n", reserved).unwrap_err().code, "reserved_name");
        }
        let max = "a".repeat(MAX_WORKFLOW_NAME_CHARS);
        assert!(check_name("n", &max).is_ok());
        let over = "a".repeat(MAX_WORKFLOW_NAME_CHARS + 1);
        assert_eq!(check_name("n", &over).unwrap_err().code, "invalid_name");
    }

    #[test]
    fn the_available_skills_section_is_replaced_and_the_rest_kept() {
        let text = "---\ndomain: w\n---\n# W\n\nIntro.\n\n## Available Skills\n\n| Skill | Description |\n|--|--|\n| w.a | A |\n\n## Notes\n\n- keep me\n";
        let section = table(&[("w.a".into(), "A".into()), ("w.b".into(), "B | c".into())]);
        let out = replace_section(text, &section);
        assert!(out.starts_with("---\ndomain: w\n---\n# W\n\nIntro.\n\n## Available Skills\n"));
        assert!(out.contains("| w.b | B \\| c |\n"));
        assert!(out.ends_with("\n## Notes\n\n- keep me\n"));
        assert_eq!(out.matches("## Available Skills").count(), 1);
        let appended = replace_section("# W\n\nno table", &section);
        assert!(appended.ends_with(&section));
        assert!(appended.starts_with("# W\n\nno table\n\n## Available"));
    }

    #[test]
    fn titles_from_domains() {
        assert_eq!(title_of("workflows"), "Workflows");
        assert_eq!(title_of("my_stuff"), "My stuff");
    }
}
