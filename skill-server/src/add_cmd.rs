//! `add`: vendor skills another server publishes (`/.well-known/agent-skills/index.json`)
//! into a folder, verified, and lock them.
//!
//! Every artifact is checked against its index digest and every archive path against the
//! skill's folder before anything is written (`skill_runtime::hub::fetch`); the skills are
//! written into a staging folder inside the target and moved into place one by one; then
//! the lock file is written over the whole target folder (as `lock` would), so `verify`
//! and `require_lock` hold the vendored files to what was downloaded.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use skill_runtime::Locked;
use skill_runtime::hub::{FetchOptions, fetch, write_skills};
use skill_runtime::outbound::Client;

use crate::commands::{engine_over, write_out};

/// The index path under a server's address.
const INDEX_PATH: &str = "/.well-known/agent-skills/index.json";
/// The staging folder inside the target (removed after).
const STAGING: &str = ".skill-server-add";

/// The subcommand this module adds.
#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Download skills another server publishes in its discovery index, verify each
    /// against its digest, write them into a folder and lock it. Exit 0 when added, 2 on
    /// any problem (nothing is written then).
    Add {
        /// The server (`https://host`) or its index (`.../index.json`).
        url: String,
        /// Only this skill; repeat for more (default: every skill listed).
        #[arg(long = "skill", value_name = "NAME")]
        skills: Vec<String>,
        /// The folder the skills go into, one subfolder each.
        #[arg(long, default_value = "skills")]
        to: PathBuf,
        /// The lock file written over the folder.
        #[arg(long, default_value = "skills-lock.json")]
        lock: PathBuf,
        /// Replace skills already in the folder.
        #[arg(long)]
        force: bool,
        /// A PEM file of CA certificates to trust besides the platform's roots.
        #[arg(long)]
        ca_file: Option<PathBuf>,
    },
}

/// The index URL of what the user typed: an address gets the well-known path.
pub(crate) fn index_url(url: &str) -> String {
    let bare = url.trim_end_matches('/');
    if bare.ends_with(".json") {
        bare.to_owned()
    } else {
        format!("{bare}{INDEX_PATH}")
    }
}

/// Run `add`; returns the exit code.
pub(crate) fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    crate::commands::exit_code(run_inner(command, out), err)
}

fn run_inner(command: Commands, out: &mut dyn Write) -> Result<u8, String> {
    let Commands::Add {
        url,
        skills,
        to,
        lock,
        force,
        ca_file,
    } = command;
    let client = Client::new(ca_file);
    client.check()?;
    let index = index_url(&url);
    let options = FetchOptions {
        only: (!skills.is_empty()).then_some(skills),
        deadline: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let fetched = runtime
        .block_on(fetch(&client, &index, &options))
        .map_err(|e| e.to_string())?;
    if fetched.is_empty() {
        return Err(format!("{index} lists no skill"));
    }
    if !force {
        if let Some(there) = fetched.iter().find(|s| to.join(&s.name).exists()) {
            return Err(format!(
                "{} is already there: pass --force to replace it",
                to.join(&there.name).display()
            ));
        }
    }
    let staging = to.join(STAGING);
    let _ = std::fs::remove_dir_all(&staging);
    let moved = write_skills(&staging, &fetched)
        .map_err(|e| e.to_string())
        .and_then(|()| move_into(&staging, &to, fetched.iter().map(|s| s.name.as_str())));
    let _ = std::fs::remove_dir_all(&staging);
    moved?;
    let Locked { lock: locked, .. } = engine_over(std::slice::from_ref(&to), false)?.lock();
    locked.write(&lock).map_err(|e| e.to_string())?;
    let files: usize = fetched.iter().map(|s| s.files.len()).sum();
    let names: Vec<&str> = fetched.iter().map(|s| s.name.as_str()).collect();
    write_out(
        out,
        &format!(
            "added {} skill(s), {files} file(s), verified against {index}: {}\ninto {}, locked in {}\n",
            fetched.len(),
            names.join(", "),
            to.display(),
            lock.display()
        ),
    )?;
    Ok(0)
}

/// Move each staged skill folder into `to`, replacing one already there.
fn move_into<'a>(
    staging: &Path,
    to: &Path,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), String> {
    for name in names {
        let target = to.join(name);
        if target.exists() {
            std::fs::remove_dir_all(&target)
                .map_err(|e| format!("cannot replace {}: {e}", target.display()))?;
        }
        std::fs::rename(staging.join(name), &target)
            .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    }
    Ok(())
}
