//! Characters that print as nothing: whitespace, control characters, and format characters such
//! as the BOM (U+FEFF), the zero-width space (U+200B) and the word joiner (U+2060), which copy
//! and paste, editors and concatenated files leave around lines.

/// Whether `c` prints as nothing: Unicode whitespace, a control character, or a
/// Default_Ignorable_Code_Point (Unicode's characters that render invisibly when unsupported).
pub fn is_invisible(c: char) -> bool {
    c.is_whitespace() || c.is_control() || is_default_ignorable(c)
}

/// Unicode 15's `Default_Ignorable_Code_Point` (DerivedCoreProperties.txt).
fn is_default_ignorable(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}'..='\u{1160}' | '\u{17B4}'..='\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{FFF0}'..='\u{FFF8}' | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// `bytes` without the invisible characters it starts with, read as UTF-8 up to the first
/// invalid byte: what a line shows first, even when the rest of it is not UTF-8.
pub fn trim_start(bytes: &[u8]) -> &[u8] {
    let valid = bytes.utf8_chunks().next().map_or("", |chunk| chunk.valid());
    let visible = valid.trim_start_matches(is_invisible);
    &bytes[valid.len() - visible.len()..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_zero_width_and_joiners_are_invisible() {
        for c in [
            '\u{feff}',
            '\u{200b}',
            '\u{2060}',
            '\u{200d}',
            '\u{a0}',
            '\t',
            '\0',
            '\u{e0001}',
        ] {
            assert!(is_invisible(c), "{c:?}");
        }
        for c in ['a', '#', '/', 'é', '\u{e000}'] {
            assert!(!is_invisible(c), "{c:?}");
        }
    }

    #[test]
    fn leading_invisible_characters_are_trimmed_before_invalid_bytes() {
        assert_eq!(trim_start("\u{feff}\u{200b} # c".as_bytes()), b"# c");
        assert_eq!(trim_start(b"\xEF\xBB\xBF#\xFF"), b"#\xFF");
        assert_eq!(trim_start(b"  \xFF x"), b"\xFF x");
        assert_eq!(trim_start(b""), b"");
    }
}
