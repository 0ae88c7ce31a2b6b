//! The pack report as one self-contained HTML page (`skill-server report --format html`):
//! the text report's sections, each under its own heading, after three pictures drawn as
//! inline SVG: each skill's share of the catalog budget, trigger-eval precision and recall
//! per skill, and the diagnostics and findings by code. The style sheet is inline and there
//! is no script and no outside reference, so the file opens offline from a pull request's
//! artefacts; like the text, the same pack renders the same bytes on every machine.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use skill_runtime::registry::CatalogFormat;
use skill_runtime::{Engine, Scope};

use crate::trigger_evals::{self, Results};
use crate::{Error, Pack, ReportConfig};

/// Width of a picture, in pixels.
const CHART_WIDTH: usize = 720;
/// Width of a picture's label column, in pixels.
const LABEL_WIDTH: usize = 240;
/// Height of one bar's row, in pixels.
const ROW_HEIGHT: usize = 20;

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;color:#1a1a1a;margin:0 auto;\
max-width:1100px;padding:1rem}h1{font-size:1.4rem}h2{font-size:1.15rem;border-bottom:2px solid \
#1a1a1a;margin-top:2rem}pre{background:#f4f4f4;padding:.6rem;overflow:auto;white-space:pre-wrap;\
font-size:.85rem}nav ol{columns:3}svg text{font:12px system-ui,sans-serif;fill:#1a1a1a}\
svg .track{fill:#f4f4f4;stroke:#ccc}svg .bar{fill:#2b5fa8}svg .bar2{fill:#7a4fa0}\
figure{margin:1rem 0}figcaption{font-weight:600;margin-bottom:.3rem}";

/// The report of the pack in `roots` as an HTML page (see the module docs); `roots` and
/// `config` as for [`report_with`](crate::report_with).
pub fn report_html<P: AsRef<Path>>(roots: &[P], config: &ReportConfig) -> Result<String, Error> {
    let pack = Pack::load(roots, config)?;
    let text = pack.text(config)?;
    let evals = trigger_evals::results(&pack.engine, config.profile.clone())?;
    let mut out = String::new();
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>Skill pack report</title>\n");
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    out.push_str("<h1>Skill pack report</h1>\n");
    let (head, sections) = split_sections(&text);
    let _ = writeln!(out, "<pre>{}</pre>", escape(head.trim()));
    out.push_str(
        "<nav aria-label=\"Sections\"><ol>\n<li><a href=\"#pictures\">pictures</a></li>\n",
    );
    for (i, (title, _)) in sections.iter().enumerate() {
        let _ = writeln!(out, "<li><a href=\"#s{i}\">{}</a></li>", escape(title));
    }
    out.push_str("</ol></nav>\n<section id=\"pictures\">\n<h2>pictures</h2>\n");
    out.push_str(&budget_picture(&pack.engine, config));
    out.push_str(&evals_picture(&evals));
    out.push_str(&codes_picture(&pack.engine));
    out.push_str("</section>\n");
    for (i, (title, body)) in sections.iter().enumerate() {
        let _ = writeln!(
            out,
            "<section id=\"s{i}\">\n<h2>{}</h2>\n<pre>{}</pre>\n</section>",
            escape(title),
            escape(body.trim_matches('\n'))
        );
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

/// The text before the first `== title ==` line, and each section's title and text.
fn split_sections(text: &str) -> (&str, Vec<(&str, &str)>) {
    let mut head_end = text.len();
    let mut starts: Vec<(usize, usize, &str)> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if let Some(title) = bare.strip_prefix("== ").and_then(|t| t.strip_suffix(" ==")) {
            if starts.is_empty() {
                head_end = at;
            }
            starts.push((at, at + line.len(), title));
        }
        at += line.len();
    }
    let sections = starts
        .iter()
        .enumerate()
        .map(|(i, &(_, body_start, title))| {
            let end = starts.get(i + 1).map_or(text.len(), |next| next.0);
            (title, &text[body_start..end])
        })
        .collect();
    (&text[..head_end], sections)
}

/// Each listed skill's characters in the markdown catalog, against the budget.
fn budget_picture(engine: &Engine, config: &ReportConfig) -> String {
    let scope = Scope::model().with_profile(config.profile.clone());
    let catalog = engine
        .catalog(CatalogFormat::Markdown, &config.budget, &scope)
        .catalog;
    let report = &catalog.report;
    let mut sizes: BTreeMap<&str, usize> =
        report.included.iter().map(|n| (n.as_str(), 0)).collect();
    for line in catalog.text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("- ") else {
            continue;
        };
        let name = rest.split([':', ' ']).next().unwrap_or("");
        if let Some(size) = sizes.get_mut(name) {
            *size += line.chars().count() + 1;
        }
    }
    let budget = report.budget_chars.max(1);
    // Bars are scaled to the largest entry (a share of a large budget would be a sliver);
    // the text beside each gives its share of the budget.
    let largest = sizes.values().copied().max().unwrap_or(1).max(1);
    let rows: Vec<Bar> = report
        .included
        .iter()
        .map(|n| {
            let chars = sizes.get(n.as_str()).copied().unwrap_or(0);
            let cut = if report.truncated.contains(n) {
                ", cut"
            } else {
                ""
            };
            Bar {
                label: n.clone(),
                value: chars as f64 / largest as f64,
                text: format!(
                    "{chars} chars ({:.1}%{cut})",
                    100.0 * chars as f64 / budget as f64
                ),
                class: "bar",
            }
        })
        .collect();
    let caption = format!(
        "Catalog budget: {} of {} characters, {} of {} skills listed, {} cut short, {} left out{} (bars to the largest entry)",
        report.used_chars,
        report.budget_chars,
        report.included.len(),
        report.candidates,
        report.truncated.len(),
        report.omitted.len(),
        if report.omitted.is_empty() {
            String::new()
        } else {
            format!(" ({})", report.omitted.join(", "))
        }
    );
    figure(&caption, &rows)
}

/// Trigger-eval precision and recall per skill.
fn evals_picture(evals: &Results) -> String {
    let mut rows = Vec::new();
    for (name, report) in evals {
        let Ok(r) = report else {
            continue;
        };
        for (what, value, class) in [
            ("precision", r.precision(), "bar"),
            ("recall", r.recall(), "bar2"),
        ] {
            rows.push(Bar {
                label: format!("{name} {what}"),
                value: value.unwrap_or(0.0),
                text: value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}")),
                class,
            });
        }
    }
    if rows.is_empty() {
        return "<figure>\n<figcaption>Trigger evals</figcaption>\n<p>No skill of this pack keeps a trigger eval.</p>\n</figure>\n".to_owned();
    }
    figure("Trigger evals: precision and recall per skill", &rows)
}

/// Diagnostics and scan findings, counted by code.
fn codes_picture(engine: &Engine) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for d in engine.diagnostics().diagnostics.iter() {
        *counts.entry(d.code.as_str().to_owned()).or_default() += 1;
    }
    for (_, d) in engine.findings() {
        *counts.entry(d.code.as_str().to_owned()).or_default() += 1;
    }
    if counts.is_empty() {
        return "<figure>\n<figcaption>Diagnostics and findings by code</figcaption>\n<p>None.</p>\n</figure>\n".to_owned();
    }
    let most = counts.values().copied().max().unwrap_or(1).max(1);
    let rows: Vec<Bar> = counts
        .iter()
        .map(|(code, &n)| Bar {
            label: code.clone(),
            value: n as f64 / most as f64,
            text: n.to_string(),
            class: "bar",
        })
        .collect();
    figure("Diagnostics and findings by code", &rows)
}

