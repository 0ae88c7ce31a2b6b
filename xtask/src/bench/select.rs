//! `bench select`: selection accuracy on the evaluation set (`xtask/data/select-requests.jsonl`
//! over `../shared/corpus`), held-out half first, then the tuning half on its own lines;
//! then `select` latency on the corpus and on a generated pack, and index build time
//! against registry load.
//!
//! Methods, all in the same run over the same index:
//! - ours: `select` (selected) and `search` (ranked) with the shipped parameters;
//! - plain BM25 (`bm25.rs`): BM25 over name and description, as skill hosts ship it (the
//!   baseline of the done-when margin);
//! - textbook BM25 (`bm25.rs`): stemmed BM25 over the whole file, a stronger reference;
//! - lexical only: ours with the semantic weight at 0 and no multi-intent step;
//! - semantic only: ours with the lexical weight at 0 (same candidates).
//!
//! Figures: top-1 / top-3 / top-10 over requests with a skill (any acceptable skill of any
//! intent counts), multi-covered (every intent among the first 3), no-skill refused
//! (nothing selected, for requests no skill fits).
//!
//! Then ours over one pack at a time (`packs.rs`), each half: the same requests against a
//! registry holding a single corpus pack, relabelled for it, pooled over the packs and
//! over the small ones (no target; it shows what a host with one pack gets).

use std::sync::Arc;

use skill_registry::{RegistryConfig, Source, load_snapshot};
use skill_search::tuning::{self, Params};
use skill_search::{SearchRequest, SelectOptions, SkillIndex};

use super::Table;
use super::bm25::Bm25;
use super::evalset::{self, Answer, Case, Split};
use super::hybrid::Hybrid;
use super::search::{Args, corpus_config, generated_requests, suite};
use super::{distinctive, host};
use super::{fit, generate, model, packs, select_try, steps};

/// Ranking depth read for top-10.
const DEPTH: usize = 10;
/// Least cosine similarity between the sentence-embedding model's outputs here and its
/// reference outputs (float rounding only).
const MIN_REFERENCE_COSINE: f32 = 0.9999;

/// Ours as shipped. The indexes this is called on carry no sentence-embedding model (the
/// model's rows have their own loop), so their parameters are [`Params::SHIPPED`].
fn ours(index: &SkillIndex, cases: &[&Case]) -> Vec<Answer> {
    steps::answers(index, cases, &Params::SHIPPED)
}

fn with_params(index: &SkillIndex, cases: &[&Case], p: &Params) -> Vec<Answer> {
    fit::answers(&fit::rank_all(index, cases, p), 0.5)
}

fn bm25(b: &Bm25, cases: &[&Case]) -> Vec<Answer> {
    cases
        .iter()
        .map(|c| Answer {
            ranked: b.rank(&c.request, DEPTH),
            selected: None,
            alternatives: Vec::new(),
        })
        .collect()
}

/// Every method's answers over one half: ours, then the peers (plain BM25, then the hybrid
/// when there is a model).
struct Answers {
    ours: Vec<Answer>,
    plain: Vec<Answer>,
    hybrid: Option<Vec<Answer>>,
}

impl Answers {
    fn of(
        index: &SkillIndex,
        baselines: &Baselines,
        hybrid: Option<&Hybrid>,
        cases: &[&Case],
    ) -> Result<Self, String> {
        let hybrid = match hybrid {
            Some(h) => Some(
                cases
                    .iter()
                    .map(|c| {
                        Ok(Answer {
                            ranked: h.rank(&c.request, DEPTH)?,
                            selected: None,
                            alternatives: Vec::new(),
                        })
                    })
                    .collect::<Result<Vec<_>, String>>()?,
            ),
            None => None,
        };
        Ok(Self {
            ours: ours(index, cases),
            plain: bm25(&baselines.plain, cases),
            hybrid,
        })
    }

