//! A minimal DNS client for `--dns-server`: A and AAAA queries over UDP (RFC 1035), asked
//! together, each tried twice. What it cannot read is "no address", which is what a name
//! without a usable answer is.
//!
//! It exists so an operator can point the fleet at a resolver of their own (and the tests and
//! benches at a local one that counts queries); the system resolver is the default.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use tokio::net::UdpSocket;

/// How long one query waits for its answer.
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);
/// Queries sent per record type before giving up.
const TRIES: usize = 2;
const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;

/// The addresses of `host` according to `server`: empty when it has none, says the name does
/// not exist, fails, or does not answer.
pub(crate) async fn lookup(server: SocketAddr, host: &str) -> Vec<IpAddr> {
    let name = host.trim_end_matches('.');
    let (v4, v6) = tokio::join!(ask(server, name, TYPE_A), ask(server, name, TYPE_AAAA));
    v4.into_iter().chain(v6).collect()
}

async fn ask(server: SocketAddr, name: &str, qtype: u16) -> Vec<IpAddr> {
    let Some(query) = query(name, qtype, rand::random()) else {
        return Vec::new();
    };
    let bind: SocketAddr = match server {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let Ok(socket) = UdpSocket::bind(bind).await else {
        return Vec::new();
    };
    if socket.connect(server).await.is_err() {
        return Vec::new();
    }
    let mut buf = [0u8; 1500];
    for _ in 0..TRIES {
        if socket.send(&query).await.is_err() {
            return Vec::new();
        }
        let Ok(Ok(n)) = tokio::time::timeout(QUERY_TIMEOUT, socket.recv(&mut buf)).await else {
            continue;
        };
        if let Some(ips) = answers(&buf[..n], &query[..2], qtype) {
            return ips;
        }
    }
    Vec::new()
}

/// A query for `name`'s records of `qtype`, recursion desired; `None` for a name that cannot
/// be encoded (a label empty or longer than 63 bytes).
fn query(name: &str, qtype: u16, id: u16) -> Option<Vec<u8>> {
    let mut q = Vec::with_capacity(name.len() + 18);
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.') {
        if label.is_empty() || label.len() > 63 {
            return None;
        }
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&1u16.to_be_bytes());
    Some(q)
}

/// The addresses of type `qtype` in `reply`, or `None` when it is not the answer to the
/// query whose id is `id` (then another reply is waited for).
fn answers(reply: &[u8], id: &[u8], qtype: u16) -> Option<Vec<IpAddr>> {
    if reply.len() < 12 || &reply[..2] != id || reply[2] & 0x80 == 0 {
        return None;
    }
    let rcode = reply[3] & 0x0f;
    if rcode != 0 {
        return Some(Vec::new());
    }
    let count = |at: usize| u16::from_be_bytes([reply[at], reply[at + 1]]) as usize;
    let (questions, records) = (count(4), count(6));
    let mut at = 12;
    for _ in 0..questions {
        at = skip_name(reply, at)? + 4;
    }
    let mut ips = Vec::new();
    for _ in 0..records {
        at = skip_name(reply, at)?;
        let header = reply.get(at..at + 10)?;
        let rtype = u16::from_be_bytes([header[0], header[1]]);
        let len = u16::from_be_bytes([header[8], header[9]]) as usize;
        let data = reply.get(at + 10..at + 10 + len)?;
        at += 10 + len;
        match (rtype, data.len()) {
            (TYPE_A, 4) if qtype == TYPE_A => {
                ips.push(IpAddr::from(<[u8; 4]>::try_from(data).ok()?));
            }
            (TYPE_AAAA, 16) if qtype == TYPE_AAAA => {
                ips.push(IpAddr::from(<[u8; 16]>::try_from(data).ok()?));
            }
            _ => {} // a CNAME on the way, or anything else
        }
    }
    Some(ips)
}

/// The offset after the name at `at`: labels, ended by a zero or a compression pointer.
fn skip_name(msg: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *msg.get(at)?;
        match len {
            0 => return Some(at + 1),
            l if l & 0xc0 == 0xc0 => return Some(at + 2),
            l => at += 1 + l as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer to `query` with `records` (type, data), the name as a pointer to the question.
    fn reply(query: &[u8], rcode: u8, records: &[(u16, &[u8])]) -> Vec<u8> {
        let mut r = query.to_vec();
        r[2] = 0x81;
        r[3] = 0x80 | rcode;
        r[6..8].copy_from_slice(&(records.len() as u16).to_be_bytes());
        for (rtype, data) in records {
            r.extend_from_slice(&[0xc0, 12]);
            r.extend_from_slice(&rtype.to_be_bytes());
            r.extend_from_slice(&[0, 1, 0, 0, 0, 60]);
            r.extend_from_slice(&(data.len() as u16).to_be_bytes());
            r.extend_from_slice(data);
        }
        r
    }

    #[test]
    fn a_query_encodes_the_name_as_labels() {
        let q = query("a.example", TYPE_A, 0x1234).unwrap();
        assert_eq!(&q[..2], &[0x12, 0x34]);
        assert_eq!(&q[12..], b"\x01a\x07example\x00\x00\x01\x00\x01");
        assert!(query("a..example", TYPE_A, 1).is_none());
    }

    #[test]
    fn addresses_are_read_past_a_cname_and_errors_are_no_address() {
        let q = query("a.example", TYPE_A, 7).unwrap();
        let r = reply(&q, 0, &[(5, b"\x01b\x00"), (TYPE_A, &[127, 0, 0, 9])]);
        assert_eq!(
            answers(&r, &q[..2], TYPE_A),
            Some(vec![IpAddr::from([127, 0, 0, 9])])
        );
        let nx = reply(&q, 3, &[]);
        assert_eq!(answers(&nx, &q[..2], TYPE_A), Some(vec![]));
        let other = reply(&query("a.example", TYPE_A, 8).unwrap(), 0, &[]);
        assert_eq!(answers(&other, &q[..2], TYPE_A), None, "another query's");
        assert_eq!(answers(&r[..20], &q[..2], TYPE_A), None, "truncated");
    }

    #[tokio::test]
    async fn a_server_that_never_answers_gives_no_address() {
        let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let server = silent.local_addr().unwrap();
        tokio::time::pause();
        assert!(lookup(server, "a.example").await.is_empty());
    }
}
