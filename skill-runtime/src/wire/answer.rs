//! The size of an answer relative to its request: an extraction or a route of a request
//! of `n` bytes answers at most [`answer_cap`]`(n)` bytes of JSON (a floor, plus a
//! multiple of the request), so that a small request cannot make a large answer. The
//! answer is written into a buffer that stops at the cap ([`to_vec_capped`]): past it no
//! more memory is taken and the caller answers `answer_too_large`.

use std::io::Write;

/// How many times the request's size an extraction or a route may answer (beyond
/// [`ANSWER_FLOOR_BYTES`]).
pub const MAX_ANSWER_FACTOR: usize = 4;

/// What any request may answer whatever its size.
pub const ANSWER_FLOOR_BYTES: usize = 256 * 1024;

/// The largest answer to a request of `request_bytes` bytes:
/// `ANSWER_FLOOR_BYTES + MAX_ANSWER_FACTOR * request_bytes`.
pub fn answer_cap(request_bytes: usize) -> usize {
    ANSWER_FLOOR_BYTES.saturating_add(MAX_ANSWER_FACTOR.saturating_mul(request_bytes))
}

/// An answer past its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerTooLarge {
    /// The cap it went past, in bytes.
    pub cap: usize,
}

impl AnswerTooLarge {
    /// The message of its `answer_too_large` error, naming the cap and the request size.
    pub fn message(&self, request_bytes: usize) -> String {
        format!(
            "the answer would be over {} bytes, the most a request of {request_bytes} bytes may \
             answer ({ANSWER_FLOOR_BYTES} + {MAX_ANSWER_FACTOR} times its size): send fewer \
             or shorter commands per request",
            self.cap
        )
    }
}

/// A writer that refuses to grow past its cap.
struct Capped {
    buf: Vec<u8>,
    cap: usize,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len().saturating_add(data.len()) > self.cap {
            return Err(std::io::Error::other("answer over its cap"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `value` as JSON, at most `cap` bytes of it (the memory taken stops there too).
pub fn to_vec_capped(value: &impl serde::Serialize, cap: usize) -> Result<Vec<u8>, AnswerTooLarge> {
    let mut out = Capped {
        buf: Vec::new(),
        cap,
    };
    match serde_json::to_writer(&mut out, value) {
        Ok(()) => Ok(out.buf),
        Err(_) => Err(AnswerTooLarge { cap }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The edge: an answer of exactly the cap is written, one byte more is refused.
    #[test]
    fn answers_stop_at_their_cap() {
        let value = "x".repeat(98); // 100 bytes of JSON with its quotes
        assert_eq!(to_vec_capped(&value, 100).unwrap().len(), 100);
        assert_eq!(to_vec_capped(&value, 99), Err(AnswerTooLarge { cap: 99 }));
        assert_eq!(answer_cap(0), ANSWER_FLOOR_BYTES);
        assert_eq!(
            answer_cap(1024 * 1024),
            ANSWER_FLOOR_BYTES + MAX_ANSWER_FACTOR * 1024 * 1024
        );
        assert_eq!(answer_cap(usize::MAX), usize::MAX);
    }
}
