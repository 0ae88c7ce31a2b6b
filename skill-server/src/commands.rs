//! The subcommands' work, kept apart from argument parsing.
#![allow(missing_docs)]

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;
use skill_format::{Dialect, Mode};
use skill_registry::{DiscoverOptions, Registry, RegistryConfig, Skill, Snapshot, Source};

/// `validate`'s options.
pub struct ValidateArgs {
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
            .map(|(i, p)| Source::new(p.clone(), layer_of(i, p)))
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

fn skill_json(s: &Skill) -> serde_json::Value {
    json!({
        "name": s.name,
        "path": s.path,
        "dialect": s.dialect.as_str(),
        "layer": s.layer,
        "status": s.status.as_str(),
    })
}

fn all_entries(snapshot: &Snapshot) -> Vec<&Skill> {
    let mut v: Vec<&Skill> = snapshot
        .entries()
        .chain(snapshot.domains())
        .chain(snapshot.shadowed().iter())
        .map(AsRef::as_ref)
        .collect();
    v.sort_by(|a, b| a.path.cmp(&b.path));
    v
}

pub(crate) fn write_out(out: &mut dyn Write, text: &str) -> Result<(), String> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write output: {e}")),
    }
}

/// `skill-server validate`.
pub fn validate(args: &ValidateArgs, out: &mut dyn Write) -> Result<u8, String> {
    check_paths(&args.paths)?;
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
    let registry = Registry::load(config);
    let snapshot = registry.snapshot();
    let entries = all_entries(&snapshot);
    // The registry's, example lint, router and schedule diagnostics, as the pack report.
    let diagnostics = skill_pack::diagnostics(&snapshot);
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let text = if args.json {
        let value = json!({
            "skills": entries.iter().map(|s| skill_json(s)).collect::<Vec<_>>(),
            "diagnostics": diagnostics,
            "summary": { "skills": entries.len(), "errors": errors, "warnings": warnings },
        });
        format!("{value:#}\n")
    } else {
        let mut t = String::new();
        for d in &diagnostics {
            t.push_str(&d.to_string());
            t.push('\n');
        }
        let count = |st: skill_registry::Status| entries.iter().filter(|s| s.status == st).count();
        t.push_str(&format!(
            "{} skill files checked ({} loaded, {} invalid, {} ineligible, {} shadowed): {} error{}, {} warning{}\n",
            entries.len(),
            count(skill_registry::Status::Loaded),
            count(skill_registry::Status::Invalid),
            count(skill_registry::Status::Ineligible),
            count(skill_registry::Status::Shadowed),
            errors,
            if errors == 1 { "" } else { "s" },
            warnings,
            if warnings == 1 { "" } else { "s" },
        ));
        t
    };
    write_out(out, &text)?;
    Ok(if errors > 0 { 1 } else { 0 })
}

/// Load `--skills` folders as layers `layer1..N` (later folders win).
pub(crate) fn load_layers(skills: &[PathBuf]) -> Result<Registry, String> {
    check_paths(skills)?;
    Ok(Registry::load(layered_config(skills, |i, _| {
        format!("layer{}", i + 1)
    })))
}

/// `skill-server list`.
pub fn list(skills: &[PathBuf], json: bool, out: &mut dyn Write) -> Result<u8, String> {
    check_paths(skills)?;
    let config = layered_config(skills, |i, _| format!("layer{}", i + 1));
    let registry = Registry::load(config);
    let snapshot = registry.snapshot();
    let winners: Vec<&Skill> = snapshot.entries().map(AsRef::as_ref).collect();
    let text = if json {
        let value = json!({
            "skills": winners.iter().map(|s| skill_json(s)).collect::<Vec<_>>(),
            "domains": snapshot.domains().map(|s| skill_json(s)).collect::<Vec<_>>(),
            "shadowed": snapshot.shadowed().iter().map(|s| skill_json(s)).collect::<Vec<_>>(),
        });
        format!("{value:#}\n")
    } else {
        let mut rows = vec![[
            "NAME".to_owned(),
            "LAYER".to_owned(),
            "DIALECT".to_owned(),
            "STATUS".to_owned(),
            "PATH".to_owned(),
        ]];
        for s in winners
            .iter()
            .copied()
            .chain(snapshot.domains().map(AsRef::as_ref))
        {
            rows.push([
                s.name.clone(),
                s.layer.clone(),
                s.dialect.as_str().to_owned(),
                if s.kind == skill_format::FileKind::DomainIndex {
                    "domain".to_owned()
                } else {
                    s.status.as_str().to_owned()
                },
                s.path.display().to_string(),
            ]);
        }
        let mut t = table(&rows);
        if !snapshot.shadowed().is_empty() {
            t.push_str("\nshadowed:\n");
            for s in snapshot.shadowed() {
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

fn table(rows: &[[String; 5]]) -> String {
    let mut widths = [0usize; 5];
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut t = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, (w, c)) in widths.iter().zip(r).enumerate() {
            if i + 1 == r.len() {
                line.push_str(c);
            } else {
                line.push_str(&format!("{c:<w$}  "));
            }
        }
        t.push_str(line.trim_end());
        t.push('\n');
    }
    t
}
