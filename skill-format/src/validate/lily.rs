//! Lily rules: `summary` is the description, `tool_dispatch` needs a `command_tool`, the
//! slash `command` is `[a-z0-9_-]+`, and `eligibility.os` names known systems.

use crate::diagnostic::Code;
use crate::manifest::{Finding, InvocationMode};

use super::{Context, KNOWN_OS, Resolved, command_re, finding, matches};

/// The rules of the lily dialect; the description comes from `summary`.
pub(super) fn rules(c: &Context<'_>, out: &mut Vec<Finding>, resolved: &mut Resolved) {
    let Context { m, .. } = *c;
    if let Some(summary) = m.summary.as_deref().map(str::trim) {
        resolved.description = summary.to_owned();
    }
    if m.invocation_mode == Some(InvocationMode::ToolDispatch)
        && m.command_tool
            .as_deref()
            .is_none_or(|t| t.trim().is_empty())
    {
        out.push(finding(
            Code::MissingCommandTool,
            "invocation_mode",
            true,
            "`invocation_mode: tool_dispatch` needs `command_tool` naming the tool to call; the skill is excluded",
        ));
    }
    if let Some(c) = &m.command {
        if !matches(command_re(), c) {
            out.push(finding(
                Code::InvalidCommand,
                "command",
                true,
                format!("command `{c}` must match ^[a-z0-9_-]+$; the skill is excluded"),
            ));
        }
    }
    if let Some(e) = &m.eligibility {
        for os in &e.os {
            if !KNOWN_OS.contains(&os.as_str()) {
                out.push(finding(
                    Code::InvalidFieldValue,
                    "eligibility",
                    false,
                    format!("eligibility.os `{os}` is not one of darwin, linux, win32"),
                ));
            }
        }
    }
}
