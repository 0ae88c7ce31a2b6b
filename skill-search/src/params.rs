//! The ranking's tuning parameters in one place, with the values that ship.
//!
//! They are chosen by `cargo xtask bench select-fit` on the tuning half of the evaluation set
//! (`xtask/data/select-requests.jsonl`, `split = tune`) and pasted here; the held-out half
//! is never read by the fitting. They are not public API: the crate feature `tuning`
//! exposes [`Params`] and the `*_with` entry points for that tool only.
//!
//! Only the ranking's and the gate's numbers live here and are fitted. The typo step's word
//! lengths (`typo.rs`) and the sibling thresholds (`slots.rs`) are set by hand, beside the code
//! that reads them.

/// Number of text fields of the lexical score (BM25F): name, description (with tags,
/// triggers and domain), body headings, body.
pub(crate) const FIELDS: usize = 4;
/// Field index of the name.
pub(crate) const F_NAME: usize = 0;
/// Field index of the description, summary, tags, triggers and domain.
pub(crate) const F_DESC: usize = 1;

/// Every tunable number of ranking, gating and confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// BM25 term-frequency saturation.
    pub k1: f32,
    /// BM25 length normalisation per field (name, description, headings, body).
    pub b: [f32; FIELDS],
    /// Weight of each field in the BM25F pseudo-frequency.
    pub w: [f32; FIELDS],
    /// Added to the lexical score (in units of one rare term's idf) when the request
    /// contains the skill's whole name.
    pub exact_name: f32,
    /// Penalty (same units) per unit of the request's idf share found in a "not for"
    /// clause of the skill.
    pub not_penalty: f32,
    /// Penalty (same units) when the request matches none of an "only when" clause.
    pub only_penalty: f32,
    /// Weight of the lexical score's z-score in the fused score.
    pub w_lex: f32,
    /// Weight of the semantic similarity's z-score in the fused score.
    pub w_sem: f32,
    /// Added to `w_sem` per unit of the request's length past a short request's (the log
    /// of its terms over `rank::LONG_REQUEST_TERMS`, 0 below): a long, chatty request
    /// matches many skills by a word or two, while its whole sentence still says what
    /// it is about.
    pub w_sem_len: f32,
    /// Weight of the z-score of the request's similarity to the skill's whole text (the
    /// static table's embedding of name, description, headings and body) in the fused
    /// score.
    pub w_dense: f32,
    /// Dense candidates: the skills whose whole text is closest in meaning to the request
    /// join the lexical candidates, however few words they share with it (`rank.rs`).
    /// Shipped off (measured no better yet); true turns it on (to measure it).
    pub dense: bool,
    /// Words of conversation ("please", "thanks", "help me") are dropped from the request
    /// (`terms.rs`, `FILLERS`); false turns it off (to measure it).
    pub fillers: bool,
    /// Gate (probability that the ranking has a right skill to offer): intercept.
    pub gate_bias: f32,
    /// Gate: weight of the best candidate's raw lexical score.
    pub gate_lex: f32,
    /// Gate: weight of the best candidate's lexical score over the request's idf mass plus
    /// one rare term's (so that a request that says little is not fully covered).
    pub gate_cover: f32,
    /// Gate: weight of the best semantic similarity.
    pub gate_sem: f32,
    /// Gate: weight of the share of the request's words that no indexed skill uses (scaled
    /// by the breadth of the skills' vocabulary).
    pub gate_unknown: f32,
    /// Gate: weight of the rarity of the rarest request word the first candidate lacks.
    pub gate_miss: f32,
    /// Gate: weight of the request's length (the log of one plus its terms): a long
    /// request's best lexical score adds up from many words.
    pub gate_len: f32,
    /// Gate: weight of the full sentence-embedding model's similarity of the request and
    /// the first candidate's description (0 without the `transformer` feature's model).
    pub gate_full: f32,
    /// Gate: weight of how far the best lexical score stands out of the candidates'.
    pub gate_standout: f32,
    /// Gate: weight of the first candidate's fused-score lead over the second.
    pub gate_margin: f32,
    /// Gate: weight of the idf share of the request's known terms in the first
    /// candidate's name and description.
    pub gate_held: f32,
    /// Gate: weight of the similarity of the request to the first candidate's whole text.
    pub gate_dense: f32,
    /// Gate: weight of how far that similarity stands above the other candidates' best.
    pub gate_dense_margin: f32,
    /// The gate's share of unknown request words leaves out words with a digit (quantities,
    /// versions, ticket numbers). Shipped off (measured no better on the held-out half);
    /// true turns it on (to measure it).
    pub skip_numbers: bool,
    /// A candidate whose lexical score is at least this share of the best's keeps its full
    /// confidence; below, it shrinks in proportion (0 turns this off).
    pub evidence_share: f32,
    /// Confidence drop per unit of fused score below the best candidate.
    pub rel: f32,
    /// Weight of covering the request's parts not yet covered (multi-intent requests) when
    /// choosing the 2nd and 3rd results; 0 turns it off.
    pub diversity: f32,
    /// Selection matches request words the index does not know to its terms (`typo.rs`)
    /// before ranking; false turns it off (to measure it).
    pub typos: bool,
    /// Selection gives each intent of a multi-intent request its own slot and collapses
    /// near-duplicate skills into one (`slots.rs`); false turns it off (to measure it).
    pub intent_slots: bool,
}

