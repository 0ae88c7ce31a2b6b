//! Unit tests of trigger matching: keywords, verbs and patterns, the trigger index against
//! trying every skill, pattern sets and their updates, and limits.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::text::stems_analyzer;

fn compiled(k: &[&str], v: &[&str], p: &[&str]) -> (Compiled, Vec<Diagnostic>) {
    let t = Triggers {
        keywords: k.iter().map(|s| s.to_string()).collect(),
        verbs: v.iter().map(|s| s.to_string()).collect(),
        patterns: p.iter().map(|s| s.to_string()).collect(),
    };
    Compiled::new(&t, Path::new("x/SKILL.md"), &mut stems_analyzer())
}

/// The hits of one skill through a trigger index, as search finds them.
fn indexed_hits(c: &Compiled, text: &str) -> Vec<TriggerHit> {
    let mut index = TriggerIndex::default();
    index.insert(7, c);
    index.finish();
    let probe = Probe::new(text, &mut stems_analyzer());
    let m = index.matches(&probe);
    m.get(7).map(|m| c.hits(m)).unwrap_or_default()
}

/// The hits of one skill found the slow way: every trigger tried on its own, by
/// scanning the request.
fn brute_hits(c: &Compiled, probe: &Probe<'_>) -> Vec<TriggerHit> {
    let scan = |list: &[(String, Vec<String>)], hay: &[String]| -> Vec<usize> {
        list.iter()
            .enumerate()
            .filter(|(_, (_, run))| crate::text::contains_run(hay, run))
            .map(|(i, _)| i)
            .collect()
    };
    let mut all: Vec<(u64, TriggerKind, usize)> = Vec::new();
    for i in scan(&c.keywords, &probe.words) {
        all.push((0, TriggerKind::Keyword, i));
    }
    for i in scan(&c.verbs, &probe.stems) {
        all.push((0, TriggerKind::Verb, i));
    }
    for (i, p) in c.patterns.iter().enumerate() {
        if compile_one(p).is_ok_and(|re| re.is_match(probe.text)) {
            all.push((0, TriggerKind::Pattern, i));
        }
    }
    c.hits(Matched(&all))
}

fn kinds(c: &Compiled, text: &str) -> Vec<(TriggerKind, String)> {
    indexed_hits(c, text)
        .into_iter()
        .map(|h| (h.kind, h.trigger))
        .collect()
}

#[test]
fn keywords_match_on_word_boundaries_case_insensitively() {
    let (c, d) = compiled(&["hello", "pull request"], &[], &[]);
    assert!(d.is_empty());
    assert_eq!(
        kinds(&c, "HELLO there"),
        [(TriggerKind::Keyword, "hello".into())]
    );
    assert!(
        kinds(&c, "othello is a play").is_empty(),
        "not inside a word"
    );
    assert_eq!(kinds(&c, "open a Pull-Request").len(), 1);
    assert!(kinds(&c, "request a pull").is_empty());
}

#[test]
fn verbs_match_inflections() {
    let (c, _) = compiled(&[], &["wave"], &[]);
    assert_eq!(kinds(&c, "she waved at me").len(), 1);
    assert_eq!(kinds(&c, "keep waving").len(), 1);
    assert!(kinds(&c, "a microwave oven").is_empty());
}

#[test]
fn patterns_are_case_insensitive_regexes() {
    let (c, _) = compiled(&[], &[], &[r"greet\s+\w+"]);
    assert_eq!(
        kinds(&c, "GREET   Bob"),
        [(TriggerKind::Pattern, r"greet\s+\w+".into())]
    );
    assert!(kinds(&c, "greetings").is_empty());
}

/// The diagnostics of an index holding `c` alone.
fn index_diagnostics(c: &Compiled) -> Vec<Diagnostic> {
    let mut index = TriggerIndex::default();
    index.insert(7, c);
    let mut d: Vec<Diagnostic> = index.diagnostics().cloned().collect();
    d.sort_by(|a, b| a.message.cmp(&b.message));
    d
}

#[test]
fn bad_patterns_are_diagnostics_not_crashes() {
    let (c, d) = compiled(&["ok"], &[], &["(unclosed", "a{1000}{1000}{1000}", "fine"]);
    assert!(d.is_empty());
    let d = index_diagnostics(&c);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d.iter().all(|d| d.code == Code::InvalidTriggerPattern));
    assert!(d.iter().any(|d| d.message.contains("(unclosed")));
    assert_eq!(kinds(&c, "fine ok").len(), 2);
}

