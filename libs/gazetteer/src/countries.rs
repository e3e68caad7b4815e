//! ISO 3166-1 alpha-2 country codes and English names (GeoNames).
//!
//! The table is small and independent of the places, so it is embedded
//! uncompressed and shared by every [`crate::Gazetteer`], including ones
//! built from test data: "Paris, France" then works the same everywhere.

use std::sync::OnceLock;

use crate::fold::fold;

static COUNTRIES_TSV: &str = include_str!("../data/countries.tsv");

/// Common names people type that are not the GeoNames English name.
/// Kept short on purpose: only spellings a traveller would plausibly use.
const ALIASES: &[(&str, &str)] = &[
    ("usa", "US"),
    ("united states of america", "US"),
    ("america", "US"),
    ("uk", "GB"),
    ("great britain", "GB"),
    ("britain", "GB"),
    ("england", "GB"),
    ("scotland", "GB"),
    ("wales", "GB"),
    ("northern ireland", "GB"),
    ("deutschland", "DE"),
    ("schweiz", "CH"),
    ("suisse", "CH"),
    ("svizzera", "CH"),
    ("osterreich", "AT"),
    ("oesterreich", "AT"),
    ("espana", "ES"),
    ("italia", "IT"),
    ("nederland", "NL"),
    ("holland", "NL"),
    ("the netherlands", "NL"),
    ("belgique", "BE"),
    ("belgie", "BE"),
    ("danmark", "DK"),
    ("sverige", "SE"),
    ("norge", "NO"),
    ("suomi", "FI"),
    ("polska", "PL"),
    ("czechia", "CZ"),
    ("cesko", "CZ"),
    ("slovensko", "SK"),
    ("slovenija", "SI"),
    ("hrvatska", "HR"),
    ("magyarorszag", "HU"),
    ("hellas", "GR"),
    ("ellada", "GR"),
    ("turkiye", "TR"),
    ("russia", "RU"),
    ("south korea", "KR"),
    ("korea", "KR"),
    ("north korea", "KP"),
    ("vietnam", "VN"),
    ("laos", "LA"),
    ("iran", "IR"),
    ("syria", "SY"),
    ("bolivia", "BO"),
    ("venezuela", "VE"),
    ("tanzania", "TZ"),
    ("moldova", "MD"),
    ("ivory coast", "CI"),
];

#[derive(Debug)]
struct Country {
    code: &'static str,
    name: &'static str,
    folded_name: String,
}

fn table() -> &'static [Country] {
    static TABLE: OnceLock<Vec<Country>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out: Vec<Country> = COUNTRIES_TSV
            .lines()
            .filter_map(|line| {
                let (code, name) = line.split_once('\t')?;
                let code = code.trim();
                let name = name.trim();
                (code.len() == 2 && code.is_ascii() && !name.is_empty()).then(|| Country {
                    code,
                    name,
                    folded_name: fold(name),
                })
            })
            .collect();
        // Sorted by code for binary search; the file is sorted already, but
        // the lookup must not depend on that.
        out.sort_by(|a, b| a.code.cmp(b.code));
        out
    })
}

/// English name of an ISO alpha-2 code (case-insensitive).
pub(crate) fn name_of(code: &str) -> Option<&'static str> {
    if code.len() != 2 || !code.is_ascii() {
        return None;
    }
    let upper = code.to_ascii_uppercase();
    let t = table();
    t.binary_search_by(|c| c.code.cmp(upper.as_str()))
        .ok()
        .and_then(|i| t.get(i))
        .map(|c| c.name)
}

/// Resolves a query suffix ("FR", "fr", "France", "Deutschland") to a
/// country code.
pub(crate) fn resolve(text: &str) -> Option<&'static str> {
    let folded = fold(text);
    if folded.is_empty() {
        return None;
    }
    let t = table();
    if folded.len() == 2 {
        let upper = folded.to_ascii_uppercase();
        if let Ok(i) = t.binary_search_by(|c| c.code.cmp(upper.as_str())) {
            return t.get(i).map(|c| c.code);
        }
    }
    if let Some(c) = t.iter().find(|c| c.folded_name == folded) {
        return Some(c.code);
    }
    let alias = ALIASES.iter().find(|(a, _)| *a == folded)?.1;
    // Return the table's own &'static str so callers compare like with like.
    t.iter().find(|c| c.code == alias).map(|c| c.code)
}

/// Number of countries in the table.
#[cfg(test)]
fn count() -> usize {
    table().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_codes_names_and_aliases() {
        assert_eq!(resolve("FR"), Some("FR"));
        assert_eq!(resolve("fr"), Some("FR"));
        assert_eq!(resolve(" France "), Some("FR"));
        assert_eq!(resolve("Deutschland"), Some("DE"));
        assert_eq!(resolve("Österreich"), Some("AT"));
        assert_eq!(resolve("UK"), Some("GB"));
        assert_eq!(resolve("United States"), Some("US"));
        assert_eq!(resolve("Narnia"), None);
        assert_eq!(resolve(""), None);
    }

    #[test]
    fn names_by_code() {
        assert_eq!(name_of("de"), Some("Germany"));
        assert_eq!(name_of("CH"), Some("Switzerland"));
        assert_eq!(name_of("ZZ"), None);
        assert_eq!(name_of("ü"), None);
        assert!(count() > 240);
    }
}