    /// What a host gets (issue 43's headline), then its targets.
    fn host_lines(&self, label: &str, cases: &[&Case]) -> Vec<String> {
        let mut peers: Vec<(&str, &[Answer])> =
            vec![("plain BM25, name + description", &self.plain)];
        if let Some(h) = &self.hybrid {
            peers.push(("BM25 + MiniLM reciprocal rank fusion", h));
        }
        let mut out = host::lines(label, cases, &self.ours, &peers);
        out.push(host::targets(
            &format!("{label} targets"),
            cases,
            &self.ours,
            self.hybrid.as_deref(),
        ));
        out
    }
}

/// Accuracy lines of every method over one half, ranked and selected, every request
/// with a skill counted (the detail under the host lines).
fn half_lines(
    label: &str,
    index: &SkillIndex,
    baselines: &Baselines,
    answers: &Answers,
    cases: &[&Case],
) -> (Vec<String>, [evalset::Scores; 3]) {
    let lexical = Params {
        w_sem: 0.0,
        w_dense: 0.0,
        dense: false,
        gate_sem: 0.0,
        ..Params::SHIPPED
    };
    let semantic = Params {
        w_lex: 0.0,
        w_sem: 1.0,
        ..Params::SHIPPED
    };
    let ours_s = evalset::score(cases, &answers.ours);
    let bm25_s = evalset::score(cases, &answers.plain);
    let text_s = evalset::score(cases, &bm25(&baselines.textbook, cases));
    let lex_s = evalset::score(cases, &with_params(index, cases, &lexical));
    let sem_s = evalset::score(cases, &with_params(index, cases, &semantic));
    let lines = vec![
        format!(
            "{label}: {} requests ({} with a skill, {} multi-intent, {} none)",
            cases.len(),
            ours_s.with_skill,
            ours_s.multi,
            ours_s.none
        ),
        ours_s.line(&format!("{label}: ours (search ranked | select)")),
        bm25_s.line(&format!("{label}: plain BM25, name + description")),
        text_s.line(&format!("{label}: textbook BM25, whole file, stemmed")),
        lex_s.line(&format!("{label}: lexical signal only")),
        sem_s.line(&format!("{label}: semantic signal only")),
    ];
    (lines, [ours_s, bm25_s, text_s])
}

/// Ours over one pack at a time: pooled over every pack, then over the small ones.
fn pack_lines(label: &str, packs: &[packs::Pack], cases: &[&Case]) -> Vec<String> {
    let mut all = evalset::Scores::default();
    let mut small = evalset::Scores::default();
    let mut n_small = 0;
    for pack in packs {
        let relabelled = pack.relabel(cases);
        let refs: Vec<&Case> = relabelled.iter().collect();
        let s = evalset::score(&refs, &ours(&pack.index, &refs));
        all.merge(&s);
        if pack.skills <= packs::SMALL_PACK {
            small.merge(&s);
            n_small += 1;
        }
    }
    vec![
        all.line(&format!(
            "{label}: one pack at a time ({} packs)",
            packs.len()
        )),
        small.line(&format!(
            "{label}: one small pack at a time ({n_small} of <= {} skills)",
            packs::SMALL_PACK
        )),
    ]
}

/// The two BM25 baselines over the same snapshot.
struct Baselines {
    plain: Bm25,
    textbook: Bm25,
}

