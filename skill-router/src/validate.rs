//! Flag validation: helpers for handler authors (markdown-first 5.6, the seed's
//! `FlagValidator`) and the schema pre-validation of Approach B (markdown-first 5.1).

use skill_format::sections::{FlagSchema, flag_schema, usage_line};
use skill_registry::closest_names;

use crate::Error;
use crate::error::FlagProblem;
use crate::flags::{FlagValue, Flags};

/// Check that every flag in `required` is present (markdown-first 5.6 `require`).
/// The error lists every missing flag, in the order given.
pub fn require<S: AsRef<str>>(flags: &Flags<S>, required: &[&str]) -> Result<(), Error> {
    let missing: Vec<String> = required
        .iter()
        .filter(|name| !flags.contains(name))
        .map(|name| (*name).to_owned())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::MissingFlags { flags: missing })
    }
}

/// Check that every value of `flag` is one of `allowed` (markdown-first 5.6
/// `validate_enum`). An absent flag passes; a switch (no value) fails, since it names none
/// of the allowed values.
pub fn one_of<S: AsRef<str>>(flags: &Flags<S>, flag: &str, allowed: &[&str]) -> Result<(), Error> {
    let Some(value) = flags.get(flag) else {
        return Ok(());
    };
    let bad: Vec<String> = match value {
        FlagValue::Switch(_) => vec![String::new()],
        other => other
            .values()
            .iter()
            .map(AsRef::as_ref)
            .filter(|v| !allowed.contains(v))
            .map(str::to_owned)
            .collect(),
    };
    if bad.is_empty() {
        Ok(())
    } else {
        Err(Error::InvalidValues {
            flag: flag.to_owned(),
            values: bad,
            allowed: allowed.iter().map(|a| (*a).to_owned()).collect(),
        })
    }
}

fn single<'f, S: AsRef<str>>(
    flags: &'f Flags<S>,
    flag: &str,
    expected: &'static str,
) -> Result<Option<&'f str>, Error> {
    match flags.get(flag) {
        None => Ok(None),
        Some(v) => match v.as_str() {
            Some(s) => Ok(Some(s)),
            None => Err(Error::InvalidType {
                flag: flag.to_owned(),
                value: v
                    .values()
                    .iter()
                    .map(AsRef::as_ref)
                    .collect::<Vec<_>>()
                    .join(" "),
                expected,
            }),
        },
    }
}

/// Read `flag` as an integer (markdown-first 5.6 `cast_integer`): `None` when absent, an
/// error when it is a switch, several values, or not an integer (`i64`, optional sign,
/// ASCII digits).
pub fn integer<S: AsRef<str>>(flags: &Flags<S>, flag: &str) -> Result<Option<i64>, Error> {
    const EXPECTED: &str = "an integer";
    let Some(s) = single(flags, flag, EXPECTED)? else {
        return Ok(None);
    };
    s.parse::<i64>().map(Some).map_err(|_| Error::InvalidType {
        flag: flag.to_owned(),
        value: s.to_owned(),
        expected: EXPECTED,
    })
}

/// A calendar date read by [`date`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// The year (0000-9999).
    pub year: u16,
    /// The month, 1-12.
    pub month: u8,
    /// The day of the month, 1-31 (checked against the month and leap years).
    pub day: u8,
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn parse_date(s: &str) -> Option<Date> {
    let b = s.as_bytes();
    if b.len() != 10 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u16> {
        let part = s.get(r)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let year = num(0..4)?;
    let month = u8::try_from(num(5..7)?).ok()?;
    let day = u8::try_from(num(8..10)?).ok()?;
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days)
        .contains(&day)
        .then_some(Date { year, month, day })
}

/// Read `flag` as a date in `YYYY-MM-DD` form (markdown-first 5.6 `cast_date`): `None`
/// when absent, an error when it is not one real calendar date.
pub fn date<S: AsRef<str>>(flags: &Flags<S>, flag: &str) -> Result<Option<Date>, Error> {
    const EXPECTED: &str = "a date (YYYY-MM-DD)";
    let Some(s) = single(flags, flag, EXPECTED)? else {
        return Ok(None);
    };
    parse_date(s).map(Some).ok_or_else(|| Error::InvalidType {
        flag: flag.to_owned(),
        value: s.to_owned(),
        expected: EXPECTED,
    })
}

/// Fill in defaults for the flags not given (markdown-first 5.6 `apply_defaults`): given
/// flags always win.
pub fn apply_defaults(flags: &mut Flags, defaults: &[(&str, FlagValue)]) {
    for (name, value) in defaults {
        if !flags.contains(name) {
            flags.insert(*name, value.clone());
        }
    }
}

