//! `cargo xtask ci`: the continuous-integration steps.

use std::process::ExitCode;

use clap::Args;

use crate::process::{cargo, code_of, describe, repo_root, run_status};

/// One CI step: environment variables and the arguments of one `cargo` invocation.
#[derive(Debug)]
pub struct Step {
    /// Variables set for this step only, as `(name, value)`.
    pub env: &'static [(&'static str, &'static str)],
    /// The arguments after `cargo`.
    pub args: &'static [&'static str],
}

impl Step {
    const fn cargo(args: &'static [&'static str]) -> Step {
        Step { env: &[], args }
    }

    /// The step as a shell command line, values quoted: `NAME="value" cargo args...`.
    pub fn shell(&self) -> String {
        let mut line = String::new();
        for (name, value) in self.env {
            line.push_str(&format!("{name}=\"{value}\" "));
        }
        line.push_str("cargo ");
        line.push_str(&self.args.join(" "));
        line
    }
}

/// The CI steps, in order.
///
/// This is the single list of what CI runs. `.ci/run` must run exactly these commands in
/// this order, stopping at the first failure; `cargo xtask ci --print` prints them one per
/// line for comparison.
pub const STEPS: &[Step] = &[
    Step::cargo(&["fmt", "--all", "--", "--check"]),
    Step::cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]),
    // The tests that need a service CI starts (PostgreSQL, from `.ci/postgres` above) are
    // `#[ignore]`d, so a plain `cargo test` counts them as ignored rather than passing them
    // unrun; CI runs them too.
    Step::cargo(&["test", "--workspace", "--", "--include-ignored"]),
    // The API docs build without a warning (broken links, bad code blocks): what docs.rs
    // would show is checked like code.
    Step {
        env: &[("RUSTDOCFLAGS", "-D warnings")],
        args: &["doc", "--no-deps", "--workspace"],
    },
    // Every library crate packages and builds from its package alone (the published
    // crates' file lists and metadata are right); the unpublished ones are left out.
    // A packed manifest does not carry the workspace's `[profile]` tables, so this build
    // would use cargo's default full debug info, several GB for this dependency tree: a
    // CI machine ran out of disk linking skill-server here (ld: Bus error). The build only
    // has to succeed, so it is made without debug info.
    Step {
        env: &[("CARGO_PROFILE_DEV_DEBUG", "false")],
        args: &[
            "package",
            "--workspace",
            "--exclude",
            "xtask",
            "--exclude",
            "skills-tests",
            "--exclude",
            "pack-snapshot-example",
        ],
    },
    // A host that takes a crate without its default features (the MCP server without its
    // HTTP transport, the runtime without HTTP or the watcher, ...) can build it and its
    // tests: a re-export behind the `http` feature once broke such a build, and tests that
    // set a field behind `watch` another, unnoticed, since every other step builds each
    // crate with its default features. One crate a step, so that features do not unify.
    Step::cargo(&NO_DEFAULTS[0]),
    Step::cargo(&NO_DEFAULTS[1]),
    Step::cargo(&NO_DEFAULTS[2]),
    Step::cargo(&NO_DEFAULTS[3]),
    Step::cargo(&NO_DEFAULTS[4]),
    // The optional sentence-embedding model (candle, off by default, so no step above
    // compiles it): its code in every crate that forwards it, linted; skill-search's tests
    // with it (on a tiny model the tests write, with every other test of the crate, doc
    // tests included); its API docs.
    Step::cargo(&[
        "clippy",
        "-p",
        "skill-search",
        "-p",
        "skill-runtime",
        "-p",
        "skill-server",
        "-p",
        "xtask",
        "--features",
        "skill-search/transformer,skill-runtime/transformer,skill-server/transformer,xtask/transformer",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]),
    Step::cargo(&["test", "-p", "skill-search", "--features", "transformer"]),
    Step {
        env: &[("RUSTDOCFLAGS", "-D warnings")],
        args: &[
            "doc",
            "--no-deps",
            "-p",
            "skill-search",
            "--features",
            "transformer",
        ],
    },
    // deny.toml: licences, duplicate versions (warned), sources. The advisories check needs
    // the RustSec database from GitHub, so `.ci/cargo-deny` runs it when that is reachable.
    Step::cargo(&["deny", "check", "bans", "licenses", "sources"]),
];

