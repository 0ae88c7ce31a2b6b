//! The static embedding table's file format: parsed and checked, never trusted.
//!
//! Written by `skill-search/distill/distill.py` (its docstring is the reference); all
//! integers little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic [`MAGIC`] |
//! | 4 | format version, [`FORMAT_VERSION`] |
//! | 4 | rows (vocabulary size) |
//! | 4 | dims (columns a row) |
//! | 4 | length of the vocabulary blob |
//! | 8 | FNV-1a 64 checksum of everything after the header |
//! | n | the vocabulary: tokens in id order, each followed by `\n` |
//! | 4 x rows | one f32 scale a row (the token's weight folded in) |
//! | rows x dims | the rows, int8 |
//!
//! A row's vector is its int8 values times its scale. Every size is checked against the
//! data's length before anything is read, so a truncated, padded or corrupt file is an
//! [`Error::Embeddings`], never a panic or an out-of-bounds read.

use crate::Error;

/// The first eight bytes of a table.
pub(crate) const MAGIC: &[u8; 8] = b"SKEMBED\0";

/// The only format version this code reads.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// Header length in bytes.
pub(crate) const HEADER_BYTES: usize = 8 + 4 * 4 + 8;

/// Most rows accepted (the BERT vocabulary has 30,522).
pub(crate) const MAX_ROWS: usize = 1 << 20;

/// Most dims accepted (the model has 384).
pub(crate) const MAX_DIMS: usize = 4096;

/// A parsed table borrowing its vocabulary and rows from the file's bytes.
#[derive(Debug)]
pub(crate) struct Table<'a> {
    /// Tokens in id order.
    pub(crate) vocab: Vec<&'a str>,
    /// One scale a row.
    pub(crate) scales: Vec<f32>,
    /// `vocab.len() * dims` int8 values, row-major.
    rows: &'a [u8],
    dims: usize,
}

impl<'a> Table<'a> {
    /// Parses and checks `bytes`.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        let header = bytes
            .get(..HEADER_BYTES)
            .ok_or_else(|| corrupt(format!("{} bytes, shorter than the header", bytes.len())))?;
        if &header[..8] != MAGIC {
            return Err(corrupt("it does not start with the table's magic bytes"));
        }
        let version = u32_at(header, 8);
        if version != FORMAT_VERSION {
            return Err(corrupt(format!(
                "format version {version}, this build reads version {FORMAT_VERSION}"
            )));
        }
        let rows = u32_at(header, 12) as usize;
        let dims = u32_at(header, 16) as usize;
        let vocab_bytes = u32_at(header, 20) as usize;
        let checksum = u64::from_le_bytes(array(&header[24..32]));
        if rows == 0 || rows > MAX_ROWS || dims == 0 || dims > MAX_DIMS {
            return Err(corrupt(format!(
                "{rows} rows of {dims} dims (accepted: 1..={MAX_ROWS} rows, 1..={MAX_DIMS} dims)"
            )));
        }
        let body = &bytes[HEADER_BYTES..];
        // rows and dims are bounded above, so these cannot overflow.
        let expected = vocab_bytes + 4 * rows + rows * dims;
        if body.len() != expected {
            return Err(corrupt(format!(
                "{} bytes after the header, the header announces {expected}",
                body.len()
            )));
        }
        if fnv1a64(body) != checksum {
            return Err(corrupt("checksum mismatch"));
        }
        let (blob, rest) = body.split_at(vocab_bytes);
        let (scale_bytes, rows_bytes) = rest.split_at(4 * rows);
        let text = std::str::from_utf8(blob).map_err(|e| corrupt(format!("vocabulary: {e}")))?;
        let vocab: Vec<&str> = text
            .strip_suffix('\n')
            .ok_or_else(|| corrupt("vocabulary does not end with a newline"))?
            .split('\n')
            .collect();
        if vocab.len() != rows {
            return Err(corrupt(format!(
                "{} vocabulary entries for {rows} rows",
                vocab.len()
            )));
        }
        let scales: Vec<f32> = scale_bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(array(c)))
            .collect();
        if let Some(bad) = scales.iter().position(|s| !s.is_finite() || *s < 0.0) {
            return Err(corrupt(format!("row {bad} has scale {}", scales[bad])));
        }
        Ok(Self {
            vocab,
            scales,
            rows: rows_bytes,
            dims,
        })
    }

    /// Columns a row.
    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// Adds row `id` times its scale to `acc` (of length [`dims`](Self::dims)); an id
    /// outside the table adds nothing.
    pub(crate) fn add_row(&self, id: u32, acc: &mut [f32]) {
        let id = id as usize;
        let Some(&scale) = self.scales.get(id) else {
            return;
        };
        if scale == 0.0 {
            return;
        }
        let Some(row) = self.rows.get(id * self.dims..(id + 1) * self.dims) else {
            return;
        };
        for (a, &q) in acc.iter_mut().zip(row) {
            *a += scale * f32::from(i8::from_le_bytes([q]));
        }
    }
}

