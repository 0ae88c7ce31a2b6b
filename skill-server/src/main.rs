//! The `skill-server` binary: see the library's [`skill_server::run`].

use std::process::ExitCode;

fn main() -> ExitCode {
    // One command, then the process ends: its state is left for the OS to reclaim.
    skill_server::end_process_after_command();
    // Not `.lock()`ed for the whole run: `serve` logs to stderr from other threads, which
    // would wait forever on a lock held here.
    let code = skill_server::run(
        std::env::args_os(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    ExitCode::from(code)
}
