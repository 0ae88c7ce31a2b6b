//! Scripts: a child process with no shell, in its own process group, within limits.
//!
//! * **Which script**: the skill's `scripts:` list (toolsets). When the first positional is
//!   a listed script's file name or stem (`run` or `run.sh` for `scripts/run.sh`), that
//!   script runs and the positional is consumed; otherwise the first listed script runs.
//! * **Where**: the entry must be a relative path with no `..` under the skill's
//!   `scripts/` folder (`scripts/run.sh`, `scripts/sub/x.py`), resolving (symbolic links
//!   followed) to a regular file inside `<canonical skill folder>/scripts/`. Executables
//!   elsewhere in the skill's folder (`run.sh` at its top level, or a link in `scripts/`
//!   pointing out of it) are refused. The working directory is the skill's folder.
//! * **Arguments**: the remaining positionals in order, then each flag in name order:
//!   `--name` for a switch, `--name value` for one value, `--name v1 --name v2` for
//!   several. More than [`ScriptLimits::max_args`] arguments, or more than
//!   [`ScriptLimits::max_arg_bytes`] bytes of them together, are refused before anything
//!   starts.
//! * **Environment**: cleared, then the allowlisted variables copied from the runtime's
//!   own environment (`PATH` falls back to [`FALLBACK_PATH`]), plus `SKILL_NAME` and
//!   `SKILL_DIR`.
//! * **Limits**: past the timeout, or once stdout and stderr together pass the output
//!   limit, the whole process group and every descendant are killed with `SIGKILL`. On
//!   Linux the script and everything it started (followed by lineage, see the `contain`
//!   module: `setsid` does not escape; zombies not yet reaped included, threads not
//!   counted) are counted every [`PROCESS_CHECK_INTERVAL`] from `/proc`; more than
//!   [`ScriptLimits::max_processes`] and they are all killed the same way. `killpg`
//!   reaches every member of the group at once, and a member forking at that moment has
//!   its fork fail (the kernel refuses a fork while a fatal signal is pending); the others
//!   are killed pass after pass until none runs. The whole group runs at the lowest
//!   priority ([`SCRIPT_NICE`], set right after the spawn and again at every count), so a
//!   bomb that saturates the CPUs cannot starve the count, the server or its requests; a
//!   cgroup's `pids.max` would bound it without any delay, but needs a delegated cgroup v2
//!   hierarchy. Other Unix systems do not count processes (there a fork bomb runs until
//!   the timeout) and reach only the process group. When the script itself exits,
//!   whatever it left running is killed too, so background children never outlive it.
//!   The same happens at runtime shutdown and when the execution is dropped. The script is
//!   always waited for (no zombie of ours).
//! * **Verified bytes** (`require_lock`, Linux): the bytes the lock check read and hashed
//!   are copied into a sealed memory file (`memfd_create`, then no write, grow or shrink
//!   ever again) and that file is executed through `/proc/self/fd/N`, so a script renamed
//!   over or rewritten in place between the check and the start is not what runs. The
//!   descriptor is inherited by the script (an interpreter named by `#!` opens it by that
//!   path, so `$0` is `/proc/self/fd/N`; `SKILL_DIR` names the folder), and by a script
//!   another request starts at the same moment (a read-only copy of a locked script).
//!   Elsewhere the path is run after the check.
//!
//! [`ScriptLimits::max_args`]: crate::exec::ScriptLimits::max_args
//! [`ScriptLimits::max_arg_bytes`]: crate::exec::ScriptLimits::max_arg_bytes
//! [`ScriptLimits::max_processes`]: crate::exec::ScriptLimits::max_processes
//! [`PROCESS_CHECK_INTERVAL`]: crate::exec::PROCESS_CHECK_INTERVAL
//! [`SCRIPT_NICE`]: crate::exec::SCRIPT_NICE
//! [`FALLBACK_PATH`]: crate::exec::FALLBACK_PATH

use std::path::{Component, Path, PathBuf};
use std::process::Stdio;

use skill_registry::Skill;
use skill_router::{FlagValue, Invocation};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use crate::exec::config::{FALLBACK_PATH, PROCESS_CHECK_INTERVAL, RuntimeConfig, SCRIPT_NICE};
use crate::exec::{Error, Limit};

/// The script chosen for an invocation and its argument vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The `scripts:` entry chosen, as written.
    pub(crate) entry: String,
    pub(crate) path: PathBuf,
    pub(crate) args: Vec<String>,
}

