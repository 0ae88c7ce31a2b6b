//! The skills extension's view of one registry generation: every servable folder skill
//! as a SEP-2640 entry (`skill://` URI, verbatim frontmatter, the complete file manifest
//! with sizes and SHA-256 digests), every file by URI, and the directory tree.
//!
//! Built once per generation from Engine operations and shared by every request until the
//! registry reloads. A skill that cannot be served as the extension requires (no folder
//! of its own, a name outside the Agent Skills rules, frontmatter without `name` and
//! `description`, frontmatter a host would refuse (`skill_runtime::frontmatter_refusal`: the
//! TypeScript SDK's `SkillsClient.list()` throws for the whole listing on one such entry), or
//! over the per-skill limits) is left out and recorded with the reason;
//! it stays reachable through the tools.
//!
//! A namespaced skill (`ns:name`) is served at `skill://ns/<folders>/name/SKILL.md`: the
//! namespace first, the frontmatter's name last, as SEP-2640 asks. Two skills at one URI are
//! both left out of the resources, never one preferred; each stays reachable through the tools.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    DIRECTORY_MIME_TYPE, Resource, ResourceContents, Skill, SkillFrontmatter, SkillResource,
    SkillResources,
};
use skill_runtime::Sha256;
use skill_runtime::{Engine, MAX_NAME_CHARS, SKILL_FILE, SkillSummary};

/// SEP-2640 limit: files per skill, `SKILL.md` included.
pub const MAX_FILES_PER_SKILL: usize = 512;
/// SEP-2640 limit: total bytes of a skill's files.
pub const MAX_BYTES_PER_SKILL: u64 = 16 * 1024 * 1024;
/// The URI scheme skills are served under.
pub const SCHEME: &str = "skill://";
/// Most bytes of file contents one catalog keeps for `resources/read` (the contents of the
/// files read first, each once checked against its listed size and digest); reads past it
/// are read from the engine and hashed each time.
const MAX_KEPT_BYTES: u64 = 64 * 1024 * 1024;

/// One file of a served skill.
#[derive(Debug, Clone)]
pub(crate) struct FileRef {
    /// Index of its skill in [`Catalog::skills`].
    pub skill: usize,
    /// Path relative to the skill folder.
    pub relative: String,
    /// Its MIME type.
    pub mime: &'static str,
    /// Its size in bytes when the manifest was made.
    pub size: u64,
    /// Its SHA-256 when the manifest was made.
    pub sha256: Sha256,
    /// Its contents as served, once a read gave exactly the listed bytes and
    /// [`MAX_KEPT_BYTES`] had room (see [`Catalog::keep`]).
    pub kept: OnceLock<ResourceContents>,
}

/// A served skill.
#[derive(Debug, Clone)]
pub(crate) struct Served {
    /// The registry's name (`namespace:name` for a namespaced source's skill; the entry's
    /// frontmatter keeps the name as written).
    pub name: String,
    /// The description from the frontmatter.
    pub description: String,
    /// The SEP-2640 entry.
    pub entry: Skill,
}

/// A child of a directory resource.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Child {
    File,
    Dir,
}

/// Everything the extension serves for one generation.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    /// The registry generation it was built from.
    pub generation: u64,
    /// Served skills, sorted by URI.
    pub skills: Vec<Served>,
    /// `SKILL.md` URI to index in `skills`.
    by_uri: HashMap<String, usize>,
    /// Every file by URI.
    files: HashMap<String, FileRef>,
    /// Every file URI in listing order (skills by URI, then `SKILL.md`, then paths).
    file_order: Vec<String>,
    /// Directory URI to its children.
    dirs: BTreeMap<String, BTreeMap<String, Child>>,
    /// Skills left out, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Bytes of the files' `kept` contents, at most [`MAX_KEPT_BYTES`].
    kept_bytes: AtomicU64,
    /// Whether reads are verified against a lock (`require_lock`): then nothing is kept,
    /// so that every read is checked and a file changed since the lock is refused.
    verified_reads: bool,
}

