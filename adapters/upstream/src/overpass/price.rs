//! Price estimates for an accommodation from its OSM tags: an exact amount
//! when the mapper recorded one, otherwise a typical range for its type.
//! Ranges are rough 2024 central-European prices per person and night.

use std::collections::HashMap;

use super::AccommodationType;

/// Amounts above this are typos or group prices, not a night's stay.
const MAX_PLAUSIBLE_EUR: f64 = 1000.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PriceEstimate {
    pub(crate) min_eur: f64,
    pub(crate) max_eur: f64,
    pub(crate) exact: bool,
}

pub(crate) fn estimate_price(
    kind: AccommodationType,
    tags: &HashMap<String, String>,
) -> PriceEstimate {
    for key in ["charge", "fee"] {
        if let Some(amounts) = tags.get(key).and_then(|value| parse_eur_amounts(value)) {
            return amounts;
        }
    }
    if tags
        .get("fee")
        .is_some_and(|fee| fee.trim().eq_ignore_ascii_case("no"))
    {
        return PriceEstimate {
            min_eur: 0.0,
            max_eur: 0.0,
            exact: true,
        };
    }

    let (mut min_eur, max_eur) = typical_range(kind, tags);
    if let Some(stars) = tags.get("stars").and_then(|value| leading_number(value)) {
        // Starred hotels rarely go below ~30 € per star; the type's ceiling
        // still bounds the estimate so min never exceeds max.
        min_eur = min_eur.max(30.0 * stars).min(max_eur);
    }
    PriceEstimate {
        min_eur,
        max_eur,
        exact: false,
    }
}

fn typical_range(kind: AccommodationType, tags: &HashMap<String, String>) -> (f64, f64) {
    let is_yes = |key: &str| {
        tags.get(key)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("yes"))
    };
    match kind {
        AccommodationType::Hotel => (50.0, 120.0),
        AccommodationType::GuestHouse => (40.0, 80.0),
        AccommodationType::Chalet => (30.0, 70.0),
        AccommodationType::Hostel => (20.0, 35.0),
        AccommodationType::AlpineHut => (25.0, 45.0),
        // Tent-only and backcountry sites lack the facilities that make
        // caravan sites expensive.
        AccommodationType::CampSite
            if is_yes("backcountry") || (is_yes("tents") && !is_yes("caravans")) =>
        {
            (8.0, 15.0)
        }
        AccommodationType::CampSite => (8.0, 25.0),
        AccommodationType::WildernessHut => (0.0, 10.0),
    }
}

/// "4", "3S" (superior), "4.5" -> the number of stars, if plausible.
fn leading_number(value: &str) -> Option<f64> {
    let digits: String = value
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let stars: f64 = digits.parse().ok()?;
    (stars > 0.0 && stars <= 7.0).then_some(stars)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(f64),
    Word(String),
    Symbol(char),
}

/// Reads euro amounts from a free-text `charge`/`fee` value such as
/// "25 EUR", "€ 18", "12,50 €/night" or "18.50". With a currency marker,
/// only numbers right next to "€"/"EUR" count, so "5 EUR per child under 12"
/// yields 5, not 12. Without a marker, a lone number is taken as euros.
/// Another currency means no euro price at all. Several amounts make a range.
fn parse_eur_amounts(value: &str) -> Option<PriceEstimate> {
    let tokens = tokenise(&value.to_lowercase());
    if tokens.iter().any(is_foreign_currency) {
        return None;
    }
    let amounts: Vec<f64> = if tokens.iter().any(is_euro_marker) {
        tokens
            .iter()
            .enumerate()
            .filter_map(|(index, token)| match token {
                Token::Number(amount) => {
                    let before = index.checked_sub(1).and_then(|i| tokens.get(i));
                    let after = tokens.get(index + 1);
                    (before.is_some_and(is_euro_marker) || after.is_some_and(is_euro_marker))
                        .then_some(*amount)
                }
                _ => None,
            })
            .collect()
    } else {
        let numbers: Vec<f64> = tokens
            .iter()
            .filter_map(|token| match token {
                Token::Number(amount) => Some(*amount),
                _ => None,
            })
            .collect();
        if numbers.len() == 1 {
            numbers
        } else {
            Vec::new()
        }
    };
    let plausible = |amount: &f64| (0.0..=MAX_PLAUSIBLE_EUR).contains(amount);
    if amounts.is_empty() || !amounts.iter().all(plausible) {
        return None;
    }
    let min_eur = amounts.iter().copied().fold(f64::INFINITY, f64::min);
    let max_eur = amounts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(PriceEstimate {
        min_eur,
        max_eur,
        exact: min_eur == max_eur,
    })
}

