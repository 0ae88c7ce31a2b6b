//! The hub against a loopback server that tells the truth, then lies in each way.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::channel::Channel;
use hyper_util::rt::TokioIo;

use super::*;
use crate::zip::stored_zip;

/// What the test server answers at one path.
#[derive(Clone)]
enum Reply {
    Bytes(Vec<u8>),
    /// Chunks without end.
    Endless,
    /// A few bytes, then nothing more (the connection held open).
    Stall,
}

type Routes = Arc<Mutex<HashMap<String, Reply>>>;

async fn server(routes: Routes) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let routes = routes.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: hyper::Request<_>| {
                    let reply = routes.lock().unwrap().get(req.uri().path()).cloned();
                    async move {
                        let (mut tx, body) = Channel::<Bytes, Infallible>::new(4);
                        let status = match reply {
                            None => 404,
                            Some(Reply::Bytes(b)) => {
                                tokio::spawn(async move { tx.send_data(Bytes::from(b)).await });
                                200
                            }
                            Some(Reply::Endless) => {
                                tokio::spawn(async move {
                                    let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
                                    while tx.send_data(chunk.clone()).await.is_ok() {}
                                });
                                200
                            }
                            Some(Reply::Stall) => {
                                tokio::spawn(async move {
                                    let _ = tx.send_data(Bytes::from_static(b"{")).await;
                                    std::future::pending::<()>().await;
                                    drop(tx);
                                });
                                200
                            }
                        };
                        let mut response = hyper::Response::new(body);
                        *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    format!("http://{addr}")
}

fn skill_md(name: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name}.\n").into_bytes()
}

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", Sha256::of(bytes).to_hex())
}

/// A remote with `plain` (a skill file) and `bundle` (an archive with a reference file);
/// the index at `/.well-known/agent-skills/index.json`.
fn good_remote() -> (Routes, Vec<u8>) {
    let plain = skill_md("plain");
    let archive = stored_zip(&[
        ("SKILL.md".to_owned(), skill_md("bundle")),
        ("references/guide.md".to_owned(), b"# Guide\n".to_vec()),
    ])
    .unwrap();
    let index = serde_json::json!({
        "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
        "skills": [
            {"name": "plain", "type": "skill-md", "description": "P.",
             "url": "/.well-known/agent-skills/plain/SKILL.md", "digest": digest(&plain)},
            {"name": "bundle", "type": "archive", "description": "B.",
             "url": "bundle/skill.zip", "digest": digest(&archive)},
        ]
    });
    let mut routes = HashMap::new();
    routes.insert(
        "/.well-known/agent-skills/index.json".to_owned(),
        Reply::Bytes(index.to_string().into_bytes()),
    );
    routes.insert(
        "/.well-known/agent-skills/plain/SKILL.md".to_owned(),
        Reply::Bytes(plain),
    );
    routes.insert(
        "/.well-known/agent-skills/bundle/skill.zip".to_owned(),
        Reply::Bytes(archive.clone()),
    );
    (Arc::new(Mutex::new(routes)), archive)
}

const INDEX: &str = "/.well-known/agent-skills/index.json";

#[tokio::test]
async fn a_truthful_remote_is_taken_in_whole_and_a_lying_one_changes_nothing() {
    let (routes, _) = good_remote();
    let base = server(routes.clone()).await;
    let url = format!("{base}{INDEX}");
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("remote");
    let client = Client::new(None);
    let opts = FetchOptions::default();

    let synced = sync(&client, &url, &folder, &opts).await.unwrap();
    assert_eq!(synced.skills, ["plain", "bundle"]);
    assert!(synced.changed);
    assert_eq!(
        std::fs::read(folder.join("bundle/references/guide.md")).unwrap(),
        b"# Guide\n"
    );
    assert_eq!(
        std::fs::read(folder.join("plain/SKILL.md")).unwrap(),
        skill_md("plain")
    );
    let again = sync(&client, &url, &folder, &opts).await.unwrap();
    assert!(!again.changed, "the same content is not swapped again");

    // The skill file changes but the index keeps the old digest: refused, cache kept.
    routes.lock().unwrap().insert(
        "/.well-known/agent-skills/plain/SKILL.md".to_owned(),
        Reply::Bytes(b"---\nname: plain\ndescription: Evil.\n---\n".to_vec()),
    );
    let e = sync(&client, &url, &folder, &opts).await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("skill `plain`") && text.contains("does not match its digest"),
        "{text}"
    );
    assert_eq!(e.code(), "remote_source");
    assert_eq!(
        std::fs::read(folder.join("plain/SKILL.md")).unwrap(),
        skill_md("plain"),
        "nothing partial"
    );
    assert!(!staging_path(&folder).exists());

    // Only the asked-for skill; a name the index does not list is an error.
    let only = FetchOptions {
        only: Some(vec!["bundle".to_owned()]),
        ..FetchOptions::default()
    };
    let fetched = fetch(&client, &url, &only).await.unwrap();
    assert_eq!(fetched.len(), 1);
    assert_eq!(fetched[0].files.len(), 2);
    let nosuch = FetchOptions {
        only: Some(vec!["nosuch".to_owned()]),
        ..FetchOptions::default()
    };
    let e = fetch(&client, &url, &nosuch).await.unwrap_err();
    assert!(e.to_string().contains("no skill `nosuch`"), "{e}");
}

