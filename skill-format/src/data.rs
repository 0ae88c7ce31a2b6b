//! A skill file's frontmatter as data: every field exactly as written, for doors that hand
//! the frontmatter on verbatim (the MCP skills extension's entries). The parse that judges
//! a skill (dialects, findings) is [`crate::parse_skill`]; this one only reads the mapping,
//! so a door needs no YAML reader of its own. [`FrontmatterData`] serializes to the
//! mapping itself (with serde_json, a JSON object).

use serde::{Serialize, Serializer};

use crate::Error;

/// A frontmatter mapping, every field as written; serialize it to hand it on.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontmatterData(serde_yaml::Mapping);

impl FrontmatterData {
    /// How many top-level fields it has.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it has no field.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for FrontmatterData {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// The frontmatter of a skill file's bytes, every field as written.
///
/// # Errors
/// [`Error::NotUtf8`], [`Error::UnclosedFrontmatter`], [`Error::NoFrontmatter`],
/// [`Error::NotYaml`] or [`Error::NotAMapping`].
pub fn frontmatter_data(bytes: &[u8]) -> Result<FrontmatterData, Error> {
    let text = std::str::from_utf8(bytes).map_err(|_| Error::NotUtf8)?;
    let doc = crate::split(text).map_err(|e| Error::UnclosedFrontmatter(e.line))?;
    let fm = doc.frontmatter.ok_or(Error::NoFrontmatter)?;
    match serde_yaml::from_str(fm.text) {
        Ok(serde_yaml::Value::Mapping(map)) => Ok(FrontmatterData(map)),
        Ok(_) => Err(Error::NotAMapping),
        Err(e) => Err(Error::NotYaml(e.to_string())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn every_field_as_written() {
        let data =
            frontmatter_data(b"---\nname: a\nmetadata:\n  k: [1, 2]\nx-extra: yes\n---\nbody\n")
                .unwrap();
        assert_eq!(data.len(), 3);
        let json = serde_json::to_value(&data).unwrap();
        assert_eq!(json["name"], "a");
        assert_eq!(json["metadata"]["k"], serde_json::json!([1, 2]));
        assert_eq!(json["x-extra"], "yes");
        // A key JSON cannot hold is the serializer's to refuse.
        let odd = frontmatter_data(b"---\n[1]: a\n---\n").unwrap();
        assert!(serde_json::to_value(&odd).is_err());
    }

    #[test]
    fn each_failure_says_what_is_wrong() {
        assert_eq!(frontmatter_data(b"\xff").unwrap_err(), Error::NotUtf8);
        assert_eq!(
            frontmatter_data(b"body only\n").unwrap_err(),
            Error::NoFrontmatter
        );
        assert_eq!(
            frontmatter_data(b"---\nname: a\n").unwrap_err(),
            Error::UnclosedFrontmatter(1)
        );
        assert_eq!(
            frontmatter_data(b"---\n- a\n---\n").unwrap_err(),
            Error::NotAMapping
        );
        assert!(matches!(
            frontmatter_data(b"---\na: [\n---\n").unwrap_err(),
            Error::NotYaml(_)
        ));
    }
}
