//! The results table: one row per measurement, printed with aligned columns.

use std::fmt::Write as _;
use std::time::Duration;

/// What a measured row is compared with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// The row is the baseline of the rows after it.
    Baseline,
    /// The row's time may be at most this many times its baseline's.
    MaxRatio(f64),
    /// The row's time may be at most this long (an absolute target; no baseline).
    MaxTime(Duration),
    /// A figure reported for information, with no target.
    Info,
}

/// One measurement.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Items processed per run (files, skills).
    pub items: usize,
    /// Bytes processed per run (for MB/s).
    pub bytes: u64,
    /// Median time of one run.
    pub median: Duration,
    /// Baseline comparison.
    pub target: Target,
    /// This row's median over its baseline's, when it has one.
    pub ratio: Option<f64>,
}

#[derive(Debug, Clone)]
enum Outcome {
    Measured(Measured),
    Skipped(String),
    Error(String),
}

#[derive(Debug, Clone)]
struct Row {
    name: String,
    outcome: Outcome,
}

/// Rows and free-form notes, printed as one table.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Row>,
    notes: Vec<String>,
}

const HEADERS: [&str; 7] = [
    "benchmark",
    "items",
    "median time",
    "items/s",
    "MB/s",
    "ratio vs baseline",
    "target",
];

impl Table {
    /// An empty table.
    pub fn new() -> Self {
        Table::default()
    }

    /// Add a baseline row; returns its median for the rows compared with it.
    pub fn baseline(&mut self, name: &str, items: usize, bytes: u64, median: Duration) -> Duration {
        self.push(
            name,
            Outcome::Measured(Measured {
                items,
                bytes,
                median,
                target: Target::Baseline,
                ratio: None,
            }),
        );
        median
    }

    /// Add a row compared with `baseline`, whose time should be at most `max_ratio` times it.
    pub fn compared(
        &mut self,
        name: &str,
        items: usize,
        bytes: u64,
        median: Duration,
        baseline: Duration,
        max_ratio: f64,
    ) {
        let ratio = (!baseline.is_zero()).then(|| median.as_secs_f64() / baseline.as_secs_f64());
        self.push(
            name,
            Outcome::Measured(Measured {
                items,
                bytes,
                median,
                target: Target::MaxRatio(max_ratio),
                ratio,
            }),
        );
    }

    /// Add a row with an absolute time target (`None`: reported for information only).
    pub fn absolute(
        &mut self,
        name: &str,
        items: usize,
        bytes: u64,
        median: Duration,
        max: Option<Duration>,
    ) {
        self.push(
            name,
            Outcome::Measured(Measured {
                items,
                bytes,
                median,
                target: max.map_or(Target::Info, Target::MaxTime),
                ratio: None,
            }),
        );
    }

    /// Add a row for a benchmark that did not run, and why (not a failure).
    pub fn skipped(&mut self, name: &str, why: impl Into<String>) {
        self.push(name, Outcome::Skipped(why.into()));
    }

    /// Add a row for a benchmark that failed (the command then exits non-zero).
    pub fn error(&mut self, name: &str, why: impl Into<String>) {
        self.push(name, Outcome::Error(why.into()));
    }

    /// Add a line printed under the table.
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// Whether any row is an error.
    pub fn has_errors(&self) -> bool {
        self.rows
            .iter()
            .any(|r| matches!(r.outcome, Outcome::Error(_)))
    }

    fn push(&mut self, name: &str, outcome: Outcome) {
        self.rows.push(Row {
            name: name.to_owned(),
            outcome,
        });
    }