/// Run `bench select`.
pub fn run(args: &Args, table: &mut Table) -> Result<(), String> {
    // The model first: a folder that is not one (or an xtask built without the feature)
    // fails before the long run, not after it.
    let models = match &args.transformer {
        Some(dir) => Some((model::load(dir)?, model::load(dir)?)),
        None => None,
    };
    let corpus = args.corpus()?;
    if !corpus.is_dir() {
        table.skipped(
            "select: corpus",
            format!("no corpus at {}", corpus.display()),
        );
        return Ok(());
    }
    let cases = args.cases()?;
    let config = corpus_config(&corpus)?;
    let snapshot = Arc::new(load_snapshot(&config, 1));
    let unknown: Vec<&str> = cases
        .iter()
        .flat_map(|c| c.expect.iter().flatten())
        .filter(|n| snapshot.get(n).is_none())
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        table.error(
            "select: evaluation set",
            format!("labels not in the corpus: {}", unknown.join(", ")),
        );
    }
    let index = SkillIndex::build(snapshot.clone()).map_err(|e| e.to_string())?;
    let baselines = Baselines {
        plain: Bm25::plain(&snapshot),
        textbook: Bm25::textbook(&snapshot),
    };
    let held = evalset::half(&cases, Split::Heldout);
    let tune = evalset::tune_only(&cases);
    if let Some(spec) = std::env::var_os("BENCH_SELECT_TRY") {
        // With `BENCH_SELECT_MISSES` too, each set's misses on the tuning half.
        for p in select_try::run(&index, &tune, &spec.to_string_lossy(), table)? {
            if std::env::var_os("BENCH_SELECT_MISSES").is_some() {
                misses(&index, &tune, &p, table);
            }
        }
        return Ok(());
    }
    for (name, found, want) in evalset::quotas(&cases) {
        if found < want {
            table.note(format!(
                "select: evaluation set: {name} {found:.3}, under the {want:.3} issue 43 asks for"
            ));
        }
    }
    let (with_skill, clean) = distinctive::without_shared_word(&snapshot, &cases);
    table.note(format!(
        "select: evaluation set: {} requests; {clean} of {with_skill} with a skill ({:.1}%) share no distinctive word with their best skill (issue 43: at least a third)",
        cases.len(),
        100.0 * clean as f64 / with_skill.max(1) as f64
    ));
    let hybrid = match &models {
        Some((m, _)) => Some(Hybrid::build(&snapshot, m)?),
        None => None,
    };
    let held_answers = Answers::of(&index, &baselines, hybrid.as_ref(), &held)?;
    let tune_answers = Answers::of(&index, &baselines, hybrid.as_ref(), &tune)?;
    for l in held_answers.host_lines("HELD-OUT", &held) {
        table.note(l);
    }
    let (lines, [o, b, t]) = half_lines("HELD-OUT", &index, &baselines, &held_answers, &held);
    for l in lines {
        table.note(l);
    }
    table.note(format!(
        "HELD-OUT: ranked top-3 over plain BM25 {:+.1} points, over textbook BM25 {:+.1} points (no target)",
        100.0 * (o.rate(o.top3) - b.rate(b.top3)),
        100.0 * (o.rate(o.top3) - t.rate(t.top3))
    ));
    for l in tune_answers.host_lines("tune (fitted on)", &tune) {
        table.note(l);
    }
    let (lines, _) = half_lines("tune (fitted on)", &index, &baselines, &tune_answers, &tune);
    for l in lines {
        table.note(l);
    }
    steps::rows(&index, &held, &tune, table);
    let packs = packs::load(&config, None)?;
    for (label, cases) in [("HELD-OUT", &held), ("tune (fitted on)", &tune)] {
        for l in pack_lines(label, &packs, cases) {
            table.note(l);
        }
    }
    if std::env::var_os("BENCH_SELECT_MISSES").is_some() {
        misses(&index, &tune, &Params::SHIPPED, table);
    }
    if let Some((m, fresh)) = &models {
        const NAME: &str = "select: the model against its reference outputs";
        match model::check(m) {
            Ok(cos) if cos >= MIN_REFERENCE_COSINE => table.note(format!(
                "{NAME}: least cosine {cos:.6} (at least {MIN_REFERENCE_COSINE}: ok)"
            )),
            Ok(cos) => table.error(
                NAME,
                format!("least cosine {cos:.6}, under {MIN_REFERENCE_COSINE}"),
            ),
            Err(e) => table.error(NAME, e),
        }
        let with = model::attach(
            SkillIndex::build(snapshot.clone()).map_err(|e| e.to_string())?,
            Some(m),
        );
        // The second copy of the model, with an empty cache, times the model alone.
        transformer_rows(
            &with,
            fresh,
            &held,
            &tune,
            held_answers.hybrid.as_deref(),
            table,
        )?;
    }

    // Latency and build time: the corpus, then a generated pack.
    let requests: Vec<String> = cases.iter().map(|c| c.request.clone()).collect();
    suite(
        "select corpus",
        &config,
        &requests,
        None,
        false,
        args,
        table,
    );
    if args.generated > 0 {
        let dir = tempfile::Builder::new()
            .prefix("xtask-bench-select-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
        generate::write_pack(dir.path(), args.generated)?;
        let mut config = RegistryConfig::with_sources(vec![Source::new(dir.path(), "bench")]);
        config.discover.max_folders = config
            .discover
            .max_folders
            .max(args.generated.saturating_add(16));
        let mut requests = generated_requests();
        requests.extend(cases.iter().map(|c| c.request.clone()));
        let label = format!("select {}k generated", args.generated / 1000);
        let built = suite(&label, &config, &requests, None, false, args, table);
        if let Some((generated, _)) = built {
            steps::latency(&generated, &label, &requests, table);
            let copy: Vec<String> = steps::misspelt(&tune)
                .into_iter()
                .map(|c| c.request)
                .collect();
            steps::matchers(
                &generated,
                &format!("{label}, misspelt tuning copy"),
                &copy,
                table,
            );
        }
    }
    Ok(())
}

