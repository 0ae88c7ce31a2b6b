//! Eligibility: whether a valid skill may be used on this host, and profile affinity.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use skill_format::{Code, Manifest};

/// Built-in slash commands a skill's `command` may not take (lily: built-ins win).
pub const DEFAULT_BUILTIN_COMMANDS: &[&str] = &["help", "skills", "skill", "exit", "clear"];

/// A lookup the host can replace in tests (environment variables, binaries on `PATH`).
pub type Probe = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The host facts eligibility is judged against.
#[derive(Clone)]
pub struct Environment {
    /// This machine's operating system as lily spells it: `darwin`, `linux` or `win32`.
    pub os: String,
    /// Whether an environment variable is set (its value is never read).
    pub env_present: Probe,
    /// Whether a binary is on `PATH`.
    pub binary_present: Probe,
    /// Tools the current tool policy allows; `None` allows every tool.
    pub tool_policy: Option<BTreeSet<String>>,
    /// Tools the host registered (for lily `command_tool`); `None` means unknown, and the
    /// check is skipped (as `validate` does without `--tools`).
    pub registered_tools: Option<BTreeSet<String>>,
    /// Toolsets the host registered (for the toolsets dialect); `None` skips the check.
    pub registered_toolsets: Option<BTreeSet<String>>,
    /// Built-in commands (`/help`, ...).
    pub builtin_commands: BTreeSet<String>,
    /// Skills enabled by config (overrides `default_enabled: false`).
    pub enabled: BTreeSet<String>,
    /// Skills disabled by config.
    pub disabled: BTreeSet<String>,
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Environment")
            .field("os", &self.os)
            .field("tool_policy", &self.tool_policy)
            .field("registered_tools", &self.registered_tools)
            .field("registered_toolsets", &self.registered_toolsets)
            .field("builtin_commands", &self.builtin_commands)
            .field("enabled", &self.enabled)
            .field("disabled", &self.disabled)
            .finish_non_exhaustive()
    }
}

/// This machine's OS in lily's spelling.
pub fn current_os() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

fn on_path(binary: &str) -> bool {
    if binary.is_empty() || binary.contains(['/', '\\']) {
        return false;
    }
    let Some(paths) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&paths).any(|dir| is_executable(&dir.join(binary)))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file() || p.with_extension("exe").is_file()
}

impl Default for Environment {
    /// This machine: real OS, environment and `PATH`; every tool allowed; registered tools
    /// and toolsets unknown; the default built-in commands.
    fn default() -> Self {
        Environment {
            os: current_os().to_owned(),
            env_present: Arc::new(|name| std::env::var_os(name).is_some()),
            binary_present: Arc::new(on_path),
            tool_policy: None,
            registered_tools: None,
            registered_toolsets: None,
            builtin_commands: DEFAULT_BUILTIN_COMMANDS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            enabled: BTreeSet::new(),
            disabled: BTreeSet::new(),
        }
    }
}

/// Why a valid skill is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ineligible {
    /// The diagnostic code.
    pub code: Code,
    /// What failed and what to do.
    pub message: String,
}

/// Every eligibility rule a skill fails, in a fixed order.
pub(crate) fn check(name: &str, m: &Manifest, env: &Environment) -> Vec<Ineligible> {
    let mut out = Vec::new();
    let mut fail = |code, message: String| out.push(Ineligible { code, message });
    if env.disabled.contains(name) {
        fail(
            Code::Disabled,
            format!("`{name}` is disabled in the configuration"),
        );
    } else if m.default_enabled == Some(false) && !env.enabled.contains(name) {
        fail(
            Code::Disabled,
            format!(
                "`{name}` has `default_enabled: false`; enable it in the configuration to use it"
            ),
        );
    }
    if let Some(e) = &m.eligibility {
        if !e.os.is_empty() && !e.os.contains(&env.os) {
            fail(
                Code::IneligibleOs,
                format!(
                    "eligibility.os is [{}]; this machine is {}",
                    e.os.join(", "),
                    env.os
                ),
            );
        }
        for var in &e.env {
            if !(env.env_present)(var) {
                fail(
                    Code::IneligibleEnv,
                    format!("environment variable {var} (eligibility.env) is not set"),
                );
            }
        }
        for bin in &e.binaries {
            if !(env.binary_present)(bin) {
                fail(
                    Code::IneligibleBinary,
                    format!("binary `{bin}` (eligibility.binaries) is not on PATH"),
                );
            }
        }
    }
    if let Some(policy) = &env.tool_policy {
        let missing: Vec<&str> = m
            .requires_tools
            .iter()
            .filter(|t| !policy.contains(*t))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            fail(
                Code::MissingRequiredTool,
                format!(
                    "requires_tools needs {} which the tool policy does not allow",
                    missing.join(", ")
                ),
            );
        }
    }
    if let (Some(tool), Some(registered)) = (&m.command_tool, &env.registered_tools) {
        if !registered.contains(tool) {
            fail(
                Code::UnknownCommandTool,
                format!(
                    "command_tool `{tool}` is not a registered tool; register it or remove the skill"
                ),
            );
        }
    }
    if let Some(command) = &m.command {
        if env.builtin_commands.contains(command) {
            fail(
                Code::CommandCollision,
                format!(
                    "command `/{command}` is a built-in command; built-ins win, so the skill is excluded"
                ),
            );
        }
    }
    if let Some(registered) = &env.registered_toolsets {
        for t in &m.toolsets {
            let key = format!("{}:{}", t.path, t.export);
            if !registered.contains(&key) {
                fail(
                    Code::UnknownToolset,
                    format!(
                        "toolset `{key}` is not registered by the host; register it under that key"
                    ),
                );
            }
        }
    }
    out
}

