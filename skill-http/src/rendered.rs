//! Answers rendered once per snapshot. A skill's detail (`GET /v1/skills/{name}`) is a pure
//! function of the snapshot it is read from (its entry, shadows, trust, profiles and paths
//! all come from it), and rendering it to JSON was most of that endpoint's work. So its bytes
//! are kept, keyed by name, for the generation they were rendered at, and served as they are
//! until a reload publishes a new generation; then the store starts empty.
//!
//! Bounded: an answer over [`MAX_KEPT_ANSWER_BYTES`] is never kept, and the kept answers
//! together stay within [`MAX_KEPT_BYTES`] (when one more would pass it, the store starts
//! empty: a client walking every name costs what it cost without the store).

use std::collections::HashMap;
use std::sync::Mutex;

use bytes::Bytes;

/// Largest answer kept.
pub(crate) const MAX_KEPT_ANSWER_BYTES: usize = 64 * 1024;

/// All kept answers together, at most (names included).
pub(crate) const MAX_KEPT_BYTES: usize = 8 * 1024 * 1024;

/// Rendered answers of one generation, by skill name.
#[derive(Debug, Default)]
pub(crate) struct Rendered {
    inner: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    generation: u64,
    answers: HashMap<Box<str>, Bytes>,
    bytes: usize,
}

impl Rendered {
    /// The answer for `name` rendered at `generation`, if kept.
    pub(crate) fn get(&self, generation: u64, name: &str) -> Option<Bytes> {
        let kept = self.inner.lock().ok()?;
        if kept.generation != generation {
            return None;
        }
        kept.answers.get(name).cloned()
    }

    /// Keep `answer` for `name` as rendered at `generation` (a newer generation than the
    /// kept one replaces them all; an older one is not kept).
    pub(crate) fn put(&self, generation: u64, name: &str, answer: &Bytes) {
        let size = name.len() + answer.len();
        if answer.len() > MAX_KEPT_ANSWER_BYTES {
            return;
        }
        let Ok(mut kept) = self.inner.lock() else {
            return;
        };
        if generation < kept.generation {
            return;
        }
        if generation > kept.generation || kept.bytes + size > MAX_KEPT_BYTES {
            *kept = Kept {
                generation,
                ..Kept::default()
            };
        }
        if kept.answers.insert(name.into(), answer.clone()).is_none() {
            kept.bytes += size;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_served_only_for_its_generation() {
        let r = Rendered::default();
        r.put(3, "a", &Bytes::from_static(b"{}"));
        assert_eq!(r.get(3, "a").as_deref(), Some(&b"{}"[..]));
        assert_eq!(r.get(4, "a"), None, "a reload makes it stale");
        assert_eq!(r.get(3, "b"), None);
        r.put(2, "b", &Bytes::from_static(b"old"));
        assert_eq!(r.get(2, "b"), None, "an older generation is not kept");
        r.put(4, "b", &Bytes::from_static(b"new"));
        assert_eq!(
            r.get(3, "a"),
            None,
            "a newer generation replaces the kept ones"
        );
        assert_eq!(r.get(4, "b").as_deref(), Some(&b"new"[..]));
    }

    #[test]
    fn answers_are_kept_within_their_bounds() {
        let r = Rendered::default();
        let at_edge = Bytes::from(vec![b'x'; MAX_KEPT_ANSWER_BYTES]);
        r.put(1, "edge", &at_edge);
        assert!(
            r.get(1, "edge").is_some(),
            "an answer of the largest size is kept"
        );
        let over = Bytes::from(vec![b'x'; MAX_KEPT_ANSWER_BYTES + 1]);
        r.put(1, "over", &over);
        assert_eq!(r.get(1, "over"), None, "a larger one is not");
        // Fill to the total budget: the answer that would pass it starts the store again.
        let per = MAX_KEPT_ANSWER_BYTES - 8;
        let fit = (MAX_KEPT_BYTES - (4 + MAX_KEPT_ANSWER_BYTES)) / (8 + per);
        for i in 0..fit {
            r.put(1, &format!("{i:08}"), &Bytes::from(vec![b'y'; per]));
        }
        assert!(r.get(1, "edge").is_some() && r.get(1, "00000000").is_some());
        let kept = r.inner.lock().unwrap().bytes;
        assert!(kept <= MAX_KEPT_BYTES, "{kept}");
        r.put(1, "one-more", &Bytes::from(vec![b'z'; per]));
        assert!(r.inner.lock().unwrap().bytes <= MAX_KEPT_BYTES);
        assert_eq!(r.get(1, "edge"), None, "the store started again");
        assert!(r.get(1, "one-more").is_some());
    }
}
