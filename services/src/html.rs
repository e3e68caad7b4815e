//! The one HTML escaper of the server's own pages (login, consent, errors, the page shell):
//! control characters dropped (the text gate's rule), then the five characters that could
//! open markup or leave a quoted attribute replaced by their entities. Shared by the sibling
//! transports that render HTML, so neither imports the other.

/// `text` safe inside HTML element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in etappe_domain::text::strip_controls(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_and_controls_do_not_survive() {
        assert_eq!(
            super::escape("<b a=\"1\" b='2'>&\u{7}</b>"),
            "&lt;b a=&quot;1&quot; b=&#39;2&#39;&gt;&amp;&lt;/b&gt;"
        );
    }
}
