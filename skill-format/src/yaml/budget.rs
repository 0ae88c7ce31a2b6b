//! The cost bound of reading frontmatter YAML: how many nodes and how many bytes of text a
//! document may hold once its aliases are expanded.
//!
//! An alias repeats everything its anchor holds, so a few kilobytes can stand for millions
//! of nodes: `a: &a [x, x, ... 1,000 items]` then 10,000 lines `bK: *a` (101 KB) took 4.4 s
//! and 1.24 GB to read, and eight such files kept 2.16 GB in a serving process. `serde_yaml`
//! bounds how many times aliases are replayed (100 times the document's events), not what a
//! replay copies, so every node the reader builds is counted here, each replay of an alias
//! counting every node it repeats, and the document is refused past the budget before
//! the next node is built. A document whose aliases of aliases reach `serde_yaml`'s own
//! replay limit first is refused as too large as well.
//!
//! A node is a scalar, a list or a mapping; each mapping key counts as one more. Both paths
//! of [`super::parse`] count the same way: the fast path declines a document over the
//! budget, and the `serde_yaml` path refuses it with the line of the field it was reading.

use std::cell::{Cell, RefCell};

use serde::de;

use super::Path;

/// The most nodes (scalars, lists, mappings, and one per mapping key) a frontmatter may
/// expand to. The largest frontmatter of the real packs in the corpus has about 150; at the
/// budget a document costs about 12 MB and 40 ms to read (measured at 124 bytes and 0.44 µs
/// a node), where 10,000,000 nodes cost 1.24 GB and 4.4 s.
pub(crate) const MAX_YAML_NODES: usize = 100_000;

/// The most text (scalars and keys, in bytes) a frontmatter may expand to. Aliases repeat
/// what their anchor holds, so a 1 MB string aliased a thousand times made 1 GB (and
/// aborted a serving process on reload). Text written out without aliases is far below
/// this (a skill file is at most 4 MiB).
pub(crate) const MAX_EXPANDED_TEXT_BYTES: usize = 16 * 1024 * 1024;

/// What a read has built so far, and which bound it crossed, if any.
#[derive(Default)]
pub(super) struct Budget {
    nodes: Cell<usize>,
    bytes: Cell<usize>,
    /// The message of the bound crossed, with the path of the node that crossed it.
    exceeded: RefCell<Option<String>>,
}

impl Budget {
    /// Count one node with `bytes` of text, or refuse the document past either bound;
    /// `path` (rendered only then) names the node in the message.
    pub(super) fn charge<E: de::Error>(&self, bytes: usize, path: &Path<'_>) -> Result<(), E> {
        let nodes = self.nodes.get().saturating_add(1);
        let text = self.bytes.get().saturating_add(bytes);
        self.nodes.set(nodes);
        self.bytes.set(text);
        let message = if nodes > MAX_YAML_NODES {
            format!(
                "the frontmatter expands to more than {MAX_YAML_NODES} YAML nodes (at `{}`; an alias counts every node it repeats): write fewer values, or use fewer aliases of large lists and mappings",
                path.rendered()
            )
        } else if text > MAX_EXPANDED_TEXT_BYTES {
            format!(
                "the frontmatter expands to more than {} MiB of text (at `{}`; aliases repeat what their anchor holds): use fewer aliases of large values",
                MAX_EXPANDED_TEXT_BYTES / (1024 * 1024),
                path.rendered()
            )
        } else {
            return Ok(());
        };
        let error = E::custom(&message);
        *self.exceeded.borrow_mut() = Some(message);
        Err(error)
    }

    /// The message of the bound the read crossed, if it crossed one.
    pub(super) fn exceeded(&self) -> Option<String> {
        self.exceeded.borrow().clone()
    }

    /// Nodes counted so far.
    #[cfg(test)]
    pub(super) fn nodes(&self) -> usize {
        self.nodes.get()
    }
}
