//! Issue 45: under `require_lock` a script runs exactly the bytes its check verified. The
//! hook in `exec::script::run` swaps the file between the check and the start, as an editor racing the
//! launch would (the swapped code ran before).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use skill_registry::{Lock, Registry, RegistryConfig, Source};

use crate::exec::script::BEFORE_SPAWN;
use crate::{Engine, EngineConfig, Scope};

const SKILL: &str = "---\nname: t\ndescription: Runs the t report.\nscripts:\n  - scripts/run.sh\n---\n# t\n\n## Usage\n\nRun it.\n";

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Another file renamed over the script: the path names new code, the check's open file
/// the old.
fn rename_over(path: &Path) {
    let new = path.with_extension("new");
    executable(&new, "#!/bin/sh\necho swapped-code\n");
    std::fs::rename(&new, path).unwrap();
}

/// The same file rewritten in place (same inode, same size): an open descriptor of it
/// would see the new bytes too.
fn rewrite_in_place(path: &Path) {
    std::fs::write(path, "#!/bin/sh\necho swapped-code\n").unwrap();
}

/// The hook is one for the crate's tests: one swapping test at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn run_with_swap(swap: fn(&Path)) -> serde_json::Value {
    let _turn = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path().join("pack");
    std::fs::create_dir_all(pack.join("t/scripts")).unwrap();
    std::fs::write(pack.join("t/SKILL.md"), SKILL).unwrap();
    let script = pack.join("t/scripts/run.sh");
    // The same length as the swapped text, so a size check alone cannot tell them apart.
    executable(&script, "#!/bin/sh\necho locked-code!\n");
    let mut registry = RegistryConfig::with_sources(vec![Source::new(&pack, "project")]);
    let lock = dir.path().join("skills-lock.json");
    Lock::from_snapshot(&Registry::load(registry.clone()).snapshot())
        .write(&lock)
        .unwrap();
    registry.trust.require_lock = Some(lock);
    #[allow(unused_mut)] // without the `watch` feature there is nothing to turn off
    let mut config = EngineConfig::new(registry);
    #[cfg(feature = "watch")]
    {
        config.watch = None;
    }
    let engine = Engine::start(config).unwrap();
    *BEFORE_SPAWN.lock().unwrap() = Some((script.canonicalize().unwrap(), swap));
    let done = engine.execute("t", &Scope::model()).await;
    *BEFORE_SPAWN.lock().unwrap() = None;
    // The swap happened: the path now holds the other code.
    assert!(
        std::fs::read_to_string(&script)
            .unwrap()
            .contains("swapped-code")
    );
    engine.shutdown().await;
    let outcome = done.outcome.unwrap();
    assert!(outcome.ok, "{outcome:?}");
    outcome.output
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_renamed_over_after_its_check_is_not_what_runs() {
    let output = run_with_swap(rename_over).await;
    assert_eq!(output["stdout"], "locked-code!\n", "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_rewritten_in_place_after_its_check_is_not_what_runs() {
    let output = run_with_swap(rewrite_in_place).await;
    assert_eq!(output["stdout"], "locked-code!\n", "{output}");
}
