//! The data of the per-file manifest ([`FileManifest`], [`FileEntry`], [`Sha256`]) and the
//! folder digest derived from it: plain values a snapshot holds. Computing them (reading,
//! hashing and scanning files, reusing earlier digests) is `manifest.rs`'s job, which sits
//! above the snapshot; these types sit below it.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256 as Hasher};

use skill_format::Diagnostic;

/// A SHA-256 digest. Shown and serialized as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sha256(pub [u8; 32]);

impl Sha256 {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Sha256(Hasher::digest(bytes).into())
    }

    /// Parse 64 hex digits (either case); `None` for anything else.
    pub fn from_hex(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            let hi = (pair[0] as char).to_digit(16)?;
            let lo = (pair[1] as char).to_digit(16)?;
            out[i] = u8::try_from(hi * 16 + lo).ok()?;
        }
        Some(Sha256(out))
    }

    /// The 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        self.to_string()
    }

    /// The 64 lowercase hex digits as bytes, without formatting machinery (the folder
    /// digest spells out every file's digest).
    fn hex_bytes(&self) -> [u8; 64] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 64];
        for (pair, b) in out.chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 0x0f)];
        }
        out
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.hex_bytes();
        // Only ASCII hex digits: always UTF-8.
        f.write_str(std::str::from_utf8(&hex).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256({self})")
    }
}

impl Serialize for Sha256 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Sha256 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Sha256::from_hex(&text)
            .ok_or_else(|| serde::de::Error::custom("expected 64 hex digits (a SHA-256 digest)"))
    }
}

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The path relative to the skill's folder, with `/` separators (`SKILL.md`,
    /// `scripts/run.py`).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its exact bytes; `None` when it was not hashed (over
    /// [`MAX_HASHED_FILE_BYTES`](crate::MAX_HASHED_FILE_BYTES), past [`MAX_HASHED_SKILL_BYTES`](crate::MAX_HASHED_SKILL_BYTES), or unreadable).
    pub sha256: Option<Sha256>,
}

/// Every file of one skill, sorted by path, and the folder digest derived from them; with
/// the content scan's findings over its text files (which the digest does not cover: they
/// follow from the bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileManifest {
    files: Vec<FileEntry>,
    complete: bool,
    digest: Sha256,
    pub(crate) findings: Vec<Diagnostic>,
}

impl FileManifest {
    /// A manifest of these files (sorted here by path).
    pub fn new(mut files: Vec<FileEntry>, complete: bool) -> Self {
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let digest = folder_digest(&files);
        FileManifest {
            files,
            complete,
            digest,
            findings: Vec::new(),
        }
    }

    /// The content scan's findings over the skill file and its text resources (files that
    /// are UTF-8, hold no NUL byte and are at most [`crate::MAX_SCAN_BYTES`]), by path,
    /// line and column.
    pub fn findings(&self) -> &[Diagnostic] {
        &self.findings
    }

    /// The files, sorted by path.
    pub fn files(&self) -> &[FileEntry] {
        &self.files
    }

    /// One file by its relative path.
    pub fn get(&self, path: &str) -> Option<&FileEntry> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }

    /// Whether every file of the folder is listed and hashed (no listing limit was hit and
    /// no file was left without a digest).
    pub fn is_complete(&self) -> bool {
        self.complete && self.files.iter().all(|f| f.sha256.is_some())
    }

    /// The digest of the whole folder: SHA-256 over one record per file, in path order,
    /// each `path` NUL `size in decimal` NUL `hex digest, or "-" without one` LF. Paths hold
    /// no NUL, so the records read back one way only.
    pub fn digest(&self) -> Sha256 {
        self.digest
    }

    /// The total size of the files.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

/// `n` in decimal, written at the end of `buf` (20 digits hold any `u64`).
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

fn folder_digest(files: &[FileEntry]) -> Sha256 {
    let mut h = Hasher::new();
    for f in files {
        h.update(f.path.as_bytes());
        h.update(b"\0");
        h.update(decimal(f.size, &mut [0; 20]));
        h.update(b"\0");
        match &f.sha256 {
            Some(d) => h.update(d.hex_bytes()),
            None => h.update(b"-"),
        }
        h.update(b"\n");
    }
    Sha256(h.finalize().into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// Decimal digits as `to_string` writes them, at the edges of `u64` too.
    #[test]
    fn decimal_matches_to_string() {
        let mut samples = vec![0, 1, 9, 10, 99, 100, 1_000_000, u64::MAX - 1, u64::MAX];
        samples.extend((0..64).map(|b| 1u64 << b));
        for n in samples {
            assert_eq!(decimal(n, &mut [0; 20]), n.to_string().as_bytes(), "{n}");
        }
    }

    /// The fast hex spelling is the one `{:02x}` per byte gives, and reads back.
    #[test]
    fn hex_matches_the_formatted_spelling() {
        for seed in 0u8..=255 {
            let mut bytes = [0u8; 32];
            for (i, b) in bytes.iter_mut().enumerate() {
                *b = seed
                    .wrapping_mul(31)
                    .wrapping_add(u8::try_from(i).unwrap().wrapping_mul(17));
            }
            let d = Sha256(bytes);
            let slow: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(d.to_string(), slow);
            assert_eq!(&d.hex_bytes()[..], slow.as_bytes());
            assert_eq!(Sha256::from_hex(&slow), Some(d));
        }
    }
}
