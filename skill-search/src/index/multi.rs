//! Multi-intent requests ("convert this PDF to markdown and then email it to the team"):
//! the request is split into parts at sentence ends and connectives, and each part's
//! analyzed terms are handed to the ranking, which scores every candidate on each part and
//! re-picks the 2nd and 3rd results to cover the parts the results before them leave
//! uncovered, so the first few results cover every intent.

use tantivy::tokenizer::TextAnalyzer;

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

/// The analyzed terms of each of the request's parts, when it has at least two (each with
/// [`MIN_PART_TERMS`] terms). Each piece of the request is analyzed once: the analyzer works
/// token by token, so the terms of pieces joined by a space are the pieces' terms in turn.
pub(crate) fn parts(english: &mut TextAnalyzer, message: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    for piece in pieces(message) {
        let terms = text::tokens(english, &piece);
        // The last part takes everything after it.
        if out.len() == MAX_PARTS {
            if let Some(last) = out.last_mut() {
                last.extend(terms);
            }
            continue;
        }
        pending.extend(terms);
        if pending.len() >= MIN_PART_TERMS {
            out.push(std::mem::take(&mut pending));
        }
    }
    if let Some(last) = out.last_mut() {
        last.append(&mut pending);
    }
    if out.len() < 2 { Vec::new() } else { out }
}

/// The request, lowercased, cut at sentence ends, then at each connective in turn.
fn pieces(message: &str) -> Vec<String> {
    let mut pieces: Vec<String> = vec![clip(message).to_lowercase()];
    let mut cuts: Vec<&str> = vec![". ", "; ", "? ", "! "];
    cuts.extend(CONNECTIVES);
    for cut in cuts {
        let mut next = Vec::new();
        for p in pieces {
            next.extend(p.split(cut).map(str::to_owned));
        }
        pieces = next;
    }
    pieces
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// The parts as the pieces' text joined with spaces, analyzed afterwards (how they were
    /// found before each piece was analyzed once).
    fn parts_from_text(english: &mut TextAnalyzer, message: &str) -> Vec<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        let mut pending = String::new();
        for p in pieces(message) {
            if !pending.is_empty() {
                pending.push(' ');
            }
            pending.push_str(&p);
            if text::tokens(english, &pending).len() >= MIN_PART_TERMS {
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
        if out.len() < 2 {
            return Vec::new();
        }
        out.iter().map(|p| text::tokens(english, p)).collect()
    }

    #[test]
    fn parts_are_the_analyzed_pieces_of_the_request() {
        let mut english = text::english();
        let got = parts(
            &mut english,
            "Convert this PDF to markdown and then email it to the team",
        );
        assert_eq!(
            got,
            [vec!["convert", "pdf", "markdown"], vec!["email", "team"]]
        );
        assert!(parts(&mut english, "convert this PDF to markdown").is_empty());
        assert!(parts(&mut english, "").is_empty());
    }

    #[test]
    fn pieces_are_cut_at_sentence_ends_and_connectives_lowercased_and_clipped() {
        assert_eq!(
            pieces("Fix the BUG. Then Deploy; test it? ok! Zip AND THEN mail, then go"),
            [
                "fix the bug",
                "then deploy",
                "test it",
                "ok",
                "zip",
                "mail",
                "go"
            ]
        );
        assert_eq!(pieces("no cut here"), ["no cut here"]);
        // "X and also Y", "X as well as Y", "X, then Y": two intents each.
        assert_eq!(
            pieces("resize the photos and also email them"),
            ["resize the photos", "email them"]
        );
        assert_eq!(
            pieces("draft the notes as well as the invite"),
            ["draft the notes", "the invite"]
        );
        assert_eq!(pieces("lint it, then ship it"), ["lint it", "ship it"]);
        // Only the first MAX_QUERY_BYTES bytes are read.
        let long = format!("{} and tail", "x".repeat(crate::MAX_QUERY_BYTES));
        assert_eq!(pieces(&long), ["x".repeat(crate::MAX_QUERY_BYTES)]);
        // Parts beyond MAX_PARTS go to the last one.
        let mut english = text::english();
        let many = "alpha beta. gamma delta. epsilon zeta. eta theta. iota kappa";
        let got = parts(&mut english, many);
        assert_eq!(got.len(), MAX_PARTS);
        assert_eq!(
            got.last().map(Vec::len),
            Some(6),
            "the last part holds its own terms and those of the two after it: {got:?}"
        );
    }

    #[test]
    fn each_piece_analyzed_once_gives_the_parts_the_joined_text_gives() {
        // Every request of up to four fragments, over fragments that are words, stopwords,
        // punctuation, sentence ends and connectives.
        let fragments = [
            "convert the pdf",
            "email",
            "the",
            "",
            ". ",
            " and then ",
            ", and ",
            " plus ",
            "? ",
            "email the team. ",
            "invoices; ",
            "Résumé",
        ];
        let mut english = text::english();
        let n = fragments.len();
        for code in 0..n.pow(4) {
            let mut message = String::new();
            let mut c = code;
            for _ in 0..4 {
                message.push_str(fragments[c % n]);
                c /= n;
            }
            assert_eq!(
                parts(&mut english, &message),
                parts_from_text(&mut english, &message),
                "{message:?}"
            );
        }
    }
}
