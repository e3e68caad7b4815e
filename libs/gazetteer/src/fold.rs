//! ASCII folding of place names and queries.
//!
//! Both the indexed names and the user's query go through [`fold`], so that
//! "München", "MUNCHEN" and "munchen" compare equal. The function covers the
//! Latin-1 Supplement, Latin Extended-A, the common letters of Latin
//! Extended-B (Romanian, Pinyin, Vietnamese horn letters, Azerbaijani ə) and
//! Latin Extended Additional (Vietnamese). Other scripts are only lower-cased:
//! there is no transliteration table for them, and the data's names are
//! Latin script anyway.

/// Folds `text` into the search alphabet: lower-case ASCII letters and
/// digits (plus lower-cased non-Latin letters), words separated by exactly
/// one space, no leading or trailing space.
///
/// Punctuation, whitespace and control characters all become word breaks so
/// that "Saint-Étienne", "Saint Étienne" and "saint  etienne" fold alike.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Start "in a break" so leading separators are dropped.
    let mut pending_space = false;
    for ch in text.chars() {
        match fold_char(ch) {
            Folded::Str(s) => {
                if pending_space && !out.is_empty() {
                    out.push(' ');
                }
                pending_space = false;
                out.push_str(s);
            }
            Folded::Char(c) => {
                if pending_space && !out.is_empty() {
                    out.push(' ');
                }
                pending_space = false;
                out.push(c);
            }
            Folded::Lower(c) => {
                if pending_space && !out.is_empty() {
                    out.push(' ');
                }
                pending_space = false;
                out.extend(c.to_lowercase());
            }
            Folded::Break => pending_space = true,
            Folded::Drop => {}
        }
    }
    out
}

