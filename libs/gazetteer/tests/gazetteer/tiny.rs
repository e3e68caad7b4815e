//! Exact-answer tests on a small hand-made TSV, independent of the
//! embedded GeoNames data.

use etappe_gazetteer::{Gazetteer, GazetteerError, MatchKind, haversine_m};

/// Columns: name, ascii, lat, lon, cc, admin1, population, timezone, alternates.
/// The two "Antimeridian" places straddle the 180° line; "Polar" places test
/// lookups near the North Pole.
const TINY: &str = "\
# tiny test gazetteer
Paris\tParis\t48.85341\t2.3488\tFR\t11\t2138551\tEurope/Paris\tLutece|Parigi
Paris\tParis\t33.66094\t-95.55551\tUS\tTX\t24782\tAmerica/Chicago\t
Lyon\tLyon\t45.74846\t4.84671\tFR\t84\t522969\tEurope/Paris\tLyons|Lione

Saint-Étienne\tSaint-Etienne\t45.43389\t4.39\tFR\t84\t176280\tEurope/Paris\t
Zürich\tZurich\t47.36667\t8.55\tCH\tZH\t341730\tEurope/Zurich\tZuerich|Zurigo
Munich\tMunich\t48.13743\t11.57549\tDE\t02\t1260391\tEurope/Berlin\tMünchen|Muenchen|Monaco di Baviera
Grenoble\tGrenoble\t45.16667\t5.71667\tFR\t84\t158552\tEurope/Paris\t
Parma\tParma\t44.79935\t10.32618\tIT\t45\t146299\tEurope/Rome\t
Eastside\tEastside\t0\t179.9\tFJ\t01\t1000\tPacific/Fiji\t
Westside\tWestside\t-0.5\t-178\tWS\t01\t5000\tPacific/Apia\t
Polar Station\tPolar Station\t82.5\t-62.35\tCA\tNU\t1000\tAmerica/Toronto\t
Far North\tFar North\t78.22\t15.65\tSJ\t00\t2000\tArctic/Longyearbyen\t
";

fn tiny() -> Gazetteer<'static> {
    match Gazetteer::from_tsv(TINY) {
        Ok(g) => g,
        Err(e) => panic!("tiny data must parse: {e}"),
    }
}

fn names<'a>(g: &'a Gazetteer<'a>, q: &str, limit: usize) -> Vec<(&'a str, &'a str)> {
    g.search(q, limit)
        .iter()
        .map(|m| (m.place.name, m.place.country_code))
        .collect()
}

#[test]
fn parses_all_rows_and_skips_comments_and_blank_lines() {
    let g = tiny();
    assert_eq!(g.len(), 12);
    assert!(!g.is_empty());
    let munich = &g.places()[5];
    assert_eq!(munich.name, "Munich");
    assert_eq!(munich.population, 1_260_391);
    assert_eq!(munich.timezone, "Europe/Berlin");
    assert_eq!(munich.admin1, "02");
    assert_eq!(
        munich.alternate_names().collect::<Vec<_>>(),
        vec!["München", "Muenchen", "Monaco di Baviera"]
    );
    assert_eq!(g.places()[1].alternate_names().count(), 0);
}

#[test]
fn eight_column_rows_are_accepted() {
    let g = Gazetteer::from_tsv("Bern\tBern\t46.94809\t7.44744\tCH\tBE\t121631\tEurope/Zurich\n");
    assert_eq!(g.map(|g| g.len()), Ok(1));
}

#[test]
fn parse_errors_name_the_line() {
    let cases = [
        ("Paris\tParis\t48.8\n", 1, "missing column"),
        ("\nX\tX\t91\t0\tFR\t\t1\tUTC\n", 2, "latitude out of range"),
        ("X\tX\t0\t181\tFR\t\t1\tUTC\n", 1, "longitude out of range"),
        ("X\tX\tnan\t0\tFR\t\t1\tUTC\n", 1, "latitude"),
        ("X\tX\t0\t0\tfr\t\t1\tUTC\n", 1, "country code"),
        ("X\tX\t0\t0\tFR\t\t-5\tUTC\n", 1, "population"),
        ("X\tX\t0\t0\tFR\t\t1\tUTC\ta\tb\n", 1, "too many columns"),
        ("\tX\t0\t0\tFR\t\t1\tUTC\n", 1, "empty name"),
    ];
    for (text, want_line, want_reason) in cases {
        match Gazetteer::from_tsv(text) {
            Err(GazetteerError::Parse { line, reason }) => {
                assert_eq!(line, want_line, "{text:?}");
                assert!(reason.contains(want_reason), "{text:?}: {reason}");
            }
            other => panic!("{text:?}: expected a parse error, got {other:?}"),
        }
    }
}

#[test]
fn exact_matches_rank_by_population() {
    let g = tiny();
    let hits = g.search("paris", 10);
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert_eq!(hits[0].place.country_code, "FR");
    assert_eq!(hits[1].place.country_code, "US");
    assert!(hits.iter().all(|m| m.kind == MatchKind::Exact));
}

