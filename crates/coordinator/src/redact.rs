//! Credentials never print: a URL loses its `user:password@` before it is shown.

use std::borrow::Cow;

/// `url` without the user name and password of its authority
/// (`https://user:pw@host/a@b` is printed `https://host/a@b`); text without `://` is returned as
/// is. Textual, so that it works on any stored string, parsable or not: the authority ends at
/// the first `/`, `\`, `?` or `#`, and its userinfo at its last `@`, as URL parsers read it.
pub fn strip_userinfo(url: &str) -> Cow<'_, str> {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return Cow::Borrowed(url);
    };
    let rest = &url[start..];
    let authority = &rest[..rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len())];
    match authority.rfind('@') {
        Some(at) => Cow::Owned(format!("{}{}", &url[..start], &rest[at + 1..])),
        None => Cow::Borrowed(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_password_are_stripped() {
        assert_eq!(
            strip_userinfo("https://u:pw@x.example/a"),
            "https://x.example/a"
        );
        assert_eq!(
            strip_userinfo("http://u@x.example:8080"),
            "http://x.example:8080"
        );
        assert_eq!(
            strip_userinfo("https://a:b@c@x.example/"),
            "https://x.example/"
        );
        assert_eq!(strip_userinfo("mysql://u:pw@db/crawl"), "mysql://db/crawl");
    }

    #[test]
    fn an_at_sign_after_the_authority_is_kept() {
        for url in [
            "https://x.example/@user",
            "https://x.example?to=a@b",
            "https://x.example#a@b",
            "./list@2026.txt",
            "-",
        ] {
            assert!(
                matches!(strip_userinfo(url), Cow::Borrowed(u) if u == url),
                "{url}"
            );
        }
    }
}