#[test]
fn catastrophic_backtracking_shapes_run_in_linear_time() {
    let (c, d) = compiled(&[], &[], &["(a+)+$", "(x|x)*y"]);
    assert!(d.is_empty());
    let text = format!("{}!", "a".repeat(crate::MAX_QUERY_BYTES - 1));
    assert!(indexed_hits(&c, crate::text::clip(&text)).is_empty());
}

#[test]
fn the_trigger_index_finds_exactly_what_trying_every_skill_finds() {
    let mut skills = vec![
        compiled(&["pull request", "hello"], &[], &[]).0,
        compiled(&["pull request", "request", "hello"], &["wave"], &[]).0,
        compiled(&[], &["wave", "check in"], &[]).0,
        compiled(&[], &[], &[r"greet\s+\w+"]).0,
        compiled(&["invoice"], &["audit"], &[r"\d+\s*km", "(unclosed"]).0,
        // A pattern declared twice by one skill, and also by another.
        compiled(&[], &[], &[r"greet\s+\w+", r"greet\s+\w+"]).0,
    ];
    // Enough pattern skills to fill several sets.
    for i in 0..PATTERNS_PER_SET * 2 + 3 {
        skills.push(compiled(&[], &[], &[&format!(r"\bcode{i}\b"), r"^exact$"]).0);
    }
    let mut index = TriggerIndex::default();
    for (key, c) in skills.iter().enumerate() {
        index.insert(key as u64, c);
    }
    index.finish();
    assert!(index.chunks.len() >= 2, "{} sets", index.chunks.len());
    // After `finish`, every set is compiled: none is matched pattern by pattern.
    let compiled_sets = |index: &TriggerIndex| {
        index.chunks.iter().all(|c| {
            !c.dirty
                && c.members.len() <= PATTERNS_PER_SET
                && (c.members.is_empty() || matches!(c.matcher, Matcher::Set(_)))
        })
    };
    assert!(compiled_sets(&index));
    // A pattern many skills declare is in one set once, with all of them.
    let owners_of = |index: &TriggerIndex, pattern: &str| -> Vec<usize> {
        let entries: Vec<&(String, Owners)> = index
            .chunks
            .iter()
            .flat_map(|c| &c.members)
            .filter(|(p, _)| p == pattern)
            .collect();
        assert!(entries.len() <= 1, "{pattern} is in {} sets", entries.len());
        entries.first().map_or(Vec::new(), |(_, o)| {
            let mut n = 0;
            o.each(|_, _| n += 1);
            vec![n]
        })
    };
    assert_eq!(owners_of(&index, "^exact$"), [PATTERNS_PER_SET * 2 + 3]);
    assert_eq!(owners_of(&index, r"greet\s+\w+"), [3]);
    let check = |index: &TriggerIndex, live: &dyn Fn(usize) -> bool| {
        for text in [
            "open a pull-request",
            "she waved and checked in",
            "GREET Bob",
            "audited the invoices, 5 km away",
            "an invoice to audit",
            "request a pull",
            "code7 and CODE130",
            "exact",
            "nothing here",
            "",
        ] {
            let probe = Probe::new(text, &mut stems_analyzer());
            let m = index.matches(&probe);
            for (key, c) in skills.iter().enumerate() {
                let want = if live(key) {
                    brute_hits(c, &probe)
                } else {
                    vec![]
                };
                let got = m.get(key as u64).map(|m| c.hits(m)).unwrap_or_default();
                assert_eq!(got, want, "{text:?}, skill {key}");
                assert_eq!(
                    m.keys().contains(&(key as u64)),
                    !want.is_empty(),
                    "{text:?}, skill {key}: listed only when a trigger matched"
                );
            }
        }
    };
    check(&index, &|_| true);
    // Remove every other skill: only the others are found, and sets are rebuilt.
    for (key, c) in skills.iter().enumerate().filter(|(k, _)| k % 2 == 0) {
        index.remove(key as u64, c);
    }
    index.finish();
    check(&index, &|k| k % 2 == 1);
    assert_eq!(owners_of(&index, "^exact$"), [PATTERNS_PER_SET + 1]);
    assert_eq!(
        owners_of(&index, r"greet\s+\w+"),
        [3],
        "skills 3 and 5 stay"
    );
    // Put them back: holes are reused, no new sets.
    let sets = index.chunks.len();
    for (key, c) in skills.iter().enumerate().filter(|(k, _)| k % 2 == 0) {
        index.insert(key as u64, c);
    }
    index.finish();
    assert!(index.chunks.len() <= sets + 1);
    assert!(compiled_sets(&index));
    check(&index, &|_| true);
    for (key, c) in skills.iter().enumerate() {
        index.remove(key as u64, c);
    }
    index.finish();
    assert!(index.keywords.is_empty() && index.verbs.is_empty());
    assert!(owners_of(&index, "^exact$").is_empty());
    assert!(index.chunk_of.is_empty() && index.with_patterns.is_empty());
    assert!(
        index
            .chunks
            .iter()
            .all(|c| c.members.is_empty() && matches!(c.matcher, Matcher::Empty))
    );
    let probe = Probe::new("exact pull request", &mut stems_analyzer());
    assert!(index.matches(&probe).keys().is_empty());
}

