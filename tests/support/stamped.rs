//! A server-side TCP stream that knows when its bytes reached the machine: the kernel's receive
//! timestamp (`SO_TIMESTAMPNS`), read with every `recvmsg`, rather than the moment a busy test
//! process gets round to parsing the request.
//!
//! Why: the politeness meters count the requests a host sees within any one second. On a
//! 2-core machine shared by the crawler, the servers and a database, a server process that is
//! not scheduled for 20 ms reads the requests of those 20 ms together, and a clock read in the
//! handler puts them closer together than they were sent: the meter would count its own
//! scheduling delays as the crawler's bursts. On loopback the kernel stamps a segment when the
//! client's `send` hands it over (`netif_rx`), so the stamp is the request's arrival as a
//! server on a quiet machine would see it; lateness on the client's side (between its rate
//! limiter's turn and its `send`) is still in it, as it should be.
//!
//! Linux only, as the tests are; where no stamp comes with the bytes, [`Arrival::last`] says
//! so and the caller reads the clock instead.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Linux's `SO_TIMESTAMPNS` (also the control message's type, `SCM_TIMESTAMPNS`), the same on
/// every architecture the tests run on (asm-generic).
const SO_TIMESTAMPNS: libc::c_int = 35;

/// A connection whose reads record their kernel receive time in the [`Arrival`] it was made
/// with.
pub struct Stamped {
    stream: TcpStream,
    arrival: Arrival,
}

/// When the bytes of a connection's latest read arrived (shared with its [`Stamped`] stream).
#[derive(Clone, Default)]
pub struct Arrival(Arc<AtomicU64>);

impl Arrival {
    /// The kernel's receive time of the latest bytes read, since the Unix epoch; `None` before
    /// the first read, or when the latest came without a stamp.
    pub fn last(&self) -> Option<Duration> {
        match self.0.load(Ordering::Acquire) {
            0 => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }

    /// The latest receive time, or the clock now when there is none: the moment a request
    /// arrived, for a server that counts them.
    pub fn last_or_now(&self) -> Duration {
        self.last().unwrap_or_else(now)
    }
}

/// The clock, as [`Arrival::last`] counts (since the Unix epoch).
pub fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Asks the kernel to stamp what `listener` receives: the connections it accepts inherit it,
/// so their first request is stamped too.
pub fn stamp_listener(listener: &TcpListener) -> io::Result<()> {
    enable(listener.as_raw_fd())
}

impl Stamped {
    /// Wraps an accepted connection; its reads record their receive time in the [`Arrival`].
    pub fn new(stream: TcpStream) -> io::Result<(Stamped, Arrival)> {
        enable(stream.as_raw_fd())?;
        let arrival = Arrival::default();
        let stamped = Stamped {
            stream,
            arrival: arrival.clone(),
        };
        Ok((stamped, arrival))
    }
}

fn enable(fd: libc::c_int) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: a valid socket and an int option of the right size.
    let set = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    match set {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// One `recvmsg` into `buf`: the bytes read and the receive time that came with them.
fn receive(fd: libc::c_int, buf: &mut [MaybeUninit<u8>]) -> io::Result<(usize, Option<u64>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // Room for one timespec control message, aligned as cmsghdr wants.
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; every pointer set below outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: fd is an open socket, msg points at live buffers of the sizes it says.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: the CMSG_* walk stays within the control buffer the kernel filled.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == SO_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::timespec>());
                stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok((n as usize, stamp))
}

impl AsyncRead for Stamped {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let fd = this.stream.as_raw_fd();
        loop {
            ready!(this.stream.poll_read_ready(cx))?;
            // SAFETY: `receive` only writes into the unfilled part, and `assume_init` covers
            // exactly the bytes it wrote.
            let unfilled = unsafe { buf.unfilled_mut() };
            match this
                .stream
                .try_io(Interest::READABLE, || receive(fd, unfilled))
            {
                Ok((n, stamp)) => {
                    unsafe { buf.assume_init(n) };
                    buf.advance(n);
                    // Bytes without a stamp leave none (not the last request's).
                    if n > 0 {
                        this.arrival.0.store(stamp.unwrap_or(0), Ordering::Release);
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for Stamped {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_read_carries_the_time_the_bytes_were_sent_not_the_time_they_were_read() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        stamp_listener(&listener).unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let (mut server, arrival) = Stamped::new(server).unwrap();
        assert_eq!(arrival.last(), None);
        let sent = now();
        client.write_all(b"first").await.unwrap();
        // The server reads them late, as a busy process does.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let read = now();
        let mut got = [0u8; 5];
        server.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"first");
        let stamp = arrival.last().expect("a receive time");
        assert!(
            stamp >= sent - Duration::from_millis(1) && stamp < read,
            "stamped {stamp:?}, sent {sent:?}, read {read:?}"
        );
        assert!(read - stamp >= Duration::from_millis(250));
        // And the server's answer still goes out.
        server.write_all(b"ok").await.unwrap();
        let mut answer = [0u8; 2];
        client.read_exact(&mut answer).await.unwrap();
        assert_eq!(&answer, b"ok");
    }
}
