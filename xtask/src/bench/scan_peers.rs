//! The peer scanners of `bench scan`, installed from PyPI into a virtual environment under
//! `target/scan-peers/` (never into the system) and run offline: no model, no network
//! analyzer. A peer that cannot be installed or run gets a row that says why.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::scan_set::{Row, output, variant_name};

/// The PyPI package of Cisco's scanner, and its command.
const CISCO_PACKAGE: &str = "cisco-ai-skill-scanner";
const CISCO_COMMAND: &str = "skill-scanner";
/// The PyPI package of SkillScan.
const SKILLSCAN_PACKAGE: &str = "skillscan-security";

/// The peers' rows.
pub(super) fn rows(root: &Path, hostile: &Path, n: usize, corpus: Option<&Path>) -> Vec<Row> {
    let venv = root.join("target").join("scan-peers").join("venv");
    vec![cisco(&venv, hostile, n, corpus), skillscan(&venv)]
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

fn skillscan(venv: &Path) -> Row {
    let name = "skillscan-security";
    match install(venv, SKILLSCAN_PACKAGE) {
        Ok(()) => failed(
            name,
            "installed, but this bench does not yet know how to run it offline".to_owned(),
        ),
        Err(e) => failed(
            name,
            format!(
                "not run: {e} (its releases on PyPI require Python >= 3.12; this machine's python3 is {})",
                output(Command::new("python3").arg("--version"))
                    .unwrap_or_default()
                    .trim()
            ),
        ),
    }
}
