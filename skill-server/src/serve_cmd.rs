//! `skill-server serve`: the whole engine over HTTP.
//!
//! Configuration comes from, lowest precedence first: built-in defaults, a TOML file
//! (`--config`), environment variables (`SKILLS_LISTEN`, `SKILLS_TOKEN`), then flags. With
//! no configuration at all, `serve --skills DIR` serves those folders on 127.0.0.1:7878.
//! A listen address other than loopback needs a token, or an explicit
//! `allow_unauthenticated` (`--allow-unauthenticated`): the server refuses to start
//! otherwise.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use serde::Deserialize;
use skill_http::HttpConfig;
use skill_runtime::registry::{Namespace, RegistryConfig, Source, WatchOptions};
use skill_runtime::{Engine, EngineConfig};

use crate::DialectArg;

/// The default listen address: loopback only.
pub(crate) const DEFAULT_LISTEN: &str = "127.0.0.1:7878";
/// Environment variable overriding the listen address.
pub(crate) const LISTEN_ENV: &str = "SKILLS_LISTEN";
/// Environment variable holding the bearer token for action endpoints.
pub(crate) const TOKEN_ENV: &str = "SKILLS_TOKEN";
/// Largest configuration file read.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// `serve`'s flags.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// A TOML configuration file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// `--skills [NS=]DIR` (added after the configuration file's sources) and
    /// `--include-hidden` (for those folders; a file's source says `include_hidden`).
    #[command(flatten)]
    skills: crate::skills_arg::SkillDirs,
    /// The address to listen on (default 127.0.0.1:7878; port 0 picks a free port).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// A folder of markdown notes to index for `markdown.search`.
    #[arg(long)]
    notes: Option<PathBuf>,
    /// Do not watch the sources for changes (reload with `POST /v1/reload`).
    #[arg(long)]
    no_watch: bool,
    /// Read every file as this dialect instead of detecting it per file.
    #[arg(long, value_enum)]
    dialect: Option<DialectArg>,
    /// Serve a non-loopback address without a token (every action endpoint open to the
    /// network).
    #[arg(long)]
    allow_unauthenticated: bool,
    /// Write server paths in `/v1` answers as they are (absolute) instead of relative to
    /// their source.
    #[arg(long)]
    absolute_paths: bool,
}

