//! The page's files, embedded at build time, and the table that finds one by its path
//! under [`CONSOLE_PATH`](crate::CONSOLE_PATH).

/// One embedded file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asset {
    /// Its path below the console's prefix (`/` for the page itself).
    pub(crate) path: &'static str,
    /// Its `Content-Type`.
    pub(crate) content_type: &'static str,
    /// Its bytes.
    pub(crate) bytes: &'static [u8],
}

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// Every file the console serves. The page's scripts are listed in the order `index.html`
/// loads them.
const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: HTML,
        bytes: include_bytes!("../assets/index.html"),
    },
    Asset {
        path: "/console.css",
        content_type: CSS,
        bytes: include_bytes!("../assets/console.css"),
    },
    Asset {
        path: "/api.js",
        content_type: JS,
        bytes: include_bytes!("../assets/api.js"),
    },
    Asset {
        path: "/skills.js",
        content_type: JS,
        bytes: include_bytes!("../assets/skills.js"),
    },
    Asset {
        path: "/playground.js",
        content_type: JS,
        bytes: include_bytes!("../assets/playground.js"),
    },
    Asset {
        path: "/views.js",
        content_type: JS,
        bytes: include_bytes!("../assets/views.js"),
    },
    Asset {
        path: "/console.js",
        content_type: JS,
        bytes: include_bytes!("../assets/console.js"),
    },
];

/// The file at `path` (below the prefix; empty and `/` both name the page).
pub(crate) fn find(path: &str) -> Option<&'static Asset> {
    let path = if path.is_empty() { "/" } else { path };
    ASSETS.iter().find(|a| a.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_every_script_it_loads_are_embedded() {
        let page = find("").map(|a| std::str::from_utf8(a.bytes).unwrap_or(""));
        let page = page.unwrap_or_default();
        assert!(page.starts_with("<!doctype html>"));
        for asset in ASSETS.iter().filter(|a| a.path != "/") {
            let href = format!("/ui{}", asset.path);
            assert!(page.contains(&href), "index.html does not load {href}");
            assert!(!asset.bytes.is_empty());
        }
    }

    #[test]
    fn unknown_paths_find_nothing() {
        assert!(find("/nope.js").is_none());
        assert!(find("/console.css/").is_none());
        assert!(find("/").is_some());
    }

    #[test]
    fn no_asset_names_an_outside_origin() {
        for asset in ASSETS {
            // The SVG namespace is a name, never fetched.
            let text = std::str::from_utf8(asset.bytes)
                .unwrap_or("")
                .replace("http://www.w3.org/2000/svg", "");
            for scheme in ["http://", "https://", "//cdn", "ws://"] {
                assert!(
                    !text.contains(scheme),
                    "{} names {scheme}: the page may reach only its own server",
                    asset.path
                );
            }
        }
    }
}
