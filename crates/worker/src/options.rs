//! The values of the request options (`--header`, `--basic-auth`, `--accept`, `--accept-host`,
//! `--ca-cert`, `--cookie-jar`, `--contact`), checked while clap parses so that a bad one is a
//! usage error naming its option, before any database connection.
//!
//! Values that may hold a secret (a header may be a token, `--basic-auth` holds a password)
//! are parsed by [`quiet`]: its errors say what is wrong and never quote the value.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::time::SystemTime;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use reqwest::header::{HeaderName, HeaderValue};
use reqwest::Certificate;
use rustls::pki_types::{pem::PemObject, CertificateDer};

use crawler_check::{BasicAuth, CookieJar, StatusSet};

/// A value parser for secrets: like `value_parser = parse`, but its errors name the option and
/// not the value.
pub fn quiet<T>(parse: fn(&str) -> Result<T, String>) -> Quiet<T> {
    Quiet(parse)
}

/// See [`quiet`].
#[derive(Clone)]
pub struct Quiet<T>(fn(&str) -> Result<T, String>);

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Quiet<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let option = arg.map(ToString::to_string).unwrap_or_default();
        let why = match value.to_str() {
            Some(text) => match (self.0)(text) {
                Ok(value) => return Ok(value),
                Err(why) => why,
            },
            None => "not UTF-8".to_owned(),
        };
        let message = format!("invalid value for '{option}' (not shown): {why}\n");
        Err(clap::Error::raw(ErrorKind::ValueValidation, message).with_cmd(cmd))
    }
}

/// A host as politeness sees it, lower case and without a port: `intranet.example`,
/// `10.0.0.7`, `[::1]`.
pub fn parse_host(text: &str) -> Result<String, String> {
    let host = text.trim().to_ascii_lowercase();
    if host.is_empty() || (host.contains(['/', ':', '@']) && !host.starts_with('[')) {
        return Err(format!(
            "{host:?} is not a host name (no scheme, port or path)"
        ));
    }
    Ok(host)
}

/// `--header 'NAME: VALUE'`. The value is marked sensitive, so that no log prints it.
pub fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or("expected NAME: VALUE (no colon)")?;
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("{:?} is not a header name", name.trim()))?;
    let mut value = HeaderValue::from_str(value.trim())
        .map_err(|_| format!("the value of {name} holds a control character"))?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// `--host-header 'HOST=NAME: VALUE'`: a header for one host (lower case, no port). The value
/// is marked sensitive, as `--header`'s.
pub fn parse_host_header(text: &str) -> Result<(String, (HeaderName, HeaderValue)), String> {
    let (host, header) = text
        .split_once('=')
        .ok_or("expected HOST=NAME: VALUE, like api.example=Authorization: Bearer TOKEN")?;
    Ok((parse_host(host)?, parse_header(header)?))
}

/// `--basic-auth HOST=USER:PASSWORD`; the password may hold `:` and `=`.
pub fn parse_basic_auth(text: &str) -> Result<(String, BasicAuth), String> {
    let form = "expected HOST=USER:PASSWORD";
    let (host, credentials) = text.split_once('=').ok_or(form)?;
    let (user, password) = credentials.split_once(':').ok_or(form)?;
    if user.is_empty() {
        return Err(format!("{form} (no user)"));
    }
    Ok((parse_host(host)?, BasicAuth::new(user, password)))
}

/// `--accept-host HOST=CODES`, codes as `--accept` takes them.
pub fn parse_accept_host(text: &str) -> Result<(String, StatusSet), String> {
    let (host, codes) = text
        .split_once('=')
        .ok_or("expected HOST=CODES, like intranet.example=403,429")?;
    Ok((parse_host(host)?, codes.parse()?))
}

/// The certificates of a `--ca-cert` file.
#[derive(Clone, Debug)]
pub struct CaBundle(pub Vec<Certificate>);

/// `--ca-cert FILE`: one or more PEM certificates, each one checked as a trust anchor.
pub fn parse_ca_cert(path: &str) -> Result<CaBundle, String> {
    let pem = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    let ders = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not PEM: {e}"))?;
    if ders.is_empty() {
        return Err("no PEM certificate in it".into());
    }
    let mut roots = rustls::RootCertStore::empty();
    ders.iter()
        .map(|der| {
            let bad = |e: &dyn std::fmt::Display| format!("a bad certificate: {e}");
            roots.add(der.clone()).map_err(|e| bad(&e))?;
            Certificate::from_der(der).map_err(|e| bad(&e))
        })
        .collect::<Result<_, _>>()
        .map(CaBundle)
}

