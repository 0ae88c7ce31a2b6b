//! Actions rules: the name comes from the path (`<domain>/<action>.md` is `domain.action`),
//! must be two lowercase segments and not a reserved action; a domain index
//! (`<domain>/SKILL.md` with `domain:`) names its folder.

use crate::diagnostic::Code;
use crate::manifest::Finding;

use super::{
    Context, Origin, RESERVED_ACTIONS, Resolved, action_name_re, finding, matches,
    missing_description_message, segment_re,
};

/// The rules of the actions dialect: an action file, or a domain index.
pub(super) fn rules(c: &Context<'_>, out: &mut Vec<Finding>, resolved: &mut Resolved) {
    let Context {
        origin,
        m,
        path_name,
        declared_name,
        declared_description,
        ..
    } = *c;
    match origin {
        Origin::Action { domain, action } => {
            resolved.name = path_name.to_owned();
            if !matches(segment_re(), domain) || !matches(segment_re(), action) {
                out.push(finding(
                    Code::InvalidName,
                    "name",
                    true,
                    format!(
                        "path-derived name `{path_name}` must match ^[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*$: rename the file or folder"
                    ),
                ));
            } else if RESERVED_ACTIONS.contains(&action.as_str()) {
                out.push(finding(
                    Code::ReservedName,
                    "name",
                    true,
                    format!("`{path_name}` is reserved (`{domain}.all` and `{domain}.help` address the whole domain): rename the file"),
                ));
            }
            match declared_name {
                None => out.push(finding(
                    Code::MissingName,
                    "name",
                    false,
                    format!("no `name`: add `name: {path_name}`"),
                )),
                Some(n) if n != path_name => {
                    let detail = if matches(action_name_re(), n) {
                        String::new()
                    } else {
                        " (and it is not `domain.action`)".to_owned()
                    };
                    out.push(finding(
                        Code::NameMismatch,
                        "name",
                        false,
                        format!(
                            "name `{n}` differs from the path-derived name `{path_name}`{detail}; the skill is routed as `{path_name}`"
                        ),
                    ));
                }
                Some(_) => {}
            }
            if declared_description.is_none() {
                let (code, msg) = missing_description_message(m.description.is_some());
                out.push(finding(code, "description", true, msg));
            }
        }
        _ => {
            // A domain index.
            let domain = m.domain.as_deref().map(str::trim).unwrap_or_default();
            resolved.name = path_name.to_owned();
            if !matches(segment_re(), path_name) {
                out.push(finding(
                    Code::InvalidName,
                    "domain",
                    true,
                    format!("domain folder `{path_name}` must match ^[a-z][a-z0-9_]*$"),
                ));
            }
            if domain != path_name {
                out.push(finding(
                    Code::NameMismatch,
                    "domain",
                    false,
                    format!("`domain: {domain}` differs from the folder name `{path_name}`; the folder name is used"),
                ));
            }
            if declared_description.is_none() {
                out.push(finding(
                    Code::MissingDescription,
                    "description",
                    false,
                    "the domain index has no `description`; `get_skill` lists domains by it",
                ));
            }
        }
    }
}
