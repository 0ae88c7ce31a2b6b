//! The `skill-server` binary: see the library's [`skill_server::run`].

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = skill_server::run(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(code)
}
