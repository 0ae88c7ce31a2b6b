//! `skill-pack`: one deterministic text report of a skill pack, for review and snapshot tests.
//!
//! A pack is one or more source folders (lowest precedence first). [`report`] loads them the
//! way a host would and renders, in a fixed order:
//!
//! 1. every skill and domain index with its layer, dialect and status (eligibility), then
//!    each one's description and brief description, whatever its status;
//! 2. the shadowed entries;
//! 3. the diagnostics, as `skill-server validate` reports them (file diagnostics, example
//!    lint, schedules that do not parse), then the content scan's findings (a
//!    `scan findings` section, only when there are any);
//! 4. the catalog in each format (markdown, XML, JSON) with its budget report;
//! 5. the `get_skill` tiers: the top level and each domain;
//! 6. every `## Examples` line with the route it takes;
//! 7. every schedule with its next fire times from a fixed instant;
//! 8. the top selections for the pack's sample requests ([`REQUESTS_FILE`] at a root);
//! 9. when skills keep Agent Skills trigger evals (`evals/eval_queries.json`), each one's
//!    trigger precision and recall and the queries that fail.
//!
//! The report holds no absolute path (paths are shown relative to their root, prefixed by the
//! root's label, see [`ReportConfig`]), no timestamp but the configured instant, and no
//! hash-map order, so the same pack renders the same bytes on every machine. Eligibility is
//! judged against a fixed host ([`fixed_environment`]) unless the configuration says
//! otherwise, so a report does not change with the `PATH` of whoever runs it.
//!
//! ```no_run
//! let text = skill_pack::report(&["skills"]).unwrap();
//! println!("{text}");
//! ```

#![deny(missing_docs)]
#![warn(unreachable_pub)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use skill_runtime::format::{Dialect, FileKind, Mode};
use skill_runtime::registry::{
    Budget, Caller, CatalogFormat, Environment, RegistryConfig, Skill, Source,
};
use skill_runtime::router::Route;
use skill_runtime::scheduler::{DateTime, LAST_YEAR, SecondsFormat, Tz, Utc};
use skill_runtime::search::SelectOptions;
use skill_runtime::{Engine, EngineConfig, ScheduleQuery, Scope};

/// The file at a pack root that holds sample requests: one request a line; blank lines and
/// lines starting with `#` are skipped. Each request is run through selection
/// ([`skill_runtime::Engine::select`]) and its top selections are reported.
pub const REQUESTS_FILE: &str = "requests.txt";

/// Most sample requests read from one [`REQUESTS_FILE`]; the rest are named as skipped.
pub const MAX_REQUESTS: usize = 200;

/// Largest [`REQUESTS_FILE`] read, in bytes.
pub const MAX_REQUESTS_BYTES: u64 = 256 * 1024;

/// Fire times listed per schedule unless the configuration says otherwise.
pub const DEFAULT_NEXT_FIRES: usize = 3;

/// Most fire times listed per schedule.
pub const MAX_NEXT_FIRES: usize = 100;

/// The instant schedules are computed from by default: 2026-01-01T00:00:00Z.
pub const DEFAULT_INSTANT: &str = "2026-01-01T00:00:00Z";