/// Percent-encode one URI path segment (everything but RFC 3986 unreserved characters).
pub(crate) fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

/// The MIME type of a file that is not text and whose extension says nothing.
const UNKNOWN_MIME: &str = "application/octet-stream";

/// A digest as SEP-2640 writes it: `sha256:` and the lowercase hex.
pub(crate) fn digest_text(sha256: &Sha256) -> String {
    format!("sha256:{}", sha256.to_hex())
}

/// The MIME type of a file, by extension; text without a known extension is `text/plain`.
pub(crate) fn mime_type(relative: &str, is_text: bool) -> &'static str {
    let ext = relative
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" | "bash" => "application/x-sh",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ if is_text => "text/plain",
        _ => UNKNOWN_MIME,
    }
}

/// The `skill://` path of a folder skill: the folder's parent segments, then the name.
fn skill_path(folder: &str, name: &str) -> String {
    let mut segments: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    segments.pop();
    let mut path: String = segments
        .iter()
        .map(|s| encode_segment(s))
        .collect::<Vec<_>>()
        .join("/");
    if !path.is_empty() {
        path.push('/');
    }
    path.push_str(&encode_segment(name));
    path
}

impl Catalog {
    /// Build the catalog of everything the profile may see.
    pub(crate) fn build(engine: &Engine, profile: Option<&str>) -> Catalog {
        let generation = engine.generation();
        let mut catalog = Catalog {
            generation,
            verified_reads: engine.snapshot().verifies_reads(),
            ..Catalog::default()
        };
        let mut served: Vec<(Served, Vec<(String, FileRef)>)> = Vec::new();
        for summary in engine.visible_skills(profile) {
            match serve_one(engine, profile, &summary) {
                Ok(one) => served.push(one),
                Err(reason) => catalog.skipped.push((summary.name, reason)),
            }
        }
        served.sort_by(|a, b| a.0.entry.uri.cmp(&b.0.entry.uri));
        // Two skills at one URI (a namespaced `ns:x` and a skill in a folder `ns/x` of a
        // source without one): neither is served as a resource, so neither silently takes
        // the other's place; both stay reachable through the tools.
        let mut clash = vec![false; served.len()];
        for i in 1..served.len() {
            if served[i].0.entry.uri == served[i - 1].0.entry.uri {
                clash[i] = true;
                clash[i - 1] = true;
            }
        }
        let mut kept = Vec::with_capacity(served.len());
        for ((skill, files), clashes) in served.into_iter().zip(clash) {
            if clashes {
                let reason = format!(
                    "another skill has the same URI {}: rename one, or give its source a namespace",
                    skill.entry.uri
                );
                catalog.skipped.push((skill.name, reason));
            } else {
                kept.push((skill, files));
            }
        }
        for (index, (skill, files)) in kept.into_iter().enumerate() {
            let root = skill
                .entry
                .uri
                .strip_suffix(&format!("/{SKILL_FILE}"))
                .unwrap_or(&skill.entry.uri)
                .to_owned();
            catalog.by_uri.insert(skill.entry.uri.clone(), index);
            catalog.add_ancestors(&root);
            for (uri, mut file) in files {
                file.skill = index;
                catalog.add_file_dirs(&root, &file.relative);
                catalog.file_order.push(uri.clone());
                catalog.files.insert(uri, file);
            }
            catalog.skills.push(skill);
        }
        catalog
    }

