//! Text hygiene shared by every layer: what a caller or a third party wrote is never echoed
//! unbounded, and never carries control characters.

/// How much of a caller's value an error message may quote.
pub const QUOTE_LIMIT: usize = 40;

/// The longest name a person gives: a place of a plan, a bed of their own, a place searched
/// for (counted after the gate, so characters that draw nothing never count).
pub const NAME_MAX_CHARS: usize = 200;

/// The longest link a person gives (a bed's booking page), in bytes.
pub const LINK_MAX_BYTES: usize = 2000;

/// A name through the gate: control and invisible characters removed, trimmed; `None` when
/// nothing is left or more than [`NAME_MAX_CHARS`] characters are.
pub fn visible_name(raw: &str) -> Option<String> {
    let name = strip_controls(raw).trim().to_owned();
    let count = name.chars().count();
    (count > 0 && count <= NAME_MAX_CHARS).then_some(name)
}

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

/// A caller's number for an error message, never longer than [`QUOTE_LIMIT`]: plain while
/// short (`500`, `2.5`), in scientific notation when huge or tiny (`1e308`).
pub fn number(value: f64) -> String {
    if !value.is_finite() {
        return "a number out of range".into();
    }
    let plain = if value == 0.0 {
        "0".to_owned()
    } else {
        format!("{value}")
    };
    if plain.chars().count() <= 16 {
        return plain;
    }
    let sci = format!("{value:e}");
    // 17 significant digits at most: `-1.2345678901234567e-308` is 24 characters.
    sci.chars().take(QUOTE_LIMIT).collect()
}

/// Removes control characters (Unicode category Cc) and every invisible character
/// ([`etappe_text::is_invisible`]: default-ignorable code points, variation selectors that can
/// spell hidden instructions, bidi overrides, zero-width characters, the tag block) and turns line and paragraph separators into spaces,
/// so that text from outside reads as plain data. This is the one gate every caller's and
/// third party's text passes.
pub fn strip_controls(value: &str) -> String {
    value
        .chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' | '\u{2028}' | '\u{2029}' => Some(' '),
            c if c.is_control() || is_format(c) => None,
            c => Some(c),
        })
        .collect()
}

/// Whether `c` draws nothing: the one rule of `etappe_text` (default-ignorable code points,
/// variation selectors, format characters, the tag block).
pub fn is_format(c: char) -> bool {
    etappe_text::is_invisible(c)
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
    fn numbers_in_messages_stay_short() {
        assert_eq!(number(500.0), "500");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(1e308), "1e308");
        assert!(number(1.234_567_890_123_456_7e-300).chars().count() <= QUOTE_LIMIT);
        assert!(number(f64::MAX).chars().count() <= QUOTE_LIMIT);
    }

    #[test]
    fn a_short_value_is_quoted_whole() {
        assert_eq!(quote("abc"), "\"abc\"");
    }

    #[test]
    fn hidden_instructions_in_tag_characters_and_other_format_characters_are_removed() {
        // "ignore" spelled in Unicode tag characters, between visible words.
        let tags: String = "ignore"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap_or(' '))
            .collect();
        let hostile =
            format!("Passau{tags}\u{E007F} \u{061C}Linz\u{180E}\u{00AD}\u{FFF9}x\u{FFFB}\u{200D}");
        assert_eq!(strip_controls(&hostile), "Passau Linzx");
        for c in [
            '\u{00AD}',
            '\u{061C}',
            '\u{180E}',
            '\u{FFF9}',
            '\u{FFFA}',
            '\u{FFFB}',
            '\u{E0001}',
            '\u{E0020}',
            '\u{E007F}',
        ] {
            assert!(is_format(c), "{c:?}");
        }
        assert_eq!(strip_controls("Zürich – Genève ✓"), "Zürich – Genève ✓");
    }

    #[test]
    fn control_characters_are_removed_and_newlines_become_spaces() {
        assert_eq!(strip_controls("a\u{0007}b\nc\u{202E}d"), "ab cd");
    }
}
