//! Pegasus rules: the ASCII kebab-case name, and a description that falls back to the body's
//! first paragraph.

use crate::diagnostic::Code;
use crate::manifest::Finding;

use super::text::first_paragraph;
use super::{Context, Resolved, finding, kebab_name_checks};

/// The rules of the pegasus dialect; the description may come from the body.
pub(super) fn rules(c: &Context<'_>, out: &mut Vec<Finding>, resolved: &mut Resolved) {
    let Context {
        dialect,
        body,
        declared_name,
        declared_description,
        ..
    } = *c;
    if let Some(n) = declared_name {
        out.extend(kebab_name_checks(n, dialect));
    }
    if declared_description.is_none() {
        resolved.description = first_paragraph(body);
        if resolved.description.is_empty() {
            out.push(finding(
                Code::MissingDescription,
                "description",
                true,
                "no `description` and no first paragraph in the body to take it from: add a `description:` saying when to use the skill",
            ));
        }
    }
}