/// One lie per case: the index served, the error's words.
#[tokio::test]
async fn each_lie_is_refused_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(None);
    let plain = skill_md("plain");
    let entry = |name: &str, kind: &str, url: &str, digest: &str| serde_json::json!({"skills": [{"name": name, "type": kind, "url": url, "digest": digest}]});
    let traversal = stored_zip(&[
        ("SKILL.md".to_owned(), plain.clone()),
        ("../../escape.md".to_owned(), b"x".to_vec()),
    ])
    .unwrap();
    let no_skill_file = stored_zip(&[("README.md".to_owned(), b"x".to_vec())]).unwrap();
    let over_cap = format!("over {MAX_ARTIFACT_BYTES} bytes");
    type Case<'a> = (serde_json::Value, Option<(&'a str, Reply)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            entry("../up", "skill-md", "/a", &digest(&plain)),
            None,
            "not a folder name",
        ),
        (
            entry("plain", "skill-md", "/a", "sha256:abc"),
            None,
            "64 hex digits",
        ),
        (
            entry(
                "plain",
                "skill-md",
                "http://elsewhere.example/a",
                &digest(&plain),
            ),
            None,
            "leaves the index's origin",
        ),
        (
            entry(
                "plain",
                "skill-md",
                "//elsewhere.example/a",
                &digest(&plain),
            ),
            None,
            "names another host",
        ),
        (
            entry("plain", "tarball", "/a", &digest(&plain)),
            Some(("/a", Reply::Bytes(plain.clone()))),
            "artifact type `tarball`",
        ),
        (
            entry("plain", "archive", "/a", &digest(&traversal)),
            Some(("/a", Reply::Bytes(traversal.clone()))),
            "leaves its folder",
        ),
        (
            entry("plain", "archive", "/a", &digest(&no_skill_file)),
            Some(("/a", Reply::Bytes(no_skill_file.clone()))),
            "no SKILL.md at its root",
        ),
        (
            entry("plain", "skill-md", "/a", &digest(&plain)),
            Some(("/a", Reply::Endless)),
            &over_cap,
        ),
        (
            entry("plain", "skill-md", "/missing", &digest(&plain)),
            None,
            "answered 404",
        ),
    ];
    for (index, artifact, words) in cases {
        let mut routes = HashMap::new();
        routes.insert(
            INDEX.to_owned(),
            Reply::Bytes(index.to_string().into_bytes()),
        );
        if let Some((path, reply)) = artifact {
            routes.insert(path.to_owned(), reply);
        }
        let base = server(Arc::new(Mutex::new(routes))).await;
        let folder = dir.path().join("cache");
        let e = sync(
            &client,
            &format!("{base}{INDEX}"),
            &folder,
            &FetchOptions::default(),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(e.contains(words), "{words}: {e}");
        assert!(!folder.exists(), "{words}: nothing written");
    }
}

#[tokio::test]
async fn an_index_that_never_ends_or_stalls_is_refused() {
    let client = Client::new(None);
    let mut routes = HashMap::new();
    routes.insert(INDEX.to_owned(), Reply::Endless);
    routes.insert("/stall.json".to_owned(), Reply::Stall);
    let base = server(Arc::new(Mutex::new(routes))).await;
    let e = fetch(&client, &format!("{base}{INDEX}"), &FetchOptions::default())
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("over {MAX_INDEX_BYTES} bytes")),
        "{e}"
    );
    let quick = FetchOptions {
        deadline: Some(Duration::from_millis(300)),
        ..FetchOptions::default()
    };
    let e = fetch(&client, &format!("{base}/stall.json"), &quick)
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("no whole answer within 300 ms"),
        "{e}"
    );
}

