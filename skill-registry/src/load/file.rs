//! Reading and parsing one file into a [`Skill`], with the checks that come before
//! reading.

use std::fs;
use std::path::Path;

use skill_format::{
    Code, Diagnostic, FileKind, MAX_FILE_BYTES, Origin, ParseOptions, SkillFile, parse_skill,
};

use crate::manifest::{HashCache, Primed};
use crate::skill::{Skill, Status};
use crate::{RegistryConfig, Source};

/// Read a file with the checks that must come before reading: a regular file, under the cap.
/// Returns its metadata (as checked) and its bytes.
pub(super) fn read_checked(path: &Path) -> Result<(fs::Metadata, Vec<u8>), Diagnostic> {
    let meta = fs::metadata(path).map_err(|e| {
        Diagnostic::error(
            Code::Unreadable,
            path,
            format!("cannot read the file ({e})"),
        )
    })?;
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
    let bytes = read_sized(path, meta.len()).map_err(|e| {
        Diagnostic::error(
            Code::Unreadable,
            path,
            format!("cannot read the file ({e})"),
        )
    })?;
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

/// Read the whole file at `path`, whose size was just read as `len`, as [`fs::read`] does
/// but without asking the file for its size again: the buffer starts at `len` bytes (plus
/// one, to see the end without growing), and a file that changed size meanwhile is still
/// read to its end, or to one byte past [`MAX_FILE_BYTES`] (which the caller refuses).
fn read_sized(path: &Path, len: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = fs::File::open(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    // Through `Take`, which reads to the end without the size query `File` makes first,
    // and at most one byte past the cap: a file that grew after its size was checked is
    // not read whole into memory.
    (&file)
        .take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
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

/// Read and parse one file. With `digests`, a file that parses as a skill is also hashed
/// and scanned from the bytes just read (unless `digests` already knows this version), so
/// that the manifest pass need not read it again.
pub(super) fn parse_one(
    path: &Path,
    origin: Origin,
    source: &Source,
    config: &RegistryConfig,
    digests: Option<&HashCache>,
) -> (SkillFile, Option<Primed>) {
    match read_checked(path) {
        Ok((meta, bytes)) => {
            let file = parse_skill(&bytes, &parse_options(path, origin, source, config));
            let primed = digests
                .filter(|_| file.kind != FileKind::NotASkill)
                .and_then(|cache| cache.prehash(path, &meta, &bytes));
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
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

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
                assert_eq!(
                    read_sized(&p, guess).unwrap(),
                    fs::read(&p).unwrap(),
                    "{n} {guess}"
                );
            }
        }
        // At the cap: read whole; past it: one byte past the cap, whatever size was given.
        let big = dir.path().join("big.md");
        fs::write(&big, vec![b'x'; MAX_FILE_BYTES]).unwrap();
        assert_eq!(read_sized(&big, 0).unwrap().len(), MAX_FILE_BYTES);
        fs::write(&big, vec![b'x'; MAX_FILE_BYTES + 100]).unwrap();
        assert_eq!(read_sized(&big, 10).unwrap().len(), MAX_FILE_BYTES + 1);
        assert_eq!(
            read_sized(&dir.path().join("missing"), 3)
                .unwrap_err()
                .kind(),
            fs::read(dir.path().join("missing")).unwrap_err().kind()
        );
    }
}
