//! A deterministic zip archive of a skill's files, as the discovery index's `archive`
//! entries serve them: every file stored (method 0, no compression), in the order given,
//! with a fixed time stamp (1980-01-01 00:00, the format's earliest), UTF-8 names (flag bit
//! 11) and no extra fields, so the same files always make the same bytes and the index can
//! carry the archive's digest. No zip64: callers keep archives under [`MAX_ZIP_BYTES`].
//!
//! The layout is PKWARE's APPNOTE.TXT (6.3): a local header and the data of each file, then
//! the central directory and its end record.

/// The largest archive this writer makes (zip without zip64 counts offsets in 32 bits).
pub(crate) const MAX_ZIP_BYTES: u64 = u32::MAX as u64;

/// Most entries one archive holds (zip without zip64 counts them in 16 bits).
pub(crate) const MAX_ZIP_ENTRIES: usize = u16::MAX as usize;

/// `version needed to extract`: 1.0, stored files.
const VERSION: u16 = 10;
/// General purpose flag bit 11: names are UTF-8.
const UTF8_NAMES: u16 = 1 << 11;
/// MS-DOS date of 1980-01-01 (day 1, month 1, year 0).
const DOS_DATE: u16 = (1 << 5) | 1;

/// The CRC-32 (IEEE 802.3, reflected) table.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// The CRC-32 zip records of a file's bytes.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut c = u32::MAX;
    for &b in bytes {
        c = CRC_TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

/// Why an archive could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ZipError {
    /// Over [`MAX_ZIP_BYTES`] or [`MAX_ZIP_ENTRIES`], or a name over 65,535 bytes.
    TooLarge,
}

fn u16_of(n: usize) -> Result<u16, ZipError> {
    u16::try_from(n).map_err(|_| ZipError::TooLarge)
}

fn u32_of(n: usize) -> Result<u32, ZipError> {
    u32::try_from(n).map_err(|_| ZipError::TooLarge)
}

/// The archive of `files` (path with `/` separators, bytes), in this order.
pub(crate) fn stored_zip(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, ZipError> {
    if files.len() > MAX_ZIP_ENTRIES {
        return Err(ZipError::TooLarge);
    }
    let total: usize = files.iter().map(|(p, b)| 30 + p.len() + b.len()).sum();
    let mut out = Vec::with_capacity(total);
    let mut central = Vec::new();
    for (path, bytes) in files {
        let offset = u32_of(out.len())?;
        let crc = crc32(bytes);
        let size = u32_of(bytes.len())?;
        let name_len = u16_of(path.len())?;
        // Local file header.
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&UTF8_NAMES.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // stored
        out.extend_from_slice(&0u16.to_le_bytes()); // time 00:00
        out.extend_from_slice(&DOS_DATE.to_le_bytes());
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // extra
        out.extend_from_slice(path.as_bytes());
        out.extend_from_slice(bytes);
        // Its central directory header.
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&((3u16 << 8) | VERSION).to_le_bytes()); // made by: Unix
        central.extend_from_slice(&VERSION.to_le_bytes());
        central.extend_from_slice(&UTF8_NAMES.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&DOS_DATE.to_le_bytes());
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&name_len.to_le_bytes());
        central.extend_from_slice(&[0; 8]); // extra, comment, disk, internal attributes
        // External attributes: a regular file, rw-r--r--.
        central.extend_from_slice(&(0o100_644u32 << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(path.as_bytes());
    }
    let central_offset = u32_of(out.len())?;
    let central_size = u32_of(central.len())?;
    out.extend_from_slice(&central);
    let count = u16_of(files.len())?;
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]); // this disk, the central directory's disk
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&central_size.to_le_bytes());
    out.extend_from_slice(&central_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // comment
    if out.len() as u64 > MAX_ZIP_BYTES {
        return Err(ZipError::TooLarge);
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        // The CRC-32 check value of "123456789" (every catalogue of CRCs lists it).
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn an_archive_is_the_same_bytes_every_time_and_lays_out_its_records() {
        let files = vec![
            ("SKILL.md".to_owned(), b"---\nname: a\n---\n".to_vec()),
            ("scripts/run.sh".to_owned(), b"echo hi\n".to_vec()),
        ];
        let zip = stored_zip(&files).unwrap();
        assert_eq!(zip, stored_zip(&files).unwrap());
        assert_eq!(&zip[..4], b"PK\x03\x04");
        // The end record is the last 22 bytes: two entries, the directory right after
        // the two local records.
        let end = &zip[zip.len() - 22..];
        assert_eq!(&end[..4], b"PK\x05\x06");
        assert_eq!(u16::from_le_bytes([end[8], end[9]]), 2);
        let locals: usize = files.iter().map(|(p, b)| 30 + p.len() + b.len()).sum();
        assert_eq!(
            u32::from_le_bytes([end[16], end[17], end[18], end[19]]) as usize,
            locals
        );
        assert_eq!(&zip[locals..locals + 4], b"PK\x01\x02");
        // The first file's data follows its header and name, stored as is.
        let data = 30 + "SKILL.md".len();
        assert_eq!(&zip[data..data + files[0].1.len()], &files[0].1[..]);
    }

    #[test]
    fn entries_past_the_format_s_count_are_refused() {
        let files = vec![(String::from("f"), Vec::new()); MAX_ZIP_ENTRIES + 1];
        assert_eq!(stored_zip(&files), Err(ZipError::TooLarge));
        assert!(stored_zip(&files[..MAX_ZIP_ENTRIES]).is_ok());
    }
}
