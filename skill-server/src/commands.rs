//! `validate` and `list`, and what every subcommand shares: building a one-shot
//! [`Engine`] over `--skills` folders and writing output.
//!
//! Every one-shot command builds its engine with `EngineConfig::one_shot`. Its `--skills
//! [NS=]DIR` and `--include-hidden` are one flattened `SkillDirs` (`skills_arg.rs`), made into
//! registry sources there. The binary's `validate` leaves its engine to the operating system at
//! exit (`teardown.rs`).
#![allow(missing_docs)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use skill_runtime::format::{Code, Diagnostic, Dialect, Mode};
use skill_runtime::registry::{DiscoverOptions, RegistryConfig, Skill, Status};
use skill_runtime::wire::{
    EntryShape, ListShape, ValidateShape, ValidateSummary, pretty, text_table,
};
use skill_runtime::{Engine, EngineConfig};

use crate::skills_arg::{SkillDirs, command_line_source};

/// `validate`'s options.
pub(crate) struct ValidateArgs {
    pub dialect: Option<Dialect>,
    pub strict: bool,
    pub json: bool,
    pub include_hidden: bool,
    pub paths: Vec<PathBuf>,
}

pub(crate) fn layered_config(
    paths: &[PathBuf],
    layer_of: impl Fn(usize, &PathBuf) -> String,
) -> RegistryConfig {
    RegistryConfig::with_sources(
        paths
            .iter()
            .enumerate()
            .map(|(i, p)| command_line_source(p.clone(), layer_of(i, p)))
            .collect(),
    )
}

pub(crate) fn check_paths(paths: &[PathBuf]) -> Result<(), String> {
    for p in paths {
        if let Err(e) = std::fs::metadata(p) {
            return Err(format!("{}: {e}", p.display()));
        }
    }
    Ok(())
}

/// A one-shot engine (no watcher, no scheduler, the search index built only if asked).
pub(crate) fn one_shot(config: EngineConfig) -> Result<Arc<Engine>, String> {
    Engine::start(config).map_err(|e| e.to_string())
}

/// A one-shot engine over `--skills` folders as layers `layer1..N` (later folders win),
/// with these routing settings.
pub(crate) fn engine_with(
    skills: &SkillDirs,
    router: skill_runtime::router::RouterConfig,
) -> Result<Arc<Engine>, String> {
    check_paths(&skills.paths())?;
    let mut config = EngineConfig::one_shot(skills.config());
    config.router = router;
    one_shot(config)
}

/// A one-shot engine over folders given as paths, each a layer named by its path (the
/// `audit`, `lock` and `verify` commands: a lock records layers by these names). A path
/// under the current folder is named relative to it, however it was typed, so that a lock
/// made from `/home/me/repo` with `$PWD/skills` reads the same as one made with `skills`
/// (and does not carry the absolute path).
///
/// Each path must be a folder that can be listed or a markdown file, and must hold a
/// skill: anything else is a usage problem (a device, a pipe, `/etc/passwd`, a folder with
/// no skill: the user pointed at the wrong thing, and an empty lock or a clean audit would
/// hide that).
///
/// With `include_hidden`, hidden folders are read too (as a served source with
/// `include_hidden` reads them, so that a lock covers what it serves).
pub(crate) fn engine_over(paths: &[PathBuf], include_hidden: bool) -> Result<Arc<Engine>, String> {
    for p in paths {
        check_skill_path(p)?;
    }
    let cwd = std::env::current_dir().ok();
    let mut config = layered_config(paths, |_, p| layer_label(p, cwd.as_deref()));
    for s in &mut config.sources {
        s.include_hidden = include_hidden;
    }
    let engine = one_shot(EngineConfig::one_shot(config))?;
    let listed = engine.entries();
    let entries = all_entries(&listed);
    for p in paths {
        if !entries.iter().any(|s| s.path.starts_with(p)) {
            return Err(format!(
                "{}: no skill file in this folder or below it: give a skill folder, a root of skills or a SKILL.md",
                p.display()
            ));
        }
    }
    Ok(engine)
}