    /// The table as text: header, rule, rows (right-aligned numbers), then the notes.
    pub fn render(&self) -> String {
        let cells: Vec<Result<[String; 7], (String, String)>> = self
            .rows
            .iter()
            .map(|row| match &row.outcome {
                Outcome::Measured(m) => Ok(measured_cells(&row.name, m)),
                Outcome::Skipped(why) => Err((row.name.clone(), format!("skipped: {why}"))),
                Outcome::Error(why) => Err((row.name.clone(), format!("ERROR: {why}"))),
            })
            .collect();
        let mut widths = HEADERS.map(str::len);
        for c in &cells {
            match c {
                Ok(cols) => {
                    for (w, col) in widths.iter_mut().zip(cols) {
                        *w = (*w).max(col.chars().count());
                    }
                }
                Err((name, _)) => widths[0] = widths[0].max(name.chars().count()),
            }
        }
        let mut out = String::new();
        let header: Vec<String> = HEADERS
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (h, w))| align(h, w, i))
            .collect();
        let _ = writeln!(out, "{}", header.join("  ").trim_end());
        let total: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
        let _ = writeln!(out, "{}", "-".repeat(total));
        for c in &cells {
            match c {
                Ok(cols) => {
                    let line: Vec<String> = cols
                        .iter()
                        .zip(widths)
                        .enumerate()
                        .map(|(i, (col, w))| align(col, w, i))
                        .collect();
                    let _ = writeln!(out, "{}", line.join("  ").trim_end());
                }
                Err((name, text)) => {
                    let _ = writeln!(out, "{}  {text}", align(name, widths[0], 0));
                }
            }
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        out
    }
}

/// Column `i` left-aligned for text (name, target) and right-aligned for numbers.
fn align(text: &str, width: usize, i: usize) -> String {
    if i == 0 || i == 6 {
        format!("{text:<width$}")
    } else {
        format!("{text:>width$}")
    }
}

fn measured_cells(name: &str, m: &Measured) -> [String; 7] {
    let secs = m.median.as_secs_f64();
    let per_sec = |x: f64| if secs > 0.0 { x / secs } else { f64::INFINITY };
    let ratio = match (m.target, m.ratio) {
        (Target::Baseline, _) => "1.00x".to_owned(),
        (Target::MaxRatio(_), Some(r)) => format!("{r:.2}x"),
        (Target::MaxRatio(_), None) | (Target::MaxTime(_) | Target::Info, _) => "n/a".to_owned(),
    };
    let target = match (m.target, m.ratio) {
        (Target::Baseline, _) => "baseline".to_owned(),
        (Target::MaxRatio(t), _) if t.is_infinite() => String::new(),
        (Target::MaxRatio(t), Some(r)) if r <= t => format!("<= {t:.2}x ok"),
        (Target::MaxRatio(t), Some(_)) => format!("<= {t:.2}x MISSED"),
        (Target::MaxRatio(t), None) => format!("<= {t:.2}x"),
        (Target::MaxTime(t), _) if m.median <= t => {
            format!("<= {:.2} ms ok", t.as_secs_f64() * 1e3)
        }
        (Target::MaxTime(t), _) => format!("<= {:.2} ms MISSED", t.as_secs_f64() * 1e3),
        (Target::Info, _) => String::new(),
    };
    [
        name.to_owned(),
        m.items.to_string(),
        format!("{:.2} ms", secs * 1e3),
        format!("{:.0}", per_sec(m.items as f64)),
        format!("{:.1}", per_sec(m.bytes as f64 / 1e6)),
        ratio,
        target,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_rows_skips_errors_and_ratio() {
        let mut t = Table::new();
        let base = t.baseline("a", 10, 2_000_000, Duration::from_millis(100));
        t.compared("b", 10, 2_000_000, Duration::from_millis(150), base, 1.25);
        t.skipped("c", "no corpus");
        t.error("d", "boom");
        t.absolute(
            "e",
            1,
            0,
            Duration::from_millis(3),
            Some(Duration::from_millis(5)),
        );
        t.absolute(
            "f",
            1,
            0,
            Duration::from_millis(6),
            Some(Duration::from_millis(5)),
        );
        t.note("hello");
        let text = t.render();
        assert!(text.contains("1.50x"), "{text}");
        assert!(text.contains("<= 1.25x MISSED"), "{text}");
        assert!(text.contains("skipped: no corpus"), "{text}");
        assert!(text.contains("ERROR: boom"), "{text}");
        assert!(text.contains("note: hello"), "{text}");
        assert!(text.contains("<= 5.00 ms ok"), "{text}");
        assert!(text.contains("<= 5.00 ms MISSED"), "{text}");
        assert!(text.contains("20.0"), "MB/s of the baseline: {text}");
        assert!(t.has_errors());
    }
}