/// What a finished script produced.
#[derive(Debug)]
pub(crate) struct Ran {
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    pub(crate) result: Result<i32, Error>,
}

impl Plan {
    /// The script as messages name it: the skill's folder as its source names it, joined
    /// with the entry (not the resolved path, which may leave the source's spelling, so
    /// that an answer can write it relative to its source).
    fn named(&self, skill: &Skill) -> PathBuf {
        skill.dir.join(&self.entry)
    }
}

fn stem(entry: &str) -> (&str, &str) {
    let file = entry.rsplit('/').next().unwrap_or(entry);
    let stem = file.split_once('.').map_or(file, |(s, _)| s);
    (file, stem)
}

/// Choose the script and build the argument vector (see the module docs).
pub(crate) fn plan(skill: &Skill, inv: &Invocation, config: &RuntimeConfig) -> Result<Plan, Error> {
    let scripts = &skill.manifest.scripts;
    let mut positionals = inv.positionals.as_slice();
    let chosen = match positionals.first() {
        Some(first) => match scripts.iter().find(|s| {
            let (file, stem) = stem(s);
            first == file || first == stem
        }) {
            Some(s) => {
                positionals = positionals.get(1..).unwrap_or(&[]);
                s
            }
            None => scripts.first().ok_or_else(|| no_script(skill))?,
        },
        None => scripts.first().ok_or_else(|| no_script(skill))?,
    };
    let path = resolve(skill, chosen)?;
    let mut args: Vec<String> = positionals.to_vec();
    for (name, value) in inv.flags.iter() {
        match value {
            FlagValue::Switch(_) => args.push(format!("--{name}")),
            other => {
                for v in other.values() {
                    args.push(format!("--{name}"));
                    args.push(v.clone());
                }
            }
        }
    }
    let limits = &config.limits;
    if args.len() > limits.max_args {
        return Err(Error::Limit {
            limit: Limit::Arguments,
            message: format!(
                "{} arguments given; scripts take at most {} (not started)",
                args.len(),
                limits.max_args
            ),
        });
    }
    let bytes: usize = args.iter().map(String::len).sum();
    if bytes > limits.max_arg_bytes {
        return Err(Error::Limit {
            limit: Limit::ArgumentBytes,
            message: format!(
                "arguments are {bytes} bytes; scripts take at most {} bytes (not started)",
                limits.max_arg_bytes
            ),
        });
    }
    if let Some(a) = args.iter().find(|a| a.contains('\0')) {
        return Err(Error::ScriptPath {
            skill: skill.name.clone(),
            script: chosen.clone(),
            reason: format!("argument {a:?} contains a NUL byte"),
        });
    }
    Ok(Plan {
        entry: chosen.clone(),
        path,
        args,
    })
}

fn no_script(skill: &Skill) -> Error {
    Error::ScriptPath {
        skill: skill.name.clone(),
        script: String::new(),
        reason: "the skill lists no scripts".into(),
    }
}

/// The folder of a skill that holds its scripts.
const SCRIPTS_DIR: &str = "scripts";

/// Resolve a `scripts:` entry to a regular file inside the skill's `scripts/` folder.
pub(crate) fn resolve(skill: &Skill, entry: &str) -> Result<PathBuf, Error> {
    let bad = |reason: &str| Error::ScriptPath {
        skill: skill.name.clone(),
        script: entry.to_owned(),
        reason: reason.to_owned(),
    };
    let rel = Path::new(entry);
    if entry.is_empty() || entry.contains('\0') {
        return Err(bad("empty path or NUL byte"));
    }
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            Component::ParentDir => return Err(bad("`..` is not allowed")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(bad("absolute paths are not allowed"));
            }
        }
    }
    if names.len() < 2 || names.first().is_none_or(|n| *n != SCRIPTS_DIR) {
        return Err(bad(
            "scripts must be files under the skill's `scripts/` folder (for example `scripts/run.sh`)",
        ));
    }
    let root = skill
        .dir
        .canonicalize()
        .map_err(|e| bad(&format!("the skill folder cannot be read: {e}")))?;
    let full = root
        .join(rel)
        .canonicalize()
        .map_err(|e| bad(&format!("not found: {e}")))?;
    if !full.starts_with(root.join(SCRIPTS_DIR)) {
        return Err(bad(
            "it resolves (through a symbolic link) outside the skill's `scripts/` folder",
        ));
    }
    if !full.is_file() {
        return Err(bad("not a regular file"));
    }
    Ok(full)
}

