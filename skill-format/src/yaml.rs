//! Frontmatter YAML, read with `serde_yaml` into a small tree that keeps the **source text**
//! of every scalar (`version: 1.0` stays `"1.0"`, `updated: 2026-03-17` stays as written)
//! next to its YAML type.
//!
//! How: a first pass deserializes with `deserialize_any`, which gives the structure and the
//! YAML type of each scalar. Only when that pass met a scalar that is not a string (a number,
//! boolean or null, whose text `deserialize_any` does not give back) does a second pass walk
//! the same document guided by the first tree's shape and ask for every scalar as a string,
//! which `serde_yaml` answers with the scalar's source text. Most real frontmatter holds only
//! strings, so most files take one pass.
//!
//! Before either pass, a fast path (`fast.rs`) reads the plain block YAML most frontmatter is
//! written in (`key: value` lines, quoted and block strings, nested mappings, lists of
//! strings) straight into the same tree, about ten times faster; it declines anything else,
//! which then takes the `serde_yaml` path. Its tests compare both paths.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fmt;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

mod budget;
mod fast;
mod nesting;

use budget::Budget;
#[cfg(test)]
use budget::{MAX_EXPANDED_TEXT_BYTES, MAX_YAML_NODES};

#[cfg(test)]
use nesting::MAX_FLOW_NESTING;
use nesting::check_nesting;

/// The YAML type a scalar resolved to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalarKind {
    /// A string (quoted, block, or a plain scalar that is not another type).
    Str,
    /// `null`, `~` or an empty value.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int,
    /// A floating-point number.
    Float,
}

/// A YAML node with scalar source text kept.
///
/// Text is borrowed from the YAML read (`'t`) where it is written there as it reads: keys,
/// and one-line plain or quoted strings without escapes, which most frontmatter is made of.
/// Text that reading changed (escapes, `''`, folded or continued lines, block scalars) is
/// owned. [`Node::into_owned`] gives a tree that keeps nothing borrowed.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'t> {
    /// A scalar: its source text (for strings, the parsed value) and its YAML type.
    Scalar {
        /// The text as written (strings: the parsed string value); borrowed when it is
        /// in the YAML as it is.
        text: Cow<'t, str>,
        /// The type YAML resolves it to.
        kind: ScalarKind,
    },
    /// A sequence.
    Seq(Vec<Node<'t>>),
    /// A mapping, in document order. Keys are the keys' source text.
    Map(Vec<(Cow<'t, str>, Node<'t>)>),
}

impl<'t> Node<'t> {
    /// The scalar's text, when this is a scalar.
    pub fn as_scalar(&self) -> Option<&str> {
        match self {
            Node::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The value of `key`, when this is a mapping that has it (the last one wins if repeated).
    pub fn get(&self, key: &str) -> Option<&Node<'t>> {
        match self {
            Node::Map(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Whether this is a null scalar.
    pub fn is_null(&self) -> bool {
        matches!(
            self,
            Node::Scalar {
                kind: ScalarKind::Null,
                ..
            }
        )
    }

    /// The same tree with every text owned (borrowed text is copied, owned text moved).
    pub fn into_owned(self) -> Node<'static> {
        match self {
            Node::Scalar { text, kind } => Node::Scalar {
                text: Cow::Owned(text.into_owned()),
                kind,
            },
            Node::Seq(items) => Node::Seq(items.into_iter().map(Node::into_owned).collect()),
            Node::Map(entries) => Node::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }

    /// A short name of the node's type for messages: `a string`, `a list`, `a mapping`, ...
    pub fn type_name(&self) -> &'static str {
        match self {
            Node::Scalar { kind, .. } => match kind {
                ScalarKind::Str => "a string",
                ScalarKind::Null => "null",
                ScalarKind::Bool(_) => "a boolean",
                ScalarKind::Int => "an integer",
                ScalarKind::Float => "a number",
            },
            Node::Seq(_) => "a list",
            Node::Map(_) => "a mapping",
        }
    }
}

/// A tree the `serde_yaml` path builds: every text owned.
type Owned = Node<'static>;

/// Why frontmatter YAML was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YamlErrorKind {
    /// It is not valid YAML (or nests flow collections deeper than the reader allows).
    Invalid,
    /// It is valid YAML that expands past a cost bound: more than 100,000 nodes or 16 MiB
    /// of text once aliases are expanded (an alias counts every node it repeats).
    TooLarge,
}

/// Frontmatter YAML that was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// Why.
    pub kind: YamlErrorKind,
    /// What the YAML parser said.
    pub message: String,
    /// 1-based line within the YAML text.
    pub line: Option<u32>,
    /// 1-based column within the YAML text.
    pub column: Option<u32>,
}

/// The result of reading frontmatter YAML.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<'t> {
    /// The tree (borrowing from the YAML read, see [`Node`]).
    pub root: Node<'t>,
    /// Keys that appear more than once in one mapping, as dotted paths (`metadata.author`).
    pub duplicate_keys: Vec<String>,
}

