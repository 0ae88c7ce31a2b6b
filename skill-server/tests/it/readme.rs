//! The README's quick start, run as written: the commands are read out of the README's
//! `## Quick start` code blocks (so the test fails when the README and the program part
//! ways): the server on the bundled packs answering every `curl` GET shown, a `validate` and
//! a `report`. Also: the documentation pages the README links exist, and the pack author's
//! page lists every diagnostic code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use crate::common::{get, post, repo, spawn_serve};

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).unwrap()
}

/// Every line of the `sh` code blocks in the `## Quick start` section (its `###`
/// subsections included).
fn quick_start_lines() -> Vec<String> {
    let text = readme();
    let start = text
        .find("\n## Quick start\n")
        .expect("a Quick start section");
    let rest = &text[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    let mut lines = Vec::new();
    let mut in_sh = false;
    for line in rest[..end].lines() {
        if line.starts_with("```") {
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        if in_sh && !line.trim().is_empty() {
            lines.push(line.to_owned());
        }
    }
    lines
}

/// The arguments after `cargo run -p skill-server --` of the quick start's command for
/// `subcommand`.
fn skill_server_args(subcommand: &str) -> Vec<String> {
    let prefix = format!("cargo run -p skill-server -- {subcommand} ");
    let line = quick_start_lines()
        .into_iter()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("the quick start has no `{prefix}...` command"));
    line["cargo run -p skill-server -- ".len()..]
        .split('#')
        .next()
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn run(args: &[String]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[cfg(unix)]
#[test]
fn quick_start_serve_answers_every_get_it_shows() {
    let mut args = skill_server_args("serve");
    assert_eq!(args[0], "serve");
    assert!(args.iter().any(|a| a == "packs/agentskills"));
    // Test-only: a free port instead of 7878, and no watcher.
    args.extend(["--listen", "127.0.0.1:0", "--no-watch"].map(str::to_owned));
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut child, addr, _logs) = spawn_serve(&arg_refs, &[]);

    // Every `curl` of the quick start, GET or POST with its JSON body, but the event
    // stream (`-sN`), which never ends.
    let mut checked = Vec::new();
    for l in quick_start_lines() {
        if !l.starts_with("curl -s ") {
            continue;
        }
        let command = l.split(" # ").next().unwrap().trim();
        let url = command
            .split_whitespace()
            .last()
            .unwrap()
            .trim_matches('\'');
        let Some(path) = url.strip_prefix("localhost:7878") else {
            panic!("a quick-start curl not on localhost:7878: {l}");
        };
        let (status, body) = match command.split_once(" -d '") {
            Some((_, rest)) => post(&addr, path, rest.split_once("' ").unwrap().0),
            None => get(&addr, path),
        };
        assert_eq!(status, 200, "{path}: {body}");
        checked.push((path.to_owned(), body));
    }
    assert!(checked.len() >= 8, "{checked:?}");
    let body_of = |p: &str| {
        checked
            .iter()
            .find(|(path, _)| path.starts_with(p))
            .map(|(_, b)| b.clone())
            .unwrap_or_else(|| panic!("the quick start no longer shows {p}"))
    };
    let skills = body_of("/v1/skills");
    assert!(skills.contains("\"pdf-forms\"") && skills.contains("\"email.send\""));
    let search = body_of("/v1/search?q=convert+miles+to+km");
    assert!(search.contains("unit-converter"), "{search}");
    assert!(body_of("/v1/get_skill?path=email.send").contains("email.send"));
    assert!(
        body_of("/v1/select").contains("weather"),
        "{}",
        body_of("/v1/select")
    );
    assert!(body_of("/v1/route").contains("tasks.search"));
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn quick_start_validate_and_report_run_as_written() {
    let args = skill_server_args("validate");
    let (code, out) = run(&args);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" 0 errors"), "{out}");
    let args = skill_server_args("report");
    let (code, out) = run(&args);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("== examples ("), "{out}");
    assert!(!out.contains(&repo().display().to_string()));
}

#[test]
fn report_cli_matches_the_committed_pack_report() {
    let (code, out) = run(&[
        "report".into(),
        "packs/actions".into(),
        "--dialect".into(),
        "actions".into(),
    ]);
    assert_eq!(code, 0);
    let committed = std::fs::read_to_string(repo().join("tests/pack-reports/actions.txt")).unwrap();
    assert_eq!(out, committed);
    let (code, _) = run(&[
        "report".into(),
        "packs/actions".into(),
        "--at".into(),
        "soon".into(),
    ]);
    assert_eq!(code, 2);
    let (code, _) = run(&["report".into(), "packs/no-such-pack".into()]);
    assert_eq!(code, 2);
}

#[test]
fn documentation_pages_exist_and_list_every_diagnostic_code() {
    let text = readme();
    for page in [
        "docs/host-author.md",
        "docs/operator.md",
        "docs/pack-author.md",
        "docs/dependencies.md",
    ] {
        assert!(text.contains(&format!("]({page})")), "README links {page}");
        assert!(repo().join(page).is_file(), "{page} exists");
    }
    let pack_author = std::fs::read_to_string(repo().join("docs/pack-author.md")).unwrap();
    for code in skill_runtime::format::Code::ALL {
        assert!(
            pack_author.contains(&format!("| `{}` |", code.as_str())),
            "docs/pack-author.md does not list `{}`",
            code.as_str()
        );
    }
    let operator = std::fs::read_to_string(repo().join("docs/operator.md")).unwrap();
    for key in [
        "SKILLS_LISTEN",
        "SKILLS_TOKEN",
        "token_env",
        "state_dir",
        "[[sources]]",
    ] {
        assert!(operator.contains(key), "docs/operator.md mentions {key}");
    }
}
