//! Ranking one request: find candidates (tantivy, explicit names, triggers), score each
//! with BM25F over the skill's fields and its own limit clauses, fuse with the semantic
//! signal, gate, and order.
//!
//! Scores are in units of the idf of a term only one skill uses, so their scale does not
//! drift with the number of skills. The fused score is a weighted sum of z-scores over the
//! candidate set; the semantic weight grows with a long request's length (its words
//! scatter over many skills, its meaning does not). The confidence of a candidate is `logistic(gate - rel * gap)`, times its
//! share of the best lexical evidence and the share of its evidence that its declared
//! "not for" limits leave, where `gate` says how likely it is that any skill fits (from
//! the best raw lexical score, its share of the request, the best semantic similarity,
//! the share of the request's words no skill uses, the rarest request word the first
//! candidate lacks, the request's length, and the first candidate's similarity to the
//! request by its whole text and that similarity's lead over the other candidates') and `gap` is how far the candidate's fused score is below the best
//! one; explicit mention, a phrase of the skill and triggers raise it further (noisy-OR),
//! and it is capped at the confidence of every candidate ranked above it.
//! Term-level scoring lives in `terms`.
//!
//! Dense candidates (`dense.rs`): the skills whose whole text (the static table's
//! embedding of name, description, headings and body) is closest to the request's join
//! the lexical ones (when there are any: a request no skill shares a word with still
//! finds nothing), so that a request sharing no distinctive word with its skill still
//! finds it; the lexical evidence keeps ordering them (their similarity is one more fused
//! signal, `Params::w_dense`, and a candidate with little lexical evidence keeps little
//! confidence).
//!
//! tantivy finds candidates by the request's words, less those in over 90% of a large pack's
//! skills, which rank nothing (`terms.rs`, `COMMON_TERM_SHARE`). Every skill whose triggers
//! match is added; each distinct trigger pattern is matched once for all the skills that
//! declare it.

use std::cmp::Ordering;

use tantivy::Term;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;

use super::dense;
use super::multi::{self, MAX_PARTS};
use super::terms::{
    MAX_TURNS, QueryTerm, TURN_WEIGHT, UNKNOWN_TERM_WEIGHT, Weighted, bm25f, collect_terms,
    held_share, idf, is_filler, limits, rarest_missing, retrieval_terms,
};
use crate::Error;
use crate::doc::{DocInfo, RETRIEVE_BOOST_EXACT};
use crate::hit::{self, Match};
use crate::index::{Filter, SearchRequest, SkillIndex, State};
use crate::params::{F_DESC, F_NAME, FIELDS, Params};
use crate::text::{clip, name_tokens};
use crate::triggers::{KeyMap, Matched, Probe, TriggerHit};

/// Text candidates fetched from tantivy before re-ranking (at least; more when the limit
/// asks for more).
const MIN_CANDIDATES: usize = 64;
/// A single-word skill name counts as an explicit mention without a sigil (`/x`, `$x`,
/// `@x`, `` `x` ``) or the word "skill" next to it only when at most this many skills use
/// the word.
const RARE_NAME_DOCS: u32 = 2;
/// Probability that an explicitly named skill fits.
const P_EXPLICIT: f32 = 0.97;
/// Probability contributed by one of the skill's multi-word phrases in the request.
const P_PHRASE: f32 = 0.6;
/// Probability contributed by one matching trigger keyword, verb, pattern (set by hand:
/// the corpus declares almost no triggers).
const P_TRIGGER: [f32; 3] = [0.7, 0.3, 0.8];
/// Ranking bonus (fused z units) of one matching trigger keyword, verb, pattern.
const TRIGGER_BONUS: [f32; 3] = [2.0, 0.5, 2.5];
/// Results re-picked to cover the parts of a multi-intent request (the first ones).
const DIVERSE_TOP: usize = 3;
/// Candidates they are picked from (the best by the plain order).
const DIVERSE_POOL: usize = 20;
/// Idf mass (in units of a term only one skill uses) added to a request's when the gate
/// reads how much of the request the best candidate covers: a request that says little
/// (a single common word left after stop words) cannot be well covered however fully
/// that word matches.
const COVER_PRIOR: f32 = 1.0;
/// Request terms up to which a request counts as short: past it, the semantic signal's
/// weight grows with the log of the terms over this (`Params::w_sem_len`). Set by hand
/// (a plain one-sentence request has about this many terms after stop words).
pub(crate) const LONG_REQUEST_TERMS: f32 = 10.0;
/// Distinct terms at which the skills' vocabulary counts as broad: the share of a
/// request's unknown words weighs fully in the gate from there, and in proportion below.
const VOCABULARY_BREADTH: f32 = 20_000.0;

