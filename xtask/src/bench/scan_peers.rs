//! The peer scanners of `bench scan`, installed from PyPI into a virtual environment under
//! `target/scan-peers/` (never into the system) and run offline: no model, no network
//! analyzer. A peer that cannot be installed or run gets a row that says why. SkillScan
//! needs Python >= 3.12 and gets its own environment (`venv312`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::scan_set::{Row, output, variant_name};

/// The PyPI package of Cisco's scanner, and its command.
const CISCO_PACKAGE: &str = "cisco-ai-skill-scanner";
const CISCO_COMMAND: &str = "skill-scanner";
/// The PyPI package of SkillScan (0.7.0 is the release this bench was written against).
const SKILLSCAN_PACKAGE: &str = "skillscan-security==0.7.0";

/// The peers' rows.
pub(super) fn rows(root: &Path, hostile: &Path, n: usize, corpus: Option<&Path>) -> Vec<Row> {
    let peers = root.join("target").join("scan-peers");
    vec![
        cisco(&peers.join("venv"), hostile, n, corpus),
        skillscan(&peers.join("venv312"), hostile, n, corpus),
    ]
}

fn failed(name: &str, note: String) -> Row {
    Row {
        name: name.to_owned(),
        hostile: None,
        corpus: None,
        note,
    }
}

/// Install `package` into the virtual environment (made first when missing).
fn install(venv: &Path, package: &str) -> Result<(), String> {
    if !venv.join("bin").join("pip").exists() {
        output(Command::new("python3").arg("-m").arg("venv").arg(venv))?;
    }
    let out = Command::new(venv.join("bin").join("pip"))
        .args(["install", "--quiet", package])
        .output()
        .map_err(|e| format!("cannot run pip: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let why: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("ERROR"))
        .take(2)
        .collect();
    Err(format!("pip install {package} failed: {}", why.join(" / ")))
}

fn cisco(venv: &Path, hostile: &Path, n: usize, corpus: Option<&Path>) -> Row {
    let name = "cisco-ai-skill-scanner";
    let bin = venv.join("bin").join(CISCO_COMMAND);
    if !bin.exists() {
        if let Err(e) = install(venv, CISCO_PACKAGE) {
            return failed(name, e);
        }
    }
    let version = output(Command::new(venv.join("bin").join("pip")).args(["show", CISCO_PACKAGE]))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Version: ").map(str::to_owned))
        })
        .unwrap_or_default();
    let scan = |dir: &Path| -> Result<Vec<(PathBuf, String, Option<String>)>, String> {
        // Static analyzers only: no `--use-llm`, no `--use-behavioral`, no network.
        let text = output(Command::new(&bin).args(["scan-all"]).arg(dir).args([
            "--recursive",
            "--format",
            "json",
        ]))?;
        let json: Value =
            serde_json::from_str(&text).map_err(|e| format!("its JSON did not parse: {e}"))?;
        let results = json
            .get("results")
            .and_then(Value::as_array)
            .ok_or("its JSON has no results")?;
        Ok(results
            .iter()
            .map(|r| {
                let path = PathBuf::from(r.get("skill_path").and_then(Value::as_str).unwrap_or(""));
                let max = r
                    .get("max_severity")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_ascii_uppercase();
                let first = r
                    .get("findings")
                    .and_then(Value::as_array)
                    .and_then(|f| {
                        f.iter().find(|x| {
                            matches!(
                                x.get("severity").and_then(Value::as_str),
                                Some("HIGH" | "CRITICAL")
                            )
                        })
                    })
                    .map(|x| {
                        format!(
                            "{}:{} {}",
                            x.get("file_path").and_then(Value::as_str).unwrap_or(""),
                            x.get("line_number").and_then(Value::as_u64).unwrap_or(0),
                            x.get("title").and_then(Value::as_str).unwrap_or("")
                        )
                    });
                (path, max, first)
            })
            .collect())
    };
    let error_level = |max: &str| matches!(max, "HIGH" | "CRITICAL");
    let flagged = |max: &str| matches!(max, "MEDIUM" | "HIGH" | "CRITICAL");
    let hostile_row = match scan(hostile) {
        Ok(found) => {
            let mut row = vec![(false, false); n];
            for (path, max, _) in found {
                let Some(i) = (0..n).find(|&i| path.ends_with(variant_name(i))) else {
                    continue;
                };
                row[i] = (flagged(&max), error_level(&max));
            }
            Some(row)
        }
        Err(e) => return failed(name, e),
    };
    let corpus_row = match corpus.map(scan) {
        Some(Ok(found)) => {
            let total = found.len();
            let mut list: Vec<String> = found
                .into_iter()
                .filter(|(_, max, _)| error_level(max))
                .map(|(path, _, first)| {
                    let c = corpus.unwrap_or(Path::new(""));
                    format!(
                        "{}: {}",
                        path.strip_prefix(c).unwrap_or(&path).display(),
                        first.unwrap_or_default()
                    )
                })
                .collect();
            list.sort();
            Some((list, total))
        }
        Some(Err(e)) => return failed(name, e),
        None => None,
    };
    Row {
        name: format!("cisco {version} static"),
        hostile: hostile_row,
        corpus: corpus_row,
        note: format!(
            "cisco-ai-skill-scanner {version}: `skill-scanner scan-all DIR --recursive --format json`, static analyzers only (no --use-llm, no --use-behavioral); HIGH or CRITICAL counts as error level, MEDIUM and above as flagged"
        ),
    }
}