/// What one input character becomes.
enum Folded {
    /// A fixed ASCII replacement (one or more letters).
    Str(&'static str),
    /// A single ASCII character.
    Char(char),
    /// A letter of another script: keep it, lower-cased.
    Lower(char),
    /// A word break (punctuation, space, control character).
    Break,
    /// Nothing at all (combining marks, zero-width characters).
    Drop,
}

fn fold_char(ch: char) -> Folded {
    if ch.is_ascii() {
        return if ch.is_ascii_alphanumeric() {
            Folded::Char(ch.to_ascii_lowercase())
        } else {
            Folded::Break
        };
    }
    if let Some(s) = latin_letter(ch) {
        return Folded::Str(s);
    }
    match ch {
        // Combining diacritics: input in NFD form must fold like NFC input.
        '\u{0300}'..='\u{036F}' | '\u{1AB0}'..='\u{1AFF}' | '\u{1DC0}'..='\u{1DFF}' => Folded::Drop,
        // Zero-width space/joiners, soft hyphen, BOM: invisible, never a break.
        '\u{00AD}' | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => Folded::Drop,
        c if c.is_alphanumeric() => Folded::Lower(c),
        _ => Folded::Break,
    }
}

/// ASCII replacement for a Latin letter with diacritics, or `None`.
fn latin_letter(ch: char) -> Option<&'static str> {
    let s = match ch {
        // --- Latin-1 Supplement (U+00C0..U+00FF) and ordinal indicators.
        'À'..='Å' | 'à'..='å' | 'ª' => "a",
        'Æ' | 'æ' => "ae",
        'Ç' | 'ç' => "c",
        'È'..='Ë' | 'è'..='ë' => "e",
        'Ì'..='Ï' | 'ì'..='ï' => "i",
        'Ð' | 'ð' => "d",
        'Ñ' | 'ñ' => "n",
        'Ò'..='Ö' | 'Ø' | 'ò'..='ö' | 'ø' | 'º' => "o",
        'Ù'..='Ü' | 'ù'..='ü' => "u",
        'Ý' | 'ý' | 'ÿ' => "y",
        'Þ' | 'þ' => "th",
        'ß' => "ss",
        // --- Latin Extended-A (U+0100..U+017F), in code point order.
        '\u{0100}'..='\u{0105}' => "a",
        '\u{0106}'..='\u{010D}' => "c",
        '\u{010E}'..='\u{0111}' => "d",
        '\u{0112}'..='\u{011B}' => "e",
        '\u{011C}'..='\u{0123}' => "g",
        '\u{0124}'..='\u{0127}' => "h",
        '\u{0128}'..='\u{0131}' => "i",
        '\u{0132}'..='\u{0133}' => "ij",
        '\u{0134}'..='\u{0135}' => "j",
        '\u{0136}'..='\u{0138}' => "k",
        '\u{0139}'..='\u{0142}' => "l",
        '\u{0143}'..='\u{014B}' => "n",
        '\u{014C}'..='\u{0151}' => "o",
        '\u{0152}'..='\u{0153}' => "oe",
        '\u{0154}'..='\u{0159}' => "r",
        '\u{015A}'..='\u{0161}' => "s",
        '\u{0162}'..='\u{0167}' => "t",
        '\u{0168}'..='\u{0173}' => "u",
        '\u{0174}'..='\u{0175}' => "w",
        '\u{0176}'..='\u{0178}' => "y",
        '\u{0179}'..='\u{017E}' => "z",
        '\u{017F}' => "s",
        // --- Latin Extended-B: the letters that occur in place names.
        '\u{0180}' => "b",
        '\u{018F}' | '\u{0259}' => "e", // Azerbaijani schwa
        '\u{0192}' => "f",
        '\u{01A0}' | '\u{01A1}' => "o", // Vietnamese horn
        '\u{01AF}' | '\u{01B0}' => "u",
        '\u{01B5}' | '\u{01B6}' => "z",
        '\u{01C4}'..='\u{01C6}' | '\u{01F1}'..='\u{01F3}' => "dz",
        '\u{01C7}'..='\u{01C9}' => "lj",
        '\u{01CA}'..='\u{01CC}' => "nj",
        '\u{01CD}' | '\u{01CE}' | '\u{01DE}'..='\u{01E1}' | '\u{01FA}' | '\u{01FB}' => "a",
        '\u{01CF}' | '\u{01D0}' => "i",
        '\u{01D1}' | '\u{01D2}' | '\u{01EA}'..='\u{01ED}' | '\u{01FE}' | '\u{01FF}' => "o",
        '\u{01D3}'..='\u{01DC}' => "u",
        '\u{01E2}' | '\u{01E3}' | '\u{01FC}' | '\u{01FD}' => "ae",
        '\u{01E4}'..='\u{01E7}' | '\u{01F4}' | '\u{01F5}' => "g",
        '\u{01E8}' | '\u{01E9}' => "k",
        '\u{01F0}' => "j",
        '\u{01F8}' | '\u{01F9}' => "n",
        '\u{0200}'..='\u{0203}' | '\u{0226}' | '\u{0227}' => "a",
        '\u{0204}'..='\u{0207}' | '\u{0228}' | '\u{0229}' => "e",
        '\u{0208}'..='\u{020B}' => "i",
        '\u{020C}'..='\u{020F}' | '\u{022A}'..='\u{0231}' => "o",
        '\u{0210}'..='\u{0213}' => "r",
        '\u{0214}'..='\u{0217}' => "u",
        '\u{0218}' | '\u{0219}' => "s", // Romanian comma-below
        '\u{021A}' | '\u{021B}' => "t",
        '\u{021E}' | '\u{021F}' => "h",
        '\u{0232}' | '\u{0233}' => "y",
        // --- Latin Extended Additional (U+1E00..U+1EFF), alphabetical blocks.
        '\u{1E00}' | '\u{1E01}' | '\u{1E9A}' | '\u{1EA0}'..='\u{1EB7}' => "a",
        '\u{1E02}'..='\u{1E07}' => "b",
        '\u{1E08}' | '\u{1E09}' => "c",
        '\u{1E0A}'..='\u{1E13}' => "d",
        '\u{1E14}'..='\u{1E1D}' | '\u{1EB8}'..='\u{1EC7}' => "e",
        '\u{1E1E}' | '\u{1E1F}' => "f",
        '\u{1E20}' | '\u{1E21}' => "g",
        '\u{1E22}'..='\u{1E2B}' | '\u{1E96}' => "h",
        '\u{1E2C}' | '\u{1E2D}' | '\u{1E2E}' | '\u{1E2F}' | '\u{1EC8}'..='\u{1ECB}' => "i",
        '\u{1E30}'..='\u{1E35}' => "k",
        '\u{1E36}'..='\u{1E3D}' => "l",
        '\u{1E3E}'..='\u{1E43}' => "m",
        '\u{1E44}'..='\u{1E4B}' => "n",
        '\u{1E4C}'..='\u{1E53}' | '\u{1ECC}'..='\u{1EE3}' => "o",
        '\u{1E54}'..='\u{1E57}' => "p",
        '\u{1E58}'..='\u{1E5F}' => "r",
        '\u{1E60}'..='\u{1E69}' | '\u{1E9B}' => "s",
        '\u{1E6A}'..='\u{1E71}' | '\u{1E97}' => "t",
        '\u{1E72}'..='\u{1E7B}' | '\u{1EE4}'..='\u{1EF1}' => "u",
        '\u{1E7C}'..='\u{1E7F}' => "v",
        '\u{1E80}'..='\u{1E89}' | '\u{1E98}' => "w",
        '\u{1E8A}'..='\u{1E8D}' => "x",
        '\u{1E8E}' | '\u{1E8F}' | '\u{1E99}' | '\u{1EF2}'..='\u{1EF9}' => "y",
        '\u{1E90}'..='\u{1E95}' => "z",
        '\u{1E9E}' => "ss", // capital sharp s
        _ => return None,
    };
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn folds_latin1_and_extended_a() {
        assert_eq!(fold("München"), "munchen");
        assert_eq!(fold("Zürich"), "zurich");
        assert_eq!(fold("Straße"), "strasse");
        assert_eq!(fold("Tromsø"), "tromso");
        assert_eq!(fold("Æbeltoft"), "aebeltoft");
        assert_eq!(fold("Łódź"), "lodz");
        assert_eq!(fold("Čakovec"), "cakovec");
        assert_eq!(fold("Œuilly"), "oeuilly");
        assert_eq!(fold("Þingvellir"), "thingvellir");
        assert_eq!(fold("İzmir"), "izmir");
        assert_eq!(fold("Ærøskøbing"), "aeroskobing");
        assert_eq!(fold("Timișoara"), "timisoara");
        assert_eq!(fold("Hà Nội"), "ha noi");
        assert_eq!(fold("Ağdam"), "agdam");
        assert_eq!(fold("Xəzər"), "xezer");
    }

    #[test]
    fn normalises_separators_and_case() {
        assert_eq!(fold("  Saint-Étienne  "), "saint etienne");
        assert_eq!(fold("St. Gallen"), "st gallen");
        assert_eq!(fold("L'Aquila"), "l aquila");
        assert_eq!(fold("a\t\n\u{0}b"), "a b");
        assert_eq!(fold(""), "");
        assert_eq!(fold("---"), "");
    }

    #[test]
    fn decomposed_input_folds_like_composed() {
        assert_eq!(fold("Mu\u{0308}nchen"), "munchen");
        assert_eq!(fold("Zu\u{0308}rich"), fold("Zürich"));
    }

    #[test]
    fn other_scripts_are_lower_cased() {
        assert_eq!(fold("МОСКВА"), "москва");
        assert_eq!(fold("東京"), "東京");
    }
}
