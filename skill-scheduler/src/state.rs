//! The persisted last-fire state: one small JSON file, written atomically.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::Error;

/// The state file format this crate writes. A file with a higher version is ignored (the
/// scheduler starts clean and warns) rather than misread.
pub const STATE_VERSION: u32 = 1;

/// Largest state file read, in bytes; a larger file is treated as corrupt.
pub const MAX_STATE_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, Serialize, Deserialize)]
struct StateFile {
    version: u32,
    #[serde(default)]
    last_fires: BTreeMap<String, String>,
}

/// What loading found: the last fire instant per skill, and warnings for a file that
/// could not be used.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) last_fires: BTreeMap<String, DateTime<Utc>>,
    pub(crate) warnings: Vec<String>,
}

/// Read the state file. A missing file is a clean start; an unreadable, corrupt or newer
/// file is a clean start with a warning (the file is copied aside to `<name>.unusable`
/// first, so nothing is lost).
pub(crate) fn load(path: &Path) -> Loaded {
    let mut out = Loaded::default();
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(e) => {
            out.warnings.push(format!(
                "cannot read schedule state {}: {e}; starting with no record of past fires",
                path.display()
            ));
            return out;
        }
    };
    let unusable = |why: String, out: &mut Loaded| {
        let aside = aside_path(path);
        let kept = match fs::copy(path, &aside) {
            Ok(_) => format!(" (kept a copy at {})", aside.display()),
            Err(_) => String::new(),
        };
        out.warnings.push(format!(
            "schedule state {} {why}; starting with no record of past fires{kept}",
            path.display()
        ));
    };
    if meta.len() > MAX_STATE_BYTES {
        unusable(
            format!("is larger than {MAX_STATE_BYTES} bytes, so it is not a state file"),
            &mut out,
        );
        return out;
    }
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            unusable(format!("cannot be read ({e})"), &mut out);
            return out;
        }
    };
    // Read the version on its own first, so a newer format is reported as such.
    let version = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("version").and_then(serde_json::Value::as_u64));
    if let Some(v) = version {
        if v > u64::from(STATE_VERSION) {
            unusable(
                format!(
                    "was written by a newer version (format {v}, this one reads {STATE_VERSION})"
                ),
                &mut out,
            );
            return out;
        }
    }
    let file: StateFile = match serde_json::from_str(&text) {
        Ok(f) => f,
        Err(e) => {
            unusable(format!("is corrupt ({e})"), &mut out);
            return out;
        }
    };
    for (name, when) in file.last_fires {
        match DateTime::parse_from_rfc3339(&when) {
            Ok(t) => {
                out.last_fires.insert(name, t.with_timezone(&Utc));
            }
            Err(e) => out.warnings.push(format!(
                "schedule state {}: ignoring the last fire of `{name}` ({e})",
                path.display()
            )),
        }
    }
    out
}

fn aside_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".unusable");
    path.with_file_name(name)
}

/// Write the state file atomically: a temporary file in the same folder, flushed to disk,
/// renamed over the old one, then the folder flushed so the rename survives a crash.
pub(crate) fn save<'a>(
    path: &Path,
    last_fires: impl IntoIterator<Item = (&'a str, DateTime<Utc>)>,
) -> Result<(), Error> {
    let file = StateFile {
        version: STATE_VERSION,
        last_fires: last_fires
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_rfc3339_opts(SecondsFormat::AutoSi, true)))
            .collect(),
    };
    let io = |source: std::io::Error| Error::State {
        path: path.to_path_buf(),
        source,
    };
    let text = serde_json::to_string_pretty(&file)
        .map_err(|e| io(std::io::Error::other(e.to_string())))?;
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)?;
        }
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // Flushing a folder is not possible everywhere; the data itself is already synced.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(e)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::expr::utc;

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let mut m = BTreeMap::new();
        m.insert(
            "workflows.daily_digest".to_owned(),
            utc(2026, 11, 23, 8, 0, 0),
        );
        save(&path, m.iter().map(|(k, v)| (k.as_str(), *v))).unwrap();
        let loaded = load(&path);
        assert!(loaded.warnings.is_empty());
        assert_eq!(loaded.last_fires, m);
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn missing_file_is_a_clean_start_without_warning() {
        let dir = tempfile::tempdir().unwrap();
        let loaded = load(&dir.path().join("none.json"));
        assert!(loaded.last_fires.is_empty() && loaded.warnings.is_empty());
    }

    #[test]
    fn corrupt_and_newer_files_start_clean_with_a_warning_and_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        fs::write(&path, "{not json").unwrap();
        let loaded = load(&path);
        assert!(loaded.last_fires.is_empty());
        assert!(
            loaded.warnings[0].contains("corrupt"),
            "{:?}",
            loaded.warnings
        );
        assert_eq!(fs::read_to_string(aside_path(&path)).unwrap(), "{not json");

        fs::write(
            &path,
            r#"{"version": 99, "last_fires": {"a": "2026-01-01T00:00:00Z"}}"#,
        )
        .unwrap();
        let loaded = load(&path);
        assert!(loaded.last_fires.is_empty());
        assert!(
            loaded.warnings[0].contains("newer version"),
            "{:?}",
            loaded.warnings
        );
    }

    #[test]
    fn a_bad_instant_drops_only_that_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        fs::write(
            &path,
            r#"{"version": 1, "last_fires": {"a": "yesterday", "b": "2026-01-01T00:00:00Z"}}"#,
        )
        .unwrap();
        let loaded = load(&path);
        assert_eq!(loaded.last_fires.len(), 1);
        assert_eq!(loaded.warnings.len(), 1);
    }

    #[test]
    fn oversized_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let f = fs::File::create(&path).unwrap();
        f.set_len(MAX_STATE_BYTES + 1).unwrap();
        let loaded = load(&path);
        assert!(
            loaded.warnings[0].contains("larger than"),
            "{:?}",
            loaded.warnings
        );
        // At the limit it is read (and, being zeros, found corrupt instead).
        f.set_len(MAX_STATE_BYTES).unwrap();
        let loaded = load(&path);
        assert!(
            loaded.warnings[0].contains("corrupt"),
            "{:?}",
            loaded.warnings
        );
    }
}