fn is_euro_marker(token: &Token) -> bool {
    match token {
        Token::Symbol(symbol) => *symbol == '€',
        Token::Word(word) => matches!(word.as_str(), "eur" | "euro" | "euros"),
        Token::Number(_) => false,
    }
}

fn is_foreign_currency(token: &Token) -> bool {
    match token {
        Token::Symbol(symbol) => matches!(symbol, '£' | '$' | '¥' | '₽' | '₺' | '₴' | '₹'),
        Token::Word(word) => matches!(
            word.as_str(),
            "chf"
                | "fr"
                | "sfr"
                | "gbp"
                | "usd"
                | "czk"
                | "kč"
                | "pln"
                | "zł"
                | "huf"
                | "sek"
                | "nok"
                | "dkk"
                | "kr"
                | "ron"
                | "lei"
                | "bgn"
                | "rsd"
                | "din"
                | "mkd"
                | "isk"
                | "uah"
                | "rub"
        ),
        Token::Number(_) => false,
    }
}

/// Splits into numbers (with "," or "." as decimal separator before one or
/// two digits, or as a thousands separator before three), words and symbols.
fn tokenise(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let (amount, next) = read_number(&chars, i);
            tokens.push(Token::Number(amount));
            i = next;
        } else if c.is_alphabetic() {
            let start = i;
            while chars.get(i).is_some_and(|c| c.is_alphabetic()) {
                i += 1;
            }
            tokens.push(Token::Word(chars[start..i].iter().collect()));
        } else {
            tokens.push(Token::Symbol(c));
            i += 1;
        }
    }
    tokens
}

