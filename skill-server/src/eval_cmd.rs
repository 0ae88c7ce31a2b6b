//! `eval`: a skill's trigger eval (the Agent Skills `[{"query", "should_trigger"}]` file,
//! kept as `evals/eval_queries.json` in the skill's folder), run offline through selection,
//! with per-skill trigger precision and recall. The scoring is
//! `Engine::trigger_eval`; this file only finds the skill and formats.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use skill_runtime::read_trigger_cases;
use skill_runtime::search::{SelectOptions, TriggerReport};
use skill_runtime::wire::{TriggerEvalShape, pretty};

use crate::Format;
use crate::commands::{engine, write_out};

/// The subcommands this module adds.
#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Run a skill's trigger eval (`[{"query": "...", "should_trigger": true|false}]`)
    /// through selection and report which queries select the skill, with its trigger
    /// precision and recall. Offline and deterministic.
    Eval {
        /// The trigger-eval file, normally `<skill>/evals/eval_queries.json`.
        file: PathBuf,
        /// The skill the file is for; by default the skill whose folder holds `evals/`.
        #[arg(long)]
        skill: Option<String>,
        /// The skills to select among (`--skills [NS=]DIR`, repeatable; `--include-hidden`).
        /// By default the folder that holds the skill's folder (its pack).
        #[command(flatten)]
        skills: crate::skills_arg::SkillDirs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

/// Run `eval`; returns the exit code (0, or 2 on usage or I/O problems).
pub(crate) fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    crate::commands::exit_code(run_inner(command, out).map(|()| 0), err)
}

/// The skill folder of a file at `<skill>/evals/<file>`.
fn skill_dir_of(file: &Path) -> Option<&Path> {
    let evals = file.parent()?;
    (evals.file_name()? == "evals").then(|| evals.parent())?
}

fn run_inner(command: Commands, out: &mut dyn Write) -> Result<(), String> {
    let Commands::Eval {
        file,
        skill,
        skills,
        format,
    } = command;
    let cases = read_trigger_cases(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let skill_dir = skill_dir_of(&file);
    let skills = if skills.is_empty() {
        let pack = skill_dir.and_then(Path::parent).ok_or_else(|| {
            format!(
                "{}: not in a skill's evals/ folder; name the skills folder with --skills",
                file.display()
            )
        })?;
        crate::skills_arg::SkillDirs {
            dirs: vec![crate::skills_arg::SkillsDir {
                namespace: None,
                path: pack.to_path_buf(),
            }],
            include_hidden: skills.include_hidden,
        }
    } else {
        skills
    };
    let engine = engine(&skills)?;
    let loaded = engine.entries().skills;
    let name = match skill {
        Some(n) => n,
        None => {
            let dir = skill_dir
                .and_then(|d| d.canonicalize().ok())
                .ok_or_else(|| {
                    format!(
                        "{}: cannot tell which skill it is for; use --skill",
                        file.display()
                    )
                })?;
            loaded
                .iter()
                .find(|s| s.dir.canonicalize().ok().as_deref() == Some(dir.as_path()))
                .map(|s| s.name.clone())
                .ok_or_else(|| {
                    format!(
                        "{}: no skill loads from {}; use --skill",
                        file.display(),
                        dir.display()
                    )
                })?
        }
    };
    let total = loaded
        .iter()
        .filter(|s| s.status == skill_runtime::registry::Status::Loaded)
        .count();
    let report = engine
        .trigger_eval(&name, &cases, &SelectOptions::default())
        .map_err(|e| match e {
            skill_runtime::Error::UnknownSkill(_) => {
                format!("no skill named `{name}` among the loaded skills")
            }
            other => other.to_string(),
        })?;
    let text = match format {
        Format::Json => pretty(&TriggerEvalShape::new(&report, total)),
        Format::Text => to_text(&report, total),
    };
    write_out(out, &text)
}

/// The text report: a summary line, then one line per query.
pub(crate) fn to_text(r: &TriggerReport, skills: usize) -> String {
    let pct = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |v| format!("{:.2}", v));
    let mut t = format!(
        "trigger eval of `{}` over {skills} skills: {} of {} queries pass; precision {} ({} of {} triggered should), recall {} ({} of {} that should triggered)\n",
        r.skill,
        r.passed(),
        r.outcomes.len(),
        pct(r.precision()),
        r.true_positives(),
        r.true_positives() + r.false_positives(),
        pct(r.recall()),
        r.true_positives(),
        r.true_positives() + r.false_negatives(),
    );
    for o in &r.outcomes {
        let verdict = if o.should_trigger == o.triggered {
            "pass"
        } else {
            "FAIL"
        };
        let want = if o.should_trigger {
            "should trigger"
        } else {
            "should not"
        };
        let got = if o.selected.is_empty() {
            "nothing selected".to_owned()
        } else {
            format!("selected {}", o.selected.join(", "))
        };
        t.push_str(&format!(
            "  {verdict}  {want:<14}  {got:<40}  {:?}\n",
            o.query
        ));
    }
    t
}
