//! Which skills of a snapshot are jobs, and diagnostics for the ones whose schedule is bad.

use std::sync::Arc;

use skill_format::{Code, Diagnostic, split, yaml};
use skill_registry::{Skill, Snapshot};

use crate::{Error, Schedule};

/// A loaded skill with a valid `schedule`.
#[derive(Debug, Clone)]
pub struct ScheduledSkill {
    /// The skill as the snapshot holds it.
    pub skill: Arc<Skill>,
    /// Its parsed schedule.
    pub schedule: Schedule,
}

/// Every loaded skill of `snapshot` that has a `schedule`, by name, and a diagnostic for
/// each one whose schedule does not parse (see [`schedule_diagnostic`]).
pub fn scheduled_skills(snapshot: &Snapshot) -> (Vec<ScheduledSkill>, Vec<Diagnostic>) {
    let mut jobs = Vec::new();
    let mut diagnostics = Vec::new();
    for skill in snapshot.skills() {
        match parse_skill_schedule(skill) {
            None => {}
            Some(Ok(schedule)) => jobs.push(ScheduledSkill {
                skill: skill.clone(),
                schedule,
            }),
            Some(Err(e)) => diagnostics.push(schedule_diagnostic(skill, &e)),
        }
    }
    (jobs, diagnostics)
}

/// The skill's schedule, parsed, when it has one.
pub(crate) fn parse_skill_schedule(skill: &Skill) -> Option<Result<Schedule, Error>> {
    skill.manifest.schedule.as_deref().map(Schedule::parse)
}

/// A diagnostic (code `invalid-schedule`, error) for a skill whose `schedule` does not
/// parse. It points at the offending character in the file when the value is written on
/// the `schedule:` line as plain or quoted text (the file is read again to find it), and
/// at the `schedule:` line, or no position, otherwise. The message names the column within
/// the expression either way.
pub fn schedule_diagnostic(skill: &Skill, error: &Error) -> Diagnostic {
    let expr = skill.manifest.schedule.as_deref().unwrap_or_default();
    let (message, column) = match error {
        Error::Expression { column, message } => (
            format!("invalid schedule `{expr}` (column {column} of the expression): {message}"),
            Some(*column),
        ),
        other => (format!("invalid schedule `{expr}`: {other}"), None),
    };
    let diagnostic = Diagnostic::error(Code::InvalidSchedule, &skill.path, message);
    let text = std::fs::read_to_string(&skill.path).unwrap_or_default();
    diagnostic.at_opt(locate(&text, expr, column))
}

/// The 1-based file line and column of expression column `column`, when it can be found.
fn locate(text: &str, expr: &str, column: Option<u32>) -> Option<(u32, u32)> {
    let doc = split(text).ok()?;
    let fm = doc.frontmatter?;
    let (yaml_line, _) = yaml::key_position(fm.text, "schedule")?;
    let line_no = fm.first_line + yaml_line - 1;
    let line = fm.text.lines().nth(usize::try_from(yaml_line).ok()? - 1)?;
    let after_key = line.find(':')? + 1;
    let rest = &line[after_key..];
    let value = rest.trim_start_matches([' ', '\t']);
    let mut start = line.len() - value.len();
    let value = match value.chars().next() {
        Some(q @ ('"' | '\'')) => {
            start += 1;
            value.trim_start_matches(q)
        }
        _ => value,
    };
    let key_at = (line_no, 1);
    let Some(col) = column else {
        return Some(key_at);
    };
    if !value.starts_with(expr) || expr.is_empty() {
        return Some(key_at);
    }
    let value_col = u32::try_from(line[..start].chars().count()).ok()? + 1;
    Some((line_no, value_col + col - 1))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn locates_the_column_in_quoted_and_plain_values() {
        let text = "---\nname: x\nschedule: \"0 0 30 2 *\"\n---\nbody\n";
        assert_eq!(locate(text, "0 0 30 2 *", Some(5)), Some((3, 16)));
        let text = "---\nname: x\nschedule:   61 * * * *\n---\nbody\n";
        assert_eq!(locate(text, "61 * * * *", Some(1)), Some((3, 13)));
        // A folded value is not on the key's line: point at the key.
        let text = "---\nschedule: >\n  0 0 30 2 *\n---\n";
        assert_eq!(locate(text, "0 0 30 2 *", Some(5)), Some((2, 1)));
        assert_eq!(locate("no frontmatter", "x", Some(1)), None);
    }
}
