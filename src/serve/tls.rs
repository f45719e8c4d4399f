//! HTTPS (feature `tls`): rustls under the connection, with ALPN for HTTP/2
//! and HTTP/1.1, and a certificate that can be replaced while serving.

use std::{
    fmt,
    future::Future,
    io,
    path::Path,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
};

use arc_swap::ArcSwap;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_rustls::{
    Accept, TlsAcceptor,
    rustls::{
        ServerConfig,
        crypto::{CryptoProvider, ring},
        server::{ClientHello, ResolvesServerCert},
        sign::CertifiedKey,
    },
    server::TlsStream,
};

/// What [`Serve::tls`](crate::Serve::tls) serves HTTPS with: a certificate
/// chain and its private key, or a rustls `ServerConfig` of your own.
///
/// Clients are offered HTTP/2 and HTTP/1.1 (ALPN). A `Tls` built from PEM
/// can be given a new certificate while the server runs
/// ([`reload_pem`](Tls::reload_pem), [`reload_pem_files`](Tls::reload_pem_files)):
/// clone it before handing it to the server, and keep the clone. New
/// connections get the new certificate; connections already open keep
/// theirs.
///
/// The TLS handshake counts towards the header-read timeout: a client that
/// opens a connection and stalls in the handshake is closed like one that
/// stalls before its first request.
///
/// ```no_run
/// use pronghorn::{Router, Tls, serve};
///
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// let router = Router::new().get("/", || "hello").compile().unwrap();
/// let tls = Tls::from_pem_files("cert.pem", "key.pem")?;
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:443").await?;
/// let server = serve(listener, router).tls(tls.clone());
/// // Later, after the certificate was renewed on disk:
/// tls.reload_pem_files("cert.pem", "key.pem")?;
/// # server.await
/// # }
/// ```
#[derive(Clone)]
pub struct Tls {
    acceptor: TlsAcceptor,
    /// The certificate a PEM-built configuration serves; `None` for a
    /// configuration given whole.
    certificate: Option<Arc<Certificate>>,
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls")
            .field("reloadable", &self.certificate.is_some())
            .finish_non_exhaustive()
    }
}

/// The protocols offered to clients, preferred first.
const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

impl Tls {
    /// A certificate chain and a private key, read from PEM files: the
    /// chain's first certificate is the server's, the key its private key
    /// (PKCS#8, PKCS#1 or SEC1).
    ///
    /// Errors name the file and what is wrong with it: missing, no
    /// certificate or key in it, a key that does not match the
    /// certificate.
    pub fn from_pem_files(
        certificate: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> io::Result<Self> {
        let certified = certified_key_from_files(certificate.as_ref(), key.as_ref())?;
        Ok(Self::from_certified_key(certified))
    }

    /// A certificate chain and a private key, in PEM (see
    /// [`from_pem_files`](Tls::from_pem_files)).
    pub fn from_pem(certificate: &[u8], key: &[u8]) -> io::Result<Self> {
        let certified = certified_key(certificate, key, "the PEM given", "the PEM given")?;
        Ok(Self::from_certified_key(certified))
    }

    /// A rustls configuration of your own: client authentication, a
    /// certificate resolver of your own (which can swap certificates
    /// itself), other protocol versions. Its ALPN protocols, if it has
    /// none, are set to HTTP/2 and HTTP/1.1.
    pub fn from_config(mut config: ServerConfig) -> Self {
        if config.alpn_protocols.is_empty() {
            config.alpn_protocols = ALPN.iter().map(|protocol| protocol.to_vec()).collect();
        }
        Self {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            certificate: None,
        }
    }

    fn from_certified_key(certified: CertifiedKey) -> Self {
        let certificate = Arc::new(Certificate(ArcSwap::from_pointee(certified)));
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("ring's provider supports the default protocol versions")
            .with_no_client_auth()
            .with_cert_resolver(certificate.clone());
        config.alpn_protocols = ALPN.iter().map(|protocol| protocol.to_vec()).collect();
        Self {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            certificate: Some(certificate),
        }
    }

    /// Serves a new certificate chain and key, read from PEM files, to the
    /// connections opened from now on. On an error, the current
    /// certificate stays.
    pub fn reload_pem_files(
        &self,
        certificate: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> io::Result<()> {
        let target = self.reloadable()?;
        target.0.store(Arc::new(certified_key_from_files(
            certificate.as_ref(),
            key.as_ref(),
        )?));
        Ok(())
    }

    /// Serves a new certificate chain and key, in PEM, to the connections
    /// opened from now on. On an error, the current certificate stays.
    pub fn reload_pem(&self, certificate: &[u8], key: &[u8]) -> io::Result<()> {
        let target = self.reloadable()?;
        target.0.store(Arc::new(certified_key(
            certificate,
            key,
            "the PEM given",
            "the PEM given",
        )?));
        Ok(())
    }

    fn reloadable(&self) -> io::Result<&Certificate> {
        self.certificate.as_deref().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                "this Tls was made from a ServerConfig: give it a certificate resolver that reloads",
            )
        })
    }

    /// Starts the handshake on an accepted connection.
    pub(super) fn accept<Io: AsyncRead + AsyncWrite + Unpin>(&self, stream: Io) -> Transport<Io> {
        Transport::Handshake(Box::new(self.acceptor.accept(stream)))
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(ring::default_provider())
}

