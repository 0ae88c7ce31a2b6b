//! Dense candidates: the skills whose whole text (the static table's embedding of name,
//! description, headings and the start of the body, `DocInfo::whole`) is closest in
//! meaning to the request, added to the lexical candidates so that a request sharing no
//! distinctive word with its skill can still find it (`Params::dense`). The lexical
//! evidence keeps ordering them: their similarity is one more fused signal
//! (`Params::w_dense`) and the gate reads the best one (`Gate::dense`).

use crate::doc::DocInfo;
use crate::embed::Embedding;
use crate::index::State;
use crate::triggers::KeyMap;

/// Skills closest in meaning to the request (by their whole text) added to the
/// candidates. Set by hand: the right skill of a request that shares no word with it is
/// rarely further down, and each one added is scored like the lexical candidates.
const DENSE_CANDIDATES: usize = 8;
/// Adds the [`DENSE_CANDIDATES`] skills that `keep` lets through whose whole text is
/// closest to the request's embedding (one dot product a skill; a request with no known
/// token adds none).
pub(super) fn candidates(
    st: &State,
    query: &Embedding,
    keep: impl Fn(&DocInfo) -> bool,
    cands: &mut KeyMap<()>,
) {
    if query.is_zero() {
        return;
    }
    // The best so far, worst last: a short sorted list (one insertion per improvement).
    let mut best: Vec<(f32, u64)> = Vec::with_capacity(DENSE_CANDIDATES + 1);
    for (&key, info) in st.docs.iter() {
        let cos = query.cosine(&info.whole);
        if best.len() == DENSE_CANDIDATES && best.last().is_some_and(|&(c, _)| cos <= c) {
            continue;
        }
        if !keep(info) {
            continue;
        }
        let at = best.partition_point(|&(c, k)| c > cos || (c == cos && k < key));
        best.insert(at, (cos, key));
        best.truncate(DENSE_CANDIDATES);
    }
    for (_, key) in best {
        cands.insert(key, ());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::index::SearchRequest;
    use crate::params::Params;

    /// A request sharing no word with its skill finds it through the dense candidates only.
    #[test]
    fn a_request_in_other_words_finds_its_skill_through_dense_candidates() {
        let skills = [
            (
                "photo-resize",
                "Scale pictures down to smaller dimensions for the web.",
            ),
            ("git-commit", "Write commit messages from staged changes."),
            ("icon-font", "Turn SVG images into an icon font."),
            (
                "sql-query",
                "Query a database table with SQL and explain plans.",
            ),
            (
                "email-draft",
                "Compose an email to colleagues about a meeting.",
            ),
        ];
        // More skills than dense candidates, so that they are not simply all of them.
        let others: Vec<(String, String)> = (0..DENSE_CANDIDATES + 2)
            .map(|i| {
                (
                    format!("garden-{i}"),
                    format!("Plan garden bed {i} for tomatoes."),
                )
            })
            .collect();
        let all = skills
            .iter()
            .map(|(n, d)| (*n, *d))
            .chain(others.iter().map(|(n, d)| (n.as_str(), d.as_str())));
        let (_dir, index) = crate::index::test_support::index_of(all);
        let request = "shrink my photographs and images";
        let names = |p: &Params| -> Vec<String> {
            let req = SearchRequest {
                text: request,
                limit: 10,
                ..Default::default()
            };
            let (hits, _) = index.rank(&req, 50, p, Some(50)).unwrap();
            hits.into_iter().map(|m| m.name).collect()
        };
        let off = names(&Params {
            dense: false,
            ..Params::SHIPPED
        });
        // Lexically only the icon font shares a word ("images").
        assert_eq!(off, ["icon-font"]);
        let on = names(&Params {
            dense: true,
            ..Params::SHIPPED
        });
        assert!(on.contains(&"photo-resize".to_owned()), "{on:?}");
        // The lexical candidate and at most DENSE_CANDIDATES more, not every skill.
        assert!(on.len() <= DENSE_CANDIDATES + 1, "{on:?}");
    }
}
