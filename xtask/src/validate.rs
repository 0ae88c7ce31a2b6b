//! `cargo xtask validate`: `skill-server validate`, defaulting to the bundled packs.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::process::{cargo, code_of, exit_code_of, repo_root, run_status};

/// The bundled packs validated by default, by folder under `packs/`. Each folder is named
/// after its dialect and validated with `--dialect <name>` (a file without frontmatter is
/// only valid lily when the dialect is known). `packs/broken` is deliberately invalid.
pub const BUNDLED_PACKS: &[&str] = &["agentskills", "actions", "lily", "pegasus", "toolsets"];

/// Arguments of `cargo xtask validate`; the options are passed on to `skill-server validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Read every file as this dialect (auto, agentskills, actions, lily, pegasus,
    /// toolsets). Only with explicit paths: the bundled packs each use their own.
    #[arg(long, requires = "paths")]
    dialect: Option<String>,
    /// Strict mode: every rule is an error.
    #[arg(long)]
    strict: bool,
    /// Output format: text or json.
    #[arg(long)]
    format: Option<String>,
    /// Skip hidden folders.
    #[arg(long)]
    skip_hidden: bool,
    /// A SKILL.md, a skill folder, or a root of many skills. Default: the bundled packs.
    paths: Vec<PathBuf>,
}

impl ValidateArgs {
    /// The options to pass on, without dialect and paths.
    fn options(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.strict {
            out.push("--strict".to_owned());
        }
        if let Some(format) = &self.format {
            out.push("--format".to_owned());
            out.push(format.clone());
        }
        if self.skip_hidden {
            out.push("--skip-hidden".to_owned());
        }
        out
    }
}

/// Run `skill-server validate` once over the given paths, or once per bundled pack.
pub fn run(args: &ValidateArgs) -> Result<ExitCode, String> {
    let root = repo_root()?;
    let manifest = root.join("Cargo.toml");
    let server = |cmd: &mut std::process::Command| {
        cmd.arg("run")
            .arg("--quiet")
            .arg("--manifest-path")
            .arg(&manifest)
            .args(["--package", "skill-server", "--", "validate"]);
    };
    if !args.paths.is_empty() {
        // Paths are the user's, relative to where they ran the command.
        let mut cmd = cargo();
        server(&mut cmd);
        if let Some(d) = &args.dialect {
            cmd.args(["--dialect", d]);
        }
        cmd.args(args.options()).args(&args.paths);
        return run_status(&mut cmd).map(exit_code_of);
    }
    let mut worst = 0u8;
    let mut failed = Vec::new();
    for pack in BUNDLED_PACKS {
        let rel = format!("packs/{pack}");
        eprintln!("== {rel} (--dialect {pack})");
        let mut cmd = cargo();
        server(&mut cmd);
        cmd.current_dir(&root)
            .args(["--dialect", pack])
            .args(args.options())
            .arg(&rel);
        let code = code_of(run_status(&mut cmd)?);
        if code != 0 {
            failed.push(rel);
            worst = worst.max(code);
        }
    }
    if failed.is_empty() {
        eprintln!("== all {} bundled packs are valid", BUNDLED_PACKS.len());
    } else {
        eprintln!("== failed: {}", failed.join(", "));
    }
    Ok(ExitCode::from(worst))
}
