//! Toolsets rules: a required kebab-case name, a description of at most
//! [`MAX_TOOLSETS_DESCRIPTION_CHARS`], a semantic `version`, and trigger patterns that compile
//! (case-insensitively, as search matches them) within [`MAX_PATTERN_SIZE`].

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

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
        } else if let Some(folder) = unserved_folder(entry) {
            // An error in every mode: the skill is refused at load rather than running a
            // file that no manifest, lock or scan covers.
            out.push(finding(
                Code::InvalidFieldValue,
                "scripts",
                true,
                format!(
                    "script `{entry}` is inside `{folder}`, a folder that is never listed, hashed, locked or scanned (hidden folders and `node_modules`); the skill is not loaded: move the script to a plain folder under `scripts/`"
                ),
            ));
        }
    }
    for p in &m.triggers.patterns {
        if let Some(problem) = pattern_problem(p) {
            out.push(finding(
                Code::InvalidTriggerPattern,
                "triggers",
                false,
                match problem {
                    PatternProblem::TooBig => too_big_message(p),
                    PatternProblem::Invalid(first) => {
                        format!("trigger pattern `{p}` does not compile ({first}); it is ignored")
                    }
                },
            ));
        }
    }
}

/// The most trigger patterns whose compile outcome is remembered; the memory is emptied
/// when full.
const CHECKED_PATTERNS_CAP: usize = 4096;

/// The longest pattern (in bytes) whose outcome is remembered: longer ones are compiled
/// every time, so a pack of huge patterns cannot pin [`CHECKED_PATTERNS_CAP`] times a file's
/// size in memory. Real trigger patterns are a line long.
const REMEMBERED_PATTERN_MAX_BYTES: usize = 1024;

/// Why a trigger pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PatternProblem {
    /// It compiles to more than [`MAX_PATTERN_SIZE`].
    TooBig,
    /// It does not compile: the last line of the compile error.
    Invalid(String),
}

/// The message for a pattern that compiles to more than [`MAX_PATTERN_SIZE`].
fn too_big_message(p: &str) -> String {
    format!(
        "trigger pattern `{p}` compiles to more than {} KiB; simplify it (e.g. use [a-z] instead of \\w, or fewer repetitions); it is ignored",
        MAX_PATTERN_SIZE / 1024
    )
}

