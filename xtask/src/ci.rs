//! `cargo xtask ci`: the continuous-integration steps.

use std::process::ExitCode;

use clap::Args;

use crate::process::{cargo, code_of, describe, repo_root, run_status};

/// The CI steps, in order: the arguments of one `cargo` invocation each.
///
/// This is the single list of what CI runs. `.ci/run` must run exactly these commands in
/// this order, stopping at the first failure; `cargo xtask ci --print` prints them one per
/// line for comparison.
pub const STEPS: &[&[&str]] = &[
    &["fmt", "--all", "--", "--check"],
    &[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ],
    &["test", "--workspace"],
];

/// Arguments of `cargo xtask ci`.
#[derive(Debug, Args)]
pub struct CiArgs {
    /// Print the steps as shell commands, one per line, without running them.
    #[arg(long)]
    print: bool,
}

/// Run every step from the repository root; stop at the first failure with its exit code.
pub fn run(args: &CiArgs) -> Result<ExitCode, String> {
    if args.print {
        for step in STEPS {
            println!("cargo {}", step.join(" "));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let root = repo_root()?;
    for step in STEPS {
        let mut cmd = cargo();
        cmd.args(*step).current_dir(&root);
        eprintln!("==> cargo {}", step.join(" "));
        let status = run_status(&mut cmd)?;
        if !status.success() {
            let code = code_of(status);
            eprintln!("==> failed (exit {code}): {}", describe(&cmd));
            return Ok(ExitCode::from(code));
        }
    }
    eprintln!("==> ci passed ({} steps)", STEPS.len());
    Ok(ExitCode::SUCCESS)
}
