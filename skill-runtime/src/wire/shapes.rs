//! The JSON shapes of the engine's answers, borrowed from them.

use std::borrow::Cow;
use std::path::Path;

use serde::Serialize;
use skill_format::Diagnostic;
use skill_registry::{BudgetReport, CatalogEntry, Resource, Skill};
use skill_scheduler::{DateTime, RunRecord, SecondsFormat, Tz, Utc};
use skill_search::{Match, NoteHit, TriggerHit};

use crate::ops::schedules::{ScheduleEntry, Schedules};
use crate::ops::{CatalogView, Diagnostics, Health, Readiness, Shown, SkillList};
use crate::wire::Paths;

/// An instant as RFC 3339 in a zone, to the second (`Z` for UTC).
pub fn rfc3339(t: &DateTime<Utc>, zone: Tz) -> String {
    t.with_timezone(&zone)
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `GET /v1/health`.
#[derive(Debug, Serialize)]
pub struct HealthShape {
    status: &'static str,
    generation: u64,
    skills: usize,
    uptime_seconds: u64,
}

impl From<&Health> for HealthShape {
    fn from(h: &Health) -> Self {
        HealthShape {
            status: "ok",
            generation: h.generation,
            skills: h.skills,
            uptime_seconds: h.uptime_seconds,
        }
    }
}

/// `GET /v1/ready`.
#[derive(Debug, Serialize)]
pub struct ReadyShape<'a> {
    ready: bool,
    generation: u64,
    problems: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    degraded: &'a [String],
}

impl<'a> From<&'a Readiness> for ReadyShape<'a> {
    fn from(r: &'a Readiness) -> Self {
        ReadyShape {
            ready: r.is_ready(),
            generation: r.generation,
            problems: &r.problems,
            degraded: &r.degraded,
        }
    }
}

/// A skill as a listing shows it.
#[derive(Debug, Serialize)]
pub struct SkillSummaryShape<'a> {
    name: &'a str,
    description: &'a str,
    dialect: &'static str,
    layer: &'a str,
    status: &'static str,
    domain: Option<&'a str>,
    model_invocable: bool,
    user_invocable: bool,
    schedule: Option<&'a str>,
    path: Cow<'a, str>,
    /// The trust level of its source (`low`, `medium`, `high`), where the answer says.
    #[serde(skip_serializing_if = "Option::is_none")]
    trust: Option<&'static str>,
}

impl<'a> From<&'a Skill> for SkillSummaryShape<'a> {
    fn from(s: &'a Skill) -> Self {
        SkillSummaryShape::new(s, &Paths::Absolute)
    }
}

impl<'a> SkillSummaryShape<'a> {
    /// A skill, its path written as `paths` says.
    pub fn new(s: &'a Skill, paths: &Paths<'_>) -> Self {
        SkillSummaryShape {
            name: &s.name,
            description: &s.description,
            dialect: s.dialect.as_str(),
            layer: &s.layer,
            status: s.status.as_str(),
            domain: s.domain.as_deref(),
            model_invocable: s.model_invocable(),
            user_invocable: s.user_invocable(),
            schedule: s.manifest.schedule.as_deref(),
            path: paths.path(&s.path),
            trust: None,
        }
    }

    /// The same, saying the trust level of the skill's source.
    pub fn with_trust(mut self, trust: skill_registry::Trust) -> Self {
        self.trust = Some(trust.as_str());
        self
    }
}

/// `GET /v1/skills`.
#[derive(Debug, Serialize)]
pub struct SkillListShape<'a> {
    generation: u64,
    count: usize,
    skills: Vec<SkillSummaryShape<'a>>,
}

impl<'a> From<&'a SkillList> for SkillListShape<'a> {
    fn from(l: &'a SkillList) -> Self {
        SkillListShape::new(l, &Paths::Absolute)
    }
}

impl<'a> SkillListShape<'a> {
    /// A listing, its paths written as `paths` says.
    pub fn new(l: &'a SkillList, paths: &Paths<'_>) -> Self {
        SkillListShape {
            generation: l.generation,
            count: l.skills.len(),
            skills: l
                .skills
                .iter()
                .zip(&l.trust)
                .map(|(s, t)| SkillSummaryShape::new(s, paths).with_trust(*t))
                .collect(),
        }
    }
}