    /// Keep `contents`, the served form of `file`'s bytes, for the next reads of it in this
    /// generation, when the bytes are exactly the listed ones (the caller checked their
    /// size and SHA-256 against the manifest: kept contents are the manifest's, whatever
    /// the file holds later) and the catalog's [`MAX_KEPT_BYTES`] has room for `file.size`
    /// more. A read of a kept file then touches neither the disk nor a hash, as rmcp's
    /// in-memory catalog; the engine's checks (the skill visible to the profile, the
    /// lock with `require_lock`) passed on the read that kept it and hold for the whole
    /// generation, the catalog's lifetime. With `require_lock` nothing is kept: each read
    /// is verified against the lock (by the file's stamp, or its hash), so a file changed
    /// since is refused rather than served from memory. Whether it was kept.
    pub(crate) fn keep(&self, file: &FileRef, contents: &ResourceContents) -> bool {
        if self.verified_reads {
            return false;
        }
        if file.kept.get().is_some() {
            return true;
        }
        let reserved = self
            .kept_bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(file.size)
                    .filter(|total| *total <= MAX_KEPT_BYTES)
            });
        if reserved.is_err() {
            return false;
        }
        if file.kept.set(contents.clone()).is_err() {
            // Another read kept it first: give the reservation back.
            self.kept_bytes.fetch_sub(file.size, Ordering::AcqRel);
        }
        true
    }

    /// Register the prefix directories above a skill root (`skill://a`, `skill://a/b`).
    fn add_ancestors(&mut self, root: &str) {
        let path = root.strip_prefix(SCHEME).unwrap_or(root);
        let mut current = String::from(SCHEME);
        for (i, seg) in path.split('/').enumerate() {
            let child = if i == 0 {
                format!("{SCHEME}{seg}")
            } else {
                format!("{current}/{seg}")
            };
            if i > 0 {
                self.dirs
                    .entry(current.clone())
                    .or_default()
                    .insert(child.clone(), Child::Dir);
            }
            self.dirs.entry(child.clone()).or_default();
            current = child;
        }
    }

    /// Register a file under its skill root and the folders between.
    fn add_file_dirs(&mut self, root: &str, relative: &str) {
        let mut parent = root.to_owned();
        let segments: Vec<&str> = relative.split('/').collect();
        for (i, seg) in segments.iter().enumerate() {
            let uri = format!("{parent}/{}", encode_segment(seg));
            let last = i + 1 == segments.len();
            self.dirs
                .entry(parent.clone())
                .or_default()
                .insert(uri.clone(), if last { Child::File } else { Child::Dir });
            if !last {
                self.dirs.entry(uri.clone()).or_default();
            }
            parent = uri;
        }
    }

    /// The served skill whose `SKILL.md` has this URI.
    pub(crate) fn skill(&self, uri: &str) -> Option<&Served> {
        self.by_uri.get(uri).map(|&i| &self.skills[i])
    }

    /// The file at this URI.
    pub(crate) fn file(&self, uri: &str) -> Option<&FileRef> {
        self.files.get(uri)
    }

    /// How many files the catalog serves.
    pub(crate) fn file_count(&self) -> usize {
        self.file_order.len()
    }

    /// Resource metadata of a file (`SKILL.md` carries the skill's name and description).
    pub(crate) fn resource(&self, uri: &str) -> Option<Resource> {
        let file = self.files.get(uri)?;
        let skill = &self.skills[file.skill];
        let resource = if file.relative == SKILL_FILE {
            // The frontmatter's name (SEP-2640), the last segment of the URI: without a
            // namespace the registry's name, with one the name after `namespace:`.
            Resource::new(uri, skill.entry.frontmatter.name.clone())
                .with_description(skill.description.clone())
        } else {
            let name = file.relative.rsplit('/').next().unwrap_or(&file.relative);
            Resource::new(uri, name.to_owned())
        };
        Some(resource.with_mime_type(file.mime).with_size(file.size))
    }

    /// File URIs in listing order, from `start`, at most `count`.
    pub(crate) fn file_uris(&self, start: usize, count: usize) -> &[String] {
        let end = start.saturating_add(count).min(self.file_order.len());
        self.file_order.get(start..end).unwrap_or(&[])
    }

    /// The direct children of a directory resource, or `None` when the URI is not one.
    pub(crate) fn directory(&self, uri: &str) -> Option<Vec<Resource>> {
        let children = self.dirs.get(uri)?;
        Some(
            children
                .iter()
                .filter_map(|(child, kind)| match kind {
                    Child::File => self.resource(child),
                    Child::Dir => {
                        let name = child.rsplit('/').next().unwrap_or(child);
                        Some(
                            Resource::new(child, name.to_owned())
                                .with_mime_type(DIRECTORY_MIME_TYPE),
                        )
                    }
                })
                .collect(),
        )
    }
}