/// Problems that stop a report (problems *in* skill files are diagnostics in the report).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No source folder was given.
    #[error("no pack folder given: pass at least one folder of skills")]
    NoRoots,
    /// A source folder cannot be read.
    #[error("{}: cannot read the pack folder: {source}", path.display())]
    Root {
        /// The folder as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A sample requests file exists but cannot be read.
    #[error("{}: cannot read the sample requests: {source}", path.display())]
    Requests {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The instant is not RFC 3339.
    #[error("`{0}` is not an RFC 3339 instant such as 2026-01-01T00:00:00Z")]
    Instant(String),
    /// More fire times asked for than [`MAX_NEXT_FIRES`].
    #[error("{0} fire times asked for per schedule; at most {MAX_NEXT_FIRES}")]
    TooManyFires(usize),
    /// The engine could not start, or a search or selection failed.
    #[error("{0}")]
    Engine(#[from] skill_runtime::Error),
}

/// What a report is rendered with. [`ReportConfig::default`] is what [`report`] uses.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    /// The profile the catalog, tiers and selections are disclosed for.
    pub profile: Option<String>,
    /// The instant schedules' next fire times are computed from.
    pub at: DateTime<Utc>,
    /// The time zone schedules are read in.
    pub timezone: Tz,
    /// Fire times listed per schedule (at most [`MAX_NEXT_FIRES`]).
    pub next_fires: usize,
    /// The catalog budget.
    pub budget: Budget,
    /// Read every file as this dialect instead of detecting it per file.
    pub dialect: Option<Dialect>,
    /// Lenient (default) or strict validation.
    pub mode: Mode,
    /// The host facts eligibility is judged against ([`fixed_environment`] by default).
    pub environment: Environment,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            profile: None,
            at: default_instant(),
            timezone: Tz::UTC,
            next_fires: DEFAULT_NEXT_FIRES,
            budget: Budget::default(),
            dialect: None,
            mode: Mode::Lenient,
            environment: fixed_environment(),
        }
    }
}

fn default_instant() -> DateTime<Utc> {
    // A constant that parses; the fallback is never taken.
    parse_instant(DEFAULT_INSTANT).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// Parse an RFC 3339 instant (`2026-01-01T00:00:00Z`, `2026-01-01T09:00:00+09:00`).
pub fn parse_instant(text: &str) -> Result<DateTime<Utc>, Error> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| Error::Instant(text.to_owned()))
}

/// A host that is the same everywhere: OS `linux`, every environment variable and binary
/// present, every tool allowed, registered tools and toolsets unknown (not checked). A
/// report made with it depends only on the pack's files.
pub fn fixed_environment() -> Environment {
    Environment {
        os: "linux".to_owned(),
        env_present: Arc::new(|_| true),
        binary_present: Arc::new(|_| true),
        ..Environment::default()
    }
}

/// The report of the pack in `roots` (lowest precedence first) with the default
/// configuration. See the crate documentation for what it holds.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let skill = dir.path().join("hello");
/// std::fs::create_dir(&skill).unwrap();
/// std::fs::write(
///     skill.join("SKILL.md"),
///     "---\nname: hello\ndescription: Say hello.\n---\nSay hello.\n",
/// )
/// .unwrap();
/// let text = skill_pack::report(&[dir.path()]).unwrap();
/// assert!(text.contains("hello"));
/// assert!(!text.contains(&dir.path().display().to_string()));
/// ```
pub fn report<P: AsRef<Path>>(roots: &[P]) -> Result<String, Error> {
    report_with(roots, &ReportConfig::default())
}

/// The report of the pack in `roots` (lowest precedence first) rendered with `config`.
///
/// Each root is its own layer, named by its label: the folder's name (`skills`), with
/// `-2`, `-3`, ... added when two roots share a name. Paths are shown as `label/relative`.
pub fn report_with<P: AsRef<Path>>(roots: &[P], config: &ReportConfig) -> Result<String, Error> {
    Pack::load(roots, config)?.text(config)
}

/// A pack loaded the way a host would, ready to be rendered as text or as a page.
pub(crate) struct Pack {
    pub(crate) engine: Arc<Engine>,
    roots: Vec<Root>,
    requests: Vec<(String, String)>,
}

impl Pack {
    /// Load `roots` (lowest precedence first) as `config` says.
    pub(crate) fn load<P: AsRef<Path>>(roots: &[P], config: &ReportConfig) -> Result<Pack, Error> {
        if roots.is_empty() {
            return Err(Error::NoRoots);
        }
        if config.next_fires > MAX_NEXT_FIRES {
            return Err(Error::TooManyFires(config.next_fires));
        }
        let roots: Vec<Root> = labelled(roots)?;
        let sources = roots
            .iter()
            .map(|r| {
                let mut s = Source::new(r.given.clone(), r.label.clone());
                s.dialect = config.dialect;
                s
            })
            .collect();
        let mut registry_config = RegistryConfig::with_sources(sources);
        registry_config.mode = config.mode;
        registry_config.environment = config.environment.clone();
        let engine =
            Engine::start(EngineConfig::one_shot(registry_config)).map_err(Error::Engine)?;
        let mut requests = Vec::new();
        for r in &roots {
            requests.extend(requests::read(&r.given.join(REQUESTS_FILE), &r.label)?);
        }
        Ok(Pack {
            engine,
            roots,
            requests,
        })
    }