/// The artifact cap at its edge: exactly [`MAX_ARTIFACT_BYTES`] is taken, one more byte
/// is refused.
#[tokio::test]
async fn the_artifact_cap_holds_at_its_edge() {
    let client = Client::new(None);
    let head = skill_md("big");
    let mut at_cap = head.clone();
    at_cap.resize(usize::try_from(MAX_ARTIFACT_BYTES).unwrap(), b'a');
    let mut over = at_cap.clone();
    over.push(b'a');
    for (bytes, ok) in [(at_cap, true), (over, false)] {
        let index = serde_json::json!({"skills": [
            {"name": "big", "type": "skill-md", "url": "/big", "digest": digest(&bytes)}
        ]});
        let mut routes = HashMap::new();
        routes.insert(
            INDEX.to_owned(),
            Reply::Bytes(index.to_string().into_bytes()),
        );
        routes.insert("/big".to_owned(), Reply::Bytes(bytes));
        let base = server(Arc::new(Mutex::new(routes))).await;
        let got = fetch(&client, &format!("{base}{INDEX}"), &FetchOptions::default()).await;
        assert_eq!(got.is_ok(), ok, "{:?}", got.err());
    }
}

#[test]
fn paths_stay_inside_their_skill() {
    for ok in ["SKILL.md", "references/a.md", "a/b/c.txt", ".hidden"] {
        assert_eq!(safe_path(ok).unwrap(), ok);
    }
    for bad in [
        "",
        "/etc/passwd",
        "../x",
        "a/../../x",
        "a//b",
        "./a",
        "a/.",
        "a\\b",
        "C:x",
        "a\nb",
    ] {
        assert!(safe_path(bad).is_err(), "{bad:?}");
    }
    assert!(safe_path(&"a".repeat(MAX_PATH_BYTES)).is_ok());
    assert!(safe_path(&"a".repeat(MAX_PATH_BYTES + 1)).is_err());
}

#[test]
fn entry_urls_resolve_on_the_index_origin_only() {
    let index = "https://h.example:8443/.well-known/agent-skills/index.json";
    assert_eq!(
        resolve(index, "x/SKILL.md").unwrap(),
        "https://h.example:8443/.well-known/agent-skills/x/SKILL.md"
    );
    assert_eq!(resolve(index, "/y").unwrap(), "https://h.example:8443/y");
    assert_eq!(
        resolve(index, "https://h.example:8443/z").unwrap(),
        "https://h.example:8443/z"
    );
    for bad in [
        "https://h.example/z",
        "http://h.example:8443/z",
        "https://h.example:8443.evil/z",
        "//evil/z",
    ] {
        assert!(resolve(index, bad).is_err(), "{bad}");
    }
}

#[test]
fn archives_are_read_strictly() {
    let files = vec![
        ("SKILL.md".to_owned(), b"a".to_vec()),
        ("scripts/run.sh".to_owned(), b"echo\n".to_vec()),
    ];
    let zip = stored_zip(&files).unwrap();
    assert_eq!(unzip::read_zip(&zip).unwrap(), files);

    // A flipped data byte fails the CRC; a method other than stored or deflated is
    // refused; a cut archive is not readable.
    let mut bad = zip.clone();
    bad[30 + "SKILL.md".len()] ^= 1;
    assert!(unzip::read_zip(&bad).unwrap_err().contains("CRC-32"));
    let dir_at = zip.len() - 22;
    let central = u32::from_le_bytes(zip[dir_at + 16..dir_at + 20].try_into().unwrap()) as usize;
    let mut lzma = zip.clone();
    lzma[central + 10] = 14;
    assert!(unzip::read_zip(&lzma).unwrap_err().contains("method 14"));
    assert!(unzip::read_zip(&zip[..zip.len() - 1]).is_err());
    let twice = stored_zip(&[files[0].clone(), files[0].clone()]).unwrap();
    assert!(unzip::read_zip(&twice).unwrap_err().contains("twice"));

    // The entry cap at its edge.
    let many = |n: usize| {
        (0..n)
            .map(|i| (format!("f{i}"), Vec::new()))
            .collect::<Vec<_>>()
    };
    let at_cap = stored_zip(&many(MAX_ARCHIVE_FILES)).unwrap();
    assert_eq!(unzip::read_zip(&at_cap).unwrap().len(), MAX_ARCHIVE_FILES);
    let over = stored_zip(&many(MAX_ARCHIVE_FILES + 1)).unwrap();
    assert!(unzip::read_zip(&over).unwrap_err().contains("entries"));
}