fn read_number(chars: &[char], start: usize) -> (f64, usize) {
    let digit_run = |from: usize| {
        chars.get(from..).map_or(0, |rest| {
            rest.iter().take_while(|c| c.is_ascii_digit()).count()
        })
    };
    let mut integer = String::new();
    let mut i = start;
    loop {
        let run = digit_run(i);
        integer.extend(&chars[i..i + run]);
        i += run;
        let is_separator = matches!(chars.get(i), Some('.' | ','));
        // A separator followed by exactly three digits groups thousands.
        if is_separator && digit_run(i + 1) == 3 {
            i += 1;
            continue;
        }
        break;
    }
    let mut fraction = String::new();
    if matches!(chars.get(i), Some('.' | ',')) && matches!(digit_run(i + 1), 1 | 2) {
        let run = digit_run(i + 1);
        fraction.extend(&chars[i + 1..i + 1 + run]);
        i += 1 + run;
    }
    let text = if fraction.is_empty() {
        integer
    } else {
        format!("{integer}.{fraction}")
    };
    // Only ASCII digits and one dot reach here; a failure would need an
    // absurdly long number, which is implausible anyway.
    (text.parse().unwrap_or(f64::INFINITY), i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overpass::tags_of as tags;

    fn exact(amount: f64) -> Option<PriceEstimate> {
        Some(PriceEstimate {
            min_eur: amount,
            max_eur: amount,
            exact: true,
        })
    }

    #[test]
    fn reads_common_charge_spellings() {
        assert_eq!(parse_eur_amounts("25 EUR"), exact(25.0));
        assert_eq!(parse_eur_amounts("€ 18"), exact(18.0));
        assert_eq!(parse_eur_amounts("€18"), exact(18.0));
        assert_eq!(parse_eur_amounts("18.50"), exact(18.5));
        assert_eq!(parse_eur_amounts("12,50 €/night"), exact(12.5));
        assert_eq!(parse_eur_amounts("EUR 9 per person"), exact(9.0));
        assert_eq!(
            parse_eur_amounts("1.200 EUR"),
            None,
            "implausible for one night"
        );
    }

    #[test]
    fn ignores_numbers_away_from_the_currency_and_other_currencies() {
        assert_eq!(
            parse_eur_amounts("5 EUR per child under 12, 9 EUR per adult"),
            Some(PriceEstimate {
                min_eur: 5.0,
                max_eur: 9.0,
                exact: false
            })
        );
        assert_eq!(parse_eur_amounts("25 CHF"), None);
        assert_eq!(parse_eur_amounts("£30"), None);
        assert_eq!(parse_eur_amounts("yes"), None);
        assert_eq!(
            parse_eur_amounts("10 per tent, 4 per person"),
            None,
            "ambiguous without currency"
        );
        assert_eq!(
            parse_eur_amounts("10 € par heure, 2 heures minimum"),
            exact(10.0)
        );
    }

    #[test]
    fn typical_ranges_per_type() {
        let none = tags(&[]);
        let range = |kind| {
            let p = estimate_price(kind, &none);
            (p.min_eur, p.max_eur, p.exact)
        };
        assert_eq!(range(AccommodationType::Hotel), (50.0, 120.0, false));
        assert_eq!(range(AccommodationType::GuestHouse), (40.0, 80.0, false));
        assert_eq!(range(AccommodationType::Chalet), (30.0, 70.0, false));
        assert_eq!(range(AccommodationType::Hostel), (20.0, 35.0, false));
        assert_eq!(range(AccommodationType::AlpineHut), (25.0, 45.0, false));
        assert_eq!(range(AccommodationType::CampSite), (8.0, 25.0, false));
        assert_eq!(range(AccommodationType::WildernessHut), (0.0, 10.0, false));
    }

    #[test]
    fn tent_only_camp_sites_are_cheaper() {
        let max = |pairs: &[(&str, &str)]| {
            estimate_price(AccommodationType::CampSite, &tags(pairs)).max_eur
        };
        assert_eq!(max(&[("backcountry", "yes")]), 15.0);
        assert_eq!(max(&[("tents", "yes")]), 15.0);
        assert_eq!(max(&[("tents", "yes"), ("caravans", "yes")]), 25.0);
    }

    #[test]
    fn exact_charge_wins_over_the_estimate() {
        let price = estimate_price(
            AccommodationType::CampSite,
            &tags(&[("charge", "18.50 EUR")]),
        );
        assert_eq!(price, exact(18.5).expect("price"));
        let price = estimate_price(AccommodationType::Hotel, &tags(&[("fee", "€ 65")]));
        assert_eq!(price, exact(65.0).expect("price"));
        let free = estimate_price(AccommodationType::WildernessHut, &tags(&[("fee", "no")]));
        assert_eq!(free, exact(0.0).expect("price"));
        let unparseable = estimate_price(
            AccommodationType::Hostel,
            &tags(&[("charge", "ask at desk")]),
        );
        assert!(!unparseable.exact);
    }

    #[test]
    fn stars_lift_the_floor_but_not_past_the_ceiling() {
        let min = |stars: &str| {
            estimate_price(AccommodationType::Hotel, &tags(&[("stars", stars)])).min_eur
        };
        assert_eq!(min("1"), 50.0);
        assert_eq!(min("3S"), 90.0);
        assert_eq!(min("5"), 120.0);
        assert_eq!(min("lots"), 50.0);
    }
}