/// A command-line layer's name: `path` relative to `cwd` when it lies under it (compared
/// lexically, without resolving links; `.` for `cwd` itself), else as typed.
pub(crate) fn layer_label(path: &Path, cwd: Option<&Path>) -> String {
    let relative = cwd.and_then(|cwd| {
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            cwd.join(path)
        };
        let normal: PathBuf = absolute.components().collect();
        normal.strip_prefix(cwd).ok().map(|r| {
            if r.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                r.to_path_buf()
            }
        })
    });
    relative
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

/// A path named on the command line: a folder that can be listed, or a markdown file.
fn check_skill_path(p: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    if meta.is_dir() {
        std::fs::read_dir(p)
            .map_err(|e| format!("{}: the folder cannot be listed ({e})", p.display()))?;
        Ok(())
    } else if !meta.is_file() {
        Err(format!(
            "{}: not a file or a folder (a named pipe, a device or a socket): give a skill folder or a SKILL.md",
            p.display()
        ))
    } else if !is_markdown(p) {
        Err(format!(
            "{}: not a markdown file: give a skill folder, a SKILL.md or a `.md` skill file",
            p.display()
        ))
    } else {
        Ok(())
    }
}

/// Whether `p` names a markdown file (`.md`, any case).
fn is_markdown(p: &Path) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("md"))
}

/// [`engine_with`] the default routing settings.
pub(crate) fn engine(skills: &SkillDirs) -> Result<Arc<Engine>, String> {
    engine_with(skills, skill_runtime::router::RouterConfig::default())
}

/// A command's exit code: its own, or `2` after writing its error to `err`.
pub(crate) fn exit_code(result: Result<u8, String>, err: &mut dyn Write) -> u8 {
    result.unwrap_or_else(|message| {
        let _ = writeln!(err, "error: {message}");
        2
    })
}

pub(crate) fn write_out(out: &mut dyn Write, text: &str) -> Result<(), String> {
    write_bytes(out, text.as_bytes())
}

pub(crate) fn write_bytes(out: &mut dyn Write, bytes: &[u8]) -> Result<(), String> {
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write output: {e}")),
    }
}

fn all_entries(entries: &skill_runtime::Entries) -> Vec<&Skill> {
    let mut v: Vec<&Skill> = entries
        .skills
        .iter()
        .chain(&entries.domains)
        .chain(&entries.shadowed)
        .map(AsRef::as_ref)
        .collect();
    // By path, in `Path`'s order (component by component): each path is split into its
    // components once, not on every comparison.
    v.sort_by_cached_key(|s| s.path.components().collect::<Vec<_>>());
    v
}

/// What `validate` makes of each path before loading: a path that is neither a file nor a
/// folder (a named pipe, a device), a folder that cannot be listed, or a file that is not
/// markdown, is a usage or I/O problem (exit 2); in strict mode a file that is not a
/// `SKILL.md` gets the reference library's `Not a directory`. Returns the diagnostics for the paths.
fn validate_paths(args: &ValidateArgs) -> Result<Vec<Diagnostic>, String> {
    let mut diagnostics = Vec::new();
    for p in &args.paths {
        let skill_md = p
            .file_name()
            .is_some_and(|n| n == "SKILL.md" || n == "skill.md");
        if args.strict && !skill_md && p.is_file() {
            diagnostics.push(Diagnostic::error(
                Code::NoSkillFile,
                p,
                format!("Not a directory: {}", p.display()),
            ));
        } else {
            check_skill_path(p)?;
        }
    }
    Ok(diagnostics)
}