/// FNV-1a, 64-bit, byte by byte (what the distillation script writes).
pub(crate) fn fnv1a64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn corrupt(message: impl Into<String>) -> Error {
    Error::Embeddings {
        message: message.into(),
    }
}

fn u32_at(header: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(array(&header[at..at + 4]))
}

/// The first N bytes of `bytes` as an array (callers pass exactly N).
fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod tests {
    use super::*;

    /// A well-formed table of `vocab` with `dims` columns; row i is all (i + 1) with scale 0.5.
    pub(crate) fn build(vocab: &[&str], dims: usize) -> Vec<u8> {
        let mut body: Vec<u8> = vocab
            .iter()
            .flat_map(|t| format!("{t}\n").into_bytes())
            .collect();
        let blob_len = body.len();
        for _ in vocab {
            body.extend(0.5f32.to_le_bytes());
        }
        for i in 0..vocab.len() {
            body.extend(std::iter::repeat_n(i as u8 + 1, dims));
        }
        let mut out = MAGIC.to_vec();
        for n in [
            FORMAT_VERSION,
            vocab.len() as u32,
            dims as u32,
            blob_len as u32,
        ] {
            out.extend(n.to_le_bytes());
        }
        out.extend(fnv1a64(&body).to_le_bytes());
        out.extend(body);
        out
    }

    fn message(bytes: &[u8]) -> String {
        match Table::parse(bytes) {
            Err(Error::Embeddings { message }) => message,
            other => panic!("expected an embeddings error, got {other:?}"),
        }
    }

    /// Rewrites the checksum after a deliberate edit of the body.
    fn reseal(bytes: &mut [u8]) {
        let sum = fnv1a64(&bytes[HEADER_BYTES..]);
        bytes[24..32].copy_from_slice(&sum.to_le_bytes());
    }

    #[test]
    fn well_formed_table_parses() {
        let bytes = build(&["[UNK]", "a", "b"], 4);
        let table = Table::parse(&bytes).unwrap();
        assert_eq!(table.vocab, ["[UNK]", "a", "b"]);
        assert_eq!(table.dims(), 4);
        let mut acc = vec![0.0; 4];
        table.add_row(2, &mut acc);
        table.add_row(99, &mut acc);
        assert_eq!(acc, [1.5; 4]);
    }

    #[test]
    fn truncated_and_padded_files_are_refused() {
        let bytes = build(&["[UNK]", "a"], 4);
        assert!(message(&bytes[..10]).contains("shorter than the header"));
        assert!(message(&bytes[..bytes.len() - 1]).contains("the header announces"));
        let mut padded = bytes.clone();
        padded.push(0);
        assert!(message(&padded).contains("the header announces"));
        assert!(message(&[]).contains("shorter than the header"));
    }

    #[test]
    fn wrong_magic_and_version_are_refused() {
        let mut bytes = build(&["[UNK]"], 2);
        bytes[0] = b'X';
        assert!(message(&bytes).contains("magic"));
        let mut bytes = build(&["[UNK]"], 2);
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert!(message(&bytes).contains("format version 2"));
    }

    #[test]
    fn flipped_byte_fails_the_checksum() {
        let mut bytes = build(&["[UNK]", "a"], 4);
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        assert_eq!(message(&bytes), "checksum mismatch");
    }

    #[test]
    fn sizes_beyond_the_limits_are_refused() {
        let mut bytes = build(&["[UNK]"], 2);
        bytes[12..16].copy_from_slice(&(MAX_ROWS as u32 + 1).to_le_bytes());
        assert!(message(&bytes).contains("rows"));
        let mut bytes = build(&["[UNK]"], 2);
        bytes[16..20].copy_from_slice(&(MAX_DIMS as u32 + 1).to_le_bytes());
        assert!(message(&bytes).contains("dims"));
        // At the limits the sizes are accepted, and only the length check refuses.
        let mut bytes = build(&["[UNK]"], 2);
        bytes[12..16].copy_from_slice(&(MAX_ROWS as u32).to_le_bytes());
        bytes[16..20].copy_from_slice(&(MAX_DIMS as u32).to_le_bytes());
        assert!(message(&bytes).contains("the header announces"));
    }

    #[test]
    fn bad_vocabulary_and_scales_are_refused() {
        // Row count that disagrees with the vocabulary lines.
        let mut bytes = build(&["[UNK]", "a\nb"], 2);
        reseal(&mut bytes);
        assert!(message(&bytes).contains("vocabulary entries"));
        // Invalid UTF-8 in the vocabulary.
        let mut bytes = build(&["[UNK]", "a"], 2);
        bytes[HEADER_BYTES + 6] = 0xff;
        reseal(&mut bytes);
        assert!(message(&bytes).contains("vocabulary"));
        // A NaN scale.
        let mut bytes = build(&["[UNK]", "a"], 2);
        let at = HEADER_BYTES + "[UNK]\na\n".len() + 4;
        bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        reseal(&mut bytes);
        assert!(message(&bytes).contains("row 1 has scale"));
    }
}
