//! Reading and parsing one file into a [`Skill`], with the checks that come before
//! reading.

use std::fs;
use std::path::Path;

use skill_format::{
    Code, Diagnostic, FileKind, MAX_FILE_BYTES, Origin, ParseOptions, SkillFile, parse_skill,
    parse_skill_keeping,
};

use crate::disclose::{open_without_waiting, open_without_waiting_or_following};
use crate::discover::Prefetched;
use crate::manifest::{HashCache, Primed};
use crate::read::read_sized;
use crate::skill::{Skill, Status};
use crate::{RegistryConfig, Source};

/// How a file to read was found, which decides what is checked before it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Listed {
    /// Its folder's listing said it is a regular file (not a link): it is opened at once,
    /// without waiting, and the open file is asked what it is.
    Regular,
    /// Anything else (a link, a path given by a watcher or a user): its path is asked what
    /// it is first, so that nothing but a regular file is ever opened.
    Unknown,
}

/// Read a file with the checks that must come before reading: a regular file, under the cap.
/// Returns its metadata (as checked) and its bytes.
///
/// Every open is without waiting ([`open_without_waiting`]): a regular file swapped for a
/// named pipe after it was listed or checked is refused, never waited on.
pub(super) fn read_checked(
    path: &Path,
    listed: Listed,
) -> Result<(fs::Metadata, Vec<u8>), Diagnostic> {
    let unreadable = |e: std::io::Error| {
        Diagnostic::error(
            Code::Unreadable,
            path,
            format!("cannot read the file ({e})"),
        )
    };
    let (meta, opened) = match listed {
        Listed::Regular => {
            let file = open_without_waiting_or_following(path).map_err(|e| {
                if is_link_refused(&e) {
                    Diagnostic::error(
                        Code::Unreadable,
                        path,
                        "the file became a symbolic link after its folder was listed; it is read again on the next reload",
                    )
                } else {
                    unreadable(e)
                }
            })?;
            (file.metadata().map_err(unreadable)?, Some(file))
        }
        Listed::Unknown => (fs::metadata(path).map_err(unreadable)?, None),
    };
    if !meta.is_file() {
        return Err(Diagnostic::error(
            Code::NotAFile,
            path,
            format!(
                "this is {}, not a file: a skill's SKILL.md must be a regular file",
                kind_of(&meta.file_type())
            ),
        ));
    }
    if meta.len() > MAX_FILE_BYTES as u64 {
        return Err(Diagnostic::error(
            Code::FileTooLarge,
            path,
            format!(
                "file is {} bytes; skill files are read up to {MAX_FILE_BYTES} bytes: move detail into references/",
                meta.len()
            ),
        ));
    }
    let same_file = opened.is_some();
    let file = match opened {
        Some(file) => file,
        None => open_without_waiting(path).map_err(unreadable)?,
    };
    let bytes = read_sized(&file, meta.len(), same_file).map_err(unreadable)?;
    // The file may have grown since its size was checked: the read stops one byte past the
    // cap, and such a file is refused as one found too large at once.
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Diagnostic::error(
            Code::FileTooLarge,
            path,
            format!(
                "file grew past {MAX_FILE_BYTES} bytes while it was read; skill files are read up to {MAX_FILE_BYTES} bytes: move detail into references/"
            ),
        ));
    }
    Ok((meta, bytes))
}

