//! Source namespaces: a source given a namespace serves each of its skills as
//! `namespace:name` (the plugin convention hosts already use), so that two packs' skills of
//! one name both load instead of one shadowing the other.
//!
//! A namespace is checked once, when it is made ([`Namespace::new`]): 1 to
//! [`MAX_NAMESPACE_CHARS`] of `a-z`, `0-9` and `-`, starting and ending with a letter or
//! digit. It can therefore hold no [`NAMESPACE_SEPARATOR`], so `a:b` + `c` and `a` + `b:c`
//! never meet; and a skill's own name may hold none either (the loader refuses one that
//! does), so a source without a namespace cannot take a namespaced skill's name.

use std::fmt;

use crate::Error;

/// Longest namespace, in characters (the Agent Skills name limit).
pub const MAX_NAMESPACE_CHARS: usize = 64;

/// What separates a namespace from a skill's name: `namespace:name`.
pub const NAMESPACE_SEPARATOR: char = ':';

/// A checked source namespace ([`Source::namespace`](crate::Source::namespace)).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Namespace(String);

impl Namespace {
    /// `text` as a namespace, or [`Error::InvalidNamespace`] saying what is wrong with it.
    ///
    /// ```
    /// use skill_registry::Namespace;
    ///
    /// assert_eq!(Namespace::new("curated")?.qualify("pdf"), "curated:pdf");
    /// assert!(Namespace::new("Curated").is_err());
    /// assert!(Namespace::new("a:b").is_err());
    /// # Ok::<(), skill_registry::Error>(())
    /// ```
    pub fn new(text: &str) -> Result<Self, Error> {
        let bad = |reason: &'static str| Error::InvalidNamespace {
            namespace: text.to_owned(),
            reason,
        };
        if text.is_empty() {
            return Err(bad("it is empty"));
        }
        if text.chars().count() > MAX_NAMESPACE_CHARS {
            return Err(bad("it is longer than 64 characters"));
        }
        if !text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(bad("it may only hold a-z, 0-9 and `-`"));
        }
        if text.starts_with('-') || text.ends_with('-') {
            return Err(bad("it must start and end with a letter or digit"));
        }
        Ok(Namespace(text.to_owned()))
    }

    /// The namespace as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `name` in this namespace: `namespace:name`.
    pub fn qualify(&self, name: &str) -> String {
        let mut out = String::with_capacity(self.0.len() + 1 + name.len());
        out.push_str(&self.0);
        out.push(NAMESPACE_SEPARATOR);
        out.push_str(name);
        out
    }

    /// `name` without this namespace's `namespace:` prefix, or `None` when it has none.
    pub fn strip<'n>(&self, name: &'n str) -> Option<&'n str> {
        name.strip_prefix(self.0.as_str())?
            .strip_prefix(NAMESPACE_SEPARATOR)
    }
}

impl fmt::Display for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// The rule at its edges: 1 and 64 characters pass, 0 and 65 do not; only `a-z`,
    /// `0-9` and inner `-`; the separator, a dot, a slash, a capital, a non-ASCII letter
    /// and whitespace are refused with a message naming the namespace.
    #[test]
    fn namespaces_follow_the_rule_at_its_edges() {
        for good in ["a", "0", "a-b", "pack2", &"a".repeat(MAX_NAMESPACE_CHARS)] {
            assert_eq!(Namespace::new(good).unwrap().as_str(), good);
        }
        let long = "a".repeat(MAX_NAMESPACE_CHARS + 1);
        for bad in [
            "", &long, "-a", "a-", "A", "a:b", ":", "a.b", "a/b", "a b", " a", "é", "a_b",
        ] {
            let e = Namespace::new(bad).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidNamespace { namespace, .. } if namespace == bad),
                "{bad:?}: {e}"
            );
            assert!(e.to_string().contains("namespace"), "{e}");
        }
    }

    #[test]
    fn qualify_and_strip_are_inverse() {
        let ns = Namespace::new("curated").unwrap();
        assert_eq!(ns.qualify("pdf"), "curated:pdf");
        assert_eq!(ns.strip("curated:pdf"), Some("pdf"));
        assert_eq!(ns.strip("curatedx:pdf"), None);
        assert_eq!(ns.strip("pdf"), None);
        assert_eq!(ns.to_string(), "curated");
    }
}
