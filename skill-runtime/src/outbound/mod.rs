//! The one HTTP client for everything the engine sends: webhook deliveries and the
//! downloads of remote sources. HTTP/1.1 on hyper's client connection, over TCP for
//! `http://` and over rustls for `https://`.
//!
//! TLS uses rustls with the *ring* provider (the only one in the build), TLS 1.2 and 1.3,
//! and trusts the platform's roots (`rustls-native-certs`: the system store, or
//! `SSL_CERT_FILE`/`SSL_CERT_DIR` when set) plus every certificate of an operator's CA file
//! (PEM, [`Client::new`]'s `ca_file`). The trust store is built on first use and kept;
//! [`Client::check`] builds it at start so that an unreadable CA file is an error there.
//!
//! A request is bounded: one deadline for the whole exchange (connect, TLS, request,
//! answer, body) and a cap on the body read (`Limits`); a body over the cap is refused,
//! never truncated. Where the sender asks for it, the destination policy of
//! `destination` is applied to every address the host resolves to, and the connection
//! goes to an address that passed, never to the name again.

pub(crate) mod destination;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};

use destination::Destination;

/// The largest CA file read.
pub const MAX_CA_FILE_BYTES: u64 = 1024 * 1024;

/// The HTTP client of the engine (cheap to clone; clones share the trust store).
///
/// Two clients are equal when they trust the same CA file.
#[derive(Clone, Default)]
pub struct Client {
    ca_file: Option<PathBuf>,
    tls: Arc<OnceLock<Result<Arc<rustls::ClientConfig>, String>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("ca_file", &self.ca_file)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Client {
    fn eq(&self, other: &Self) -> bool {
        self.ca_file == other.ca_file
    }
}

impl Eq for Client {}

/// What bounds one request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The whole exchange, body included.
    pub(crate) deadline: Duration,
    /// The most body bytes read; a longer body is an error.
    pub(crate) max_body: u64,
    /// Apply the destination policy (refuse loopback, link-local and private addresses).
    pub(crate) public_only: bool,
}

/// An answer: its status and its whole body.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The body, at most [`Limits::max_body`] bytes.
    #[cfg_attr(not(feature = "hub"), allow(dead_code))]
    pub(crate) body: Bytes,
}

impl Client {
    /// A client trusting the platform's roots and, when given, every certificate in
    /// `ca_file` (PEM). Nothing is read until [`Client::check`] or the first `https`
    /// request.
    pub fn new(ca_file: Option<PathBuf>) -> Self {
        Client {
            ca_file,
            tls: Arc::default(),
        }
    }

    /// Build the trust store now: an error says why the CA file cannot be used (missing,
    /// over [`MAX_CA_FILE_BYTES`], no certificate in it, a certificate rustls refuses).
    pub fn check(&self) -> Result<(), String> {
        self.tls_config().map(|_| ())
    }

    fn tls_config(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        self.tls
            .get_or_init(|| build_tls(self.ca_file.as_deref()).map(Arc::new))
            .clone()
    }

    /// Send one request and read its whole answer within `limits`.
    pub(crate) async fn send(
        &self,
        request: http::request::Builder,
        url: &str,
        body: Bytes,
        limits: Limits,
    ) -> Result<Answer, String> {
        let dest = Destination::parse(url)?;
        let request = request
            .uri(dest.path.as_str())
            .header(http::header::HOST, dest.authority.as_str())
            .body(Full::new(body))
            .map_err(|e| e.to_string())?;
        let tls = if dest.tls {
            Some(self.tls_config()?)
        } else {
            None
        };
        let exchange = async {
            let tcp = connect(&dest, !limits.public_only).await?;
            match tls {
                None => exchange(TokioIo::new(tcp), request, limits.max_body).await,
                Some(config) => {
                    let name = server_name(&dest.host)?;
                    let stream = tokio_rustls::TlsConnector::from(config)
                        .connect(name, tcp)
                        .await
                        .map_err(|e| format!("TLS with {} failed: {e}", dest.host))?;
                    exchange(TokioIo::new(stream), request, limits.max_body).await
                }
            }
        };
        match tokio::time::timeout(limits.deadline, exchange).await {
            Ok(r) => r,
            Err(_) => Err(format!(
                "{url}: no whole answer within {} ms",
                limits.deadline.as_millis()
            )),
        }
    }
}

/// The name the server's certificate must carry: the host, or its address.
fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    match destination::literal_address(host) {
        Some(ip) => Ok(ServerName::IpAddress(ip.into())),
        None => ServerName::try_from(host.to_owned())
            .map_err(|e| format!("`{host}` is not a name a certificate can carry: {e}")),
    }
}

/// One request on a fresh connection; the status and the body, at most `max_body` bytes.
async fn exchange<T>(
    io: T,
    request: http::Request<Full<Bytes>>,
    max_body: u64,
) -> Result<Answer, String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let cap = usize::try_from(max_body).unwrap_or(usize::MAX);
    let body = Limited::new(response.into_body(), cap)
        .collect()
        .await
        .map_err(|e| {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                format!("the answer's body is over {max_body} bytes")
            } else {
                format!("the answer's body could not be read: {e}")
            }
        })?
        .to_bytes();
    Ok(Answer { status, body })
}

/// A connection to the first address of `dest` that answers (and that the destination
/// policy allows unless `allow_private`).
async fn connect(dest: &Destination, allow_private: bool) -> Result<tokio::net::TcpStream, String> {
    let mut last = String::new();
    for addr in destination::addresses(dest, allow_private).await? {
        match tokio::net::TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = format!("cannot connect to {} ({addr}): {e}", dest.host),
        }
    }
    Err(last)
}

/// The rustls configuration: *ring*, safe default versions, the platform's roots and the
/// CA file's certificates, HTTP/1.1 by ALPN.
fn build_tls(ca_file: Option<&Path>) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    // The platform's store may be missing or partly unreadable (a container without
    // ca-certificates): what loads is trusted, the rest is logged.
    let native = rustls_native_certs::load_native_certs();
    for e in &native.errors {
        tracing::debug!(error = %e, "a platform root certificate could not be loaded");
    }
    let (_, unusable) = roots.add_parsable_certificates(native.certs);
    if unusable > 0 {
        tracing::debug!(unusable, "platform root certificates rustls cannot use");
    }
    if let Some(path) = ca_file {
        for cert in read_ca_file(path)? {
            roots.add(cert).map_err(|e| {
                format!(
                    "ca_file {}: a certificate cannot be used: {e}",
                    path.display()
                )
            })?;
        }
    }
    let provider = Arc::new(ring_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// rustls' *ring* provider: the one crypto provider of the build (rustls 0.23.48 marks it
/// deprecated for lacking post-quantum key exchange, which only its aws-lc-rs provider has;
/// that one needs cmake and a second crypto library in the build).
#[allow(deprecated)]
pub(crate) fn ring_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// Every certificate of a PEM file, at least one.
fn read_ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CA_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("ca_file {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_CA_FILE_BYTES {
        return Err(format!(
            "ca_file {}: over {MAX_CA_FILE_BYTES} bytes",
            path.display()
        ));
    }
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("ca_file {}: not PEM certificates: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "ca_file {}: no `BEGIN CERTIFICATE` block in it",
            path.display()
        ));
    }
    Ok(certs)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
