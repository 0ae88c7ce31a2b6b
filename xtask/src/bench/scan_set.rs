//! The labelled hostile set of `bench scan`: hand-written seeds (`xtask/data/scan-seeds.tsv`),
//! each turned programmatically into variants across markdown structures (wrapped lines,
//! backticks, quotes, tables, link titles, HTML comments, fenced blocks, list items),
//! character tricks (Cyrillic look-alikes, fullwidth forms, zero-width characters) and file
//! encodings (UTF-16 LE and BE, latin-1, a UTF-8 byte-order mark, in a resource file);
//! and what a scanner's run over it and the corpus comes to ([`Row`]).

use std::path::Path;
use std::process::Command;

use base64::Engine as _;

/// One hostile seed.
#[derive(Debug, Clone)]
pub struct Seed {
    /// Its family (`override`, `exfiltration`, ...).
    pub family: String,
    /// `tune` or `held`.
    pub half: String,
    /// The hostile text, unescaped.
    pub text: String,
}

/// One variant: a skill folder's files.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The seed's family.
    pub family: String,
    /// The seed's half.
    pub half: String,
    /// The transform's name.
    pub transform: &'static str,
    /// The seed's text.
    pub seed: String,
    /// `SKILL.md`'s bytes.
    pub skill: Vec<u8>,
    /// A resource (`references/notes.md`) and its bytes, when the transform uses one.
    pub resource: Option<Vec<u8>>,
}

/// Read the seeds file.
pub fn seeds(path: &Path) -> Result<Vec<Seed>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut parts = line.splitn(3, '\t');
        let (Some(family), Some(half), Some(raw)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(format!(
                "{}:{}: want FAMILY<TAB>HALF<TAB>TEXT",
                path.display(),
                i + 1
            ));
        };
        if half != "tune" && half != "held" {
            return Err(format!(
                "{}:{}: half must be tune or held",
                path.display(),
                i + 1
            ));
        }
        let text = unescape(raw).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        out.push(Seed {
            family: family.to_owned(),
            half: half.to_owned(),
            text,
        });
    }
    Ok(out)
}

/// `\n`, `\t`, `\u{...}` and `{b64:...}` as the seeds file's header says.
fn unescape(raw: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = raw;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("{b64:") {
            let end = after.find('}').ok_or("an unclosed {b64:")?;
            let inner = unescape(&after[..end])?;
            out.push_str(&base64::engine::general_purpose::STANDARD.encode(inner.as_bytes()));
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix("\\u{") {
            let end = after.find('}').ok_or("an unclosed \\u{")?;
            let n = u32::from_str_radix(&after[..end], 16).map_err(|e| e.to_string())?;
            out.push(char::from_u32(n).ok_or("not a character")?);
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix("\\n") {
            out.push('\n');
            rest = after;
        } else if let Some(after) = rest.strip_prefix("\\t") {
            out.push('\t');
            rest = after;
        } else {
            let c = rest.chars().next().ok_or("empty")?;
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Ok(out)
}

/// The transforms, each a name and what it makes of a seed's text (`None`: not for this
/// family).
type Transform = (
    &'static str,
    fn(&str, &str) -> Option<(String, Option<Vec<u8>>)>,
);

const TRANSFORMS: &[Transform] = &[
    ("plain", |t, _| Some((t.to_owned(), None))),
    ("wrapped", |t, f| {
        (f != "encoded").then(|| {
            let words: Vec<&str> = t.split(' ').collect();
            let half = words.len() / 2;
            (
                format!("{}\n{}", words[..half].join(" "), words[half..].join(" ")),
                None,
            )
        })
    }),
    ("backticks", |t, _| {
        Some((format!("Run `{t}` first."), None))
    }),
    ("quoted-line", |t, _| Some((format!("\"{t}\""), None))),
    ("blockquote", |t, _| Some((format!("> {t}"), None))),
    ("list-item", |t, _| {
        Some((format!("1. Open the project.\n2. {t}"), None))
    }),
    ("table-row", |t, _| {
        Some((
            format!(
                "| Step | Action |\n| --- | --- |\n| 1 | {} |",
                t.replace('|', "\\|")
            ),
            None,
        ))
    }),
    ("link-title", |t, _| {
        Some((
            format!(
                "See [the guide](https://docs.example.com/guide \"{}\").",
                t.replace('"', "'")
            ),
            None,
        ))
    }),
    ("html-comment", |t, _| Some((format!("<!-- {t} -->"), None))),
    ("fence", |t, _| {
        Some((format!("## Usage\n\n```\n{t}\n```"), None))
    }),
    ("lookalikes", |t, f| {
        (f != "encoded").then(|| (lookalikes(t), None))
    }),
    ("fullwidth", |t, f| {
        (f != "encoded").then(|| (fullwidth(t), None))
    }),
    ("utf16le-resource", |t, _| {
        Some((pointer(), Some(utf16(t, true))))
    }),
    ("utf16be-resource", |t, _| {
        Some((pointer(), Some(utf16(t, false))))
    }),
    ("latin1-resource", |t, _| {
        // Only text latin-1 can hold (a hidden character would be lost, not hidden).
        if t.chars().any(|c| u32::from(c) > 0xff) {
            return None;
        }
        let mut bytes = b"Caf\xe9 notes.\n\n".to_vec();
        bytes.extend(
            t.chars()
                .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')),
        );
        Some((pointer(), Some(bytes)))
    }),
    ("bom-resource", |t, _| {
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend_from_slice(t.as_bytes());
        Some((pointer(), Some(bytes)))
    }),
];

/// A skill body that points at its resource.
fn pointer() -> String {
    "Read references/notes.md before you start.".to_owned()
}

fn utf16(t: &str, little: bool) -> Vec<u8> {
    let mut out = if little {
        vec![0xff, 0xfe]
    } else {
        vec![0xfe, 0xff]
    };
    for u in t.encode_utf16() {
        out.extend_from_slice(&if little {
            u.to_le_bytes()
        } else {
            u.to_be_bytes()
        });
    }
    out
}

/// Cyrillic letters for the Latin ones they look like (a, c, e, o, p, x, y, i).
fn lookalikes(t: &str) -> String {
    t.chars()
        .map(|c| match c {
            'a' => 'а',
            'c' => 'с',
            'e' => 'е',
            'o' => 'о',
            'p' => 'р',
            'x' => 'х',
            'y' => 'у',
            'i' => 'і',
            _ => c,
        })
        .collect()
}

/// Fullwidth forms of the ASCII letters and digits.
fn fullwidth(t: &str) -> String {
    t.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                char::from_u32(u32::from(c) - 0x21 + 0xff01).unwrap_or(c)
            } else {
                c
            }
        })
        .collect()
}