/// Fitted BM25 saturation.
const K1: f32 = 1.2;
/// Fitted per-field length normalisation.
const B: [f32; FIELDS] = [0.3, 0.9, 0.9, 0.9];
/// Fitted per-field weights.
const W: [f32; FIELDS] = [4.0, 2.0, 0.5, 0.25];
/// Fitted exact-name bonus.
const EXACT_NAME: f32 = 3.0;
/// Fitted "not for" penalty.
const NOT_PENALTY: f32 = 0.5;
/// Fitted "only when" penalty.
const ONLY_PENALTY: f32 = 0.0;
/// Fitted fusion weights.
const W_LEX: f32 = 1.0;
const W_SEM: f32 = 0.75;
const W_SEM_LEN: f32 = 0.0;
const W_DENSE: f32 = 0.0;
/// Fitted gate.
const GATE_BIAS: f32 = -6.652;
const GATE_LEX: f32 = 0.673;
const GATE_COVER: f32 = 21.474;
const GATE_SEM: f32 = 5.750;
const GATE_UNKNOWN: f32 = -10.269;
const GATE_MISS: f32 = -0.306;
const GATE_LEN: f32 = 0.349;
// Refitted with these three inputs on the tuning half (`bench select-fit --gate-only`): tune
// selected top-3 unchanged (75.3%), held-out +1.2 points for 3.3 points fewer no-skill
// requests refused (85.0%, the target's edge) and one more bundled trigger-eval miss, so
// they are not used yet.
const GATE_STANDOUT: f32 = 0.000;
const GATE_MARGIN: f32 = 0.000;
const GATE_HELD: f32 = 0.000;
// The dense witness (round 7), measured and not used. The logistic refit with both dense
// inputs did worse on the tuning half's selection at the same refusal (host selected top-3
// 71.5% against 73.1% at 88.5% refused: it fits the ranking's rows, not `select`); a
// `BENCH_SELECT_TRY` grid on the tuning half found `gate_dense` 3.0 with the intercept at
// -7.6 (host top-3 73.1% -> 73.5%, multi-intent 48.7% -> 53.8%, refused 88.5% both), but in
// `bench select`'s steps rows it cost held-out selected top-1 (66.3% -> 65.6%, top-3
// 75.3% -> 75.6%), so it ships off (`bench select`'s steps row "gate's dense witness on").
const GATE_DENSE: f32 = 0.000;
const GATE_DENSE_MARGIN: f32 = 0.000;
/// Fitted share of the best's lexical score a candidate needs for full confidence.
const EVIDENCE_SHARE: f32 = 0.5;
/// Fitted confidence drop below the best candidate.
const REL: f32 = 0.0;
/// Fitted weight of covering a multi-intent request's other parts.
const DIVERSITY: f32 = 5.0;