#[cfg(target_os = "linux")]
use crate::exec::contain::{Tree, spawn};
#[cfg(target_os = "linux")]
use crate::exec::pids::RunCgroup;

/// Off Linux there is no pids cgroup.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
struct RunCgroup;

#[cfg(not(target_os = "linux"))]
impl RunCgroup {
    fn create(_max: usize) -> Option<RunCgroup> {
        None
    }
    fn spawn_inside<T>(&self, spawn: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
        spawn()
    }
    fn over(&self) -> bool {
        false
    }
    fn remove(self) {}
}
use crate::exec::group::kill_group;

/// Off Linux nothing follows a script's descendants: only its process group is killed.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
struct Tree;

#[cfg(not(target_os = "linux"))]
impl Tree {
    fn scan(&mut self) -> Option<usize> {
        None
    }
    fn kill_all(&mut self) {}
}

#[cfg(not(target_os = "linux"))]
fn spawn(
    cmd: &mut tokio::process::Command,
) -> std::io::Result<(tokio::process::Child, Option<Tree>)> {
    Ok((cmd.spawn()?, None))
}

/// Lower the priority of every process now in the group to [`SCRIPT_NICE`]; children
/// forked later inherit it. A group that is already gone is fine.
#[cfg(unix)]
fn demote_group(pgid: u32) {
    if let Some(pid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::setpriority_pgrp(Some(pid), SCRIPT_NICE);
    }
}

#[cfg(not(unix))]
fn demote_group(_pgid: u32) {}

/// Kills the process group and every descendant when dropped, unless disarmed: a dropped
/// execution never leaves its script or anything it started running.
struct GroupGuard {
    pgid: Option<u32>,
    tree: Option<Tree>,
    /// The run's pids cgroup, where one could be made.
    cgroup: Option<RunCgroup>,
}