/// Whether an open without following links failed because the path is a link.
fn is_link_refused(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        // FreeBSD and its kin say EMLINK where Linux says ELOOP.
        let codes = [rustix::io::Errno::LOOP, rustix::io::Errno::MLINK];
        e.raw_os_error()
            .is_some_and(|raw| codes.iter().any(|c| c.raw_os_error() == raw))
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// What a path that is not a regular file is, for messages.
pub(super) fn kind_of(ft: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if ft.is_block_device() || ft.is_char_device() {
            return "a device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

pub(super) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub(super) fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub(super) fn parse_options(
    path: &Path,
    origin: Origin,
    source: &Source,
    config: &RegistryConfig,
) -> ParseOptions {
    ParseOptions {
        path: path.to_path_buf(),
        origin,
        dialect: source.dialect,
        mode: config.mode,
    }
}

/// Read and parse one file (or parse the bytes read with its folder's listing, `read`).
/// With `digests`, a file that parses as a skill is also hashed
/// and scanned from the bytes just read (unless the cache already knows this version), so
/// that the manifest pass need not read it again; and when the flag says its folder holds
/// nothing else, its whole manifest is made too ([`HashCache::prehash`]).
pub(super) fn parse_one(
    path: &Path,
    (listed, read): (Listed, Option<Prefetched<'_>>),
    origin: Origin,
    source: &Source,
    config: &RegistryConfig,
    digests: Option<(&HashCache, bool)>,
) -> (SkillFile, Option<Primed>) {
    use std::borrow::Cow;
    // Read with its folder's listing already, as `read_checked` would read it.
    let got = match read {
        Some(read) => Ok((read.meta, Cow::Borrowed(read.bytes))),
        None => read_checked(path, listed).map(|(meta, bytes)| (meta, Cow::Owned(bytes))),
    };
    match got {
        Ok((meta, bytes)) => {
            let opts = parse_options(path, origin, source, config);
            let (file, kept) = parse_skill_keeping(&bytes, &opts);
            let primed = digests
                .filter(|_| file.kind != FileKind::NotASkill)
                .and_then(|(cache, lone)| cache.prehash(path, &meta, (&bytes, &kept), lone));
            (file, primed)
        }
        Err(d) => (unparsed_file(path, origin, source, config, d), None),
    }
}

/// A skill file that could not be parsed, with the one diagnostic that says why.
pub(super) fn unparsed_file(
    path: &Path,
    origin: Origin,
    source: &Source,
    config: &RegistryConfig,
    diagnostic: Diagnostic,
) -> SkillFile {
    let mut f = parse_skill(b"", &parse_options(path, origin, source, config));
    f.diagnostics = vec![diagnostic];
    f.kind = FileKind::Skill;
    f
}

pub(super) fn to_skill(
    file: SkillFile,
    source_index: usize,
    source: &Source,
    dir: &Path,
    domain: Option<String>,
) -> Skill {
    Skill {
        name: file.name,
        description: file.description,
        dialect: file.dialect,
        kind: file.kind,
        layer: source.layer.clone(),
        source: source_index,
        path: file.path,
        dir: dir.to_path_buf(),
        domain,
        manifest: file.manifest,
        body: file.body,
        body_line: file.body_line,
        status: Status::Loaded,
        diagnostics: file.diagnostics,
        outline_cache: crate::SectionCache::default(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn sized(p: &Path, len: u64) -> std::io::Result<Vec<u8>> {
        let a = read_sized(&fs::File::open(p)?, len, true)?;
        let b = read_sized(&fs::File::open(p)?, len, false)?;
        assert_eq!(a, b);
        Ok(a)
    }

    /// Reading with the size known reads what `fs::read` reads, whether the size given is
    /// right, too small or too large (a file that changed between the two).
    #[test]
    fn a_sized_read_reads_what_fs_read_reads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.md");
        for n in [0usize, 1, 7, 4095, 4096, 4097, 70_000] {
            let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            fs::write(&p, &data).unwrap();
            let len = n as u64;
            for guess in [len, len.saturating_sub(1), len + 1, 0, len * 2] {
                assert_eq!(sized(&p, guess).unwrap(), data, "{n} {guess}");
            }
        }
        // At the cap: read whole; past it: one byte past the cap, whatever size was given.
        let big = dir.path().join("big.md");
        fs::write(&big, vec![b'x'; MAX_FILE_BYTES]).unwrap();
        assert_eq!(sized(&big, 0).unwrap().len(), MAX_FILE_BYTES);
        assert_eq!(
            sized(&big, MAX_FILE_BYTES as u64).unwrap().len(),
            MAX_FILE_BYTES
        );
        fs::write(&big, vec![b'x'; MAX_FILE_BYTES + 100]).unwrap();
        assert_eq!(sized(&big, 10).unwrap().len(), MAX_FILE_BYTES + 1);
        assert_eq!(
            sized(&big, MAX_FILE_BYTES as u64).unwrap().len(),
            MAX_FILE_BYTES + 1
        );
    }

    /// Both ways of finding a file read the same bytes and metadata; a missing file is
    /// unreadable either way.
    #[test]
    fn a_listed_file_reads_as_an_unknown_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("SKILL.md");
        fs::write(&p, "---\nname: a\n---\n").unwrap();
        let (m1, b1) = read_checked(&p, Listed::Regular).unwrap();
        let (m2, b2) = read_checked(&p, Listed::Unknown).unwrap();
        assert_eq!(b1, b2);
        assert_eq!(b1, fs::read(&p).unwrap());
        assert_eq!((m1.len(), m1.is_file()), (m2.len(), m2.is_file()));
        let missing = dir.path().join("missing");
        for listed in [Listed::Regular, Listed::Unknown] {
            let d = read_checked(&missing, listed).unwrap_err();
            assert_eq!(d.code, Code::Unreadable);
        }
        // Too large, by either way.
        fs::write(&p, vec![b'x'; MAX_FILE_BYTES + 1]).unwrap();
        for listed in [Listed::Regular, Listed::Unknown] {
            let d = read_checked(&p, listed).unwrap_err();
            assert_eq!(d.code, Code::FileTooLarge);
        }
    }

    /// A file listed as regular that a link took the place of is not followed; found any
    /// other way, the link is read through (the walk has checked where links lead).
    #[cfg(unix)]
    #[test]
    fn a_listed_file_replaced_by_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.md");
        fs::write(&target, "---\nname: a\n---\n").unwrap();
        let link = dir.path().join("SKILL.md");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let d = read_checked(&link, Listed::Regular).unwrap_err();
        assert_eq!(d.code, Code::Unreadable);
        assert!(
            d.message.contains("became a symbolic link"),
            "{}",
            d.message
        );
        assert_eq!(
            read_checked(&link, Listed::Unknown).unwrap().1,
            fs::read(&target).unwrap()
        );
    }
}
