//! The pack's sample requests ([`REQUESTS_FILE`] at a root), read safely: the report prints
//! every line it reads.

use std::path::Path;

use crate::{Error, MAX_REQUESTS_BYTES, REQUESTS_FILE};

/// Read the pack's request list: a regular file reached without a symbolic link (a link
/// could lead out of the pack, and the report prints every line), never past
/// [`MAX_REQUESTS_BYTES`] whatever its size said (a device such as `/dev/zero` would never
/// end, a FIFO would block the report for good). Absent: no requests.
pub(crate) fn read(path: &Path, label: &str) -> Result<Vec<(String, String)>, Error> {
    let refuse = |why: String| Error::Requests {
        path: path.to_path_buf(),
        source: std::io::Error::other(why),
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::Requests {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if meta.file_type().is_symlink() {
        return Err(refuse(
            "it is a symbolic link; keep the request list in the pack as a plain file".to_owned(),
        ));
    }
    if !meta.is_file() {
        return Err(refuse("it is not a regular file".to_owned()));
    }
    let too_big = |len: u64| {
        refuse(format!(
            "the file has {len} bytes; at most {MAX_REQUESTS_BYTES} are read"
        ))
    };
    if meta.len() > MAX_REQUESTS_BYTES {
        return Err(too_big(meta.len()));
    }
    let bytes = read_opened(path)?;
    let text = String::from_utf8(bytes).map_err(|_| refuse("it is not UTF-8 text".to_owned()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| (format!("{label}/{REQUESTS_FILE}"), l.to_owned()))
        .collect())
}

/// Open and read the file at `path` as [`read`] promises, whatever `path` is by now: the
/// checks above looked at the path, and a link, FIFO or device may have taken its place
/// since. So the open neither follows a link in the last component nor waits for a
/// writer, and the open file itself must be a regular file; the read stops one byte past
/// [`MAX_REQUESTS_BYTES`].
fn read_opened(path: &Path) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let failed = |source: std::io::Error| Error::Requests {
        path: path.to_path_buf(),
        source,
    };
    let file = open_plain(path).map_err(failed)?;
    let meta = file.metadata().map_err(failed)?;
    if !meta.is_file() {
        return Err(failed(std::io::Error::other("it is not a regular file")));
    }
    let mut bytes = Vec::new();
    file.take(MAX_REQUESTS_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > MAX_REQUESTS_BYTES {
        return Err(failed(std::io::Error::other(format!(
            "the file has more than {MAX_REQUESTS_BYTES} bytes; at most that many are read"
        ))));
    }
    Ok(bytes)
}

/// Open for reading without following a link in the last component (`O_NOFOLLOW`: a link
/// is refused with `ELOOP`) and without waiting for a FIFO's writer (`O_NONBLOCK`).
fn open_plain(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        let flags = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
        // The flags' bits fit an `i32` on every Unix (they are a C `int`).
        options.custom_flags(i32::try_from(flags.bits()).unwrap_or(0));
    }
    options.open(path)
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// What the path checks let through can be swapped before the open: the open itself
    /// refuses a link (not followed) and a FIFO (at once, not waiting for a writer).
    #[test]
    fn the_open_refuses_what_took_the_plain_files_place() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "not for the report\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert!(read_opened(&link).is_err(), "a link was followed");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = read_opened(&fifo).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
        }
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "a\nb\n").unwrap();
        assert_eq!(read_opened(&plain).unwrap(), b"a\nb\n");
        let limit = usize::try_from(MAX_REQUESTS_BYTES).unwrap();
        std::fs::write(&plain, vec![b'x'; limit]).unwrap();
        assert_eq!(read_opened(&plain).unwrap().len(), limit);
        std::fs::write(&plain, vec![b'x'; limit + 1]).unwrap();
        assert!(read_opened(&plain).is_err());
    }
}
