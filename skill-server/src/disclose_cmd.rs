//! Disclosure subcommands: `catalog`, `show`, `get-skill`, `resources`.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;
use skill_registry::{
    Budget, CatalogFormat, Disclosure, MAX_RESOURCE_DEPTH, MAX_RESOURCE_ENTRIES, Skill, Snapshot,
    closest_names,
};

use crate::Format;
use crate::commands::{load_layers, write_out};

/// Catalog format on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CatalogFormatArg {
    /// `- name: description` lines, actions skills grouped by domain.
    Markdown,
    /// The Agent Skills `<available_skills>` block.
    Xml,
    /// JSON with the entries and the budget report.
    Json,
}

/// Where the skills come from.
#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// A skills folder; repeat for layers, lowest precedence first.
    #[arg(long = "skills", required = true)]
    skills: Vec<PathBuf>,
    /// The profile to disclose for (agent-skills-integration profile affinity).
    #[arg(long)]
    profile: Option<String>,
}

/// The disclosure subcommands.
#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Print the skill catalog for the system prompt, fitted to a budget. The budget
    /// report goes to stderr (or into the JSON).
    Catalog {
        #[command(flatten)]
        source: SkillsArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CatalogFormatArg::Markdown)]
        format: CatalogFormatArg,
        /// The budget in characters.
        #[arg(long, conflicts_with = "context_window_tokens")]
        budget_chars: Option<usize>,
        /// The model's context window in tokens (the budget is 2% of it, 4 chars a token).
        #[arg(long)]
        context_window_tokens: Option<u64>,
        /// The cap on one entry, in characters.
        #[arg(long)]
        entry_cap_chars: Option<usize>,
    },
    /// Print one skill's metadata, diagnostics and body: any entry whatever its status
    /// (loaded, invalid, ineligible, model- or user-only, excluded for a profile) or a domain
    /// index, with the entries it shadows.
    Show {
        #[command(flatten)]
        source: SkillsArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The skill's name.
        name: String,
    },
    /// Answer `get_skill` (no path: every domain; `email`: the domain index; `email.send`:
    /// that skill; `email.all`: the whole domain; a folder skill's name: that skill).
    GetSkill {
        #[command(flatten)]
        source: SkillsArgs,
        /// The dot path.
        path: Option<String>,
    },
    /// List a skill's files, or print one of them (any entry, as `show` finds it).
    Resources {
        #[command(flatten)]
        source: SkillsArgs,
        /// Output format of the listing.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The skill's name.
        name: String,
        /// A file to print, relative to the skill folder.
        file: Option<String>,
    },
}

/// Run a disclosure subcommand; returns the exit code (1 when the skill, domain or file is
/// not found or not allowed, 2 on usage or I/O problems).
pub fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match run_inner(command, out, err) {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            2
        }
    }
}

