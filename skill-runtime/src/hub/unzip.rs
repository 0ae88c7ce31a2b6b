//! Reading a skill archive from a remote source: a zip whose entries are stored (method 0,
//! as this engine's own index serves them) or deflated (method 8, as most other publishers'
//! tools write them), read through its central directory with every offset and length
//! checked against the bytes, each entry's CRC-32 and size checked, and each entry's path
//! checked by [`safe_path`]. A deflated entry is inflated with at most the size the
//! directory declares for it as its output limit, and the declared sizes of an archive's
//! entries add up to at most [`MAX_UNPACKED_BYTES`] before anything is inflated: a
//! decompression bomb is refused before its output is made. Another method (bzip2, LZMA,
//! zstd, encryption), a zip64 archive, an entry whose local header disagrees with the
//! directory and a duplicate path are refused.

use super::{MAX_ARCHIVE_FILES, MAX_UNPACKED_BYTES, safe_path};

/// Compression methods read: stored and deflated.
const STORED: usize = 0;
const DEFLATED: usize = 8;

/// The end-of-central-directory record's signature and least length.
const EOCD_SIGNATURE: u32 = 0x0605_4b50;
const EOCD_LEN: usize = 22;
/// The most bytes after the end record (its comment).
const MAX_COMMENT: usize = 0xffff;
const CENTRAL_SIGNATURE: u32 = 0x0201_4b50;
const CENTRAL_LEN: usize = 46;
const LOCAL_SIGNATURE: u32 = 0x0403_4b50;
const LOCAL_LEN: usize = 30;

fn u16_at(b: &[u8], at: usize) -> Option<usize> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(usize::from(u16::from_le_bytes([s[0], s[1]])))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn usize_at(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u32_at(b, at)?).ok()
}

/// One entry's bytes: stored ones as they are, deflated ones inflated to exactly `size`.
fn unpack(name: &str, method: usize, data: &[u8], size: usize) -> Result<Vec<u8>, String> {
    match method {
        STORED if data.len() == size => Ok(data.to_vec()),
        STORED => Err(format!(
            "archive entry `{name}` is stored with {} bytes where its size says {size}",
            data.len()
        )),
        DEFLATED => {
            let out = miniz_oxide::inflate::decompress_to_vec_with_limit(data, size).map_err(
                |e| match e.status {
                    miniz_oxide::inflate::TINFLStatus::HasMoreOutput => format!(
                        "archive entry `{name}` inflates past the {size} bytes its size says"
                    ),
                    other => format!("archive entry `{name}` does not inflate: {other:?}"),
                },
            )?;
            if out.len() != size {
                return Err(format!(
                    "archive entry `{name}` inflates to {} bytes where its size says {size}",
                    out.len()
                ));
            }
            Ok(out)
        }
        other => Err(format!(
            "archive entry `{name}` is compressed with method {other}: only stored (0) and deflated (8) entries are read"
        )),
    }
}

/// The files of a zip of stored or deflated entries, as (relative path, bytes), in the
/// directory's order; folders (names ending in `/`) are skipped.
pub(crate) fn read_zip(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let broken = |what: &str| format!("the archive is not a readable zip: {what}");
    let low = bytes.len().saturating_sub(EOCD_LEN + MAX_COMMENT);
    let end = (low..=bytes.len().saturating_sub(EOCD_LEN))
        .rev()
        .find(|&at| u32_at(bytes, at) == Some(EOCD_SIGNATURE))
        .ok_or_else(|| broken("no end of central directory"))?;
    let count = u16_at(bytes, end + 10).ok_or_else(|| broken("a short end record"))?;
    let dir_at = usize_at(bytes, end + 16).ok_or_else(|| broken("a short end record"))?;
    if count == 0xffff || dir_at == u32::MAX as usize {
        return Err("zip64 archives are not supported".into());
    }
    if count > MAX_ARCHIVE_FILES {
        return Err(format!(
            "the archive holds {count} entries, over the {MAX_ARCHIVE_FILES} a skill may have"
        ));
    }
    let mut files = Vec::with_capacity(count);
    let mut seen = std::collections::BTreeSet::new();
    let mut unpacked: u64 = 0;
    let mut at = dir_at;
    for _ in 0..count {
        if u32_at(bytes, at) != Some(CENTRAL_SIGNATURE) {
            return Err(broken("a central directory entry is missing"));
        }
        let field = |off: usize| u16_at(bytes, at + off).ok_or_else(|| broken("a short entry"));
        let method = field(10)?;
        let crc = u32_at(bytes, at + 16).ok_or_else(|| broken("a short entry"))?;
        let packed = usize_at(bytes, at + 20).ok_or_else(|| broken("a short entry"))?;
        let size = usize_at(bytes, at + 24).ok_or_else(|| broken("a short entry"))?;
        let (name_len, extra_len, comment_len) = (field(28)?, field(30)?, field(32)?);
        let local = usize_at(bytes, at + 42).ok_or_else(|| broken("a short entry"))?;
        let name = bytes
            .get(at + CENTRAL_LEN..at + CENTRAL_LEN + name_len)
            .ok_or_else(|| broken("a name past the end"))?;
        let name = std::str::from_utf8(name)
            .map_err(|_| "an archive entry's name is not UTF-8".to_owned())?;
        at += CENTRAL_LEN + name_len + extra_len + comment_len;
        if name.ends_with('/') {
            continue;
        }
        let path = safe_path(name)?;
        if method != STORED && method != DEFLATED {
            return Err(format!(
                "archive entry `{name}` is compressed with method {method}: only stored (0) and deflated (8) entries are read"
            ));
        }
        unpacked = unpacked.saturating_add(size as u64);
        if unpacked > MAX_UNPACKED_BYTES {
            return Err(format!(
                "the archive unpacks to over {MAX_UNPACKED_BYTES} bytes (entry `{name}` declares {size})"
            ));
        }
        if u32_at(bytes, local) != Some(LOCAL_SIGNATURE)
            || u16_at(bytes, local + 26) != Some(name_len)
        {
            return Err(broken(&format!("entry `{name}`'s local header disagrees")));
        }
        let local_extra = u16_at(bytes, local + 28).ok_or_else(|| broken("a short header"))?;
        let start = local + LOCAL_LEN + name_len + local_extra;
        let data = start
            .checked_add(packed)
            .and_then(|stop| bytes.get(start..stop))
            .ok_or_else(|| broken(&format!("entry `{name}` runs past the end")))?;
        let data = unpack(name, method, data, size)?;
        if crate::zip::crc32(&data) != crc {
            return Err(format!("archive entry `{name}` fails its CRC-32"));
        }
        if !seen.insert(path.clone()) {
            return Err(format!("archive entry `{name}` is there twice"));
        }
        files.push((path, data));
    }
    Ok(files)
}