#[test]
fn country_suffix_filters() {
    let g = tiny();
    assert_eq!(names(&g, "Paris, US", 10), vec![("Paris", "US")]);
    assert_eq!(names(&g, "paris,fr", 10), vec![("Paris", "FR")]);
    assert_eq!(names(&g, "Paris, France", 10), vec![("Paris", "FR")]);
    assert_eq!(names(&g, "Paris, United States", 10), vec![("Paris", "US")]);
    // Unknown suffix: ignored rather than returning nothing.
    assert_eq!(names(&g, "Paris, Narnia", 10).len(), 2);
    // Filter that excludes everything.
    assert!(g.search("Paris, DE", 10).is_empty());
}

#[test]
fn accents_and_alternate_names() {
    let g = tiny();
    for q in ["München", "munchen", "MUENCHEN", "Mu\u{0308}nchen"] {
        let hits = g.search(q, 3);
        assert_eq!(hits.first().map(|m| m.place.name), Some("Munich"), "{q}");
        assert_eq!(hits[0].kind, MatchKind::Exact, "{q}");
    }
    for q in ["Zurich", "zürich", "ZUERICH", "Zurigo"] {
        assert_eq!(names(&g, q, 1), vec![("Zürich", "CH")], "{q}");
    }
    assert_eq!(names(&g, "Lione", 1), vec![("Lyon", "FR")]);
}

#[test]
fn prefix_and_token_matches() {
    let g = tiny();
    let hits = g.search("par", 10);
    // Paris FR, Parma IT, Paris US: prefix matches by population.
    let got: Vec<_> = hits.iter().map(|m| (m.place.name, m.kind)).collect();
    assert_eq!(
        got,
        vec![
            ("Paris", MatchKind::Prefix),
            ("Parma", MatchKind::Prefix),
            ("Paris", MatchKind::Prefix),
        ]
    );
    let hits = g.search("etienne", 5);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].place.name, "Saint-Étienne");
    assert_eq!(hits[0].kind, MatchKind::Token);
    assert_eq!(names(&g, "saint etienne", 1), vec![("Saint-Étienne", "FR")]);
    assert_eq!(names(&g, "Saint-Étienne", 1), vec![("Saint-Étienne", "FR")]);
    // Prefix of an alternate name.
    assert_eq!(names(&g, "Monaco di", 1), vec![("Munich", "DE")]);
}

#[test]
fn fuzzy_matches_typos() {
    let g = tiny();
    let hits = g.search("Grenoblle", 5);
    assert_eq!(hits.first().map(|m| m.place.name), Some("Grenoble"));
    assert_eq!(hits[0].kind, MatchKind::Fuzzy);
    assert_eq!(hits[0].distance, 1);
    // Transposition counts as one edit.
    let hits = g.search("Grneoble", 5);
    assert_eq!(
        hits.first().map(|m| (m.place.name, m.distance)),
        Some(("Grenoble", 1))
    );
    // Two edits allowed from 8 characters on.
    let hits = g.search("Grenobbel", 5);
    assert_eq!(
        hits.first().map(|m| (m.place.name, m.distance)),
        Some(("Grenoble", 2))
    );
    // 4-7 characters: one edit only.
    assert_eq!(names(&g, "Lyno", 5), vec![("Lyon", "FR")]);
    assert!(g.search("Lxnx", 5).is_empty());
    // Typo in a later word reaches the place through its token key.
    assert_eq!(names(&g, "Etiene", 5), vec![("Saint-Étienne", "FR")]);
    // Fuzzy prefix: a typo in the first letters of a longer name.
    assert_eq!(names(&g, "Zruich", 5), vec![("Zürich", "CH")]);
    // Three characters never go fuzzy.
    assert!(g.search("Lyx", 5).is_empty());
}

#[test]
fn exact_beats_fuzzy_and_limit_is_respected() {
    let g = tiny();
    // "Paris" exact hits come before fuzzy ones ("Parma" is 2 edits, too many
    // for a 5-character query anyway).
    let hits = g.search("Paris", 1);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].place.country_code, "FR");
    assert!(g.search("Paris", 0).is_empty());
    assert_eq!(g.search("p", usize::MAX).len(), 4);
}