/// Ours on an index with the sentence-embedding model (`--transformer`), both halves, its
/// targets against the same plain BM25 run, and the latency of `select` with it: each
/// request's first `select` (the model runs on the request, and on the first candidate's
/// description unless an earlier request ranked it first).
fn transformer_rows(
    index: &SkillIndex,
    fresh: &model::Model,
    held: &[&Case],
    tune: &[&Case],
    hybrid: Option<&[Answer]>,
    table: &mut Table,
) -> Result<(), String> {
    let mut times = Vec::with_capacity(held.len() + tune.len());
    let mut answers = Vec::with_capacity(held.len() + tune.len());
    let opts = SelectOptions::default();
    for c in held.iter().chain(tune) {
        let start = std::time::Instant::now();
        let selected = index
            .select(&c.request, &opts)
            .map_err(|e| format!("select with the model: {e}"))?;
        let selected = selected
            .selected_skills
            .into_iter()
            .map(|s| s.skill_id)
            .collect();
        times.push(start.elapsed());
        let ranked = index
            .search(&SearchRequest {
                text: &c.request,
                limit: DEPTH,
                ..Default::default()
            })
            .map_err(|e| format!("search with the model: {e}"))?
            .into_iter()
            .map(|m| m.name)
            .collect();
        answers.push(Answer {
            ranked,
            selected: Some(selected),
            alternatives: Vec::new(),
        });
    }
    let (held_answers, tune_answers) = answers.split_at(held.len());
    let o = evalset::score(held, held_answers);
    for l in host::lines("HELD-OUT, transformer gate", held, held_answers, &[]) {
        table.note(l);
    }
    table.note(host::targets(
        "HELD-OUT targets with the transformer gate",
        held,
        held_answers,
        hybrid,
    ));
    table.note(o.line("HELD-OUT: ours with the transformer gate"));
    table.note(
        evalset::score(tune, tune_answers).line("tune (fitted on): ours with the transformer gate"),
    );
    let mut alone = Vec::with_capacity(times.len());
    for c in held.iter().chain(tune) {
        let start = std::time::Instant::now();
        model::embed(fresh, &c.request)?;
        alone.push(start.elapsed());
    }
    for (what, mut times) in [
        (
            "select with the transformer gate, first call per request",
            times,
        ),
        ("the model alone on each request", alone),
    ] {
        times.sort();
        if let (Some(p50), Some(p99)) = (
            times.get((times.len().saturating_sub(1)) / 2),
            times.get(((times.len().saturating_sub(1)) as f64 * 0.99).round() as usize),
        ) {
            table.note(format!(
                "{what} ({} requests): p50 {:.1} ms, p99 {:.1} ms",
                times.len(),
                p50.as_secs_f64() * 1e3,
                p99.as_secs_f64() * 1e3
            ));
        }
    }
    Ok(())
}