/// The defaults a `## Flags` schema declares (`(default: x)`), for [`apply_defaults`].
/// `One or more of:` flags get their default split on commas into several values.
pub fn schema_defaults(schema: &FlagSchema) -> Vec<(&str, FlagValue)> {
    schema
        .flags
        .iter()
        .filter_map(|f| {
            let d = f.default.as_deref()?;
            let value = if f.multiple {
                let parts: Vec<String> = d
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect();
                if parts.len() == 1 {
                    FlagValue::One(parts.into_iter().next().unwrap_or_default())
                } else {
                    FlagValue::Many(parts)
                }
            } else {
                FlagValue::One(d.to_owned())
            };
            Some((f.name.as_str(), value))
        })
        .collect()
}

/// Check `flags` against the skill's `## Flags` schema (Approach B): flags not declared,
/// required flags missing, values outside `One of:` (values of `One or more of:` flags may
/// also be comma-separated), several values for a one-value enumeration, and values given
/// to a `(boolean flag)`. Returns every problem, flag by flag, then the missing flags.
pub fn check_schema<S: AsRef<str>>(schema: &FlagSchema, flags: &Flags<S>) -> Vec<FlagProblem> {
    let mut problems = Vec::new();
    for (name, value) in flags {
        let name = name.as_ref();
        let Some(spec) = schema.get(name) else {
            problems.push(FlagProblem::Unknown {
                flag: name.to_owned(),
                suggestions: closest_names(name, schema.flags.iter().map(|f| f.name.as_str())),
            });
            continue;
        };
        if spec.boolean {
            if let Some(first) = value.values().first() {
                problems.push(FlagProblem::NoValueExpected {
                    flag: name.to_owned(),
                    value: first.as_ref().to_owned(),
                });
            }
            continue;
        }
        if spec.one_of.is_empty() {
            continue;
        }
        if value.is_switch() {
            problems.push(FlagProblem::MissingValue {
                flag: name.to_owned(),
                allowed: spec.one_of.clone(),
            });
            continue;
        }
        let values: Vec<&str> = if spec.multiple {
            value
                .values()
                .iter()
                .flat_map(|v| v.as_ref().split(','))
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .collect()
        } else {
            value.values().iter().map(AsRef::as_ref).collect()
        };
        if !spec.multiple && values.len() > 1 {
            problems.push(FlagProblem::OneValueOnly {
                flag: name.to_owned(),
                count: values.len(),
            });
        }
        for v in values {
            if !spec.one_of.iter().any(|a| a == v) {
                problems.push(FlagProblem::NotOneOf {
                    flag: name.to_owned(),
                    value: v.to_owned(),
                    allowed: spec.one_of.clone(),
                });
            }
        }
    }
    for spec in schema.required() {
        if !flags.contains(&spec.name) {
            problems.push(FlagProblem::Missing {
                flag: spec.name.clone(),
            });
        }
    }
    problems
}

/// Pre-validate `flags` for the skill named `skill` with this `body`: `Ok` when the body
/// declares no `## Flags` schema or the flags fit it; otherwise [`Error::InvalidFlags`],
/// quoting the skill's own `## Usage` line.
pub fn prevalidate<S: AsRef<str>>(skill: &str, body: &str, flags: &Flags<S>) -> Result<(), Error> {
    let Some(schema) = flag_schema(body) else {
        return Ok(());
    };
    prevalidate_with(skill, Some(&schema), || usage_line(body), flags)
}

