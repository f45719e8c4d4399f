//! What the connection refuses before its service sees a request: a
//! `Host`, a target or a transfer coding that HTTP/1 does not allow, an
//! HTTP/2 request that RFC 9113 makes malformed.

use http::{Method, Request, StatusCode, Version};

/// What `call` reads of a request's headers: its `Host` lines, whether it
/// asks for an upgrade and whether it names a transfer coding.
pub(super) struct HeadFields<'a> {
    /// The first `Host` line.
    host: Option<&'a http::HeaderValue>,
    /// More than one `Host` line.
    hosts: bool,
    pub(super) upgrade: bool,
    /// A `Transfer-Encoding` line.
    coding: bool,
}

/// What the connection makes of a request's head before its service does.
pub(super) enum Admission {
    Sound,
    /// Answered with this status, and the connection closed.
    Refused(StatusCode),
    /// An HTTP/2 stream reset with PROTOCOL_ERROR.
    Malformed,
}

/// Up to this many header names, [`HeadFields::read`] looks through the names
/// rather than look each up: one pass costs less than the hash of a name.
const SCANNED_NAMES: usize = 8;

impl<'a> HeadFields<'a> {
    pub(super) fn read<B>(request: &'a Request<B>) -> Self {
        let headers = request.headers();
        if headers.keys_len() > SCANNED_NAMES {
            let mut hosts = headers.get_all(http::header::HOST).iter();
            return Self {
                host: hosts.next(),
                hosts: hosts.next().is_some(),
                upgrade: headers.contains_key(http::header::UPGRADE),
                coding: headers.contains_key(http::header::TRANSFER_ENCODING),
            };
        }
        let mut head = Self {
            host: None,
            hosts: false,
            upgrade: false,
            coding: false,
        };
        for (name, value) in headers {
            if name == http::header::HOST {
                head.hosts |= head.host.is_some();
                head.host.get_or_insert(value);
            } else if name == http::header::UPGRADE {
                head.upgrade = true;
            } else if name == http::header::TRANSFER_ENCODING {
                head.coding = true;
            }
        }
        head
    }

    /// Whether the request goes to the service, or is refused here:
    ///
    /// - a `Host` that is not as RFC 9112 (3.2) requires is 400;
    /// - over HTTP/1, a target in the authority form outside CONNECT, or
    ///   `*` outside OPTIONS, is 400 (3.2.3, 3.2.4);
    /// - over HTTP/1, a transfer coding other than `chunked` is 501 (hyper
    ///   reads the body as chunked whatever came before it, and nothing
    ///   here decodes the others), and `chunked` twice is 400 (6.1);
    /// - over HTTP/2, what [`is_malformed_http2`] finds resets the stream.
    ///
    /// `known` is a `Host` this connection found sound before: the same
    /// bytes again are not looked through a second time.
    pub(super) fn admission<B>(&self, request: &Request<B>, known: &[u8]) -> Admission {
        let version = request.version();
        if !self.host_is_sound(version, known) {
            return Admission::Refused(StatusCode::BAD_REQUEST);
        }
        if version == Version::HTTP_2 {
            return match is_malformed_http2(request, self.host) {
                true => Admission::Malformed,
                false => Admission::Sound,
            };
        }
        if !is_target_sound(request.method(), request.uri()) {
            return Admission::Refused(StatusCode::BAD_REQUEST);
        }
        match self.coding {
            true => coding_refusal(request.headers()).map_or(Admission::Sound, Admission::Refused),
            false => Admission::Sound,
        }
    }

    /// Whether the request's `Host` is as HTTP/1 requires (RFC 9112,
    /// 3.2): one line, present in HTTP/1.1, and a host with an optional
    /// port. Two could be read two ways, by a proxy in front and by the
    /// service; none leaves the service to guess. HTTP/2 names its
    /// authority in the request line.
    fn host_is_sound(&self, version: Version, known: &[u8]) -> bool {
        let sound = match version {
            Version::HTTP_11 => self.host.is_some() && !self.hosts,
            Version::HTTP_10 | Version::HTTP_09 => !self.hosts,
            _ => true,
        };
        sound
            && self.host.is_none_or(|host| {
                let host = host.as_bytes();
                (host == known && !known.is_empty()) || is_host(host)
            })
    }

