//! Agent Skills rules. Strict mode runs the reference library's checks word for word
//! ([`super::reference`]); lenient mode checks the same limits and reports a missing name,
//! a long description or a non-standard `allowed-tools` list as warnings.

use crate::diagnostic::Code;
use crate::dialect::Mode;
use crate::manifest::{Finding, Manifest, ToolListStyle};

use super::reference::{reference_checks, reference_name_checks};
use super::{
    Context, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, Resolved, finding,
    missing_description_message,
};

/// The rules of the agentskills dialect.
pub(super) fn rules(c: &Context<'_>, out: &mut Vec<Finding>, _: &mut Resolved) {
    let Context {
        mode,
        root,
        m,
        dir_name,
        path_name,
        declared_name,
        declared_description,
        ..
    } = *c;
    if mode == Mode::Strict {
        if let Some(root) = root {
            out.extend(reference_checks(root, dir_name));
        }
    } else {
        lenient(m, dir_name, path_name, declared_name, out);
    }
    if declared_description.is_none() {
        let (code, msg) = missing_description_message(m.description.is_some());
        if mode == Mode::Lenient {
            out.push(finding(code, "description", true, msg));
        } else {
            // The reference message is already in `out`; make it exclude the skill.
            for f in out.iter_mut().filter(|f| f.key == "description") {
                f.hard = true;
            }
        }
    }
    if mode == Mode::Lenient {
        if let Some(style) = m.allowed_tools_style {
            if style != ToolListStyle::Spaces {
                out.push(finding(
                    Code::AllowedToolsFormat,
                    "allowed-tools",
                    false,
                    format!(
                        "`allowed-tools` is {}; the standard wants one space-separated string such as `Read Bash(git:*)`",
                        if style == ToolListStyle::List { "a YAML list" } else { "comma-separated" }
                    ),
                ));
            }
        }
    }
}

/// The lenient rules: the standard's limits, as warnings (a missing name is derived).
fn lenient(
    m: &Manifest,
    dir_name: Option<&str>,
    path_name: &str,
    declared_name: Option<&str>,
    out: &mut Vec<Finding>,
) {
    match declared_name {
        None => out.push(finding(
            Code::MissingName,
            "name",
            false,
            format!("no `name`: using the folder name `{path_name}`; add `name: {path_name}`"),
        )),
        Some(n) => out.extend(reference_name_checks(n, dir_name)),
    }
    if let Some(d) = &m.description {
        let len = d.chars().count();
        if len > MAX_DESCRIPTION_CHARS {
            out.push(finding(
                Code::DescriptionTooLong,
                "description",
                false,
                format!(
                    "Description exceeds {MAX_DESCRIPTION_CHARS} character limit ({len} chars)"
                ),
            ));
        }
    }
    if let Some(c) = &m.compatibility {
        let len = c.chars().count();
        if len == 0 || len > MAX_COMPATIBILITY_CHARS {
            out.push(finding(
                Code::InvalidCompatibility,
                "compatibility",
                false,
                format!(
                    "`compatibility` is {len} characters; it must be 1-{MAX_COMPATIBILITY_CHARS}"
                ),
            ));
        }
    }
}
