//! Running cargo: the repository root, the cargo binary, and exit-code passing.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};

/// The workspace root: the parent of this crate's manifest folder.
pub fn repo_root() -> Result<PathBuf, String> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().map(Path::to_path_buf).ok_or_else(|| {
        format!(
            "cannot find the repository root: {} has no parent folder",
            manifest_dir.display()
        )
    })
}

/// A `cargo` command: the cargo that runs us (`$CARGO`), else `cargo` from `PATH`.
pub fn cargo() -> Command {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(program)
}

/// Run a command to completion with inherited stdio, returning its status.
pub fn run_status(cmd: &mut Command) -> Result<ExitStatus, String> {
    cmd.status()
        .map_err(|e| format!("cannot run {}: {e}", describe(cmd)))
}

/// The numeric exit code of a finished process: its code, or 1 when a signal ended it.
pub fn code_of(status: ExitStatus) -> u8 {
    match status.code() {
        Some(0) => 0,
        Some(c) => u8::try_from(c).ok().filter(|c| *c != 0).unwrap_or(1),
        None => 1,
    }
}

/// The exit code to pass on for a finished process.
pub fn exit_code_of(status: ExitStatus) -> ExitCode {
    ExitCode::from(code_of(status))
}

/// The command line of `cmd`, for messages.
pub fn describe(cmd: &Command) -> String {
    let mut out = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        out.push(' ');
        out.push_str(&arg.to_string_lossy());
    }
    out
}
