//! Multi-intent requests ("convert this PDF to markdown and then email it to the team"):
//! the request is split into parts at sentence ends and connectives, each part is ranked
//! on its own, and each part's best skill is moved into the top results right after the
//! whole request's best, so the first few results cover every intent.

use crate::index::SkillIndex;
use crate::text::{self, clip};

/// Most parts a request is split into (the first ones; the rest stay in the last part).
pub(crate) const MAX_PARTS: usize = 3;
/// A part needs at least this many analyzed terms to count as an intent of its own.
const MIN_PART_TERMS: usize = 2;
/// Connectives that start a new intent (lowercase, with their surrounding spaces).
const CONNECTIVES: [&str; 9] = [
    " and then ",
    ", then ",
    " then ",
    " and also ",
    ", and ",
    " as well as ",
    " plus ",
    " after that ",
    " and ",
];

/// The request's parts, when it has at least two (each with [`MIN_PART_TERMS`] terms).
pub(crate) fn parts(index: &SkillIndex, message: &str) -> Vec<String> {
    let mut english = index.english.clone();
    let lower = clip(message).to_lowercase();
    let mut pieces: Vec<String> = vec![lower];
    // Sentences first, then connectives, splitting every piece at each in turn.
    let mut cuts: Vec<&str> = vec![". ", "; ", "? ", "! "];
    cuts.extend(CONNECTIVES);
    for cut in cuts {
        let mut next = Vec::new();
        for p in pieces {
            next.extend(p.split(cut).map(str::to_owned));
        }
        pieces = next;
    }
    let mut out: Vec<String> = Vec::new();
    let mut pending = String::new();
    for p in pieces {
        if !pending.is_empty() {
            pending.push(' ');
        }
        pending.push_str(&p);
        if text::tokens(&mut english, &pending).len() >= MIN_PART_TERMS {
            out.push(std::mem::take(&mut pending));
        }
    }
    if !pending.is_empty() {
        match out.last_mut() {
            Some(last) => {
                last.push(' ');
                last.push_str(&pending);
            }
            None => out.push(pending),
        }
    }
    while out.len() > MAX_PARTS {
        if let Some(tail) = out.pop() {
            if let Some(last) = out.last_mut() {
                last.push(' ');
                last.push_str(&tail);
            }
        }
    }
    if out.len() < 2 { Vec::new() } else { out }
}