/// An entry a higher layer hides.
#[derive(Debug, Serialize)]
struct ShadowShape<'a> {
    layer: &'a str,
    path: Cow<'a, str>,
}

/// A skill's affinity under one profile.
#[derive(Debug, Serialize)]
struct ProfileAffinityShape<'a> {
    profile: &'a str,
    affinity: &'static str,
    /// Whether the model may use the skill under the profile (not excluded, and the
    /// skill is model-invocable).
    eligible: bool,
}

/// `GET /v1/skills/{name}` and `show --format json`: one entry in full.
#[derive(Debug, Serialize)]
pub struct SkillDetailShape<'a> {
    #[serde(flatten)]
    summary: SkillSummaryShape<'a>,
    body: &'a str,
    body_line: u32,
    allowed_tools: Option<&'a [String]>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    when_to_use: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    when_not_to_use: &'a [String],
    argument_hint: Option<&'a str>,
    context: Option<&'static str>,
    shadows: Vec<ShadowShape<'a>>,
    diagnostics: Cow<'a, [Diagnostic]>,
    /// Its affinity under each profile the engine knows (`GET /v1/profiles`).
    profiles: Vec<ProfileAffinityShape<'a>>,
    generation: u64,
}

impl<'a> From<&'a Shown> for SkillDetailShape<'a> {
    fn from(shown: &'a Shown) -> Self {
        SkillDetailShape::new(shown, &Paths::Absolute)
    }
}

impl<'a> SkillDetailShape<'a> {
    /// One entry, its paths written as `paths` says.
    pub fn new(shown: &'a Shown, paths: &Paths<'_>) -> Self {
        let s = &*shown.skill;
        let m = &s.manifest;
        SkillDetailShape {
            summary: SkillSummaryShape::new(s, paths).with_trust(shown.trust),
            body: &s.body,
            body_line: s.body_line,
            allowed_tools: m.allowed_tools.as_deref(),
            when_to_use: &m.when_to_use,
            when_not_to_use: &m.when_not_to_use,
            argument_hint: m.argument_hint.as_deref(),
            context: m.context.map(skill_format::ContextMode::as_str),
            shadows: shown
                .shadows
                .iter()
                .map(|h| ShadowShape {
                    layer: &h.layer,
                    path: paths.path(&h.path),
                })
                .collect(),
            diagnostics: paths.diagnostics(&s.diagnostics),
            profiles: shown
                .profiles
                .iter()
                .map(|(p, a)| ProfileAffinityShape {
                    profile: p,
                    affinity: a.as_str(),
                    eligible: *a != skill_registry::Affinity::Excluded
                        && s.model_invocable()
                        && s.status == skill_registry::Status::Loaded,
                })
                .collect(),
            generation: shown.generation,
        }
    }
}

/// An entry as `list` and `validate` print it.
#[derive(Debug, Serialize)]
pub struct EntryShape<'a> {
    name: &'a str,
    #[serde(serialize_with = "skill_format::serialize_path")]
    path: &'a Path,
    dialect: &'static str,
    layer: &'a str,
    status: &'static str,
}

impl<'a> From<&'a Skill> for EntryShape<'a> {
    fn from(s: &'a Skill) -> Self {
        EntryShape {
            name: &s.name,
            path: &s.path,
            dialect: s.dialect.as_str(),
            layer: &s.layer,
            status: s.status.as_str(),
        }
    }
}

/// One file of a skill's folder: its relative path, size, kind and SHA-256 (hex, `null`
/// when the manifest did not hash it).
#[derive(Debug, Serialize)]
pub(super) struct ResourceShape<'a> {
    path: &'a str,
    size: u64,
    kind: &'static str,
    sha256: Option<String>,
}

impl<'a> From<&'a Resource> for ResourceShape<'a> {
    fn from(r: &'a Resource) -> Self {
        ResourceShape {
            path: &r.path,
            size: r.size,
            kind: r.kind.as_str(),
            sha256: r.sha256.map(|d| d.to_hex()),
        }
    }
}

