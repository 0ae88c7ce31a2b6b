//! The endpoint table: one list drives dispatch, the token check and the OpenAPI
//! document; path templates and percent-decoding.

use std::collections::HashMap;

use http::Method;

use skill_runtime::wire::{self, Operation, Request};

/// What an endpoint does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Health,
    Ready,
    Skills,
    Skill,
    Resources,
    Resource,
    GetSkill,
    Outline,
    Section,
    Catalog,
    Search,
    Select,
    NotesSearch,
    Diagnostics,
    Profiles,
    Schedules,
    Extract,
    Route,
    Execute,
    Invoke,
    Workflows,
    Tasks,
    Task,
    Reload,
    Events,
    OpenApi,
    DiscoveryIndex,
    DiscoverySkill,
    DiscoveryArchive,
}

/// One endpoint: method, path template (`{name}` matches one segment; a trailing `{path}`
/// matches the rest), whether it is an action (token required), and its documentation.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub method: Method,
    pub path: &'static str,
    pub op: Op,
    pub action: bool,
    pub summary: &'static str,
    /// The operation whose input the request carries, and where.
    pub input: Input,
}

/// Where an endpoint's input comes from: its wire [`Operation`] read from the query
/// string or from a JSON body.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Input {
    /// No input but the path's parameters.
    None,
    /// The operation's fields as query parameters.
    Query(&'static Operation),
    /// The operation's fields as a JSON object body.
    Body(&'static Operation),
}

pub(crate) use skill_runtime::wire::MAX_COUNT;

/// Every endpoint. A `GET` endpoint answers `HEAD` too (see `request::find`); the two
/// `HEAD` rows answer as their `GET` rows would, and are there so that the OpenAPI document
/// lists the discovery endpoints' `HEAD`.
pub(crate) const ENDPOINTS: &[Endpoint] = &[
    Endpoint {
        method: Method::GET,
        path: "/v1/health",
        op: Op::Health,
        action: false,
        summary: "Liveness: the server answers, with the snapshot generation and skill count.",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/ready",
        op: Op::Ready,
        action: false,
        summary: "Readiness: 200 once skills are loaded and indexed, 503 otherwise. With a database shared by replicas that does not answer (or answers with an error), still 200, with the reason under `degraded` (only scheduled-fire claims, forked tasks and notes search need it).",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills",
        op: Op::Skills,
        action: false,
        summary: "Skills, by name, with filters.",
        input: Input::Query(wire::ListSkillsRequest::OPERATION),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills/{name}",
        op: Op::Skill,
        action: false,
        summary: "One skill: metadata, body and diagnostics.",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills/{name}/resources",
        op: Op::Resources,
        action: false,
        summary: "A skill's files: relative path, size and kind.",
        input: Input::Query(wire::DisclosureRequest::OPERATION),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills/{name}/resources/{path}",
        op: Op::Resource,
        action: false,
        summary: "One resource's bytes, confined to the skill folder and size-capped.",
        input: Input::Query(wire::DisclosureRequest::OPERATION),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills/{name}/outline",
        op: Op::Outline,
        action: false,
        summary: "A skill's outline: its sections (at most 1,000; `total_sections` and `truncated` say when the body has more) with heading path, level, slug, characters and estimated tokens.",
        input: Input::Query(wire::DisclosureRequest::OPERATION),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/skills/{name}/sections/{slug}",
        op: Op::Section,
        action: false,
        summary: "One section of a skill by slug, with its subsections; an unknown slug is 404 `unknown_section` naming the valid ones.",
        input: Input::Query(wire::DisclosureRequest::OPERATION),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/get_skill",
        op: Op::GetSkill,
        action: false,
        summary: "The get_skill tiers (markdown-first 3.3 and 6).",
        input: Input::Query(wire::GetSkillRequest::OPERATION),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/catalog",
        op: Op::Catalog,
        action: false,
        summary: "The catalog for the system prompt, fitted to a budget, with its report.",
        input: Input::Query(wire::CatalogRequest::OPERATION),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/search",
        op: Op::Search,
        action: false,
        summary: "Ranked, explained skills for a query.",
        input: Input::Query(wire::SearchRequest::OPERATION),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/select",
        op: Op::Select,
        action: false,
        summary: "Skill selection for a request (agent-skills-integration 2.3) with the disclosure tier.",
        input: Input::Body(wire::SelectRequest::OPERATION),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/notes/search",
        op: Op::NotesSearch,
        action: false,
        summary: "Ranked markdown notes with highlighted snippets (when a notes folder is configured).",
        input: Input::Query(wire::NotesSearchRequest::OPERATION),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/diagnostics",
        op: Op::Diagnostics,
        action: false,
        summary: "Every diagnostic of the current snapshot, with counts.",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/profiles",
        op: Op::Profiles,
        action: false,
        summary: "Every processing profile the engine knows (configured, or named by a skill's affinity lists), with how many skills are proactive for or excluded under each.",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/schedules",
        op: Op::Schedules,
        action: false,
        summary: "Scheduled skills with their next fire times.",
        input: Input::Query(wire::SchedulesRequest::OPERATION),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/extract",
        op: Op::Extract,
        action: true,
        summary: "Split model output into cmd-block commands and conversational text.",
        input: Input::Body(wire::ExtractRequest::OPERATION),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/route",
        op: Op::Route,
        action: true,
        summary: "Route one line (from the model or a user), or a whole model output.",
        input: Input::Body(wire::RouteRequest::OPERATION),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/execute",
        op: Op::Execute,
        action: true,
        summary: "Execute a whole model output (its cmd-block commands, in order: at most 100, with at most 8 MiB of output in all; one last result, `too_many_commands` or `output_limit`, names the first command not executed) or one command line (its output cut at 8 MiB, with a marker).",
        input: Input::Body(wire::ExecuteRequest::OPERATION),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/invoke",
        op: Op::Invoke,
        action: true,
        summary: "Execute a user's slash command (`/skill name args`, `/command args`, `/name args`).",
        input: Input::Body(wire::InvokeRequest::OPERATION),
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/workflows",
        op: Op::Workflows,
        action: true,
        summary: "Create a workflow with workflow.build (markdown-first 9).",
        input: Input::Body(&wire::BUILD_WORKFLOW),
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/tasks",
        op: Op::Tasks,
        action: false,
        summary: "Forked tasks (context: fork) with their status and outcome, each outcome without `output` (GET /v1/tasks/{id} has it). Finished tasks are kept up to 1000, and up to 64 MiB of outputs together (the oldest go first).",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/tasks/{id}",
        op: Op::Task,
        action: false,
        summary: "One forked task, with its outcome's output (cut at 1 MiB, with a marker).",
        input: Input::None,
    },
    Endpoint {
        method: Method::POST,
        path: "/v1/reload",
        op: Op::Reload,
        action: true,
        summary: "Reload every source now; returns the change set.",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/events",
        op: Op::Events,
        action: false,
        summary: "Server-sent events. `change`: a registry change set (the ChangeEvent schema; the SSE id is the new generation). `scheduled`: a scheduled run finished (the ScheduledEvent schema); when `outcome.requires_interpretation` is true (a template, a workflow of instructions) the host gives `outcome.output` to its model. `lagged`: `{\"missed\": n}` events this reader lost. Comment lines keep the connection alive. At most `max_event_streams` streams are open at once (503 `overloaded` beyond); streams end when the server shuts down.",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/v1/openapi.json",
        op: Op::OpenApi,
        action: false,
        summary: "This API's OpenAPI 3.0 document.",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/.well-known/agent-skills/index.json",
        op: Op::DiscoveryIndex,
        action: false,
        summary: "The Agent Skills discovery index (schema discovery/0.2.0): the model-visible skills of the server's profile, each with its artifact's URL (SKILL.md, or a zip of a folder of several files) and sha256 digest.",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/.well-known/agent-skills/{name}/SKILL.md",
        op: Op::DiscoverySkill,
        action: false,
        summary: "One skill file the discovery index lists (text/markdown); 404 for any other name.",
        input: Input::None,
    },
    Endpoint {
        method: Method::GET,
        path: "/.well-known/agent-skills/{name}/skill.zip",
        op: Op::DiscoveryArchive,
        action: false,
        summary: "The zip of a skill folder the discovery index lists as an archive (application/zip, SKILL.md at its root); 404 for any other name.",
        input: Input::None,
    },
    Endpoint {
        method: Method::HEAD,
        path: "/.well-known/agent-skills/index.json",
        op: Op::DiscoveryIndex,
        action: false,
        summary: "The Agent Skills discovery index (schema discovery/0.2.0): the model-visible skills of the server's profile, each with its artifact's URL (SKILL.md, or a zip of a folder of several files) and sha256 digest.",
        input: Input::None,
    },
    Endpoint {
        method: Method::HEAD,
        path: "/.well-known/agent-skills/{name}/SKILL.md",
        op: Op::DiscoverySkill,
        action: false,
        summary: "One skill file the discovery index lists (text/markdown); 404 for any other name.",
        input: Input::None,
    },
    Endpoint {
        method: Method::HEAD,
        path: "/.well-known/agent-skills/{name}/skill.zip",
        op: Op::DiscoveryArchive,
        action: false,
        summary: "The zip of a skill folder the discovery index lists as an archive (application/zip, SKILL.md at its root); 404 for any other name.",
        input: Input::None,
    },
];

/// Match a path against a template; returns the captured parameters.
pub(crate) fn matches(template: &str, path: &str) -> Option<HashMap<&'static str, String>> {
    let (template, path) = (template.trim_matches('/'), path.trim_matches('/'));
    // Every endpoint is tried in turn: a path that does not start with the template's
    // literal part (up to its first parameter) is passed over without splitting either.
    let literal = template.split_once('{').map_or(template, |(head, _)| head);
    if !path.starts_with(literal) {
        return None;
    }
    let mut params = HashMap::new();
    let mut t = template.split('/').peekable();
    let mut p = path.split('/');
    while let Some(seg) = t.next() {
        if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            let name: &'static str = match name {
                "name" => "name",
                "path" => "path",
                "id" => "id",
                "slug" => "slug",
                _ => return None,
            };
            let value = if t.peek().is_none() && name == "path" {
                let rest: Vec<&str> = p.by_ref().collect();
                if rest.is_empty() {
                    return None;
                }
                rest.join("/")
            } else {
                p.next()?.to_owned()
            };
            let value = percent_decode(&value)?;
            if value.is_empty() {
                return None;
            }
            params.insert(name, value);
        } else if p.next()? != seg {
            return None;
        }
    }
    p.next().is_none().then_some(params)
}

