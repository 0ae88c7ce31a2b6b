//! Routing subcommands: `route` (one command line to a JSON route) and `extract` (model
//! output to commands and text).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};
use skill_runtime::Scope;
use skill_runtime::registry::Caller;
use skill_runtime::router::{Prevalidate, Route, RouterConfig};
use skill_runtime::wire::{ExtractShape, ExtractionShape, RouteShape, RoutedShape, pretty};

use crate::commands::{engine, engine_with, write_out};
use crate::skills_arg::SkillDirs;

/// The most model output `extract` reads (16 MiB); more is refused rather than truncated.
const MAX_EXTRACT_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Who wrote the text being routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Author {
    /// A line of a model's ```` ```cmd ```` block.
    Model,
    /// A user's input line (slash commands).
    User,
}

/// The routing subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Route one command line and print the result as JSON: help (`get_skill`,
    /// `name --help`), an invocation (skill, flags, positionals, access), a slash command,
    /// a plain message, or an error with the closest names. Exit 1 when it is an error.
    Route {
        #[command(flatten)]
        skills: SkillDirs,
        /// Who wrote the line: the model (`cmd` block commands) or a user (slash commands).
        #[arg(long, value_enum, default_value_t = Author::Model)]
        from: Author,
        /// The profile whose view of the skills is used.
        #[arg(long)]
        profile: Option<String>,
        /// Do not list closest names in errors (lily 5.3, "no did-you-mean").
        #[arg(long)]
        no_suggestions: bool,
        /// Check flags against each skill's `## Flags` schema before routing (Approach B).
        #[arg(long)]
        prevalidate: bool,
        /// The command line. Bytes that are not UTF-8 give the router's `invalid-utf8`
        /// error (as JSON, exit 1), not a usage error.
        text: OsString,
    },
    /// Read model output (from FILE, or stdin when FILE is absent or `-`) and print its
    /// commands, text and unterminated `cmd` blocks as JSON, in order. With `--skills`,
    /// every command is routed too. Exit 1 when an unterminated block or a routing error
    /// is found.
    Extract {
        /// With `--skills`: routes each command.
        #[command(flatten)]
        skills: SkillDirs,
        /// The model output file (default: stdin).
        file: Option<PathBuf>,
    },
}

/// Run one of the routing subcommands; returns the exit code.
pub(crate) fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match command {
        Commands::Route {
            skills,
            from,
            profile,
            no_suggestions,
            prevalidate,
            text,
        } => route(
            &skills,
            from,
            profile,
            no_suggestions,
            prevalidate,
            &text,
            out,
        ),
        Commands::Extract { skills, file } => extract(&skills, file, out),
    };
    crate::commands::exit_code(result, err)
}

fn route(
    skills: &SkillDirs,
    from: Author,
    profile: Option<String>,
    no_suggestions: bool,
    prevalidate: bool,
    text: &OsString,
    out: &mut dyn Write,
) -> Result<u8, String> {
    let config = RouterConfig {
        suggestions: !no_suggestions,
        prevalidate: if prevalidate {
            Prevalidate::All
        } else {
            Prevalidate::Off
        },
        ..RouterConfig::default()
    };
    let engine = engine_with(skills, config)?;
    let caller = match from {
        Author::Model => Caller::Model,
        Author::User => Caller::User,
    };
    let scope = Scope { caller, profile };
    let routed = engine.route_bytes(text.as_encoded_bytes(), &scope);
    write_out(out, &pretty(&RouteShape::from(&routed)))?;
    Ok(u8::from(matches!(routed, Route::Error(_))))
}

fn read_input(file: Option<PathBuf>) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let (mut reader, name): (Box<dyn Read>, String) = match file {
        Some(p) if p.as_os_str() != "-" => {
            let f = std::fs::File::open(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let name = p.display().to_string();
            (Box::new(f), name)
        }
        _ => (Box::new(std::io::stdin()), "stdin".to_owned()),
    };
    reader
        .by_ref()
        .take(MAX_EXTRACT_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if bytes.len() as u64 > MAX_EXTRACT_INPUT_BYTES {
        return Err(format!(
            "{name} is larger than {MAX_EXTRACT_INPUT_BYTES} bytes; extract reads at most that much"
        ));
    }
    Ok(bytes)
}

fn extract(skills: &SkillDirs, file: Option<PathBuf>, out: &mut dyn Write) -> Result<u8, String> {
    let engine = engine(skills)?;
    let bytes = read_input(file)?;
    let extraction = engine.extract_bytes(&bytes).map_err(|e| e.to_string())?;
    let mut failed = extraction.unterminated().next().is_some();
    let routes = (!skills.is_empty()).then(|| {
        extraction
            .commands()
            .map(|c| {
                let route = engine.route(c.text, &Scope::model());
                failed |= route.is_error();
                RoutedShape {
                    line: c.line,
                    command: c.text,
                    route,
                }
            })
            .collect()
    });
    let shape = ExtractShape {
        extraction: ExtractionShape::from(&extraction),
        routes,
    };
    write_out(out, &pretty(&shape))?;
    Ok(u8::from(failed))
}