#[derive(Default)]
struct Pass {
    non_string_seen: Cell<bool>,
    /// Nodes and text built so far (aliases counted each time they are replayed).
    budget: Budget,
    /// The top-level key being read, when the root is a mapping: the field an error in it
    /// names the line of.
    field: RefCell<Option<String>>,
    duplicates: RefCell<Vec<String>>,
    /// Steps of the duplicate-key check, counted so a test can show they grow linearly.
    #[cfg(test)]
    key_checks: Cell<usize>,
}

/// Where a node sits, built only when a duplicate key needs its dotted path: formatting a
/// path for every node would cost the depth times the key lengths on each one.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// The path as `metadata.tags[3]`.
    fn rendered(&self) -> String {
        let mut out = String::new();
        self.render(&mut out);
        out
    }

    fn render(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Key(parent, key) => {
                parent.render(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Path::Index(parent, i) => {
                parent.render(out);
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
}

struct AnySeed<'p> {
    pass: &'p Pass,
    path: Path<'p>,
}

impl<'de> DeserializeSeed<'de> for AnySeed<'_> {
    type Value = Owned;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Owned, D::Error> {
        d.deserialize_any(AnyVisitor(self))
    }
}

struct AnyVisitor<'p>(AnySeed<'p>);

impl AnyVisitor<'_> {
    /// Count one node with `bytes` of text against the document's budget.
    fn charge<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        self.0.pass.budget.charge(bytes, &self.0.path)
    }

    /// A scalar node, charged to the budget before it is built.
    fn scalar<E: de::Error>(&self, text: String, kind: ScalarKind) -> Result<Owned, E> {
        self.charge(text.len())?;
        Ok(self.build(text, kind))
    }

    fn build(&self, text: String, kind: ScalarKind) -> Owned {
        if kind != ScalarKind::Str {
            self.0.pass.non_string_seen.set(true);
        }
        Node::Scalar {
            text: Cow::Owned(text),
            kind,
        }
    }
}