/// `GET /v1/skills/{name}/resources` and `resources --format json`.
#[derive(Debug, Serialize)]
pub struct ResourcesShape<'a> {
    skill: &'a str,
    resources: Vec<ResourceShape<'a>>,
    truncated: bool,
    too_many: bool,
    too_deep: bool,
}

impl<'a> ResourcesShape<'a> {
    /// A skill's listing.
    pub fn new(skill: &'a str, listing: &'a skill_registry::ResourceListing) -> Self {
        ResourcesShape {
            skill,
            resources: listing.resources.iter().map(ResourceShape::from).collect(),
            truncated: listing.is_truncated(),
            too_many: listing.too_many,
            too_deep: listing.too_deep,
        }
    }
}

/// `GET /v1/profiles`.
#[derive(Debug, Serialize)]
pub struct ProfilesShape<'a> {
    generation: u64,
    profiles: Vec<ProfileShape<'a>>,
}

/// One profile: whether the configuration names it, and how many loaded skills its
/// affinity lists name.
#[derive(Debug, Serialize)]
struct ProfileShape<'a> {
    name: &'a str,
    configured: bool,
    proactive: usize,
    excluded: usize,
}

impl<'a> From<&'a crate::Profiles> for ProfilesShape<'a> {
    fn from(p: &'a crate::Profiles) -> Self {
        ProfilesShape {
            generation: p.generation,
            profiles: p
                .profiles
                .iter()
                .map(|x| ProfileShape {
                    name: &x.name,
                    configured: x.configured,
                    proactive: x.proactive,
                    excluded: x.excluded,
                })
                .collect(),
        }
    }
}

/// `GET /v1/catalog` and `catalog --format json`.
#[derive(Debug, Serialize)]
pub struct CatalogShape<'a> {
    generation: u64,
    format: skill_registry::CatalogFormat,
    text: Cow<'a, str>,
    entries: Cow<'a, [CatalogEntry]>,
    report: &'a BudgetReport,
}

impl<'a> From<&'a CatalogView> for CatalogShape<'a> {
    fn from(c: &'a CatalogView) -> Self {
        CatalogShape::new(c, &Paths::Absolute)
    }
}

impl<'a> CatalogShape<'a> {
    /// The catalog, its entries' locations (and the rendered text's) written as `paths`
    /// says.
    pub fn new(c: &'a CatalogView, paths: &Paths<'_>) -> Self {
        let entries = match paths {
            Paths::Absolute => Cow::Borrowed(c.catalog.entries.as_slice()),
            Paths::Relative(_) => Cow::Owned(
                c.catalog
                    .entries
                    .iter()
                    .map(|e| CatalogEntry {
                        location: paths.path(&e.location).into_owned().into(),
                        ..e.clone()
                    })
                    .collect(),
            ),
        };
        CatalogShape {
            generation: c.generation,
            format: c.catalog.format,
            text: paths.text(&c.catalog.text),
            entries,
            report: &c.catalog.report,
        }
    }
}

/// `GET /v1/diagnostics`.
#[derive(Debug, Serialize)]
pub struct DiagnosticsShape<'a> {
    generation: u64,
    errors: usize,
    warnings: usize,
    diagnostics: Cow<'a, [Diagnostic]>,
}

impl<'a> From<&'a Diagnostics> for DiagnosticsShape<'a> {
    fn from(d: &'a Diagnostics) -> Self {
        DiagnosticsShape::new(d, &Paths::Absolute)
    }
}

impl<'a> DiagnosticsShape<'a> {
    /// The diagnostics, their paths written as `paths` says.
    pub fn new(d: &'a Diagnostics, paths: &Paths<'_>) -> Self {
        DiagnosticsShape {
            generation: d.generation,
            errors: d.errors,
            warnings: d.warnings,
            diagnostics: paths.diagnostics(&d.diagnostics),
        }
    }
}

