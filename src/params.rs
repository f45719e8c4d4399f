//! Route parameters: byte ranges into the request path, decoded on access.

use std::{borrow::Cow, fmt};

use crate::head::RequestHead;

/// The most parameters one pattern may hold.
pub const MAX_PARAMETERS: usize = 16;

/// The longest path a match is tried on: the longest an `http::Uri`
/// holds, so that a capture's bounds fit in 16 bits. Longer paths match
/// nothing.
pub(crate) const MAX_PATH: usize = u16::MAX as usize - 1;

/// The byte ranges a match captured, in capture order. Fixed size: a match
/// never allocates.
#[derive(Clone, Copy)]
pub(crate) struct Captures {
    ranges: [(u16, u16); MAX_PARAMETERS],
    len: u8,
}

impl Captures {
    /// No captures: what a step outside the router sees.
    pub(crate) const NONE: Captures = Captures::new();

    pub(crate) const fn new() -> Self {
        Self {
            ranges: [(0, 0); MAX_PARAMETERS],
            len: 0,
        }
    }

    /// Records a capture. Patterns hold at most `MAX_PARAMETERS` parameters
    /// and a match records one capture per parameter, so this never runs
    /// out of room; the check keeps a broken invariant from going further.
    #[inline]
    pub(crate) fn push(&mut self, start: usize, end: usize) {
        let slot = &mut self.ranges[usize::from(self.len)];
        // Longer paths are refused before a match starts (`MAX_PATH`).
        *slot = (start as u16, end as u16);
        self.len += 1;
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        usize::from(self.len)
    }

    #[inline]
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = len as u8;
    }

    #[inline]
    pub(crate) fn ranges(&self) -> &[(u16, u16)] {
        &self.ranges[..self.len()]
    }
}

impl fmt::Debug for Captures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.ranges()).finish()
    }
}

/// The parameters of a matched pattern, read from the request path.
///
/// Values are kept as byte ranges into the path and percent-decoded when
/// read: [`Params::get`] borrows when nothing is escaped.
///
/// ```
/// use std::borrow::Cow;
/// use http::Method;
/// use pronghorn::Router;
///
/// let router = Router::new().get("/files/{dir}/{name}.{ext}", || "").compile().unwrap();
/// let found = router.at(&Method::GET, "/files/my%20docs/report.tar.gz").unwrap();
/// let params = found.params();
/// assert_eq!(params.get_raw("dir"), Some("my%20docs"));
/// assert_eq!(params.get("dir"), Some(Ok(Cow::Owned("my docs".to_owned()))));
/// assert_eq!(params.get("name"), Some(Ok(Cow::Borrowed("report"))));
/// assert_eq!(params.iter_raw().last(), Some(("ext", "tar.gz")));
///
/// // A value that does not decode keeps its raw text.
/// let found = router.at(&Method::GET, "/files/%ZZ/a.b").unwrap();
/// assert_eq!(found.params().get("dir").unwrap().unwrap_err().raw(), "%ZZ");
/// ```
#[derive(Clone, Copy)]
pub struct Params<'a> {
    path: &'a str,
    names: &'a [Box<str>],
    captures: &'a Captures,
}

impl<'a> Params<'a> {
    pub(crate) fn new(path: &'a str, names: &'a [Box<str>], captures: &'a Captures) -> Self {
        Self {
            path,
            names,
            captures,
        }
    }

    /// The names of the parameters, in the order of the pattern.
    pub(crate) fn names(&self) -> &'a [Box<str>] {
        self.names
    }

    /// The byte ranges of the values, in the path they were captured in.
    pub(crate) fn captures(&self) -> &'a Captures {
        self.captures
    }

    /// The same parameters, bound in `path`: the path they were captured
    /// in, as received.
    pub(crate) fn in_path<'p>(self, path: &'p str) -> Params<'p>
    where
        'a: 'p,
    {
        Params { path, ..self }
    }

    /// The number of parameters.
    pub fn len(&self) -> usize {
        self.captures.len().min(self.names.len())
    }

    /// Whether the pattern had no parameters.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `name` as it appears in the path, still percent-encoded.
    pub fn get_raw(&self, name: &str) -> Option<&'a str> {
        self.iter_raw()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }

    /// The value of `name`, percent-decoded (borrowed when nothing is
    /// escaped), and for a catch-all without the empty segments of the
    /// path (`a/b` for `a///b`, which [`get_raw`](Params::get_raw) keeps).
    /// `Some(Err(..))` when the value does not decode to UTF-8.
    pub fn get(&self, name: &str) -> Option<Result<Cow<'a, str>, DecodeError>> {
        self.get_raw(name).map(decode)
    }

    /// `(name, raw value)` pairs, in the order of the pattern.
    pub fn iter_raw(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a str)> + 'a {
        let path = self.path;
        self.names
            .iter()
            .zip(self.captures.ranges())
            .map(move |(name, &(start, end))| (&**name, &path[start as usize..end as usize]))
    }
}

