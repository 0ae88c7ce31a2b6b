//! Killing a script's process group: what both the script runner and the descendant
//! containment need, kept below both.

/// Kill a whole process group; a group that is already gone is fine.
#[cfg(unix)]
pub(crate) fn kill_group(pgid: u32) {
    use rustix::process::{Pid, Signal, kill_process_group};
    // `Pid::from_raw` is `None` for 0 and below: no group to kill.
    if let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

#[cfg(not(unix))]
pub(crate) fn kill_group(_pgid: u32) {}
