//! Output to a terminal: text that came from skill files is shown, never obeyed.
//!
//! A skill's name, description or body can hold control characters: an escape sequence
//! that sets the window title, writes the clipboard (OSC 52), moves the cursor to
//! overwrite lines already printed, or hides text. Printed raw by `list`, `show` or a
//! diagnostic, it would act on the terminal of the person checking an untrusted pack.
//! [`TerminalSafe`] writes such characters as visible escapes (`\x1b`, `\u{9b}`,
//! `\u{202e}`) and everything else unchanged. The binary uses it only for a stream that
//! is a terminal: piped or redirected output (and JSON, which escapes them anyway) is
//! left exactly as the commands wrote it.

use std::io::{self, Write};

/// The longest incomplete UTF-8 sequence kept back between writes (a 4-byte character
/// less its last byte).
const MAX_CARRY: usize = 3;

/// A writer that escapes terminal control characters in what passes through it (see the
/// module documentation): C0 controls other than tab and newline (a carriage return only
/// when a newline does not follow it), DEL, C1 controls (U+0080 to U+009F) and the
/// bidirectional formatting characters (U+202A to U+202E, U+2066 to U+2069).
///
/// A character split across two writes is held back until its end arrives (a carriage
/// return too, until the next byte says whether a newline follows), so the escaping does
/// not depend on how the text was cut into writes. [`Write::flush`] writes what is held.
pub struct TerminalSafe<W: Write> {
    inner: W,
    /// Bytes of an incomplete character, or a carriage return, from the end of the last
    /// write.
    carry: Vec<u8>,
}

impl<W: Write> TerminalSafe<W> {
    /// Escape what is written to `inner`.
    pub fn new(inner: W) -> Self {
        TerminalSafe {
            inner,
            carry: Vec::with_capacity(MAX_CARRY + 1),
        }
    }

    /// Escape and write `bytes`, which end at a point where nothing is incomplete when
    /// `last` (a flush), and otherwise may end mid-character (the tail is kept).
    fn emit(&mut self, bytes: &[u8], last: bool) -> io::Result<()> {
        let keep = if last { 0 } else { incomplete_tail(bytes) };
        let (ready, tail) = bytes.split_at(bytes.len() - keep);
        let mut out = Vec::with_capacity(ready.len() + 16);
        escape_into(ready, &mut out);
        self.inner.write_all(&out)?;
        self.carry.clear();
        self.carry.extend_from_slice(tail);
        Ok(())
    }
}

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.carry.is_empty() {
            self.emit(buf, false)?;
        } else {
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(buf);
            self.emit(&joined, false)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.carry.is_empty() {
            let held = std::mem::take(&mut self.carry);
            self.emit(&held, true)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for TerminalSafe<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// How many bytes at the end of `bytes` may change meaning with what follows: a carriage
/// return (a newline may follow it) or the start of a character whose remaining bytes
/// have not arrived.
fn incomplete_tail(bytes: &[u8]) -> usize {
    if bytes.last() == Some(&b'\r') {
        return 1;
    }
    // The start of the last character: at most MAX_CARRY continuation bytes back.
    for back in 1..=MAX_CARRY.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let needed = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0,
        };
        return if back < needed { back } else { 0 };
    }
    0
}

/// Append `bytes` to `out` with the control characters written as escapes. Bytes that are
/// not valid UTF-8 pass through as they are (the terminal shows them as it does today).
fn escape_into(bytes: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\n' | b'\t' => out.push(b),
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => out.push(b),
            0x00..=0x1F | 0x7F => {
                let _ = write!(out, "\\x{b:02x}");
            }
            // C1 controls, as UTF-8 (U+0080 to U+009F).
            0xC2 if matches!(bytes.get(i + 1), Some(0x80..=0x9F)) => {
                let c = bytes.get(i + 1).copied().unwrap_or(0);
                let _ = write!(out, "\\u{{{c:x}}}");
                i += 1;
            }
            // U+202A..U+202E (E2 80 AA..AE) and U+2066..U+2069 (E2 81 A6..A9).
            0xE2 if is_bidi(bytes.get(i + 1..i + 3)) => {
                let text = bytes
                    .get(i..i + 3)
                    .and_then(|s| std::str::from_utf8(s).ok())
                    .and_then(|s| s.chars().next());
                if let Some(c) = text {
                    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
                }
                i += 2;
            }
            _ => out.push(b),
        }
        i += 1;
    }
}