#[test]
fn runs_found_by_position_match_a_scan() {
    let probe = Probe::new(
        "Open a pull-request, then pull the request",
        &mut stems_analyzer(),
    );
    for needle in [
        "pull request",
        "request",
        "the request",
        "request pull",
        "then pull the",
        "x",
        "",
    ] {
        let n = words(needle);
        assert_eq!(
            probe.has_words(&n),
            crate::text::contains_run(&probe.words, &n),
            "{needle}"
        );
    }
    assert!(probe.has_stems(&["pull".to_owned(), "request".to_owned()]));
}

#[test]
fn a_chunk_matches_the_same_with_a_set_each_pattern_alone_or_before_a_rebuild() {
    let owners = |declared: &[(u64, usize)]| {
        let mut o = Owners::default();
        for &(key, index) in declared {
            o.add(key, index);
        }
        o
    };
    let mut chunk = PatternChunk {
        members: vec![
            (r"greet\s+\w+".into(), owners(&[(1, 0)])),
            ("x{2}".into(), owners(&[(2, 0), (4, 3)])),
            ("^nothing$".into(), owners(&[(3, 1)])),
        ],
        ..PatternChunk::default()
    };
    chunk.rebuild();
    assert!(matches!(chunk.matcher, Matcher::Set(_)));
    let found = |c: &PatternChunk| {
        let mut v = Vec::new();
        c.matching("GREET bob, xx", |owners| owners.each(|key, _| v.push(key)));
        v.sort_unstable();
        v
    };
    assert_eq!(found(&chunk), [1, 2, 4]);
    chunk.matcher = Matcher::Each(
        chunk
            .members
            .iter()
            .map(|m| compile_one(&m.0).ok())
            .collect(),
    );
    assert_eq!(found(&chunk), [1, 2, 4]);
    chunk.dirty = true;
    assert_eq!(found(&chunk), [1, 2, 4]);
    chunk.members.clear();
    chunk.rebuild();
    assert!(matches!(chunk.matcher, Matcher::Empty));
    assert!(found(&chunk).is_empty());
}

#[test]
fn many_skills_sharing_a_trigger_are_found_and_removed_one_by_one() {
    // One keyword, one verb and one pattern declared by many skills, removed one by one as
    // a rebuild does. (Each removal is one map operation: a removal that scanned the
    // trigger's whole list of skills made this take tens of seconds in a debug build, not
    // well under one: the test checks the results, the suite's time shows the cost.)
    const SHARED: usize = 50_000;
    let c = compiled(&["shared words"], &["wave"], &[r"shared\s+pattern"]).0;
    let mut index = TriggerIndex::default();
    for key in 0..SHARED as u64 {
        index.insert(key, &c);
    }
    index.finish();
    let probe = Probe::new(
        "waved at the shared words, shared pattern",
        &mut stems_analyzer(),
    );
    assert_eq!(index.matches(&probe).keys().len(), SHARED);
    for key in 0..SHARED as u64 - 1 {
        index.remove(key, &c);
    }
    index.finish();
    assert_eq!(index.matches(&probe).keys(), [SHARED as u64 - 1]);
    index.remove(SHARED as u64 - 1, &c);
    index.finish();
    assert!(index.matches(&probe).keys().is_empty());
    assert!(index.keywords.is_empty() && index.verbs.is_empty() && index.chunk_of.is_empty());
}

#[test]
fn owners_go_from_none_to_one_to_many_and_back() {
    let listed = |o: &Owners| {
        let mut v = Vec::new();
        o.each(|k, i| v.push((k, i)));
        v.sort_unstable();
        v
    };
    let mut o = Owners::default();
    assert!(o.is_empty() && listed(&o).is_empty());
    o.add(7, 0);
    assert!(matches!(o, Owners::One(7, 0)), "{o:?}");
    o.remove(8);
    assert_eq!(
        listed(&o),
        [(7, 0)],
        "another skill's removal changes nothing"
    );
    o.add(7, 2);
    o.add(9, 1);
    assert_eq!(listed(&o), [(7, 0), (7, 2), (9, 1)]);
    o.remove(7);
    assert_eq!(listed(&o), [(9, 1)]);
    o.remove(9);
    assert!(o.is_empty() && matches!(o, Owners::Empty), "{o:?}");
    o.add(3, 4);
    o.remove(3);
    assert!(o.is_empty());
}