impl GroupGuard {
    /// Kill the group and every descendant now, and wait (off the async workers) until they
    /// are dead and reaped; the descendants are not followed after that.
    async fn kill_all(&mut self) {
        if let Some(p) = self.pgid {
            kill_group(p);
        }
        let tree = self.tree.take();
        let cgroup = self.cgroup.take();
        if tree.is_some() || cgroup.is_some() {
            let _ = tokio::task::spawn_blocking(move || {
                if let Some(mut tree) = tree {
                    tree.kill_all();
                }
                if let Some(cg) = cgroup {
                    cg.remove();
                }
            })
            .await;
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(p) = self.pgid {
            kill_group(p);
        }
        // Dropped mid-run: the rest of the killing (and reaping) goes on in a thread.
        let tree = self.tree.take();
        let cgroup = self.cgroup.take();
        if tree.is_some() || cgroup.is_some() {
            let _ = std::thread::Builder::new()
                .name("script-reaper".into())
                .spawn(move || {
                    if let Some(mut tree) = tree {
                        tree.kill_all();
                    }
                    if let Some(cg) = cgroup {
                        cg.remove();
                    }
                });
        }
    }
}

fn status_text(status: std::process::ExitStatus) -> (i32, String) {
    if let Some(code) = status.code() {
        return (code, format!("exited with status {code}"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return (128 + sig, format!("was killed by signal {sig}"));
        }
    }
    (-1, "ended without a status".to_owned())
}

/// The verified bytes of a script in a sealed memory file the script inherits (see the
/// module docs): executable where the kernel asks memory files to say so (`MFD_EXEC`),
/// without the flag where it does not know it.
#[cfg(target_os = "linux")]
fn sealed_copy(bytes: &[u8]) -> std::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{MemfdFlags, SealFlags, fcntl_add_seals, memfd_create};
    use std::io::Write;
    const NAME: &str = "skill-script";
    let fd = memfd_create(NAME, MemfdFlags::ALLOW_SEALING | MemfdFlags::EXEC)
        .or_else(|_| memfd_create(NAME, MemfdFlags::ALLOW_SEALING))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    fcntl_add_seals(
        &file,
        SealFlags::SEAL | SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE,
    )?;
    Ok(file.into())
}

/// Called with the script's path after its check and before its start, in unit tests: the
/// gap a swapped script would use.
#[cfg(test)]
pub(crate) static BEFORE_SPAWN: std::sync::Mutex<Option<SwapHook>> = std::sync::Mutex::new(None);

/// A script's path and what to do to it ([`BEFORE_SPAWN`]).
#[cfg(test)]
pub(crate) type SwapHook = (PathBuf, fn(&Path));

/// Run a planned script: with `verified` (the bytes the lock check read), exactly those
/// bytes on Linux. `shutdown` turning true stops it.
pub(crate) async fn run(
    skill: &Skill,
    plan: &Plan,
    verified: Option<Vec<u8>>,
    config: &RuntimeConfig,
    mut shutdown: watch::Receiver<bool>,
) -> Ran {
    let fail = |e: Error| Ran {
        stdout: Vec::new(),
        stderr: Vec::new(),
        result: Err(e),
    };
    #[cfg(target_os = "linux")]
    let sealed = match verified.as_deref().map(sealed_copy).transpose() {
        Ok(s) => s,
        Err(e) => {
            return fail(Error::Spawn {
                path: plan.named(skill),
                message: format!("cannot copy the verified script to run it: {e}"),
            });
        }
    };
    #[cfg(target_os = "linux")]
    let program = match &sealed {
        Some(fd) => {
            use std::os::fd::AsRawFd;
            PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        }
        None => plan.path.clone(),
    };
    #[cfg(not(target_os = "linux"))]
    let program = {
        drop(verified);
        plan.path.clone()
    };
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(&plan.args)
        .current_dir(&skill.dir)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for name in &config.env_allowlist {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    if !config.env_allowlist.iter().any(|n| n == "PATH") || std::env::var_os("PATH").is_none() {
        cmd.env("PATH", FALLBACK_PATH);
    }
    cmd.env("SKILL_NAME", &skill.name)
        .env("SKILL_DIR", &skill.dir);
    #[cfg(unix)]
    cmd.process_group(0);
    if *shutdown.borrow() {
        return fail(Error::ShuttingDown);
    }
    #[cfg(test)]
    if let Ok(hook) = BEFORE_SPAWN.lock()
        && let Some((path, swap)) = hook.as_ref()
        && *path == plan.path
    {
        swap(path);
    }
    // The exact limit where the kernel can hold it (see the pids module).
    let cgroup = RunCgroup::create(config.limits.max_processes);
    let spawned = match &cgroup {
        Some(cg) => cg.spawn_inside(|| spawn(&mut cmd)),
        None => spawn(&mut cmd),
    };
    // The script holds its own copy of the descriptor now.
    #[cfg(target_os = "linux")]
    drop(sealed);
    let (mut child, tree) = match spawned {
        Ok(c) => c,
        Err(e) => {
            if let Some(cg) = cgroup {
                let _ = tokio::task::spawn_blocking(move || cg.remove()).await;
            }
            return fail(Error::Spawn {
                path: plan.named(skill),
                message: e.to_string(),
            });
        }
    };
    // With process_group(0) the group id is the child's pid.
    let mut guard = GroupGuard {
        pgid: child.id(),
        tree,
        cgroup,
    };
    // At once, so that what the script forks inherits the low priority; again at every
    // count, for whatever it forked in between.
    if let Some(p) = guard.pgid {
        demote_group(p);
    }
    let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
        return fail(Error::Internal("script pipes were not set up".into()));
    };
    let limits = &config.limits;
    let timeout = limits.effective_timeout();
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let mut buf_out = [0u8; 8192];
    let mut buf_err = [0u8; 8192];
    let (mut out_open, mut err_open) = (true, true);
    let mut exited: Option<std::process::ExitStatus> = None;
    let mut stopped: Option<Error> = None;
    let mut proc_unreadable = false;
    let mut refused = false;
    let mut count_tick = tokio::time::interval(PROCESS_CHECK_INTERVAL);
    count_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while stopped.is_none() && (exited.is_none() || out_open || err_open) {
        tokio::select! {
            status = child.wait(), if exited.is_none() => {
                match status {
                    Ok(s) => exited = Some(s),
                    Err(e) => stopped = Some(Error::Internal(format!("waiting for the script failed: {e}"))),
                }
                // A script that met the kernel's limit (and may have ended of it) is
                // reported as over the limit, as one killed at a count is, once its
                // output is read.
                refused |= guard.cgroup.as_ref().is_some_and(RunCgroup::over);
                // Whatever the script left running goes with it; this also closes pipes
                // its children still hold.
                guard.kill_all().await;
            }
            n = out.read(&mut buf_out), if out_open => match n {
                Ok(0) | Err(_) => out_open = false,
                Ok(n) => stdout.extend_from_slice(buf_out.get(..n).unwrap_or(&[])),
            },
            n = err.read(&mut buf_err), if err_open => match n {
                Ok(0) | Err(_) => err_open = false,
                Ok(n) => stderr.extend_from_slice(buf_err.get(..n).unwrap_or(&[])),
            },
            () = &mut deadline => {
                stopped = Some(Error::Limit {
                    limit: Limit::Timeout,
                    message: format!("the script ran longer than {timeout:?} and was killed"),
                });
            }
            // (A plain value, not the channel's read guard: the guard is not `Send` and the
            // count below awaits while select's output is alive.)
            _ = async { shutdown.wait_for(|v| *v).await.is_ok() } => {
                stopped = Some(Error::ShuttingDown);
            }
            _ = count_tick.tick(), if guard.tree.is_some() && exited.is_none() => {
                if let Some(p) = guard.pgid { demote_group(p); }
                let max = limits.max_processes;
                if guard.cgroup.as_ref().is_some_and(RunCgroup::over) {
                    // Killed now; the output it wrote is still read to its end.
                    refused = true;
                    guard.kill_all().await;
                    continue;
                }
                let counted = match guard.tree.take() {
                    Some(mut t) => tokio::task::spawn_blocking(move || {
                        let n = t.scan();
                        (t, n)
                    })
                    .await
                    .ok(),
                    None => None,
                };
                match counted {
                    Some((t, Some(n))) => {
                        guard.tree = Some(t);
                        if n > max {
                            stopped = Some(Error::Limit {
                                limit: Limit::Processes,
                                message: format!(
                                    "the script had more than {max} processes at once (itself and everything it started) and was killed"
                                ),
                            });
                        }
                    }
                    Some((t, None)) => {
                        // A read that failed (too many open files, say) is tried again at
                        // the next count: one failure must not lift the limit for the rest
                        // of the run (it did, and a fork bomb ran to the timeout).
                        guard.tree = Some(t);
                        if !proc_unreadable {
                            proc_unreadable = true;
                            tracing::warn!(
                                script = %plan.path.display(),
                                "cannot count the script's processes in /proc (trying again at every count): the process limit is not enforced meanwhile"
                            );
                        }
                    }
                    None => {
                        tracing::error!(
                            script = %plan.path.display(),
                            "counting the script's processes failed (the counting task did not finish): the process limit is not enforced for the rest of this run"
                        );
                    }
                }
            }
        }
        if stopped.is_none() && stdout.len() + stderr.len() > limits.max_output_bytes {
            stopped = Some(Error::Limit {
                limit: Limit::Output,
                message: format!(
                    "the script wrote more than {} bytes (stdout and stderr together) and was killed",
                    limits.max_output_bytes
                ),
            });
        }
    }
    if refused && stopped.is_none() {
        stopped = Some(refused_fork(limits.max_processes));
    }
    if let Some(e) = stopped {
        guard.kill_all().await;
        if exited.is_none() {
            // SIGKILL cannot be ignored: this returns promptly and reaps the child.
            let _ = child.wait().await;
        }
        guard.pgid = None;
        truncate(&mut stdout, &mut stderr, limits.max_output_bytes);
        return Ran {
            stdout,
            stderr,
            result: Err(e),
        };
    }
    guard.pgid = None;
    let Some(status) = exited else {
        return fail(Error::Internal("the script ended without a status".into()));
    };
    let (code, text) = status_text(status);
    Ran {
        stdout,
        stderr,
        result: if status.success() {
            Ok(code)
        } else {
            Err(Error::ScriptFailed {
                path: plan.named(skill),
                status: text,
            })
        },
    }
}

/// The process limit's error when the kernel refused a fork (see the pids module).
fn refused_fork(max: usize) -> Error {
    Error::Limit {
        limit: Limit::Processes,
        message: format!(
            "the script tried to have more than {max} processes at once (itself and everything it started; the kernel refused the fork) and was killed"
        ),
    }
}

/// Keep at most `limit` bytes of output in total, stdout first.
fn truncate(stdout: &mut Vec<u8>, stderr: &mut Vec<u8>, limit: usize) {
    stdout.truncate(limit);
    stderr.truncate(limit.saturating_sub(stdout.len()));
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn stems_and_file_names() {
        assert_eq!(stem("scripts/run.sh"), ("run.sh", "run"));
        assert_eq!(
            stem("scripts/archive.tar.gz"),
            ("archive.tar.gz", "archive")
        );
        assert_eq!(stem("plain"), ("plain", "plain"));
    }

    /// Run a script skill `lab` whose script is `text`, with at most `max` processes.
    #[cfg(target_os = "linux")]
    async fn run_lab(text: &str, max: usize) -> (Ran, tempfile::TempDir) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let lab = dir.path().join("lab");
        std::fs::create_dir_all(lab.join("scripts")).unwrap();
        std::fs::write(
            lab.join("SKILL.md"),
            "---\nname: lab\ndescription: Runs a test script.\nscripts:\n  - scripts/hold.sh\n---\n\n# Lab\n",
        )
        .unwrap();
        let script = lab.join("scripts/hold.sh");
        std::fs::write(&script, text).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let registry =
            skill_registry::Registry::load(skill_registry::RegistryConfig::with_sources(vec![
                skill_registry::Source::new(dir.path(), "test"),
            ]));
        let snapshot = registry.snapshot();
        let skill = snapshot.get("lab").unwrap();
        let mut config = RuntimeConfig::default();
        config.limits.max_processes = max;
        config.limits.timeout = std::time::Duration::from_secs(5);
        let inv = Invocation::with_flags("lab", skill_router::Flags::new(), None, "test");
        let plan = plan(skill, &inv, &config).unwrap();
        let (_tx, shutdown) = watch::channel(false);
        (run(skill, &plan, None, &config, shutdown).await, dir)
    }