/// One ranked skill, with why it matched; the confidence rounded to two decimals.
#[derive(Debug, Serialize)]
pub struct SearchMatchShape<'a> {
    name: &'a str,
    layer: &'a str,
    confidence: f64,
    explicit: bool,
    phrase: Option<&'a str>,
    triggers: Vec<TriggerHitShape<'a>>,
    matched_terms: &'a [String],
    body_terms: &'a [String],
    /// The lexical (BM25F) score, two decimals: one of the signals the confidence fuses.
    text_score: f64,
    /// The semantic similarity of request and skill (cosine), three decimals.
    semantic: f64,
    reason: &'a str,
    description: &'a str,
    /// When the host last used the skill (a logical clock), once it has.
    #[serde(skip_serializing_if = "Option::is_none")]
    last_used: Option<u64>,
}

impl<'a> From<&'a Match> for SearchMatchShape<'a> {
    fn from(m: &'a Match) -> Self {
        SearchMatchShape {
            name: &m.name,
            layer: &m.layer,
            confidence: rounded(m.confidence, 100.0),
            explicit: m.explicit,
            phrase: m.phrase.as_deref(),
            triggers: m.triggers.iter().map(TriggerHitShape::from).collect(),
            matched_terms: &m.matched_terms,
            body_terms: &m.body_terms,
            text_score: rounded(m.text_score, 100.0),
            semantic: rounded(m.semantic, 1000.0),
            reason: &m.reason,
            description: &m.description,
            last_used: m.last_used,
        }
    }
}

/// A trigger that matched: its kind (`keyword`, `verb`, `pattern`) and the trigger as the
/// skill declares it.
#[derive(Debug, Serialize)]
pub(super) struct TriggerHitShape<'a> {
    kind: &'static str,
    trigger: &'a str,
}

impl<'a> From<&'a TriggerHit> for TriggerHitShape<'a> {
    fn from(h: &'a TriggerHit) -> Self {
        TriggerHitShape {
            kind: h.kind.as_str(),
            trigger: &h.trigger,
        }
    }
}

/// `value` rounded to `1 / scale` (`scale` 100: two decimals).
fn rounded(value: f32, scale: f64) -> f64 {
    (f64::from(value) * scale).round() / scale
}

/// `GET /v1/search` and `search --format json`.
#[derive(Debug, Serialize)]
pub struct SearchShape<'a> {
    query: &'a str,
    /// The confidence a skill needs to be selected by default
    /// ([`skill_search::DEFAULT_THRESHOLD`]): the gate's line, so a reader sees the margin.
    threshold: f64,
    matches: Vec<SearchMatchShape<'a>>,
}

impl<'a> SearchShape<'a> {
    /// The matches of a query.
    pub fn new(query: &'a str, matches: &'a [Match]) -> Self {
        SearchShape {
            query,
            threshold: rounded(skill_search::DEFAULT_THRESHOLD, 100.0),
            matches: matches.iter().map(SearchMatchShape::from).collect(),
        }
    }
}

/// One ranked note.
#[derive(Debug, Serialize)]
struct NoteShape<'a> {
    path: &'a str,
    title: &'a str,
    tags: &'a [String],
    snippet: &'a str,
}

/// `GET /v1/notes/search` and `notes-search --format json`.
#[derive(Debug, Serialize)]
pub struct NotesShape<'a> {
    query: &'a str,
    notes: Vec<NoteShape<'a>>,
}

impl<'a> NotesShape<'a> {
    /// The notes of a query.
    pub fn new(query: &'a str, hits: &'a [NoteHit]) -> Self {
        NotesShape {
            query,
            notes: hits
                .iter()
                .map(|h| NoteShape {
                    path: &h.path,
                    title: &h.title,
                    tags: &h.tags,
                    snippet: &h.snippet,
                })
                .collect(),
        }
    }
}

/// A scheduler run.
#[derive(Debug, Serialize)]
pub struct RunShape<'a> {
    id: u64,
    skill: &'a str,
    scheduled: String,
    started: String,
    finished: Option<String>,
    generation: u64,
    outcome: &'static str,
    error: Option<&'a str>,
    /// The replica that ran it, with several replicas.
    #[serde(skip_serializing_if = "Option::is_none")]
    replica: Option<&'a str>,
}