    /// The text report.
    pub(crate) fn text(&self, config: &ReportConfig) -> Result<String, Error> {
        let (engine, roots) = (&self.engine, self.roots.as_slice());
        let mut out = String::new();
        header(&mut out, roots, config);
        skills(&mut out, engine, roots);
        diagnostics_section(&mut out, engine, roots);
        findings_section(&mut out, engine, roots);
        catalogs(&mut out, engine, roots, config);
        tiers(&mut out, engine, config);
        examples(&mut out, engine, config);
        schedules(&mut out, engine, roots, config);
        selections(&mut out, engine, &self.requests, config)?;
        trigger_evals::section(&mut out, engine, config.profile.clone())?;
        Ok(scrub(out, roots))
    }
}

/// One source folder and how the report names it.
struct Root {
    given: PathBuf,
    canonical: Option<PathBuf>,
    label: String,
}

fn labelled<P: AsRef<Path>>(roots: &[P]) -> Result<Vec<Root>, Error> {
    let mut out: Vec<Root> = Vec::new();
    for p in roots {
        let given = p.as_ref().to_path_buf();
        if let Err(source) = std::fs::metadata(&given) {
            return Err(Error::Root {
                path: given,
                source,
            });
        }
        let canonical = std::fs::canonicalize(&given).ok();
        let base = canonical
            .as_deref()
            .and_then(Path::file_name)
            .or_else(|| given.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "pack".to_owned());
        let mut label = base.clone();
        let mut n = 1;
        while out.iter().any(|r| r.label == label) {
            n += 1;
            label = format!("{base}-{n}");
        }
        out.push(Root {
            given,
            canonical,
            label,
        });
    }
    Ok(out)
}

/// `path` as `label/relative` when it is inside a root, else as written.
fn rel(path: &Path, roots: &[Root]) -> String {
    let mut best: Option<(usize, String)> = None;
    for r in roots {
        for base in std::iter::once(&r.given).chain(r.canonical.as_ref()) {
            if let Ok(rest) = path.strip_prefix(base) {
                let depth = base.components().count();
                if best.as_ref().is_none_or(|(d, _)| depth > *d) {
                    let rest = rest.to_string_lossy().replace('\\', "/");
                    let text = if rest.is_empty() {
                        r.label.clone()
                    } else {
                        format!("{}/{rest}", r.label)
                    };
                    best = Some((depth, text));
                }
            }
        }
    }
    best.map_or_else(|| path.display().to_string(), |(_, t)| t)
}

/// Replace every remaining mention of a root's absolute path (in messages, the XML and JSON
/// catalogs' locations) by its label, longest first.
fn scrub(mut text: String, roots: &[Root]) -> String {
    let mut pairs: Vec<(String, &str)> = Vec::new();
    for r in roots {
        for base in std::iter::once(&r.given).chain(r.canonical.as_ref()) {
            if base.is_absolute() || base.components().count() > 1 {
                let s = base.display().to_string();
                if !s.is_empty() {
                    pairs.push((s, &r.label));
                }
            }
        }
    }
    pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
    for (from, to) in pairs {
        text = text.replace(&from, to);
    }
    text
}

pub(crate) fn section(out: &mut String, title: &str) {
    let _ = write!(out, "\n== {title} ==\n\n");
}

fn ensure_newline(out: &mut String) {
    if !out.ends_with('\n') {
        out.push('\n');
    }
}