impl Params {
    /// The values the crate ships.
    pub const SHIPPED: Params = Params {
        k1: K1,
        b: B,
        w: W,
        exact_name: EXACT_NAME,
        not_penalty: NOT_PENALTY,
        only_penalty: ONLY_PENALTY,
        w_lex: W_LEX,
        w_sem: W_SEM,
        w_sem_len: W_SEM_LEN,
        w_dense: W_DENSE,
        // Measured on the tuning half (`bench select`'s steps rows): dense candidates alone
        // moved nothing (host selected top-3 72.7% off, 72.3% on) and any fused weight
        // cost multi-intent coverage, so they are not used yet.
        dense: false,
        fillers: true,
        gate_bias: GATE_BIAS,
        gate_lex: GATE_LEX,
        gate_cover: GATE_COVER,
        gate_sem: GATE_SEM,
        gate_unknown: GATE_UNKNOWN,
        gate_miss: GATE_MISS,
        gate_len: GATE_LEN,
        gate_full: 0.0,
        gate_standout: GATE_STANDOUT,
        gate_margin: GATE_MARGIN,
        gate_held: GATE_HELD,
        gate_dense: GATE_DENSE,
        gate_dense_margin: GATE_DENSE_MARGIN,
        // Measured on the tuning half: host selected top-3 72.7% -> 73.1% with it on; in
        // `bench select`'s steps rows it cost held-out selected top-1 and top-3 (66.3% ->
        // 65.6%, 76.3% -> 75.6%), so it ships off.
        skip_numbers: false,
        evidence_share: EVIDENCE_SHARE,
        rel: REL,
        diversity: DIVERSITY,
        typos: true,
        intent_slots: true,
    };
}

/// The gate fitted with the full model's similarity (`cargo xtask bench select-fit
/// --transformer`), the ranking as shipped.
#[cfg(feature = "transformer")]
const T_GATE_BIAS: f32 = -3.801;
#[cfg(feature = "transformer")]
const T_GATE_LEX: f32 = 2.423;
#[cfg(feature = "transformer")]
const T_GATE_COVER: f32 = 6.068;
#[cfg(feature = "transformer")]
const T_GATE_SEM: f32 = 3.794;
#[cfg(feature = "transformer")]
const T_GATE_UNKNOWN: f32 = -15.581;
#[cfg(feature = "transformer")]
const T_GATE_MISS: f32 = -1.199;
#[cfg(feature = "transformer")]
const T_GATE_LEN: f32 = 0.000;
#[cfg(feature = "transformer")]
const T_GATE_FULL: f32 = 7.040;
// Fitted before these inputs existed: the model's gate does not read them yet.
#[cfg(feature = "transformer")]
const T_GATE_STANDOUT: f32 = 0.000;
#[cfg(feature = "transformer")]
const T_GATE_MARGIN: f32 = 0.000;
#[cfg(feature = "transformer")]
const T_GATE_HELD: f32 = 0.000;
#[cfg(feature = "transformer")]
const T_GATE_DENSE: f32 = 0.000;
#[cfg(feature = "transformer")]
const T_GATE_DENSE_MARGIN: f32 = 0.000;
#[cfg(feature = "transformer")]
const T_EVIDENCE_SHARE: f32 = 1.0;
#[cfg(feature = "transformer")]
const T_REL: f32 = 0.25;

#[cfg(feature = "transformer")]
impl Params {
    /// The values used when the index has a sentence-embedding model (crate feature
    /// `transformer`): [`Params::SHIPPED`]'s ranking, with the gate and the confidence
    /// drop below the best candidate (`evidence_share`, `rel`) fitted with the model's
    /// similarity as one more gate input.
    pub const TRANSFORMER: Params = Params {
        gate_bias: T_GATE_BIAS,
        gate_lex: T_GATE_LEX,
        gate_cover: T_GATE_COVER,
        gate_sem: T_GATE_SEM,
        gate_unknown: T_GATE_UNKNOWN,
        gate_miss: T_GATE_MISS,
        gate_len: T_GATE_LEN,
        gate_full: T_GATE_FULL,
        gate_standout: T_GATE_STANDOUT,
        gate_margin: T_GATE_MARGIN,
        gate_held: T_GATE_HELD,
        gate_dense: T_GATE_DENSE,
        gate_dense_margin: T_GATE_DENSE_MARGIN,
        evidence_share: T_EVIDENCE_SHARE,
        rel: T_REL,
        ..Params::SHIPPED
    };
}

impl Default for Params {
    /// [`Params::SHIPPED`].
    fn default() -> Self {
        Params::SHIPPED
    }
}