impl<'a> From<&'a RunRecord> for RunShape<'a> {
    fn from(r: &'a RunRecord) -> Self {
        RunShape {
            id: r.id,
            skill: &r.name,
            scheduled: rfc3339(&r.scheduled, Tz::UTC),
            started: rfc3339(&r.started, Tz::UTC),
            finished: r.finished.as_ref().map(|t| rfc3339(t, Tz::UTC)),
            generation: r.generation,
            outcome: r.outcome.as_str(),
            error: match &r.outcome {
                skill_scheduler::Outcome::Failed(m) => Some(m),
                _ => None,
            },
            replica: r.replica.as_deref(),
        }
    }
}

/// One scheduled skill; the scheduler's fields only from a running scheduler.
#[derive(Debug, Serialize)]
pub struct ScheduleShape<'a> {
    skill: &'a str,
    expression: &'a str,
    path: Cow<'a, str>,
    timezone: &'static str,
    next: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_fire: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_run: Option<RunShape<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    running: bool,
}

impl<'a> ScheduleShape<'a> {
    fn new(e: &'a ScheduleEntry, zone: Tz, paths: &Paths<'_>) -> Self {
        ScheduleShape {
            skill: &e.skill,
            expression: &e.expression,
            path: paths.path(&e.path),
            timezone: e.timezone.name(),
            next: e.next.iter().map(|t| rfc3339(t, zone)).collect(),
            last_fire: e.last_fire.as_ref().map(|t| rfc3339(t, zone)),
            last_run: e.last_run.as_ref().map(RunShape::from),
            running: e.running,
        }
    }
}

/// `GET /v1/schedules` and `schedules --format json`: instants in the listing's zone.
#[derive(Debug, Serialize)]
pub struct SchedulesShape<'a> {
    generation: u64,
    timezone: &'static str,
    from: String,
    schedules: Vec<ScheduleShape<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    history: Option<Vec<RunShape<'a>>>,
    diagnostics: Cow<'a, [Diagnostic]>,
    /// The webhook deliveries, each with its attempts (the first and its retries), oldest
    /// first: with a database every replica's (each attempt naming its replica), else this
    /// process's; left out when there are none.
    #[cfg(feature = "replicas")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    deliveries: Vec<DeliveryShape<'a>>,
}

/// One webhook delivery of a run (its key is `run-` and the run's id).
#[cfg(feature = "replicas")]
#[derive(Debug, Serialize)]
struct DeliveryShape<'a> {
    key: &'a str,
    delivered: bool,
    /// Attempts after the first.
    retries: usize,
    attempts: Vec<AttemptShape<'a>>,
}

/// One attempt of a delivery: the receiver's status, or what went wrong.
#[cfg(feature = "replicas")]
#[derive(Debug, Serialize)]
struct AttemptShape<'a> {
    attempt: u32,
    status: Option<u16>,
    error: Option<&'a str>,
    /// The replica that made it (with a database: every replica's deliveries are listed).
    #[serde(skip_serializing_if = "Option::is_none")]
    replica: Option<&'a str>,
}

impl<'a> From<&'a Schedules> for SchedulesShape<'a> {
    fn from(s: &'a Schedules) -> Self {
        SchedulesShape::new(s, &Paths::Absolute)
    }
}

impl<'a> SchedulesShape<'a> {
    /// A listing, its paths written as `paths` says.
    pub fn new(s: &'a Schedules, paths: &Paths<'_>) -> Self {
        SchedulesShape {
            generation: s.generation,
            timezone: s.timezone.name(),
            from: rfc3339(&s.from, s.timezone),
            schedules: s
                .schedules
                .iter()
                .map(|e| ScheduleShape::new(e, s.timezone, paths))
                .collect(),
            history: s
                .history
                .as_ref()
                .map(|h| h.iter().map(RunShape::from).collect()),
            diagnostics: paths.diagnostics(&s.diagnostics),
            #[cfg(feature = "replicas")]
            deliveries: s
                .deliveries
                .iter()
                .map(|d| DeliveryShape {
                    key: &d.key,
                    delivered: d.delivered,
                    retries: d.attempts.len().saturating_sub(1),
                    attempts: d
                        .attempts
                        .iter()
                        .map(|a| AttemptShape {
                            attempt: a.attempt,
                            status: a.status,
                            error: a.error.as_deref(),
                            replica: a.replica.as_deref(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}
