//! A tiny authoritative DNS server for tests: A records, NXDOMAIN, SERVFAIL and a name that never
//! answers, over UDP and TCP on one address, counting the queries each name gets.
//!
//! The wire format is written by hand (RFC 1035 §4): one question per query, no compression in
//! the question, answers pointing back at it. What it answers:
//! - a name with [`Record::A`]: an A query gets the address (TTL [`TTL`]); any other type
//!   (AAAA, say) gets NOERROR with no answers, as a name with only an IPv4 address does;
//! - [`Record::NxDomain`] and any name not in the map: NXDOMAIN;
//! - [`Record::ServFail`]: a SERVFAIL;
//! - [`Record::Silent`]: nothing, ever (UDP), or a connection held open unanswered (TCP).
//!
//! Names are matched case-insensitively, with or without the trailing dot; the question is
//! echoed exactly as asked (resolvers that randomize the case check it). It runs on two
//! threads of its own, so it can be started from a test with or without a tokio runtime, and
//! stops when dropped.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// The TTL of every answer: short, so a resolver that caches still asks again in a long test.
pub const TTL: u32 = 5;

/// How often the server's threads look whether it was dropped.
const POLL: Duration = Duration::from_millis(100);

/// What the server answers for a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    A(Ipv4Addr),
    NxDomain,
    ServFail,
    /// Never answers: a resolver waits out its timeout.
    Silent,
}

/// A running server. Its threads stop within [`POLL`] of its drop.
pub struct DnsServer {
    addr: SocketAddr,
    zone: Arc<Zone>,
    stop: Arc<AtomicBool>,
}

/// The records and the query counts, shared by the UDP and TCP threads.
struct Zone {
    /// Keyed by the lower-case name without its trailing dot.
    records: HashMap<String, Record>,
    /// Queries per name as [`Zone::records`] keys it (any type; names not in the map too).
    /// A mutex: one short increment per query.
    queries: Mutex<HashMap<String, usize>>,
}