/// [`prevalidate`] with the body's schema already read, and its usage line read by `usage`
/// when an error needs it.
pub(crate) fn prevalidate_with<'u, S: AsRef<str>>(
    skill: &str,
    schema: Option<&FlagSchema>,
    usage: impl FnOnce() -> Option<&'u str>,
    flags: &Flags<S>,
) -> Result<(), Error> {
    let Some(schema) = schema else {
        return Ok(());
    };
    let problems = check_schema(schema, flags);
    if problems.is_empty() {
        return Ok(());
    }
    Err(Error::InvalidFlags {
        skill: skill.to_owned(),
        problems,
        usage: usage().map(str::to_owned),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::flags::parse_flags;
    use crate::tokenize::tokenize;

    fn flags(s: &str) -> Flags {
        parse_flags(tokenize(s).unwrap()).flags
    }

    const TASKS_SEARCH: &str = "# tasks.search\n\n## Usage\n\ntasks.search [--query <text>] [--status <statuses>] [--overdue] [--sort <field>] [--limit <n>]\n\n## Flags\n\n--query       Free text\n--status      Filter by status. One or more of: todo, in_progress, blocked, done, cancelled (default: todo, in_progress, blocked)\n--overdue     Only overdue (boolean flag)\n--sort        Sort. One of: due_date, priority (default: due_date)\n--limit       Maximum number of results (default: 20)\n--owner       Owner (required)\n";

    #[test]
    fn require_lists_every_missing_flag() {
        let f = flags("--to a");
        assert!(require(&f, &["to"]).is_ok());
        let e = require(&f, &["to", "subject", "body"]).unwrap_err();
        assert_eq!(e.to_string(), "missing required flags: --subject, --body");
        let e = require(&f, &["subject"]).unwrap_err();
        assert_eq!(e.to_string(), "missing required flag: --subject");
    }

    #[test]
    fn one_of_single_list_absent_and_switch() {
        let allowed = ["todo", "done"];
        assert!(one_of(&flags("--status todo"), "status", &allowed).is_ok());
        assert!(one_of(&flags("--x y"), "status", &allowed).is_ok());
        let e = one_of(&flags("--status todo nope later"), "status", &allowed).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--status does not accept `nope`, `later`: allowed values are todo, done"
        );
        assert!(one_of(&flags("--status"), "status", &allowed).is_err());
    }

    #[test]
    fn integers() {
        assert_eq!(integer(&flags("--limit 20"), "limit").unwrap(), Some(20));
        assert_eq!(integer(&flags("--limit -3"), "limit").unwrap(), Some(-3));
        assert_eq!(integer(&flags(""), "limit").unwrap(), None);
        for bad in [
            "--limit ten",
            "--limit",
            "--limit 1 2",
            "--limit 99999999999999999999",
            "--limit 1.5",
        ] {
            let e = integer(&flags(bad), "limit").unwrap_err();
            assert!(
                e.to_string().starts_with("--limit must be an integer"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn dates() {
        assert_eq!(
            date(&flags("--due 2024-02-29"), "due").unwrap(),
            Some(Date {
                year: 2024,
                month: 2,
                day: 29
            })
        );
        assert_eq!(
            date(&flags("--due 2000-02-29"), "due")
                .unwrap()
                .unwrap()
                .to_string(),
            "2000-02-29"
        );
        assert_eq!(date(&flags(""), "due").unwrap(), None);
        for bad in [
            "2023-02-29",
            "1900-02-29",
            "2026-13-01",
            "2026-04-31",
            "2026-1-01",
            "26-01-01x",
            "2026-01-00",
            "２０２６-01-01",
            "+026-01-01",
        ] {
            let e = date(&flags(&format!("--due {bad}")), "due").unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("--due must be a date (YYYY-MM-DD), got `{bad}`")
            );
        }
    }

    #[test]
    fn defaults_do_not_override() {
        let schema = flag_schema(TASKS_SEARCH).unwrap();
        let mut f = flags("--sort priority");
        apply_defaults(&mut f, &schema_defaults(&schema));
        assert_eq!(f.get("sort").unwrap().as_str(), Some("priority"));
        assert_eq!(f.get("limit").unwrap().as_str(), Some("20"));
        assert_eq!(
            f.get("status"),
            Some(&FlagValue::Many(vec![
                "todo".into(),
                "in_progress".into(),
                "blocked".into()
            ]))
        );
        assert!(!f.contains("query"));
    }

    #[test]
    fn schema_problems() {
        let schema = flag_schema(TASKS_SEARCH).unwrap();
        assert!(
            check_schema(
                &schema,
                &flags("--owner me --status todo,done blocked --overdue --sort priority")
            )
            .is_empty()
        );
        let p = check_schema(
            &schema,
            &flags("--stat todo --status overdue --overdue yes --sort due_date priority --sort2"),
        );
        let text: Vec<String> = p.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "--overdue is a boolean flag and takes no value (got `yes`)",
                "--sort takes one value, got 2",
                "unknown flag --sort2 (did you mean --sort?)",
                "unknown flag --stat (did you mean --status, --sort?)",
                "--status does not accept `overdue` (one of: todo, in_progress, blocked, done, cancelled)",
                "missing required flag --owner",
            ]
        );
        let p = check_schema(&schema, &flags("--owner x --sort"));
        assert_eq!(
            p[0].to_string(),
            "--sort needs a value (one of: due_date, priority)"
        );
    }

    #[test]
    fn prevalidate_quotes_the_usage_line() {
        assert!(prevalidate("tasks.search", TASKS_SEARCH, &flags("--owner me")).is_ok());
        assert!(prevalidate("x", "no flags section", &flags("--anything")).is_ok());
        let e = prevalidate("tasks.search", TASKS_SEARCH, &flags("--bogus")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid flags for tasks.search: unknown flag --bogus; missing required flag --owner. Usage: tasks.search [--query <text>] [--status <statuses>] [--overdue] [--sort <field>] [--limit <n>]"
        );
        let body = "## Flags\n--a  A (required)\n";
        let e = prevalidate("x.y", body, &flags("")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid flags for x.y: missing required flag --a. See: x.y --help"
        );
    }
}
