//! `--skills [NS=]DIR` and `--include-hidden`: the skills folders every command over
//! layered sources takes, as registry sources.
//!
//! `--skills DIR` is a folder; `--skills NS=DIR` gives its skills the namespace `NS`, so
//! each is served as `NS:name` (two packs' skills of one name then both load). A value is
//! read as `NS=DIR` when the text before its first `=` holds no path separator; that text
//! must then be a namespace (1 to 64 of `a-z`, `0-9` and inner `-`), or the value is a
//! usage error. A folder whose name holds `=` is written with a separator: `./a=b`.

use std::path::PathBuf;
use std::str::FromStr;

use clap::Args;
use skill_runtime::registry::{Namespace, RegistryConfig, Source, Trust};

/// A source for a folder named on the command line, in layer `layer`. Its trust is medium,
/// like the `user` layer's: the operator chose the folder by name (a config file's sources
/// follow their layer name or their `trust` key instead).
pub(crate) fn command_line_source(path: PathBuf, layer: String) -> Source {
    let mut source = Source::new(path, layer);
    source.trust = Trust::Medium;
    source
}

/// One `--skills` value: a folder, with the namespace its skills are served in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SkillsDir {
    /// `NS` of `NS=DIR`, if given.
    pub namespace: Option<Namespace>,
    /// The folder (or a single skill file).
    pub path: PathBuf,
}

impl FromStr for SkillsDir {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let Some((ns, path)) = text
            .split_once('=')
            .filter(|(ns, _)| !ns.contains(['/', std::path::MAIN_SEPARATOR]))
        else {
            return Ok(SkillsDir {
                namespace: None,
                path: PathBuf::from(text),
            });
        };
        let namespace = Namespace::new(ns).map_err(|e| {
            format!("{e}; to name a folder whose name holds `=`, write it with a path separator, as ./{text}")
        })?;
        if path.is_empty() {
            return Err(format!("no folder after `{ns}=`: write --skills {ns}=DIR"));
        }
        Ok(SkillsDir {
            namespace: Some(namespace),
            path: PathBuf::from(path),
        })
    }
}

/// `--skills` and `--include-hidden`, flattened into every command over skills folders
/// (a command that needs a folder marks `skills` required with `mut_arg`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SkillDirs {
    /// A skills folder; repeat for layers, lowest precedence first. `NS=DIR` serves the
    /// folder's skills as `NS:name` (a namespace: a-z, 0-9 and inner `-`, at most 64), so
    /// same-named skills of two folders both load.
    #[arg(long = "skills", id = "skills", value_name = "[NS=]DIR")]
    pub dirs: Vec<SkillsDir>,
    /// Also load skills in the folders' hidden folders (`.curated`, `.system`, ...);
    /// `.git` and `node_modules` are never read.
    #[arg(long)]
    pub include_hidden: bool,
}

impl SkillDirs {
    /// Whether no folder was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    /// The folders' paths, in order.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.path.clone()).collect()
    }

    /// The folders as sources, layers named by `layer_of` (their index and path), each
    /// with its namespace and the `--include-hidden` choice.
    pub(crate) fn sources(&self, layer_of: impl Fn(usize, &PathBuf) -> String) -> Vec<Source> {
        self.dirs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let mut source = command_line_source(d.path.clone(), layer_of(i, &d.path));
                source.namespace = d.namespace.clone();
                source.include_hidden = self.include_hidden;
                source
            })
            .collect()
    }

    /// A registry configuration over the folders as layers `layer1..N`.
    pub(crate) fn config(&self) -> RegistryConfig {
        RegistryConfig::with_sources(self.sources(|i, _| format!("layer{}", i + 1)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<(Option<String>, PathBuf), String> {
        text.parse::<SkillsDir>()
            .map(|d| (d.namespace.map(|n| n.to_string()), d.path))
    }

    #[test]
    fn values_are_folders_or_namespaced_folders() {
        assert_eq!(parsed("skills").unwrap(), (None, "skills".into()));
        assert_eq!(
            parsed("a=skills/x").unwrap(),
            (Some("a".into()), "skills/x".into())
        );
        // Only the first `=` separates; the rest is the folder's.
        assert_eq!(parsed("a=b=c").unwrap(), (Some("a".into()), "b=c".into()));
        // A separator before the `=`: a folder whose name holds `=`.
        assert_eq!(parsed("./a=b").unwrap(), (None, "./a=b".into()));
        assert_eq!(parsed("/x/a=b").unwrap(), (None, "/x/a=b".into()));
        let long = "a".repeat(skill_runtime::registry::MAX_NAMESPACE_CHARS);
        assert_eq!(
            parsed(&format!("{long}=d")).unwrap().0.as_deref(),
            Some(long.as_str())
        );
    }

    /// A bad namespace is a usage error naming it and saying how to write a folder whose
    /// name holds `=`; so is a namespace with no folder.
    #[test]
    fn bad_namespaces_are_refused() {
        let long = "a".repeat(skill_runtime::registry::MAX_NAMESPACE_CHARS + 1);
        for bad in ["A=d", "a:b=d", "=d", "-a=d", &format!("{long}=d"), "a b=d"] {
            let e = parsed(bad).unwrap_err();
            assert!(e.contains("namespace"), "{bad}: {e}");
            assert!(e.contains(&format!("./{bad}")), "{bad}: {e}");
        }
        let e = parsed("a=").unwrap_err();
        assert!(e.contains("no folder after `a=`"), "{e}");
    }
}
