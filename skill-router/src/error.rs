//! The crate's one error type. Every variant reads as a message a person (or the model) can
//! act on: what was wrong and, where it helps, what exists instead.

/// One problem found when a command's flags are checked against the skill's `## Flags`
/// schema (Approach B pre-validation; see [`crate::RouterConfig::prevalidate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FlagProblem {
    /// The flag is not declared in `## Flags`.
    Unknown {
        /// The flag's name, without `--`.
        flag: String,
        /// The closest declared flag names, best first.
        suggestions: Vec<String>,
    },
    /// A flag marked `(required)` is missing.
    Missing {
        /// The flag's name, without `--`.
        flag: String,
    },
    /// A value is not in the flag's `One of:` list.
    NotOneOf {
        /// The flag's name, without `--`.
        flag: String,
        /// The value given.
        value: String,
        /// The values allowed.
        allowed: Vec<String>,
    },
    /// An enumerated flag was given without a value.
    MissingValue {
        /// The flag's name, without `--`.
        flag: String,
        /// The values allowed.
        allowed: Vec<String>,
    },
    /// A flag declared `One of:` (not `One or more of:`) was given several values.
    OneValueOnly {
        /// The flag's name, without `--`.
        flag: String,
        /// How many values were given.
        count: usize,
    },
    /// A `(boolean flag)` was given a value.
    NoValueExpected {
        /// The flag's name, without `--`.
        flag: String,
        /// The first value given.
        value: String,
    },
}

impl std::fmt::Display for FlagProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlagProblem::Unknown { flag, suggestions } => {
                write!(f, "unknown flag --{flag}")?;
                if !suggestions.is_empty() {
                    let s: Vec<String> = suggestions.iter().map(|s| format!("--{s}")).collect();
                    write!(f, " (did you mean {}?)", s.join(", "))?;
                }
                Ok(())
            }
            FlagProblem::Missing { flag } => write!(f, "missing required flag --{flag}"),
            FlagProblem::NotOneOf {
                flag,
                value,
                allowed,
            } => write!(
                f,
                "--{flag} does not accept `{value}` (one of: {})",
                allowed.join(", ")
            ),
            FlagProblem::MissingValue { flag, allowed } => {
                write!(f, "--{flag} needs a value (one of: {})", allowed.join(", "))
            }
            FlagProblem::OneValueOnly { flag, count } => {
                write!(f, "--{flag} takes one value, got {count}")
            }
            FlagProblem::NoValueExpected { flag, value } => {
                write!(
                    f,
                    "--{flag} is a boolean flag and takes no value (got `{value}`)"
                )
            }
        }
    }
}

