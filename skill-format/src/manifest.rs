//! The typed manifest: the union of every dialect's frontmatter fields.
//!
//! Strings keep their source text (see [`crate::yaml`]); unknown keys are kept in
//! [`Manifest::extra`]. Values of the wrong type do not stop the rest of the manifest from
//! loading: each becomes a finding that [`crate::parse_skill`] turns into a diagnostic.

use std::collections::BTreeMap;

use crate::diagnostic::Code;
use crate::yaml::{Node, ScalarKind};

/// Lily `invocation_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InvocationMode {
    /// The skill's instructions are injected into the model's context (the default).
    #[default]
    PromptRewrite,
    /// The host calls `command_tool` directly; the model does not reinterpret the skill.
    ToolDispatch,
}

impl InvocationMode {
    /// The frontmatter spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            InvocationMode::PromptRewrite => "prompt_rewrite",
            InvocationMode::ToolDispatch => "tool_dispatch",
        }
    }
}

/// Pegasus `context`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextMode {
    /// Run in the current conversation (the default).
    #[default]
    Inline,
    /// Run as an isolated background task.
    Fork,
}

impl ContextMode {
    /// The frontmatter spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ContextMode::Inline => "inline",
            ContextMode::Fork => "fork",
        }
    }
}

/// How `allowed-tools` was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolListStyle {
    /// Space-separated string (the standard).
    Spaces,
    /// Comma-separated string.
    Commas,
    /// A YAML list.
    List,
}

/// Lily `eligibility`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Eligibility {
    /// Allowed operating systems (`darwin`, `linux`, `win32`); empty means any.
    pub os: Vec<String>,
    /// Environment variables that must be set.
    pub env: Vec<String>,
    /// Binaries that must be on `PATH`.
    pub binaries: Vec<String>,
}

/// Toolsets `triggers`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Triggers {
    /// Words matched on word boundaries, case-insensitively.
    pub keywords: Vec<String>,
    /// Action verbs matched like keywords.
    pub verbs: Vec<String>,
    /// Regular expressions.
    pub patterns: Vec<String>,
}

impl Triggers {
    /// Whether no trigger is declared.
    pub fn is_empty(&self) -> bool {
        self.keywords.is_empty() && self.verbs.is_empty() && self.patterns.is_empty()
    }
}

/// A toolsets `path:Export` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsetRef {
    /// The module path relative to the skill folder (`toolsets/index`).
    pub path: String,
    /// The export name (`HelloToolset`).
    pub export: String,
}

