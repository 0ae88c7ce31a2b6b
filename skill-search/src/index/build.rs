//! Analysing many skills at once for an index build: tokenizing, stemming and embedding a
//! skill's text is most of a build's work and needs nothing shared, so a large build spreads
//! it over worker threads and takes the results back in index order (the order in which term
//! ids are given and documents are added, so that a build on any number of threads gives
//! the same index as one on a single thread).
//!
//! A build of `PARALLEL_MIN` (256) skills or more analyses them on scoped worker threads. Each
//! worker gives term ids of its own. The calling thread takes the results back in index order,
//! gives the global term ids and adds the documents.

use std::ops::Range;
use std::sync::Arc;
use std::sync::mpsc::{SyncSender, sync_channel};

use skill_registry::Skill;
use tantivy::tokenizer::TextAnalyzer;

use crate::doc::{self, Analysed, Fields, GlobalIds, Scratch};
use crate::embed::StaticEmbedder;

/// Most skills a worker analyses before handing them over.
const CHUNK: usize = 32;
/// Most bytes of skill text (body and description) in one hand-over, past its first skill:
/// with [`AHEAD`], what bounds the memory of analysed skills waiting when skills are large
/// (a pack of 4 MiB skills hands them over one by one).
const CHUNK_BYTES: usize = 1024 * 1024;
/// Fewer skills than this are analysed on the calling thread (a reload's few files are
/// not worth starting threads for).
const PARALLEL_MIN: usize = 256;
/// Most worker threads, whatever the machine has.
const MAX_WORKERS: usize = 8;
/// Hand-overs a worker may have queued before it waits for the builder to take them. With
/// one more finished and waiting to be queued, one being analysed and the one the builder
/// holds, at most `(AHEAD + 2) * workers + 1` hand-overs of analysed skills exist at once.
const AHEAD: usize = 2;

/// What analysing needs besides the skill.
pub(crate) struct Analyser<'a> {
    pub(crate) fields: &'a Fields,
    /// The indexing analyzer (cloned per thread).
    pub(crate) english: &'a TextAnalyzer,
    /// The stems analyzer of triggers (cloned per thread).
    pub(crate) stems: &'a TextAnalyzer,
    pub(crate) embedder: &'static StaticEmbedder,
}

/// One analysing thread's state.
struct Worker<'a> {
    analyser: &'a Analyser<'a>,
    english: TextAnalyzer,
    stems: TextAnalyzer,
    local: Scratch,
}

impl<'a> Worker<'a> {
    fn new(analyser: &'a Analyser<'a>) -> Self {
        Worker {
            analyser,
            english: analyser.english.clone(),
            stems: analyser.stems.clone(),
            local: Scratch::default(),
        }
    }

    fn analyse(&mut self, skill: &Arc<Skill>, key: u64) -> Analysed {
        doc::analyse(
            self.analyser.fields,
            skill,
            key,
            &mut self.local,
            &mut self.english,
            &mut self.stems,
            self.analyser.embedder,
        )
    }
}

/// A skill to analyse, under the name it is indexed by.
pub(crate) type Named<'s> = (&'s str, &'s Arc<Skill>);