/// A candidate scored but not yet turned into a [`Match`].
struct Scored<'s> {
    info: &'s DocInfo,
    key: u64,
    lex: f32,
    /// The BM25F score of each part's terms (multi-intent requests).
    parts: [f32; MAX_PARTS],
    sem: f32,
    /// The request's similarity to the skill's whole text.
    dense: f32,
    fused: f32,
    rank_score: f32,
    explicit: bool,
    phrase: Option<&'s str>,
    triggers: Option<Matched<'s>>,
    /// The share of its evidence the skill's own "not for" clauses (not those in passing)
    /// rule out (`terms::Limits::ruled_out`).
    ruled_out: f32,
    confidence: f32,
    last_used: Option<u64>,
}

/// The request-level facts of a ranking (for gating and for fitting).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gate {
    /// The best candidate's lexical score.
    pub top_lex: f32,
    /// That score over the request's idf mass plus one rare term's (0 to about 1).
    pub cover: f32,
    /// The best semantic similarity among the candidates.
    pub top_sem: f32,
    /// The share of the request's words that no indexed skill uses, times the breadth of
    /// the skills' vocabulary (its distinct terms over 20,000, at most 1): a
    /// request about things a broad collection of skills never mentions is unlikely to
    /// need one, while a small pack's few words say little about what it does not cover.
    /// Words with a digit ("3hrs", "ENG-412") are not counted when `Params::skip_numbers`
    /// is on.
    pub unknown: f32,
    /// How rare (idf, in units of a term only one skill uses) the rarest of the request's
    /// words is that some indexed skill uses but the first candidate does not (0 when it
    /// has them all): a request naming something specific that the best skill never
    /// mentions is often about something no skill covers.
    pub miss: f32,
    /// The request's length: the log of one plus its own terms (after stop words).
    pub length: f32,
    /// The full sentence-embedding model's similarity of the request and the first
    /// candidate's description (crate feature `transformer`, when the index has a model;
    /// 0 otherwise).
    pub full: f32,
    /// How far the best lexical score stands out of the candidates' (its z-score over
    /// them): a request some skill fits usually has one candidate well above the rest,
    /// while one no skill fits matches many by a word or two alike.
    pub standout: f32,
    /// The gap of the first candidate's fused score over the second's (0 with one).
    pub margin: f32,
    /// The idf share of the request's own known terms that the first candidate's name and
    /// description hold (0 to 1): unlike `cover`, it neither saturates nor grows with
    /// repeats, and it ignores the request's words no skill uses (typos left uncorrected).
    pub held: f32,
    /// The similarity of the request to the first candidate's whole text (the static
    /// table's embedding of name, description, headings and body): a second witness beside
    /// the words, since a request in other words than its skill's still lands near that
    /// skill's text, and one no skill fits lands near none.
    pub dense: f32,
    /// How far that similarity stands above the best of the other candidates' (negative
    /// when another candidate's whole text is nearer; 0 with one candidate).
    pub dense_margin: f32,
    /// `gate_bias + gate_lex * top_lex + gate_cover * cover + gate_sem * top_sem +
    /// gate_unknown * unknown + gate_miss * miss + gate_len * length + gate_full * full +
    /// gate_standout * standout + gate_margin * margin + gate_held * held +
    /// gate_dense * dense + gate_dense_margin * dense_margin`.
    pub z: f32,
}

