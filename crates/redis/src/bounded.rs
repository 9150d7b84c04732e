//! A bound on what one reply may make us buffer. The `redis` crate reads a bulk string or an
//! array until it is whole, whatever length the server announces (its parser caps nesting, not
//! size), so a broken or hostile server could make a replica buffer without end. The socket is
//! wrapped instead: bytes read since the caller's last [`Budget::reset`] (the start of a call,
//! or the last message delivered) are counted, and a read past [`MAX_REPLY`] fails the
//! connection, which is then closed like any other broken one.
//!
//! The wrapper also keeps the last TLS failure it passed on: with TLS 1.3 a server that refuses
//! our client certificate says so only at the first read, inside the `redis` crate's handshake,
//! whose error no longer carries the rustls error it came from.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The most one call's replies (or one pub/sub message) may take. vmcp's records are a few KiB
/// and bus messages carry at most a client's answer (`server.maxBodyBytes`, 4 MiB by default);
/// Redis itself drops a subscriber more than 32 MiB behind.
pub const MAX_REPLY: usize = 16 * 1024 * 1024;

/// What has been read since the last reset, and the last TLS failure; shared by the stream and
/// its user.
#[derive(Debug, Clone, Default)]
pub(crate) struct Budget {
    read: Arc<AtomicUsize>,
    tls_failure: Arc<Mutex<Option<String>>>,
}

impl Budget {
    /// Starts counting again (a new call, or a message has been taken).
    pub(crate) fn reset(&self) {
        self.read.store(0, Ordering::Relaxed);
    }

    /// Whether the stream failed because a reply was too large.
    pub(crate) fn exceeded(&self) -> bool {
        self.read.load(Ordering::Relaxed) > MAX_REPLY
    }

    /// What TLS refused, if a read or write failed for that reason.
    pub(crate) fn tls_failure(&self) -> Option<String> {
        self.tls_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Notes a TLS failure among the errors passing through.
    fn observe<T>(&self, polled: &Poll<io::Result<T>>) {
        if let Poll::Ready(Err(e)) = polled
            && let Some(tls) = tls_error(e)
        {
            *self.tls_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(tls);
        }
    }
}

/// The rustls error inside `e`, described.
pub(crate) fn tls_error(e: &io::Error) -> Option<String> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .map(ToString::to_string)
}

/// Any stream vmcp talks to Redis over (TCP or TLS).
pub(crate) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// A stream whose reads count against a [`Budget`].
pub(crate) struct Bounded {
    inner: Box<dyn Io>,
    budget: Budget,
}

impl Bounded {
    pub(crate) fn new(inner: Box<dyn Io>, budget: Budget) -> Self {
        Self { inner, budget }
    }
}

impl AsyncRead for Bounded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.budget.exceeded() {
            return Poll::Ready(Err(too_large()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.budget.observe(&polled);
        if let Poll::Ready(Ok(())) = polled {
            let read = buf.filled().len() - before;
            let total = self.budget.read.fetch_add(read, Ordering::Relaxed) + read;
            if total > MAX_REPLY {
                return Poll::Ready(Err(too_large()));
            }
        }
        polled
    }
}

impl AsyncWrite for Bounded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.budget.observe(&polled);
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.budget.observe(&polled);
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.budget.observe(&polled);
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

fn too_large() -> io::Error {
    io::Error::other(format!(
        "a reply larger than {} MiB",
        MAX_REPLY / (1024 * 1024)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn reads_past_the_bound_fail_and_a_reset_starts_again() {
        let (mut far, near) = tokio::io::duplex(64 * 1024);
        let budget = Budget::default();
        let mut bounded = Bounded::new(Box::new(near), budget.clone());
        // Writes until the reader gives up.
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let chunk = vec![b'x'; 64 * 1024];
            while far.write_all(&chunk).await.is_ok() {}
        });
        let mut buf = vec![0u8; 64 * 1024];
        let (mut read, mut reset) = (0, false);
        let err = loop {
            match bounded.read(&mut buf).await {
                Ok(0) => panic!("the writer stopped first"),
                Ok(n) => read += n,
                Err(e) => break e,
            }
            if !reset && read >= MAX_REPLY / 2 {
                // A new call: what came before no longer counts.
                budget.reset();
                reset = true;
            }
        };
        assert!(err.to_string().contains("larger than 16 MiB"), "{err}");
        assert!(read > MAX_REPLY, "the reset did not start again: {read}");
        assert!(read <= MAX_REPLY * 3 / 2 + 64 * 1024, "read {read}");
        assert!(budget.exceeded());
        drop(bounded);
        let _ = writer.await;
    }
}