/// One bar of a picture: `value` from 0 to 1, `text` written beside it.
struct Bar {
    label: String,
    value: f64,
    text: String,
    class: &'static str,
}

/// A captioned horizontal bar chart; every value is also written as text, so it reads
/// without colour and without the picture.
fn figure(caption: &str, rows: &[Bar]) -> String {
    let track = CHART_WIDTH - LABEL_WIDTH - 160;
    let height = ROW_HEIGHT * rows.len() + 4;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<figure>\n<figcaption>{}</figcaption>\n<svg width=\"{CHART_WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{}\">",
        escape(caption),
        escape(caption)
    );
    for (i, bar) in rows.iter().enumerate() {
        let y = i * ROW_HEIGHT + 2;
        let filled = (bar.value.clamp(0.0, 1.0) * track as f64).round() as usize;
        let _ = writeln!(
            out,
            "<text x=\"0\" y=\"{}\">{}</text><rect class=\"track\" x=\"{LABEL_WIDTH}\" y=\"{y}\" width=\"{track}\" height=\"{}\"/><rect class=\"{}\" x=\"{LABEL_WIDTH}\" y=\"{y}\" width=\"{filled}\" height=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            y + 13,
            escape(&bar.label),
            ROW_HEIGHT - 4,
            bar.class,
            ROW_HEIGHT - 4,
            LABEL_WIDTH + track + 8,
            y + 13,
            escape(&bar.text)
        );
    }
    out.push_str("</svg>\n</figure>\n");
    out
}

/// `text` with `&`, `<`, `>` and `"` escaped for HTML text and attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("packs")
            .join(name)
    }

    #[test]
    fn the_actions_pack_renders_as_one_page() {
        let html = report_html(&[pack("actions")], &ReportConfig::default());
        let html = html.unwrap_or_else(|e| e.to_string());
        insta::assert_snapshot!(html);
    }

    #[test]
    fn the_page_has_every_section_of_the_text_and_no_outside_reference() {
        let config = ReportConfig::default();
        let text = crate::report_with(&[pack("agentskills")], &config).unwrap_or_default();
        let html = report_html(&[pack("agentskills")], &config).unwrap_or_default();
        let (_, sections) = split_sections(&text);
        assert!(sections.len() > 5);
        for (title, _) in sections {
            assert!(
                html.contains(&format!("<h2>{}</h2>", escape(title))),
                "{title}"
            );
        }
        assert!(
            html.contains("meeting-notes precision"),
            "the trigger-eval picture"
        );
        for outside in ["http://", "https://", "<script", "src="] {
            assert!(!html.contains(outside), "{outside}");
        }
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn sections_split_at_their_titles() {
        let (head, sections) = split_sections("# r\nx\n\n== a (1) ==\n\none\n\n== b ==\n\ntwo\n");
        assert_eq!(head, "# r\nx\n\n");
        assert_eq!(sections, vec![("a (1)", "\none\n\n"), ("b", "\ntwo\n")]);
    }
}
