//! `schedules`: each scheduled skill's next fire times, from the skill-scheduler crate.

use std::io::Write;

use clap::Subcommand;

use crate::Format;
use skill_runtime::scheduler::{DateTime, LAST_YEAR, Tz, Utc, parse_timezone};
use skill_runtime::wire::{SchedulesShape, pretty, rfc3339};
use skill_runtime::{ScheduleQuery, Schedules};

use crate::commands::{engine, write_out};

/// Fire times listed per skill unless `--next` says otherwise.
const DEFAULT_NEXT: usize = 5;

/// Most fire times `--next` may ask for per skill.
pub(crate) const MAX_NEXT: usize = 1000;

/// The subcommands this module adds.
#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Print every scheduled skill's next fire times (crontab(5) `schedule:` fields).
    /// Skills whose schedule does not parse are reported with the column of the problem,
    /// and the exit code is 1.
    #[command(mut_arg("skills", |a| a.required(true)))]
    Schedules {
        #[command(flatten)]
        skills: crate::skills_arg::SkillDirs,
        /// How many fire times to list per skill (at most 1000).
        #[arg(long, default_value_t = DEFAULT_NEXT)]
        next: usize,
        /// The IANA time zone schedules are read in.
        #[arg(long, default_value = "UTC")]
        tz: String,
        /// List fire times after this instant (RFC 3339, e.g. 2026-11-20T12:00:00Z)
        /// instead of now.
        #[arg(long)]
        from: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

/// Run one of this module's subcommands; returns the exit code.
pub(crate) fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match command {
        Commands::Schedules {
            skills,
            next,
            tz,
            from,
            format,
        } => schedules(&skills, next, &tz, from.as_deref(), format, out, err),
    };
    crate::commands::exit_code(result, err)
}

fn schedules(
    skills: &crate::skills_arg::SkillDirs,
    next: usize,
    tz: &str,
    from: Option<&str>,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, String> {
    if next > MAX_NEXT {
        return Err(format!("--next {next} is more than {MAX_NEXT}"));
    }
    let zone = parse_timezone(tz).map_err(|e| e.to_string())?;
    let from: DateTime<Utc> = match from {
        None => Utc::now(),
        Some(text) => DateTime::parse_from_rfc3339(text)
            .map_err(|e| {
                format!(
                    "--from `{text}` is not an RFC 3339 instant such as 2026-11-20T12:00:00Z ({e})"
                )
            })?
            .with_timezone(&Utc),
    };
    let engine = engine(skills)?;
    let listing = engine.schedules(&ScheduleQuery {
        next,
        timezone: Some(zone),
        from: Some(from),
    });
    let text = match format {
        Format::Json => pretty(&SchedulesShape::from(&listing)),
        Format::Text => {
            for d in &listing.diagnostics {
                let _ = writeln!(err, "{d}");
            }
            plain_text(&listing, next)
        }
    };
    write_out(out, &text)?;
    Ok(if listing.diagnostics.is_empty() { 0 } else { 1 })
}

fn plain_text(listing: &Schedules, next: usize) -> String {
    let zone = listing.timezone;
    let rows = &listing.schedules;
    let mut t = format!(
        "{} scheduled skill{} in {}, next {} fire time{} after {}\n",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        zone.name(),
        next,
        if next == 1 { "" } else { "s" },
        rfc3339(&listing.from, zone),
    );
    for r in rows {
        t.push_str(&format!(
            "\n{}  {}  {}\n",
            r.skill,
            r.expression,
            r.path.display()
        ));
        if r.next.is_empty() && next > 0 {
            t.push_str(&format!(
                "  (no fire time before the scheduler's calendar ends, with {LAST_YEAR})\n"
            ));
        }
        for at in &r.next {
            let local = at.with_timezone(&zone);
            t.push_str(&format!(
                "  {}  {}\n",
                local.format("%a %Y-%m-%d %H:%M:%S %Z"),
                rfc3339(at, Tz::UTC)
            ));
        }
        if !r.next.is_empty() && r.next.len() < next {
            t.push_str(&format!(
                "  (no further fire time: the scheduler's calendar ends with {LAST_YEAR})\n"
            ));
        }
    }
    t
}
