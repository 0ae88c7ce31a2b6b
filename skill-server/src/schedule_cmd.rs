//! `schedules`: each scheduled skill's next fire times, from the skill-scheduler crate.

use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;

use crate::Format;
use serde_json::json;
use skill_scheduler::{DateTime, Tz, Utc, parse_timezone, scheduled_skills};

use crate::commands::{load_layers, write_out};

/// Fire times listed per skill unless `--next` says otherwise.
const DEFAULT_NEXT: usize = 5;

/// Most fire times `--next` may ask for per skill.
pub const MAX_NEXT: usize = 1000;

/// The subcommands this module adds.
#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Print every scheduled skill's next fire times (crontab(5) `schedule:` fields).
    /// Skills whose schedule does not parse are reported with the column of the problem,
    /// and the exit code is 1.
    Schedules {
        /// A skills folder; repeat for layers, lowest precedence first.
        #[arg(long = "skills", required = true)]
        skills: Vec<PathBuf>,
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
pub fn run(command: Commands, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match command {
        Commands::Schedules {
            skills,
            next,
            tz,
            from,
            format,
        } => schedules(&skills, next, &tz, from.as_deref(), format, out, err),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            2
        }
    }
}

fn schedules(
    skills: &[PathBuf],
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
    let registry = load_layers(skills)?;
    let snapshot = registry.snapshot();
    let (jobs, diagnostics) = scheduled_skills(&snapshot);
    let rows: Vec<Row> = jobs
        .iter()
        .map(|j| Row {
            name: j.skill.name.clone(),
            schedule: j.schedule.as_str().to_owned(),
            path: j.skill.path.display().to_string(),
            next: j.schedule.upcoming(from, zone, next),
        })
        .collect();
    let text = match format {
        Format::Json => json_text(&rows, &diagnostics, zone, from),
        Format::Text => {
            for d in &diagnostics {
                let _ = writeln!(err, "{d}");
            }
            plain_text(&rows, zone, from, next)
        }
    };
    write_out(out, &text)?;
    Ok(if diagnostics.is_empty() { 0 } else { 1 })
}

struct Row {
    name: String,
    schedule: String,
    path: String,
    next: Vec<DateTime<Utc>>,
}

fn rfc3339(t: DateTime<Utc>, zone: Tz) -> String {
    t.with_timezone(&zone)
        .to_rfc3339_opts(skill_scheduler::SecondsFormat::Secs, true)
}

fn plain_text(rows: &[Row], zone: Tz, from: DateTime<Utc>, next: usize) -> String {
    let mut t = format!(
        "{} scheduled skill{} in {}, next {} fire time{} after {}\n",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        zone.name(),
        next,
        if next == 1 { "" } else { "s" },
        rfc3339(from, zone),
    );
    for r in rows {
        t.push_str(&format!("\n{}  {}  {}\n", r.name, r.schedule, r.path));
        if r.next.is_empty() && next > 0 {
            t.push_str("  (no fire time within the search horizon)\n");
        }
        for at in &r.next {
            let local = at.with_timezone(&zone);
            t.push_str(&format!(
                "  {}  {}\n",
                local.format("%a %Y-%m-%d %H:%M:%S %Z"),
                rfc3339(*at, Tz::UTC)
            ));
        }
    }
    t
}

fn json_text(
    rows: &[Row],
    diagnostics: &[skill_format::Diagnostic],
    zone: Tz,
    from: DateTime<Utc>,
) -> String {
    let value = json!({
        "timezone": zone.name(),
        "from": rfc3339(from, zone),
        "schedules": rows.iter().map(|r| json!({
            "name": r.name,
            "schedule": r.schedule,
            "path": r.path,
            "next": r.next.iter().map(|t| rfc3339(*t, zone)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "diagnostics": diagnostics,
    });
    format!("{value:#}\n")
}