/// Analyse `skills` (skill `i` gets key `first_key + i`) and hand each to `take` in order,
/// with its name and its analysing thread's map of term ids ([`Analysed::finish`] extends
/// it). Stops at the first error `take` returns, and returns it.
pub(crate) fn analyse_in_order<E>(
    analyser: &Analyser<'_>,
    skills: &[Named<'_>],
    first_key: u64,
    take: impl FnMut(&str, Analysed, &mut GlobalIds) -> Result<(), E>,
) -> Result<(), E> {
    let workers = if skills.len() < PARALLEL_MIN {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    };
    analyse_on(workers, analyser, skills, first_key, take)
}

/// [`analyse_in_order`] on `workers` threads (at most [`MAX_WORKERS`], and no more than
/// there are chunks); with fewer than two, on the calling thread.
fn analyse_on<E>(
    workers: usize,
    analyser: &Analyser<'_>,
    skills: &[Named<'_>],
    first_key: u64,
    mut take: impl FnMut(&str, Analysed, &mut GlobalIds) -> Result<(), E>,
) -> Result<(), E> {
    let chunks = chunks(skills);
    let workers = workers.min(MAX_WORKERS).min(chunks.len());
    if workers < 2 {
        return on_this_thread(analyser, skills, first_key, &mut take);
    }
    let chunks = &chunks;
    std::thread::scope(|scope| {
        // Worker `w` analyses chunks `w`, `w + workers`, ...: in index order for itself,
        // and the builder reads chunk `k` from worker `k % workers`.
        let mut inboxes = Vec::with_capacity(workers);
        for w in 0..workers {
            let (tx, rx) = sync_channel::<Vec<Analysed>>(AHEAD);
            let spawned = std::thread::Builder::new()
                .name(format!("skill-index-{w}"))
                .spawn_scoped(scope, move || {
                    work(analyser, skills, chunks, first_key, w, workers, &tx);
                });
            match spawned {
                Ok(handle) => inboxes.push((rx, Some(handle))),
                Err(_) => {
                    // No threads to be had: the ones started stop at their first hand-over,
                    // now that nobody will take it (their first chunk's work is wasted).
                    drop(inboxes);
                    return on_this_thread(analyser, skills, first_key, &mut take);
                }
            }
        }
        let mut maps: Vec<GlobalIds> = vec![GlobalIds::new(); workers];
        for (k, range) in chunks.iter().enumerate() {
            let w = k % workers;
            let (Some((inbox, handle)), Some(map), Some(chunk)) = (
                inboxes.get_mut(w),
                maps.get_mut(w),
                skills.get(range.clone()),
            ) else {
                break;
            };
            let Ok(analysed) = inbox.recv() else {
                // A worker stops early only when it panicked (its builder is still here):
                // go on with its panic rather than with part of the index.
                if let Some(Err(panic)) = handle.take().map(|h| h.join()) {
                    std::panic::resume_unwind(panic);
                }
                break;
            };
            for ((name, _), a) in chunk.iter().zip(analysed) {
                // On an error the inboxes are dropped with this closure's frame, so every
                // worker stops at its next hand-over before the scope joins it.
                take(name, a, map)?;
            }
        }
        Ok(())
    })
}

/// The hand-overs: consecutive ranges of `skills`, each of at most [`CHUNK`] skills and,
/// past its first skill, at most [`CHUNK_BYTES`] of text.
fn chunks(skills: &[Named<'_>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut bytes = 0;
    for (i, (_, skill)) in skills.iter().enumerate() {
        let size = text_bytes(skill);
        if i > start && (i - start == CHUNK || bytes + size > CHUNK_BYTES) {
            out.push(start..i);
            start = i;
            bytes = 0;
        }
        bytes += size;
    }
    if start < skills.len() {
        out.push(start..skills.len());
    }
    out
}

/// The bytes of a skill's text that analysis reads (and copies into its document).
fn text_bytes(skill: &Skill) -> usize {
    let m = &skill.manifest;
    let lists = [
        &m.when_to_use,
        &m.when_not_to_use,
        &m.tags,
        &m.triggers.keywords,
        &m.triggers.verbs,
        &m.triggers.patterns,
    ];
    skill.name.len()
        + skill.body.len()
        + skill.description.len()
        + m.summary.as_ref().map_or(0, String::len)
        + m.brief_description.as_ref().map_or(0, String::len)
        + skill.domain.as_ref().map_or(0, String::len)
        + lists
            .iter()
            .flat_map(|list| list.iter())
            .map(String::len)
            .sum::<usize>()
}

/// Worker `w` of `workers`: analyse its chunks in order and send each.
fn work(
    analyser: &Analyser<'_>,
    skills: &[Named<'_>],
    chunks: &[Range<usize>],
    first_key: u64,
    w: usize,
    workers: usize,
    tx: &SyncSender<Vec<Analysed>>,
) {
    let mut worker = Worker::new(analyser);
    for range in chunks.iter().skip(w).step_by(workers) {
        let Some(chunk) = skills.get(range.clone()) else {
            return;
        };
        let base = first_key + range.start as u64;
        let analysed = chunk
            .iter()
            .zip(base..)
            .map(|((_, skill), key)| worker.analyse(skill, key))
            .collect();
        if tx.send(analysed).is_err() {
            return;
        }
    }
}

fn on_this_thread<E>(
    analyser: &Analyser<'_>,
    skills: &[Named<'_>],
    first_key: u64,
    mut take: impl FnMut(&str, Analysed, &mut GlobalIds) -> Result<(), E>,
) -> Result<(), E> {
    let mut worker = Worker::new(analyser);
    let mut map = GlobalIds::new();
    for ((name, skill), key) in skills.iter().zip(first_key..) {
        take(name, worker.analyse(skill, key), &mut map)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::fs;

    use skill_registry::{Registry, RegistryConfig, Source};

    use super::*;
    use crate::doc::Terms;
    use crate::text;

    /// A pack of `n` skills whose words overlap (so that threads meet the same terms in
    /// different orders), in several scripts, with single-word names, limit clauses and
    /// triggers among them.
    fn pack(n: usize) -> (tempfile::TempDir, Registry) {
        const WORDS: [&str; 12] = [
            "invoice", "forecast", "poster", "ledger", "sprint", "webhook", "glacier", "orchid",
            "tariff", "lantern", "harbour", "quiver",
        ];
        const OTHER_SCRIPTS: [&str; 7] = [
            "İstanbul",
            "Straße",
            "ﬃcient",
            "⑴item",
            "東京",
            "Ελλάδα",
            "Москва",
        ];
        let dir = tempfile::tempdir().unwrap();
        for i in 0..n {
            let name = if i % 5 == 0 {
                format!("{}{i}", WORDS[i % WORDS.len()])
            } else {
                format!("skill-{i}")
            };
            let folder = dir.path().join(&name);
            fs::create_dir_all(&folder).unwrap();
            let (a, b, c) = (WORDS[i % 12], WORDS[(i * 7) % 12], WORDS[(i / 3) % 12]);
            let d = OTHER_SCRIPTS[i % OTHER_SCRIPTS.len()];
            fs::write(
                folder.join("SKILL.md"),
                format!(
                    "---\nname: {name}\ndescription: Draft the {a} and the {b} report {i}. Not for {c} work.\ntriggers:\n  keywords: [\"{b} {c}\"]\n  patterns: ['\\b{a}\\s+{i}\\b']\n---\n# {c} steps\n\nCheck the {a} {b} {c} word{i} and {d} before anything else.\n"
                ),
            )
            .unwrap();
        }
        let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "user",
        )]));
        (dir, registry)
    }

    /// The analyser an index build uses, over `fields`.
    fn analyser(fields: &Fields) -> Analyser<'_> {
        Analyser {
            fields,
            english: &ENGLISH_INDEXING,
            stems: &STEMS,
            embedder: StaticEmbedder::bundled().unwrap(),
        }
    }

    static ENGLISH_INDEXING: std::sync::LazyLock<TextAnalyzer> =
        std::sync::LazyLock::new(text::english_indexing);
    static STEMS: std::sync::LazyLock<TextAnalyzer> =
        std::sync::LazyLock::new(text::stems_analyzer);

    /// Everything `analyse_on(workers, ...)` hands over, finished: per skill its name, key,
    /// term ids with frequencies, clause ids and name term; and the terms' ids.
    fn run(workers: usize, skills: &[Named<'_>]) -> (Vec<String>, Vec<(String, u32)>) {
        let (_, fields) = Fields::schema();
        let analyser = analyser(&fields);
        let mut terms = Terms::default();
        let mut out = Vec::new();
        analyse_on(workers, &analyser, skills, 100, |name, analysed, global| {
            let (key, _, info, _) = analysed.finish(global, &mut terms);
            let tf: Vec<_> = info
                .terms
                .ids()
                .map(|id| (id, info.tf(id).copied()))
                .collect();
            out.push(format!(
                "{name} {key} {tf:?} {:?} {:?}",
                info.clauses.iter().map(|(_, ids)| ids).collect::<Vec<_>>(),
                info.name_term
            ));
            Ok::<(), ()>(())
        })
        .unwrap();
        (out, terms.all())
    }

    #[test]
    fn any_number_of_threads_gives_what_one_thread_gives() {
        let (_dir, registry) = pack(CHUNK * 5 + 3);
        let snapshot = registry.snapshot();
        let skills: Vec<Named<'_>> = snapshot.skills().map(|s| (s.name.as_str(), s)).collect();
        assert_eq!(skills.len(), CHUNK * 5 + 3);
        let (one, one_terms) = run(1, &skills);
        assert_eq!(one.len(), skills.len());
        assert!(
            one[0].starts_with(&format!("{} 100 ", skills[0].0)),
            "{}",
            one[0]
        );
        assert!(
            one.iter().any(|l| !l.ends_with("None")),
            "some name term is found"
        );
        for workers in [2, 3, MAX_WORKERS + 1] {
            let (many, many_terms) = run(workers, &skills);
            assert_eq!(many, one, "{workers} threads");
            assert_eq!(many_terms, one_terms, "{workers} threads");
        }
    }

    #[test]
    fn tantivy_indexes_exactly_the_analysed_terms_and_lengths_of_every_field() {
        // Enough skills for the build to run on worker threads.
        let (_dir, registry) = pack(PARALLEL_MIN + 7);
        let index = crate::SkillIndex::build(registry.snapshot()).unwrap();
        let st = index.state.read().unwrap();
        let names: std::collections::HashMap<u32, String> =
            st.terms.all().into_iter().map(|(t, id)| (id, t)).collect();
        let searcher = index.reader.searcher();
        let [segment] = searcher.segment_readers() else {
            panic!("a build leaves one segment");
        };
        for (f, &field) in index.fields.text.iter().enumerate() {
            let mut ours: Vec<&str> = st
                .docs
                .values()
                .flat_map(|info| {
                    info.terms
                        .ids()
                        .filter(move |&id| info.tf(id).is_some_and(|tf| tf[f] > 0))
                })
                .map(|id| names[&id].as_str())
                .collect();
            ours.sort_unstable();
            ours.dedup();
            let inverted = segment.inverted_index(field).unwrap();
            let mut theirs = Vec::new();
            let mut stream = inverted.terms().stream().unwrap();
            while stream.advance() {
                theirs.push(String::from_utf8(stream.key().to_vec()).unwrap());
            }
            assert!(ours.len() > 10, "field {f} has words");
            assert_eq!(theirs, ours, "field {f}");
            assert_eq!(inverted.total_num_tokens(), st.len_sum[f], "field {f}");
        }
    }

    #[test]
    fn hand_overs_are_bounded_by_count_and_text_and_as_long_as_the_bounds_allow() {
        let (dir, _) = pack(CHUNK + 5);
        // Large skills among the small ones: two that fit one hand-over together, one that
        // does not, and one over the byte bound on its own.
        for (name, kib) in [
            ("big-a", 400),
            ("big-b", 500),
            ("big-c", 300),
            ("huge", 1500),
        ] {
            let folder = dir.path().join(name);
            fs::create_dir_all(&folder).unwrap();
            let body = "word ".repeat(kib * 1024 / 5);
            fs::write(
                folder.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: Large.\n---\n{body}\n"),
            )
            .unwrap();
        }
        // Large text in the frontmatter alone counts too.
        let folder = dir.path().join("wide");
        fs::create_dir_all(&folder).unwrap();
        let tags: String = (0..1100)
            .map(|i| format!("  - tag{i} {}\n", "w".repeat(1000)))
            .collect();
        fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: wide\ndescription: Wide.\ntags:\n{tags}---\nShort.\n"),
        )
        .unwrap();
        let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "user",
        )]));
        let snapshot = registry.snapshot();
        let skills: Vec<Named<'_>> = snapshot.skills().map(|s| (s.name.as_str(), s)).collect();
        let size = |i: usize| text_bytes(skills[i].1);
        let wide = skills.iter().position(|s| s.0 == "wide").unwrap();
        assert!(skills[wide].1.body.len() < 100 && size(wide) > CHUNK_BYTES);
        let ranges = chunks(&skills);
        assert_eq!(ranges.first().map(|r| r.start), Some(0));
        assert_eq!(ranges.last().map(|r| r.end), Some(skills.len()));
        for (k, r) in ranges.iter().enumerate() {
            assert!(!r.is_empty() && r.len() <= CHUNK, "{r:?}");
            let bytes: usize = r.clone().map(size).sum();
            assert!(r.len() == 1 || bytes <= CHUNK_BYTES, "{r:?}: {bytes} bytes");
            if let Some(next) = ranges.get(k + 1) {
                assert_eq!(next.start, r.end);
                // The next skill would have broken a bound.
                assert!(
                    r.len() == CHUNK || bytes + size(r.end) > CHUNK_BYTES,
                    "{r:?}"
                );
            }
        }
        assert!(
            ranges.iter().any(|r| r.len() == CHUNK),
            "the count bound is met"
        );
        assert!(
            ranges
                .iter()
                .any(|r| r.len() > 1 && r.clone().map(size).sum::<usize>() > CHUNK_BYTES / 2),
            "large skills share a hand-over when they fit"
        );
        assert!(
            ranges
                .iter()
                .any(|r| r.len() == 1 && size(r.start) > CHUNK_BYTES)
        );
    }

    #[test]
    fn an_error_stops_the_build_and_every_thread() {
        let (_dir, registry) = pack(CHUNK * 6);
        let snapshot = registry.snapshot();
        let skills: Vec<Named<'_>> = snapshot.skills().map(|s| (s.name.as_str(), s)).collect();
        let (_, fields) = Fields::schema();
        let analyser = analyser(&fields);
        let mut taken = 0;
        // Fails inside the second worker's first chunk, with the first worker blocked on
        // its hand-over: the call returns (the scope joins every thread) with the error.
        let outcome = analyse_on(2, &analyser, &skills, 0, |_, _, _| {
            taken += 1;
            if taken == CHUNK + 2 {
                Err(taken)
            } else {
                Ok(())
            }
        });
        assert_eq!(outcome, Err(CHUNK + 2));
        assert_eq!(taken, CHUNK + 2);
    }
}
