//! `search`, `select` and `notes-search`: the skill-search crate from the command line.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;

use crate::Format;
use skill_runtime::registry::RegistryConfig;
use skill_runtime::search::{
    DEFAULT_BUDGET_TOKENS, DEFAULT_MAX_SKILLS, DEFAULT_THRESHOLD, SelectOptions,
};
use skill_runtime::wire::{
    NotesSearchRequest, NotesShape, Request, SearchRequest, SearchShape, SelectRequest, pretty,
};
use skill_runtime::{Engine, EngineConfig};

use crate::commands::one_shot;
use crate::skills_arg::SkillDirs;

/// Default number of search results (every door's).
const DEFAULT_LIMIT: usize = skill_runtime::wire::DEFAULT_RESULTS;

/// The subcommands this module adds.
#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Rank skills for a query: explicit name mentions first, then exact phrases, then
    /// triggers and text. Without `--skills`, reads `~/.agents/skills` and
    /// `./.agents/skills`.
    Search {
        #[command(flatten)]
        skills: SkillDirs,
        /// Most results (1 to 1000).
        #[arg(long, default_value_t = DEFAULT_LIMIT)]
        limit: usize,
        /// Leave out skills excluded for this processing profile.
        #[arg(long)]
        profile: Option<String>,
        /// A sentence-embedding model folder (such as all-MiniLM-L6-v2's) that also gates
        /// selection; needs skill-server built with `--features transformer`.
        #[arg(long, value_name = "DIR")]
        transformer: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The query (several words are joined with spaces). Treated as plain text.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        query: Vec<String>,
    },
    /// Choose the skills to pre-load for a message and print the selection JSON
    /// (`selected_skills`, `no_skill_needed`, `disclosure` with the tier and its text).
    Select {
        #[command(flatten)]
        skills: SkillDirs,
        /// Most skills selected (1 to 20).
        #[arg(long = "max", default_value_t = DEFAULT_MAX_SKILLS)]
        max: usize,
        /// Confidence a skill needs to be selected (0 to 1).
        #[arg(long, default_value_t = DEFAULT_THRESHOLD)]
        threshold: f32,
        /// Token budget of the disclosed text.
        #[arg(long, default_value_t = DEFAULT_BUDGET_TOKENS)]
        budget: usize,
        /// An earlier turn of the conversation; repeat, oldest first.
        #[arg(long = "turn")]
        turns: Vec<String>,
        /// The processing profile.
        #[arg(long)]
        profile: Option<String>,
        /// A sentence-embedding model folder (such as all-MiniLM-L6-v2's) that also gates
        /// selection; needs skill-server built with `--features transformer`.
        #[arg(long, value_name = "DIR")]
        transformer: Option<PathBuf>,
        /// The user's message (several words are joined with spaces).
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        message: Vec<String>,
    },
    /// Search a folder of markdown notes: ranked notes with highlighted snippets.
    NotesSearch {
        /// The notes folder.
        #[arg(long, required = true)]
        notes: PathBuf,
        /// Most results (1 to 1000).
        #[arg(long, default_value_t = DEFAULT_LIMIT)]
        limit: usize,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The query (several words are joined with spaces). Treated as plain text.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        query: Vec<String>,
    },
}