fn header(out: &mut String, roots: &[Root], config: &ReportConfig) {
    out.push_str("# skill pack report\n\n");
    out.push_str("sources (lowest precedence first):\n");
    for (i, r) in roots.iter().enumerate() {
        let _ = writeln!(out, "  {}. {}", i + 1, r.label);
    }
    let _ = writeln!(
        out,
        "profile: {}",
        config.profile.as_deref().unwrap_or("(none)")
    );
    let _ = writeln!(
        out,
        "dialect: {}",
        config.dialect.map_or("detected per file", Dialect::as_str)
    );
    let _ = writeln!(
        out,
        "mode: {}",
        if config.mode == Mode::Strict {
            "strict"
        } else {
            "lenient"
        }
    );
    let _ = writeln!(
        out,
        "instant: {} ({})",
        config.at.to_rfc3339_opts(SecondsFormat::Secs, true),
        config.timezone.name()
    );
    let _ = writeln!(out, "host os: {}", config.environment.os);
}

fn kind_and_status(s: &Skill) -> String {
    if s.kind == FileKind::DomainIndex {
        "domain".to_owned()
    } else {
        s.status.as_str().to_owned()
    }
}

fn table(out: &mut String, rows: &[Vec<String>]) {
    out.push_str(&skill_runtime::wire::text_table(rows));
}

fn skills(out: &mut String, engine: &Engine, roots: &[Root]) {
    let entries = engine.entries();
    let mut all: Vec<&Skill> = entries
        .skills
        .iter()
        .chain(&entries.domains)
        .map(AsRef::as_ref)
        .collect();
    all.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    section(out, &format!("skills ({})", all.len()));
    let mut rows = vec![
        ["NAME", "LAYER", "DIALECT", "STATUS", "INVOCABLE", "PATH"]
            .map(str::to_owned)
            .to_vec(),
    ];
    for s in &all {
        rows.push(vec![
            s.name.clone(),
            s.layer.clone(),
            s.dialect.as_str().to_owned(),
            kind_and_status(s),
            match (s.model_invocable(), s.user_invocable()) {
                (true, true) => "model,user",
                (true, false) => "model",
                (false, true) => "user",
                (false, false) => "-",
            }
            .to_owned(),
            rel(&s.path, roots),
        ]);
    }
    table(out, &rows);
    descriptions(out, &all);
    let mut shadowed: Vec<&Skill> = entries.shadowed.iter().map(AsRef::as_ref).collect();
    shadowed.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    section(out, &format!("shadowed ({})", shadowed.len()));
    if shadowed.is_empty() {
        out.push_str("(none)\n");
    }
    for s in shadowed {
        let winner = entries
            .skills
            .iter()
            .find(|w| w.name == s.name)
            .map_or_else(|| "(nothing)".to_owned(), |w| rel(&w.path, roots));
        let _ = writeln!(
            out,
            "{} ({}) {} -- shadowed by {}",
            s.name,
            s.layer,
            rel(&s.path, roots),
            winner
        );
    }
}

/// Each entry's description, and its brief description when it has one, whatever its status:
/// an edit to a disabled or ineligible skill changes the report too.
fn descriptions(out: &mut String, all: &[&Skill]) {
    section(out, &format!("descriptions ({})", all.len()));
    let one_line = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    for s in all {
        let description = one_line(&s.description);
        let _ = writeln!(
            out,
            "{}: {}",
            s.name,
            if description.is_empty() {
                "(none)"
            } else {
                &description
            }
        );
        if let Some(brief) = s.manifest.brief_description.as_deref() {
            let _ = writeln!(out, "  brief: {}", one_line(brief));
        }
    }
}