#[test]
fn hostile_queries_never_panic() {
    let g = tiny();
    let long = "ä".repeat(10_000);
    let mixed = "Zürich🚲".repeat(500);
    let queries = [
        "",
        " ",
        ",",
        ",,,",
        ", FR",
        "\u{0}",
        "\u{1}\u{2}\u{7f}",
        "\u{0308}",
        "🚲",
        "東京",
        "مدينة",
        "\u{202E}siraP",
        "\u{FEFF}Paris",
        "%",
        "*",
        "'",
        "Paris,",
        "a,b,c,d",
        long.as_str(),
        mixed.as_str(),
        "ẞ",
        "ǅ",
        "\u{10FFFF}",
    ];
    for q in queries {
        for limit in [0, 1, 10, usize::MAX] {
            let hits = g.search(q, limit);
            assert!(hits.len() <= limit.min(etappe_gazetteer::MAX_LIMIT));
        }
    }
    // The BOM is invisible: still an exact match.
    assert_eq!(names(&g, "\u{FEFF}Paris", 1), vec![("Paris", "FR")]);
    // 200-character cut: the first characters still match.
    let padded = format!("Grenoble{}", " ".repeat(300));
    assert_eq!(names(&g, &padded, 1), vec![("Grenoble", "FR")]);
}

#[test]
fn reverse_finds_the_nearest_place() {
    let g = tiny();
    let near = g
        .reverse(45.188, 5.724)
        .map(|n| (n.place.name, n.distance_m));
    let Some((name, dist)) = near else {
        panic!("no result");
    };
    assert_eq!(name, "Grenoble");
    let want = haversine_m(45.188, 5.724, 45.16667, 5.71667);
    assert!((dist - want).abs() < 1e-6, "{dist} vs {want}");
    // On a place: distance zero.
    let at = g
        .reverse(47.36667, 8.55)
        .map(|n| (n.place.name, n.distance_m));
    assert_eq!(at, Some(("Zürich", 0.0)));
}

#[test]
fn reverse_crosses_the_antimeridian() {
    let g = tiny();
    // At -179.99: Eastside (179.9) is 0.11° away, Westside (-178) about 2°;
    // naive longitude arithmetic would pick Westside.
    let n = g.reverse(0.0, -179.99);
    assert_eq!(n.map(|n| n.place.name), Some("Eastside"));
    let d = n.map_or(0.0, |n| n.distance_m);
    assert!((d - haversine_m(0.0, -179.99, 0.0, 179.9)).abs() < 1e-6);
    assert!(d < 13_000.0, "{d}");
    // The same point written as +180.01 gives the same answer.
    assert_eq!(
        g.reverse(0.0, 180.01).map(|n| n.place.name),
        Some("Eastside")
    );
    assert_eq!(
        g.reverse(0.0, -178.5).map(|n| n.place.name),
        Some("Westside")
    );
}

#[test]
fn reverse_near_the_poles() {
    let g = tiny();
    // From the North Pole, Polar Station (82.5°N) is closer than Far North
    // (78.22°N), whatever the longitude.
    for lon in [-180.0, -62.0, 0.0, 15.65, 120.0, 180.0] {
        let n = g.reverse(90.0, lon);
        assert_eq!(n.map(|n| n.place.name), Some("Polar Station"), "lon {lon}");
    }
    // Closer to Far North's side of the globe it wins.
    assert_eq!(
        g.reverse(80.0, 15.65).map(|n| n.place.name),
        Some("Far North")
    );
    // South Pole: everything is far; the southernmost place (-0.5°) wins.
    let s = g.reverse(-90.0, 0.0);
    assert_eq!(s.map(|n| n.place.name), Some("Westside"));
}

#[test]
fn reverse_rejects_invalid_coordinates() {
    let g = tiny();
    assert!(g.reverse(f64::NAN, 0.0).is_none());
    assert!(g.reverse(0.0, f64::INFINITY).is_none());
    assert!(g.reverse(90.0001, 0.0).is_none());
    assert!(g.reverse(-91.0, 0.0).is_none());
    // Longitude wraps: 365.724 is 5.724.
    assert_eq!(
        g.reverse(45.188, 365.724).map(|n| n.place.name),
        Some("Grenoble")
    );
}

#[test]
fn empty_gazetteer_answers_nothing() {
    let g = Gazetteer::empty();
    assert!(g.is_empty());
    assert!(g.reverse(0.0, 0.0).is_none());
    assert!(g.search("Paris", 10).is_empty());
    let g = Gazetteer::from_tsv("# only a comment\n\n");
    assert_eq!(g.map(|g| g.len()), Ok(0));
}

#[test]
fn country_names() {
    let g = tiny();
    assert_eq!(g.country_name("FR"), Some("France"));
    assert_eq!(g.country_name("fr"), Some("France"));
    assert_eq!(g.country_name("XX"), None);
    assert_eq!(g.country_name(""), None);
    assert_eq!(g.country_name("FRA"), None);
}

#[test]
fn memory_usage_reports_built_indexes() {
    let g = tiny();
    assert_eq!(g.memory_usage().name_index_bytes, 0);
    g.warm_up();
    let m = g.memory_usage();
    assert!(m.name_index_bytes > 0 && m.spatial_index_bytes > 0 && m.places_bytes > 0);
    assert_eq!(m.text_bytes, 0, "tiny data is borrowed, not owned");
    assert!(m.name_keys >= g.len());
}
