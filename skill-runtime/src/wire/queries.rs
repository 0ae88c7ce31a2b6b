//! The read-only requests HTTP takes from a query string: the skill listing, a skill's
//! disclosed files and sections, the catalog and the schedules. Like every request, each
//! owns its fields' kinds, ranges and code ([`Operation`]); the command line builds the
//! Engine's queries itself.

use serde_json::{Map, Value, json};
use skill_registry::{Budget, Caller, CatalogFormat};
use skill_scheduler::{DateTime, Tz, Utc};

use super::request::{Args, Field, FieldKind, Operation, Request};
use super::requests::{ANY_COUNT, CALLER, PROFILE, caller, caller_word, put};
use crate::ops::schedules::ScheduleQuery;
use crate::ops::{Lookup, Scope, SkillQuery};

/// The skill listing (`GET /v1/skills`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListSkillsRequest {
    /// The processing profile: leave out skills it excludes.
    pub profile: Option<String>,
    /// Only skills this caller may invoke.
    pub invocable_by: Option<Caller>,
    /// Invalid, ineligible and shadowed-out entries too (`status=all`).
    pub all: bool,
    /// Only this layer.
    pub layer: Option<String>,
    /// Only this actions domain.
    pub domain: Option<String>,
}

/// Input of [`ListSkillsRequest`].
pub(super) const LIST_SKILLS: Operation = Operation {
    name: "list_skills",
    fields: &[
        PROFILE,
        Field::new("layer", FieldKind::Text, "only skills of this layer"),
        Field::new(
            "domain",
            FieldKind::Text,
            "only skills of this actions domain",
        ),
        Field::new(
            "invocable_by",
            FieldKind::Choice(&["model", "user"]),
            "only skills that caller may invoke",
        ),
        Field::new(
            "status",
            FieldKind::Choice(&["loaded", "all"]),
            "`loaded` (default) or `all` (invalid and ineligible too)",
        ),
    ],
    one_of: None,
    error_code: "bad_query",
};

impl Request for ListSkillsRequest {
    const OPERATION: &'static Operation = &LIST_SKILLS;

    fn from_args(a: &Args) -> Self {
        ListSkillsRequest {
            profile: a.text("profile"),
            invocable_by: a
                .text("invocable_by")
                .map(|w| caller(Some(w), Caller::Model)),
            all: a.text("status").as_deref() == Some("all"),
            layer: a.text("layer"),
            domain: a.text("domain"),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        put(&mut m, "profile", self.profile.as_ref());
        put(
            &mut m,
            "invocable_by",
            self.invocable_by.map(caller_word).as_ref(),
        );
        if self.all {
            m.insert("status".into(), json!("all"));
        }
        put(&mut m, "layer", self.layer.as_ref());
        put(&mut m, "domain", self.domain.as_ref());
        m
    }
}

impl ListSkillsRequest {
    /// The Engine's listing query.
    pub fn query(&self) -> SkillQuery {
        SkillQuery {
            all: self.all,
            layer: self.layer.clone(),
            domain: self.domain.clone(),
            invocable_by: self.invocable_by,
            profile: self.profile.clone(),
        }
    }
}

/// Who reads one skill's disclosed parts: its resources, its outline, one section
/// (`GET /v1/skills/{name}/resources`, `/outline`, `/sections/{slug}`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DisclosureRequest {
    /// The processing profile.
    pub profile: Option<String>,
    /// Who reads (default the model).
    pub caller: Option<Caller>,
}

/// Input of [`DisclosureRequest`].
pub(super) const DISCLOSURE: Operation = Operation {
    name: "disclosure",
    fields: &[PROFILE, CALLER],
    one_of: None,
    error_code: "bad_query",
};

impl Request for DisclosureRequest {
    const OPERATION: &'static Operation = &DISCLOSURE;

    fn from_args(a: &Args) -> Self {
        DisclosureRequest {
            profile: a.text("profile"),
            caller: a.text("caller").map(|w| caller(Some(w), Caller::Model)),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        put(&mut m, "profile", self.profile.as_ref());
        put(&mut m, "caller", self.caller.map(caller_word).as_ref());
        m
    }
}

impl DisclosureRequest {
    /// Who asks.
    pub fn scope(&self) -> Scope {
        Scope {
            caller: self.caller.unwrap_or(Caller::Model),
            profile: self.profile.clone(),
        }
    }