impl DnsServer {
    /// Serves `records` on `addr` over UDP and TCP. With port 0, both take the same free port.
    pub fn start(addr: SocketAddr, records: HashMap<String, Record>) -> io::Result<DnsServer> {
        let (udp, tcp) = bind(addr)?;
        let zone = Arc::new(Zone {
            records: records
                .into_iter()
                .map(|(name, record)| (normalize(&name), record))
                .collect(),
            queries: Mutex::default(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let addr = udp.local_addr()?;
        udp.set_read_timeout(Some(POLL))?;
        tcp.set_nonblocking(true)?;
        let (z, s) = (zone.clone(), stop.clone());
        thread::spawn(move || serve_udp(udp, &z, &s));
        let (z, s) = (zone.clone(), stop.clone());
        thread::spawn(move || serve_tcp(tcp, z, s));
        Ok(DnsServer { addr, zone, stop })
    }

    /// The address it answers on (UDP and TCP).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many queries `name` got so far, of any type, over UDP and TCP (case-insensitive).
    pub fn queries(&self, name: &str) -> usize {
        let queries = self.zone.queries.lock().expect("queries lock poisoned");
        queries.get(&normalize(name)).copied().unwrap_or(0)
    }

    /// All queries so far, of every name.
    pub fn total_queries(&self) -> usize {
        let queries = self.zone.queries.lock().expect("queries lock poisoned");
        queries.values().sum()
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// UDP and TCP on the same address; with port 0, a port free for both (a few tries).
fn bind(addr: SocketAddr) -> io::Result<(UdpSocket, TcpListener)> {
    let mut last = None;
    for _ in 0..20 {
        let udp = UdpSocket::bind(addr)?;
        match TcpListener::bind(udp.local_addr()?) {
            Ok(tcp) => return Ok((udp, tcp)),
            Err(e) if addr.port() == 0 => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.expect("a bind error"))
}

fn normalize(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

fn serve_udp(socket: UdpSocket, zone: &Zone, stop: &AtomicBool) {
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::SeqCst) {
        let Ok((n, peer)) = socket.recv_from(&mut buf) else {
            continue;
        };
        if let Some(reply) = zone.answer(&buf[..n]) {
            let _ = socket.send_to(&reply, peer);
        }
    }
}

fn serve_tcp(listener: TcpListener, zone: Arc<Zone>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let (zone, stop) = (zone.clone(), stop.clone());
                thread::spawn(move || {
                    let _ = serve_connection(stream, &zone, &stop);
                });
            }
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Length-prefixed queries on one connection until the client closes it or the server stops.
fn serve_connection(mut stream: TcpStream, zone: &Zone, stop: &AtomicBool) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(POLL))?;
    let mut message = Vec::new();
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::SeqCst) {
        match stream.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => message.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
        while message.len() >= 2 {
            let len = usize::from(u16::from_be_bytes([message[0], message[1]]));
            if message.len() < 2 + len {
                break;
            }
            let query: Vec<u8> = message.drain(..2 + len).skip(2).collect();
            if let Some(reply) = zone.answer(&query) {
                let mut framed = (reply.len() as u16).to_be_bytes().to_vec();
                framed.extend_from_slice(&reply);
                stream.write_all(&framed)?;
            }
        }
    }
    Ok(())
}

/// A parsed question: its name (lower case, no trailing dot), type, and where it ends.
struct Question {
    name: String,
    qtype: u16,
    end: usize,
}

const TYPE_A: u16 = 1;
const CLASS_IN: u16 = 1;
const RCODE_FORMERR: u8 = 1;
const RCODE_SERVFAIL: u8 = 2;
const RCODE_NXDOMAIN: u8 = 3;
const RCODE_NOTIMP: u8 = 4;

impl Zone {
    /// The reply to one query message, or `None` to stay silent (a [`Record::Silent`] name, or
    /// bytes too short to hold a header to answer).
    fn answer(&self, query: &[u8]) -> Option<Vec<u8>> {
        if query.len() < 12 || query[2] & 0x80 != 0 {
            return None; // not even a header, or a response
        }
        let opcode = (query[2] >> 3) & 0x0f;
        let qdcount = u16::from_be_bytes([query[4], query[5]]);
        let question = match (opcode, qdcount) {
            (0, 1) => parse_question(query),
            _ => None,
        };
        let Some(question) = question else {
            let rcode = if opcode == 0 {
                RCODE_FORMERR
            } else {
                RCODE_NOTIMP
            };
            return Some(header(query, rcode, 0, 0));
        };
        *self
            .queries
            .lock()
            .expect("queries lock poisoned")
            .entry(question.name.clone())
            .or_default() += 1;
        let record = self.records.get(&question.name).copied();
        let (rcode, address) = match record {
            Some(Record::Silent) => return None,
            Some(Record::A(ip)) if question.qtype == TYPE_A => (0, Some(ip)),
            Some(Record::A(_)) => (0, None),
            Some(Record::ServFail) => (RCODE_SERVFAIL, None),
            Some(Record::NxDomain) | None => (RCODE_NXDOMAIN, None),
        };
        let mut reply = header(query, rcode, 1, u16::from(address.is_some()));
        reply.extend_from_slice(&query[12..question.end]);
        if let Some(ip) = address {
            reply.extend_from_slice(&[0xc0, 12]); // the name: a pointer to the question's
            reply.extend_from_slice(&TYPE_A.to_be_bytes());
            reply.extend_from_slice(&CLASS_IN.to_be_bytes());
            reply.extend_from_slice(&TTL.to_be_bytes());
            reply.extend_from_slice(&4u16.to_be_bytes());
            reply.extend_from_slice(&ip.octets());
        }
        Some(reply)
    }
}

/// A response header for `query`: its id, opcode and RD flag, authoritative, `rcode`.
fn header(query: &[u8], rcode: u8, qdcount: u16, ancount: u16) -> Vec<u8> {
    let mut h = Vec::with_capacity(512);
    h.extend_from_slice(&query[..2]);
    h.push(0x80 | 0x04 | (query[2] & 0x79)); // QR, AA, the opcode and RD asked
    h.push(rcode & 0x0f);
    h.extend_from_slice(&qdcount.to_be_bytes());
    h.extend_from_slice(&ancount.to_be_bytes());
    h.extend_from_slice(&[0, 0, 0, 0]); // no authority, no additional records
    h
}

/// The first question of `query`: labels from byte 12, then type and class.
fn parse_question(query: &[u8]) -> Option<Question> {
    let mut labels = Vec::new();
    let mut at = 12;
    loop {
        let len = usize::from(*query.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        if len > 63 {
            return None; // a pointer or a reserved label type: not in a question
        }
        let label = query.get(at..at + len)?;
        labels.push(String::from_utf8_lossy(label).to_ascii_lowercase());
        at += len;
    }
    let qtype = u16::from_be_bytes([*query.get(at)?, *query.get(at + 1)?]);
    query.get(at + 2..at + 4)?;
    Some(Question {
        name: labels.join("."),
        qtype,
        end: at + 4,
    })
}

/// A query for `name` of type `qtype` (1 = A, 28 = AAAA) with id `id`, recursion desired:
/// what a stub resolver sends. For tests of the server and of code that resolves through it.
pub fn query_message(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut q = id.to_be_bytes().to_vec();
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&CLASS_IN.to_be_bytes());
    q
}

/// What a reply says: its rcode and the IPv4 addresses of its A answers (pointer names only,
/// as this server writes them).
pub fn parse_reply(reply: &[u8]) -> (u8, Vec<Ipv4Addr>) {
    let rcode = reply[3] & 0x0f;
    let ancount = u16::from_be_bytes([reply[6], reply[7]]);
    let end = parse_question(reply).map_or(reply.len(), |q| q.end);
    let addresses = reply[end..]
        .chunks(16)
        .take(usize::from(ancount))
        .filter(|rr| rr.len() == 16 && rr[2..4] == TYPE_A.to_be_bytes())
        .map(|rr| Ipv4Addr::new(rr[12], rr[13], rr[14], rr[15]))
        .collect();
    (rcode, addresses)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> DnsServer {
        let records = HashMap::from([
            (
                "Alive.webbench".to_owned(),
                Record::A(Ipv4Addr::new(127, 9, 0, 1)),
            ),
            ("gone.webbench".to_owned(), Record::NxDomain),
            ("broken.webbench".to_owned(), Record::ServFail),
            ("silent.webbench.".to_owned(), Record::Silent),
        ]);
        DnsServer::start("127.0.0.1:0".parse().unwrap(), records).unwrap()
    }

    fn ask_udp(server: &DnsServer, id: u16, name: &str, qtype: u16) -> Option<(u8, Vec<Ipv4Addr>)> {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        socket
            .send_to(&query_message(id, name, qtype), server.addr())
            .unwrap();
        let mut buf = [0u8; 512];
        let n = socket.recv(&mut buf).ok()?;
        assert_eq!(
            buf[..2],
            id.to_be_bytes(),
            "the reply carries the query's id"
        );
        assert_eq!(buf[2] & 0x80, 0x80, "a response");
        Some(parse_reply(&buf[..n]))
    }

    #[test]
    fn a_raw_udp_query_resolves_each_kind_of_name() {
        let server = server();
        let ip = Ipv4Addr::new(127, 9, 0, 1);
        assert_eq!(
            ask_udp(&server, 7, "alive.webbench", 1),
            Some((0, vec![ip]))
        );
        assert_eq!(
            ask_udp(&server, 8, "aLiVe.WEBBENCH", 1),
            Some((0, vec![ip]))
        );
        assert_eq!(
            ask_udp(&server, 9, "alive.webbench", 28),
            Some((0, vec![])),
            "AAAA: no data"
        );
        assert_eq!(
            ask_udp(&server, 10, "gone.webbench", 1),
            Some((RCODE_NXDOMAIN, vec![]))
        );
        assert_eq!(
            ask_udp(&server, 11, "unknown.webbench", 1),
            Some((RCODE_NXDOMAIN, vec![]))
        );
        assert_eq!(
            ask_udp(&server, 12, "broken.webbench", 1),
            Some((RCODE_SERVFAIL, vec![]))
        );
        assert_eq!(ask_udp(&server, 13, "silent.webbench", 1), None);
        assert_eq!(server.queries("ALIVE.webbench."), 3);
        assert_eq!(server.queries("silent.webbench"), 1);
        assert_eq!(server.queries("unknown.webbench"), 1);
        assert_eq!(server.queries("never.webbench"), 0);
        assert_eq!(server.total_queries(), 7);
    }

    #[test]
    fn the_question_is_echoed_as_asked() {
        let server = server();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let query = query_message(1, "AlIvE.webbench", 1);
        socket.send_to(&query, server.addr()).unwrap();
        let mut buf = [0u8; 512];
        let n = socket.recv(&mut buf).unwrap();
        assert_eq!(
            buf[12..query.len()],
            query[12..],
            "0x20 case randomization survives"
        );
        assert_eq!(n, query.len() + 16, "one A answer");
    }

    #[test]
    fn a_tcp_query_resolves_on_the_same_port() {
        let server = server();
        let mut stream = TcpStream::connect(server.addr()).unwrap();
        for id in [1u16, 2] {
            let query = query_message(id, "alive.webbench", 1);
            let mut framed = (query.len() as u16).to_be_bytes().to_vec();
            framed.extend_from_slice(&query);
            stream.write_all(&framed).unwrap();
            let mut len = [0u8; 2];
            stream.read_exact(&mut len).unwrap();
            let mut reply = vec![0u8; usize::from(u16::from_be_bytes(len))];
            stream.read_exact(&mut reply).unwrap();
            assert_eq!(reply[..2], id.to_be_bytes());
            assert_eq!(parse_reply(&reply), (0, vec![Ipv4Addr::new(127, 9, 0, 1)]));
        }
        assert_eq!(server.queries("alive.webbench"), 2);
    }

    #[test]
    fn garbage_gets_formerr_or_nothing() {
        let server = server();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut truncated = query_message(5, "alive.webbench", 1);
        truncated.truncate(16);
        socket.send_to(&truncated, server.addr()).unwrap();
        let mut buf = [0u8; 512];
        let n = socket.recv(&mut buf).unwrap();
        assert_eq!((buf[3] & 0x0f, n), (RCODE_FORMERR, 12));
        socket.send_to(&[1, 2, 3], server.addr()).unwrap();
        assert!(socket.recv(&mut buf).is_err(), "too short to answer");
        assert_eq!(server.total_queries(), 0, "neither is a query");
    }
}