/// `--contact URL`: where site operators can reach whoever runs the crawl, put in the
/// User-Agent (`http`, `https` or `mailto`).
pub fn parse_contact(text: &str) -> Result<String, String> {
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https" | "mailto") => Ok(url.into()),
        _ => Err("expected an http, https or mailto URL".into()),
    }
}

/// `--user-agent`: anything a header can carry.
pub fn parse_user_agent(text: &str) -> Result<String, String> {
    HeaderValue::from_str(text)
        .map(|_| text.to_owned())
        .map_err(|_| "a user agent cannot hold control characters".into())
}

/// Reads `--cookie-jar FILE`; an error names the file and the line.
pub fn read_cookie_jar(path: &str) -> Result<CookieJar, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--cookie-jar: cannot read {path}: {e}"))?;
    CookieJar::parse(&text, SystemTime::now())
        .map_err(|(line, why)| format!("--cookie-jar: {path}:{line}: {why}"))
}

/// The pairs of a repeatable `HOST=…` option by host; a host given twice is refused.
pub fn by_host<T>(option: &str, pairs: Vec<(String, T)>) -> Result<HashMap<String, T>, String> {
    let mut map = HashMap::new();
    for (host, value) in pairs {
        if map.contains_key(&host) {
            return Err(format!("{option}: {host} is given twice"));
        }
        map.insert(host, value);
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_is_a_name_a_colon_and_a_value() {
        let (name, value) = parse_header("X-Token:  abc: def ").unwrap();
        assert_eq!(
            (name.as_str(), value.to_str().unwrap()),
            ("x-token", "abc: def")
        );
        assert!(value.is_sensitive());
        assert!(parse_header("X-Empty:").is_ok());
        for bad in ["no colon", ": value", "Bad Name: v", "X: a\u{7}b"] {
            assert!(parse_header(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_host_header_is_a_host_and_a_header() {
        let (host, (name, value)) =
            parse_host_header("API.Example=Authorization: Bearer a=b").unwrap();
        assert_eq!(
            (host.as_str(), name.as_str(), value.to_str().unwrap()),
            ("api.example", "authorization", "Bearer a=b")
        );
        assert!(value.is_sensitive());
        for bad in ["no-equals", "=X: y", "api.example=no colon"] {
            assert!(parse_host_header(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn basic_auth_is_per_host_and_its_password_may_hold_colons() {
        let (host, auth) = parse_basic_auth("Intranet.Example=op:p:w=d").unwrap();
        assert_eq!(host, "intranet.example");
        assert_eq!(auth, BasicAuth::new("op", "p:w=d"));
        for bad in [
            "op:pw",
            "a.example=oppw",
            "a.example=:pw",
            "a.example:8080=op:pw",
        ] {
            let error = parse_basic_auth(bad).unwrap_err();
            assert!(!error.contains("pw"), "{bad:?}: {error}");
        }
    }

    #[test]
    fn accept_host_takes_a_host_and_a_status_list() {
        let (host, codes) = parse_accept_host("A.example=403,429").unwrap();
        assert_eq!(host, "a.example");
        assert_eq!(codes.to_string(), "403,429");
        assert!(parse_accept_host("a.example").is_err());
        assert!(parse_accept_host("a.example=4xx").is_err());
        assert!(parse_accept_host("https://a.example=403").is_err());
    }

    #[test]
    fn a_contact_is_a_url_to_reach_someone() {
        assert!(parse_contact("https://ops.example/crawler").is_ok());
        assert_eq!(
            parse_contact("mailto:ops@example.com").as_deref(),
            Ok("mailto:ops@example.com")
        );
        for bad in ["ops@example.com", "ftp://ops.example/", "https://a b/"] {
            assert!(parse_contact(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_ca_file_gives_each_of_its_certificates() {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../check/tests/check/fixtures/cert.pem"
        );
        assert_eq!(parse_ca_cert(fixture).unwrap().0.len(), 1);
    }

    #[test]
    fn a_ca_file_without_a_good_certificate_is_refused() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let path = file.path().to_str().unwrap().to_owned();
        assert!(parse_ca_cert(&path)
            .unwrap_err()
            .contains("no PEM certificate"));
        let garbage = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        std::io::Write::write_all(&mut file, garbage).unwrap();
        assert!(parse_ca_cert(&path)
            .unwrap_err()
            .contains("a bad certificate"));
        assert!(parse_ca_cert("/nonexistent/ca.pem")
            .unwrap_err()
            .starts_with("cannot read it"));
    }

    #[test]
    fn a_host_given_twice_is_refused() {
        let pairs = vec![("a.example".to_owned(), 1), ("a.example".to_owned(), 2)];
        let error = by_host("--accept-host", pairs).unwrap_err();
        assert_eq!(error, "--accept-host: a.example is given twice");
    }
}