    /// The request's `Host`, if it has one: after a sound admission, one
    /// the connection may take as known.
    pub(super) fn host(&self) -> Option<&'a [u8]> {
        self.host.map(http::HeaderValue::as_bytes)
    }
}

/// Whether an HTTP/1 request's target has a form its method may use (RFC
/// 9112, 3.2): the authority form is CONNECT's alone, `*` OPTIONS' alone.
fn is_target_sound(method: &Method, uri: &http::Uri) -> bool {
    match uri.path().as_bytes().first() {
        Some(b'/') => true,
        Some(b'*') => *method == Method::OPTIONS,
        _ => *method == Method::CONNECT,
    }
}

/// The status a request's `Transfer-Encoding` is refused with, if any.
/// hyper has refused those whose last coding is not `chunked` (400).
fn coding_refusal(headers: &http::HeaderMap) -> Option<StatusCode> {
    let (mut chunked, mut others) = (0, false);
    let codings = headers.get_all(http::header::TRANSFER_ENCODING).iter();
    for coding in codings.flat_map(|value| value.as_bytes().split(|&byte| byte == b',')) {
        // A header value holds no whitespace but spaces and tabs: trimmed
        // of ASCII whitespace, it is trimmed of its OWS.
        match coding.trim_ascii() {
            // An empty list element is no coding (RFC 9110, 5.6.1).
            [] => {}
            coding if coding.eq_ignore_ascii_case(b"chunked") => chunked += 1,
            _ => others = true,
        }
    }
    match (chunked, others) {
        (1, false) => None,
        (2.., _) => Some(StatusCode::BAD_REQUEST),
        _ => Some(StatusCode::NOT_IMPLEMENTED),
    }
}

/// Whether an HTTP/2 request is malformed in a way that the `h2` crate
/// lets through (RFC 9113, 8.2.1 and 8.3): a field value that starts or
/// ends with a space or a tab, a `Host` that names another authority than
/// `:authority`, a CONNECT without `:authority` (an extended CONNECT,
/// RFC 8441, names its authority as any request does, by `Host` too).
fn is_malformed_http2<B>(request: &Request<B>, host: Option<&http::HeaderValue>) -> bool {
    let authority = request.uri().authority();
    let extended = || request.extensions().get::<hyper::ext::Protocol>().is_some();
    if request.method() == Method::CONNECT && authority.is_none() && !extended() {
        return true;
    }
    if let (Some(host), Some(authority)) = (host, authority) {
        let scheme = request.uri().scheme_str();
        if !same_authority(host.as_bytes(), authority.as_str().as_bytes(), scheme) {
            return true;
        }
    }
    request
        .headers()
        .values()
        .any(|value| matches!(value.as_bytes(), [b' ' | b'\t', ..] | [.., b' ' | b'\t']))
}

/// Whether a `Host` and an `:authority` name one authority once normalized
/// as their scheme says (RFC 3986, 6.2.3): the host without regard to
/// case, a port that is the scheme's default the same as none.
fn same_authority(host: &[u8], authority: &[u8], scheme: Option<&str>) -> bool {
    let default_port: &[u8] = match scheme {
        Some("https") => b":443",
        _ => b":80",
    };
    let host = host.strip_suffix(default_port).unwrap_or(host);
    let authority = authority.strip_suffix(default_port).unwrap_or(authority);
    host.eq_ignore_ascii_case(authority)
}

/// Whether `host` may be a `Host`: every byte one a host may hold, and a
/// port, if any, of digits alone.
fn is_host(host: &[u8]) -> bool {
    has_host_bytes(host) && has_sound_port(host)
}