/// Run one of this module's subcommands; returns the exit code (0 success, 2 usage or I/O
/// problems).
pub(crate) fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match command {
        Commands::Search {
            skills,
            limit,
            profile,
            transformer,
            format,
            query,
        } => checked(SearchRequest {
            query: query.join(" "),
            limit: Some(limit),
            profile,
        })
        .and_then(|request| search(&skills, transformer.as_deref(), &request, format, out, err)),
        Commands::Select {
            skills,
            max,
            threshold,
            budget,
            turns,
            profile,
            transformer,
            message,
        } => {
            let request = SelectRequest {
                message: message.join(" "),
                recent_turns: turns,
                max_skills: Some(max),
                budget_tokens: Some(budget),
                profile,
            };
            if !(0.0..=1.0).contains(&threshold) {
                Err(format!("--threshold {threshold} is not between 0 and 1"))
            } else {
                checked(request).and_then(|request| {
                    // The threshold is the command line's own: no other door takes it.
                    let opts = SelectOptions {
                        threshold,
                        ..request.options()
                    };
                    select(
                        &skills,
                        transformer.as_deref(),
                        &opts,
                        &request.message,
                        out,
                        err,
                    )
                })
            }
        }
        Commands::NotesSearch {
            notes,
            limit,
            format,
            query,
        } => checked(NotesSearchRequest {
            query: query.join(" "),
            limit: Some(limit),
        })
        .and_then(|request| notes_search(notes, &request, format, out, err)),
    };
    crate::commands::exit_code(result.map(|()| 0), err)
}

/// A request the flags built, checked against the door contract every door shares: a
/// refusal names the field and its wire code.
fn checked<R: Request>(request: R) -> Result<R, String> {
    request
        .check()
        .map(|()| request)
        .map_err(|e| format!("{} [{}]", e.message, e.code))
}

/// A one-shot engine over `--skills` folders, or the default sources (the user's and the
/// project's) when none is given, with its search index built.
fn engine(
    skills: &SkillDirs,
    transformer: Option<&Path>,
    err: &mut dyn Write,
) -> Result<std::sync::Arc<Engine>, String> {
    let sources = if skills.is_empty() {
        let cwd = std::env::current_dir().map_err(|e| format!("current folder: {e}"))?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let mut sources = RegistryConfig::default_sources(None, home, cwd);
        for s in &mut sources {
            s.include_hidden = skills.include_hidden;
        }
        sources
    } else {
        crate::commands::check_paths(&skills.paths())?;
        skills.sources(|i, _| format!("layer{}", i + 1))
    };
    #[allow(unused_mut)] // Changed only with the `transformer` feature.
    let mut config = EngineConfig::one_shot(RegistryConfig::with_sources(sources));
    if let Some(dir) = transformer {
        #[cfg(feature = "transformer")]
        {
            config.transformer = Some(dir.to_path_buf());
        }
        #[cfg(not(feature = "transformer"))]
        return Err(format!(
            "--transformer {}: this skill-server was built without its `transformer` feature; \
             build it with `cargo build --release -p skill-server --features transformer`",
            dir.display()
        ));
    }
    let engine = one_shot(config)?;
    for d in engine.index_diagnostics().map_err(|e| e.to_string())? {
        let _ = writeln!(err, "{d}");
    }
    Ok(engine)
}

fn write_all(out: &mut dyn Write, text: &str) -> Result<(), String> {
    out.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write output: {e}"))
}

fn search(
    skills: &SkillDirs,
    transformer: Option<&Path>,
    request: &SearchRequest,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let engine = engine(skills, transformer, err)?;
    let query = request.query.as_str();
    let hits = engine.search(&request.query()).map_err(|e| e.to_string())?;
    let text = match format {
        Format::Json => pretty(&SearchShape::new(query, &hits)),
        Format::Text => {
            let mut t = String::new();
            if hits.is_empty() {
                t.push_str("no matching skills\n");
            }
            for (i, m) in hits.iter().enumerate() {
                t.push_str(&format!(
                    "{:>2}. {}  ({:.2}, {})\n    {}\n    why: {}\n",
                    i + 1,
                    m.name,
                    m.confidence,
                    m.layer,
                    one_line(&m.description, 120),
                    m.reason
                ));
            }
            t
        }
    };
    write_all(out, &text)
}

fn select(
    skills: &SkillDirs,
    transformer: Option<&Path>,
    opts: &SelectOptions,
    message: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let engine = engine(skills, transformer, err)?;
    let selection = engine.select(message, opts).map_err(|e| e.to_string())?;
    write_all(out, &format!("{}\n", selection.to_json()))
}