/// How a skill relates to a profile (agent-skills-integration 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Affinity {
    /// The profile is in `exclude_from_prompt_profile_ids`: not available.
    Excluded,
    /// The profile is in `proactive_for_profile_ids`: auto-loaded (a preflight hint).
    Proactive,
    /// Listed in the catalog (`include_in_prompt_default`, true by default).
    Included,
    /// Available on request but not listed (`include_in_prompt_default: false`).
    NotListed,
}

impl Affinity {
    /// Its name: `excluded`, `proactive`, `included` or `not-listed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Affinity::Excluded => "excluded",
            Affinity::Proactive => "proactive",
            Affinity::Included => "included",
            Affinity::NotListed => "not-listed",
        }
    }
}

/// Resolve a skill's affinity for a profile: exclude beats proactive beats the default.
pub fn affinity(m: &Manifest, profile: Option<&str>) -> Affinity {
    if let Some(p) = profile {
        if m.exclude_from_prompt_profile_ids.iter().any(|x| x == p) {
            return Affinity::Excluded;
        }
        if m.proactive_for_profile_ids.iter().any(|x| x == p) {
            return Affinity::Proactive;
        }
    }
    if m.include_in_prompt_default == Some(false) {
        Affinity::NotListed
    } else {
        Affinity::Included
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use skill_format::Eligibility;

    fn env() -> Environment {
        Environment {
            os: "linux".into(),
            env_present: Arc::new(|n| n == "SET"),
            binary_present: Arc::new(|b| b == "git"),
            ..Environment::default()
        }
    }

    fn codes(m: &Manifest, env: &Environment) -> Vec<Code> {
        check("s", m, env).into_iter().map(|i| i.code).collect()
    }

    #[test]
    fn eligibility_rules() {
        let mut m = Manifest {
            eligibility: Some(Eligibility {
                os: vec!["darwin".into()],
                env: vec!["SET".into(), "UNSET".into()],
                binaries: vec!["git".into(), "nope".into()],
            }),
            ..Manifest::default()
        };
        assert_eq!(
            codes(&m, &env()),
            vec![
                Code::IneligibleOs,
                Code::IneligibleEnv,
                Code::IneligibleBinary
            ]
        );
        m.eligibility = Some(Eligibility {
            os: vec!["linux".into()],
            env: vec!["SET".into()],
            binaries: vec!["git".into()],
        });
        assert!(codes(&m, &env()).is_empty());
    }

    #[test]
    fn env_values_are_never_shown() {
        let m = Manifest {
            eligibility: Some(Eligibility {
                env: vec!["UNSET".into()],
                ..Default::default()
            }),
            ..Manifest::default()
        };
        let msg = &check("s", &m, &env())[0].message;
        assert_eq!(
            msg,
            "environment variable UNSET (eligibility.env) is not set"
        );
    }

    #[test]
    fn tools_commands_and_enablement() {
        let mut e = env();
        e.tool_policy = Some(["read".to_owned()].into());
        e.registered_tools = Some(BTreeSet::new());
        let m = Manifest {
            requires_tools: vec!["read".into(), "write".into()],
            command_tool: Some("compile".into()),
            command: Some("help".into()),
            default_enabled: Some(false),
            ..Manifest::default()
        };
        assert_eq!(
            codes(&m, &e),
            vec![
                Code::Disabled,
                Code::MissingRequiredTool,
                Code::UnknownCommandTool,
                Code::CommandCollision
            ]
        );
        e.enabled.insert("s".into());
        e.tool_policy = None;
        e.registered_tools = None;
        e.builtin_commands.clear();
        assert!(codes(&m, &e).is_empty());
        e.disabled.insert("s".into());
        assert_eq!(codes(&m, &e), vec![Code::Disabled]);
    }

    #[test]
    fn affinity_order() {
        let m = Manifest {
            include_in_prompt_default: Some(false),
            proactive_for_profile_ids: vec!["a".into(), "b".into()],
            exclude_from_prompt_profile_ids: vec!["b".into()],
            ..Manifest::default()
        };
        assert_eq!(affinity(&m, Some("b")), Affinity::Excluded);
        assert_eq!(affinity(&m, Some("a")), Affinity::Proactive);
        assert_eq!(affinity(&m, Some("c")), Affinity::NotListed);
        assert_eq!(affinity(&Manifest::default(), None), Affinity::Included);
    }
}