/// A diagnostic as the report sorts and prints it: path, line, column, code, text.
type DiagnosticRow = (String, Option<u32>, Option<u32>, &'static str, String);

/// Every diagnostic of the pack, as `skill-server validate` gives them
/// ([`Engine::diagnostics`]).
fn diagnostics_section(out: &mut String, engine: &Engine, roots: &[Root]) {
    let all = engine.diagnostics().diagnostics;
    let rows = diagnostic_rows(all.iter(), roots);
    let errors = all.iter().filter(|d| d.is_error()).count();
    section(
        out,
        &format!(
            "diagnostics ({errors} error{}, {} warning{})",
            plural(errors),
            all.len() - errors,
            plural(all.len() - errors)
        ),
    );
    if rows.is_empty() {
        out.push_str("(none)\n");
    }
    for (path, line, column, _, text) in rows {
        let place = match (line, column) {
            (Some(l), Some(c)) => format!("{path}:{l}:{c}"),
            (Some(l), None) => format!("{path}:{l}"),
            _ => path,
        };
        let _ = writeln!(out, "{place}: {text}");
    }
}

/// The content scan's findings over every entry's files (skill files and text resources),
/// whatever the entry's trust level or status; the section is left out when there are none.
fn findings_section(out: &mut String, engine: &Engine, roots: &[Root]) {
    let findings = engine.findings();
    let mut rows = diagnostic_rows(findings.iter().map(|(_, d)| d), roots);
    rows.dedup();
    if rows.is_empty() {
        return;
    }
    section(out, &format!("scan findings ({})", rows.len()));
    for (path, line, column, _, text) in rows {
        let _ = writeln!(
            out,
            "{path}:{}:{}: {text}",
            line.unwrap_or(0),
            column.unwrap_or(0)
        );
    }
}

/// Diagnostics as sorted rows: path relative to the pack, line, column, code, and the
/// `severity[code]: message` text.
fn diagnostic_rows<'d>(
    diagnostics: impl Iterator<Item = &'d skill_runtime::format::Diagnostic>,
    roots: &[Root],
) -> Vec<DiagnosticRow> {
    let mut rows: Vec<DiagnosticRow> = diagnostics
        .map(|d| {
            (
                rel(&d.path, roots),
                d.line,
                d.column,
                d.code.as_str(),
                format!(
                    "{}[{}]: {}",
                    d.severity.as_str(),
                    d.code.as_str(),
                    d.message
                ),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn catalogs(out: &mut String, engine: &Engine, roots: &[Root], config: &ReportConfig) {
    let scope = Scope::model().with_profile(config.profile.clone());
    for (name, format) in [
        ("markdown", CatalogFormat::Markdown),
        ("xml", CatalogFormat::Xml),
        ("json", CatalogFormat::Json),
    ] {
        let catalog = engine.catalog(format, &config.budget, &scope).catalog;
        section(out, &format!("catalog: {name}"));
        let shown = scrub(catalog.text, roots);
        out.push_str(&shown);
        ensure_newline(out);
        out.push_str("--\n");
        out.push_str(&skill_runtime::wire::budget_text(
            &catalog.report,
            shown.chars().count(),
        ));
    }
}

fn tiers(out: &mut String, engine: &Engine, config: &ReportConfig) {
    let scope = Scope::model().with_profile(config.profile.clone());
    let mut paths: Vec<Option<String>> = vec![None];
    paths.extend(
        engine
            .entries()
            .domains
            .iter()
            .map(|d| Some(d.name.clone())),
    );
    for path in paths {
        let title = match &path {
            None => "get_skill".to_owned(),
            Some(p) => format!("get_skill: {p}"),
        };
        section(out, &title);
        match engine.get_skill(path.as_deref(), &scope) {
            Ok(text) => out.push_str(&text),
            Err(e) => {
                let _ = write!(out, "error: {e}");
            }
        }
        ensure_newline(out);
    }
}

/// One line saying where a route goes.
fn route_text(route: &Route) -> String {
    match route {
        Route::Invoke(i) => {
            let mut t = format!("invoke {} ({})", i.skill, i.access.as_str());
            if !i.flags.is_empty() {
                let flags: Vec<String> = i
                    .flags
                    .iter()
                    .map(|(k, v)| {
                        if v.is_switch() {
                            format!("--{k}")
                        } else {
                            let joined = v.values().join(",");
                            if joined.contains(char::is_whitespace) || joined.is_empty() {
                                format!("--{k}={joined:?}")
                            } else {
                                format!("--{k}={joined}")
                            }
                        }
                    })
                    .collect();
                let _ = write!(t, " flags {}", flags.join(" "));
            }
            if !i.positionals.is_empty() {
                let _ = write!(t, " args {:?}", i.positionals);
            }
            t
        }
        Route::Help { topic, .. } => {
            format!("help {}", topic.as_deref().unwrap_or("(top level)"))
        }
        Route::Slash(s) => format!(
            "slash {} via {} ({})",
            s.skill,
            s.via.as_str(),
            s.delivery.as_str()
        ),
        Route::SkillList { skills, .. } => format!("skill list ({} skills)", skills.len()),
        Route::Builtin { command, .. } => format!("builtin /{command}"),
        Route::Message { note, .. } => match note {
            Some(n) => format!("message ({n})"),
            None => "message".to_owned(),
        },
        Route::Error(e) => format!("error[{}]: {e}", e.code()),
    }
}

fn examples(out: &mut String, engine: &Engine, config: &ReportConfig) {
    let mut lines = Vec::new();
    for example in engine.examples() {
        let caller = if example.text.starts_with('/') {
            Caller::User
        } else {
            Caller::Model
        };
        let scope = Scope {
            caller,
            profile: config.profile.clone(),
        };
        let route = engine.route(&example.text, &scope);
        let own = match &route {
            Route::Help { topic: Some(t), .. } => t == &example.skill,
            other => other.skill() == Some(example.skill.as_str()),
        };
        lines.push(format!(
            "{}: `{}`\n  -> {}{}\n",
            example.skill,
            example.text,
            route_text(&route),
            if own { "" } else { "  [not this skill]" }
        ));
    }
    section(out, &format!("examples ({})", lines.len()));
    if lines.is_empty() {
        out.push_str("(none)\n");
    }
    for l in lines {
        out.push_str(&l);
    }
}

fn schedules(out: &mut String, engine: &Engine, roots: &[Root], config: &ReportConfig) {
    let listing = engine.schedules(&ScheduleQuery {
        next: config.next_fires,
        timezone: Some(config.timezone),
        from: Some(config.at),
    });
    section(out, &format!("schedules ({})", listing.schedules.len()));
    if listing.schedules.is_empty() {
        out.push_str("(none)\n");
    }
    for job in &listing.schedules {
        let _ = writeln!(
            out,
            "{}  `{}`  {}",
            job.skill,
            job.expression,
            rel(&job.path, roots)
        );
        if job.next.is_empty() && config.next_fires > 0 {
            let _ = writeln!(
                out,
                "  (no fire time before the scheduler's calendar ends, with {LAST_YEAR})"
            );
        }
        for t in &job.next {
            let _ = writeln!(
                out,
                "  {}",
                t.with_timezone(&config.timezone)
                    .to_rfc3339_opts(SecondsFormat::Secs, true)
            );
        }
        if !job.next.is_empty() && job.next.len() < config.next_fires {
            let _ = writeln!(
                out,
                "  (no further fire time: the scheduler's calendar ends with {LAST_YEAR})"
            );
        }
    }
}

fn selections(
    out: &mut String,
    engine: &Engine,
    requests: &[(String, String)],
    config: &ReportConfig,
) -> Result<(), Error> {
    section(
        out,
        &format!("selections ({})", requests.len().min(MAX_REQUESTS)),
    );
    if requests.is_empty() {
        let _ = writeln!(out, "(no {REQUESTS_FILE} at a pack root)");
        return Ok(());
    }
    let options = SelectOptions {
        profile: config.profile.clone(),
        ..SelectOptions::default()
    };
    for (_, request) in requests.iter().take(MAX_REQUESTS) {
        let selection = engine.select(request, &options).map_err(Error::Engine)?;
        let _ = writeln!(out, "> {request}");
        if selection.selected_skills.is_empty() {
            out.push_str("  (no skill selected)\n");
        }
        for s in &selection.selected_skills {
            let _ = writeln!(out, "  {} {:.2}  {}", s.skill_id, s.confidence, s.reason);
        }
        let _ = writeln!(
            out,
            "  tier {}: {} included{}",
            selection.disclosure.tier as u8,
            selection.disclosure.included.len(),
            if selection.disclosure.omitted.is_empty() {
                String::new()
            } else {
                format!(", omitted {}", selection.disclosure.omitted.join(", "))
            }
        );
    }
    if requests.len() > MAX_REQUESTS {
        let _ = writeln!(
            out,
            "({} more requests skipped; at most {MAX_REQUESTS} are run)",
            requests.len() - MAX_REQUESTS
        );
    }
    Ok(())
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod html;
mod requests;
mod trigger_evals;

pub use html::report_html;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