/// Decode `%XX` escapes (and, in queries, `+`); `None` when the result is not UTF-8.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// The documented bounds of counts are the ones the engine uses, and the ranges the
    /// requests are checked against.
    #[test]
    fn count_descriptions_name_the_ranges() {
        let find = |path: &str| ENDPOINTS.iter().find(|e| e.path == path).unwrap();
        let field = |path: &str, name: &str| {
            let (Input::Body(op) | Input::Query(op)) = find(path).input else {
                panic!("{path} has no input");
            };
            *op.fields.iter().find(|f| f.name == name).unwrap()
        };
        let max = field("/v1/select", "max_skills");
        assert!(max.description.contains(&format!(
            "default {}",
            skill_runtime::search::DEFAULT_MAX_SKILLS
        )));
        for (path, name, cap) in [
            (
                "/v1/select",
                "max_skills",
                skill_runtime::search::MAX_MAX_SKILLS,
            ),
            ("/v1/search", "limit", skill_runtime::search::MAX_LIMIT),
            (
                "/v1/notes/search",
                "limit",
                skill_runtime::search::MAX_NOTE_RESULTS,
            ),
        ] {
            let f = field(path, name);
            assert_eq!(
                f.kind,
                wire::FieldKind::Count {
                    min: 1,
                    max: cap as u64
                },
                "{path}"
            );
            let shown = format!("1 to {cap}");
            assert!(f.description.contains(&shown), "{path}: {}", f.description);
        }
    }

    #[test]
    fn path_templates() {
        let m = matches("/v1/skills/{name}", "/v1/skills/pdf-forms").unwrap();
        assert_eq!(m["name"], "pdf-forms");
        assert!(matches("/v1/skills/{name}", "/v1/skills").is_none());
        assert!(matches("/v1/skills/{name}", "/v1/skills/a/b").is_none());
        let m = matches(
            "/v1/skills/{name}/resources/{path}",
            "/v1/skills/x/resources/a/b.md",
        )
        .unwrap();
        assert_eq!(m["path"], "a/b.md");
        let m = matches(
            "/v1/skills/{name}/resources/{path}",
            "/v1/skills/x/resources/a%2Fb%20c.md",
        )
        .unwrap();
        assert_eq!(m["path"], "a/b c.md");
        assert!(matches("/v1/skills/{name}", "/v1/skills/%ff").is_none());
        assert!(matches("/v1/health", "/v1/health/").is_some());
        assert!(matches("/v1/health", "//v1/health").is_some());
        assert!(matches("/v1/health", "/v1/healthz").is_none());
        assert!(matches("/v1/health", "/v1").is_none());
        assert!(matches("/v1/skills/{name}", "/v1/skillsX/a").is_none());
        assert!(matches("/v1/skills/{name}", "/v1/skills//a").is_none());
    }

    /// Every endpoint's own path, its parameters filled in, matches its template, and no
    /// other template with a different literal part.
    #[test]
    fn every_template_matches_its_own_paths() {
        for e in ENDPOINTS {
            let path = e
                .path
                .replace("{name}", "a-skill")
                .replace("{path}", "dir/file.md")
                .replace("{id}", "7")
                .replace("{slug}", "intro");
            assert!(matches(e.path, &path).is_some(), "{}", e.path);
            assert!(matches(e.path, &format!("{path}/")).is_some(), "{}", e.path);
            for other in ENDPOINTS {
                if matches(other.path, &path).is_some() && other.path != e.path {
                    let literal = |t: &str| t.split('{').next().unwrap_or(t).to_owned();
                    assert!(
                        path.starts_with(&literal(other.path)),
                        "{} matched {}",
                        other.path,
                        path
                    );
                }
            }
        }
    }

    #[test]
    fn percent_decoding_edges() {
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent_decode("%").as_deref(), Some("%"));
        assert_eq!(percent_decode("%4").as_deref(), Some("%4"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%00").as_deref(), Some("\0"));
    }

    #[test]
    fn every_endpoint_is_unique() {
        let mut seen = std::collections::HashSet::new();
        for e in ENDPOINTS {
            assert!(
                seen.insert((e.method.clone(), e.path)),
                "{} {}",
                e.method,
                e.path
            );
            assert_eq!(
                e.action,
                e.method == Method::POST && e.op != Op::Select,
                "{}",
                e.path
            );
        }
    }
}