fn logistic(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

impl SkillIndex {
    /// The candidates for a request scored with `p`, and its gate. With `keep`, the best
    /// `keep` of them in ranking order; without, all of them in no particular order.
    pub(crate) fn rank(
        &self,
        req: &SearchRequest<'_>,
        limit: usize,
        p: &Params,
        keep: Option<usize>,
    ) -> Result<(Vec<Match>, Gate), Error> {
        let message = clip(req.text);
        // With a sentence-embedding model, its run on the request (the slow part) happens
        // before the index is locked, so that a reload does not wait for it; under the
        // lock only a description never ranked first before is run.
        self.embed_request(message)?;
        let st = self.state.read().map_err(|_| Error::Poisoned)?;
        let mut english = self.english.clone();
        let mut stems = self.stems.clone();

        let mut qterms: Vec<QueryTerm> = Vec::new();
        collect_terms(&mut english, message, 1.0, &mut qterms);
        if p.fillers {
            qterms.retain(|q| !is_filler(&q.word));
        }
        let turns = req.recent_turns;
        for t in turns.iter().skip(turns.len().saturating_sub(MAX_TURNS)) {
            collect_terms(&mut english, clip(t), TURN_WEIGHT, &mut qterms);
        }
        let tokens = name_tokens(message);
        let probe = Probe::new(message, &mut stems);
        let triggered = st.triggers.matches(&probe);

        // Each term's id, when some indexed skill uses it (looked up once, for retrieval
        // and scoring alike).
        let ids: Vec<Option<u32>> = qterms
            .iter()
            .map(|q| st.terms.get(&q.term).filter(|&i| st.terms.df(i) > 0))
            .collect();
        let mut cands: KeyMap<()> = KeyMap::default();
        let retrieved = retrieval_terms(&qterms, &ids, |id| st.terms.df(id), st.docs.len());
        self.retrieve(&st, retrieved.into_iter(), &tokens, limit, &mut cands)?;
        let explicit = explicit_mentions(&st, &tokens, &mut cands);
        for key in triggered.keys() {
            cands.insert(key, ());
        }
        let query_embedding = self.embedder.embed(message);
        // Only beside lexical candidates: a request that matches no skill by any word
        // (or a name, or a trigger) still finds nothing.
        if p.dense && !cands.is_empty() {
            dense::candidates(
                &st,
                &query_embedding,
                |info| passes(info, &req.filter),
                &mut cands,
            );
        }

        let parts: Vec<Vec<String>> = if p.diversity > 0.0 {
            multi::parts(&mut english, message)
        } else {
            Vec::new()
        };
        let n_docs = st.docs.len() as f32;
        let unit = idf(1, n_docs.max(1.0)).max(f32::EPSILON);
        let weighted: Vec<Weighted<'_>> = qterms
            .iter()
            .zip(&ids)
            .map(|(q, &id)| {
                let wi = match id {
                    Some(i) => q.weight * idf(st.terms.df(i), n_docs),
                    None => q.weight * UNKNOWN_TERM_WEIGHT * unit,
                };
                let part = parts.iter().position(|terms| terms.contains(&q.term));
                Weighted { id, wi, q, part }
            })
            .collect();
        let mass: f32 = weighted.iter().map(|w| w.wi).sum();
        let avg: [f32; FIELDS] =
            std::array::from_fn(|f| (st.len_sum[f] as f32 / n_docs.max(1.0)).max(1.0));

        let uses = self.uses.lock().map_err(|_| Error::Poisoned)?;
        let mut scored: Vec<Scored<'_>> = Vec::with_capacity(cands.len());
        for (&key, _) in cands.iter() {
            let Some(info) = st.docs.get(&key) else {
                continue;
            };
            if !passes(info, &req.filter) {
                continue;
            }
            let is_explicit = explicit.contains_key(&key);
            let (bm, parts) = bm25f(info, &weighted, &avg, p);
            let own = limits(info, &weighted, mass, unit, p);
            let mut lex = bm + own.score;
            if is_explicit {
                lex += p.exact_name * unit;
            }
            scored.push(Scored {
                info,
                key,
                lex: lex / unit,
                parts,
                sem: query_embedding.cosine(&info.embedding),
                dense: query_embedding.cosine(&info.whole),
                fused: 0.0,
                rank_score: 0.0,
                explicit: is_explicit,
                phrase: find_phrase(info, &probe).map(|(ph, _)| ph.as_str()),
                triggers: triggered.get(key),
                ruled_out: own.ruled_out,
                confidence: 0.0,
                last_used: if uses.last.is_empty() {
                    None
                } else {
                    uses.last.get(&info.skill.name).copied()
                },
            });
        }
        drop(uses);
        let breadth = (st.terms.used() as f32 / VOCABULARY_BREADTH).min(1.0);
        let (unknown, words) = weighted
            .iter()
            .filter(|w| w.q.weight >= 1.0 && !(p.skip_numbers && has_digit(&w.q.word)))
            .fold((0usize, 0usize), |(u, n), w| {
                (u + usize::from(w.id.is_none()), n + 1)
            });
        let unknown = if words > 0 {
            breadth * unknown as f32 / words as f32
        } else {
            0.0
        };
        let full = |info: &DocInfo| self.full_similarity(message, info);
        let request = Request {
            mass: mass / unit,
            unit,
            unknown,
            terms: words,
        };
        let gate = fuse(&mut scored, &weighted, &request, &full, p)?;
        if let Some(n) = keep {
            let multi = parts.len() >= 2;
            let pool = if multi { n.max(DIVERSE_POOL) } else { n };
            if pool > 0 && pool < scored.len() {
                scored.select_nth_unstable_by(pool - 1, scored_cmp);
            }
            scored.truncate(pool);
            scored.sort_by(scored_cmp);
            if multi {
                diversify(&mut scored, p.diversity);
            }
            scored.truncate(n);
            cap_by_rank(scored.iter_mut().map(|s| &mut s.confidence));
        }
        let out = scored.iter().map(|s| to_match(s, &weighted)).collect();
        Ok((out, gate))
    }

    /// Text candidates from tantivy: the best by a boosted query over the fields, for the
    /// request terms that `known` gives (those some indexed skill uses).
    fn retrieve<'q>(
        &self,
        st: &State,
        known: impl Iterator<Item = &'q QueryTerm>,
        tokens: &[(String, bool)],
        limit: usize,
        cands: &mut KeyMap<()>,
    ) -> Result<(), Error> {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        // Only terms some indexed skill uses: any other matches nothing in any field, and
        // each clause is a dictionary lookup per field (requests are often mostly such words).
        for q in known {
            for (field, boost) in self.fields.boosted() {
                let term = Term::from_field_text(field, &q.term);
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                        boost * q.weight,
                    )),
                ));
            }
        }
        for tok in exact_names(tokens, &st.by_name) {
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(
                        Term::from_field_text(self.fields.name_exact, tok),
                        IndexRecordOption::Basic,
                    )),
                    RETRIEVE_BOOST_EXACT,
                )),
            ));
        }
        if clauses.is_empty() {
            return Ok(());
        }
        let searcher = self.reader.searcher();
        let want = (limit * 4).max(MIN_CANDIDATES);
        let mut top = searcher.search(&BooleanQuery::new(clauses), &TopDocs::with_limit(want))?;
        // The order of the candidates does not matter here: visit the hits segment by
        // segment and open each segment's key column once (opening it per hit was a third
        // of a query's work).
        top.sort_unstable_by_key(|(_, addr)| (addr.segment_ord, addr.doc_id));
        let mut open = None;
        for (_, addr) in top {
            let col = match open {
                Some((ord, ref col)) if ord == addr.segment_ord => col,
                _ => {
                    let col = searcher
                        .segment_reader(addr.segment_ord)
                        .fast_fields()
                        .u64("key")?;
                    &open.insert((addr.segment_ord, col)).1
                }
            };
            if let Some(key) = col.first(addr.doc_id) {
                cands.insert(key, ());
            }
        }
        Ok(())
    }
}

