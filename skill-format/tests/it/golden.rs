//! Golden tests of [`parse_skill`]: every file in `test_data/` is parsed and the result
//! (what the file resolved to, the manifest's set fields, the body's man-page sections and
//! flag schema, and every diagnostic) is compared with its snapshot in `snapshots/`.
//!
//! A file's name says how it is parsed: `STEM[.OPTION]*.md`, where each option is `strict`
//! (strict mode; lenient otherwise), a dialect name (forces the dialect; detected
//! otherwise), `action` (an actions file: `DOMAIN__ACTION` is the stem) or `note` (a note in
//! a notes folder). Without `action` or `note` the file is `STEM/SKILL.md`.
//!
//! Add a case by adding a file; accept its snapshot with `INSTA_UPDATE=always cargo test -p
//! skill-format` (or `cargo insta review`), and read it before committing.

use std::fmt::Write as _;
use std::path::Path;

use skill_format::sections::{self, FlagSchema};
use skill_format::{Dialect, Mode, Origin, ParseOptions, SkillFile, parse_skill};

#[test]
fn parse() {
    insta::glob!("../../test_data", "*.md", |path| {
        let bytes = std::fs::read(path).unwrap();
        let opts = options(path);
        let file = parse_skill(&bytes, &opts);
        insta::assert_snapshot!(render(&opts, &file));
    });
}

/// The options a test file's name asks for.
fn options(path: &Path) -> ParseOptions {
    let name = path.file_name().unwrap().to_str().unwrap();
    let name = name.strip_suffix(".md").unwrap();
    let mut parts = name.split('.');
    let stem = parts.next().unwrap();
    let mut mode = Mode::Lenient;
    let mut dialect = None;
    let mut place = "folder";
    for option in parts {
        match option {
            "strict" => mode = Mode::Strict,
            "action" | "note" => place = option,
            other => dialect = Some(other.parse::<Dialect>().unwrap()),
        }
    }
    let (file, origin) = match place {
        "action" => {
            let (domain, action) = stem.split_once("__").unwrap();
            (
                format!("{domain}/{action}.md"),
                Origin::Action {
                    domain: domain.to_owned(),
                    action: action.to_owned(),
                },
            )
        }
        "note" => (
            format!("notes/{stem}.md"),
            Origin::Note {
                stem: stem.to_owned(),
            },
        ),
        _ => (format!("{stem}/SKILL.md"), Origin::folder(stem)),
    };
    ParseOptions {
        path: file.into(),
        origin,
        dialect,
        mode,
    }
}

/// The parse result as text: a few lines of what it resolved to, then the manifest's set
/// fields, the body's sections and flags, and the diagnostics.
fn render(opts: &ParseOptions, file: &SkillFile) -> String {
    let mut out = String::new();
    let asked = opts.dialect.map_or("detect".to_owned(), |d| d.to_string());
    writeln!(out, "options: {:?}, dialect {asked}", opts.mode).unwrap();
    writeln!(out, "dialect: {}", file.dialect).unwrap();
    writeln!(out, "kind: {:?}", file.kind).unwrap();
    writeln!(out, "loadable: {}", file.is_loadable()).unwrap();
    writeln!(out, "name: {}", file.name).unwrap();
    writeln!(out, "description: {}", file.description).unwrap();
    if file.dialect == Dialect::Toolsets {
        writeln!(out, "brief: {}", file.brief()).unwrap();
    }
    writeln!(
        out,
        "body: line {}, {} lines, {} bytes",
        file.body_line,
        file.body.lines().count(),
        file.body.len()
    )
    .unwrap();
    writeln!(out, "manifest:").unwrap();
    for line in set_fields(&format!("{:#?}", file.manifest)) {
        writeln!(out, "  {line}").unwrap();
    }
    let found = sections::sections(&file.body);
    if !found.is_empty() {
        let list: Vec<String> = found
            .iter()
            .map(|s| format!("{:?}@{}", s.kind, s.heading_line))
            .collect();
        writeln!(out, "sections: {}", list.join(", ")).unwrap();
    }
    if let Some(usage) = sections::usage_line(&file.body) {
        writeln!(out, "usage: {usage}").unwrap();
    }
    for example in sections::example_lines(&file.body) {
        writeln!(out, "example: {}", example.text).unwrap();
    }
    if let Some(schema) = sections::flag_schema(&file.body) {
        render_flags(&mut out, &schema);
    }
    writeln!(out, "diagnostics:").unwrap();
    for d in &file.diagnostics {
        writeln!(out, "  {d}").unwrap();
    }
    out
}

fn render_flags(out: &mut String, schema: &FlagSchema) {
    for f in &schema.flags {
        writeln!(out, "flag: {f:?}").unwrap();
    }
}

/// The lines of a pretty-printed manifest that say something: fields left at their default
/// (`None`, empty lists and maps, empty triggers) are dropped.
fn set_fields(debug: &str) -> Vec<&str> {
    let lines: Vec<&str> = debug.lines().collect();
    let inner = &lines[1..lines.len().saturating_sub(1)];
    let mut kept = Vec::new();
    let mut i = 0;
    while i < inner.len() {
        let line = inner[i];
        let t = line.trim();
        let empty = t.ends_with(": None,") || t.ends_with(": [],") || t.ends_with(": {},");
        let empty_triggers = t == "triggers: Triggers {"
            && inner[i + 1..]
                .iter()
                .take_while(|l| l.trim() != "},")
                .all(|l| l.trim().ends_with(": [],"));
        if empty_triggers {
            while inner[i].trim() != "}," {
                i += 1;
            }
        } else if !empty {
            kept.push(line.strip_prefix("    ").unwrap_or(line));
        }
        i += 1;
    }
    kept
}
