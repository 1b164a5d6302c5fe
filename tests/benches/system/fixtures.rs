//! What the bench crawls: the URL list, and the HTTP server child that answers it.
//!
//! URL i is on host i % 1000; its page kind comes from a hash of i, so kinds are independent
//! of hosts and evenly spread along the list. The server is one listener per loopback host,
//! all on one port, each serving `crawler_tests::site` (pages that answer as their path says).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::Path;

use crawler_tests::site::Page;

use crawler_tests::bench::{host, raise_fd_limit, HOSTS};

/// How many URLs of a list should end alive and dead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    pub alive: i64,
    pub dead: i64,
}

impl Expected {
    pub fn total(&self) -> usize {
        (self.alive + self.dead) as usize
    }
}

/// 10% dead, 5% redirecting (to an alive page), 1% slow (300 ms), the rest alive.
pub fn page(i: usize) -> Page {
    match mix(i as u64) % 100 {
        0..10 => Page::Dead,
        10..15 => Page::Redirect,
        15 => Page::Slow,
        _ => Page::Alive,
    }
}

pub fn url(i: usize, port: u16) -> String {
    format!("http://{}:{port}/{}/{i}", host(i % HOSTS), page(i).name())
}

/// Writes the URLs of `range`, one a line, to `path`.
pub fn write_list(path: &Path, range: Range<usize>, port: u16) -> Expected {
    let mut out = BufWriter::new(File::create(path).expect("create the URL list"));
    let mut expected = Expected::default();
    for i in range {
        writeln!(out, "{}", url(i, port)).expect("write the URL list");
        match page(i) {
            Page::Dead => expected.dead += 1,
            _ => expected.alive += 1,
        }
    }
    out.flush().expect("write the URL list");
    expected
}

/// splitmix64's finalizer: a cheap, well-mixed hash.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The server child's life: binds, prints `READY <port>`, then serves until killed.
pub fn serve() {
    raise_fd_limit();
    let runtime = tokio::runtime::Runtime::new().expect("server runtime");
    runtime.block_on(async {
        let listeners = crawler_tests::bench::bind_all().await;
        let port = listeners[0].local_addr().unwrap().port();
        println!("READY {port}");
        std::io::stdout().flush().unwrap();
        for listener in listeners {
            tokio::spawn(crawler_tests::site::serve(listener));
        }
        std::future::pending::<()>().await;
    });
}
