//! Text hygiene shared by every layer: what a caller or a third party wrote is never echoed
//! unbounded, and never carries control characters.

/// How much of a caller's value an error message may quote.
pub const QUOTE_LIMIT: usize = 40;

/// Quotes a caller's value for an error message: control characters removed, cut to
/// [`QUOTE_LIMIT`] characters (an ellipsis marks the cut), wrapped in double quotes.
pub fn quote(value: &str) -> String {
    let clean = strip_controls(value);
    let mut out: String = clean.chars().take(QUOTE_LIMIT).collect();
    if clean.chars().count() > QUOTE_LIMIT {
        out.push('…');
    }
    format!("\"{out}\"")
}

/// Removes control and format characters (C0, C1, bidi overrides, zero-width joiners) and turns
/// line and paragraph separators into spaces, so that text from outside reads as plain data.
pub fn strip_controls(value: &str) -> String {
    value
        .chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' | '\u{2028}' | '\u{2029}' => Some(' '),
            c if c.is_control() => None,
            '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' => None,
            '\u{2066}'..='\u{2069}' | '\u{FEFF}' => None,
            c => Some(c),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_is_cut_to_forty_characters() {
        let quoted = quote(&"x".repeat(100));
        assert_eq!(quoted, format!("\"{}…\"", "x".repeat(40)));
    }

    #[test]
    fn a_short_value_is_quoted_whole() {
        assert_eq!(quote("abc"), "\"abc\"");
    }

    #[test]
    fn control_characters_are_removed_and_newlines_become_spaces() {
        assert_eq!(strip_controls("a\u{0007}b\nc\u{202E}d"), "ab cd");
    }
}
