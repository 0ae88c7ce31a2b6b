//! Dialects, validation modes, and how a file's dialect is detected.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::yaml::Node;

/// One of the five skill dialects the engine reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dialect {
    /// The open Agent Skills standard (agentskills.io), plus profile affinity fields.
    AgentSkills,
    /// Markdown-first actions: one file per `domain.action`, domain `SKILL.md` indexes.
    Actions,
    /// Lily v0: `summary`, `invocation_mode`, `command`, eligibility.
    Lily,
    /// Pegasus: trigger control, `context: fork`, `$ARGUMENTS`.
    Pegasus,
    /// Toolsets and triggers: `version`, `toolsets`, `triggers`, `default_enabled`.
    Toolsets,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 5] = [
        Dialect::AgentSkills,
        Dialect::Actions,
        Dialect::Lily,
        Dialect::Pegasus,
        Dialect::Toolsets,
    ];

    /// The dialect's name as used in config and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::AgentSkills => "agentskills",
            Dialect::Actions => "actions",
            Dialect::Lily => "lily",
            Dialect::Pegasus => "pegasus",
            Dialect::Toolsets => "toolsets",
        }
    }

    /// The frontmatter keys this dialect defines.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Dialect::AgentSkills => &[
                "name",
                "description",
                "license",
                "compatibility",
                "metadata",
                "allowed-tools",
                "include_in_prompt_default",
                "proactive_for_profile_ids",
                "exclude_from_prompt_profile_ids",
            ],
            Dialect::Actions => &[
                "name",
                "description",
                "handler",
                "schedule",
                "author",
                "created",
                "tags",
                "domain",
            ],
            Dialect::Lily => &[
                "name",
                "description",
                "summary",
                "invocation_mode",
                "command",
                "command_tool",
                "requires_tools",
                "eligibility",
            ],
            Dialect::Pegasus => &[
                "name",
                "description",
                "disable-model-invocation",
                "user-invocable",
                "allowed-tools",
                "context",
                "agent",
                "model",
                "argument-hint",
            ],
            Dialect::Toolsets => &[
                "name",
                "description",
                "version",
                "toolsets",
                "scripts",
                "triggers",
                "default_enabled",
                "brief_description",
            ],
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| Error::UnknownDialect(s.to_owned()))
    }
}

/// How strictly a file is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Mode {
    /// The standard's client guide: load with warnings; exclude a skill only when it cannot be
    /// used (no description, unrecoverable YAML, or a dialect's hard rule such as lily's
    /// `tool_dispatch` without `command_tool`).
    #[default]
    Lenient,
    /// Every rule is an error, and keys outside the dialect are reported. For `agentskills`
    /// this is the standard plus the reference library, with its messages word for word.
    Strict,
}

/// Keys that only lily defines.
const LILY_MARKERS: &[&str] = &[
    "summary",
    "invocation_mode",
    "command_tool",
    "requires_tools",
    "eligibility",
];
/// Keys that only the toolsets dialect defines.
const TOOLSETS_MARKERS: &[&str] = &[
    "toolsets",
    "triggers",
    "default_enabled",
    "brief_description",
    "scripts",
];
/// Keys that only pegasus defines.
const PEGASUS_MARKERS: &[&str] = &[
    "disable-model-invocation",
    "user-invocable",
    "context",
    "agent",
    "model",
    "argument-hint",
];
/// Keys that only actions define.
const ACTIONS_MARKERS: &[&str] = &["domain", "handler", "schedule"];

/// Detect a file's dialect from its frontmatter keys (the file's layout is decided by the
/// caller: an action file in a domain folder is always `actions`).
///
/// Rules, first match wins: any actions-only key (`domain`, `handler`, `schedule`) → actions;
/// any lily-only key → lily; any toolsets-only key → toolsets; any pegasus-only key →
/// pegasus; otherwise agentskills. A file with no frontmatter at all (`root` is `None`) is
/// lily, the dialect whose document makes frontmatter optional (its name comes from the
/// folder); a source can force another dialect.
pub fn detect(root: Option<&Node>) -> Dialect {
    let Some(root) = root else {
        return Dialect::Lily;
    };
    let Node::Map(entries) = root else {
        return Dialect::AgentSkills;
    };
    let has = |markers: &[&str]| entries.iter().any(|(k, _)| markers.contains(&k.as_ref()));
    if has(ACTIONS_MARKERS) {
        Dialect::Actions
    } else if has(LILY_MARKERS) {
        Dialect::Lily
    } else if has(TOOLSETS_MARKERS) {
        Dialect::Toolsets
    } else if has(PEGASUS_MARKERS) {
        Dialect::Pegasus
    } else {
        Dialect::AgentSkills
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::yaml;

    fn detect_src(src: &str) -> Dialect {
        detect(Some(&yaml::parse(src).unwrap().root))
    }

    #[test]
    fn detection_rules() {
        assert_eq!(
            detect_src("domain: email\ndescription: d\n"),
            Dialect::Actions
        );
        assert_eq!(detect_src("summary: s\ncommand: plan\n"), Dialect::Lily);
        assert_eq!(
            detect_src("name: a\ntriggers: {keywords: [x]}\n"),
            Dialect::Toolsets
        );
        assert_eq!(detect_src("name: a\ncontext: fork\n"), Dialect::Pegasus);
        assert_eq!(
            detect_src("name: a\ndescription: d\n"),
            Dialect::AgentSkills
        );
        assert_eq!(detect_src("name: a\ncommand: x\n"), Dialect::AgentSkills);
        assert_eq!(detect(None), Dialect::Lily);
    }

    #[test]
    fn names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(d.as_str().parse::<Dialect>().unwrap(), d);
        }
        assert!("klingon".parse::<Dialect>().is_err());
    }
}