/// One skill's entry and files, or why it cannot be served.
fn serve_one(
    engine: &Engine,
    profile: Option<&str>,
    summary: &SkillSummary,
) -> Result<(Served, Vec<(String, FileRef)>), String> {
    let folder = summary
        .folder
        .as_deref()
        .ok_or("not a folder skill (an actions file, a domain index or a note)")?;
    // A namespaced skill (`ns:name`) is served under `skill://ns/...`: the namespace is the
    // first segment of its skill path, and the last is its own name, as the frontmatter
    // says it (SEP-2640: the final segment equals the frontmatter's `name`).
    let (namespace, own_name) = match &summary.namespace {
        Some(ns) => match summary
            .name
            .strip_prefix(ns.as_str())
            .and_then(|rest| rest.strip_prefix(':'))
        {
            Some(own) => (Some(ns.as_str()), own),
            None => {
                return Err(format!(
                    "`{}` is not named in its source's namespace `{ns}`",
                    summary.name
                ));
            }
        },
        None => (None, summary.name.as_str()),
    };
    if !summary.kebab_name {
        return Err(format!(
            "`{own_name}` is not an Agent Skills name (a-z, 0-9 and single inner hyphens, at most {MAX_NAME_CHARS} characters)"
        ));
    }
    let listing = engine
        .skill_files(&summary.name, profile)
        .map_err(|e| e.to_string())?;
    if listing.files.len() > MAX_FILES_PER_SKILL {
        return Err(format!(
            "more than {MAX_FILES_PER_SKILL} files (the extension's per-skill limit)"
        ));
    }
    if listing.incomplete {
        return Err(format!(
            "the registry could not list or hash every file (over {MAX_FILES_PER_SKILL} files, or a file too large or unreadable)"
        ));
    }
    let total: u64 = listing.files.iter().map(|f| f.size).sum();
    if total > MAX_BYTES_PER_SKILL {
        return Err(format!(
            "over {MAX_BYTES_PER_SKILL} bytes (the extension's per-skill limit)"
        ));
    }
    let skill_path = match namespace {
        Some(ns) => format!("{}/{}", encode_segment(ns), skill_path(folder, own_name)),
        None => skill_path(folder, own_name),
    };
    let skill_uri = format!("{SCHEME}{skill_path}/{SKILL_FILE}");
    let mut files = Vec::with_capacity(listing.files.len());
    let mut manifest = Vec::with_capacity(listing.files.len());
    let mut frontmatter = None;
    for entry in &listing.files {
        let relative = &entry.path;
        let sha256 = entry
            .sha256
            .ok_or_else(|| format!("{relative}: the registry has no digest for it"))?;
        let mut mime = mime_type(relative, false);
        if relative == SKILL_FILE {
            // The engine gives the frontmatter as data, every field as written.
            frontmatter = Some(engine.skill_frontmatter(&summary.name, profile).map_err(
                |e| match e {
                    skill_runtime::Error::Frontmatter(_) => e.to_string(),
                    other => format!("{relative}: {other}"),
                },
            )?);
        } else if mime == UNKNOWN_MIME {
            // Only files whose extension does not say their type (text or not) are read
            // here; sizes and digests come from the registry's manifest.
            let bytes = engine
                .skill_file(&summary.name, profile, relative)
                .map_err(|e| format!("{relative}: {e}"))?;
            mime = mime_type(relative, std::str::from_utf8(&bytes).is_ok());
        }
        let uri = format!("{SCHEME}{skill_path}/{}", encode_path(relative));
        manifest.push(SkillResource::new(
            uri.clone(),
            digest_text(&sha256),
            entry.size,
        ));
        files.push((
            uri,
            FileRef {
                skill: 0,
                relative: relative.clone(),
                mime,
                size: entry.size,
                sha256,
                kept: OnceLock::new(),
            },
        ));
    }
    let mut fields = frontmatter.ok_or("no SKILL.md")?;
    let own = match fields.remove("name") {
        Some(serde_json::Value::String(n)) if n == own_name => n,
        Some(serde_json::Value::String(n)) => {
            return Err(format!(
                "frontmatter name `{n}` differs from the name it is served under"
            ));
        }
        _ => return Err("frontmatter has no `name` string".to_owned()),
    };
    let description = match fields.remove("description") {
        Some(serde_json::Value::String(d)) if !d.trim().is_empty() => d,
        _ => return Err("frontmatter has no `description` string".to_owned()),
    };
    if let Some(reason) = skill_runtime::frontmatter_refusal(&description, &fields) {
        return Err(reason);
    }
    let mut fm = SkillFrontmatter::new(own, description.clone());
    fm.extra = fields;
    let entry = Skill::new(skill_uri, fm, SkillResources::Files(manifest));
    Ok((
        Served {
            name: summary.name.clone(),
            description,
            entry,
        },
        files,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_percent_encoded_outside_the_unreserved_set() {
        assert_eq!(encode_segment("a-b_c.d~e"), "a-b_c.d~e");
        assert_eq!(encode_segment("my notes"), "my%20notes");
        assert_eq!(encode_segment("é"), "%C3%A9");
        assert_eq!(encode_path("refs/my notes.md"), "refs/my%20notes.md");
    }

    #[test]
    fn skill_paths_keep_the_parent_folders_and_end_in_the_name() {
        assert_eq!(
            skill_path("data/csv-cleanup", "csv-cleanup"),
            "data/csv-cleanup"
        );
        assert_eq!(skill_path("pdf", "pdf-forms"), "pdf-forms");
        assert_eq!(skill_path("", "solo"), "solo");
        assert_eq!(skill_path("a b/x", "x"), "a%20b/x");
    }

    fn file_of(size: u64) -> FileRef {
        FileRef {
            skill: 0,
            relative: "f".into(),
            mime: "text/plain",
            size,
            sha256: Sha256::of(b""),
            kept: OnceLock::new(),
        }
    }

    /// Contents are kept up to [`MAX_KEPT_BYTES`] in all, to the byte; a file kept twice
    /// counts once.
    #[test]
    fn kept_contents_stop_at_the_catalogs_byte_limit() {
        let catalog = Catalog::default();
        let contents = ResourceContents::text("x", "skill://a/SKILL.md");
        let first = file_of(MAX_KEPT_BYTES - 10);
        assert!(catalog.keep(&first, &contents));
        assert!(catalog.keep(&first, &contents), "already kept");
        assert_eq!(
            catalog.kept_bytes.load(Ordering::Acquire),
            MAX_KEPT_BYTES - 10
        );
        let over = file_of(11);
        assert!(!catalog.keep(&over, &contents));
        assert!(over.kept.get().is_none());
        let fits = file_of(10);
        assert!(catalog.keep(&fits, &contents));
        assert!(fits.kept.get().is_some());
        assert_eq!(catalog.kept_bytes.load(Ordering::Acquire), MAX_KEPT_BYTES);
        assert!(!catalog.keep(&file_of(1), &contents));
        // With require_lock, nothing is kept.
        let locked = Catalog {
            verified_reads: true,
            ..Catalog::default()
        };
        let small = file_of(1);
        assert!(!locked.keep(&small, &contents));
        assert!(small.kept.get().is_none());
    }

    #[test]
    fn digest_is_sha256_in_lowercase_hex() {
        assert_eq!(
            digest_text(&Sha256::of(b"")),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn mime_types_by_extension_and_content() {
        assert_eq!(mime_type("SKILL.md", true), "text/markdown");
        assert_eq!(mime_type("scripts/run.sh", true), "application/x-sh");
        assert_eq!(mime_type("LICENSE", true), "text/plain");
        assert_eq!(mime_type("blob", false), "application/octet-stream");
    }
}
