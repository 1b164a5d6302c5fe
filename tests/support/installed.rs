//! What a test says when a Debian package it needs is missing.

/// The message of a test that needs a Debian package which is not installed: it names the
/// README's test command, which installs every package the suite needs (`scripts/test`).
pub fn not_installed(what: &str, package: &str) -> String {
    format!(
        "{what} is not installed: run ./scripts/test (the README's test command), which \
         installs Debian's {package} and the suite's other packages, or apt-get install {package}"
    )
}