impl<'de> Visitor<'de> for AnyVisitor<'_> {
    type Value = Owned;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Owned, E> {
        // Charged before the text is copied.
        self.charge(v.len())?;
        Ok(self.build(v.to_owned(), ScalarKind::Str))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Owned, E> {
        self.scalar(v, ScalarKind::Str)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Owned, E> {
        self.scalar(v.to_string(), ScalarKind::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Owned, E> {
        self.scalar(v.to_string(), ScalarKind::Int)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Owned, E> {
        self.scalar(v.to_string(), ScalarKind::Int)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Owned, E> {
        self.scalar(v.to_string(), ScalarKind::Float)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Owned, E> {
        self.scalar(String::new(), ScalarKind::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Owned, E> {
        self.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Owned, D::Error> {
        AnySeed {
            pass: self.0.pass,
            path: self.0.path,
        }
        .deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Owned, A::Error> {
        self.charge(0)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(AnySeed {
            pass: self.0.pass,
            path: Path::Index(&self.0.path, items.len()),
        })? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Owned, A::Error> {
        self.charge(0)?;
        let mut entries: Vec<(Cow<'static, str>, Owned)> = Vec::new();
        // Keys seen so far in this mapping: one lookup per key keeps the check linear in the
        // number of keys.
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            self.0.pass.budget.charge(key.len(), &self.0.path)?;
            if matches!(self.0.path, Path::Root) {
                *self.0.pass.field.borrow_mut() = Some(key.clone());
            }
            #[cfg(test)]
            self.0.pass.key_checks.set(self.0.pass.key_checks.get() + 1);
            let value = {
                let path = Path::Key(&self.0.path, &key);
                if !seen.insert(key.clone()) {
                    let mut rendered = String::new();
                    path.render(&mut rendered);
                    // A duplicate's rendered path is kept for its diagnostic, so it counts
                    // toward the text budget: many duplicates under a long key must not
                    // hold more text than the budget allows.
                    self.0.pass.budget.charge(rendered.len(), &self.0.path)?;
                    self.0.pass.duplicates.borrow_mut().push(rendered);
                }
                map.next_value_seed(AnySeed {
                    pass: self.0.pass,
                    path,
                })?
            };
            entries.push((Cow::Owned(key), value));
        }
        Ok(Node::Map(entries))
    }
}

/// Keys are read as their source text.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a plain scalar")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }
}

/// Second pass: the first tree's shape says which `deserialize_*` to call at each place.
struct ShapeSeed<'n>(&'n Owned);

impl<'de> DeserializeSeed<'de> for ShapeSeed<'_> {
    type Value = Owned;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Owned, D::Error> {
        match self.0 {
            Node::Scalar { kind, .. } => {
                let text = d.deserialize_str(TextVisitor)?;
                Ok(Node::Scalar {
                    text: Cow::Owned(text),
                    kind: *kind,
                })
            }
            Node::Seq(items) => d.deserialize_seq(ShapeSeqVisitor(items)),
            Node::Map(entries) => d.deserialize_map(ShapeMapVisitor(entries)),
        }
    }
}

struct ShapeSeqVisitor<'n>(&'n [Owned]);

impl<'de> Visitor<'de> for ShapeSeqVisitor<'_> {
    type Value = Owned;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Owned, A::Error> {
        let mut items = Vec::with_capacity(self.0.len());
        for shape in self.0 {
            match seq.next_element_seed(ShapeSeed(shape))? {
                Some(item) => items.push(item),
                None => return Err(de::Error::custom("sequence changed between passes")),
            }
        }
        Ok(Node::Seq(items))
    }
}

struct ShapeMapVisitor<'n>(&'n [(Cow<'static, str>, Owned)]);

impl<'de> Visitor<'de> for ShapeMapVisitor<'_> {
    type Value = Owned;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Owned, A::Error> {
        let mut entries = Vec::with_capacity(self.0.len());
        for (key, shape) in self.0 {
            if map.next_key_seed(KeySeed)?.is_none() {
                return Err(de::Error::custom("mapping changed between passes"));
            }
            entries.push((key.clone(), map.next_value_seed(ShapeSeed(shape))?));
        }
        Ok(Node::Map(entries))
    }
}

fn to_yaml_error(e: &serde_yaml::Error) -> YamlError {
    let location = e.location();
    // serde_yaml's Display appends " at line L column C"; the position is reported apart.
    let mut message = e.to_string();
    if let Some(at) = message.find(" at line ") {
        message.truncate(at);
    }
    YamlError {
        kind: YamlErrorKind::Invalid,
        message,
        line: location.as_ref().and_then(|l| u32::try_from(l.line()).ok()),
        column: location
            .as_ref()
            .and_then(|l| u32::try_from(l.column()).ok()),
    }
}

/// serde_yaml's error when aliases were replayed more than 100 times its events.
const REPETITION_LIMIT: &str = "repetition limit exceeded";

/// The error of a failed first pass: [`YamlErrorKind::TooLarge`] when the budget or
/// serde_yaml's replay limit stopped it, else what serde_yaml said.
fn first_pass_error(text: &str, e: &serde_yaml::Error, pass: &Pass) -> YamlError {
    let message = match pass.budget.exceeded() {
        Some(message) => message,
        None if e.to_string() == REPETITION_LIMIT => format!(
            "the frontmatter's aliases are replayed more often than the YAML reader allows (aliases of lists of aliases expand exponentially): use fewer aliases; the budget is {} nodes",
            budget::MAX_YAML_NODES
        ),
        None => return to_yaml_error(e),
    };
    too_large(text, e, message, pass.field.borrow().as_deref())
}

/// The error of a read stopped for its size: `message`, and the line of the top-level
/// `field` being read. serde_yaml places an error at the node it was building, which
/// inside an alias's replay is in the anchor's definition, above the alias (or nowhere,
/// for its replay limit); the field's own line is then the one to name.
fn too_large(
    text: &str,
    serde: &serde_yaml::Error,
    message: String,
    field: Option<&str>,
) -> YamlError {
    let at = serde.location().and_then(|l| {
        Some((
            u32::try_from(l.line()).ok()?,
            u32::try_from(l.column()).ok()?,
        ))
    });
    let field = field.and_then(|k| key_position(text, k));
    let (line, column) = match (at, field) {
        (Some(at), Some(field)) if at.0 < field.0 => (Some(field.0), Some(field.1)),
        (Some(at), _) => (Some(at.0), Some(at.1)),
        (None, field) => (field.map(|f| f.0), field.map(|f| f.1)),
    };
    YamlError {
        kind: YamlErrorKind::TooLarge,
        message,
        line,
        column,
    }
}

/// Read YAML text into a [`Node`] tree, keeping scalar source text.
///
/// An empty (or comment-only) document is a null scalar. Flow nesting deeper than
/// `MAX_FLOW_NESTING` (64) is refused by a linear pre-scan before parsing (brackets in
/// quoted, block and block-context plain scalars, and in comments, are text to it). Aliases
/// are expanded by `serde_yaml`, which bounds how often they are replayed; every node built
/// is counted, an alias counting every node it repeats, and a document of more than
/// `MAX_YAML_NODES` (100,000) nodes or `MAX_EXPANDED_TEXT_BYTES` (16 MiB) of text is
/// refused as [`YamlErrorKind::TooLarge`] before the next node is built (a "billion
/// laughs" document costs at most the budget). Block nesting deeper than serde_yaml's
/// recursion limit is an error too.
pub fn parse(text: &str) -> Result<Parsed<'_>, YamlError> {
    let blank = text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    });
    if blank {
        return Ok(Parsed {
            root: Node::Scalar {
                text: Cow::Borrowed(""),
                kind: ScalarKind::Null,
            },
            duplicate_keys: Vec::new(),
        });
    }
    check_nesting(text)?;
    if let Some(parsed) = fast::parse(text) {
        return Ok(parsed);
    }
    parse_with_serde(text)
}

/// The general path of [`parse`], after its checks: `serde_yaml`, in one or two passes.
fn parse_with_serde(text: &str) -> Result<Parsed<'static>, YamlError> {
    let pass = Pass::default();
    let first = AnySeed {
        pass: &pass,
        path: Path::Root,
    }
    .deserialize(serde_yaml::Deserializer::from_str(text))
    .map_err(|e| first_pass_error(text, &e, &pass))?;
    let root = if pass.non_string_seen.get() {
        ShapeSeed(&first)
            .deserialize(serde_yaml::Deserializer::from_str(text))
            .map_err(|e| to_yaml_error(&e))?
    } else {
        first
    };
    Ok(Parsed {
        root,
        duplicate_keys: pass.duplicates.into_inner(),
    })
}

/// The 1-based line and column of a top-level `key:` within the YAML text, when the key is
/// written in block style at column 1 (as frontmatter keys are).
pub fn key_position(text: &str, key: &str) -> Option<(u32, u32)> {
    for (i, line) in text.lines().enumerate() {
        let candidates = [
            line.strip_prefix(key),
            line.strip_prefix('"')
                .and_then(|l| l.strip_prefix(key))
                .and_then(|l| l.strip_prefix('"')),
            line.strip_prefix('\'')
                .and_then(|l| l.strip_prefix(key))
                .and_then(|l| l.strip_prefix('\'')),
        ];
        for rest in candidates.into_iter().flatten() {
            if rest.trim_start_matches([' ', '\t']).starts_with(':') {
                return Some((u32::try_from(i + 1).ok()?, 1));
            }
        }
    }
    None
}

/// The client guide's fallback for the most common invalid YAML: a flat `key: value` line
/// whose plain value holds an unquoted `: `. Each such top-level line is rewritten with the
/// value single-quoted. Returns the rewritten text and the 1-based lines that were changed,
/// or `None` when no line qualifies.
pub fn recover_unquoted_colons(text: &str) -> Option<(String, Vec<u32>)> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut changed = Vec::new();
    for (i, raw_line) in text.split_inclusive('\n').enumerate() {
        let (line, ending) = match raw_line.strip_suffix("\r\n") {
            Some(l) => (l, "\r\n"),
            None => match raw_line.strip_suffix('\n') {
                Some(l) => (l, "\n"),
                None => (raw_line, ""),
            },
        };
        if let Some(rewritten) = quote_flat_value(line) {
            out.push_str(&rewritten);
            out.push_str(ending);
            changed.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
        } else {
            out.push_str(raw_line);
        }
    }
    if changed.is_empty() {
        None
    } else {
        Some((out, changed))
    }
}

fn quote_flat_value(line: &str) -> Option<String> {
    let first = line.chars().next()?;
    if !(first.is_ascii_alphanumeric() || first == '_') {
        return None;
    }
    let colon = line.find(": ")?;
    let key = &line[..colon];
    if !key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let value = line[colon + 2..].trim();
    let starts_special = value.chars().next().is_some_and(|c| {
        matches!(
            c,
            '"' | '\'' | '[' | '{' | '|' | '>' | '&' | '*' | '!' | '#'
        )
    });
    if value.is_empty() || starts_special {
        return None;
    }
    if !(value.contains(": ") || value.ends_with(':')) {
        return None;
    }
    Some(format!("{key}: '{}'", value.replace('\'', "''")))
}

#[cfg(test)]
mod tests;
