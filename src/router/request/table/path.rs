//! Paths as the table reads them: their segments, their normal form (no
//! empty segments, no trailing slash), a catch-all's end, and the word-wide
//! comparisons the walk makes.

/// The next segment of `path` at or after `from`: `(start, end)`, skipping
/// empty segments; `start == path.len()` when there is none.
#[inline]
pub(crate) fn next_segment(path: &str, from: usize) -> (usize, usize) {
    let bytes = path.as_bytes();
    let mut start = from;
    while start < bytes.len() && bytes[start] == b'/' {
        start += 1;
    }
    let end = bytes[start..]
        .iter()
        .position(|&b| b == b'/')
        .map_or(bytes.len(), |i| start + i);
    (start, end)
}

/// The last segment of `path[from..to]`: `(start, end)`, or `None` when the
/// range holds no segment.
pub(crate) fn last_segment(path: &str, from: usize, to: usize) -> Option<(usize, usize)> {
    let bytes = &path.as_bytes()[..to];
    let mut end = to;
    while end > from && bytes[end - 1] == b'/' {
        end -= 1;
    }
    if end == from {
        return None;
    }
    let start = bytes[from..end]
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(from, |i| from + i + 1);
    Some((start, end))
}

/// Where a catch-all that starts at byte `start` of `path` and is followed
/// by the static segments `suffix` ends: the suffix takes the last segments
/// of the path, the catch-all the one or more before them. `None` when the
/// suffix does not match or leaves the catch-all nothing.
pub(crate) fn catch_all_end<'s>(
    path: &str,
    start: usize,
    suffix: impl DoubleEndedIterator<Item = &'s str>,
) -> Option<usize> {
    let mut to = path.len();
    for expected in suffix.rev() {
        let (s, e) = last_segment(path, start, to)?;
        if path[s..e] != *expected {
            return None;
        }
        to = s;
    }
    // What is left holds a segment when it is more than slashes; the
    // catch-all ends after its last byte that is not one.
    let bytes = &path.as_bytes()[start..to];
    let kept = bytes.iter().rposition(|&b| b != b'/')?;
    Some(start + kept + 1)
}

/// Whether `path` is already in the form the static index is keyed by.
#[inline]
pub(crate) fn is_normalized(path: &str) -> bool {
    let bytes = path.as_bytes();
    match bytes {
        [b'/'] => true,
        [b'/', .., last] if *last != b'/' => !has_double_slash(bytes),
        _ => false,
    }
}

/// Whether two byte strings of the same length are equal, compared by
/// overlapping word loads up to sixteen bytes: the tree's node prefixes are
/// short, and `memcmp`'s call and length dispatch cost more than the bytes.
#[inline(always)]
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
        bytes[at..at + N].try_into().expect("in bounds")
    }
    let n = a.len();
    match n {
        0 => true,
        1..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// Whether `bytes` holds `//`, eight bytes at a time: every request pays
/// for this scan, and a byte-by-byte loop costs as much as the whole walk
/// of a short path.
#[inline]
pub(crate) fn has_double_slash(bytes: &[u8]) -> bool {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const SLASHES: u64 = 0x2f2f_2f2f_2f2f_2f2f;
    // The high bit of each byte of the answer is set where the byte is `/`
    // (exact: no carry crosses bytes, unlike the shorter zero-byte test).
    let slashes = |word: u64| {
        let x = word ^ SLASHES;
        !(((x & LOW) + LOW) | x | LOW)
    };
    let mut chunks = bytes.chunks_exact(8);
    // Whether the byte before the current word was `/`.
    let mut carry = 0;
    for chunk in &mut chunks {
        let found = slashes(u64::from_le_bytes(
            chunk.try_into().expect("chunks of eight"),
        ));
        if found & (found >> 8 | carry) != 0 {
            return true;
        }
        carry = found >> 56;
    }
    let found = slashes(tail_word(bytes));
    found & (found >> 8 | carry) != 0
}

/// The bytes of `bytes` after its last whole eight, as a little-endian word
/// padded with zeros. From eight bytes on, one load of the last eight,
/// shifted: no copy of variable length, which costs a `memcpy` call.
#[inline]
pub(crate) fn tail_word(bytes: &[u8]) -> u64 {
    let rest = bytes.len() % 8;
    if rest == 0 {
        return 0;
    }
    match bytes.len().checked_sub(8) {
        Some(from) => {
            let last = u64::from_le_bytes(bytes[from..].try_into().expect("eight bytes"));
            last >> (8 * (8 - rest))
        }
        None => bytes
            .iter()
            .enumerate()
            .fold(0, |word, (i, &byte)| word | u64::from(byte) << (8 * i)),
    }
}

pub(crate) fn normalize(path: &str) -> String {
    let mut normalized = String::with_capacity(path.len());
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        normalized.push('/');
        normalized.push_str(segment);
    }
    if normalized.is_empty() {
        normalized.push('/');
    }
    normalized
}
