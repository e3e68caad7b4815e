//! Cleaning of third-party strings before they reach our events, logs and UI:
//! OSM tags and upstream messages are free text written by anyone.

/// Keeps printable text only: control characters become spaces (a tab or
/// newline inside a name is a separator), characters that draw nothing (the
/// one rule of `etappe_text`) are dropped (they can disguise or hide text),
/// runs of whitespace collapse, and the result is cut to `max_chars`.
/// Returns `None` when nothing printable is left.
pub(crate) fn printable(raw: &str, max_chars: usize) -> Option<String> {
    let mut cleaned = String::with_capacity(raw.len().min(max_chars * 4));
    let mut kept = 0;
    let mut pending_space = false;
    for c in raw.chars() {
        if c.is_control() || c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if is_invisible_format(c) {
            continue;
        }
        if kept == max_chars {
            break;
        }
        if pending_space && !cleaned.is_empty() {
            if kept + 1 == max_chars {
                break;
            }
            cleaned.push(' ');
            kept += 1;
        }
        pending_space = false;
        cleaned.push(c);
        kept += 1;
    }
    (!cleaned.is_empty()).then_some(cleaned)
}

/// The one rule of what draws nothing (`etappe_text`, through the domain): zero-width and
/// bidi characters, variation selectors, tag characters, fillers and every other
/// default-ignorable or format character.
fn is_invisible_format(c: char) -> bool {
    etappe_domain::text::is_format(c)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn strips_controls_and_invisible_formatting() {
        assert_eq!(
            printable("  Gasthof\u{0}\u{7} zur\n\tPost\u{202E} ", 100).as_deref(),
            Some("Gasthof zur Post")
        );
        assert_eq!(printable("\u{1b}[31m", 100).as_deref(), Some("[31m"));
        assert_eq!(printable("\u{0}\u{200B} \n", 100), None);
        // Variation selectors, tags and fillers too: the rule the gate applies everywhere.
        assert_eq!(
            printable("Hut\u{FE0F}\u{E0100}\u{E0041}\u{3164}\u{034F} Alm", 100).as_deref(),
            Some("Hut Alm")
        );
    }

    #[test]
    fn cuts_at_the_character_limit_without_splitting_characters() {
        assert_eq!(printable("Übernachtung", 4).as_deref(), Some("Über"));
        assert_eq!(printable("ab cd", 3).as_deref(), Some("ab"));
    }
}