/// A zip of `files`, each entry deflated (method 8) as other publishers' tools write them,
/// with the sizes and CRC-32 given per entry (`None`: the true ones), no data descriptors.
fn deflated_zip(files: &[(&str, Vec<u8>)], declared: &[Option<u32>]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (i, (name, data)) in files.iter().enumerate() {
        let packed = miniz_oxide::deflate::compress_to_vec(data, 6);
        let crc = crate::zip::crc32(data);
        let size = declared
            .get(i)
            .copied()
            .flatten()
            .unwrap_or(data.len() as u32);
        let offset = out.len() as u32;
        let header = |sig: u32, central: bool| {
            let mut h = Vec::new();
            h.extend_from_slice(&sig.to_le_bytes());
            if central {
                h.extend_from_slice(&20u16.to_le_bytes());
            }
            h.extend_from_slice(&20u16.to_le_bytes());
            h.extend_from_slice(&(1u16 << 11).to_le_bytes());
            h.extend_from_slice(&8u16.to_le_bytes());
            h.extend_from_slice(&[0; 4]);
            h.extend_from_slice(&crc.to_le_bytes());
            h.extend_from_slice(&(packed.len() as u32).to_le_bytes());
            h.extend_from_slice(&size.to_le_bytes());
            h.extend_from_slice(&(name.len() as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            if central {
                h.extend_from_slice(&[0; 6]);
                h.extend_from_slice(&[0; 4]);
                h.extend_from_slice(&offset.to_le_bytes());
            }
            h.extend_from_slice(name.as_bytes());
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend_from_slice(&packed);
        central.extend(header(0x0201_4b50, true));
    }
    let dir_at = out.len() as u32;
    let n = files.len() as u16;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&dir_at.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// An archive Python's `zipfile` wrote with `ZIP_DEFLATED` (testdata/python-deflated.zip:
/// a folder entry and three deflated files) reads to its files.
#[test]
fn a_deflated_archive_from_another_publisher_is_read() {
    let zip = include_bytes!("testdata/python-deflated.zip");
    let files = unzip::read_zip(zip).unwrap();
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        ["SKILL.md", "references/guide.md", "scripts/count.sh"]
    );
    assert!(files[0].1.starts_with(b"---\nname: pdf-notes\n"));
    assert_eq!(files[0].1.len(), 474);
    assert_eq!(files[1].1.len(), 809);
    assert_eq!(files[2].1, b"#!/bin/sh\nwc -l \"$1\"\n");
}

/// Deflated entries are checked as stored ones are (CRC-32, paths) and inflate to exactly
/// their declared size: one that inflates past it stops there (the bomb case), one that
/// falls short is refused, and another method is refused.
#[test]
fn deflated_entries_are_checked_and_bounded_by_their_declared_size() {
    let text = b"line of a skill\n".repeat(100);
    let ok = deflated_zip(&[("SKILL.md", text.clone())], &[]);
    assert_eq!(
        unzip::read_zip(&ok).unwrap(),
        [("SKILL.md".to_owned(), text.clone())]
    );

    let short = deflated_zip(&[("SKILL.md", text.clone())], &[Some(100)]);
    let e = unzip::read_zip(&short).unwrap_err();
    assert!(e.contains("inflates past the 100 bytes"), "{e}");
    let long = deflated_zip(&[("SKILL.md", text.clone())], &[Some(1601)]);
    let e = unzip::read_zip(&long).unwrap_err();
    assert!(
        e.contains("inflates to 1600 bytes where its size says 1601"),
        "{e}"
    );

    let mut bad_crc = ok.clone();
    let dir_at = bad_crc.len() - 22;
    let central =
        u32::from_le_bytes(bad_crc[dir_at + 16..dir_at + 20].try_into().unwrap()) as usize;
    bad_crc[central + 16] ^= 1;
    assert!(unzip::read_zip(&bad_crc).unwrap_err().contains("CRC-32"));
    let mut bzip2 = ok.clone();
    bzip2[central + 10] = 12;
    assert!(unzip::read_zip(&bzip2).unwrap_err().contains("method 12"));
    let escape = deflated_zip(&[("../SKILL.md", text)], &[]);
    assert!(unzip::read_zip(&escape).is_err());
}

/// The unpacked-size cap at its edge: entries declaring exactly [`MAX_UNPACKED_BYTES`]
/// together are read; one more byte is refused before anything is inflated.
#[test]
fn an_archive_unpacks_to_at_most_the_cap() {
    let half = (MAX_UNPACKED_BYTES / 2) as usize;
    let at_cap = deflated_zip(
        &[
            ("SKILL.md", vec![b'a'; half]),
            ("big.txt", vec![b'b'; half]),
        ],
        &[],
    );
    let files = unzip::read_zip(&at_cap).unwrap();
    let total: usize = files.iter().map(|(_, b)| b.len()).sum();
    assert_eq!(total as u64, MAX_UNPACKED_BYTES);
    let over = deflated_zip(
        &[
            ("SKILL.md", vec![b'a'; half]),
            ("big.txt", vec![b'b'; half + 1]),
        ],
        &[],
    );
    let e = unzip::read_zip(&over).unwrap_err();
    assert!(
        e.contains(&format!("over {MAX_UNPACKED_BYTES} bytes")),
        "{e}"
    );
}
