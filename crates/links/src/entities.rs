//! HTML character references in attribute values and sitemap text: numeric ones (`&#38;`,
//! `&#x26;`) and the named ones that occur in URLs. A named reference outside the table is
//! left as written, as browsers do with text that only looks like one.

use std::borrow::Cow;

/// Named references a URL may contain, and the few others common in attribute text.
const NAMED: &[(&str, char)] = &[
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("nbsp", '\u{a0}'),
    ("sol", '/'),
    ("colon", ':'),
    ("quest", '?'),
    ("equals", '='),
    ("num", '#'),
    ("percnt", '%'),
    ("plus", '+'),
    ("comma", ','),
    ("period", '.'),
    ("lowbar", '_'),
    ("hyphen", '-'),
    ("dash", '-'),
    ("tilde", '~'),
    ("excl", '!'),
    ("dollar", '$'),
    ("semi", ';'),
    ("commat", '@'),
    ("lpar", '('),
    ("rpar", ')'),
    ("lsqb", '['),
    ("rsqb", ']'),
    ("lbrack", '['),
    ("rbrack", ']'),
    ("Tab", '\t'),
    ("NewLine", '\n'),
];

/// `text` with its character references decoded. `&amp` without its `;` (legacy pages) is
/// decoded too, unless a letter, digit or `=` follows (`?a=1&ampb=2` stays as it is, as the
/// HTML spec says for attributes).
pub fn decode(text: &str) -> Cow<'_, str> {
    if !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match reference(rest) {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Where, in `raw`, the character that starts at byte `decoded` of `decode(raw)` was written:
/// a reference counts as its whole text. Past the end, `raw.len()`.
pub fn raw_offset(raw: &str, decoded: usize) -> usize {
    let (mut at, mut out) = (0, 0);
    while out < decoded && at < raw.len() {
        let (written, read) = match raw[at..].starts_with('&') {
            true => reference(&raw[at..]).map_or((1, 1), |(c, len)| (c.len_utf8(), len)),
            false => {
                let len = raw[at..].chars().next().map_or(1, char::len_utf8);
                (len, len)
            }
        };
        out += written;
        at += read;
    }
    at
}

/// The character `text` (starting with `&`) refers to, and the reference's length.
fn reference(text: &str) -> Option<(char, usize)> {
    let body = &text[1..];
    if let Some(number) = body.strip_prefix('#') {
        let (digits, radix, skip) = match number.strip_prefix(['x', 'X']) {
            Some(hex) => (hex, 16, 2),
            None => (number, 10, 1),
        };
        let len = digits
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let value = u32::from_str_radix(&digits[..len], radix).ok()?;
        let semicolon = usize::from(digits[len..].starts_with(';'));
        let c = char::from_u32(value)
            .filter(|&c| c != '\0')
            .unwrap_or('\u{fffd}');
        return Some((c, 1 + skip + len + semicolon));
    }
    let name_len = body.bytes().take_while(u8::is_ascii_alphanumeric).count();
    let name = &body[..name_len];
    if body[name_len..].starts_with(';') {
        let &(_, c) = NAMED.iter().find(|(n, _)| *n == name)?;
        return Some((c, name_len + 2));
    }
    let next = body[3.min(body.len())..].bytes().next();
    let bare_amp =
        body.starts_with("amp") && !next.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'=');
    bare_amp.then_some(('&', 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_and_named_references_are_decoded() {
        assert_eq!(decode("a?x=1&amp;y=2"), "a?x=1&y=2");
        assert_eq!(decode("&#47;p&#x2F;q&#X2f;"), "/p/q/");
        assert_eq!(decode("a&quot;b&lt;&gt;"), "a\"b<>");
        assert_eq!(decode("plain"), "plain");
    }

    #[test]
    fn what_only_looks_like_a_reference_stays() {
        assert_eq!(decode("a&b"), "a&b");
        assert_eq!(decode("x&unknown;y"), "x&unknown;y");
        assert_eq!(decode("?a=1&ampb=2"), "?a=1&ampb=2");
        assert_eq!(decode("?a=1&amp"), "?a=1&");
        assert_eq!(decode("&#0;"), "\u{fffd}");
        assert_eq!(decode("&#;"), "&#;");
    }

    #[test]
    fn a_decoded_offset_maps_back_to_where_it_was_written() {
        let raw = "a&amp;b&#233;c&x";
        assert_eq!(decode(raw), "a&b\u{e9}c&x");
        // a, &, b, é (two bytes), c, &, x
        let starts = [(0, 0), (1, 1), (2, 6), (3, 7), (5, 13), (6, 14), (7, 15)];
        for (decoded, written) in starts {
            assert_eq!(raw_offset(raw, decoded), written, "byte {decoded}");
        }
        assert_eq!(raw_offset(raw, 99), raw.len());
        assert_eq!(raw_offset("plain", 3), 3);
    }
}
