//! The client against a loopback TLS server whose certificate is signed by a CA made here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use super::*;

/// A CA (its PEM) and a server certificate it signed for `localhost` and 127.0.0.1, with
/// the server's key.
fn ca_and_leaf() -> (String, CertificateDer<'static>, PrivateKeyDer<'static>) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let leaf =
        CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer).unwrap();
    (
        ca_cert.pem(),
        leaf_cert.der().clone(),
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
    )
}

/// A loopback HTTPS server answering every request with `body`.
async fn tls_server(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
    body: &'static [u8],
) -> SocketAddr {
    let provider = Arc::new(ring_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(move |_req| async move {
                    Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(body))))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    addr
}

fn limits(max_body: u64) -> Limits {
    Limits {
        deadline: Duration::from_secs(10),
        max_body,
        public_only: false,
    }
}

async fn get(client: &Client, url: &str, limits: Limits) -> Result<Answer, String> {
    client
        .send(http::Request::get("/"), url, Bytes::new(), limits)
        .await
}

#[tokio::test]
async fn https_is_trusted_through_the_ca_file_and_refused_without_it() {
    let (ca_pem, cert, key) = ca_and_leaf();
    let addr = tls_server(cert, key, b"hello over tls").await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, &ca_pem).unwrap();

    let trusting = Client::new(Some(ca_file));
    trusting.check().unwrap();
    for url in [
        format!("https://127.0.0.1:{}/x", addr.port()),
        format!("https://localhost:{}/x", addr.port()),
    ] {
        let answer = get(&trusting, &url, limits(1024)).await.unwrap();
        assert_eq!(answer.status, 200, "{url}");
        assert_eq!(&answer.body[..], b"hello over tls", "{url}");
    }

    let platform_only = Client::new(None);
    let url = format!("https://127.0.0.1:{}/x", addr.port());
    let e = get(&platform_only, &url, limits(1024)).await.unwrap_err();
    assert!(
        e.contains("TLS with 127.0.0.1 failed") && e.contains("certificate"),
        "{e}"
    );

    // Plain http to a TLS port is no way around it: the exchange fails.
    let plain = format!("http://127.0.0.1:{}/x", addr.port());
    assert!(get(&trusting, &plain, limits(1024)).await.is_err());
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused_at_its_edge() {
    let (ca_pem, cert, key) = ca_and_leaf();
    let addr = tls_server(cert, key, b"0123456789").await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, &ca_pem).unwrap();
    let client = Client::new(Some(ca_file));
    let url = format!("https://127.0.0.1:{}/", addr.port());
    assert_eq!(get(&client, &url, limits(10)).await.unwrap().body.len(), 10);
    let e = get(&client, &url, limits(9)).await.unwrap_err();
    assert!(e.contains("over 9 bytes"), "{e}");
}

#[tokio::test]
async fn a_server_that_never_answers_runs_into_the_deadline() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let held = tokio::spawn(async move { listener.accept().await });
    let quick = Limits {
        deadline: Duration::from_millis(200),
        ..limits(10)
    };
    let url = format!("http://127.0.0.1:{}/", addr.port());
    let e = get(&Client::new(None), &url, quick).await.unwrap_err();
    assert!(e.contains("no whole answer within 200 ms"), "{e}");
    held.abort();
}

#[tokio::test]
async fn the_destination_policy_applies_where_the_sender_asks_for_it() {
    let public = Limits {
        public_only: true,
        ..limits(10)
    };
    let e = get(&Client::new(None), "https://127.0.0.1:9/", public)
        .await
        .unwrap_err();
    assert!(e.contains("loopback"), "{e}");
}

#[test]
fn a_ca_file_must_hold_certificates_and_stay_under_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Client::new(Some(dir.path().join("nope.pem")));
    assert!(missing.check().unwrap_err().contains("nope.pem"));

    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let e = Client::new(Some(empty)).check().unwrap_err();
    assert!(e.contains("BEGIN CERTIFICATE"), "{e}");

    let (ca_pem, _, _) = ca_and_leaf();
    let at_cap = dir.path().join("at-cap.pem");
    let mut text = ca_pem.clone();
    text.push_str(&"#".repeat(usize::try_from(MAX_CA_FILE_BYTES).unwrap() - ca_pem.len()));
    std::fs::write(&at_cap, &text).unwrap();
    Client::new(Some(at_cap)).check().unwrap();
    let over = dir.path().join("over.pem");
    text.push('#');
    std::fs::write(&over, &text).unwrap();
    let e = Client::new(Some(over)).check().unwrap_err();
    assert!(
        e.contains(&format!("over {MAX_CA_FILE_BYTES} bytes")),
        "{e}"
    );
}
