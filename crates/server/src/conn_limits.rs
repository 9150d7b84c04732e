//! Time limits on client connections, so a slow or idle client cannot hold one forever: a request's
//! headers must arrive within a bound once its first byte has (slow-loris), and a connection with no
//! request in flight is closed after a bound (idle keep-alive). The body's own bound is applied
//! where the body is read (`legacy::post`).
//!
//! Each connection has a [`Clock`] shared by its socket wrapper (which sees bytes arrive), its
//! service wrapper (which sees requests start and their responses end) and a watchdog that closes
//! the connection when a bound has passed. A response still streaming (an SSE stream) is a request
//! in flight: it is never cut.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use http::HeaderMap;
use http_body::{Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The bounds of one client connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// From a request's first byte to the end of its headers.
    pub header_timeout: Duration,
    /// From the end of a request's headers to the end of its body.
    pub body_timeout: Duration,
    /// With no request in flight and nothing arriving.
    pub idle_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(90),
        }
    }
}

/// What one connection is doing, in milliseconds since it opened (0: not happening).
pub(crate) struct Clock {
    opened: Instant,
    in_flight: AtomicUsize,
    /// When the first byte of the next request's head arrived.
    head_started: AtomicU64,
    /// When the connection last had no request in flight.
    idle_since: AtomicU64,
}

/// Why the watchdog closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expired {
    /// A request's headers took longer than the header timeout.
    Headers,
    /// Nothing happened for longer than the idle timeout.
    Idle,
}

impl Clock {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            head_started: AtomicU64::new(0),
            idle_since: AtomicU64::new(1),
        })
    }

    fn now_ms(&self) -> u64 {
        // +1 so that 0 can mean "not happening".
        self.opened.elapsed().as_millis() as u64 + 1
    }

    /// Bytes arrived: with no request in flight they are the start of the next request's head.
    fn on_bytes(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0
            && self.head_started.load(Ordering::Relaxed) == 0
        {
            self.head_started.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// A request's headers are complete; it is in flight until its response body is dropped.
    pub(crate) fn request_started(self: &Arc<Self>) -> InFlight {
        self.head_started.store(0, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// Which bound has passed, if any.
    pub(crate) fn expired(&self, limits: &ConnectionLimits) -> Option<Expired> {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return None;
        }
        let now = self.now_ms();
        let since = |at: u64| Duration::from_millis(now.saturating_sub(at));
        match self.head_started.load(Ordering::Relaxed) {
            0 => (since(self.idle_since.load(Ordering::Relaxed)) > limits.idle_timeout)
                .then_some(Expired::Idle),
            at => (since(at) > limits.header_timeout).then_some(Expired::Headers),
        }
    }
}

/// Marks one request in flight; dropped when its response has been written (or abandoned).
pub(crate) struct InFlight(Arc<Clock>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.0.idle_since.store(self.0.now_ms(), Ordering::Relaxed);
        }
    }
}

/// How often the watchdog looks: often enough that a bound is enforced within half of itself late.
pub(crate) fn tick(limits: &ConnectionLimits) -> Duration {
    (limits.header_timeout.min(limits.idle_timeout) / 2).max(Duration::from_millis(10))
}

/// A client socket that tells its connection's clock when bytes arrive.
pub(crate) struct TimedStream {
    inner: TcpStream,
    clock: Arc<Clock>,
}

impl TimedStream {
    pub(crate) fn new(inner: TcpStream, clock: Arc<Clock>) -> Self {
        Self { inner, clock }
    }
}

impl AsyncRead for TimedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.clock.on_bytes();
        }
        polled
    }
}

impl AsyncWrite for TimedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A response body that keeps its request in flight until it is dropped.
pub(crate) struct TrackedBody {
    inner: Body,
    _in_flight: InFlight,
}

impl TrackedBody {
    pub(crate) fn new(inner: Body, in_flight: InFlight) -> Self {
        Self {
            inner,
            _in_flight: in_flight,
        }
    }
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The declared body length, when it is there and readable.
pub(crate) fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(ms: u64) -> ConnectionLimits {
        ConnectionLimits {
            header_timeout: Duration::from_millis(ms),
            body_timeout: Duration::from_millis(ms),
            idle_timeout: Duration::from_millis(ms * 3),
        }
    }

    #[test]
    fn a_request_in_flight_is_never_expired() {
        let clock = Clock::new();
        let flight = clock.request_started();
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(clock.expired(&limits(10)), None);
        drop(flight);
        assert_eq!(clock.expired(&limits(10)), None, "idle just began");
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(clock.expired(&limits(10)), Some(Expired::Idle));
    }

    #[test]
    fn a_head_that_does_not_complete_expires_before_idle_would() {
        let clock = Clock::new();
        clock.on_bytes();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(clock.expired(&limits(10)), Some(Expired::Headers));
        // Completing the head resets it.
        let _flight = clock.request_started();
        assert_eq!(clock.expired(&limits(10)), None);
    }

    #[test]
    fn content_length_is_read_only_when_it_is_a_number() {
        let mut h = HeaderMap::new();
        assert_eq!(content_length(&h), None);
        h.insert(http::header::CONTENT_LENGTH, "12".parse().unwrap());
        assert_eq!(content_length(&h), Some(12));
        h.insert(http::header::CONTENT_LENGTH, "lots".parse().unwrap());
        assert_eq!(content_length(&h), None);
    }
}
