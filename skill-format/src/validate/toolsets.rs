//! Toolsets rules: a required kebab-case name, a description of at most
//! [`MAX_TOOLSETS_DESCRIPTION_CHARS`], a semantic `version`, and trigger patterns that compile
//! within [`MAX_PATTERN_SIZE`].

use crate::diagnostic::Code;
use crate::manifest::Finding;

use super::{
    Context, MAX_PATTERN_SIZE, MAX_TOOLSETS_DESCRIPTION_CHARS, Resolved, finding,
    kebab_name_checks, matches, missing_description_message, semver_re,
};

/// The rules of the toolsets dialect.
pub(super) fn rules(c: &Context<'_>, out: &mut Vec<Finding>, resolved: &mut Resolved) {
    let Context {
        dialect,
        m,
        path_name,
        declared_name,
        declared_description,
        ..
    } = *c;
    match declared_name {
        Some(n) => out.extend(kebab_name_checks(n, dialect)),
        None => out.push(finding(
            Code::MissingName,
            "name",
            false,
            format!(
                "no `name`: the toolsets dialect requires one; using the folder name `{path_name}`"
            ),
        )),
    }
    if declared_description.is_none() {
        let (code, msg) = missing_description_message(m.description.is_some());
        out.push(finding(code, "description", true, msg));
    } else {
        let len = resolved.description.chars().count();
        if len > MAX_TOOLSETS_DESCRIPTION_CHARS {
            out.push(finding(
                Code::DescriptionTooLong,
                "description",
                false,
                format!(
                    "description is {len} characters; toolsets descriptions have at most {MAX_TOOLSETS_DESCRIPTION_CHARS}"
                ),
            ));
        }
    }
    if let Some(v) = &m.version {
        if !matches(semver_re(), v) {
            out.push(finding(
                Code::InvalidVersion,
                "version",
                false,
                format!(
                    "version `{v}` is not semantic versioning (MAJOR.MINOR.PATCH, e.g. `1.0.0`)"
                ),
            ));
        }
    }
    for p in &m.triggers.patterns {
        if let Err(e) = regex::RegexBuilder::new(p)
            .size_limit(MAX_PATTERN_SIZE)
            .build()
        {
            let first = e.to_string().lines().last().unwrap_or("").trim().to_owned();
            out.push(finding(
                Code::InvalidTriggerPattern,
                "triggers",
                false,
                format!("trigger pattern `{p}` does not compile ({first}); it is ignored"),
            ));
        }
    }
}
