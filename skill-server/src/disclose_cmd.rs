//! Disclosure subcommands: `catalog`, `show`, `get-skill`, `resources`.

use std::io::Write;

use clap::{Args, Subcommand, ValueEnum};
use skill_runtime::registry::{Budget, CatalogFormat, MAX_RESOURCE_DEPTH, MAX_RESOURCE_ENTRIES};
use skill_runtime::wire::{
    CatalogShape, OutlineShape, ResourcesShape, SectionShape, SkillDetailShape, budget_text, pretty,
};
use skill_runtime::{Lookup, Scope, Shown};

use crate::Format;
use crate::commands::{engine, write_bytes, write_out};

/// Catalog format on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CatalogFormatArg {
    /// `- name: description` lines, actions skills grouped by domain.
    Markdown,
    /// The Agent Skills `<available_skills>` block.
    Xml,
    /// JSON with the entries and the budget report.
    Json,
}

/// Where the skills come from.
#[derive(Debug, Args)]
#[command(mut_arg("skills", |a| a.required(true)))]
pub(crate) struct SkillsArgs {
    #[command(flatten)]
    skills: crate::skills_arg::SkillDirs,
    /// The profile to disclose for (agent-skills-integration profile affinity).
    #[arg(long)]
    profile: Option<String>,
}

/// The disclosure subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
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
        /// The cap on one entry, in characters (only its description is cut to fit).
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
        /// Print the skill's outline instead: every section with its slug, heading path
        /// and estimated tokens.
        #[arg(long, conflicts_with = "section")]
        outline: bool,
        /// Print one section (with its subsections) by slug, as `--outline` lists them.
        #[arg(long, value_name = "SLUG")]
        section: Option<String>,
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
pub(crate) fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    crate::commands::exit_code(run_inner(command, out, err), err)
}

fn run_inner(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, String> {
    let source = match &command {
        Commands::Catalog { source, .. }
        | Commands::Show { source, .. }
        | Commands::GetSkill { source, .. }
        | Commands::Resources { source, .. } => source,
    };
    let engine = engine(&source.skills)?;
    let scope = Scope::model().with_profile(source.profile.clone());
    let failed = |err: &mut dyn Write, e: skill_runtime::Error| {
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
            let view = engine.catalog(fmt, &budget, &scope);
            let catalog = &view.catalog;
            if fmt == CatalogFormat::Json {
                write_out(out, &pretty(&CatalogShape::from(&view)))?;
            } else {
                // An empty catalog (a budget too small for anything) prints nothing at all.
                let mut text = catalog.text.clone();
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                write_out(out, &text)?;
                write_out(
                    err,
                    &budget_text(&catalog.report, catalog.report.used_chars),
                )?;
            }
            Ok(0)
        }
        Commands::Show {
            format,
            name,
            outline: true,
            ..
        } => match engine.outline(&name, &Lookup::Inspect) {
            Ok(o) if format == Format::Json => {
                write_out(out, &pretty(&OutlineShape::from(&o)))?;
                Ok(0)
            }
            Ok(o) => {
                write_out(out, &o.render())?;
                Ok(0)
            }
            Err(e) => failed(err, e),
        },
        Commands::Show {
            format,
            name,
            section: Some(slug),
            ..
        } => match engine.section(&name, &slug, &Lookup::Inspect) {
            Ok(s) if format == Format::Json => {
                write_out(out, &pretty(&SectionShape::from(&s)))?;
                Ok(0)
            }
            Ok(s) => {
                write_out(out, &s.text)?;
                if !s.text.ends_with('\n') {
                    write_out(out, "\n")?;
                }
                Ok(0)
            }
            Err(e) => failed(err, e),
        },
        Commands::Show { format, name, .. } => match engine.entry(&name) {
            Ok(shown) => {
                write_out(out, &show(&shown, format))?;
                Ok(0)
            }
            Err(e) => failed(err, e),
        },
        Commands::GetSkill { path, .. } => match engine.get_skill(path.as_deref(), &scope) {
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
            Some(file) => match engine.resource(&name, &file, &Lookup::Inspect) {
                Ok(bytes) => write_bytes(out, &bytes).map(|()| 0),
                Err(e) => failed(err, e),
            },
            None => match engine.resources(&name, &Lookup::Inspect) {
                Ok(listing) => {
                    let text = if format == Format::Json {
                        pretty(&ResourcesShape::new(&name, &listing))
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

/// The entry `show` and `resources` inspect: the winning entry of that name whatever its
/// status or who may use it, else the domain index of that name. These are operator
/// commands, so a skill the model may not invoke (or that is invalid) is still shown.
fn show(shown: &Shown, format: Format) -> String {
    let s = &*shown.skill;
    let m = &s.manifest;
    if format == Format::Json {
        return pretty(&SkillDetailShape::from(shown));
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
    for w in &m.when_to_use {
        line("when to use:", w);
    }
    for w in &m.when_not_to_use {
        line("not to use:", w);
    }
    for h in &shown.shadows {
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
