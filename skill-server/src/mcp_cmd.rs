//! `skill-server mcp`: the engine as a Model Context Protocol server over standard input
//! and output, for a host that starts it as a subprocess (an `mcpServers` entry); and the
//! `/mcp` mount that `serve` puts beside `/v1` (feature `mcp`).
//!
//! Standard output carries the protocol only: logs go to standard error.

use std::io::Write;
use std::sync::Arc;

use clap::Args;
use skill_http::{App, HttpConfig};
use skill_runtime::Engine;
#[cfg(feature = "mcp")]
use skill_runtime::EngineConfig;
#[cfg(feature = "mcp")]
use skill_runtime::registry::WatchOptions;

/// The log filter of `mcp` when `RUST_LOG` is unset: warnings and errors, but rmcp's only
/// at `error` (it logs what a client sent, an unknown method at `warn`).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) const MCP_LOG_FILTER: &str = "warn,rmcp=error";

/// The path `serve` mounts the MCP server at.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) const MCP_PATH: &str = "/mcp";

/// `mcp`'s flags.
#[derive(Debug, Args)]
#[command(mut_arg("skills", |a| a.required(true)))]
pub(crate) struct McpArgs {
    #[command(flatten)]
    skills: crate::skills_arg::SkillDirs,
    /// Serve this profile's view (affinity exclusions, allowed tools).
    #[arg(long)]
    profile: Option<String>,
    /// Do not watch the folders for changes.
    #[arg(long)]
    no_watch: bool,
}

/// Serve MCP on stdio until the client closes it.
#[cfg(not(feature = "mcp"))]
pub(crate) fn run(_args: &McpArgs, err: &mut dyn Write) -> u8 {
    let _ = writeln!(
        err,
        "error: this skill-server was built without the `mcp` feature"
    );
    2
}

/// Serve MCP on stdio until the client closes it (answers still unwritten then have
/// `skill_mcp::STDIO_CLOSE_DRAIN` from the hang-up to go out, see `hangup`), or
/// SIGINT/SIGTERM (then the engine shuts down as `serve` does: scripts and forked tasks are
/// stopped).
#[cfg(feature = "mcp")]
pub(crate) fn run(args: &McpArgs, err: &mut dyn Write) -> u8 {
    let mut config = EngineConfig::new(args.skills.config());
    config.watch = (!args.no_watch).then(WatchOptions::default);
    config.schedule = None;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "error: cannot start the async runtime: {e}");
            return 2;
        }
    };
    // Logs to stderr (stdout is the protocol); OTLP when the environment says where.
    let telemetry = crate::telemetry::Telemetry::init(
        MCP_LOG_FILTER,
        false,
        &crate::telemetry::OtelSettings::from_env(&|k| std::env::var(k).ok()),
        runtime.handle(),
    );
    let mcp = skill_mcp::McpConfig {
        profile: args.profile.clone(),
    };
    let result = runtime.block_on(async {
        // Watched from before the engine starts: the drain counts from the hang-up.
        let drained = crate::hangup::drained_after_hangup();
        tokio::pin!(drained);
        // Caught from before the first message is answered (see `serve`).
        let signal = crate::signals::shutdown_signal();
        // Loaded on a blocking thread, so that a hang-up's drain ends the process even
        // while a large pack still loads (that thread is not waited for).
        let starting = tokio::task::spawn_blocking(move || Engine::start(config));
        let engine = tokio::select! {
            started = starting => started.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?,
            () = &mut drained => return Ok(()),
        };
        let served = tokio::select! {
            served = skill_mcp::serve_stdio(engine.clone(), mcp) => served.map_err(|e| e.to_string()),
            () = signal => Ok(()),
            () = drained => Ok(()),
        };
        engine.shutdown().await;
        served
    });
    telemetry.shutdown();
    // Stopped by a signal or past the drain, the stdio transport may still be blocked
    // reading stdin or writing stdout on a blocking thread: do not wait for it.
    runtime.shutdown_background();
    match result {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

/// The HTTP application `serve` runs: the API and the console at `/ui` (MCP is not built
/// in).
#[cfg(not(feature = "mcp"))]
pub fn app(engine: Arc<Engine>, http: HttpConfig) -> Arc<App> {
    App::with_mounts(engine, http, console(App::mounts()))
}

/// `mounts` and the console at [`skill_console::CONSOLE_PATH`]: its page needs no token
/// (what it asks of `/v1` is checked there).
fn console(mounts: skill_http::Mounts) -> skill_http::Mounts {
    mounts.mount_with(
        skill_console::CONSOLE_PATH,
        skill_console::service(),
        skill_console::needs_token,
    )
}

/// The HTTP application `serve` runs: the API, the console at `/ui`, and MCP at `/mcp` on
/// the same listener (same token rules, and the same `Host` check, [`HttpConfig::allowed_hosts`],
/// which the server applies to every request before MCP sees it; MCP checks a browser's
/// `Origin` against the same list).
#[cfg(feature = "mcp")]
pub fn app(engine: Arc<Engine>, http: HttpConfig) -> Arc<App> {
    let hosts = http.allowed_hosts.clone();
    let limits = skill_mcp::McpLimits {
        max_body_bytes: http.max_body_bytes,
        body_read_timeout: http.body_read_timeout,
        ..skill_mcp::McpLimits::default()
    };
    let service = skill_mcp::http_mounted(
        engine.clone(),
        skill_mcp::McpConfig::default(),
        hosts,
        limits,
    );
    App::with_mounts(
        engine,
        http,
        console(App::mounts()).mount(MCP_PATH, service),
    )
}