/// With `BENCH_SELECT_MISSES` set: the tuning half's requests the ranking misses in its first
/// three (`miss`; for a request no skill fits, the gate opened), and those it has but
/// `select` drops (`gap`: the gate refused, or the right skill fell under the threshold;
/// for a request no skill fits, the gate refused but a trigger or a name still selected
/// a skill), each with what was selected, for reading; set to `all`, every tuning request
/// (the others as `hit`), to read the gate's inputs on both sides. The held-out half is never printed
/// request by request: reading its misses would tune the engine on it.
fn misses(index: &SkillIndex, tune: &[&Case], p: &Params, table: &mut Table) {
    let opts = SelectOptions::default();
    let all = std::env::var_os("BENCH_SELECT_MISSES").is_some_and(|v| v == "all");
    for c in tune.iter().filter(|c| c.split == Split::Tune) {
        let Ok((hits, gate)) = tuning::search(
            index,
            &SearchRequest {
                text: &c.request,
                limit: 3,
                ..Default::default()
            },
            p,
        ) else {
            continue;
        };
        let names: Vec<&str> = hits.iter().map(|m| m.name.as_str()).collect();
        let Ok(selection) = tuning::select(index, &c.request, &opts, p) else {
            continue;
        };
        let selected: Vec<(String, f32)> = selection
            .selected_skills
            .into_iter()
            .map(|s| (s.skill_id, s.confidence))
            .collect();
        let (ranked_ok, selected_ok) = if c.expect.is_empty() {
            (gate.z < 0.0, selected.is_empty())
        } else {
            (
                names.iter().any(|n| c.accepts(n)),
                selected.iter().any(|(n, _)| c.accepts(n)),
            )
        };
        // A miss of the ranking, or (`gap`) one the ranking had and selection dropped.
        let what = match (ranked_ok, selected_ok) {
            (false, _) => "miss",
            (true, false) => "gap",
            (true, true) if all => "hit",
            (true, true) => continue,
        };
        table.note(format!(
            "{what} {}: {:?} want {:?} got {:?} selected {:?} (gate {:.2}, lex {:.2}, cover {:.2}, standout {:.2}, margin {:.2}, held {:.2}, dense {:.2}, dense margin {:.2}, unknown {:.2}, sem {:.2}, miss {:.2}, length {:.2})",
            c.id,
            c.request,
            c.expect,
            names,
            selected,
            gate.z,
            gate.top_lex,
            gate.cover,
            gate.standout,
            gate.margin,
            gate.held,
            gate.dense,
            gate.dense_margin,
            gate.unknown,
            gate.top_sem,
            gate.miss,
            gate.length
        ));
    }
}

/// Run `bench select-fit`: fit on the tuning half and print the constants.
pub fn run_fit(args: &Args, table: &mut Table) -> Result<(), String> {
    let corpus = args.corpus()?;
    if !corpus.is_dir() {
        return Err(format!("no corpus at {}", corpus.display()));
    }
    let cases = args.cases()?;
    let config = corpus_config(&corpus)?;
    let snapshot = Arc::new(load_snapshot(&config, 1));
    let index = SkillIndex::build(snapshot).map_err(|e| e.to_string())?;
    let lines = match &args.transformer {
        // With a model, only the gate is fitted (the ranking stays as shipped).
        Some(dir) => {
            let m = model::load(dir)?;
            let packs = packs::load(&config, Some(&m))?;
            fit::run_gate(&model::attach(index, Some(&m)), &packs, &cases, true)
        }
        None if args.gate_only => {
            fit::run_gate(&index, &packs::load(&config, None)?, &cases, false)
        }
        None => fit::run(&index, &packs::load(&config, None)?, &cases),
    };
    for line in lines {
        table.note(line);
    }
    Ok(())
}