/// The configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<SocketAddr>,
    /// The token itself (prefer `token_env`).
    token: Option<String>,
    /// The environment variable holding the token.
    token_env: Option<String>,
    /// Listen on a non-loopback address without a token.
    allow_unauthenticated: Option<bool>,
    /// Host names a request's `Host` may give besides IP addresses and `localhost`
    /// (DNS-rebinding protection); `"*"` allows every name.
    allowed_hosts: Option<Vec<String>>,
    /// Write server paths in `/v1` answers as they are (absolute) instead of relative to
    /// their source (default false).
    absolute_paths: Option<bool>,
    notes: Option<PathBuf>,
    watch: Option<bool>,
    debounce_ms: Option<u64>,
    request_timeout_ms: Option<u64>,
    max_body_bytes: Option<usize>,
    header_read_timeout_ms: Option<u64>,
    /// Time a client has to send a request body (default 10 s; at least 1 ms).
    body_read_timeout_ms: Option<u64>,
    /// Time a client has to take each part of an answer before its connection is closed
    /// (default 10 s; at least 1 ms).
    write_timeout_ms: Option<u64>,
    /// Answer bytes held for clients, all connections together (default 64 MiB; at least 1).
    max_answer_bytes_held: Option<usize>,
    max_connections: Option<usize>,
    concurrency: Option<usize>,
    max_event_streams: Option<usize>,
    /// How long a script may run before it is killed, in milliseconds (default 60,000; at
    /// least [`skill_runtime::exec::MIN_SCRIPT_TIMEOUT`]).
    script_timeout_ms: Option<u64>,
    /// The domains `workflow.build` may write to (default `["workflows"]`).
    workflow_domains: Option<Vec<String>>,
    /// A folder for the search index (memory-mapped); default: in RAM.
    index_dir: Option<PathBuf>,
    /// A sentence-embedding model folder for the no-skill gate (feature `transformer`).
    transformer: Option<PathBuf>,
    /// IANA zone schedules are read in (default UTC).
    timezone: Option<String>,
    /// Folder for the scheduler's state (last fires); default: in memory only.
    state_dir: Option<PathBuf>,
    /// Turn the scheduler off.
    scheduler: Option<bool>,
    /// Missed fires at start: `skip` (default) or `run_once_on_start` (needs `state_dir`).
    catch_up: Option<String>,
    /// Scheduled runs kept in the history.
    history_limit: Option<usize>,
    #[serde(default)]
    sources: Vec<SourceConfig>,
    #[serde(default)]
    profiles: std::collections::BTreeMap<String, ProfileConfig>,
    /// A PostgreSQL URL shared by several replicas (else `SKILLS_DATABASE_URL`; see
    /// docs/operator.md, "Running several replicas").
    database_url: Option<String>,
    /// This replica's name in the shared database (default: host name and process id).
    replica_name: Option<String>,
    /// With a database, days finished runs, deliveries and tasks are kept in it (default 30).
    retention_days: Option<u32>,
    /// With a database, how long a claim waits for another replica's claim of the same job
    /// before the fire is recorded as not run (default 2000).
    claim_wait_ms: Option<u64>,
    /// Where scheduled runs that need a model are POSTed.
    webhook: Option<crate::replicas_config::WebhookFile>,
    /// A PEM file of CA certificates trusted, besides the platform's roots, by everything
    /// the server sends over https (webhooks, remote sources).
    ca_file: Option<PathBuf>,
    /// Where remote sources (`[[sources]]` with `url`) keep their cache (default:
    /// `state_dir/remote-sources`).
    cache_dir: Option<PathBuf>,
    /// How often remote sources are fetched again, in milliseconds (default 300,000).
    remote_refresh_ms: Option<u64>,
    /// The trust policy (`[trust]`, see docs/operator.md).
    #[serde(default)]
    trust: crate::trust_config::TrustConfig,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileConfig {
    /// The tools the profile allows (intersected with a skill's `allowed-tools`).
    tools: Option<Vec<String>>,
    /// The catalog budget for the profile, in characters.
    budget_chars: Option<usize>,
    /// The catalog budget from a context window, in tokens.
    context_window_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceConfig {
    /// A folder of skills (or `url`).
    #[serde(default)]
    path: Option<PathBuf>,
    /// A remote source: another server's `/.well-known/agent-skills/index.json`.
    url: Option<String>,
    layer: Option<String>,
    dialect: Option<String>,
    #[serde(default)]
    writable: bool,
    /// `low`, `medium` or `high`; default from the layer (builtin high, user and project
    /// medium, others low).
    trust: Option<String>,
    /// Also load skills in hidden folders (`.curated`, `.system`); never `.git` or
    /// `node_modules`.
    #[serde(default)]
    include_hidden: bool,
    /// Serve the source's skills as `namespace:name` (a-z, 0-9 and inner `-`, at most 64).
    namespace: Option<String>,
}

fn read_config(path: &Path) -> Result<FileConfig, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{}: the configuration must be a regular file",
            path.display()
        ));
    }
    let too_big = || {
        format!(
            "{}: the configuration file is over {MAX_CONFIG_BYTES} bytes",
            path.display()
        )
    };
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(too_big());
    }
    // Never past the cap, whatever the size said (the file may grow meanwhile).
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CONFIG_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_big());
    }
    let mut config: FileConfig =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    // Relative paths in the file are relative to the file.
    let base = path.parent().unwrap_or(Path::new("."));
    for s in &mut config.sources {
        if let Some(p) = s.path.as_mut().filter(|p| p.is_relative()) {
            *p = base.join(&*p);
        }
    }
    for p in [
        &mut config.trust.require_lock,
        &mut config.trust.require_signature,
        &mut config.notes,
        &mut config.state_dir,
        &mut config.index_dir,
        &mut config.transformer,
        &mut config.ca_file,
        &mut config.cache_dir,
    ]
    .into_iter()
    .flatten()
    {
        if p.is_relative() {
            *p = base.join(&*p);
        }
    }
    Ok(config)
}