    /// The Engine's lookup: the skill as this caller may see it.
    pub fn lookup(&self) -> Lookup {
        Lookup::Disclosed(self.scope())
    }
}

/// The catalog for the system prompt, fitted to a budget (`GET /v1/catalog`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CatalogRequest {
    /// The processing profile.
    pub profile: Option<String>,
    /// Who reads (default the model).
    pub caller: Option<Caller>,
    /// `markdown` (default), `xml` or `json`.
    pub format: Option<CatalogFormat>,
    /// The budget's three numbers, as given.
    pub budget: Budget,
}

/// Input of [`CatalogRequest`].
pub(super) const CATALOG: Operation = Operation {
    name: "catalog",
    fields: &[
        PROFILE,
        CALLER,
        Field::new(
            "format",
            FieldKind::Choice(&["markdown", "xml", "json"]),
            "`markdown` (default), `xml` or `json`",
        ),
        Field::new("budget_chars", ANY_COUNT, "the budget in characters"),
        Field::new(
            "context_window_tokens",
            ANY_COUNT,
            "the context window; the budget is 2% of it x 4",
        ),
        Field::new(
            "entry_cap_chars",
            ANY_COUNT,
            "the cap on one entry, in characters (only its description is cut to fit)",
        ),
    ],
    one_of: None,
    error_code: "bad_query",
};

fn format_word(f: CatalogFormat) -> &'static str {
    match f {
        CatalogFormat::Markdown => "markdown",
        CatalogFormat::Xml => "xml",
        CatalogFormat::Json => "json",
    }
}

impl Request for CatalogRequest {
    const OPERATION: &'static Operation = &CATALOG;

    fn from_args(a: &Args) -> Self {
        CatalogRequest {
            profile: a.text("profile"),
            caller: a.text("caller").map(|w| caller(Some(w), Caller::Model)),
            format: a.text("format").map(|w| match w.as_str() {
                "xml" => CatalogFormat::Xml,
                "json" => CatalogFormat::Json,
                _ => CatalogFormat::Markdown,
            }),
            budget: Budget {
                budget_chars: a.size("budget_chars"),
                context_window_tokens: a.count("context_window_tokens"),
                entry_cap_chars: a.size("entry_cap_chars"),
            },
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        put(&mut m, "profile", self.profile.as_ref());
        put(&mut m, "caller", self.caller.map(caller_word).as_ref());
        put(&mut m, "format", self.format.map(format_word).as_ref());
        put(&mut m, "budget_chars", self.budget.budget_chars.as_ref());
        put(
            &mut m,
            "context_window_tokens",
            self.budget.context_window_tokens.as_ref(),
        );
        put(
            &mut m,
            "entry_cap_chars",
            self.budget.entry_cap_chars.as_ref(),
        );
        m
    }
}

impl CatalogRequest {
    /// Who asks.
    pub fn scope(&self) -> Scope {
        Scope {
            caller: self.caller.unwrap_or(Caller::Model),
            profile: self.profile.clone(),
        }
    }

    /// The format asked for (Markdown when left out).
    pub fn format(&self) -> CatalogFormat {
        self.format.unwrap_or(CatalogFormat::Markdown)
    }
}

/// Most upcoming fire times a schedules listing gives per skill.
pub const MAX_NEXT_FIRES: usize = 100;
/// Fire times per skill when the request names no number.
pub const DEFAULT_NEXT_FIRES: usize = 5;

/// Scheduled skills with their next fire times (`GET /v1/schedules`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchedulesRequest {
    /// Fire times per skill (default [`DEFAULT_NEXT_FIRES`]).
    pub next: Option<usize>,
    /// The listing's time zone (default UTC).
    pub timezone: Option<Tz>,
    /// List fire times after this instant (default now).
    pub from: Option<DateTime<Utc>>,
}

