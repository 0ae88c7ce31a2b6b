//! Reading a skill file whole: within the size cap ([`MAX_FILE_BYTES`]), with one read
//! when its size is known from the open file. Below both the walk, which reads skill files
//! with their folders' listings, and the load.

use std::fs;

use skill_format::MAX_FILE_BYTES;

/// Read a skill file opened (without waiting or following a link) as its folder's listing
/// showed it: its metadata, and its whole bytes into `bytes`, as a load reads a file
/// found that way (`load::file::read_checked`); `None` for anything that check refuses
/// (the load then reads the file again and says why).
pub(crate) fn read_open_into(file: &fs::File, bytes: &mut Vec<u8>) -> Option<fs::Metadata> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES as u64 {
        return None;
    }
    read_sized_into(file, meta.len(), true, bytes).ok()?;
    (bytes.len() <= MAX_FILE_BYTES).then_some(meta)
}

/// Read the whole of `file`, whose size was just read as `len` (at most [`MAX_FILE_BYTES`]).
///
/// The buffer holds `len` bytes plus one. With `same_file` (`len` came from this open
/// file, not from its path), a read that brings the total to exactly `len` ends the read:
/// a regular file returns fewer bytes than asked only at its end, so the read that would
/// return nothing is not made. Otherwise, and for a file that grew meanwhile (it fills the
/// extra byte), the read goes on to the end or to one byte past [`MAX_FILE_BYTES`] (which
/// the caller refuses); one that shrank ends at its first empty read.
pub(crate) fn read_sized(file: &fs::File, len: u64, same_file: bool) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    read_sized_into(file, len, same_file, &mut bytes)?;
    Ok(bytes)
}

/// [`read_sized`] into `bytes` (cleared first), so that a caller can reuse its buffer.
fn read_sized_into(
    file: &fs::File,
    len: u64,
    same_file: bool,
    bytes: &mut Vec<u8>,
) -> std::io::Result<()> {
    use std::io::{ErrorKind, Read};
    let len = usize::try_from(len)
        .unwrap_or(MAX_FILE_BYTES)
        .min(MAX_FILE_BYTES);
    bytes.clear();
    bytes.resize(len + 1, 0);
    let mut got = 0;
    let mut reader = file;
    while let Some(rest) = bytes.get_mut(got..).filter(|r| !r.is_empty()) {
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => {
                got += n;
                if same_file && got == len {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(got);
    if got > len {
        // Larger than its size said: on to its end, or one byte past the cap.
        let room = (MAX_FILE_BYTES + 1).saturating_sub(got) as u64;
        reader.take(room).read_to_end(bytes)?;
    }
    Ok(())
}
