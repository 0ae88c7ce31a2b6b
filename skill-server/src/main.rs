//! The `skill-server` binary: see the library's [`skill_server::run`].

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use skill_server::TerminalSafe;

fn main() -> ExitCode {
    // One command, then the process ends: its state is left for the OS to reclaim.
    skill_server::end_process_after_command();
    // Not `.lock()`ed for the whole run: `serve` logs to stderr from other threads, which
    // would wait forever on a lock held here.
    // On a terminal, text from skill files is shown with its control characters escaped
    // (see `TerminalSafe`); piped or redirected output is left as written.
    let mut out: Box<dyn Write> = if std::io::stdout().is_terminal() {
        Box::new(TerminalSafe::new(std::io::stdout()))
    } else {
        Box::new(std::io::stdout())
    };
    let mut err: Box<dyn Write> = if std::io::stderr().is_terminal() {
        Box::new(TerminalSafe::new(std::io::stderr()))
    } else {
        Box::new(std::io::stderr())
    };
    let code = skill_server::run(std::env::args_os(), &mut out, &mut err);
    let _ = out.flush();
    let _ = err.flush();
    ExitCode::from(code)
}
