//! Agent-skills-integration 3.3 and 3.7 through two doorways: a skill proactive for the
//! profile is pre-loaded by selection even when the request does not match it, over the
//! CLI and over HTTP alike (both call the Engine's `select`), and not without the profile.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use crate::common::{repo, request, spawn_serve};

const MESSAGE: &str = "what's the weather like";

fn selected(json: &serde_json::Value) -> Vec<String> {
    json["selected_skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["skill_id"].as_str().unwrap().to_owned())
        .collect()
}

fn cli(profile: Option<&str>) -> serde_json::Value {
    let mut args = vec!["select", "--skills", "packs/agentskills"];
    if let Some(p) = profile {
        args.extend(["--profile", p]);
    }
    args.push(MESSAGE);
    let out = Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .args(&args)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_cli_pre_loads_the_profiles_proactive_skill() {
    let with = cli(Some("work_assistant"));
    assert_eq!(selected(&with), ["meeting-notes"], "{with:#}");
    let reason = with["selected_skills"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("proactive") && reason.contains("work_assistant"),
        "{reason}"
    );
    assert_eq!(with["no_skill_needed"], false);
    assert_eq!(with["disclosure"]["tier"], 3);
    assert_eq!(with["disclosure"]["included"][0], "meeting-notes");
    let without = cli(None);
    assert!(selected(&without).is_empty(), "{without:#}");
    // A profile the skill is not proactive for pre-loads nothing either.
    assert!(selected(&cli(Some("household_x"))).is_empty());
}

#[cfg(unix)]
#[test]
fn http_pre_loads_the_profiles_proactive_skill() {
    let (mut child, addr, _logs) = spawn_serve(
        &[
            "serve",
            "--skills",
            "packs/agentskills",
            "--listen",
            "127.0.0.1:0",
            "--no-watch",
        ],
        &[],
    );
    let post = |body: &str| {
        let (status, text) = request(
            &addr,
            &format!(
                "POST /v1/select HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            ),
            body,
        );
        assert_eq!(status, 200, "{text}");
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let with = post(&format!(
        "{{\"message\":\"{MESSAGE}\",\"profile\":\"work_assistant\"}}"
    ));
    let without = post(&format!("{{\"message\":\"{MESSAGE}\"}}"));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(selected(&with), ["meeting-notes"], "{with:#}");
    assert!(
        with["selected_skills"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("work_assistant")
    );
    assert!(selected(&without).is_empty(), "{without:#}");
    // The same question gets the same answer from both doorways.
    assert_eq!(with, cli(Some("work_assistant")));
}