/// The skills the request names explicitly (added to the candidates).
fn explicit_mentions(
    st: &State,
    tokens: &[(String, bool)],
    cands: &mut KeyMap<()>,
) -> KeyMap<bool> {
    let mut explicit: KeyMap<bool> = KeyMap::default();
    for (i, (tok, sigil)) in tokens.iter().enumerate() {
        let Some(&key) = st.by_name.get(tok) else {
            continue;
        };
        let Some(info) = st.docs.get(&key) else {
            continue;
        };
        let near_skill = |j: Option<usize>| {
            j.and_then(|j| tokens.get(j))
                .is_some_and(|(w, _)| w == "skill" || w == "skills")
        };
        let rare = info
            .name_term
            .is_some_and(|t| st.terms.df(t) <= RARE_NAME_DOCS);
        if !info.single_word_name
            || *sigil
            || near_skill(i.checked_sub(1))
            || near_skill(Some(i + 1))
            || rare
        {
            explicit.insert(key, true);
            cands.insert(key, ());
        }
    }
    explicit
}

/// Re-pick the 2nd and 3rd results of a multi-intent request (xQuAD-style): each next
/// result maximises its fused score plus `lambda` times how much it covers the parts the
/// results before it leave uncovered (coverage: its score on a part's terms over the best
/// candidate's). Explicitly named skills and phrases keep their places.
fn diversify(scored: &mut [Scored<'_>], lambda: f32) {
    let mut best = [0f32; MAX_PARTS];
    for s in scored.iter() {
        for (b, v) in best.iter_mut().zip(s.parts) {
            *b = b.max(v);
        }
    }
    let cover = |s: &Scored<'_>, k: usize| {
        if best[k] > 0.0 {
            s.parts[k] / best[k]
        } else {
            0.0
        }
    };
    let mut novelty = [1f32; MAX_PARTS];
    for pos in 0..scored.len().min(DIVERSE_TOP) {
        let fixed = scored[pos].explicit || scored[pos].phrase.is_some();
        if pos > 0 && !fixed {
            let value = |s: &Scored<'_>| {
                s.fused
                    + lambda
                        * (0..MAX_PARTS)
                            .map(|k| novelty[k] * cover(s, k))
                            .sum::<f32>()
            };
            let mut pick = pos;
            for i in pos + 1..scored.len() {
                if value(&scored[i]) > value(&scored[pick]) + 1e-6 {
                    pick = i;
                }
            }
            scored[pos..=pick].rotate_right(1);
        }
        for (k, n) in novelty.iter_mut().enumerate() {
            *n *= 1.0 - cover(&scored[pos], k).min(1.0);
        }
    }
}