/// The crates with cargo features, each checked (with its tests) without its defaults.
const NO_DEFAULTS: [[&str; 8]; 5] = [
    no_defaults("skill-registry"),
    no_defaults("skill-search"),
    no_defaults("skill-runtime"),
    no_defaults("skill-mcp"),
    no_defaults("skill-server"),
];

/// `cargo clippy -p <krate> --no-default-features --all-targets -- -D warnings`.
const fn no_defaults(krate: &'static str) -> [&'static str; 8] {
    [
        "clippy",
        "-p",
        krate,
        "--no-default-features",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]
}

/// Scripts run after the cargo step they follow in `.ci/run` (PostgreSQL starts before the
/// tests that use it, the minisign tool is installed before the signed-lock test, and
/// Chromium with its WebDriver before the console's browser tests; the
/// MCP conformance suite, the TypeScript SDK's skills client, the vercel `skills` CLI and
/// schemathesis need the built server; the package cache is
/// cleaned right before packaging; cargo-deny is installed before its check): (index of the
/// step they follow, script path).
pub const SCRIPTS: &[(usize, &str)] = &[
    (1, ".ci/postgres"),
    (1, ".ci/minisign"),
    (1, ".ci/chromium"),
    (2, ".ci/mcp-conformance"),
    (2, ".ci/skills-client"),
    (2, ".ci/skills-cli"),
    (2, ".ci/schemathesis"),
    (3, ".ci/clean-package-cache"),
    (12, ".ci/cargo-deny"),
];

