//! The JSON of a content-scan audit (`skill-server audit --format json`): each finding with
//! the skill it belongs to, the count per code, and how many skills were scanned.

use std::collections::BTreeMap;

use serde::Serialize;
use skill_format::{Diagnostic, Severity};

/// One finding, with its skill.
#[derive(Debug, Serialize)]
pub struct FindingShape<'a> {
    /// The skill the file belongs to.
    pub skill: &'a str,
    /// The file.
    #[serde(serialize_with = "skill_format::serialize_path")]
    pub path: &'a std::path::Path,
    /// 1-based line, where known.
    pub line: Option<u32>,
    /// 1-based column, where known.
    pub column: Option<u32>,
    /// `error` or `warning`.
    pub severity: Severity,
    /// The stable finding code (`scan-...`).
    pub code: &'a str,
    /// What was found and what to check.
    pub message: &'a str,
}

/// An audit's answer.
#[derive(Debug, Serialize)]
pub struct AuditShape<'a> {
    /// The findings reported, by path, line and column.
    pub findings: Vec<FindingShape<'a>>,
    /// How many findings of each code.
    pub counts: BTreeMap<&'a str, usize>,
    /// How many skills have at least one finding.
    pub skills_with_findings: usize,
    /// How many entries were scanned.
    pub skills_scanned: usize,
}

impl<'a> AuditShape<'a> {
    /// The shape of `found` (skill name and finding) out of `scanned` entries.
    pub fn new(found: &'a [(String, Diagnostic)], scanned: usize) -> Self {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut skills: Vec<&str> = Vec::new();
        let findings = found
            .iter()
            .map(|(skill, d)| {
                *counts.entry(d.code.as_str()).or_default() += 1;
                skills.push(skill);
                FindingShape {
                    skill,
                    path: &d.path,
                    line: d.line,
                    column: d.column,
                    severity: d.severity,
                    code: d.code.as_str(),
                    message: &d.message,
                }
            })
            .collect();
        skills.sort_unstable();
        skills.dedup();
        AuditShape {
            findings,
            counts,
            skills_with_findings: skills.len(),
            skills_scanned: scanned,
        }
    }
}