/// The Python SkillScan needs (its releases require 3.12 or later): `SKILLS_BENCH_PYTHON312`,
/// else pyenv's 3.12, else `python3.12` on the path.
fn python312() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SKILLS_BENCH_PYTHON312") {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let versions = home.join(".pyenv").join("versions");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&versions)
        .map(|r| {
            r.flatten()
                .map(|e| e.path().join("bin").join("python3.12"))
                .filter(|p| p.exists())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop().or_else(|| {
        output(Command::new("python3.12").arg("--version"))
            .ok()
            .map(|_| PathBuf::from("python3.12"))
    })
}

/// The skill folder a finding's file belongs to: the nearest folder, from the file up to
/// `top`, that holds a `SKILL.md`.
fn skill_of(file: &Path, top: &Path) -> Option<PathBuf> {
    let mut dir = file.parent()?;
    loop {
        if dir.join("SKILL.md").is_file() {
            return Some(dir.to_path_buf());
        }
        if dir == top {
            return None;
        }
        dir = dir.parent()?;
    }
}

/// Every folder under `top` that holds a `SKILL.md`.
fn skill_folders(top: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![top.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if e.file_name() == "SKILL.md" {
                out.push(dir.clone());
            }
        }
    }
    out
}

fn skillscan(venv: &Path, hostile: &Path, n: usize, corpus: Option<&Path>) -> Row {
    let name = "skillscan-security";
    let Some(python) = python312() else {
        return failed(
            name,
            "not run: its releases on PyPI require Python >= 3.12 and none was found (set SKILLS_BENCH_PYTHON312)".to_owned(),
        );
    };
    let bin = venv.join("bin").join("skillscan");
    if !bin.exists() {
        if !venv.join("bin").join("pip").exists() {
            if let Err(e) = output(Command::new(&python).arg("-m").arg("venv").arg(venv)) {
                return failed(name, e);
            }
        }
        if let Err(e) = install(venv, SKILLSCAN_PACKAGE) {
            return failed(name, e);
        }
    }
    // Offline: no intel refresh, no model; its own rules only. A private HOME keeps its
    // caches out of the user's.
    let home = venv.join("home");
    let scan = |dir: &Path| -> Result<Vec<(PathBuf, String, String)>, String> {
        let text = output(
            Command::new(&bin)
                .arg("scan")
                .arg(dir)
                .args([
                    "--format",
                    "json",
                    "--no-auto-intel",
                    "--no-model",
                    "--no-progress",
                    "--fail-on",
                    "never",
                ])
                .env("HOME", &home),
        )?;
        let json: Value =
            serde_json::from_str(&text).map_err(|e| format!("its JSON did not parse: {e}"))?;
        let findings = json
            .get("findings")
            .and_then(Value::as_array)
            .ok_or("its JSON has no findings")?;
        Ok(findings
            .iter()
            .filter_map(|f| {
                let path = PathBuf::from(f.get("evidence_path").and_then(Value::as_str)?);
                let path = if path.is_absolute() {
                    path
                } else {
                    std::env::current_dir().ok()?.join(path)
                };
                let severity = f
                    .get("severity")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_ascii_lowercase();
                let what = format!(
                    "{}:{} {} {}",
                    path.file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    f.get("line").and_then(Value::as_u64).unwrap_or(0),
                    f.get("id").and_then(Value::as_str).unwrap_or(""),
                    f.get("title").and_then(Value::as_str).unwrap_or("")
                );
                Some((path, severity, what))
            })
            .collect())
    };
    let error_level = |s: &str| matches!(s, "high" | "critical");
    let flagged = |s: &str| matches!(s, "medium" | "high" | "critical");
    let hostile_row = match scan(hostile) {
        Ok(found) => {
            let mut row = vec![(false, false); n];
            for (path, severity, _) in found {
                let Some(skill) = skill_of(&path, hostile) else {
                    continue;
                };
                let Some(i) = (0..n).find(|&i| skill.ends_with(variant_name(i))) else {
                    continue;
                };
                row[i].0 |= flagged(&severity);
                row[i].1 |= error_level(&severity);
            }
            Some(row)
        }
        Err(e) => return failed(name, e),
    };
    let mut corpus_note = String::new();
    let corpus_row = match corpus.map(|c| (c, scan(c))) {
        Some((c, Ok(found))) => {
            let total = skill_folders(c).len();
            let mut first: std::collections::BTreeMap<PathBuf, String> = Default::default();
            for (path, severity, what) in found {
                if !error_level(&severity) {
                    continue;
                }
                if let Some(skill) = skill_of(&path, c) {
                    first.entry(skill).or_insert(what);
                }
            }
            let list = first
                .into_iter()
                .map(|(skill, what)| {
                    format!(
                        "{}: {what}",
                        skill.strip_prefix(c).unwrap_or(&skill).display()
                    )
                })
                .collect();
            Some((list, total))
        }
        Some((_, Err(e))) => {
            // The hostile row stands; the corpus figure is missing, and says why.
            corpus_note = format!("; on the corpus it failed: {e}");
            None
        }
        None => None,
    };
    let version =
        output(Command::new(venv.join("bin").join("pip")).args(["show", "skillscan-security"]))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Version: ").map(str::to_owned))
            })
            .unwrap_or_default();
    Row {
        name: format!("skillscan {version} offline"),
        hostile: hostile_row,
        corpus: corpus_row,
        note: format!(
            "skillscan-security {version}: `skillscan scan DIR --format json --no-auto-intel --no-model --no-progress --fail-on never` (its bundled rules, no intel refresh, no ML model); high or critical counts as error level, medium and above as flagged{corpus_note}"
        ),
    }
}