fn run_inner(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, String> {
    let source = match &command {
        Commands::Catalog { source, .. }
        | Commands::Show { source, .. }
        | Commands::GetSkill { source, .. }
        | Commands::Resources { source, .. } => source,
    };
    let registry = load_layers(&source.skills)?;
    let snapshot = registry.snapshot();
    let view = Disclosure::new(&snapshot).profile(source.profile.as_deref());
    let failed = |err: &mut dyn Write, e: skill_registry::Error| {
        let _ = writeln!(err, "{e}");
        Ok(1)
    };
    match command {
        Commands::Catalog {
            format,
            budget_chars,
            context_window_tokens,
            entry_cap_chars,
            ..
        } => {
            let budget = Budget {
                budget_chars,
                context_window_tokens,
                entry_cap_chars,
            };
            let fmt = match format {
                CatalogFormatArg::Markdown => CatalogFormat::Markdown,
                CatalogFormatArg::Xml => CatalogFormat::Xml,
                CatalogFormatArg::Json => CatalogFormat::Json,
            };
            let catalog = view.catalog(fmt, &budget);
            if fmt == CatalogFormat::Json {
                let value = json!({ "entries": catalog.entries, "report": catalog.report });
                write_out(out, &format!("{value:#}\n"))?;
            } else {
                // An empty catalog (a budget too small for anything) prints nothing at all.
                let mut text = catalog.text.clone();
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                write_out(out, &text)?;
                write_out(err, &report_text(&catalog.report))?;
            }
            Ok(0)
        }
        Commands::Show { format, name, .. } => match inspect(&snapshot, &name) {
            Ok(skill) => {
                write_out(out, &show(skill, snapshot.shadowed(), format))?;
                Ok(0)
            }
            Err(e) => failed(err, e),
        },
        Commands::GetSkill { path, .. } => match view.get_skill(path.as_deref()) {
            Ok(text) => {
                write_out(out, &text)?;
                if !text.ends_with('\n') {
                    write_out(out, "\n")?;
                }
                Ok(0)
            }
            Err(e) => failed(err, e),
        },
        Commands::Resources {
            format, name, file, ..
        } => match file {
            Some(file) => match inspect(&snapshot, &name).and_then(|s| s.read_resource(&file)) {
                Ok(bytes) => match out.write_all(&bytes).and_then(|()| out.flush()) {
                    Ok(()) => Ok(0),
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
                    Err(e) => Err(format!("cannot write output: {e}")),
                },
                Err(e) => failed(err, e),
            },
            None => match inspect(&snapshot, &name).and_then(Skill::resource_listing) {
                Ok(listing) => {
                    let text = if format == Format::Json {
                        format!(
                            "{:#}\n",
                            json!({
                                "skill": name,
                                "resources": listing.resources,
                                "truncated": listing.is_truncated(),
                                "too_many": listing.too_many,
                                "too_deep": listing.too_deep,
                            })
                        )
                    } else if listing.resources.is_empty() && !listing.is_truncated() {
                        format!("{name} has no resources\n")
                    } else {
                        let mut t = String::new();
                        for r in &listing.resources {
                            t.push_str(&format!(
                                "{:<9} {:>9}  {}\n",
                                format!("{:?}", r.kind).to_lowercase(),
                                r.size,
                                r.path
                            ));
                        }
                        t
                    };
                    write_out(out, &text)?;
                    if listing.too_many {
                        write_out(
                            err,
                            &format!(
                                "listing truncated: only the first {MAX_RESOURCE_ENTRIES} files are listed\n"
                            ),
                        )?;
                    }
                    if listing.too_deep {
                        write_out(
                            err,
                            &format!(
                                "listing truncated: folders deeper than {MAX_RESOURCE_DEPTH} levels are not listed\n"
                            ),
                        )?;
                    }
                    Ok(0)
                }
                Err(e) => failed(err, e),
            },
        },
    }
}

/// The budget report as the CLI prints it on stderr.
fn report_text(r: &skill_registry::BudgetReport) -> String {
    let mut t = format!(
        "catalog: {} of {} skills listed, {} chars of a {}-char budget",
        r.included.len(),
        r.candidates,
        r.used_chars,
        r.budget_chars
    );
    if r.is_complete() {
        t.push_str("; nothing shortened or omitted\n");
        return t;
    }
    t.push('\n');
    if !r.truncated.is_empty() {
        t.push_str(&format!(
            "  shortened ({}): {}\n",
            r.truncated.len(),
            r.truncated.join(", ")
        ));
    }
    if !r.omitted.is_empty() {
        t.push_str(&format!(
            "  omitted ({}): {}\n",
            r.omitted.len(),
            r.omitted.join(", ")
        ));
    }
    t
}

/// The entry `show` and `resources` inspect: the winning entry of that name whatever its
/// status or who may use it, else the domain index of that name. These are operator
/// commands, so a skill the model may not invoke (or that is invalid) is still shown.
fn inspect<'s>(snapshot: &'s Snapshot, name: &str) -> Result<&'s Skill, skill_registry::Error> {
    let name = name.trim();
    snapshot
        .entry(name)
        .or_else(|| snapshot.domain(name))
        .map(|s| &**s)
        .ok_or_else(|| skill_registry::Error::UnknownSkill {
            name: name.to_owned(),
            suggestions: closest_names(
                name,
                snapshot
                    .entries()
                    .chain(snapshot.domains())
                    .map(|s| s.name.as_str()),
            ),
        })
}

fn show(s: &Skill, shadowed: &[std::sync::Arc<Skill>], format: Format) -> String {
    let m = &s.manifest;
    let hidden: Vec<&Skill> = shadowed
        .iter()
        .filter(|h| h.name == s.name && h.kind == s.kind)
        .map(|h| &**h)
        .collect();
    if format == Format::Json {
        let value = json!({
            "name": s.name,
            "description": s.description,
            "dialect": s.dialect.as_str(),
            "layer": s.layer,
            "status": s.status.as_str(),
            "path": s.path,
            "domain": s.domain,
            "model_invocable": s.model_invocable(),
            "user_invocable": s.user_invocable(),
            "allowed_tools": m.allowed_tools,
            "schedule": m.schedule,
            "shadows": hidden
                .iter()
                .map(|h| json!({ "layer": h.layer, "path": h.path }))
                .collect::<Vec<_>>(),
            "diagnostics": s.diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "body": s.body,
        });
        return format!("{value:#}\n");
    }
    let mut t = String::new();
    let mut line = |k: &str, v: &str| t.push_str(&format!("{k:<16}{v}\n"));
    line("name:", &s.name);
    line("description:", &s.description.replace('\n', " "));
    line("dialect:", s.dialect.as_str());
    line("layer:", &s.layer);
    line("status:", s.status.as_str());
    line("path:", &s.path.display().to_string());
    if let Some(d) = &s.domain {
        line("domain:", d);
    }
    line(
        "invocable by:",
        match (s.model_invocable(), s.user_invocable()) {
            (true, true) => "model, user",
            (true, false) => "model",
            (false, true) => "user",
            (false, false) => "nobody",
        },
    );
    if let Some(tools) = &m.allowed_tools {
        line("allowed-tools:", &tools.join(" "));
    }
    if let Some(cron) = &m.schedule {
        line("schedule:", cron);
    }
    for h in &hidden {
        line("shadows:", &format!("{} ({})", h.path.display(), h.layer));
    }
    // Why an entry is invalid or ineligible, and any warnings.
    for d in &s.diagnostics {
        line("diagnostic:", &d.to_string());
    }
    t.push_str("---\n");
    t.push_str(&s.body);
    if !s.body.ends_with('\n') {
        t.push('\n');
    }
    t
}
