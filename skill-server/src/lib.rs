//! `skill-server`: the command line over the skills engine.
//!
//! Subcommands:
//! - `validate` (check skill files, compiler-style or JSON, exit 1 on errors) and `list`
//!   (what a set of layered sources loads, with shadowed entries);
//! - `serve` (the whole engine over HTTP, JSON under `/v1`, MCP at `/mcp`) and `mcp` (MCP
//!   on standard input and output);
//! - disclosure: `catalog` (the system-prompt catalog within a budget, the budget report on
//!   stderr), `show` (one entry's metadata and body, whatever its status), `get-skill` (the
//!   `get_skill` tiers) and `resources` (a skill's files, or one of them);
//! - routing: `route` (one command line to help, an invocation, a slash command or an error)
//!   and `extract` (the commands of model output, in order);
//! - search: `search` (rank skills for a query), `select` (the skills to pre-load for a
//!   message) and `notes-search` (ranked markdown notes);
//! - `schedules` (every scheduled skill's next fire times);
//! - `report` (a pack's deterministic text report);
//! - trust: `audit` (the content scan's findings), `lock` and `verify` (a lock file of
//!   every skill's files, and a check of a tree against it).
//! - `eval` (a skill's trigger eval, offline: trigger precision and recall).
//!
//! The binary is a thin wrapper over [`run`], which tests drive in-process.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

mod add_cmd;
mod audit_cmd;
mod commands;
mod disclose_cmd;
mod eval_cmd;
#[cfg(feature = "mcp")]
mod hangup;
mod lock_cmd;
mod mcp_cmd;
#[cfg(feature = "otel")]
mod otel;
mod otel_env;
mod remote_sources;
mod replicas_config;
mod report_cmd;
mod route_cmd;
mod schedule_cmd;
mod search_cmd;
mod serve_cmd;
mod signals;
mod skills_arg;
mod teardown;
pub mod telemetry;
mod terminal;
mod trust_config;

pub use mcp_cmd::app;
pub use teardown::end_process_after_command;
pub use terminal::TerminalSafe;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Human text.
    Text,
    /// JSON.
    Json,
}

/// Dialect selection on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DialectArg {
    /// Detect per file.
    Auto,
    /// The Agent Skills standard.
    Agentskills,
    /// Markdown-first actions.
    Actions,
    /// Lily v0.
    Lily,
    /// Pegasus.
    Pegasus,
    /// Toolsets and triggers.
    Toolsets,
}

impl DialectArg {
    fn dialect(self) -> Option<skill_runtime::format::Dialect> {
        use skill_runtime::format::Dialect;
        match self {
            DialectArg::Auto => None,
            DialectArg::Agentskills => Some(Dialect::AgentSkills),
            DialectArg::Actions => Some(Dialect::Actions),
            DialectArg::Lily => Some(Dialect::Lily),
            DialectArg::Pegasus => Some(Dialect::Pegasus),
            DialectArg::Toolsets => Some(Dialect::Toolsets),
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "skill-server",
    version,
    about = "The skills engine for AI agents: validate, list and serve skill packs."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check skill files and report diagnostics like a compiler. Exit 0 without errors,
    /// 1 with errors, 2 on usage or I/O problems.
    Validate {
        /// Read every file as this dialect instead of detecting it per file.
        #[arg(long, value_enum, default_value_t = DialectArg::Auto)]
        dialect: DialectArg,
        /// Every rule is an error and unknown keys are reported (agentskills: the standard
        /// and the reference library, word for word).
        #[arg(long)]
        strict: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Skip hidden folders (by default `validate` checks them too; `.git` and
        /// `node_modules` are always skipped).
        #[arg(long)]
        skip_hidden: bool,
        /// Check hidden folders too: the default, said explicitly (as `--include-hidden`
        /// is said to the commands that load skills).
        #[arg(long, conflicts_with = "skip_hidden")]
        include_hidden: bool,
        /// A SKILL.md, a skill folder, or a root of many skills.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// List what layered sources load: name, layer, dialect, status, path, and shadowed
    /// entries. Later `--skills` folders take precedence over earlier ones.
    #[command(mut_arg("skills", |a| a.required(true)))]
    List {
        #[command(flatten)]
        skills: skills_arg::SkillDirs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Serve the whole engine over HTTP (JSON under /v1, MCP at /mcp) until SIGINT or
    /// SIGTERM.
    Serve(serve_cmd::ServeArgs),
    /// Serve the engine as an MCP server on standard input and output.
    Mcp(mcp_cmd::McpArgs),
    /// Disclosure: `catalog`, `show`, `get-skill`, `resources`.
    #[command(flatten)]
    Disclose(disclose_cmd::Commands),
    /// Routing: `route`, `extract`.
    #[command(flatten)]
    Route(route_cmd::Commands),
    /// Search and selection: `search`, `select`, `notes-search`.
    #[command(flatten)]
    Search(search_cmd::Commands),
    /// Schedules: `schedules`.
    #[command(flatten)]
    Schedule(schedule_cmd::Commands),
    /// Pack report: `report`.
    #[command(flatten)]
    Report(report_cmd::Commands),
    /// Trust: `audit`.
    #[command(flatten)]
    Audit(audit_cmd::Commands),
    /// Integrity: `lock`, `verify`.
    #[command(flatten)]
    Lock(lock_cmd::Commands),
    /// Trigger evals: `eval`.
    #[command(flatten)]
    Eval(eval_cmd::Commands),
    /// Vendoring: `add`.
    #[command(flatten)]
    Add(add_cmd::Commands),
}

/// Run the command line with `args` (the first item is the program name), writing normal
/// output to `out` and problems to `err`. Returns the process exit code: 0 success, 1 errors
/// found, 2 usage or I/O problems.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let text = e.render().to_string();
            let _ = if code == 0 {
                out.write_all(text.as_bytes())
            } else {
                err.write_all(text.as_bytes())
            };
            return code;
        }
    };
    let result = match cli.command {
        Command::Validate {
            dialect,
            strict,
            format,
            skip_hidden,
            include_hidden: _,
            paths,
        } => commands::validate(
            &commands::ValidateArgs {
                dialect: dialect.dialect(),
                strict,
                json: format == Format::Json,
                include_hidden: !skip_hidden,
                paths,
            },
            out,
        ),
        Command::List { skills, format } => commands::list(&skills, format == Format::Json, out),
        Command::Serve(a) => return serve_cmd::serve(&a, out, err),
        Command::Mcp(a) => return mcp_cmd::run(&a, err),
        Command::Disclose(c) => return disclose_cmd::run(c, out, err),
        Command::Route(c) => return route_cmd::run(c, out, err),
        Command::Search(c) => return search_cmd::run(c, out, err),
        Command::Schedule(c) => return schedule_cmd::run(c, out, err),
        Command::Report(c) => return report_cmd::run(c, out, err),
        Command::Audit(c) => return audit_cmd::run(c, out, err),
        Command::Lock(c) => return lock_cmd::run(c, out, err),
        Command::Eval(c) => return eval_cmd::run(c, out, err),
        Command::Add(c) => return add_cmd::run(c, out, err),
    };
    crate::commands::exit_code(result, err)
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