/// Input of [`SchedulesRequest`].
pub(super) const SCHEDULES: Operation = Operation {
    name: "schedules",
    fields: &[
        Field::new(
            "next",
            FieldKind::Count {
                min: 0,
                max: MAX_NEXT_FIRES as u64,
            },
            "fire times per skill (0 to 100, default 5)",
        ),
        Field::new("tz", FieldKind::TimeZone, "IANA time zone (default UTC)"),
        Field::new(
            "from",
            FieldKind::Instant,
            "list fire times after this RFC 3339 instant (default now)",
        ),
    ],
    one_of: None,
    error_code: "bad_query",
};

impl Request for SchedulesRequest {
    const OPERATION: &'static Operation = &SCHEDULES;

    fn from_args(a: &Args) -> Self {
        SchedulesRequest {
            next: a.size("next"),
            timezone: a.text("tz").and_then(|z| z.parse().ok()),
            from: a
                .text("from")
                .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
                .map(|t| t.with_timezone(&Utc)),
        }
    }

    fn to_object(&self) -> Map<String, Value> {
        let mut m = Map::new();
        put(&mut m, "next", self.next.as_ref());
        put(&mut m, "tz", self.timezone.map(|z| z.name()).as_ref());
        put(&mut m, "from", self.from.map(|t| t.to_rfc3339()).as_ref());
        m
    }
}

impl SchedulesRequest {
    /// The Engine's schedules query.
    pub fn query(&self) -> ScheduleQuery {
        ScheduleQuery {
            next: self.next.unwrap_or(DEFAULT_NEXT_FIRES),
            timezone: self.timezone,
            from: self.from,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn next_fires_are_refused_past_their_cap_not_clamped() {
        let at = |n: usize| SchedulesRequest::read_query(&query(&[("next", &n.to_string())]));
        assert_eq!(at(MAX_NEXT_FIRES).unwrap().query().next, MAX_NEXT_FIRES);
        assert_eq!(at(0).unwrap().query().next, 0);
        assert_eq!(at(MAX_NEXT_FIRES + 1).unwrap_err().code, "bad_query");
        let default = SchedulesRequest::read_query(&query(&[])).unwrap();
        assert_eq!(default.query().next, DEFAULT_NEXT_FIRES);
    }

    #[test]
    fn zones_and_instants_are_checked_and_round_trip() {
        let r = SchedulesRequest::read_query(&query(&[
            ("tz", "Europe/Paris"),
            ("from", "2026-11-20T12:00:00+01:00"),
        ]))
        .unwrap();
        assert_eq!(r.timezone.map(|z| z.name()), Some("Europe/Paris"));
        assert_eq!(r.from.unwrap().to_rfc3339(), "2026-11-20T11:00:00+00:00");
        assert_eq!(SchedulesRequest::read(&r.to_object(), true).unwrap(), r);
        for (k, v) in [("tz", "Mars/Olympus"), ("tz", ""), ("from", "tomorrow")] {
            let e = SchedulesRequest::read_query(&query(&[(k, v)])).unwrap_err();
            assert!(e.message.starts_with(&format!("`{k}` must be")), "{e}");
        }
    }

    #[test]
    fn listing_and_catalog_requests_round_trip() {
        let list = ListSkillsRequest::read_query(&query(&[
            ("status", "all"),
            ("invocable_by", "user"),
            ("layer", "l"),
        ]))
        .unwrap();
        assert!(list.all);
        assert_eq!(list.query().invocable_by, Some(Caller::User));
        assert_eq!(
            ListSkillsRequest::read(&list.to_object(), true).unwrap(),
            list
        );
        assert!(ListSkillsRequest::read_query(&query(&[("status", "some")])).is_err());
        let cat = CatalogRequest::read_query(&query(&[
            ("format", "json"),
            ("budget_chars", "0"),
            ("caller", "user"),
        ]))
        .unwrap();
        assert_eq!(cat.format(), CatalogFormat::Json);
        assert_eq!(cat.budget.budget_chars, Some(0));
        assert_eq!(cat.scope().caller, Caller::User);
        assert_eq!(CatalogRequest::read(&cat.to_object(), true).unwrap(), cat);
        let d = DisclosureRequest::read_query(&query(&[("caller", "user")])).unwrap();
        assert_eq!(d.lookup(), Lookup::Disclosed(Scope::user()));
    }
}