fn notes_search(
    notes: PathBuf,
    request: &NotesSearchRequest,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let (query, limit) = (request.query.as_str(), request.limit());
    let mut config = EngineConfig::one_shot(RegistryConfig::with_sources(Vec::new()));
    config.notes = Some(notes);
    let engine = one_shot(config)?;
    for w in engine.notes_warnings() {
        let _ = writeln!(err, "warning: {w}");
    }
    // A one-shot engine has no shared database: the search is the in-process index's,
    // run to completion on a small runtime of its own.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let hits = runtime
        .block_on(engine.notes_search(query, limit))
        .map_err(|e| e.to_string())?;
    let text = match format {
        Format::Json => pretty(&NotesShape::new(query, &hits)),
        Format::Text => {
            let mut t = String::new();
            if hits.is_empty() {
                t.push_str("no matching notes\n");
            }
            for (i, h) in hits.iter().enumerate() {
                let tags = if h.tags.is_empty() {
                    String::new()
                } else {
                    format!("  #{}", h.tags.join(" #"))
                };
                t.push_str(&format!(
                    "{:>2}. {} — {}{}\n    {}\n",
                    i + 1,
                    h.path,
                    h.title,
                    tags,
                    h.snippet
                ));
            }
            t
        }
    };
    write_all(out, &text)
}

fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let mut s: String = flat.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    /// Out-of-range counts are refused by the door contract, not silently clamped:
    /// `--limit 0` gave one result, `--max 0` still selected a skill and `--limit 100000`
    /// gave 1000.
    #[test]
    fn counts_out_of_range_are_usage_errors() {
        let dir = tempfile::tempdir().unwrap();
        let skills = dir.path().join("skills");
        std::fs::create_dir_all(skills.join("a")).unwrap();
        std::fs::write(
            skills.join("a/SKILL.md"),
            "---\nname: a\ndescription: Convert units of length.\n---\nBody.\n",
        )
        .unwrap();
        let notes = dir.path().join("notes");
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(notes.join("n.md"), "# Units\nconvert length\n").unwrap();
        let (s, n) = (skills.to_str().unwrap(), notes.to_str().unwrap());
        let run = |args: &[&str]| {
            let mut all = vec!["skill-server"];
            all.extend_from_slice(args);
            crate::run(all, &mut Vec::new(), &mut Vec::new())
        };
        let (limit, max, notes_limit) = (
            skill_runtime::search::MAX_LIMIT.to_string(),
            skill_runtime::search::MAX_MAX_SKILLS.to_string(),
            skill_runtime::search::MAX_NOTE_RESULTS.to_string(),
        );
        let (limit_over, max_over, notes_over) = (
            (skill_runtime::search::MAX_LIMIT + 1).to_string(),
            (skill_runtime::search::MAX_MAX_SKILLS + 1).to_string(),
            (skill_runtime::search::MAX_NOTE_RESULTS + 1).to_string(),
        );
        for (args, code) in [
            (vec!["search", "--skills", s, "--limit", "0", "units"], 2),
            (
                vec!["search", "--skills", s, "--limit", &limit_over, "units"],
                2,
            ),
            (vec!["search", "--skills", s, "--limit", &limit, "units"], 0),
            (vec!["select", "--skills", s, "--max", "0", "units"], 2),
            (
                vec!["select", "--skills", s, "--max", &max_over, "units"],
                2,
            ),
            (vec!["select", "--skills", s, "--max", &max, "units"], 0),
            (
                vec!["notes-search", "--notes", n, "--limit", "0", "units"],
                2,
            ),
            (
                vec![
                    "notes-search",
                    "--notes",
                    n,
                    "--limit",
                    &notes_over,
                    "units",
                ],
                2,
            ),
            (
                vec![
                    "notes-search",
                    "--notes",
                    n,
                    "--limit",
                    &notes_limit,
                    "units",
                ],
                0,
            ),
        ] {
            assert_eq!(run(&args), code, "{args:?}");
        }
    }
}
