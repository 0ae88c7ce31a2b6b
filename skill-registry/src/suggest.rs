//! Closest names, for error texts. Suggestions are only ever shown, never acted on.

/// How many suggestions an error lists at most.
pub const MAX_SUGGESTIONS: usize = 3;

/// Names longer than this are compared by prefix and substring only (edit distance is
/// quadratic in the length).
const MAX_EDIT_LEN: usize = 64;

/// The names closest to `query`, best first, at most [`MAX_SUGGESTIONS`]: case-insensitive
/// edit distance (with transpositions) within a third of the query's length (at least 2),
/// or names that contain the query or are contained in it. Ties go by name, so the result
/// is deterministic.
pub fn closest_names<'a, I>(query: &str, candidates: I) -> Vec<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let q: Vec<char> = query.trim().to_lowercase().chars().collect();
    if q.is_empty() {
        return Vec::new();
    }
    let limit = (q.len() / 3).max(2);
    let q_text: String = q.iter().collect();
    let mut scored: Vec<(usize, &str)> = Vec::new();
    for name in candidates {
        let lower = name.to_lowercase();
        let c: Vec<char> = lower.chars().collect();
        let score = if lower == q_text {
            0
        } else if lower.contains(&q_text) || (c.len() >= 3 && q_text.contains(&lower)) {
            1
        } else if q.len() <= MAX_EDIT_LEN && c.len() <= MAX_EDIT_LEN {
            let d = distance(&q, &c);
            if d > limit {
                continue;
            }
            d + 1
        } else {
            continue;
        };
        scored.push((score, name));
    }
    scored.sort_unstable();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, n)| n.to_owned())
        .collect()
}

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
fn distance(a: &[char], b: &[char]) -> usize {
    let w = b.len() + 1;
    let mut prev2 = vec![0usize; w];
    let mut prev: Vec<usize> = (0..w).collect();
    let mut cur = vec![0usize; w];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..w {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn typos_transpositions_and_substrings() {
        let names = ["email.send", "email.search", "email.draft", "tasks.create"];
        assert_eq!(closest_names("email.sned", names), ["email.send"]);
        assert_eq!(
            closest_names("email", names),
            ["email.draft", "email.search", "email.send"]
        );
        assert_eq!(closest_names("TASKS.CREAT", names), ["tasks.create"]);
        assert!(closest_names("calendar", names).is_empty());
        assert!(closest_names("  ", names).is_empty());
    }

    #[test]
    fn at_most_max_suggestions_and_deterministic() {
        let names: Vec<String> = (0..10).map(|i| format!("skill{i}")).collect();
        let got = closest_names("skill", names.iter().map(String::as_str));
        assert_eq!(got.len(), MAX_SUGGESTIONS);
        assert_eq!(got, ["skill0", "skill1", "skill2"]);
    }

    #[test]
    fn distance_counts_edits() {
        let d = |a: &str, b: &str| {
            distance(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("ab", "ba"), 1);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("é", "e"), 1);
    }

    #[test]
    fn very_long_names_do_not_cost_quadratic_time() {
        let long = "x".repeat(10_000);
        assert!(closest_names(&long, ["y"]).is_empty());
    }
}
