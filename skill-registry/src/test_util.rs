//! Helpers for the crate's unit tests.
#![allow(clippy::unwrap_used)]

use std::path::Path;

/// Write `text` at `rel` under `root`, creating its folders.
pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}