/// `skill-server validate`.
pub(crate) fn validate(args: &ValidateArgs, out: &mut dyn Write) -> Result<u8, String> {
    let mut path_diagnostics = validate_paths(args)?;
    let mut config = layered_config(&args.paths, |_, p| p.display().to_string());
    for s in &mut config.sources {
        s.dialect = args.dialect;
    }
    config.mode = if args.strict {
        Mode::Strict
    } else {
        Mode::Lenient
    };
    config.discover = DiscoverOptions {
        include_hidden: args.include_hidden,
        ..DiscoverOptions::default()
    };
    // Validation reports diagnostics; digests and scan findings are for serving and locks.
    config.manifests = false;
    let engine = one_shot(EngineConfig::one_shot(config))?;
    let listed = engine.entries();
    let entries = all_entries(&listed);
    // A folder named on the command line that holds no skill file is an error in every
    // mode: the user pointed at the wrong folder (the reference: `Missing required file`).
    for p in &args.paths {
        if p.is_dir() && !entries.iter().any(|s| s.path.starts_with(p)) {
            path_diagnostics.push(Diagnostic::error(
                Code::NoSkillFile,
                p,
                "Missing required file: SKILL.md (no skill file in this folder or below it)",
            ));
        }
    }
    // The registry's, example lint, router and schedule diagnostics, as the pack report.
    let mut report = engine.diagnostics();
    let added = path_diagnostics.len();
    report.diagnostics.splice(0..0, path_diagnostics);
    let (errors, warnings) = (report.errors + added, report.warnings);
    let text = if args.json {
        pretty(&ValidateShape {
            skills: entries.iter().map(|s| EntryShape::from(*s)).collect(),
            diagnostics: &report.diagnostics,
            summary: ValidateSummary {
                skills: entries.len(),
                errors,
                warnings,
            },
        })
    } else {
        let mut t = String::new();
        for d in &report.diagnostics {
            t.push_str(&d.to_string());
            t.push('\n');
        }
        let count = |st: Status| entries.iter().filter(|s| s.status == st).count();
        t.push_str(&format!(
            "{} skill files checked ({} loaded, {} invalid, {} ineligible, {} shadowed): {} error{}, {} warning{}\n",
            entries.len(),
            count(Status::Loaded),
            count(Status::Invalid),
            count(Status::Ineligible),
            count(Status::Shadowed),
            errors,
            if errors == 1 { "" } else { "s" },
            warnings,
            if warnings == 1 { "" } else { "s" },
        ));
        t
    };
    write_out(out, &text)?;
    crate::teardown::release((engine, listed, report));
    Ok(if errors > 0 { 1 } else { 0 })
}

/// `skill-server list`.
pub(crate) fn list(skills: &SkillDirs, json: bool, out: &mut dyn Write) -> Result<u8, String> {
    let engine = engine(skills)?;
    let entries = engine.entries();
    fn shapes(list: &[Arc<Skill>]) -> Vec<EntryShape<'_>> {
        list.iter().map(|s| EntryShape::from(&**s)).collect()
    }
    let text = if json {
        pretty(&ListShape {
            skills: shapes(&entries.skills),
            domains: shapes(&entries.domains),
            shadowed: shapes(&entries.shadowed),
        })
    } else {
        let mut rows = vec![
            ["NAME", "LAYER", "DIALECT", "STATUS", "PATH"]
                .map(str::to_owned)
                .to_vec(),
        ];
        for s in entries.skills.iter().chain(&entries.domains) {
            rows.push(vec![
                s.name.clone(),
                s.layer.clone(),
                s.dialect.as_str().to_owned(),
                if s.kind == skill_runtime::format::FileKind::DomainIndex {
                    "domain".to_owned()
                } else {
                    s.status.as_str().to_owned()
                },
                s.path.display().to_string(),
            ]);
        }
        let mut t = text_table(&rows);
        if !entries.shadowed.is_empty() {
            t.push_str("\nshadowed:\n");
            for s in &entries.shadowed {
                t.push_str(&format!(
                    "  {} ({}) {}\n",
                    s.name,
                    s.layer,
                    s.path.display()
                ));
            }
        }
        t
    };
    write_out(out, &text)?;
    Ok(0)
}
