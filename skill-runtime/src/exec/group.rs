//! Killing a script's process group: what both the script runner and the descendant
//! containment need, kept below both.

/// Kill a whole process group; a group that is already gone is fine.
#[cfg(unix)]
pub(crate) fn kill_group(pgid: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Ok(raw) = i32::try_from(pgid) {
        if raw > 0 {
            let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
pub(crate) fn kill_group(_pgid: u32) {}