fn dialect_named(name: &str) -> Result<Option<skill_runtime::format::Dialect>, String> {
    use skill_runtime::format::Dialect;
    Ok(match name {
        "auto" => None,
        "agentskills" => Some(Dialect::AgentSkills),
        "actions" => Some(Dialect::Actions),
        "lily" => Some(Dialect::Lily),
        "pegasus" => Some(Dialect::Pegasus),
        "toolsets" => Some(Dialect::Toolsets),
        other => {
            return Err(format!(
                "unknown dialect `{other}`: use auto, agentskills, actions, lily, pegasus or toolsets"
            ));
        }
    })
}

/// Everything `serve` needs, resolved from file, environment and flags.
#[derive(Debug)]
struct Resolved {
    engine: EngineConfig,
    /// The shared database, connected at start.
    #[cfg(feature = "postgres")]
    database: Option<crate::replicas_config::Database>,
    http: HttpConfig,
    listen: SocketAddr,
    /// Settings that work but deserve a line in the log at start.
    warnings: Vec<String>,
    /// The client everything sent out goes through.
    client: skill_runtime::outbound::Client,
    /// Remote sources, fetched before the engine starts and refreshed after.
    remotes: Vec<crate::remote_sources::Remote>,
    /// How often remote sources are fetched again.
    remote_refresh: Duration,
}

/// A duration in milliseconds from the file; 0 is refused (it would fail every request).
fn millis(key: &str, value: Option<u64>) -> Result<Option<Duration>, String> {
    match value {
        Some(0) => Err(format!("`{key}` must be at least 1 millisecond")),
        v => Ok(v.map(Duration::from_millis)),
    }
}

