//! The pack's sample requests ([`REQUESTS_FILE`] at a root), read safely: the report prints
//! every line it reads.

use std::path::Path;

use crate::{Error, MAX_REQUESTS_BYTES, REQUESTS_FILE};

/// Read the pack's request list: a regular file reached without a symbolic link (a link
/// could lead out of the pack, and the report prints every line), never past
/// [`MAX_REQUESTS_BYTES`] whatever its size said (a device such as `/dev/zero` would never
/// end, a FIFO would block the report for good). Absent: no requests.
pub(crate) fn read(path: &Path, label: &str) -> Result<Vec<(String, String)>, Error> {
    use std::io::Read;
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
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_REQUESTS_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|source| Error::Requests {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > MAX_REQUESTS_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    let text = String::from_utf8(bytes).map_err(|_| refuse("it is not UTF-8 text".to_owned()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| (format!("{label}/{REQUESTS_FILE}"), l.to_owned()))
        .collect())
}