/// Every dialect's frontmatter fields, typed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Manifest {
    /// `name`.
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// Lily's `summary`.
    pub summary: Option<String>,
    /// `license` (free text).
    pub license: Option<String>,
    /// `compatibility`.
    pub compatibility: Option<String>,
    /// `metadata`, values stringified from their source text.
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools`, split into tool patterns.
    pub allowed_tools: Option<Vec<String>>,
    /// How `allowed-tools` was written.
    pub allowed_tools_style: Option<ToolListStyle>,
    /// Actions `handler`.
    pub handler: Option<String>,
    /// Actions `schedule` (a cron expression).
    pub schedule: Option<String>,
    /// Actions `author`.
    pub author: Option<String>,
    /// Actions `created`.
    pub created: Option<String>,
    /// Actions `tags`.
    pub tags: Vec<String>,
    /// Actions `domain` (marks a domain index).
    pub domain: Option<String>,
    /// Lily `invocation_mode`.
    pub invocation_mode: Option<InvocationMode>,
    /// Lily `command`.
    pub command: Option<String>,
    /// Lily `command_tool`.
    pub command_tool: Option<String>,
    /// Lily `requires_tools`.
    pub requires_tools: Vec<String>,
    /// Lily `eligibility`.
    pub eligibility: Option<Eligibility>,
    /// Pegasus `disable-model-invocation`.
    pub disable_model_invocation: Option<bool>,
    /// Pegasus `user-invocable`.
    pub user_invocable: Option<bool>,
    /// Pegasus `context`.
    pub context: Option<ContextMode>,
    /// Pegasus `agent`.
    pub agent: Option<String>,
    /// Pegasus `model`.
    pub model: Option<String>,
    /// Pegasus `argument-hint`.
    pub argument_hint: Option<String>,
    /// Toolsets `version`.
    pub version: Option<String>,
    /// Toolsets `toolsets`.
    pub toolsets: Vec<ToolsetRef>,
    /// Toolsets `scripts`.
    pub scripts: Vec<String>,
    /// Toolsets `triggers`.
    pub triggers: Triggers,
    /// Toolsets `default_enabled`.
    pub default_enabled: Option<bool>,
    /// Toolsets `brief_description`.
    pub brief_description: Option<String>,
    /// Profile affinity: `include_in_prompt_default`.
    pub include_in_prompt_default: Option<bool>,
    /// Profile affinity: `proactive_for_profile_ids`.
    pub proactive_for_profile_ids: Vec<String>,
    /// Profile affinity: `exclude_from_prompt_profile_ids`.
    pub exclude_from_prompt_profile_ids: Vec<String>,
    /// `when_to_use` (agentskills-sdk, accepted by every dialect in lenient mode): cases
    /// the skill is for, at most [`MAX_WHEN_ENTRIES`] of at most [`MAX_WHEN_ENTRY_CHARS`]
    /// characters (entries past either limit are dropped with a warning).
    pub when_to_use: Vec<String>,
    /// `when_not_to_use`: cases the skill is not for, with the same limits.
    pub when_not_to_use: Vec<String>,
    /// Keys no dialect defines, with their values.
    pub extra: BTreeMap<String, Node<'static>>,
}

/// Most entries `when_to_use` or `when_not_to_use` keeps (agentskills-sdk's limit).
pub const MAX_WHEN_ENTRIES: usize = 5;
/// Longest `when_to_use` / `when_not_to_use` entry kept, in characters.
pub const MAX_WHEN_ENTRY_CHARS: usize = 200;

/// Every key some dialect defines.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "summary",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
    "handler",
    "schedule",
    "author",
    "created",
    "tags",
    "domain",
    "invocation_mode",
    "command",
    "command_tool",
    "requires_tools",
    "eligibility",
    "disable-model-invocation",
    "user-invocable",
    "context",
    "agent",
    "model",
    "argument-hint",
    "version",
    "toolsets",
    "scripts",
    "triggers",
    "default_enabled",
    "brief_description",
    "include_in_prompt_default",
    "proactive_for_profile_ids",
    "exclude_from_prompt_profile_ids",
    "when_to_use",
    "when_not_to_use",
];

/// A problem found while typing the manifest, before it gets a position and severity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub code: Code,
    pub key: String,
    pub message: String,
    /// Hard findings exclude the skill whatever the mode.
    pub hard: bool,
}

struct Typer {
    findings: Vec<Finding>,
}

impl Typer {
    fn push(&mut self, code: Code, key: &str, hard: bool, message: String) {
        self.findings.push(Finding {
            code,
            key: key.to_owned(),
            message,
            hard,
        });
    }

    fn wrong_type(&mut self, key: &str, expected: &str, node: &Node, hard: bool) {
        self.push(
            Code::InvalidFieldType,
            key,
            hard,
            format!("`{key}` must be {expected}, found {}", node.type_name()),
        );
    }

    /// `when_to_use` / `when_not_to_use`: a string or a list of strings, trimmed, empty
    /// entries skipped, at most [`MAX_WHEN_ENTRIES`] entries of at most
    /// [`MAX_WHEN_ENTRY_CHARS`] characters; what is over a limit is dropped with a warning.
    fn when_list(&mut self, key: &str, node: &Node) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (i, entry) in self.list(key, node).into_iter().enumerate() {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            if out.len() == MAX_WHEN_ENTRIES {
                self.push(
                    Code::InvalidFieldValue,
                    key,
                    false,
                    format!(
                        "`{key}` has more than {MAX_WHEN_ENTRIES} entries; entries from the {} on are ignored",
                        i + 1
                    ),
                );
                break;
            }
            let chars = entry.chars().count();
            if chars > MAX_WHEN_ENTRY_CHARS {
                self.push(
                    Code::InvalidFieldValue,
                    key,
                    false,
                    format!(
                        "entry {} of `{key}` is {chars} characters, over {MAX_WHEN_ENTRY_CHARS}; it is ignored (split it or shorten it)",
                        i + 1
                    ),
                );
                continue;
            }
            out.push(entry.to_owned());
        }
        out
    }

    /// A string field: any scalar but null, as its source text.
    fn string(&mut self, key: &str, node: &Node) -> Option<String> {
        match node {
            Node::Scalar {
                kind: ScalarKind::Null,
                ..
            } => None,
            Node::Scalar { text, .. } => Some(text.clone().into_owned()),
            other => {
                self.wrong_type(key, "a string", other, false);
                None
            }
        }
    }

    /// A boolean field: YAML booleans only (`true`/`false`), never `yes` or `"true"`.
    fn boolean(&mut self, key: &str, node: &Node) -> Option<bool> {
        match node {
            Node::Scalar {
                kind: ScalarKind::Bool(b),
                ..
            } => Some(*b),
            Node::Scalar {
                kind: ScalarKind::Null,
                ..
            } => None,
            other => {
                let shown = other
                    .as_scalar()
                    .map(|t| format!(" `{t}`"))
                    .unwrap_or_default();
                self.push(
                    Code::InvalidFieldType,
                    key,
                    true,
                    format!(
                        "`{key}` must be a YAML boolean (`true` or `false`), found {}{shown}",
                        other.type_name()
                    ),
                );
                None
            }
        }
    }

    /// A list of strings; a single scalar counts as a one-item list.
    fn list(&mut self, key: &str, node: &Node) -> Vec<String> {
        match node {
            Node::Scalar {
                kind: ScalarKind::Null,
                ..
            } => Vec::new(),
            Node::Scalar { text, .. } => vec![text.clone().into_owned()],
            Node::Seq(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Node::Scalar {
                            kind: ScalarKind::Null,
                            ..
                        } => {}
                        Node::Scalar { text, .. } => out.push(text.clone().into_owned()),
                        other => self.wrong_type(key, "a list of strings", other, false),
                    }
                }
                out
            }
            other => {
                self.wrong_type(key, "a list of strings", other, false);
                Vec::new()
            }
        }
    }
}

/// Split an `allowed-tools` string on spaces or commas outside parentheses, so that
/// `Bash(git add:*) Read` stays two patterns.
pub fn split_tool_list(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if depth == 0 && (c.is_whitespace() || c == ',') => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn has_comma_outside_parens(s: &str) -> bool {
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Type the frontmatter tree. `root` must be a mapping (the caller reports otherwise).
pub(crate) fn from_node(root: &Node) -> (Manifest, Vec<Finding>) {
    let mut m = Manifest::default();
    let mut t = Typer {
        findings: Vec::new(),
    };
    let Node::Map(entries) = root else {
        return (m, t.findings);
    };
    for (key, node) in entries {
        let k = key.as_ref();
        match k {
            "name" => m.name = t.string(k, node),
            "description" => m.description = t.string(k, node),
            "summary" => m.summary = t.string(k, node),
            "license" => m.license = t.string(k, node),
            "compatibility" => m.compatibility = t.string(k, node),
            "metadata" => m.metadata = metadata(&mut t, node),
            "allowed-tools" => match node {
                Node::Scalar {
                    kind: ScalarKind::Null,
                    ..
                } => {}
                Node::Scalar { text, .. } => {
                    m.allowed_tools_style = Some(if has_comma_outside_parens(text) {
                        ToolListStyle::Commas
                    } else {
                        ToolListStyle::Spaces
                    });
                    m.allowed_tools = Some(split_tool_list(text));
                }
                Node::Seq(_) => {
                    m.allowed_tools_style = Some(ToolListStyle::List);
                    m.allowed_tools = Some(t.list(k, node));
                }
                other => t.wrong_type(k, "a string or a list", other, false),
            },
            "handler" => m.handler = t.string(k, node),
            "schedule" => m.schedule = t.string(k, node),
            "author" => m.author = t.string(k, node),
            "created" => m.created = t.string(k, node),
            "tags" => {
                m.tags = t
                    .list(k, node)
                    .iter()
                    .flat_map(|s| s.split(','))
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect();
            }
            "domain" => m.domain = t.string(k, node),
            "invocation_mode" => {
                m.invocation_mode = t.string(k, node).and_then(|s| match s.as_str() {
                    "prompt_rewrite" => Some(InvocationMode::PromptRewrite),
                    "tool_dispatch" => Some(InvocationMode::ToolDispatch),
                    other => {
                        t.push(
                            Code::InvalidFieldValue,
                            k,
                            true,
                            format!(
                                "`invocation_mode` must be `prompt_rewrite` or `tool_dispatch`, found `{other}`"
                            ),
                        );
                        None
                    }
                });
            }
            "command" => m.command = t.string(k, node),
            "command_tool" => m.command_tool = t.string(k, node),
            "requires_tools" => m.requires_tools = t.list(k, node),
            "eligibility" => m.eligibility = eligibility(&mut t, node),
            "disable-model-invocation" => m.disable_model_invocation = t.boolean(k, node),
            "user-invocable" => m.user_invocable = t.boolean(k, node),
            "context" => {
                m.context = t.string(k, node).and_then(|s| match s.as_str() {
                    "inline" => Some(ContextMode::Inline),
                    "fork" => Some(ContextMode::Fork),
                    other => {
                        t.push(
                            Code::InvalidFieldValue,
                            k,
                            true,
                            format!("`context` must be `inline` or `fork`, found `{other}`"),
                        );
                        None
                    }
                });
            }
            "agent" => m.agent = t.string(k, node),
            "model" => m.model = t.string(k, node),
            "argument-hint" => {
                // Some packs write the hint as a YAML list (`[topic: foo]`); keep it as text.
                m.argument_hint = match node {
                    Node::Seq(_) | Node::Map(_) => Some(flatten_text(node)),
                    _ => t.string(k, node),
                };
            }
            "version" => m.version = t.string(k, node),
            "toolsets" => {
                for entry in t.list(k, node) {
                    match entry.rsplit_once(':') {
                        Some((path, export))
                            if !path.trim().is_empty() && is_identifier(export.trim()) =>
                        {
                            m.toolsets.push(ToolsetRef {
                                path: path.trim().to_owned(),
                                export: export.trim().to_owned(),
                            });
                        }
                        _ => t.push(
                            Code::InvalidToolset,
                            k,
                            false,
                            format!(
                                "toolsets entry `{entry}` is not `path:Export` (e.g. `toolsets/index:HelloToolset`)"
                            ),
                        ),
                    }
                }
            }
            "scripts" => m.scripts = t.list(k, node),
            "triggers" => m.triggers = triggers(&mut t, node),
            "default_enabled" => m.default_enabled = t.boolean(k, node),
            "brief_description" => m.brief_description = t.string(k, node),
            "when_to_use" => m.when_to_use = t.when_list(k, node),
            "when_not_to_use" => m.when_not_to_use = t.when_list(k, node),
            "include_in_prompt_default" => m.include_in_prompt_default = t.boolean(k, node),
            "proactive_for_profile_ids" => m.proactive_for_profile_ids = t.list(k, node),
            "exclude_from_prompt_profile_ids" => {
                m.exclude_from_prompt_profile_ids = t.list(k, node);
            }
            _ => {
                m.extra
                    .insert(key.clone().into_owned(), node.clone().into_owned());
            }
        }
    }
    (m, t.findings)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// A compact text rendering of a non-scalar node (`[a, b]`, `{k: v}`).
fn flatten_text(node: &Node) -> String {
    match node {
        Node::Scalar { text, .. } => text.clone().into_owned(),
        Node::Seq(items) => format!(
            "[{}]",
            items
                .iter()
                .map(flatten_text)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Node::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{k}: {}", flatten_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn metadata(t: &mut Typer, node: &Node) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    match node {
        Node::Scalar {
            kind: ScalarKind::Null,
            ..
        } => {}
        Node::Map(entries) => {
            for (key, value) in entries {
                match value {
                    Node::Scalar { text, .. } => {
                        out.insert(key.clone().into_owned(), text.clone().into_owned());
                    }
                    other => t.push(
                        Code::InvalidMetadata,
                        "metadata",
                        false,
                        format!(
                            "`metadata.{key}` must be a string, found {}; metadata maps strings to strings",
                            other.type_name()
                        ),
                    ),
                }
            }
        }
        other => t.push(
            Code::InvalidMetadata,
            "metadata",
            false,
            format!(
                "`metadata` must be a mapping of strings to strings, found {}",
                other.type_name()
            ),
        ),
    }
    out
}

fn eligibility(t: &mut Typer, node: &Node) -> Option<Eligibility> {
    match node {
        Node::Scalar {
            kind: ScalarKind::Null,
            ..
        } => None,
        Node::Map(entries) => {
            let mut e = Eligibility::default();
            for (key, value) in entries {
                let field = format!("eligibility.{key}");
                match key.as_ref() {
                    "os" => e.os = t.list(&field, value),
                    "env" => e.env = t.list(&field, value),
                    "binaries" => e.binaries = t.list(&field, value),
                    _ => t.push(
                        Code::UnknownField,
                        "eligibility",
                        false,
                        format!("`eligibility.{key}` is not one of `os`, `env`, `binaries`"),
                    ),
                }
            }
            Some(e)
        }
        other => {
            t.wrong_type(
                "eligibility",
                "a mapping with `os`, `env`, `binaries`",
                other,
                true,
            );
            None
        }
    }
}

fn triggers(t: &mut Typer, node: &Node) -> Triggers {
    let mut out = Triggers::default();
    match node {
        Node::Scalar {
            kind: ScalarKind::Null,
            ..
        } => {}
        Node::Map(entries) => {
            for (key, value) in entries {
                let field = format!("triggers.{key}");
                match key.as_ref() {
                    "keywords" => out.keywords = t.list(&field, value),
                    "verbs" => out.verbs = t.list(&field, value),
                    "patterns" => out.patterns = t.list(&field, value),
                    _ => t.push(
                        Code::UnknownField,
                        "triggers",
                        false,
                        format!("`triggers.{key}` is not one of `keywords`, `verbs`, `patterns`"),
                    ),
                }
            }
        }
        other => t.wrong_type(
            "triggers",
            "a mapping with `keywords`, `verbs`, `patterns`",
            other,
            false,
        ),
    }
    out
}

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod tests;
