//! Long encoded blobs: base64 or hex a reviewer cannot read, which may carry instructions
//! or a payload a model is told to decode.

use skill_format::Code;

use crate::{Findings, Line};

/// The shortest run of base64 or hex characters reported (256 characters: 192 bytes of
/// base64, 128 of hex; longer than any digest or key id a skill names in the open).
pub const MIN_BLOB_CHARS: usize = 256;

fn is_base64ish(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-')
}

/// Judge one run `start..end` of base64-alphabet bytes: `Some(kind)` when it is a blob.
fn judge(line: &[u8], start: usize, end: usize) -> Option<&'static str> {
    let run = &line[start..end];
    if run.len() < MIN_BLOB_CHARS {
        return None;
    }
    // The payload of a `data:` URI is reported as that.
    if line[..start].ends_with(b"base64,") {
        return None;
    }
    if run.iter().all(u8::is_ascii_hexdigit) {
        return Some("hex");
    }
    let (mut upper, mut lower, mut digit, mut slash, mut dash) = (0, 0, 0, 0, 0);
    for &b in run {
        match b {
            b'A'..=b'Z' => upper += 1,
            b'a'..=b'z' => lower += 1,
            b'0'..=b'9' => digit += 1,
            b'/' => slash += 1,
            b'-' | b'_' => dash += 1,
            _ => {}
        }
    }
    // Base64 mixes all three classes; a path or a kebab-case identifier has many
    // separators (in base64, about one character in 64 is `/`).
    let mixed = upper > 0 && lower > 0 && digit > 0;
    let separated = (slash + dash) * 16 > run.len();
    (mixed && !separated).then_some("base64")
}

/// Scan one line: its first blob, with the count of others.
pub(crate) fn scan(line: &Line<'_>, findings: &mut Findings<'_>) {
    let bytes = line.text.as_bytes();
    if bytes.len() < MIN_BLOB_CHARS {
        return;
    }
    let mut first: Option<(usize, usize, &'static str)> = None;
    let mut count = 0;
    let mut start = 0;
    for i in 0..=bytes.len() {
        let inside = bytes.get(i).is_some_and(|b| is_base64ish(*b));
        if inside {
            continue;
        }
        if let Some(kind) = judge(bytes, start, i) {
            count += 1;
            first.get_or_insert((start, i - start, kind));
        }
        start = i + 1;
    }
    if let Some((at, len, kind)) = first {
        let more = if count > 1 {
            format!(" ({count} on this line)")
        } else {
            String::new()
        };
        findings.add(
            Code::ScanEncodedBlob,
            line,
            at,
            format!(
                "a {len}-character {kind} blob{more}: a reviewer cannot read what it says; decode it and check, or ship it as a named file with its purpose stated"
            ),
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::MIN_BLOB_CHARS;
    use crate::tests::codes;
    use skill_format::Code;

    fn base64ish(n: usize) -> String {
        "QWxhZGRpbjpvcGVuIHNlc2FtZQ9"
            .chars()
            .cycle()
            .take(n)
            .collect()
    }

    #[test]
    fn blobs_are_reported_from_the_threshold_on() {
        assert_eq!(
            codes("a.md", &format!("x {}\n", base64ish(MIN_BLOB_CHARS - 1))),
            []
        );
        assert_eq!(
            codes("a.md", &format!("x {}\n", base64ish(MIN_BLOB_CHARS))),
            [(Code::ScanEncodedBlob, 1, 3)]
        );
        let hex: String = "0123456789abcdef"
            .chars()
            .cycle()
            .take(MIN_BLOB_CHARS)
            .collect();
        assert_eq!(codes("a.md", &hex), [(Code::ScanEncodedBlob, 1, 1)]);
    }

    #[test]
    fn separators_words_and_data_uris_are_not_blobs() {
        assert_eq!(codes("a.md", &"-".repeat(400)), []);
        let path: String = "src/components/Header-2x/".repeat(20);
        assert_eq!(codes("a.md", &path), []);
        let lower: String = "abcdefgh".repeat(60);
        assert_eq!(codes("a.md", &lower), []);
        let uri = format!("data:image/png;base64,{}", base64ish(400));
        assert_eq!(codes("a.md", &uri), [(Code::ScanDataUri, 1, 1)]);
    }
}
