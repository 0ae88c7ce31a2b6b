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
    for entry in &m.scripts {
        if let Some(why) = script_entry_problem(entry) {
            out.push(finding(
                Code::InvalidFieldValue,
                "scripts",
                false,
                format!(
                    "script `{entry}` {why}; it would be refused when run: list a file under the skill's `scripts/` folder, such as `scripts/run.sh`"
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

/// Why a `scripts` entry can never run, if it cannot: the runtime executes only a relative
/// path under the skill's `scripts/` folder, without `..`.
fn script_entry_problem(entry: &str) -> Option<&'static str> {
    if entry.starts_with('/') || entry.starts_with('\\') {
        return Some("is an absolute path");
    }
    if entry.split(['/', '\\']).any(|c| c == "..") {
        return Some("climbs out with `..`");
    }
    let mut parts = entry.split('/').filter(|c| !c.is_empty() && *c != ".");
    if parts.next() != Some("scripts") || parts.next().is_none() {
        return Some("is not under the skill's `scripts/` folder");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::script_entry_problem;

    #[test]
    fn script_entries_outside_the_scripts_folder_are_named() {
        for ok in ["scripts/run.sh", "./scripts/a/b.py"] {
            assert_eq!(script_entry_problem(ok), None, "{ok}");
        }
        for bad in [
            "/bin/sh",
            "../../x",
            "scripts/../../x",
            "run.sh",
            "scripts/",
        ] {
            assert!(script_entry_problem(bad).is_some(), "{bad}");
        }
    }
}