/// Every variant of every seed.
pub fn variants(seeds: &[Seed]) -> Vec<Variant> {
    let mut out = Vec::new();
    for seed in seeds {
        for (name, make) in TRANSFORMS {
            let Some((body, resource)) = make(&seed.text, &seed.family) else {
                continue;
            };
            let skill = format!(
                "---\nname: NAME\ndescription: Formats project notes and tidies the changelog for a release.\n---\n# Notes\n\nThis skill keeps release notes tidy.\n\n{body}\n"
            );
            out.push(Variant {
                family: seed.family.clone(),
                half: seed.half.clone(),
                transform: name,
                seed: seed.text.clone(),
                skill: skill.into_bytes(),
                resource,
            });
        }
    }
    out
}

/// What one scanner made of the hostile set and the corpus.
pub(super) struct Row {
    /// The scanner.
    pub(super) name: String,
    /// Per variant index: (flagged, caught at error level); `None` when it did not run.
    pub(super) hostile: Option<Vec<(bool, bool)>>,
    /// Corpus skills flagged at error level, and how many it judged.
    pub(super) corpus: Option<(Vec<String>, usize)>,
    /// Why it did not run, or what it ran as.
    pub(super) note: String,
}

/// The folder and skill name of variant `i`.
pub(super) fn variant_name(i: usize) -> String {
    format!("hostile-{i:04}")
}

/// Run a command, its standard output as text, or why it failed.
pub(super) fn output(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    if !out.status.success() && out.stdout.is_empty() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!("{:?} failed: {last}", cmd.get_program()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn escapes_unescape() {
        assert_eq!(
            unescape("a\\nb\\u{200b}{b64:hi}").unwrap(),
            "a\nb\u{200b}aGk="
        );
        assert!(unescape("{b64:open").is_err());
    }

    #[test]
    fn the_set_has_at_least_400_variants_in_every_family() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/scan-seeds.tsv");
        let seeds = seeds(&path).unwrap();
        let all = variants(&seeds);
        assert!(all.len() >= 400, "{}", all.len());
        for family in [
            "override",
            "exfiltration",
            "pipe",
            "hidden",
            "encoded",
            "tool",
            "credential",
        ] {
            assert!(
                all.iter().filter(|v| v.family == family).count() >= 40,
                "{family}"
            );
        }
        assert!(seeds.iter().any(|s| s.half == "held") && seeds.iter().any(|s| s.half == "tune"));
    }
}