/// An error from `skill-router`: a command that cannot be routed, or a flag check that
/// failed. Routing errors are values in [`crate::Route::Error`], shown to whoever wrote the
/// command; nothing here is ever acted on (suggestions included).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The command is empty or only whitespace.
    #[error("empty command: write a skill name, `get_skill`, or `<name> --help`")]
    Empty,
    /// The input is not valid UTF-8.
    #[error("the input is not valid UTF-8 (first bad byte at offset {offset})")]
    InvalidUtf8 {
        /// 0-based byte offset of the first invalid byte.
        offset: usize,
    },
    /// The command holds a NUL character.
    #[error("the command holds a NUL character at column {column}")]
    Nul {
        /// 1-based column (in characters).
        column: u32,
    },
    /// The command is longer than [`crate::MAX_COMMAND_BYTES`].
    #[error("the command is {len} bytes long; commands are limited to {limit} bytes")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// The command has more than [`crate::MAX_TOKENS`] words.
    #[error("the command has more than {limit} words (flags, values and arguments)")]
    TooManyTokens {
        /// The limit.
        limit: usize,
    },
    /// A quote opened and never closed.
    #[error("unterminated {} quote opened at column {column}: close it with {quote}", quote_name(*quote))]
    UnterminatedQuote {
        /// The quote character, `'` or `"`.
        quote: char,
        /// 1-based column (in characters) of the opening quote.
        column: u32,
    },
    /// The model wrote a slash command; those are for users.
    #[error(
        "`/{command}` is a user slash command; the model invokes skills by name (`<name> --flag value`) or asks `get_skill`"
    )]
    SlashFromModel {
        /// The command word after the slash.
        command: String,
    },
    /// An unquoted `|`: piping one command into another is not supported (markdown-first
    /// 15.1 defers it); each command goes on its own line.
    #[error(
        "pipes are not supported (column {column}): write each command on its own line, or quote the `|` if it is a value"
    )]
    Pipe {
        /// 1-based column of the `|`.
        column: u32,
    },
    /// `/skill` without a skill name.
    #[error("/skill needs a skill name: /skill <name> [args] (see /skills)")]
    MissingSkillName,
    /// `/<command>` that several loaded skills declare as their lily `command`: dispatch
    /// must be deterministic (lily 5.2), so it invokes none of them.
    #[error(
        "/{command} is the command of several skills ({}), so none of them is run: use /skill <name> to pick one",
        skills.join(", ")
    )]
    AmbiguousCommand {
        /// The command word, without the slash.
        command: String,
        /// The skills declaring it, by name.
        skills: Vec<String>,
    },
    /// `get_skill` with more than one argument.
    #[error(
        "get_skill takes one dot path (`get_skill: email`, `get_skill: email.send`, `get_skill: email.all`), got: {given}"
    )]
    GetSkillArguments {
        /// The arguments as given, joined by spaces.
        given: String,
    },
    /// A lookup the registry refused: unknown skill or domain, or a skill this caller may
    /// not use (trigger control, profile, invalid or ineligible). The texts are the
    /// registry's (the seeds'), with the closest existing names.
    #[error(transparent)]
    Lookup(skill_registry::Error),
    /// The flags do not match the skill's `## Flags` schema (pre-validation).
    #[error("invalid flags for {skill}: {}. {}", join_problems(problems), usage_hint(skill, usage.as_deref()))]
    InvalidFlags {
        /// The skill.
        skill: String,
        /// Every problem, in flag order (unknown and value problems, then missing flags).
        problems: Vec<FlagProblem>,
        /// The skill's own usage line, when it has one.
        usage: Option<String>,
    },
    /// The single-skill rule (lily 5.1): one request may use at most one skill.
    #[error(
        "one request may use one skill: `{first}` is already in use, so `{second}` is not run (lily single-skill rule)"
    )]
    SingleSkill {
        /// The skill the request used first.
        first: String,
        /// The other skill, not run.
        second: String,
    },
    /// Validation helper: required flags are missing.
    #[error("missing required flag{}: {}", if flags.len() == 1 { "" } else { "s" }, dashed(flags))]
    MissingFlags {
        /// The missing flags, without `--`, in the order asked for.
        flags: Vec<String>,
    },
    /// Validation helper: values outside the allowed set.
    #[error("--{flag} does not accept {}: allowed values are {}", quoted(values), allowed.join(", "))]
    InvalidValues {
        /// The flag, without `--`.
        flag: String,
        /// The values not allowed.
        values: Vec<String>,
        /// The allowed values.
        allowed: Vec<String>,
    },
    /// Validation helper: a value of the wrong type.
    #[error("--{flag} must be {expected}, got `{value}`")]
    InvalidType {
        /// The flag, without `--`.
        flag: String,
        /// The value given (several values joined by spaces).
        value: String,
        /// What was expected, e.g. `an integer` or `a date (YYYY-MM-DD)`.
        expected: &'static str,
    },
}

fn quote_name(q: char) -> &'static str {
    if q == '\'' { "single" } else { "double" }
}