/// The certificate of a PEM-built configuration, swapped whole.
#[derive(Debug)]
struct Certificate(ArcSwap<CertifiedKey>);

impl ResolvesServerCert for Certificate {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.load_full())
    }
}

fn certified_key_from_files(certificate: &Path, key: &Path) -> io::Result<CertifiedKey> {
    let read = |path: &Path| {
        std::fs::read(path)
            .map_err(|error| io::Error::new(error.kind(), format!("{}: {error}", path.display())))
    };
    certified_key(
        &read(certificate)?,
        &read(key)?,
        &certificate.display().to_string(),
        &key.display().to_string(),
    )
}

/// A certificate chain and its key from PEM; errors name `certificate_from`
/// or `key_from`.
fn certified_key(
    certificate: &[u8],
    key: &[u8],
    certificate_from: &str,
    key_from: &str,
) -> io::Result<CertifiedKey> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let chain = CertificateDer::pem_slice_iter(certificate)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| invalid(format!("{certificate_from}: {error}")))?;
    if chain.is_empty() {
        return Err(invalid(format!("{certificate_from}: no certificate in it")));
    }
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|error| invalid(format!("{key_from}: no private key in it ({error})")))?;
    CertifiedKey::from_der(chain, key, &provider()).map_err(|error| {
        invalid(format!(
            "{key_from} is not the key of the certificate in {certificate_from}: {error}"
        ))
    })
}

/// An accepted connection: plain TCP, or TLS once its handshake is done.
/// The handshake runs in the connection's first reads and writes, under
/// the connection's watchdog.
pub(crate) enum Transport<Io> {
    Plain(Io),
    Handshake(Box<Accept<Io>>),
    Tls(Box<TlsStream<Io>>),
}

impl<Io> fmt::Debug for Transport<Io> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Plain(_) => "Transport::Plain",
            Self::Handshake(_) => "Transport::Handshake",
            Self::Tls(_) => "Transport::Tls",
        })
    }
}

impl<Io> From<Io> for Transport<Io> {
    fn from(stream: Io) -> Self {
        Self::Plain(stream)
    }
}

impl<Io: AsyncRead + AsyncWrite + Unpin> Transport<Io> {
    /// Completes the handshake, if one is under way.
    fn poll_handshake(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Self::Handshake(accept) = self {
            let stream = ready!(Pin::new(&mut **accept).poll(cx))?;
            *self = Self::Tls(Box::new(stream));
        }
        Poll::Ready(Ok(()))
    }
}

/// Forwards an I/O call to the stream, once the handshake is done.
macro_rules! forward {
    ($self:ident, $cx:ident, $method:ident($($arg:expr),*)) => {{
        let this = &mut *$self;
        ready!(this.poll_handshake($cx))?;
        match this {
            Transport::Plain(stream) => Pin::new(stream).$method($cx, $($arg),*),
            Transport::Tls(stream) => Pin::new(&mut **stream).$method($cx, $($arg),*),
            Transport::Handshake(_) => unreachable!("the handshake is done"),
        }
    }};
}

impl<Io: AsyncRead + AsyncWrite + Unpin> AsyncRead for Transport<Io> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        forward!(self, cx, poll_read(buf))
    }
}

impl<Io: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Transport<Io> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        forward!(self, cx, poll_write(data))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        slices: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        forward!(self, cx, poll_write_vectored(slices))
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Plain(stream) => stream.is_write_vectored(),
            Self::Tls(stream) => stream.is_write_vectored(),
            Self::Handshake(_) => false,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        forward!(self, cx, poll_flush())
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        forward!(self, cx, poll_shutdown())
    }
}
