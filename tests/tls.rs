//! HTTPS over loopback, with certificates made by the test: HTTP/1.1 and
//! HTTP/2 chosen by ALPN, a certificate replaced while the server runs,
//! a stalled handshake cut at the header-read timeout, and errors that
//! name what is wrong.

mod common;

use std::{net::SocketAddr, path::PathBuf, sync::Arc};

use bytes::Bytes;
use http::{Request, StatusCode, Version};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use pronghorn::{Router, Tls};
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::{
    TlsConnector,
    client::TlsStream,
    rustls::{ClientConfig, RootCertStore},
};

/// A self-signed certificate for `localhost`, in PEM, and its DER.
struct Generated {
    certificate: String,
    key: String,
    der: CertificateDer<'static>,
}

fn generate() -> Generated {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    Generated {
        certificate: cert.pem(),
        key: signing_key.serialize_pem(),
        der: cert.der().clone(),
    }
}

/// A directory of this test's own, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("pronghorn-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn start(tls: Tls) -> SocketAddr {
    start_with(tls, 0).await
}

/// Serves `/hello` over `tls` on `workers` threads of the server's own.
async fn start_with(tls: Tls, workers: usize) -> SocketAddr {
    let router = Router::new().get("/hello", || "hello").compile().unwrap();
    common::serve_on_loopback(router, |server| server.tls(tls).workers(workers)).await
}

/// A TLS connection to `address` that trusts only `trusted`, offering
/// `protocol` by ALPN.
async fn connect(
    address: SocketAddr,
    trusted: &CertificateDer<'static>,
    protocol: &[u8],
) -> std::io::Result<TlsStream<TcpStream>> {
    let mut roots = RootCertStore::empty();
    roots.add(trusted.clone()).unwrap();
    let mut config = ClientConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![protocol.to_vec()];
    let stream = TcpStream::connect(address).await?;
    let name = ServerName::try_from("localhost").unwrap();
    TlsConnector::from(Arc::new(config))
        .connect(name, stream)
        .await
}

fn hello() -> Request<Empty<Bytes>> {
    Request::get("https://localhost/hello")
        .header(http::header::HOST, "localhost")
        .body(Empty::new())
        .unwrap()
}

/// Checks an answer to [`hello`], over `version`.
async fn assert_hello(response: http::Response<Incoming>, version: Version) {
    assert_eq!(
        (response.status(), response.version()),
        (StatusCode::OK, version)
    );
    assert_eq!(response.collect().await.unwrap().to_bytes(), "hello");
}

/// The certificate the server presented on `stream`.
fn presented(stream: &TlsStream<TcpStream>) -> CertificateDer<'static> {
    let (_, connection) = stream.get_ref();
    connection.peer_certificates().unwrap()[0]
        .clone()
        .into_owned()
}

#[tokio::test]
async fn https_speaks_http1_or_http2_as_the_client_chooses_by_alpn() {
    speaks_http1_or_http2_by_alpn(0).await;
}

#[tokio::test]
async fn https_on_workers_speaks_http1_or_http2_as_the_client_chooses() {
    speaks_http1_or_http2_by_alpn(2).await;
}

async fn speaks_http1_or_http2_by_alpn(workers: usize) {
    let generated = generate();
    let dir = TempDir::new(&format!("alpn-{workers}"));
    let (certificate, key) = (dir.0.join("cert.pem"), dir.0.join("key.pem"));
    std::fs::write(&certificate, &generated.certificate).unwrap();
    std::fs::write(&key, &generated.key).unwrap();
    let tls = Tls::from_pem_files(&certificate, &key).unwrap();
    let address = start_with(tls, workers).await;

    let stream = connect(address, &generated.der, b"http/1.1").await.unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    assert_hello(
        sender.send_request(hello()).await.unwrap(),
        Version::HTTP_11,
    )
    .await;

    let stream = connect(address, &generated.der, b"h2").await.unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    assert_hello(sender.send_request(hello()).await.unwrap(), Version::HTTP_2).await;
}

#[tokio::test]
async fn a_certificate_reloaded_while_serving_is_presented_to_new_connections() {
    let (first, second) = (generate(), generate());
    let tls = Tls::from_pem(first.certificate.as_bytes(), first.key.as_bytes()).unwrap();
    let address = start(tls.clone()).await;

    let before = connect(address, &first.der, b"http/1.1").await.unwrap();
    assert_eq!(presented(&before), first.der);
    let (mut open, connection) = hyper::client::conn::http1::handshake(TokioIo::new(before))
        .await
        .unwrap();
    tokio::spawn(connection);

    tls.reload_pem(second.certificate.as_bytes(), second.key.as_bytes())
        .unwrap();
    let after = connect(address, &second.der, b"http/1.1").await.unwrap();
    assert_eq!(presented(&after), second.der);
    assert!(
        connect(address, &first.der, b"http/1.1").await.is_err(),
        "the old certificate is no longer presented"
    );
    // A connection opened before the change goes on serving.
    let response = open.send_request(hello()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    // A reload that fails keeps the certificate served.
    let error = tls
        .reload_pem(first.certificate.as_bytes(), second.key.as_bytes())
        .unwrap_err();
    assert!(error.to_string().contains("is not the key"), "{error}");
    let still = connect(address, &second.der, b"http/1.1").await.unwrap();
    assert_eq!(presented(&still), second.der);
}

#[test]
fn bad_certificates_and_keys_are_errors_that_say_what_is_wrong() {
    let generated = generate();
    let missing = std::env::temp_dir().join("pronghorn-no-such-cert.pem");
    let error = Tls::from_pem_files(&missing, &missing).unwrap_err();
    assert!(
        error.to_string().contains("pronghorn-no-such-cert.pem"),
        "{error}"
    );
    let error = Tls::from_pem(b"not a certificate", generated.key.as_bytes()).unwrap_err();
    assert!(error.to_string().contains("no certificate"), "{error}");
    let error = Tls::from_pem(generated.certificate.as_bytes(), b"not a key").unwrap_err();
    assert!(error.to_string().contains("no private key"), "{error}");
    let other = generate();
    let error = Tls::from_pem(generated.certificate.as_bytes(), other.key.as_bytes()).unwrap_err();
    assert!(error.to_string().contains("is not the key"), "{error}");
}

/// A client that opens a connection and stalls in the TLS handshake — no
/// ClientHello, or half of one — is closed at the header-read timeout, as
/// one that says nothing over plain TCP.
#[tokio::test]
async fn a_client_stalled_in_the_tls_handshake_is_closed_at_the_header_read_timeout() {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let generated = generate();
    let tls = Tls::from_pem(generated.certificate.as_bytes(), generated.key.as_bytes()).unwrap();
    let router = Router::new().get("/hello", || "hello").compile().unwrap();
    let timeout = Duration::from_millis(300);
    let address = common::serve_on_loopback(router, |server| {
        server.tls(tls).header_read_timeout(timeout)
    })
    .await;

    // A TLS record header announcing a handshake message, and no more.
    for sent in [&[][..], &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01]] {
        let started = Instant::now();
        let mut stream = TcpStream::connect(address).await.unwrap();
        stream.write_all(sent).await.unwrap();
        let mut buffer = [0; 64];
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer))
            .await
            .expect("the server closes a stalled handshake");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
        assert!(
            started.elapsed() >= timeout,
            "closed after {:?}",
            started.elapsed()
        );
    }
    // The server still completes handshakes.
    let stream = connect(address, &generated.der, b"http/1.1").await.unwrap();
    assert_eq!(presented(&stream), generated.der);
}