/// The full model's similarity of the request and a candidate, when the index has a model.
type FullSimilarity<'a> = dyn Fn(&DocInfo) -> Result<Option<f32>, Error> + 'a;

/// What the fusion and the gate read of the request as a whole.
struct Request {
    /// Its idf mass, in units of a term only one skill uses.
    mass: f32,
    /// That unit.
    unit: f32,
    /// [`Gate::unknown`].
    unknown: f32,
    /// Its own terms (not recent turns').
    terms: usize,
}

impl Request {
    /// [`Gate::length`].
    fn length(&self) -> f32 {
        (1.0 + self.terms as f32).ln()
    }

    /// How far past a short request it is: the log of its terms over
    /// [`LONG_REQUEST_TERMS`], 0 below.
    fn long(&self) -> f32 {
        (self.terms as f32 / LONG_REQUEST_TERMS).max(1.0).ln()
    }
}

/// z-score the lexical and semantic scores over the candidates, fuse them, gate, and set
/// each candidate's ranking score and confidence.
fn fuse(
    scored: &mut [Scored<'_>],
    weighted: &[Weighted<'_>],
    request: &Request,
    full: &FullSimilarity<'_>,
    p: &Params,
) -> Result<Gate, Error> {
    let (mass, unit, unknown) = (request.mass, request.unit, request.unknown);
    let mut gate = Gate {
        unknown,
        length: request.length(),
        ..Gate::default()
    };
    if scored.is_empty() {
        gate.z = gate_z(&gate, p);
        return Ok(gate);
    }
    let z = |vals: &mut dyn Iterator<Item = f32>| -> (f32, f32) {
        let v: Vec<f32> = vals.collect();
        let n = v.len() as f32;
        let mean = v.iter().sum::<f32>() / n;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n;
        (mean, var.sqrt().max(1e-3))
    };
    let (lm, ls) = z(&mut scored.iter().map(|s| s.lex));
    let (sm, ss) = z(&mut scored.iter().map(|s| s.sem));
    let (dm, ds) = z(&mut scored.iter().map(|s| s.dense));
    gate.top_lex = scored
        .iter()
        .map(|s| s.lex)
        .fold(f32::MIN, f32::max)
        .max(0.0);
    gate.top_sem = scored.iter().map(|s| s.sem).fold(f32::MIN, f32::max);
    gate.cover = gate.top_lex / (mass + COVER_PRIOR);
    let w_sem = p.w_sem + p.w_sem_len * request.long();
    for s in scored.iter_mut() {
        s.fused = p.w_lex * (s.lex - lm) / ls
            + w_sem * (s.sem - sm) / ss
            + p.w_dense * (s.dense - dm) / ds;
        let n = trigger_counts(s);
        s.rank_score = s.fused + (0..3).map(|k| n[k] as f32 * TRIGGER_BONUS[k]).sum::<f32>();
    }
    if let Some(first) = scored.iter().min_by(|a, b| scored_cmp(a, b)) {
        let has = |id| {
            first
                .info
                .tf(id)
                .is_some_and(|tf| tf.iter().any(|&n| n > 0))
        };
        gate.miss = rarest_missing(weighted, has) / unit;
        gate.full = full(first.info)?.unwrap_or(0.0);
        gate.held = held_share(weighted, |id| {
            first
                .info
                .tf(id)
                .is_some_and(|tf| tf[F_NAME] > 0 || tf[F_DESC] > 0)
        });
        gate.standout = (first.lex - lm) / ls;
        let second = scored
            .iter()
            .filter(|s| s.key != first.key)
            .map(|s| s.fused)
            .fold(f32::MIN, f32::max);
        if second > f32::MIN {
            gate.margin = (first.fused - second).max(0.0);
        }
        gate.dense = first.dense;
        let other_dense = scored
            .iter()
            .filter(|s| s.key != first.key)
            .map(|s| s.dense)
            .fold(f32::MIN, f32::max);
        if other_dense > f32::MIN {
            gate.dense_margin = first.dense - other_dense;
        }
    }
    gate.z = gate_z(&gate, p);
    let best = scored.iter().map(|s| s.fused).fold(f32::MIN, f32::max);
    for s in scored.iter_mut() {
        let n = trigger_counts(s);
        // A candidate with little lexical evidence beside the best's is not confident
        // however the z-scores of a handful of candidates fall.
        let share = if gate.top_lex > 0.0 && p.evidence_share > 0.0 {
            (s.lex / (p.evidence_share * gate.top_lex)).clamp(0.0, 1.0)
        } else {
            1.0
        };
        // A skill that says it is not for what the request asks keeps only the share of
        // its evidence that its declared limits leave (an explicit mention, a phrase or a
        // trigger still counts in full below). Squaring the share was tried on the
        // tuning half: it dropped a right skill whose clause the request grazed.
        let kept = 1.0 - s.ruled_out;
        let mut miss = 1.0 - share * kept * logistic(gate.z - p.rel * (best - s.fused));
        for k in 0..3 {
            for _ in 0..n[k] {
                miss *= 1.0 - P_TRIGGER[k];
            }
        }
        if s.explicit {
            miss *= 1.0 - P_EXPLICIT;
        }
        if s.phrase.is_some() {
            miss *= 1.0 - P_PHRASE;
        }
        s.confidence = (1.0 - miss).clamp(0.0, 1.0);
    }
    Ok(gate)
}

/// The gate's linear score of its facts under `p` ([`Gate::z`]).
fn gate_z(g: &Gate, p: &Params) -> f32 {
    p.gate_bias
        + p.gate_lex * g.top_lex
        + p.gate_cover * g.cover
        + p.gate_sem * g.top_sem
        + p.gate_unknown * g.unknown
        + p.gate_miss * g.miss
        + p.gate_len * g.length
        + p.gate_full * g.full
        + p.gate_standout * g.standout
        + p.gate_margin * g.margin
        + p.gate_held * g.held
        + p.gate_dense * g.dense
        + p.gate_dense_margin * g.dense_margin
}

/// Whether a request word holds a digit: a quantity, a version or a ticket number
/// ("800px", "3hrs", "ENG-412"), which says what the request is about no more than a name
/// does, so the unknown share leaves it out when `Params::skip_numbers` is on.
fn has_digit(word: &str) -> bool {
    word.bytes().any(|b| b.is_ascii_digit())
}

/// A candidate's matching trigger keywords, verbs and patterns.
fn trigger_counts(s: &Scored<'_>) -> [usize; 3] {
    let counts = s.triggers.map(|m| m.counts()).unwrap_or_default();
    [counts.keywords, counts.verbs, counts.patterns]
}

/// Confidence never rises down the ranking: the order is the ranking's judgement of which
/// candidate is likelier right, and a candidate's confidence is capped at that of every
/// candidate ranked above it (a lower one showing more confidence than the one above would
/// contradict the order, and selection keeps the first candidates that clear the threshold).
fn cap_by_rank<'a>(confidences: impl IntoIterator<Item = &'a mut f32>) {
    let mut cap = f32::INFINITY;
    for c in confidences {
        *c = c.min(cap);
        cap = *c;
    }
}

/// The ranking order: explicit mention, phrase, ranking score to 0.01, recent use,
/// lexical score, name (by its first bytes, and only on a tie by the whole name).
fn scored_cmp(a: &Scored<'_>, b: &Scored<'_>) -> Ordering {
    let bucket = |s: &Scored<'_>| (s.rank_score * 100.0).round() as i64;
    b.explicit
        .cmp(&a.explicit)
        .then(b.phrase.is_some().cmp(&a.phrase.is_some()))
        .then(bucket(b).cmp(&bucket(a)))
        .then_with(|| b.last_used.cmp(&a.last_used))
        .then_with(|| b.lex.total_cmp(&a.lex))
        .then_with(|| a.info.name_key.cmp(&b.info.name_key))
        .then_with(|| a.info.skill.name.cmp(&b.info.skill.name))
        .then_with(|| a.key.cmp(&b.key))
}

fn to_match(s: &Scored<'_>, weighted: &[Weighted<'_>]) -> Match {
    let info = s.info;
    let mut matched_terms = Vec::new();
    let mut body_terms = Vec::new();
    let mut turn_terms = Vec::new();
    let mut against_terms = Vec::new();
    for t in weighted {
        let Some(id) = t.id else { continue };
        if let Some(tf) = info.tf(id) {
            let list = if t.q.weight < 1.0 {
                &mut turn_terms
            } else if tf[F_NAME] > 0 || tf[F_DESC] > 0 {
                &mut matched_terms
            } else {
                &mut body_terms
            };
            push_unique(list, &t.q.word);
        }
        if t.q.weight >= 1.0
            && info
                .clauses
                .iter()
                .any(|(k, ids)| k.is_not() && ids.binary_search(&id).is_ok())
        {
            push_unique(&mut against_terms, &t.q.word);
        }
    }
    let mut m = Match {
        name: info.skill.name.clone(),
        description: info.skill.description.clone(),
        layer: info.skill.layer.clone(),
        confidence: s.confidence,
        explicit: s.explicit,
        phrase: s.phrase.map(str::to_owned),
        triggers: s
            .triggers
            .map(|m| info.triggers.hit_refs(m))
            .unwrap_or_default()
            .into_iter()
            .map(|(kind, t)| TriggerHit {
                kind,
                trigger: t.to_owned(),
            })
            .collect(),
        matched_terms,
        body_terms,
        turn_terms,
        against_terms,
        text_score: s.lex,
        semantic: s.sem,
        last_used: s.last_used,
        reason: String::new(),
    };
    m.reason = hit::reason(&m);
    m
}

