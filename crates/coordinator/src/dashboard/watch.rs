//! How long a connection may hold the dashboard without a request to answer. Its socket is
//! wrapped ([`Watched`]) to see each byte move, and the routes mark the time a request is
//! being answered ([`Progress::answering`]); [`expired`] ends when either bound passes:
//!
//! - **header**: a request's head must arrive whole within `--header-timeout` of its first
//!   byte, however slowly the bytes come (a client that sends half a request and stops, or a
//!   byte a second);
//! - **idle**: between requests, some byte must move within `--idle-timeout` (a keep-alive
//!   connection waiting for its next request, one opened and never used, a client that
//!   stopped reading its answer).
//!
//! A request being answered (a search of seconds, the login form's body, which has a bound of
//! its own) is never cut.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
// Tokio's clock, which a test can pause and move.
use tokio::time::Instant;

/// The two bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    pub header: Duration,
    pub idle: Duration,
}

/// Which bound a connection passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expired {
    Header,
    Idle,
}

impl fmt::Display for Expired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expired::Header => "its request's head did not arrive in time (--header-timeout)",
            Expired::Idle => "idle too long (--idle-timeout)",
        })
    }
}

/// What a connection did last.
#[derive(Debug)]
pub struct Progress {
    /// A std mutex: held for a few assignments, never across an await.
    state: Mutex<State>,
    /// Told when a head starts: the bound comes nearer than the one [`expired`] waits for.
    head_started: Notify,
}

#[derive(Debug)]
struct State {
    /// When a byte last moved, either way.
    moved: Instant,
    /// When the first byte of the head being read came; `None` between requests.
    head_since: Option<Instant>,
    /// Requests being answered.
    answering: usize,
}

/// A request being answered, until dropped.
pub struct Answering(Arc<Progress>);

impl Drop for Answering {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.answering -= 1;
        state.moved = Instant::now();
    }
}

impl Progress {
    pub fn new() -> Arc<Progress> {
        Arc::new(Progress {
            state: Mutex::new(State {
                moved: Instant::now(),
                head_since: None,
                answering: 0,
            }),
            head_started: Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("progress lock")
    }

    /// Marks a request's head as read and its answer begun, until the value is dropped.
    pub fn answering(self: &Arc<Self>) -> Answering {
        let mut state = self.lock();
        state.answering += 1;
        state.head_since = None;
        Answering(self.clone())
    }

    fn read(&self) {
        let mut state = self.lock();
        let now = Instant::now();
        state.moved = now;
        if state.answering == 0 && state.head_since.is_none() {
            state.head_since = Some(now);
            self.head_started.notify_one();
        }
    }

    fn wrote(&self) {
        self.lock().moved = Instant::now();
    }

    /// When the connection passes a bound, and which; `None` while a request is answered.
    fn deadline(&self, timeouts: Timeouts) -> Option<(Instant, Expired)> {
        let state = self.lock();
        if state.answering > 0 {
            return None;
        }
        Some(match state.head_since {
            Some(at) => (at + timeouts.header, Expired::Header),
            None => (state.moved + timeouts.idle, Expired::Idle),
        })
    }
}

/// Ends when the connection `progress` follows passes one of `timeouts`.
pub async fn expired(progress: &Progress, timeouts: Timeouts) -> Expired {
    loop {
        let wait = match progress.deadline(timeouts) {
            Some((at, why)) if at <= Instant::now() => return why,
            Some((at, _)) => at,
            None => Instant::now() + timeouts.idle,
        };
        tokio::select! {
            _ = tokio::time::sleep_until(wait) => {}
            _ = progress.head_started.notified() => {}
        }
    }
}

/// A socket whose every byte read or written is told to its [`Progress`].
pub struct Watched<S> {
    inner: S,
    progress: Arc<Progress>,
}

impl<S> Watched<S> {
    pub fn new(inner: S, progress: Arc<Progress>) -> Watched<S> {
        Watched { inner, progress }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.progress.read();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.progress.wrote();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.progress.wrote();
        }
        polled
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const TIMEOUTS: Timeouts = Timeouts {
        header: Duration::from_secs(10),
        idle: Duration::from_secs(5),
    };

    /// A watched end of a pipe, its other end, and the progress.
    fn pipe() -> (
        Watched<tokio::io::DuplexStream>,
        tokio::io::DuplexStream,
        Arc<Progress>,
    ) {
        let (near, far) = tokio::io::duplex(64);
        let progress = Progress::new();
        (Watched::new(near, progress.clone()), far, progress)
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_that_trickles_in_is_cut_at_the_header_timeout() {
        let (mut watched, mut far, progress) = pipe();
        let start = Instant::now();
        let mut byte = [0; 1];
        let cut = loop {
            tokio::select! {
                why = expired(&progress, TIMEOUTS) => break why,
                _ = tokio::time::sleep(Duration::from_secs(1)) => {
                    far.write_all(b"G").await.unwrap();
                    watched.read_exact(&mut byte).await.unwrap();
                }
            }
        };
        assert_eq!(cut, Expired::Header);
        assert_eq!(
            start.elapsed().as_secs(),
            11,
            "the first byte came after 1 s"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_unused_connection_is_cut_at_the_idle_timeout_but_never_while_answered() {
        let (_watched, _far, progress) = pipe();
        let start = Instant::now();
        assert_eq!(expired(&progress, TIMEOUTS).await, Expired::Idle);
        assert_eq!(start.elapsed(), TIMEOUTS.idle);

        let answering = progress.answering();
        let long = tokio::time::timeout(Duration::from_secs(60), expired(&progress, TIMEOUTS));
        assert!(long.await.is_err(), "cut while a request was answered");
        drop(answering);
        let after = Instant::now();
        assert_eq!(expired(&progress, TIMEOUTS).await, Expired::Idle);
        assert_eq!(after.elapsed(), TIMEOUTS.idle);
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_begun_while_the_watch_waits_for_the_idle_bound_is_cut_at_its_own() {
        let short_header = Timeouts {
            header: Duration::from_secs(1),
            idle: Duration::from_secs(60),
        };
        let (mut watched, mut far, progress) = pipe();
        let start = Instant::now();
        let watch = expired(&progress, short_header);
        tokio::pin!(watch);
        let late_byte = async {
            tokio::time::sleep(Duration::from_secs(2)).await;
            far.write_all(b"G").await.unwrap();
            watched.read_exact(&mut [0; 1]).await.unwrap();
        };
        tokio::select! {
            _ = &mut watch => panic!("cut before the first byte"),
            () = late_byte => {}
        }
        assert_eq!(watch.await, Expired::Header);
        assert_eq!(start.elapsed(), Duration::from_secs(3));
    }
}