/// Whether the two bytes after an `E2` lead byte make a bidirectional formatting character.
fn is_bidi(rest: Option<&[u8]>) -> bool {
    matches!(rest, Some([0x80, 0xAA..=0xAE] | [0x81, 0xA6..=0xA9]))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn safe(chunks: &[&[u8]]) -> String {
        let mut w = TerminalSafe::new(Vec::new());
        for c in chunks {
            w.write_all(c).unwrap();
        }
        w.flush().unwrap();
        String::from_utf8(std::mem::take(&mut w.inner)).unwrap()
    }

    #[test]
    fn plain_text_passes_unchanged() {
        let text = "pdf-forms: Fill PDF forms\n\tcafé, 日本語, emoji 🎉\r\n";
        assert_eq!(safe(&[text.as_bytes()]), text);
    }

    #[test]
    fn escape_sequences_are_shown_not_obeyed() {
        // OSC 52 (clipboard), a title change, a cursor move, a bell, DEL.
        let hostile = "a\x1b]52;c;ZXZpbA==\x07b\x1b[2Ac\x7fd\x00";
        assert_eq!(
            safe(&[hostile.as_bytes()]),
            "a\\x1b]52;c;ZXZpbA==\\x07b\\x1b[2Ac\\x7fd\\x00"
        );
    }

    #[test]
    fn a_lone_carriage_return_is_escaped_but_crlf_is_kept() {
        assert_eq!(safe(&[b"ok\rfake\r\n"]), "ok\\x0dfake\r\n");
        // Split between the two bytes of CRLF, and at the very end.
        assert_eq!(safe(&[b"a\r", b"\nb\r"]), "a\r\nb\\x0d");
    }

    #[test]
    fn c1_and_bidi_controls_are_escaped() {
        let text = "x\u{9b}31my\u{202e}evil\u{2066}z\u{85}";
        assert_eq!(
            safe(&[text.as_bytes()]),
            "x\\u{9b}31my\\u{202e}evil\\u{2066}z\\u{85}"
        );
        // Neighbours of the ranges are ordinary text.
        let near = "\u{a0}\u{2029}\u{202f}\u{2065}\u{206a}";
        assert_eq!(safe(&[near.as_bytes()]), near);
    }

    #[test]
    fn characters_split_across_writes_are_escaped_the_same() {
        let text = "a\u{9b}b\u{202e}c\u{1f389}d".as_bytes();
        let whole = safe(&[text]);
        for cut in 0..=text.len() {
            let (x, y) = text.split_at(cut);
            assert_eq!(safe(&[x, y]), whole, "cut at {cut}");
        }
        for (x, y) in (0..=text.len()).flat_map(|a| (a..=text.len()).map(move |b| (a, b))) {
            assert_eq!(safe(&[&text[..x], &text[x..y], &text[y..]]), whole);
        }
    }

    #[test]
    fn invalid_utf8_passes_through() {
        let mut w = TerminalSafe::new(Vec::new());
        w.write_all(b"\xff\xfe ok \xc2").unwrap();
        w.flush().unwrap();
        assert_eq!(w.inner, b"\xff\xfe ok \xc2");
    }

    #[test]
    fn the_carry_never_exceeds_its_bound() {
        let mut w = TerminalSafe::new(Vec::new());
        for b in "日本🎉\u{9b}".bytes() {
            w.write_all(&[b]).unwrap();
            assert!(w.carry.len() <= MAX_CARRY);
        }
        w.flush().unwrap();
        assert_eq!(String::from_utf8(w.inner.clone()).unwrap(), "日本🎉\\u{9b}");
    }
}
