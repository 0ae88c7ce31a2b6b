//! The real server over sources that need the source options: a pack keeping its skills in
//! hidden folders (`include_hidden` in the configuration file) and a second pack with a
//! same-named skill given a namespace on the command line (`--skills NS=DIR`). Both are
//! found by `/v1/select` and served by name; `.git` stays out.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(unix)]
use crate::common::{get, post, sigterm_and_wait, spawn_serve, write};

#[cfg(unix)]
#[test]
fn select_finds_hidden_and_namespaced_skills() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "curated/skills/.curated/pdf-forms/SKILL.md",
        "---\nname: pdf-forms\ndescription: Fill in the fields of a PDF form, checkboxes and signatures.\n---\nCurated steps.\n",
    );
    write(
        root,
        "curated/skills/.git/leak/SKILL.md",
        "---\nname: leak\ndescription: Fill in the fields of a PDF form from git.\n---\nNever served.\n",
    );
    write(
        root,
        "vendor/pdf-forms/SKILL.md",
        "---\nname: pdf-forms\ndescription: Fill in the fields of a PDF form from a spreadsheet.\n---\nVendor steps.\n",
    );
    let config = root.join("skills.toml");
    std::fs::write(
        &config,
        "listen = \"127.0.0.1:0\"\nwatch = false\nscheduler = false\n\
         [[sources]]\npath = \"curated/skills\"\nlayer = \"project\"\ninclude_hidden = true\n",
    )
    .unwrap();
    let vendor = format!("vendor={}", root.join("vendor").display());
    let config = config.display().to_string();
    let (child, addr, logs) =
        spawn_serve(&["serve", "--config", &config, "--skills", &vendor], &[]);

    let (status, body) = post(
        &addr,
        "/v1/select",
        r#"{"message": "fill in the fields of this pdf form"}"#,
    );
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let selected: Vec<&str> = v["selected_skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["skill_id"].as_str())
        .collect();
    assert!(selected.contains(&"pdf-forms"), "{body}");
    assert!(selected.contains(&"vendor:pdf-forms"), "{body}");
    assert!(!body.contains("leak"), "{body}");

    // Each is served by its own name.
    let (status, body) = get(&addr, "/v1/skills/vendor:pdf-forms");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Vendor steps."), "{body}");
    let (status, body) = get(&addr, "/v1/skills/pdf-forms");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Curated steps."), "{body}");
    let (status, body) = get(&addr, "/v1/skills/leak");
    assert_eq!(status, 404, "{body}");

    let status = sigterm_and_wait(child);
    let logs = logs.join().unwrap();
    assert!(status.success(), "{status:?}\n{logs}");
}