impl fmt::Debug for Params<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter_raw()).finish()
    }
}

/// A parameter value that is not valid percent-encoded UTF-8.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    raw: String,
}

impl DecodeError {
    /// The value as it appears in the path.
    pub fn raw(&self) -> &str {
        &self.raw
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not valid percent-encoded UTF-8", self.raw)
    }
}

impl std::error::Error for DecodeError {}

/// A parameter's value: `raw` without empty segments (only a catch-all
/// spans segments), percent-decoded. Borrowed when it needs neither.
pub(crate) fn decode(raw: &str) -> Result<Cow<'_, str>, DecodeError> {
    if !raw.contains("//") {
        return percent_decode(raw);
    }
    let joined = raw
        .split('/')
        .filter(|segment| !segment.is_empty())
        .collect::<Vec<_>>()
        .join("/");
    match percent_decode(&joined) {
        Ok(value) => Ok(Cow::Owned(value.into_owned())),
        Err(_) => Err(DecodeError {
            raw: raw.to_owned(),
        }),
    }
}

/// Percent-decodes `raw` as `application/x-www-form-urlencoded` reads a
/// query string or a form (the `form_urlencoded` crate's rules), borrowing
/// it when it holds no `%`: a `%` not followed by two hex digits stays as
/// it is, and bytes that are not UTF-8 become U+FFFD. Never fails: a login
/// page's `?next=%ZZ` reaches the handler as its text.
pub(crate) fn percent_decode_lenient(raw: &str) -> Cow<'_, str> {
    if !raw.contains('%') {
        return Cow::Borrowed(raw);
    }
    let bytes = raw.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3);
        let value = hex.and_then(|hex| hex_value(hex[0]).zip(hex_value(hex[1])));
        match (bytes[i], value) {
            (b'%', Some((high, low))) => {
                decoded.push(high << 4 | low);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    match String::from_utf8_lossy(&decoded) {
        Cow::Borrowed(text) => Cow::Owned(text.to_owned()),
        Cow::Owned(text) => Cow::Owned(text),
    }
}

/// Percent-decodes `raw`, borrowing it when it holds no `%`.
///
/// Written here rather than taken from a crate: it is twenty lines, and the
/// router needs exactly this contract (borrow when clean, reject `%ZZ` and
/// invalid UTF-8, never treat `+` as a space in a path).
pub(crate) fn percent_decode(raw: &str) -> Result<Cow<'_, str>, DecodeError> {
    if !raw.contains('%') {
        return Ok(Cow::Borrowed(raw));
    }
    let error = || DecodeError {
        raw: raw.to_owned(),
    };
    let bytes = raw.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or_else(error)?;
            let value = hex_value(hex[0]).zip(hex_value(hex[1])).ok_or_else(error)?;
            decoded.push(value.0 << 4 | value.1);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded)
        .map(Cow::Owned)
        .map_err(|_| error())
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

/// The parameters `names` bind in the request's path; the path is worked
/// out from the URI only when there are any (most hooks have none).
#[inline]
pub(crate) fn params_of<'a>(
    head: &'a RequestHead,
    names: &'a [Box<str>],
    captures: &'a Captures,
) -> Params<'a> {
    let path = if names.is_empty() { "" } else { head.path() };
    Params::new(path, names, captures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding() {
        assert!(matches!(
            percent_decode("plain"),
            Ok(Cow::Borrowed("plain"))
        ));
        assert_eq!(percent_decode("a%20b%2Fc").unwrap(), "a b/c");
        assert_eq!(percent_decode("caf%C3%A9").unwrap(), "café");
        assert_eq!(percent_decode("a+b").unwrap(), "a+b");
        for bad in ["%ZZ", "%2", "%", "%C3%28", "%FF"] {
            assert_eq!(percent_decode(bad).unwrap_err().raw(), bad);
        }
    }

    #[test]
    fn a_value_across_segments_loses_its_empty_ones() {
        assert!(matches!(decode("a/b"), Ok(Cow::Borrowed("a/b"))));
        assert_eq!(decode("a///b//c%20d").unwrap(), "a/b/c d");
        assert_eq!(decode("a/%2F/b").unwrap(), "a///b", "escaped slashes stay");
        assert_eq!(decode("a//%ZZ").unwrap_err().raw(), "a//%ZZ");
    }
}