/// Patterns checked so far in this process, with why they are refused (`None`: the
/// pattern compiles).
static CHECKED_PATTERNS: LazyLock<Mutex<HashMap<String, Option<PatternProblem>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Why a trigger pattern is refused (it does not compile, or not within
/// [`MAX_PATTERN_SIZE`]), or `None` when it compiles.
///
/// Compiling a pattern costs far more than parsing its whole file, and the same patterns
/// come back on every load and reload (and across skills), so the outcome, a pure function
/// of the pattern, is remembered per process.
fn pattern_problem(p: &str) -> Option<PatternProblem> {
    if p.len() > REMEMBERED_PATTERN_MAX_BYTES {
        return compile_problem(p);
    }
    if let Ok(checked) = CHECKED_PATTERNS.lock() {
        if let Some(known) = checked.get(p) {
            return known.clone();
        }
    }
    let problem = compile_problem(p);
    if let Ok(mut checked) = CHECKED_PATTERNS.lock() {
        if checked.len() >= CHECKED_PATTERNS_CAP {
            checked.clear();
        }
        checked.insert(p.to_owned(), problem.clone());
    }
    problem
}

/// [`pattern_problem`] without the memory: compile the pattern now, as search does
/// (case-insensitively).
fn compile_problem(p: &str) -> Option<PatternProblem> {
    match regex::RegexBuilder::new(p)
        .case_insensitive(true)
        .size_limit(MAX_PATTERN_SIZE)
        .build()
    {
        Ok(_) => None,
        Err(regex::Error::CompiledTooBig(_)) => Some(PatternProblem::TooBig),
        Err(e) => Some(PatternProblem::Invalid(
            e.to_string().lines().last().unwrap_or("").trim().to_owned(),
        )),
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

/// The folder of a `scripts` entry that the registry's listing never enters (a hidden
/// one, or `node_modules` in any letter case), if any: a file there is not in the skill's
/// manifest, so it may not run.
fn unserved_folder(entry: &str) -> Option<&str> {
    let mut parts = entry
        .split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .peekable();
    while let Some(part) = parts.next() {
        // The last part is the file; a hidden file is skipped by the listing too.
        let is_folder = parts.peek().is_some();
        if part.starts_with('.') || (is_folder && part.eq_ignore_ascii_case("node_modules")) {
            return Some(part);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{
        CHECKED_PATTERNS, PatternProblem, REMEMBERED_PATTERN_MAX_BYTES, compile_problem,
        pattern_problem, script_entry_problem, unserved_folder,
    };
    use crate::{Code, Origin, ParseOptions, parse_skill};

    /// Every trigger pattern of the corpus and the bundled packs fits, and so do larger
    /// realistic ones; a pattern just over [`super::MAX_PATTERN_SIZE`] is refused as too big
    /// (each Unicode `\w` compiles to about a fifth of the limit: five fit, six do not).
    #[test]
    fn trigger_patterns_are_refused_just_over_the_size_limit() {
        for p in [
            r"\d+(\.\d+)?\s*(km|mi|kg|lb|oz|ml|cups?)\b",
            r"(?i)in\s+(celsius|fahrenheit)",
            r"weather\s+(in|for)\s+\w+",
            r"^lab:\s*\w+",
            r"\w+@\w+\.\w+",
            r"\b(convert|translate|transform)\s+(\w+\s+){0,3}(to|into)\s+\w+",
            r"\w{5}",
        ] {
            assert_eq!(compile_problem(p), None, "{p}");
        }
        for p in [r"\w{6}", r"\w{20}7"] {
            assert_eq!(compile_problem(p), Some(PatternProblem::TooBig), "{p}");
        }
    }

    #[test]
    fn a_too_big_trigger_pattern_is_a_diagnostic_that_says_how_to_simplify_it() {
        let text = "---\nname: big\ndescription: Converts things.\nversion: 0.1.0\ntoolsets:\n  - \"t:T\"\ntriggers:\n  patterns: [\"\\\\w{20}7\", \"\\\\w{5}\"]\n---\n\n# Big\n";
        let opts = ParseOptions::new(
            "big/SKILL.md",
            Origin::Folder {
                folder_name: "big".into(),
            },
        );
        let file = parse_skill(text.as_bytes(), &opts);
        let found: Vec<&str> = file
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::InvalidTriggerPattern)
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            found,
            [
                "trigger pattern `\\w{20}7` compiles to more than 256 KiB; simplify it (e.g. use [a-z] instead of \\w, or fewer repetitions); it is ignored"
            ],
            "{:?}",
            file.diagnostics
        );
    }

    /// Patterns up to the size limit are remembered, longer ones are not (and still get
    /// the outcome of compiling).
    #[test]
    fn only_patterns_up_to_the_size_limit_are_remembered() {
        let remembered = |p: &str| {
            CHECKED_PATTERNS
                .lock()
                .map(|m| m.contains_key(p))
                .unwrap_or(false)
        };
        let at = format!("edge{}", "a".repeat(REMEMBERED_PATTERN_MAX_BYTES - 4));
        let over = format!("over{}", "a".repeat(REMEMBERED_PATTERN_MAX_BYTES - 3));
        assert_eq!(at.len(), REMEMBERED_PATTERN_MAX_BYTES);
        assert_eq!(pattern_problem(&at), None);
        assert_eq!(pattern_problem(&over), None);
        assert!(remembered(&at));
        assert!(!remembered(&over));
        let bad_over = format!("({}", "b".repeat(REMEMBERED_PATTERN_MAX_BYTES));
        assert_eq!(pattern_problem(&bad_over), compile_problem(&bad_over));
        assert!(pattern_problem(&bad_over).is_some());
    }

    /// The remembered outcome is the outcome of compiling: the same on the first check and
    /// on every later one, for a pattern that compiles and for one that does not.
    #[test]
    fn remembered_pattern_outcomes_equal_a_fresh_compile() {
        for p in [
            r"\bsummari[sz]e\s+invoices\b",
            "(unclosed",
            "a{99999999}",
            "x",
        ] {
            let fresh = compile_problem(p);
            assert_eq!(pattern_problem(p), fresh, "{p}");
            assert_eq!(pattern_problem(p), fresh, "{p}, remembered");
        }
        assert!(compile_problem("(unclosed").is_some());
        assert!(compile_problem("x").is_none());
    }

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

    /// A script inside a hidden folder or `node_modules` (any case) is never in the
    /// manifest: named, and an error in lenient mode too, so the skill is not loaded.
    #[test]
    fn script_entries_in_unlisted_folders_are_errors() {
        for ok in [
            "scripts/run.sh",
            "./scripts/a/b.py",
            "scripts/node_modules_x/r.sh",
        ] {
            assert_eq!(unserved_folder(ok), None, "{ok}");
        }
        for (bad, folder) in [
            ("scripts/node_modules/run.sh", "node_modules"),
            ("scripts/NODE_MODULES/run.sh", "NODE_MODULES"),
            ("scripts/.h/run.sh", ".h"),
            ("scripts/.GIT/hooks/x", ".GIT"),
            ("scripts/.run.sh", ".run.sh"),
        ] {
            assert_eq!(unserved_folder(bad), Some(folder), "{bad}");
        }
        let text = "---\nname: t\ndescription: Does t.\nscripts: [scripts/node_modules/run.sh]\n---\nbody\n";
        let opts = ParseOptions::new(
            "t/SKILL.md",
            Origin::Folder {
                folder_name: "t".into(),
            },
        );
        let f = parse_skill(text.as_bytes(), &opts);
        let found: Vec<_> = f
            .diagnostics
            .iter()
            .filter(|d| d.message.contains("node_modules"))
            .map(|d| (d.code, d.severity))
            .collect();
        assert_eq!(
            found,
            [(Code::InvalidFieldValue, crate::Severity::Error)],
            "{:?}",
            f.diagnostics
        );
    }
}
