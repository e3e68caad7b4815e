//! Tests against the embedded GeoNames data: the answers a trip planner
//! relies on, and the k-d tree checked against brute force on real data.

use etappe_gazetteer::{Gazetteer, MatchKind, Place, haversine_m};

fn gaz() -> &'static Gazetteer<'static> {
    match Gazetteer::try_embedded() {
        Ok(g) => g,
        Err(e) => panic!("embedded data must load: {e}"),
    }
}

fn top(q: &str) -> Option<&'static Place<'static>> {
    gaz().search(q, 10).first().map(|m| m.place)
}

fn brute_nearest(lat: f64, lon: f64) -> Option<(&'static Place<'static>, f64)> {
    gaz()
        .places()
        .iter()
        .map(|p| (p, haversine_m(lat, lon, p.lat, p.lon)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

#[test]
fn embedded_data_is_loaded() {
    let g = gaz();
    assert!(g.len() > 100_000, "{}", g.len());
    assert_eq!(g.country_name("FR"), Some("France"));
    assert_eq!(g.country_name("DE"), Some("Germany"));
    // Every place has a valid country in the country table.
    for p in g.places() {
        assert!(g.country_name(p.country_code).is_some(), "{p:?}");
    }
}

#[test]
fn paris_is_the_french_capital_first() {
    let p = top("Paris");
    assert_eq!(p.map(|p| (p.name, p.country_code)), Some(("Paris", "FR")));
    let us = gaz().search("Paris, US", 10);
    assert!(!us.is_empty());
    assert!(us.iter().all(|m| m.place.country_code == "US"));
    assert_eq!(us[0].kind, MatchKind::Exact);
    assert_eq!(top("paris, france").map(|p| p.country_code), Some("FR"));
}

#[test]
fn munich_by_german_and_ascii_spellings() {
    for q in ["Munchen", "München", "Muenchen", "Munich", "münchen, DE"] {
        let p = top(q);
        assert_eq!(
            p.map(|p| (p.name, p.country_code)),
            Some(("Munich", "DE")),
            "{q}"
        );
    }
}

#[test]
fn zurich_without_umlaut() {
    let p = top("Zurich");
    assert_eq!(p.map(|p| (p.name, p.country_code)), Some(("Zürich", "CH")));
}

#[test]
fn typo_finds_grenoble() {
    let hits = gaz().search("Grenoblle", 5);
    let first = hits
        .first()
        .map(|m| (m.place.name, m.place.country_code, m.kind));
    assert_eq!(first, Some(("Grenoble", "FR", MatchKind::Fuzzy)));
}

#[test]
fn common_stage_towns() {
    let cases = [
        ("Saint-Étienne", "FR"),
        ("Sankt Gallen", "CH"),
        ("Bourg-d'Oisans", "FR"),
        ("Kraków", "PL"),
        ("Cracow", "PL"),
        ("Köln", "DE"),
        ("Cologne", "DE"),
        ("Wien", "AT"),
        ("Ljubljana", "SI"),
        ("Malmö", "SE"),
        ("Tromsø", "NO"),
        ("Amsterdm", "NL"),
    ];
    for (q, cc) in cases {
        assert_eq!(top(q).map(|p| p.country_code), Some(cc), "{q}");
    }
}

#[test]
fn reverse_grenoble() {
    let n = gaz().reverse(45.188, 5.724);
    assert_eq!(n.map(|n| n.place.name), Some("Grenoble"));
    assert!(n.is_some_and(|n| n.distance_m < 5_000.0));
}

#[test]
fn reverse_at_sea_gives_the_coast_and_a_distance() {
    // Gulf of Lion, ~40 km off the French coast.
    let Some(n) = gaz().reverse(42.9, 4.0) else {
        panic!("no result at sea");
    };
    assert_eq!(n.place.country_code, "FR");
    assert!(
        n.distance_m > 10_000.0 && n.distance_m < 150_000.0,
        "{}",
        n.distance_m
    );
    let Some((want, d)) = brute_nearest(42.9, 4.0) else {
        panic!("brute force found nothing");
    };
    assert_eq!(n.place, want);
    assert!((n.distance_m - d).abs() < 1e-6);
}

#[test]
fn reverse_across_the_antimeridian() {
    // Just east of 180° in Fiji (written as a negative longitude); the
    // nearest place lies on the other side of the line at positive longitude.
    let (lat, lon) = (-16.8, -179.95);
    let Some(n) = gaz().reverse(lat, lon) else {
        panic!("no result");
    };
    let Some((want, d)) = brute_nearest(lat, lon) else {
        panic!("brute force found nothing");
    };
    assert_eq!(n.place, want);
    assert!((n.distance_m - d).abs() < 1e-6);
    assert_eq!(n.place.country_code, "FJ");
    assert!(n.place.lon > 0.0, "{:?}", n.place);
    assert!(n.distance_m < 100_000.0, "{}", n.distance_m);
}

#[test]
fn reverse_matches_brute_force_on_random_points() {
    // Deterministic xorshift so failures reproduce.
    let mut s: u64 = 0xDEAD_BEEF_CAFE_F00D;
    let mut unit = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    for i in 0..150 {
        let (lat, lon) = if i % 3 == 0 {
            // Polar caps, where lat/lon grids usually go wrong.
            let lat = 70.0 + unit() * 20.0;
            (if i % 2 == 0 { lat } else { -lat }, unit() * 360.0 - 180.0)
        } else {
            (
                (2.0 * unit() - 1.0).asin().to_degrees(),
                unit() * 360.0 - 180.0,
            )
        };
        let got = gaz().reverse(lat, lon).map(|n| n.distance_m);
        let want = brute_nearest(lat, lon).map(|(_, d)| d);
        let (Some(g), Some(w)) = (got, want) else {
            panic!("no result at {lat},{lon}");
        };
        assert!((g - w).abs() < 1e-6, "{lat},{lon}: {g} vs {w}");
    }
}

#[test]
fn random_garbage_queries_never_panic() {
    // Characters chosen to hit every branch of the folding and matching:
    // ASCII, Latin letters that expand (ß, æ), combining marks, other
    // scripts, emoji, controls, separators and the country-suffix comma.
    let alphabet: Vec<char> = "aeinorstxzAEZ019 ,,-'.\t\n\u{0}\u{7f}éüßæøłŁǅẞ\u{0301}\u{0308}МоскваΑθήνα東京🚲\u{FEFF}\u{202E}\u{10FFFF}"
        .chars()
        .collect();
    let mut s: u64 = 0x0123_4567_89AB_CDEF;
    let mut next = move |n: usize| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % n as u64) as usize
    };
    for _ in 0..300 {
        let len = next(40) + if next(10) == 0 { 250 } else { 0 };
        let q: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
        let limit = [0, 1, 10, 5000][next(4)];
        let hits = gaz().search(&q, limit);
        assert!(
            hits.len() <= limit.min(etappe_gazetteer::MAX_LIMIT),
            "{q:?}"
        );
    }
}
