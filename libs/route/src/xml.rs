//! XML text escaping for the GPX writers (the export's and the synthetic test routes').
//!
//! GPX is XML 1.0, which forbids most control characters outright (even as character
//! references), so user-entered names are cleaned before they are escaped.

/// Appends `text` to `out` as XML character data that is safe in both element content and
/// attribute values.
///
/// * Tab, newline and carriage return become a space: they are legal XML, but names are
///   single-line labels on a device screen and attribute normalisation would mangle them
///   anyway.
/// * All other control characters (C0, DEL, C1) and the non-characters U+FFFE/U+FFFF are
///   dropped: XML 1.0 forbids C0 and U+FFFE/F, and C1 is "discouraged" and never intended
///   in a place name.
/// * `& < > " '` are replaced by their predefined entities, so the same routine serves
///   text and attributes.
pub fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            '\u{FFFE}' | '\u{FFFF}' => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str) -> String {
        let mut out = String::new();
        push_escaped(&mut out, s);
        out
    }

    #[test]
    fn escapes_markup_characters() {
        assert_eq!(esc(r#"a<b>&"c'"#), "a&lt;b&gt;&amp;&quot;c&apos;");
    }

    #[test]
    fn strips_controls_keeps_unicode() {
        assert_eq!(esc("A\u{0}B\u{7}C\u{1b}D\u{7f}E\u{85}F\u{FFFF}"), "ABCDEF");
        assert_eq!(esc("Köln\tBonn\r\nRhein ☕ 🚲"), "Köln Bonn  Rhein ☕ 🚲");
    }
}
