//! The bad-TLS hosts: `openssl s_server` on each one's address, port 443 (no TLS library in
//! the tests' dependencies), with a self-signed certificate or one that a trusted CA issued
//! for another name. The CA is trusted through `SSL_CERT_FILE` (the system's roots plus it),
//! which both tools read: a wrong-name failure is then the name's fault, not the issuer's.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::world::{HostKind, World, SUFFIX};

pub struct TlsHosts {
    servers: Vec<Child>,
    /// The system's roots and the bench's CA: what `SSL_CERT_FILE` names for the tools.
    pub bundle: PathBuf,
}

impl Drop for TlsHosts {
    fn drop(&mut self) {
        for server in &mut self.servers {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}

/// Makes the certificates in `dir` and starts a server for every bad-TLS host of `world`.
pub fn spawn_tls_hosts(world: &World, dir: &Path) -> TlsHosts {
    let file = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let key = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &key[..],
            &["-days", "2", "-subj", "/CN=webbench CA"][..],
        ]
        .concat(),
        &[("-keyout", file("ca.key")), ("-out", file("ca.pem"))],
    );
    let self_signed = format!("subjectAltName=DNS:*.{SUFFIX}");
    openssl(
        &[
            &["req", "-x509"][..],
            &key[..],
            &["-days", "2", "-subj", "/CN=self-signed"][..],
        ]
        .concat(),
        &[
            ("-addext", self_signed),
            ("-keyout", file("self.key")),
            ("-out", file("self.pem")),
        ],
    );
    openssl(
        &[&["req"][..], &key[..], &["-subj", "/CN=elsewhere"][..]].concat(),
        &[("-keyout", file("wrong.key")), ("-out", file("wrong.csr"))],
    );
    std::fs::write(
        dir.join("wrong.ext"),
        format!("subjectAltName=DNS:elsewhere.{SUFFIX}\n"),
    )
    .expect("write the extension file");
    openssl(
        &["x509", "-req", "-days", "2", "-CAcreateserial"],
        &[
            ("-in", file("wrong.csr")),
            ("-CA", file("ca.pem")),
            ("-CAkey", file("ca.key")),
            ("-extfile", file("wrong.ext")),
            ("-out", file("wrong.pem")),
        ],
    );
    let mut bundle = std::fs::read("/etc/ssl/certs/ca-certificates.crt").unwrap_or_default();
    bundle.extend(std::fs::read(dir.join("ca.pem")).expect("the CA certificate"));
    let bundle_path = dir.join("bundle.pem");
    std::fs::write(&bundle_path, bundle).expect("write the CA bundle");
    let servers = world
        .hosts
        .iter()
        .filter(|h| h.kind.is_tls())
        .map(|h| {
            let pair = if h.kind == HostKind::SelfSigned {
                "self"
            } else {
                "wrong"
            };
            Command::new("openssl")
                .args(["s_server", "-quiet", "-www", "-accept"])
                .arg(format!("{}:443", h.ip))
                .args(["-cert", &file(&format!("{pair}.pem"))])
                .args(["-key", &file(&format!("{pair}.key"))])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start openssl s_server")
        })
        .collect();
    TlsHosts {
        servers,
        bundle: bundle_path,
    }
}

fn openssl(args: &[&str], files: &[(&str, String)]) {
    let mut cmd = Command::new("openssl");
    cmd.args(args);
    for (flag, value) in files {
        cmd.arg(flag).arg(value);
    }
    let out = cmd.output().expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