/// A pattern just under [`MAX_PATTERN_SIZE`] compiles and is matched; one just over is left
/// out with a diagnostic that says how to simplify it (each Unicode `\w` compiles to about a
/// fifth of the limit: five fit, six do not).
#[test]
fn a_pattern_just_over_the_size_limit_is_a_diagnostic() {
    let (c, _) = compiled(&[], &[], &[r"\w{5}1", r"\w{6}2", r"\w{20}3"]);
    assert_eq!(kinds(&c, "abcde1 abcdef2").len(), 1);
    let d = index_diagnostics(&c);
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[0].path, Path::new("x/SKILL.md"));
    assert_eq!(
        d[1].message,
        r"trigger pattern `\w{6}2` compiles to more than 256 KiB; simplify it (e.g. use [a-z] instead of \w, or fewer repetitions); it is ignored by search"
    );
    assert!(d[0].message.contains(r"`\w{20}3`"));
}

/// A pattern counts the smallest step of [`PATTERN_COST_TIERS`] it compiles within, and
/// none above what the budget has left.
#[test]
fn patterns_count_the_smallest_size_step_they_fit() {
    let all = MAX_TOTAL_PATTERN_SIZE;
    assert_eq!(
        measure("shared words", all).ok(),
        Some(PATTERN_COST_TIERS[0])
    );
    assert_eq!(
        measure(r"greet\s+\w+", all).ok(),
        Some(PATTERN_COST_TIERS[2])
    );
    assert_eq!(measure(r"\w{5}", all).ok(), Some(MAX_PATTERN_SIZE));
    assert_eq!(
        measure(r"\w{5}", MAX_PATTERN_SIZE).ok(),
        Some(MAX_PATTERN_SIZE)
    );
    let too_big =
        |r: Result<usize, regex::Error>| matches!(r, Err(regex::Error::CompiledTooBig(_)));
    assert!(too_big(measure(r"\w{6}", all)));
    assert!(too_big(measure(r"\w{5}", MAX_PATTERN_SIZE / 2)));
    assert!(too_big(measure("x", 0)));
    assert_eq!(measure("x", 100).ok(), Some(100));
    assert!(matches!(
        measure("(unclosed", all),
        Err(regex::Error::Syntax(_))
    ));
}

/// Distinct patterns fill [`MAX_TOTAL_PATTERN_SIZE`] exactly; the next one is neither
/// compiled nor matched and says so; removing a skill gives back what its patterns took.
#[test]
fn patterns_past_the_index_budget_are_skipped_with_a_diagnostic() {
    // Each counts MAX_PATTERN_SIZE: the budget holds exactly this many.
    let fit = MAX_TOTAL_PATTERN_SIZE / MAX_PATTERN_SIZE;
    let skills: Vec<Compiled> = (0..=fit)
        .map(|i| compiled(&[], &[], &[&format!(r"\w{{5}}{i}")]).0)
        .collect();
    let last = compiled(&[], &[], &["word"]).0;
    let mut index = TriggerIndex::default();
    for (key, c) in (0u64..).zip(&skills) {
        index.insert(key, c);
    }
    // A pattern already in the sets costs nothing more.
    index.insert(900, &skills[0]);
    index.insert(901, &last);
    assert_eq!(index.pattern_bytes, MAX_TOTAL_PATTERN_SIZE);
    assert_eq!(index.chunk_of.len(), fit);
    let d: Vec<&Diagnostic> = index.diagnostics().collect();
    assert_eq!(d.len(), 2, "{d:?}");
    let budget = "already take the 32 MiB that all of them may compile to; use fewer or simpler patterns (e.g. [a-z] instead of \\w)";
    assert!(d.iter().all(|d| d.message.ends_with(budget)), "{d:?}");
    assert!(d.iter().any(|d| {
        d.message
            .starts_with(&format!(r"trigger pattern `\w{{5}}{fit}` is not matched"))
    }));
    // Removing a skill gives its share back; the skipped skill, indexed again, fits.
    index.remove(3, &skills[3]);
    index.remove(901, &last);
    assert_eq!(
        index.pattern_bytes,
        MAX_TOTAL_PATTERN_SIZE - MAX_PATTERN_SIZE
    );
    assert_eq!(index.diagnostics().count(), 1);
    index.insert(901, &last);
    assert_eq!(index.diagnostics().count(), 1);
    index.finish();
    let probe = Probe::new("word", &mut stems_analyzer());
    assert_eq!(index.matches(&probe).keys(), [901]);
}