fn resolve(args: &ServeArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Resolved, String> {
    #[cfg_attr(not(feature = "postgres"), allow(unused_mut))]
    let mut file = match &args.config {
        Some(p) => read_config(p)?,
        None => FileConfig::default(),
    };
    let mut sources = Vec::new();
    let mut remotes = Vec::new();
    let cache_dir = file
        .cache_dir
        .clone()
        .or_else(|| file.state_dir.as_ref().map(|d| d.join("remote-sources")));
    for (i, s) in file.sources.iter().enumerate() {
        let path = match (&s.path, &s.url) {
            (Some(p), None) => p.clone(),
            (None, Some(url)) => {
                let Some(cache_dir) = &cache_dir else {
                    return Err(format!(
                        "[[sources]] url = \"{url}\" needs a cache folder: set cache_dir (or state_dir)"
                    ));
                };
                if !url.starts_with("https://") && !url.starts_with("http://") {
                    return Err(format!(
                        "[[sources]] url = \"{url}\": give an http:// or https:// URL of a discovery index"
                    ));
                }
                let folder = crate::remote_sources::cache_folder(cache_dir, url);
                remotes.push(crate::remote_sources::Remote {
                    url: url.clone(),
                    folder: folder.clone(),
                });
                folder
            }
            _ => {
                return Err(format!(
                    "[[sources]] entry {}: give either path (a folder) or url (a remote index), not both or neither",
                    i + 1
                ));
            }
        };
        let mut source = Source::new(
            path.clone(),
            s.layer.clone().unwrap_or_else(|| format!("layer{}", i + 1)),
        );
        source.dialect = match &s.dialect {
            Some(d) => dialect_named(d)?,
            None => None,
        };
        source.writable = s.writable;
        if let Some(t) = &s.trust {
            source.trust = crate::trust_config::trust_named(t)?;
        }
        source.include_hidden = s.include_hidden;
        if let Some(ns) = &s.namespace {
            let ns =
                Namespace::new(ns).map_err(|e| format!("[[sources]] {}: {e}", path.display()))?;
            source.namespace = Some(ns);
        }
        sources.push(source);
    }
    let offset = sources.len();
    for mut source in args
        .skills
        .sources(|i, _| format!("layer{}", offset + i + 1))
    {
        source.dialect = args.dialect.and_then(DialectArg::dialect);
        sources.push(source);
    }
    if sources.is_empty() {
        return Err(
            "no skill sources: give --skills DIR or a --config file with [[sources]]".into(),
        );
    }
    let listen = match (args.listen, env(LISTEN_ENV), file.listen) {
        (Some(a), _, _) => a,
        (None, Some(e), _) => e
            .parse()
            .map_err(|_| format!("{LISTEN_ENV}=`{e}` is not an address such as 127.0.0.1:7878"))?,
        (None, None, Some(a)) => a,
        (None, None, None) => DEFAULT_LISTEN
            .parse()
            .map_err(|_| "the default listen address does not parse".to_owned())?,
    };
    let token = match (env(TOKEN_ENV), &file.token_env, &file.token) {
        (Some(t), _, _) => Some(t),
        (None, Some(var), _) => Some(env(var).ok_or_else(|| {
            format!("the configuration names token_env = \"{var}\" but it is not set")
        })?),
        (None, None, t) => t.clone(),
    }
    .filter(|t| !t.is_empty());
    if token
        .as_deref()
        .is_some_and(|t| t.chars().any(|c| c.is_whitespace() || c.is_control()))
    {
        // A client's `Authorization: Bearer` value is read trimmed and cannot carry such
        // characters usefully: the server would start and refuse every action request.
        return Err(format!(
            "the token contains spaces or control characters ({TOKEN_ENV}, token_env or token): \
             a client could never send it in `Authorization: Bearer`; remove them"
        ));
    }
    let allow_unauthenticated =
        args.allow_unauthenticated || file.allow_unauthenticated.unwrap_or(false);
    if token.is_none() && !listen.ip().is_loopback() && !allow_unauthenticated {
        return Err(format!(
            "refusing to listen on {listen} without a token: anyone who can reach it could \
             execute skills and write workflows. Set {TOKEN_ENV} (or token_env in the \
             configuration), listen on a loopback address such as 127.0.0.1, or pass \
             --allow-unauthenticated (allow_unauthenticated = true) to accept the risk"
        ));
    }
    let mut warnings = Vec::new();
    // The one client for everything sent out, its trust store built now so that a CA file
    // that cannot be used stops the start.
    let client = skill_runtime::outbound::Client::new(file.ca_file.clone());
    client.check()?;
    let mut registry = RegistryConfig::with_sources(sources);
    registry.trust = file.trust.policy()?;
    let mut engine = EngineConfig::new(registry);
    let watch = !args.no_watch && file.watch.unwrap_or(true);
    engine.watch = watch.then(|| WatchOptions {
        debounce: file.debounce_ms.map_or(
            skill_runtime::registry::DEFAULT_DEBOUNCE,
            Duration::from_millis,
        ),
        ..WatchOptions::default()
    });
    engine.notes = args.notes.clone().or(file.notes);
    engine.index_dir = file.index_dir;
    match file.transformer {
        #[cfg(feature = "transformer")]
        Some(dir) => engine.transformer = Some(dir),
        #[cfg(not(feature = "transformer"))]
        Some(dir) => {
            return Err(format!(
                "transformer = \"{}\": this skill-server was built without its `transformer` \
                 feature; build it with `cargo build --release -p skill-server --features \
                 transformer`, or remove the setting",
                dir.display()
            ));
        }
        None => {}
    }
    let mut http = HttpConfig {
        token,
        allowed_hosts: file.allowed_hosts.unwrap_or_default(),
        absolute_paths: args.absolute_paths || file.absolute_paths.unwrap_or(false),
        ..HttpConfig::default()
    };
    if let Some(t) = millis("request_timeout_ms", file.request_timeout_ms)? {
        http.request_timeout = t;
    }
    if let Some(t) = millis("header_read_timeout_ms", file.header_read_timeout_ms)? {
        http.header_read_timeout = t;
    }
    if let Some(t) = millis("body_read_timeout_ms", file.body_read_timeout_ms)? {
        http.body_read_timeout = t;
    }
    if let Some(t) = millis("write_timeout_ms", file.write_timeout_ms)? {
        http.write_timeout = t;
    }
    match file.max_answer_bytes_held {
        Some(0) => {
            return Err(
                "max_answer_bytes_held = 0 would refuse every answer: give at least 1 \
                 (default 67108864, 64 MiB)"
                    .to_owned(),
            );
        }
        Some(n) => http.max_answer_bytes_held = n,
        None => {}
    }
    if let Some(b) = file.max_body_bytes {
        http.max_body_bytes = b;
    }
    if let Some(n) = file.max_connections {
        http.max_connections = n;
    }
    if let Some(n) = file.concurrency {
        http.concurrency = n;
    }
    if let Some(n) = file.max_event_streams {
        http.max_event_streams = n;
    }
    if let Some(ms) = file.script_timeout_ms {
        let t = Duration::from_millis(ms);
        let min = skill_runtime::exec::MIN_SCRIPT_TIMEOUT;
        if t < min {
            return Err(format!(
                "script_timeout_ms = {ms} is too short: scripts need at least {} ms",
                min.as_millis()
            ));
        }
        engine.runtime.limits.timeout = t;
    }
    if let Some(d) = &file.workflow_domains {
        engine.runtime.workflow_domains = d.clone();
    }
    for (name, p) in &file.profiles {
        if let Some(tools) = &p.tools {
            engine.runtime.profiles.insert(
                name.clone(),
                skill_runtime::exec::Profile {
                    tools: tools.clone(),
                },
            );
        }
        if p.budget_chars.is_some() || p.context_window_tokens.is_some() {
            http.profile_budgets.insert(
                name.clone(),
                skill_runtime::registry::Budget {
                    budget_chars: p.budget_chars,
                    context_window_tokens: p.context_window_tokens,
                    entry_cap_chars: None,
                },
            );
        }
    }
    #[cfg(feature = "postgres")]
    let database = {
        let mut database = crate::replicas_config::database(
            file.database_url.take(),
            file.replica_name.take(),
            env,
        );
        let claim_wait = crate::replicas_config::claim_wait(
            file.claim_wait_ms,
            database.as_ref(),
            &mut warnings,
        )?;
        if let Some(db) = &mut database {
            db.claim_wait = claim_wait;
        }
        engine.replicas.retention = crate::replicas_config::retention(
            file.retention_days,
            database.as_ref(),
            &mut warnings,
        )?;
        engine.replicas.webhook = crate::replicas_config::webhook(file.webhook.take(), env)?;
        if let Some(hook) = &mut engine.replicas.webhook {
            hook.client = client.clone();
        }
        database
    };
    #[cfg(not(feature = "postgres"))]
    let database: Option<crate::replicas_config::Database> = {
        crate::replicas_config::without_postgres(
            &[
                ("database_url", file.database_url.is_some()),
                ("replica_name", file.replica_name.is_some()),
                ("retention_days", file.retention_days.is_some()),
                ("claim_wait_ms", file.claim_wait_ms.is_some()),
                ("[webhook]", file.webhook.is_some()),
            ],
            env,
        )?;
        None
    };
    engine.schedule = if file.scheduler == Some(false) {
        None
    } else {
        let timezone = match &file.timezone {
            Some(z) => skill_runtime::scheduler::parse_timezone(z).map_err(|e| e.to_string())?,
            None => skill_runtime::scheduler::Tz::UTC,
        };
        let catch_up = match file.catch_up.as_deref() {
            None | Some("skip") => skill_runtime::scheduler::CatchUp::Skip,
            Some("run_once_on_start") => skill_runtime::scheduler::CatchUp::RunOnceOnStart,
            Some(other) => {
                return Err(format!(
                    "unknown catch_up `{other}`: use skip or run_once_on_start"
                ));
            }
        };
        if file.state_dir.is_none() && database.is_none() {
            if catch_up == skill_runtime::scheduler::CatchUp::RunOnceOnStart {
                return Err("catch_up = \"run_once_on_start\" needs state_dir: without \
                            saved last fires there is nothing to catch up from"
                    .into());
            }
            warnings.push(
                "no state_dir: the scheduler keeps its last fires in memory only, so a \
                 restart within a scheduled minute may fire that instant twice; set state_dir \
                 to persist them"
                    .to_owned(),
            );
        }
        Some(skill_runtime::scheduler::SchedulerConfig {
            timezone,
            state_path: file
                .state_dir
                .as_ref()
                .map(|d| d.join("schedule-state.json")),
            catch_up,
            history_limit: match file.history_limit {
                None => skill_runtime::scheduler::DEFAULT_HISTORY_LIMIT,
                Some(n) if (1..=skill_runtime::scheduler::MAX_HISTORY_LIMIT).contains(&n) => n,
                Some(n) => {
                    return Err(format!(
                        "history_limit = {n} is out of range: keep between 1 and {} runs",
                        skill_runtime::scheduler::MAX_HISTORY_LIMIT
                    ));
                }
            },
            ..skill_runtime::scheduler::SchedulerConfig::default()
        })
    };
    Ok(Resolved {
        engine,
        #[cfg(feature = "postgres")]
        database,
        http,
        listen,
        warnings,
        client,
        remotes,
        remote_refresh: crate::remote_sources::refresh(file.remote_refresh_ms)?,
    })
}

/// The log filter when `RUST_LOG` is unset: our request and lifecycle lines, without
/// tantivy's per-commit chatter (every index update logs several lines at `info`), and
/// without rmcp's own lines below `error`: it logs what a client sent (a 900 KB
/// notification or client name became a 900 KB line; an unknown method, at `warn`), so a
/// client could flood the log. Our MCP layer logs what an operator needs. Activation events
/// (one per `select`, `get_skill`, `route`, ... request) are request logs: left out of the
/// default log (a flood of requests was a flood of lines), still exported over OTLP, whose
/// layers filter on their own, and shown with `RUST_LOG=info`.
pub(crate) const DEFAULT_LOG_FILTER: &str =
    "info,tantivy=warn,rmcp=error,skill_runtime::activation=warn";

/// Run the server until SIGINT or SIGTERM.
pub(crate) fn serve(args: &ServeArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let resolved = match resolve(args, &|k| std::env::var(k).ok()) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return 2;
        }
    };
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
    // Logs to stderr; spans, events and metrics over OTLP when the environment says where.
    let telemetry = crate::telemetry::Telemetry::init(
        DEFAULT_LOG_FILTER,
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
        &crate::telemetry::OtelSettings::from_env(&|k| std::env::var(k).ok()),
        runtime.handle(),
    );
    for w in &resolved.warnings {
        tracing::warn!("{w}");
    }
    // The scheduler creates state_dir itself when it first writes; made here too so that a
    // folder that cannot be made is a clear error at start, not a warning at the first fire.
    let state_dir = resolved
        .engine
        .schedule
        .as_ref()
        .and_then(|s| s.state_path.as_deref())
        .and_then(Path::parent);
    if let Some(dir) = state_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            let _ = writeln!(err, "error: cannot create state_dir {}: {e}", dir.display());
            return 2;
        }
    }
    #[cfg_attr(not(feature = "postgres"), allow(unused_mut))]
    let mut engine_config = resolved.engine;
    let result = runtime.block_on(async {
        #[cfg(feature = "postgres")]
        if let Some(db) = &resolved.database {
            let store = skill_store::Store::connect(&db.url, &db.replica)
                .await
                .map_err(|e| e.to_string())?
                .with_claim_wait(db.claim_wait);
            tracing::info!(replica = db.replica, "sharing state in the database");
            engine_config.replicas.store = Some(store);
        }
        let unreached =
            crate::remote_sources::first_fetch(&resolved.client, &resolved.remotes).await;
        let engine = Engine::start(engine_config).map_err(|e| e.to_string())?;
        for (url, why) in unreached {
            engine.set_degraded(&url, Some(why));
        }
        let refresher = (!resolved.remotes.is_empty()).then(|| {
            tokio::spawn(crate::remote_sources::refresh_loop(
                engine.clone(),
                resolved.client.clone(),
                resolved.remotes.clone(),
                resolved.remote_refresh,
            ))
        });
        let health = engine.health();
        let diagnostics = engine.diagnostics();
        let (listener, local) = skill_http::bind(resolved.listen)
            .await
            .map_err(|e| e.to_string())?;
        // Signals are caught from before the server says it is ready: a SIGTERM sent as
        // soon as the line below is read stops it cleanly instead of killing it.
        let shutdown = crate::signals::shutdown_signal();
        let _ = writeln!(
            out,
            "skill-server: {} skills ({} errors, {} warnings) on http://{local}/v1/ (OpenAPI at /v1/openapi.json)",
            health.skills, diagnostics.errors, diagnostics.warnings
        );
        let _ = out.flush();
        let app = crate::mcp_cmd::app(engine.clone(), resolved.http);
        skill_http::serve(listener, app, shutdown)
            .await
            .map_err(|e| e.to_string())?;
        // Requests are done: stop refreshing remote sources, then watchers, the scheduler,
        // scripts and forked tasks.
        if let Some(task) = refresher {
            task.abort();
        }
        engine.shutdown().await;
        tracing::info!("stopped");
        Ok::<(), String>(())
    });
    // Flush buffered spans and metrics while the runtime that sends them still runs.
    telemetry.shutdown();
    match result {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

#[cfg(test)]
#[path = "serve_cmd_tests.rs"]
mod tests;