/// The first of the skill's phrases that the request contains word for word.
fn find_phrase<'i>(info: &'i DocInfo, probe: &Probe<'_>) -> Option<&'i (String, Vec<String>)> {
    let mut runs = info.phrase_runs.as_slice();
    let mut phrases = info.phrases.iter();
    while let Some((&len, rest)) = runs.split_first() {
        let len = usize::try_from(len).unwrap_or(usize::MAX).min(rest.len());
        let (run, next) = rest.split_at(len);
        runs = next;
        let phrase = phrases.next()?;
        // Hashes first (no string is read); a hash match is confirmed on the words.
        if probe.has_hashes(run) && probe.has_words(&phrase.1) {
            return Some(phrase);
        }
    }
    None
}

pub(crate) fn passes(info: &DocInfo, filter: &Filter) -> bool {
    if filter.model_invocable_only && !info.model_invocable {
        return false;
    }
    // Only a profile the skill lists in `exclude_from_prompt_profile_ids` excludes it, so
    // most candidates are decided without reading the skill.
    match &filter.profile {
        Some(p) if info.excludes_profiles => {
            info.skill.affinity(Some(p)) != skill_registry::Affinity::Excluded
        }
        _ => true,
    }
}

/// The name-like tokens of a request that are the name of an indexed skill, each once: the
/// only ones worth an exact-name clause (a long request has thousands of tokens).
pub(crate) fn exact_names<'a>(
    tokens: &'a [(String, bool)],
    by_name: &std::collections::HashMap<String, u64>,
) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for (tok, _) in tokens {
        if by_name.contains_key(tok) && !out.contains(&tok.as_str()) {
            out.push(tok);
        }
    }
    out
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_owned());
    }
}

/// The ranking's unit tests, and the gate's inputs on a small index.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "rank_tests.rs"]
mod tests;

/// The gate with a sentence-embedding model (a tiny one the tests write).
#[cfg(all(test, feature = "transformer"))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "rank_transformer_tests.rs"]
mod transformer_tests;