/// Whether what follows a `Host`'s host — after an IP literal's `]`, or
/// from the first `:` — is nothing or a port: `:` and digits.
fn has_sound_port(host: &[u8]) -> bool {
    let rest = match host.first() {
        Some(b'[') => match host.iter().position(|&byte| byte == b']') {
            Some(end) => &host[end + 1..],
            None => return false,
        },
        _ => match host.iter().position(|&byte| byte == b':') {
            Some(colon) => &host[colon..],
            None => return true,
        },
    };
    match rest {
        [] => true,
        [b':', port @ ..] => port.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Whether every byte of `host` may be part of a `Host`. Eight bytes a
/// step, with no early exit, so that the steps unroll: this runs on every
/// HTTP/1 request.
fn has_host_bytes(host: &[u8]) -> bool {
    let mut chunks = host.chunks_exact(8);
    let mut sound = true;
    for chunk in &mut chunks {
        for &byte in chunk {
            sound &= is_host_byte(byte);
        }
    }
    for &byte in chunks.remainder() {
        sound &= is_host_byte(byte);
    }
    sound
}

/// Whether `byte` may be part of a `Host` (RFC 3986, 3.2.2 and 3.2.3): a
/// registered name's (letters, digits, `-._~`, sub-delimiters, percent
/// escapes), an IP literal's (`[`, `]`, `:`), a port's. One lookup a byte:
/// this runs on every HTTP/1 request.
fn is_host_byte(byte: u8) -> bool {
    static HOST_BYTES: [bool; 256] = {
        let mut set = [false; 256];
        let mut byte = 0;
        while byte < 128 {
            set[byte] = (byte as u8).is_ascii_alphanumeric();
            byte += 1;
        }
        let others = b"-._~%!$&'()*+,;=:[]";
        let mut i = 0;
        while i < others.len() {
            set[others[i] as usize] = true;
            i += 1;
        }
        set
    };
    HOST_BYTES[usize::from(byte)]
}

#[cfg(test)]
mod tests {
    use http::{HeaderMap, HeaderValue, StatusCode, header::TRANSFER_ENCODING};

    use super::{coding_refusal, is_host};

    #[test]
    fn a_host_s_port_is_digits_alone() {
        for sound in [
            "localhost",
            "localhost:8080",
            "localhost:",
            "[::1]",
            "[::1]:443",
        ] {
            assert!(is_host(sound.as_bytes()), "{sound}");
        }
        for unsound in ["localhost:abc", "a:1:2", "[::1", "[::1]x", "[::1]:8a"] {
            assert!(!is_host(unsound.as_bytes()), "{unsound}");
        }
    }

    #[test]
    fn transfer_codings_other_than_one_chunked_are_refused() {
        let refusal = |lines: &[&'static str]| {
            let mut headers = HeaderMap::new();
            for line in lines {
                headers.append(TRANSFER_ENCODING, HeaderValue::from_static(line));
            }
            coding_refusal(&headers)
        };
        assert_eq!(refusal(&["chunked"]), None);
        assert_eq!(refusal(&[" Chunked\t"]), None);
        assert_eq!(refusal(&[", chunked,"]), None);
        assert_eq!(
            refusal(&["chunked, chunked"]),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            refusal(&["gzip, chunked"]),
            Some(StatusCode::NOT_IMPLEMENTED)
        );
        assert_eq!(
            refusal(&["gzip", "chunked"]),
            Some(StatusCode::NOT_IMPLEMENTED)
        );
    }

    #[test]
    fn a_host_is_refused_for_one_bad_byte_wherever_it_stands() {
        let host = b"www.example.com:8080";
        assert!(is_host(host));
        assert!(is_host(b""));
        for at in 0..host.len() {
            for bad in [b' ', b'/', b'@', b'\\', 0x7f, 0xc3] {
                let mut refused = *host;
                refused[at] = bad;
                assert!(
                    !is_host(&refused),
                    "{:?}",
                    String::from_utf8_lossy(&refused)
                );
            }
        }
    }
}
