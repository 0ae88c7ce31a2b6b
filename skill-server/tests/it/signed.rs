//! Signed locks through the real binary: interoperability with the `minisign` command-line
//! tool both ways (skipped, with a message, where it is not installed; `.ci/minisign`
//! installs it), and `serve` with `require_signature`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{get, spawn_serve};

fn skill_server(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skill-server"))
        .args(args)
        .output()
        .unwrap()
}

fn minisign(args: &[&str]) -> Option<Output> {
    match Command::new("minisign").args(args).output() {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("minisign: {e}"),
    }
}

fn skills(root: &Path) {
    for name in ["alpha-notes", "beta-charts"] {
        let folder = root.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} skill.\n---\nSteps.\n"),
        )
        .unwrap();
    }
}

#[test]
fn locks_signed_here_verify_with_minisign_and_the_other_way_round() {
    let Some(version) = minisign(&["-v"]) else {
        eprintln!(
            "SKIPPED locks_signed_here_verify_with_minisign_and_the_other_way_round: the \
             `minisign` tool is not installed (bash .ci/minisign installs it)"
        );
        return;
    };
    assert!(version.status.success());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("pack");
    skills(&root);
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let (public, secret, lock) = (path("k.pub"), path("k.key"), path("skills-lock.json"));
    let keygen = minisign(&["-G", "-W", "-p", &public, "-s", &secret]).unwrap();
    assert!(keygen.status.success(), "{keygen:?}");
    let root_s = root.to_string_lossy().into_owned();

    // Signed here, verified by minisign.
    let out = skill_server(&["lock", "--output", &lock, "--sign", &secret, &root_s]);
    assert!(out.status.success(), "{out:?}");
    let checked = minisign(&["-V", "-p", &public, "-m", &lock]).unwrap();
    assert!(checked.status.success(), "{checked:?}");

    // Signed by minisign (over the same lock), verified here.
    let signed = minisign(&["-S", "-s", &secret, "-m", &lock]).unwrap();
    assert!(signed.status.success(), "{signed:?}");
    let out = skill_server(&["verify", "--lock", &lock, "--pubkey", &public, &root_s]);
    assert!(out.status.success(), "{out:?}");
    // minisign's legacy signatures (over the whole file) verify too.
    let legacy = minisign(&["-S", "-l", "-s", &secret, "-m", &lock]).unwrap();
    assert!(legacy.status.success(), "{legacy:?}");
    let out = skill_server(&["verify", "--lock", &lock, "--pubkey", &public, &root_s]);
    assert!(out.status.success(), "{out:?}");

    // The lock edited after minisign signed it: refused by both.
    let text = std::fs::read_to_string(&lock).unwrap();
    std::fs::write(&lock, text.replace("\"version\": 1", "\"version\":  1")).unwrap();
    let out = skill_server(&["verify", "--lock", &lock, "--pubkey", &public, &root_s]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        !minisign(&["-V", "-p", &public, "-m", &lock])
            .unwrap()
            .status
            .success()
    );

    // Another key pair's public key: refused.
    let (other_pub, other_key) = (path("o.pub"), path("o.key"));
    assert!(
        minisign(&["-G", "-W", "-p", &other_pub, "-s", &other_key])
            .unwrap()
            .status
            .success()
    );
    std::fs::write(&lock, &text).unwrap();
    assert!(
        minisign(&["-S", "-s", &secret, "-m", &lock])
            .unwrap()
            .status
            .success()
    );
    let out = skill_server(&["verify", "--lock", &lock, "--pubkey", &other_pub, &root_s]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

/// `serve` with `require_signature`: a lock whose signature verifies is served; one edited
/// after signing, or signed with another key, excludes every skill (`lock-unreadable`,
/// saying why).
#[cfg(unix)]
#[test]
fn serve_requires_a_lock_signed_by_the_configured_key() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("pack");
    skills(&root);
    let (public, secret) = (dir.path().join("k.pub"), dir.path().join("k.key"));
    std::fs::write(&public, crate::signed::TEST_PUBLIC_KEY).unwrap();
    std::fs::write(&secret, crate::signed::TEST_SECRET_KEY).unwrap();
    let lock = dir.path().join("skills-lock.json");
    let out = skill_server(&[
        "lock",
        "--output",
        lock.to_str().unwrap(),
        "--sign",
        secret.to_str().unwrap(),
        root.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let config = dir.path().join("skills.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nwatch = false\n\
             [[sources]]\npath = \"{}\"\nlayer = \"project\"\n\
             [trust]\nrequire_lock = \"skills-lock.json\"\nrequire_signature = \"k.pub\"\n",
            root.display()
        ),
    )
    .unwrap();
    let config = config.to_string_lossy().into_owned();
    let serve = || spawn_serve(&["serve", "--config", &config], &[]);

    let (child, addr, _logs) = serve();
    let (_, listed) = get(&addr, "/v1/skills");
    assert!(
        listed.contains("\"alpha-notes\"") && listed.contains("\"beta-charts\""),
        "{listed}"
    );
    crate::serve::terminate(child);

    // Edited after signing: nothing is served, and the diagnostics say why.
    let text = std::fs::read_to_string(&lock).unwrap();
    std::fs::write(&lock, text.replace("\"version\": 1", "\"version\":  1")).unwrap();
    let (child, addr, _logs) = serve();
    let (_, listed) = get(&addr, "/v1/skills");
    assert!(!listed.contains("alpha-notes"), "{listed}");
    let (_, diagnostics) = get(&addr, "/v1/diagnostics");
    assert!(
        diagnostics.contains("lock-unreadable") && diagnostics.contains("does not verify"),
        "{diagnostics}"
    );
    crate::serve::terminate(child);
}

/// A test-only minisign key pair, unencrypted (made with `minisign -G -W`).
pub const TEST_PUBLIC_KEY: &str = "untrusted comment: minisign public key D3AD848C1B8BBD31\nRWQxvYsbjISt077P/k5F42JxVn8H87CenqKmQdvHxwAbWQ2pBjg7VU3r\n";
/// Its secret key.
pub const TEST_SECRET_KEY: &str = "untrusted comment: minisign encrypted secret key\nRWQAAEIyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAMb2LG4yErdMJtOyRaJhm901tmWCbTEXERpBaF1jF3X+nPwi84xe6U77P/k5F42JxVn8H87CenqKmQdvHxwAbWQ2pBjg7VU3rAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
