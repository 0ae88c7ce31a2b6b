//! Helpers shared by the `exec*` integration tests: temp skill folders and invocations.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use skill_registry::{Registry, RegistryConfig, Source};
use skill_router::{FlagValue, Flags, Invocation, access_of};

/// Write `text` to `root/rel`, creating folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Write an executable script.
#[cfg(unix)]
pub fn script(root: &Path, rel: &str, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(root, rel, text);
    let path = root.join(rel);
    let mut perm = std::fs::metadata(&path).unwrap().permissions();
    perm.set_mode(0o755);
    std::fs::set_permissions(&path, perm).unwrap();
}

/// A registry over one folder source.
pub fn registry(root: &Path, writable: bool) -> Arc<Registry> {
    let mut source = Source::new(root, "user");
    source.writable = writable;
    Arc::new(Registry::load(RegistryConfig::with_sources(vec![source])))
}

/// An invocation as the router would produce it for `skill pos... --flag value...`.
pub fn inv(skill: &str, positionals: &[&str], flags: &[(&str, &[&str])]) -> Invocation {
    let mut f = Flags::new();
    let mut raw = skill.to_owned();
    for p in positionals {
        raw.push(' ');
        raw.push_str(p);
    }
    for (name, values) in flags {
        raw.push_str(&format!(" --{name}"));
        for v in *values {
            raw.push_str(&format!(" {v}"));
        }
        let value = match values.len() {
            0 => FlagValue::Switch(true),
            1 => FlagValue::One(values[0].to_owned()),
            _ => FlagValue::Many(values.iter().map(|v| (*v).to_owned()).collect()),
        };
        f.insert(*name, value);
    }
    Invocation {
        skill: skill.to_owned(),
        flags: f,
        positionals: positionals.iter().map(|p| (*p).to_owned()).collect(),
        raw,
        access: access_of(skill),
        handler: None,
        layer: "user".into(),
    }
}

/// Whether a process is gone (no entry) or dead and waiting to be reaped by its parent
/// (a zombie: it no longer runs). Linux reads `/proc`; elsewhere `kill(pid, 0)`.
#[cfg(unix)]
pub fn is_dead(pid: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => {
                // The state follows the parenthesised command name.
                let state = stat.rsplit_once(") ").map(|(_, r)| r.chars().next());
                matches!(state, Some(Some('Z' | 'X')))
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        rustix::process::Pid::from_raw(pid)
            .is_none_or(|pid| rustix::process::test_kill_process(pid).is_err())
    }
}

/// Wait (bounded, polling) until every pid is dead. Processes killed with their group are
/// not our children, so no event tells us when they are gone; SIGKILL takes effect within
/// milliseconds, and this gives up after five seconds.
#[cfg(unix)]
pub fn all_dead(pids: &[i32]) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        if pids.iter().all(|p| is_dead(*p)) {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Processes of process group `pgid` that still run (zombies are dead: not listed). Linux
/// only (`/proc`); the command name in `stat` may hold `)`, so fields are read after the
/// last one.
#[cfg(target_os = "linux")]
pub fn running_in_group(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
        let alive = !matches!(fields.first(), Some(&"Z" | &"X"));
        if alive && fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

/// Wait (bounded, polling: the group's members are not our children) until no process of
/// group `pgid` runs; false after five seconds.
#[cfg(target_os = "linux")]
pub fn group_gone(pgid: i32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        if running_in_group(pgid).is_empty() {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// A writer the test reads back: every log line the process wrote.
#[derive(Clone, Default)]
pub struct Captured(pub Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// The log lines of every test, at INFO: the subscriber is the process's global one (a
/// thread-scoped one misses events when other tests run at the same time), so each test
/// picks out its own lines.
pub fn captured_log() -> &'static Captured {
    static LOG: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
    LOG.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        captured
    })
}

/// Tests that start more processes than a script itself, or count them exactly, take this
/// first, so that none runs beside another. A process orphaned by one run (a fork bomb's
/// leaf, a `setsid` child) while another run is the only one going is counted against
/// that run (the ambiguity `exec::contain` documents): beside a test that counts exactly,
/// it failed a run that stayed within its limit (`a_configured_process_limit_is_enforced`,
/// about 1 in 20 runs of the binary on a loaded machine). Runs of other tests (one
/// process each, leaving no orphans) may still overlap them.
pub async fn processes_alone() -> tokio::sync::MutexGuard<'static, ()> {
    static ALONE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    ALONE.lock().await
}
