//! Helpers shared by the workspace-level tests: the repository root, running the CLI
//! in-process with paths made relative, and building skill trees in temp folders.

use std::fs;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// What a CLI run printed and returned.
#[derive(Debug)]
pub struct Run {
    /// Standard output, with the repository root removed from paths.
    pub stdout: String,
    /// Standard error, with the repository root removed from paths.
    pub stderr: String,
    /// The exit code.
    pub code: u8,
}

/// Run `skill-server` in-process. Arguments that name files under the repo are given
/// relative to the root (`packs/broken`) and made absolute here; output paths are turned
/// back into relative ones, so snapshots do not hold machine paths.
pub fn skill_server(args: &[&str]) -> Run {
    let root = repo_root();
    let mut argv = vec!["skill-server".to_owned()];
    for a in args {
        if a.starts_with("packs/") || *a == "packs" {
            argv.push(root.join(a).display().to_string());
        } else {
            argv.push((*a).to_owned());
        }
    }
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = skill_server::run(argv, &mut out, &mut err);
    let prefix = format!("{}/", root.display());
    let clean = |b: Vec<u8>| String::from_utf8_lossy(&b).replace(&prefix, "");
    Run {
        stdout: clean(out),
        stderr: clean(err),
        code,
    }
}

/// Write `text` at `rel` under `root`, creating folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    if let Some(parent) = p.parent() {
        let _ = fs::create_dir_all(parent);
    }
    let _ = fs::write(p, text);
}

/// A minimal valid agentskills `SKILL.md` text.
pub fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nBody of {name}.\n")
}
