//! A request line too long for the head's limit answered 414, not 431.
//!
//! hyper reads an HTTP/1 request's head into a buffer of
//! `Serve::max_header_size` and answers `431 Request Header Fields Too
//! Large` to a head that outgrows it, whatever part of it does. When the
//! request line is still open at that point, its target is what did: a
//! target longer than the server reads is due `414 URI Too Long` (RFC
//! 9112, 3).
//!
//! [`RequestLineIo`] sits under hyper and watches a connection's first
//! request line as its bytes are read, a byte at a time until its end
//! (for an ordinary request, the few bytes of one read, once per
//! connection). If hyper answers 431 while that line is open past its
//! method, the answer's status line is rewritten to 414. The requests
//! after the first are not watched: where their heads start in the
//! stream only hyper knows, and a target too long there is answered 431.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll, ready},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How far the connection's first request line has been read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    /// Within its method, before the first space.
    Method,
    /// Past its method: the target (or the version) is being read.
    Target,
    /// Ended (or the connection never sent one): nothing more to watch.
    Ended,
}

/// The status line hyper answers a head too large with.
const TOO_LARGE: &[u8] = b"HTTP/1.1 431 ";

/// The status line it is rewritten to.
const TOO_LONG: &[u8] = b"HTTP/1.1 414 URI Too Long";

/// A connection's socket as hyper sees it: see the module's documentation.
#[derive(Debug)]
pub(crate) struct RequestLineIo<T> {
    io: T,
    line: Line,
    /// The rewritten answer and how much of it the socket took, while it
    /// is being written.
    rewritten: Option<(Vec<u8>, usize)>,
}

impl<T> RequestLineIo<T> {
    pub(crate) fn new(io: T) -> Self {
        Self {
            io,
            line: Line::Method,
            rewritten: None,
        }
    }

    /// Follows the first request line through `read`, bytes just read.
    fn watch(&mut self, read: &[u8]) {
        for &byte in read {
            match byte {
                b'\n' => {
                    self.line = Line::Ended;
                    return;
                }
                b' ' => self.line = Line::Target,
                _ => {}
            }
        }
    }
}

/// `answer`, hyper's 431, with the status line of a 414.
fn rewrite(answer: &[u8]) -> Vec<u8> {
    let rest = answer
        .windows(2)
        .position(|pair| pair == b"\r\n")
        .map_or(&[][..], |end| &answer[end..]);
    [TOO_LONG, rest].concat()
}

impl<T: AsyncRead + Unpin> AsyncRead for RequestLineIo<T> {
    #[inline]
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let filled = buf.filled().len();
        let read = Pin::new(&mut this.io).poll_read(cx, buf);
        if this.line != Line::Ended {
            this.watch(&buf.filled()[filled..]);
        }
        read
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for RequestLineIo<T> {
    #[inline]
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.line != Line::Target || !(this.rewritten.is_some() || data.starts_with(TOO_LARGE)) {
            return Pin::new(&mut this.io).poll_write(cx, data);
        }
        // hyper's 431 to a head whose request line is still open: the
        // rewritten answer goes out whole before hyper is told its own
        // went (it calls again with the same bytes while this is pending).
        let (answer, sent) = this.rewritten.get_or_insert_with(|| (rewrite(data), 0));
        while *sent < answer.len() {
            let written = ready!(Pin::new(&mut this.io).poll_write(cx, &answer[*sent..]))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *sent += written;
        }
        this.rewritten = None;
        this.line = Line::Ended;
        Poll::Ready(Ok(data.len()))
    }

    #[inline]
    fn is_write_vectored(&self) -> bool {
        // Written slice by slice, so that the answer's first slice is seen
        // whole: hyper then writes its head as one.
        false
    }

    #[inline]
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    #[inline]
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// What the server writes for `answer` after reading `request`.
    async fn answered(request: &[u8], answer: &[u8]) -> Vec<u8> {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let mut io = RequestLineIo::new(server);
        client.write_all(request).await.unwrap();
        let mut read = vec![0; request.len()];
        io.read_exact(&mut read).await.unwrap();
        io.write_all(answer).await.unwrap();
        io.shutdown().await.unwrap();
        let mut written = Vec::new();
        client.read_to_end(&mut written).await.unwrap();
        written
    }

    const HYPER_431: &[u8] =
        b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n";

    #[tokio::test]
    async fn a_431_to_an_open_request_line_past_its_method_is_a_414() {
        let long = [b"GET /?".as_slice(), &[b'a'; 1000]].concat();
        assert_eq!(
            answered(&long, HYPER_431).await,
            b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\n"
        );
    }

    #[tokio::test]
    async fn a_431_to_a_head_whose_request_line_ended_stays_a_431() {
        let big_header = [b"GET / HTTP/1.1\r\nx-big: ".as_slice(), &[b'a'; 1000]].concat();
        assert_eq!(answered(&big_header, HYPER_431).await, HYPER_431);
    }

    #[tokio::test]
    async fn a_431_within_the_method_and_other_answers_are_left_alone() {
        assert_eq!(answered(&[b'G'; 1000], HYPER_431).await, HYPER_431);
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(answered(b"GET /?aaaa", ok).await, ok);
    }
}