fn dashed(flags: &[String]) -> String {
    flags
        .iter()
        .map(|f| format!("--{f}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn quoted(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn join_problems(problems: &[FlagProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn usage_hint(skill: &str, usage: Option<&str>) -> String {
    match usage {
        Some(u) => format!("Usage: {u}"),
        None => format!("See: {skill} --help"),
    }
}

impl Error {
    /// A stable kebab-case code for the error, for hosts and JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Empty => "empty",
            Error::InvalidUtf8 { .. } => "invalid-utf8",
            Error::Nul { .. } => "nul",
            Error::TooLong { .. } => "too-long",
            Error::TooManyTokens { .. } => "too-many-tokens",
            Error::UnterminatedQuote { .. } => "unterminated-quote",
            Error::SlashFromModel { .. } => "slash-from-model",
            Error::Pipe { .. } => "pipe",
            Error::MissingSkillName => "missing-skill-name",
            Error::AmbiguousCommand { .. } => "ambiguous-command",
            Error::GetSkillArguments { .. } => "get-skill-arguments",
            Error::Lookup(e) => match e {
                skill_registry::Error::UnknownSkill { .. }
                | skill_registry::Error::SkillNotFound { .. } => "unknown-skill",
                skill_registry::Error::UnknownDomain { .. } => "unknown-domain",
                skill_registry::Error::EmptyDomain { .. } => "empty-domain",
                skill_registry::Error::UnknownSection { .. } => "unknown-section",
                skill_registry::Error::Excluded { .. }
                | skill_registry::Error::NotAvailable {
                    reason: skill_registry::Unavailable::Excluded,
                    ..
                } => "skill-excluded",
                skill_registry::Error::LockMismatch { .. } => "lock-mismatch",
                skill_registry::Error::NotAvailable { reason, .. } => match reason {
                    skill_registry::Unavailable::ModelInvocationDisabled => {
                        "model-invocation-disabled"
                    }
                    skill_registry::Unavailable::NotUserInvocable => "not-user-invocable",
                    skill_registry::Unavailable::Profile => "not-for-profile",
                    skill_registry::Unavailable::Invalid => "skill-invalid",
                    skill_registry::Unavailable::Ineligible => "skill-ineligible",
                    _ => "not-available",
                },
                _ => "lookup",
            },
            Error::InvalidFlags { .. } => "invalid-flags",
            Error::SingleSkill { .. } => "single-skill",
            Error::MissingFlags { .. } => "missing-flags",
            Error::InvalidValues { .. } => "invalid-values",
            Error::InvalidType { .. } => "invalid-type",
        }
    }

    /// The closest existing names the error lists (empty when it lists none or
    /// suggestions are turned off). They are shown, never acted on.
    pub fn suggestions(&self) -> &[String] {
        match self {
            Error::Lookup(
                skill_registry::Error::UnknownSkill { suggestions, .. }
                | skill_registry::Error::SkillNotFound { suggestions, .. }
                | skill_registry::Error::UnknownDomain { suggestions, .. }
                | skill_registry::Error::EmptyDomain { suggestions, .. },
            ) => suggestions,
            _ => &[],
        }
    }

    /// The 1-based column the error points at, when it has one.
    pub fn column(&self) -> Option<u32> {
        match self {
            Error::Nul { column }
            | Error::Pipe { column }
            | Error::UnterminatedQuote { column, .. } => Some(*column),
            _ => None,
        }
    }

    /// The same error with its suggestions removed (for hosts that follow lily 5.3, "no
    /// did-you-mean").
    pub(crate) fn without_suggestions(self) -> Self {
        match self {
            Error::Lookup(skill_registry::Error::UnknownSkill { name, .. }) => {
                Error::Lookup(skill_registry::Error::UnknownSkill {
                    name,
                    suggestions: Vec::new(),
                })
            }
            Error::Lookup(skill_registry::Error::UnknownDomain { domain, .. }) => {
                Error::Lookup(skill_registry::Error::UnknownDomain {
                    domain,
                    suggestions: Vec::new(),
                })
            }
            Error::Lookup(skill_registry::Error::EmptyDomain { domain, .. }) => {
                Error::Lookup(skill_registry::Error::EmptyDomain {
                    domain,
                    suggestions: Vec::new(),
                })
            }
            Error::InvalidFlags {
                skill,
                problems,
                usage,
            } => Error::InvalidFlags {
                skill,
                problems: problems
                    .into_iter()
                    .map(|p| match p {
                        FlagProblem::Unknown { flag, .. } => FlagProblem::Unknown {
                            flag,
                            suggestions: Vec::new(),
                        },
                        other => other,
                    })
                    .collect(),
                usage,
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_skill_not_found_reads_as_an_unknown_skill_with_its_suggestions() {
        let e = Error::Lookup(skill_registry::Error::SkillNotFound {
            name: "pdf-form".into(),
            available: vec!["pdf-forms".into()],
            more: 0,
            suggestions: vec!["pdf-forms".into()],
        });
        assert_eq!(e.code(), "unknown-skill");
        assert_eq!(e.suggestions(), ["pdf-forms"]);
    }
}