    fn processes_limit(ran: &Ran) -> bool {
        matches!(
            ran.result,
            Err(Error::Limit {
                limit: Limit::Processes,
                ..
            })
        )
    }

    /// A count that cannot read `/proc` (too many open files, say) is tried again at the
    /// next one: the first failure used to drop the run's process tree, and with it the
    /// limit, for the rest of the run (a fork bomb then ran to the timeout: the flaky
    /// fork-bomb test). This is the fallback where no pids cgroup can be made (turned off
    /// here): the lineage count alone stops the run.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn failed_counts_do_not_lift_the_process_limit() {
        let _serial = crate::exec::contain::SERIAL.lock().await;
        crate::exec::pids::OFF.store(true, std::sync::atomic::Ordering::SeqCst);
        crate::exec::contain::FAILED_READS.store(3, std::sync::atomic::Ordering::SeqCst);
        let (ran, _dir) = run_lab(
            "#!/bin/sh\ni=0\nwhile [ $i -lt 6 ]; do sleep 30 & i=$((i+1)); done\nwait\n",
            3,
        )
        .await;
        crate::exec::contain::FAILED_READS.store(0, std::sync::atomic::Ordering::SeqCst);
        crate::exec::pids::OFF.store(false, std::sync::atomic::Ordering::SeqCst);
        assert!(processes_limit(&ran), "{:?}", ran.result);
    }

    /// Where a pids cgroup can be made, a fork loop gets exactly the limit: the script and
    /// `max - 1` children, never more (the count of `/proc` every 20 ms let 84 to 165 of
    /// a 64 limit start), and the run stops with the process limit.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_fork_loop_gets_exactly_the_limit_where_the_kernel_holds_it() {
        let _serial = crate::exec::contain::SERIAL.lock().await;
        let Some(probe) = crate::exec::pids::RunCgroup::create(2) else {
            eprintln!("no writable pids cgroup here: the fallback test covers this host");
            return;
        };
        tokio::task::spawn_blocking(move || probe.remove())
            .await
            .unwrap();
        let max = 6;
        // Each child's pid is printed once it is started (a refused fork ends the shell).
        let (ran, _dir) = run_lab(
            "#!/bin/sh\ni=0\nwhile [ $i -lt 200 ]; do sleep 30 & echo $!; i=$((i+1)); done\nwait\n",
            max,
        )
        .await;
        assert!(processes_limit(&ran), "{:?}", ran.result);
        let started = String::from_utf8_lossy(&ran.stdout).lines().count();
        // The edge: the limit is reached, not passed.
        assert_eq!(started, max - 1, "children for a limit of {max}");
    }

    #[test]
    fn truncation_keeps_the_limit() {
        let mut out = vec![1u8; 10];
        let mut err = vec![2u8; 10];
        truncate(&mut out, &mut err, 15);
        assert_eq!((out.len(), err.len()), (10, 5));
        truncate(&mut out, &mut err, 4);
        assert_eq!((out.len(), err.len()), (4, 0));
    }
}
