//! How the index's tantivy segments are merged: here, under the writer's lock, each merge
//! waited for, and never by tantivy on its own threads (the writer has `NoMergePolicy`).
//!
//! tantivy's default policy starts merging after a commit once 8 segments of a size exist,
//! and the index used to merge every segment into one after a build: the two merges took
//! the same segments, and the one that finished second failed ("The segments that were
//! merged could not be found in the SegmentManager"), so a build large enough to fill the
//! writer's memory 8 times (between 35,000 and 50,000 real-sized skills) failed. With one merge at a time,
//! none can take another's segments.
//!
//! A build or rebuild merges every segment into one. Applying a change set merges only the
//! small segments tantivy's log policy picks. Either way the merge is waited for under the
//! writer's lock, so no two merges ever take the same segments.

use tantivy::merge_policy::{LogMergePolicy, MergePolicy, NoMergePolicy};
use tantivy::{Index, IndexWriter};

use super::WRITER_MEMORY_BYTES;
use crate::Error;

/// After an incremental update, segments of one size level are merged once this many exist
/// (tantivy's default), so that reloads do not pile up segments for queries to visit.
const MERGE_AT_SEGMENTS: usize = 8;
/// Segments of up to this many documents form the smallest size level (levels above it
/// grow by a factor of about 1.7, tantivy's default): the few documents of each reload are
/// merged among themselves, not into the segment of a build's thousands, which is rewritten
/// only when segments of its size accumulate.
const SMALL_SEGMENT_DOCS: u32 = 100;

/// A writer for `index` that merges nothing by itself.
pub(super) fn writer(index: &Index) -> Result<IndexWriter, Error> {
    let writer = index.writer_with_num_threads(1, WRITER_MEMORY_BYTES)?;
    writer.set_merge_policy(Box::new(NoMergePolicy));
    Ok(writer)
}

/// After a (re)build: merge every committed segment into one (faster queries), and wait.
pub(super) fn compact(index: &Index, writer: &mut IndexWriter) -> Result<(), Error> {
    let ids = index.searchable_segment_ids()?;
    if ids.len() > 1 {
        writer.merge(&ids).wait()?;
    }
    Ok(())
}

