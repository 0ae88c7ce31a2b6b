//! `search`, `select` and `notes-search`: the skill-search crate from the command line.

use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;

use crate::Format;
use serde_json::json;
use skill_registry::{Registry, RegistryConfig, Source};
use skill_search::{
    DEFAULT_BUDGET_TOKENS, DEFAULT_MAX_SKILLS, DEFAULT_THRESHOLD, Filter, NotesIndex,
    SearchRequest, SelectOptions, SkillIndex,
};

/// Default number of search results.
const DEFAULT_LIMIT: usize = 10;

/// The subcommands this module adds.
#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Rank skills for a query: explicit name mentions first, then exact phrases, then
    /// triggers and text. Without `--skills`, reads `~/.agents/skills` and
    /// `./.agents/skills`.
    Search {
        /// A skills folder; repeat for layers, lowest precedence first.
        #[arg(long = "skills")]
        skills: Vec<PathBuf>,
        /// Most results.
        #[arg(long, default_value_t = DEFAULT_LIMIT)]
        limit: usize,
        /// Leave out skills excluded for this processing profile.
        #[arg(long)]
        profile: Option<String>,
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
        /// A skills folder; repeat for layers, lowest precedence first.
        #[arg(long = "skills")]
        skills: Vec<PathBuf>,
        /// Most skills selected.
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
        /// The user's message (several words are joined with spaces).
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        message: Vec<String>,
    },
    /// Search a folder of markdown notes: ranked notes with highlighted snippets.
    NotesSearch {
        /// The notes folder.
        #[arg(long, required = true)]
        notes: PathBuf,
        /// Most results.
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
pub fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match command {
        Commands::Search {
            skills,
            limit,
            profile,
            format,
            query,
        } => search(&skills, limit, profile, format, &query.join(" "), out, err),
        Commands::Select {
            skills,
            max,
            threshold,
            budget,
            turns,
            profile,
            message,
        } => {
            if !(0.0..=1.0).contains(&threshold) {
                Err(format!("--threshold {threshold} is not between 0 and 1"))
            } else {
                let opts = SelectOptions {
                    recent_turns: turns,
                    max_skills: max,
                    threshold,
                    budget_tokens: budget,
                    profile,
                    ..SelectOptions::default()
                };
                select(&skills, &opts, &message.join(" "), out, err)
            }
        }
        Commands::NotesSearch {
            notes,
            limit,
            format,
            query,
        } => notes_search(notes, limit, format, &query.join(" "), out, err),
    };
    match result {
        Ok(()) => 0,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            2
        }
    }
}

/// The registry over `--skills` folders as layers `layer1..N`, or the default sources.
fn load(skills: &[PathBuf]) -> Result<Registry, String> {
    let sources = if skills.is_empty() {
        let cwd = std::env::current_dir().map_err(|e| format!("current folder: {e}"))?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        RegistryConfig::default_sources(None, home, cwd)
    } else {
        for p in skills {
            std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        skills
            .iter()
            .enumerate()
            .map(|(i, p)| Source::new(p.clone(), format!("layer{}", i + 1)))
            .collect()
    };
    Ok(Registry::load(RegistryConfig::with_sources(sources)))
}

fn index(skills: &[PathBuf], err: &mut dyn Write) -> Result<SkillIndex, String> {
    let registry = load(skills)?;
    let index = SkillIndex::build(registry.snapshot()).map_err(|e| e.to_string())?;
    for d in index.diagnostics() {
        let _ = writeln!(err, "{d}");
    }
    Ok(index)
}

fn write_all(out: &mut dyn Write, text: &str) -> Result<(), String> {
    out.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write output: {e}"))
}

fn round2(x: f32) -> f64 {
    (f64::from(x) * 100.0).round() / 100.0
}

fn search(
    skills: &[PathBuf],
    limit: usize,
    profile: Option<String>,
    format: Format,
    query: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let index = index(skills, err)?;
    let hits = index
        .search(&SearchRequest {
            text: query,
            recent_turns: &[],
            limit,
            filter: Filter {
                profile,
                model_invocable_only: false,
            },
        })
        .map_err(|e| e.to_string())?;
    let text = match format {
        Format::Json => {
            let results: Vec<_> = hits
                .iter()
                .map(|m| {
                    json!({
                        "name": m.name,
                        "layer": m.layer,
                        "confidence": round2(m.confidence),
                        "explicit": m.explicit,
                        "phrase": m.phrase,
                        "triggers": m.triggers,
                        "matched_terms": m.matched_terms,
                        "body_terms": m.body_terms,
                        "reason": m.reason,
                        "description": m.description,
                    })
                })
                .collect();
            let v = json!({ "query": query, "results": results });
            format!(
                "{}\n",
                serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
            )
        }
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
    skills: &[PathBuf],
    opts: &SelectOptions,
    message: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let index = index(skills, err)?;
    let selection = index.select(message, opts).map_err(|e| e.to_string())?;
    write_all(out, &format!("{}\n", selection.to_json()))
}

fn notes_search(
    notes: PathBuf,
    limit: usize,
    format: Format,
    query: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    let index = NotesIndex::build(notes).map_err(|e| e.to_string())?;
    for w in index.warnings() {
        let _ = writeln!(err, "warning: {w}");
    }
    let hits = index.search(query, limit).map_err(|e| e.to_string())?;
    let text = match format {
        Format::Json => {
            let results: Vec<_> = hits
                .iter()
                .map(|h| {
                    json!({
                        "path": h.path,
                        "title": h.title,
                        "tags": h.tags,
                        "snippet": h.snippet,
                    })
                })
                .collect();
            let v = json!({ "query": query, "results": results });
            format!(
                "{}\n",
                serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
            )
        }
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