/// Scripts started in the background after a step, as `.ci/run` does with `&`: (index of
/// the step they follow, script path). `.ci/prefetch` installs what later scripts need while
/// the first compile runs; those scripts wait for it through its lock file, so nothing waits
/// for it here.
pub const BACKGROUND: &[(usize, &str)] = &[(0, ".ci/prefetch")];

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
        for (index, step) in STEPS.iter().enumerate() {
            println!("{}", step.shell());
            for (_, script) in BACKGROUND.iter().filter(|(after, _)| *after == index) {
                println!("bash {script} &");
            }
            for (_, script) in SCRIPTS.iter().filter(|(after, _)| *after == index) {
                println!("bash {script}");
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let root = repo_root()?;
    let mut background = Vec::new();
    for (index, step) in STEPS.iter().enumerate() {
        let mut cmd = cargo();
        cmd.args(step.args)
            .envs(step.env.iter().copied())
            .current_dir(&root);
        eprintln!("==> {}", step.shell());
        let status = run_status(&mut cmd)?;
        if !status.success() {
            let code = code_of(status);
            eprintln!("==> failed (exit {code}): {}", describe(&cmd));
            return Ok(ExitCode::from(code));
        }
        for (_, script) in BACKGROUND.iter().filter(|(after, _)| *after == index) {
            eprintln!("==> bash {script} &");
            let spawned = std::process::Command::new("bash")
                .arg(script)
                .current_dir(&root)
                .spawn()
                .map_err(|e| format!("cannot start bash {script}: {e}"))?;
            background.push(spawned);
        }
        for (_, script) in SCRIPTS.iter().filter(|(after, _)| *after == index) {
            eprintln!("==> bash {script}");
            let mut cmd = std::process::Command::new("bash");
            cmd.arg(script).current_dir(&root);
            let status = run_status(&mut cmd)?;
            if !status.success() {
                let code = code_of(status);
                eprintln!("==> failed (exit {code}): bash {script}");
                return Ok(ExitCode::from(code));
            }
        }
    }
    // Long done by now (the scripts after it waited for it); reaped, not judged: what it
    // could not do, the scripts that needed it did or failed on.
    for mut child in background {
        let _ = child.wait();
    }
    eprintln!("==> ci passed ({} steps)", STEPS.len());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::STEPS;

    /// The `cargo ...` command lines of a shell script, in order, with continuation lines
    /// joined, comments dropped, and `NAME=value` assignments before `cargo` kept in front
    /// (unquoted).
    fn cargo_lines(script: &str) -> Vec<String> {
        let joined = script.replace("\\\n", " ");
        joined
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter_map(|l| {
                let mut rest = l;
                let mut env = Vec::new();
                while let Some((name, after)) = rest.split_once('=') {
                    let is_name = !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_uppercase() || c == '_');
                    if !is_name {
                        break;
                    }
                    let (value, after) = match after.strip_prefix('"') {
                        Some(quoted) => quoted.split_once('"')?,
                        None => after.split_once(' ').unwrap_or((after, "")),
                    };
                    env.push(format!("{name}={value}"));
                    rest = after.trim_start();
                }
                let args = rest.strip_prefix("cargo ")?;
                env.push("cargo".to_owned());
                env.extend(args.split_whitespace().map(str::to_owned));
                Some(env.join(" "))
            })
            .collect()
    }

    #[test]
    fn ci_run_and_xtask_ci_run_the_same_commands() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../.ci/run");
        let script = std::fs::read_to_string(path).unwrap_or_else(|e| format!("unreadable: {e}"));
        let expected: Vec<String> = STEPS
            .iter()
            .map(|step| {
                let env = step.env.iter().map(|(n, v)| format!("{n}={v} "));
                format!("{}cargo {}", env.collect::<String>(), step.args.join(" "))
            })
            .collect();
        assert_eq!(cargo_lines(&script), expected, "{path}");
    }

    #[test]
    fn ci_run_calls_each_script_right_after_its_step() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../.ci/run");
        let script = std::fs::read_to_string(path).unwrap_or_default();
        let steps: Vec<String> = STEPS.iter().map(super::Step::shell).collect();
        let lines: Vec<&str> = script
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("bash ") || steps.iter().any(|s| s == l))
            .collect();
        for (index, step) in steps.iter().enumerate() {
            let background = super::BACKGROUND
                .iter()
                .filter(|(after, _)| *after == index)
                .map(|(_, s)| format!("bash {s} &"));
            let expected: Vec<String> = background
                .chain(
                    super::SCRIPTS
                        .iter()
                        .filter(|(after, _)| *after == index)
                        .map(|(_, s)| format!("bash {s}")),
                )
                .collect();
            let at = lines.iter().position(|l| *l == step.as_str());
            let following: Vec<String> = at
                .map(|i| {
                    lines
                        .iter()
                        .skip(i + 1)
                        .take_while(|l| l.starts_with("bash "))
                        .map(|l| (*l).to_owned())
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(following, expected, "{path}: after `{step}`");
        }
    }

    #[test]
    fn cargo_lines_reads_only_commands() {
        let script = "#!/bin/sh\n# cargo not this\nset -e\ncargo fmt --all \\\n  -- --check\necho cargo\n  cargo test  --workspace # why\nA_B=\"-x y\" C=1 cargo doc\nX=1 echo cargo\n";
        assert_eq!(
            cargo_lines(script),
            [
                "cargo fmt --all -- --check",
                "cargo test --workspace",
                "A_B=-x y C=1 cargo doc"
            ]
        );
    }

    #[test]
    fn shell_lines_quote_values() {
        let doc = STEPS.iter().find(|s| s.args.first() == Some(&"doc"));
        assert_eq!(
            doc.map(|s| s.shell()).as_deref(),
            Some("RUSTDOCFLAGS=\"-D warnings\" cargo doc --no-deps --workspace")
        );
    }
}