/// After an incremental update: the merges tantivy's log merge policy (with
/// [`MERGE_AT_SEGMENTS`] and [`SMALL_SEGMENT_DOCS`]) picks among the committed segments,
/// one after the other, each waited for.
pub(super) fn tidy(index: &Index, writer: &mut IndexWriter) -> Result<(), Error> {
    let mut policy = LogMergePolicy::default();
    policy.set_min_num_segments(MERGE_AT_SEGMENTS);
    policy.set_min_layer_size(SMALL_SEGMENT_DOCS);
    let candidates = policy.compute_merge_candidates(&index.searchable_segment_metas()?);
    for candidate in candidates {
        // tantivy asserts that a merge has segments.
        if !candidate.0.is_empty() {
            writer.merge(&candidate.0).wait()?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::fs;
    use std::path::Path;
    use std::sync::Arc;

    use skill_registry::{Registry, RegistryConfig, Snapshot, Source};

    use super::super::{SearchRequest, SkillIndex, Storage};
    use super::{MERGE_AT_SEGMENTS, SMALL_SEGMENT_DOCS};

    /// A word of letters only for `n`, unlike every other `n`'s (and unchanged by stemming).
    fn word(mut n: usize) -> String {
        let mut s = String::from("zq");
        loop {
            s.push(char::from(b'a' + (n % 26) as u8));
            n /= 26;
            if n == 0 {
                s.push('x');
                return s;
            }
        }
    }

    /// Skill `i` of a test pack: found by its own word.
    fn write_skill(root: &Path, i: usize, version: &str) {
        write_skill_with(root, i, version, "");
    }

    /// Skill `i` with `filler` at the end of its body.
    fn write_skill_with(root: &Path, i: usize, version: &str, filler: &str) {
        let name = format!("skill-{i}");
        let dir = root.join(&name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Handle the {} records {version}.\n---\n# Steps\n\nCheck the {} file.\n{filler}",
                word(i),
                word(i)
            ),
        )
        .unwrap();
    }

    /// A registry over `n` skills in a temporary folder.
    fn pack(n: usize) -> (tempfile::TempDir, Registry) {
        pack_with(n, 0)
    }

    /// A registry over `n` skills, each with `filler` more words of its own in its body
    /// (numbered from [`FILLER_FROM`], so that no filler word is another skill's word).
    fn pack_with(n: usize, filler: usize) -> (tempfile::TempDir, Registry) {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..n {
            let words: Vec<String> = (0..filler)
                .map(|k| word(FILLER_FROM + i * filler + k))
                .collect();
            write_skill_with(dir.path(), i, "", &words.join(" "));
        }
        let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(
            dir.path(),
            "user",
        )]));
        (dir, registry)
    }

    /// Every skill of `snapshot` is found first by its own word, and the index holds no
    /// other document.
    fn all_found(index: &SkillIndex, snapshot: &Arc<Snapshot>) {
        let mut n = 0;
        for skill in snapshot.skills() {
            let i: usize = skill.name["skill-".len()..].parse().unwrap();
            let hits = index
                .search(&SearchRequest {
                    text: &word(i),
                    ..Default::default()
                })
                .unwrap();
            assert_eq!(
                hits.first().map(|h| h.name.as_str()),
                Some(skill.name.as_str())
            );
            n += 1;
        }
        assert_eq!(index.len(), n);
        assert_eq!(index.reader.searcher().num_docs(), n as u64);
    }

    fn segments(index: &SkillIndex) -> usize {
        index.index.searchable_segment_ids().unwrap().len()
    }

    /// Where the filler words of [`pack_with`] start.
    const FILLER_FROM: usize = 1_000_000;

    #[test]
    fn a_build_of_many_segments_indexes_every_skill_in_one_segment() {
        // One segment every 2 skills: 8 segments, where tantivy's own merge policy starts
        // merging (a build of 50,000 real-sized skills fills its writer's memory budget
        // more than 8 times). Each skill carries thousands of words of its own, so that a
        // merge of the 8 segments takes longer than the last commit: a merge started by
        // tantivy would still run when the build's own merge of every segment starts, and
        // one of the two would fail (as a build of 50,000 skills did).
        let (_dir, registry) = pack_with(16, 5_000);
        for _ in 0..5 {
            let index = SkillIndex::build_with(registry.snapshot(), Storage::Ram, Some(2)).unwrap();
            assert_eq!(segments(&index), 1);
            all_found(&index, &registry.snapshot());
        }
    }

    /// Search hits' names for `text`, read as written (the made-up words here are a typo
    /// apart, and a removed one would be read as its successor).
    fn found(index: &SkillIndex, text: &str) -> Vec<String> {
        let req = SearchRequest {
            text,
            ..Default::default()
        };
        // Nor dense candidates: the test reads which skill holds a word.
        let as_written = crate::params::Params {
            typos: false,
            dense: false,
            ..crate::params::Params::SHIPPED
        };
        index
            .search_with(&req, &as_written)
            .unwrap()
            .0
            .into_iter()
            .map(|h| h.name)
            .collect()
    }

    #[test]
    fn reloads_merge_their_segments_once_merge_at_segments_of_a_size_exist() {
        let (dir, registry) = pack(4);
        let index = SkillIndex::build(registry.snapshot()).unwrap();
        assert_eq!(segments(&index), 1);
        // Each reload adds a skill and changes skill-0 (which stays in the build's segment
        // the first time, and in the last reload's segment after): one more segment each,
        // none emptied.
        for k in 1..MERGE_AT_SEGMENTS {
            write_skill(dir.path(), 100 + k, "");
            write_skill(dir.path(), 0, &word(1000 + k));
            index.apply(&registry.reload()).unwrap();
            let expected = if k + 1 < MERGE_AT_SEGMENTS { k + 1 } else { 1 };
            assert_eq!(segments(&index), expected, "after reload {k}");
            all_found(&index, &registry.snapshot());
            assert_eq!(found(&index, &word(1000 + k)), ["skill-0"]);
            assert!(found(&index, &word(1000 + k - 1)).is_empty());
        }
    }

    #[test]
    fn reloads_merge_among_themselves_and_leave_a_builds_segment_alone() {
        // A build's segment is a size level above the reloads' few documents.
        let base = 2 * SMALL_SEGMENT_DOCS as usize;
        let (dir, registry) = pack(base);
        let index = SkillIndex::build(registry.snapshot()).unwrap();
        let built = index.index.searchable_segment_ids().unwrap();
        for k in 0..MERGE_AT_SEGMENTS {
            write_skill(dir.path(), base + k, "");
            index.apply(&registry.reload()).unwrap();
        }
        let ids = index.index.searchable_segment_ids().unwrap();
        assert_eq!(ids.len(), 2, "the build's and the reloads' merged");
        assert!(
            ids.contains(&built[0]),
            "the build's segment was not rewritten"
        );
        all_found(&index, &registry.snapshot());
    }
}
