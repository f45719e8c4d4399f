//! A response body as the connection sends it: in pieces, its writes
//! never held while it is not ready, its HTTP/2 stream counted until it
//! ends.

use std::{
    any::Any,
    pin::Pin,
    task::{Context, Poll, ready},
};

use bytes::{Buf, Bytes};
use http_body::{Body as HttpBody, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::{
    io,
    timeouts::{NextHead, StreamGuard},
};

/// The largest piece of a response body handed to hyper at once.
///
/// hyper copies an HTTP/1 response's body into its write buffer, and
/// stops asking for more while that holds `max_header_size` (64 KiB by
/// default) — but a chunk it takes is copied whole, however large. A
/// client that does not read would make the connection hold a copy of
/// every large body it asked for (200 clients of a 4 MiB body held 800
/// MB). Cut into pieces, which share the chunk's memory, a body costs the
/// connection hyper's bound plus one piece, whatever its size.
///
/// (hyper would keep the chunks uncopied if the socket took vectored
/// writes, but its queue of chunks costs about 5 % more instructions per
/// request, large body or not.)
pub(super) const MAX_PIECE: usize = 16 * 1024;

pin_project! {
    /// A response body as the connection sends it: the service's body,
    /// its `Bytes` chunks in pieces of at most [`MAX_PIECE`] bytes, which
    /// stops writes from being held while it is not ready and, over
    /// HTTP/2, counts its stream closed when it is dropped; none for an
    /// answer of the connection's own.
    pub(super) struct ConnectionBody<B> {
        #[pin]
        body: Option<B>,
        stream: Option<StreamGuard>,
        // Over HTTP/1, starts the wait for the next head when hyper drops
        // the body, having taken all of it.
        next_head: Option<NextHead>,
        // What is left of a chunk larger than a piece (boxed: most bodies
        // have none, and the body is moved about with every response).
        rest: Option<Box<Bytes>>,
    }
}

impl<B> ConnectionBody<B> {
    pub(super) fn new(
        body: Option<B>,
        stream: Option<StreamGuard>,
        next_head: Option<NextHead>,
    ) -> Self {
        Self {
            body,
            stream,
            next_head,
            rest: None,
        }
    }
}

impl<B> HttpBody for ConnectionBody<B>
where
    B: HttpBody,
    B::Data: Buf + 'static,
{
    type Data = B::Data;
    type Error = B::Error;

    #[inline]
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        if let Some(stream) = this.stream.as_mut() {
            ready!(stream.poll_send_room(cx));
        }
        if let Some(rest) = this.rest.take() {
            let mut rest = *rest;
            if rest.len() > MAX_PIECE {
                *this.rest = Some(Box::new(rest.split_off(MAX_PIECE)));
            }
            // Only a body of `Bytes` is cut: its data is `Bytes`.
            let mut piece = None::<B::Data>;
            if let Some(slot) = (&mut piece as &mut dyn Any).downcast_mut::<Option<Bytes>>() {
                *slot = Some(rest);
            }
            if let (Some(stream), Some(piece)) = (this.stream, &piece) {
                stream.produced(piece.remaining());
            }
            return Poll::Ready(piece.map(|piece| Ok(Frame::data(piece))));
        }
        let Some(body) = this.body.as_pin_mut() else {
            return Poll::Ready(None);
        };
        let mut frame = body.poll_frame(cx);
        match &mut frame {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_mut() {
                    if let Some(chunk) = (data as &mut dyn Any).downcast_mut::<Bytes>() {
                        if chunk.len() > MAX_PIECE {
                            *this.rest = Some(Box::new(chunk.split_off(MAX_PIECE)));
                        }
                    }
                    if let Some(stream) = this.stream {
                        stream.produced(data.remaining());
                    }
                }
            }
            // The connection waits on the body: what it wrote so far goes
            // out now.
            Poll::Pending => io::stop_holding(),
            Poll::Ready(_) => {}
        }
        frame
    }

    #[inline]
    fn is_end_stream(&self) -> bool {
        self.rest.is_none() && self.body.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    #[inline]
    fn size_hint(&self) -> SizeHint {
        let mut hint = self
            .body
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), HttpBody::size_hint);
        if let Some(rest) = &self.rest {
            let rest = rest.len() as u64;
            hint.set_lower(hint.lower().saturating_add(rest));
            if let Some(upper) = hint.upper() {
                hint.set_upper(upper.saturating_add(rest));
            }
        }
        hint
    }
}
