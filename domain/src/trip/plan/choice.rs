//! Which place a typed name means. The application asks its sources (the imported
//! OpenStreetMap extract, the embedded gazetteer, an online geocoder) for candidates; this
//! module alone decides, without I/O, which candidate each name of a plan takes, or refuses
//! the name with its candidates so that a person or an agent picks in one step.
//!
//! The rules, in order:
//! 1. A name that matches exactly beats one that only begins like it, which beats a
//!    misspelling; among equal matches, a place inside the area the router and the extract
//!    cover beats one outside it. So an exact local "Malbun" beats a fuzzy far "Maluñgun".
//! 2. Among those, the place nearest the plan's other places wins (its other names decided
//!    the same way, its coordinates as given), a more important place counting nearer.
//! 3. Never a silent jump: a place that only begins like the name, or is misspelt, is taken
//!    only near the other places (within three times their spread, at least
//!    [`NEAR_FLOOR_M`]); any place outside the covered area, or farther than three times the
//!    spread of at least two other places, is refused with the candidates, their kind,
//!    country and distance from the other places. Two equally plausible places of one name
//!    far apart are refused as ambiguous.

use etappe_geo::haversine_m;

use super::super::FieldError;
use crate::text::quote;

/// How close a place that only begins like the typed name, or is misspelt, must lie to the
/// plan's other places (or three times their spread, when larger) to be taken.
pub const NEAR_FLOOR_M: f64 = 50_000.0;
/// How many times the spread of the other places a place may lie from them.
pub const SPREAD_FACTOR: f64 = 3.0;
/// Two candidates of one name closer than this are the same place named by two sources.
const SAME_PLACE_M: f64 = 3_000.0;
/// A rival this much farther than the chosen place (or [`CLEARLY_FARTHER_SHARE`] of its
/// distance, when larger) does not make a name ambiguous.
const CLEARLY_FARTHER_M: f64 = 25_000.0;
const CLEARLY_FARTHER_SHARE: f64 = 0.5;
/// A rival at least this share of the chosen place's importance makes a name ambiguous.
const RIVAL_WEIGHT_SHARE: f64 = 0.4;
/// Candidates named in a refusal.
const CANDIDATES_NAMED: usize = 5;

/// How a candidate's name matched what was typed; the order is the ranking order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameFit {
    /// The name, one of its other names or spellings, folded (case, accents) equals it.
    Exact,
    /// A name begins with it, or one of its words does.
    Partial,
    /// A name is within an edit or two of it.
    Fuzzy,
}

/// Where a candidate came from; the order is the order the sources are asked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PlaceSource {
    /// The imported OpenStreetMap extract.
    Extract,
    /// The embedded gazetteer.
    Gazetteer,
    /// An online geocoder.
    Geocoder,
}

/// A place one source offers for a typed name.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Its name as the source spells it (third-party text, already cleaned).
    pub name: String,
    /// What it is: "village", "station", "alpine_hut", "locality"…
    pub kind: String,
    /// The country it lies in, when known ("Liechtenstein").
    pub country: Option<String>,
    pub lat: f64,
    pub lon: f64,
    pub fit: NameFit,
    pub source: PlaceSource,
    /// How important it is, 0–1 (population, place rank, the geocoder's importance).
    pub weight: f64,
}

/// One place of a plan, in riding order: coordinates as given, or a name with what the
/// sources offered for it.
#[derive(Clone, Debug)]
pub enum Slot {
    At {
        lat: f64,
        lon: f64,
    },
    Named {
        /// The field it came from (`plan.via[0]`).
        field: String,
        /// The name as typed.
        name: String,
        candidates: Vec<Candidate>,
    },
}

/// The area the router and the extract cover, as latitude/longitude boxes (south, west,
/// north, east). Empty: not known, every place counts as covered.
#[derive(Clone, Debug, Default)]
pub struct Coverage(pub Vec<[f64; 4]>);

impl Coverage {
    fn covers(&self, lat: f64, lon: f64) -> bool {
        self.0.is_empty()
            || self
                .0
                .iter()
                .any(|[s, w, n, e]| (*s..=*n).contains(&lat) && (*w..=*e).contains(&lon))
    }
}

/// For each slot, the candidate its name takes (`None` for coordinates), or every named
/// field that cannot be decided, with its candidates and what to do.
pub fn choose(
    slots: &[Slot],
    coverage: &Coverage,
) -> Result<Vec<Option<Candidate>>, Vec<FieldError>> {
    let candidates: Vec<Vec<Candidate>> = slots
        .iter()
        .map(|slot| match slot {
            Slot::At { .. } => Vec::new(),
            Slot::Named { candidates, .. } => distinct(candidates),
        })
        .collect();
    // First pick: the best-ranked candidate of each name; then, twice, the one of its best
    // tier nearest the others' picks (a second round settles names that anchored each other).
    let mut picks: Vec<Option<usize>> = candidates
        .iter()
        .map(|c| {
            (0..c.len()).min_by(|a, b| rank(&c[*a], coverage).total_cmp(&rank(&c[*b], coverage)))
        })
        .collect();
    for _ in 0..2 {
        for (i, own) in candidates.iter().enumerate() {
            if own.is_empty() {
                continue;
            }
            let others = points_except(slots, &candidates, &picks, i);
            picks[i] = nearest_of_best_tier(own, &others, coverage);
        }
    }
    let mut errors = Vec::new();
    let mut chosen = Vec::with_capacity(slots.len());
    for (i, slot) in slots.iter().enumerate() {
        let Slot::Named { field, name, .. } = slot else {
            chosen.push(None);
            continue;
        };
        let own = &candidates[i];
        let others = points_except(slots, &candidates, &picks, i);
        match picks[i].map(|p| &own[p]) {
            None => errors.push(FieldError::new(
                field.clone(),
                format!(
                    "{field}: no place is called {}; search with search_places (GET /geocode/search) or give coordinates (\"47.56,7.59\")",
                    quote(name)
                ),
            )),
            Some(pick) => match judge(pick, own, &others, coverage) {
                Verdict::Taken => chosen.push(Some(pick.clone())),
                Verdict::Far => errors.push(refusal(
                    field,
                    name,
                    own,
                    &others,
                    "matches no place near the plan's other places",
                )),
                Verdict::Uncovered => errors.push(refusal(
                    field,
                    name,
                    own,
                    &others,
                    "matches no place inside the area the router covers",
                )),
                Verdict::Ambiguous => errors.push(refusal(
                    field,
                    name,
                    own,
                    &others,
                    "names several places",
                )),
            },
        }
    }
    if errors.is_empty() {
        Ok(chosen)
    } else {
        Err(errors)
    }
}

/// What the rules say of a pick.
enum Verdict {
    Taken,
    Far,
    Uncovered,
    Ambiguous,
}

fn judge(
    pick: &Candidate,
    own: &[Candidate],
    others: &[(f64, f64)],
    coverage: &Coverage,
) -> Verdict {
    if !coverage.covers(pick.lat, pick.lon) {
        return Verdict::Uncovered;
    }
    let distance = nearest_m(pick, others);
    let spread = spread_m(others);
    let far = match pick.fit {
        NameFit::Exact => {
            others.len() >= 2 && distance > (SPREAD_FACTOR * spread).max(NEAR_FLOOR_M)
        }
        NameFit::Partial | NameFit::Fuzzy => distance > (SPREAD_FACTOR * spread).max(NEAR_FLOOR_M),
    };
    if far {
        return Verdict::Far;
    }
    let rival = own.iter().any(|c| {
        c.fit == pick.fit
            && coverage.covers(c.lat, c.lon)
            && haversine_m(c.lat, c.lon, pick.lat, pick.lon) > SAME_PLACE_M
            && nearest_m(c, others)
                <= distance + CLEARLY_FARTHER_M.max(CLEARLY_FARTHER_SHARE * distance)
            && c.weight >= RIVAL_WEIGHT_SHARE * pick.weight
            && c.weight > 0.0
    });
    if rival {
        Verdict::Ambiguous
    } else {
        Verdict::Taken
    }
}

/// The refusal of a name, naming its candidates nearest the other places first.
fn refusal(
    field: &str,
    name: &str,
    own: &[Candidate],
    others: &[(f64, f64)],
    why: &str,
) -> FieldError {
    let mut listed: Vec<&Candidate> = own.iter().collect();
    listed.sort_by(|a, b| nearest_m(a, others).total_cmp(&nearest_m(b, others)));
    let described: Vec<String> = listed
        .iter()
        .take(CANDIDATES_NAMED)
        .map(|c| describe(c, others))
        .collect();
    FieldError::new(
        field.to_owned(),
        format!(
            "{field}: {} {why}: {}; give the one you mean as coordinates (\"lat,lon\"), or a more precise name",
            quote(name),
            described.join("; ")
        ),
    )
}

/// "Maluñgun (village, Philippines, 11,397 km from the other places, 7.1234,125.1234)".
fn describe(c: &Candidate, others: &[(f64, f64)]) -> String {
    let country = c
        .country
        .as_deref()
        .map(|c| format!(", {c}"))
        .unwrap_or_default();
    let away = if others.is_empty() {
        String::new()
    } else {
        format!(
            ", {} from the other places",
            kilometres(nearest_m(c, others))
        )
    };
    format!(
        "{} ({}{country}{away}, {:.4},{:.4})",
        c.name, c.kind, c.lat, c.lon
    )
}

fn kilometres(metres: f64) -> String {
    let km = (metres / 1000.0).round() as u64;
    let digits = km.to_string();
    let mut grouped = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(d);
    }
    format!("{grouped} km")
}

/// The candidates without the same place offered twice (the first source's kept).
fn distinct(candidates: &[Candidate]) -> Vec<Candidate> {
    let mut sorted: Vec<&Candidate> = candidates.iter().collect();
    sorted.sort_by_key(|c| (c.fit, c.source));
    let mut kept: Vec<Candidate> = Vec::new();
    for c in sorted {
        let twin = kept
            .iter()
            .any(|k| k.fit == c.fit && haversine_m(k.lat, k.lon, c.lat, c.lon) < SAME_PLACE_M);
        if !twin {
            kept.push(c.clone());
        }
    }
    kept
}

/// A candidate's rank without the other places: its fit, then inside the covered area,
/// then importance (lower is better).
fn rank(c: &Candidate, coverage: &Coverage) -> f64 {
    let fit = match c.fit {
        NameFit::Exact => 0.0,
        NameFit::Partial => 10.0,
        NameFit::Fuzzy => 20.0,
    };
    let outside = if coverage.covers(c.lat, c.lon) {
        0.0
    } else {
        5.0
    };
    fit + outside + (1.0 - c.weight.clamp(0.0, 1.0))
}

/// Of the candidates of the best (fit, covered) tier, the one nearest `others`, a more
/// important place counting nearer (a village beats a hamlet of its name a little closer);
/// the best-ranked one when there are no others.
fn nearest_of_best_tier(
    own: &[Candidate],
    others: &[(f64, f64)],
    coverage: &Coverage,
) -> Option<usize> {
    let tier = |c: &Candidate| (c.fit, !coverage.covers(c.lat, c.lon));
    let best = own.iter().map(tier).min()?;
    let in_tier = (0..own.len()).filter(|i| tier(&own[*i]) == best);
    if others.is_empty() {
        return in_tier
            .min_by(|a, b| rank(&own[*a], coverage).total_cmp(&rank(&own[*b], coverage)));
    }
    let score = |c: &Candidate| nearest_m(c, others) / (0.25 + c.weight.clamp(0.0, 1.0));
    in_tier.min_by(|a, b| score(&own[*a]).total_cmp(&score(&own[*b])))
}

/// The points of every slot but `except`: coordinates as given, names at their picks.
fn points_except(
    slots: &[Slot],
    candidates: &[Vec<Candidate>],
    picks: &[Option<usize>],
    except: usize,
) -> Vec<(f64, f64)> {
    slots
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != except)
        .filter_map(|(i, slot)| match slot {
            Slot::At { lat, lon } => Some((*lat, *lon)),
            Slot::Named { .. } => picks[i].map(|p| (candidates[i][p].lat, candidates[i][p].lon)),
        })
        .collect()
}

/// The distance from `c` to the nearest of `points` (0 without points).
fn nearest_m(c: &Candidate, points: &[(f64, f64)]) -> f64 {
    points
        .iter()
        .map(|(lat, lon)| haversine_m(c.lat, c.lon, *lat, *lon))
        .reduce(f64::min)
        .unwrap_or(0.0)
}

/// The largest distance between two of `points`.
fn spread_m(points: &[(f64, f64)]) -> f64 {
    let mut spread: f64 = 0.0;
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            spread = spread.max(haversine_m(a.0, a.1, b.0, b.1));
        }
    }
    spread
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(
        name: &str,
        fit: NameFit,
        source: PlaceSource,
        at: (f64, f64),
        weight: f64,
    ) -> Candidate {
        Candidate {
            name: name.into(),
            kind: "village".into(),
            country: Some("Somewhere".into()),
            lat: at.0,
            lon: at.1,
            fit,
            source,
            weight,
        }
    }

    fn named(field: &str, name: &str, candidates: Vec<Candidate>) -> Slot {
        Slot::Named {
            field: field.into(),
            name: name.into(),
            candidates,
        }
    }

    const BALZERS: (f64, f64) = (47.0667, 9.5000);
    const RUGGELL: (f64, f64) = (47.2380, 9.5270);
    const MALBUN: (f64, f64) = (47.1015, 9.6100);
    const MALUNGUN: (f64, f64) = (6.0200, 125.2800);
    const LIECHTENSTEIN: [f64; 4] = [47.04, 9.47, 47.28, 9.64];

    #[test]
    fn an_exact_local_name_beats_a_fuzzy_far_one() {
        let slots = [
            Slot::At {
                lat: BALZERS.0,
                lon: BALZERS.1,
            },
            named(
                "plan.via[0]",
                "Malbun",
                vec![
                    candidate(
                        "Maluñgun",
                        NameFit::Fuzzy,
                        PlaceSource::Gazetteer,
                        MALUNGUN,
                        0.9,
                    ),
                    candidate("Malbun", NameFit::Exact, PlaceSource::Extract, MALBUN, 0.1),
                ],
            ),
            Slot::At {
                lat: RUGGELL.0,
                lon: RUGGELL.1,
            },
        ];
        let chosen = choose(&slots, &Coverage(vec![LIECHTENSTEIN])).expect("chosen");
        assert_eq!(chosen[1].as_ref().map(|c| c.name.as_str()), Some("Malbun"));
        assert_eq!(chosen[0], None);
    }

    #[test]
    fn a_fuzzy_match_far_from_the_plan_is_refused_with_its_candidates() {
        let slots = [
            Slot::At {
                lat: BALZERS.0,
                lon: BALZERS.1,
            },
            named(
                "plan.via[0]",
                "Malbun",
                vec![candidate(
                    "Maluñgun",
                    NameFit::Fuzzy,
                    PlaceSource::Gazetteer,
                    MALUNGUN,
                    0.9,
                )],
            ),
            Slot::At {
                lat: RUGGELL.0,
                lon: RUGGELL.1,
            },
        ];
        let errors = choose(&slots, &Coverage::default()).expect_err("refused");
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "plan.via[0]");
        let message = &errors[0].message;
        assert!(
            message.contains("\"Malbun\" matches no place near"),
            "{message}"
        );
        assert!(
            message.contains("Maluñgun (village, Somewhere, 11,397 km from"),
            "{message}"
        );
        assert!(message.contains("km from the other places"), "{message}");
    }

    #[test]
    fn a_prefix_match_on_another_continent_is_refused_even_between_two_places() {
        let slots = [
            named(
                "plan.from",
                "Steg",
                vec![candidate(
                    "Steglitz",
                    NameFit::Partial,
                    PlaceSource::Gazetteer,
                    (52.456, 13.332),
                    0.8,
                )],
            ),
            Slot::At {
                lat: RUGGELL.0,
                lon: RUGGELL.1,
            },
        ];
        let errors = choose(&slots, &Coverage::default()).expect_err("refused");
        assert!(
            errors[0].message.contains("Steglitz"),
            "{}",
            errors[0].message
        );
    }

    #[test]
    fn the_exact_place_nearest_the_others_wins_and_a_lone_exact_far_one_is_taken() {
        let steg_li = (47.1130, 9.5730);
        let steg_ch = (46.0950, 7.6360);
        let slots = [
            named(
                "plan.from",
                "Steg",
                vec![
                    candidate("Steg", NameFit::Exact, PlaceSource::Gazetteer, steg_ch, 0.3),
                    candidate("Steg", NameFit::Exact, PlaceSource::Extract, steg_li, 0.05),
                ],
            ),
            Slot::At {
                lat: RUGGELL.0,
                lon: RUGGELL.1,
            },
        ];
        let chosen = choose(&slots, &Coverage::default()).expect("chosen");
        assert_eq!(chosen[0].as_ref().map(|c| (c.lat, c.lon)), Some(steg_li));
        // Two places only: an exact name far away is still what was asked for (Basel → Vienna).
        let vienna = (48.2082, 16.3738);
        let slots = [
            Slot::At {
                lat: 47.5596,
                lon: 7.5886,
            },
            named(
                "plan.to",
                "Wien",
                vec![candidate(
                    "Vienna",
                    NameFit::Exact,
                    PlaceSource::Gazetteer,
                    vienna,
                    1.0,
                )],
            ),
        ];
        assert!(choose(&slots, &Coverage::default()).is_ok());
    }

    #[test]
    fn a_place_outside_the_covered_area_is_refused() {
        let slots = [
            Slot::At {
                lat: BALZERS.0,
                lon: BALZERS.1,
            },
            named(
                "plan.to",
                "Zürich",
                vec![candidate(
                    "Zürich",
                    NameFit::Exact,
                    PlaceSource::Gazetteer,
                    (47.37, 8.54),
                    1.0,
                )],
            ),
        ];
        let errors = choose(&slots, &Coverage(vec![LIECHTENSTEIN])).expect_err("refused");
        assert!(
            errors[0]
                .message
                .contains("inside the area the router covers"),
            "{}",
            errors[0].message
        );
    }

    #[test]
    fn an_exact_name_three_spreads_away_from_the_others_is_refused() {
        let slots = [
            Slot::At {
                lat: BALZERS.0,
                lon: BALZERS.1,
            },
            named(
                "plan.via[0]",
                "Paris",
                vec![candidate(
                    "Paris",
                    NameFit::Exact,
                    PlaceSource::Gazetteer,
                    (48.8566, 2.3522),
                    1.0,
                )],
            ),
            Slot::At {
                lat: RUGGELL.0,
                lon: RUGGELL.1,
            },
        ];
        assert!(choose(&slots, &Coverage::default()).is_err());
    }

    #[test]
    fn two_equal_places_of_one_name_far_apart_are_ambiguous_but_the_same_place_twice_is_not() {
        let springfield_il = (39.80, -89.64);
        let springfield_ma = (42.10, -72.59);
        let slots = [
            named(
                "plan.from",
                "Springfield",
                vec![
                    candidate(
                        "Springfield",
                        NameFit::Exact,
                        PlaceSource::Gazetteer,
                        springfield_il,
                        0.5,
                    ),
                    candidate(
                        "Springfield",
                        NameFit::Exact,
                        PlaceSource::Gazetteer,
                        springfield_ma,
                        0.5,
                    ),
                ],
            ),
            Slot::At {
                lat: 41.0,
                lon: -81.0,
            },
        ];
        let errors = choose(&slots, &Coverage::default()).expect_err("ambiguous");
        assert!(
            errors[0].message.contains("names several places"),
            "{}",
            errors[0].message
        );
        // The extract and the gazetteer naming the same village 500 m apart: one place.
        let slots = [
            named(
                "plan.from",
                "Schaan",
                vec![
                    candidate(
                        "Schaan",
                        NameFit::Exact,
                        PlaceSource::Extract,
                        (47.1650, 9.5090),
                        0.3,
                    ),
                    candidate(
                        "Schaan",
                        NameFit::Exact,
                        PlaceSource::Gazetteer,
                        (47.1700, 9.5100),
                        0.3,
                    ),
                ],
            ),
            Slot::At {
                lat: RUGGELL.0,
                lon: RUGGELL.1,
            },
        ];
        let chosen = choose(&slots, &Coverage::default()).expect("one place");
        assert_eq!(
            chosen[0].as_ref().map(|c| c.source),
            Some(PlaceSource::Extract)
        );
    }

    #[test]
    fn names_that_anchor_each_other_settle_together() {
        // "Balzers → Malbun → Ruggell", all by name, each with a far namesake.
        let slots = [
            named(
                "plan.from",
                "Balzers",
                vec![candidate(
                    "Balzers",
                    NameFit::Exact,
                    PlaceSource::Extract,
                    BALZERS,
                    0.3,
                )],
            ),
            named(
                "plan.via[0]",
                "Malbun",
                vec![
                    candidate(
                        "Maluñgun",
                        NameFit::Fuzzy,
                        PlaceSource::Gazetteer,
                        MALUNGUN,
                        0.9,
                    ),
                    candidate("Malbun", NameFit::Exact, PlaceSource::Extract, MALBUN, 0.1),
                ],
            ),
            named(
                "plan.to",
                "Ruggell",
                vec![candidate(
                    "Ruggell",
                    NameFit::Exact,
                    PlaceSource::Extract,
                    RUGGELL,
                    0.3,
                )],
            ),
        ];
        let chosen = choose(&slots, &Coverage(vec![LIECHTENSTEIN])).expect("chosen");
        let names: Vec<&str> = chosen.iter().flatten().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Balzers", "Malbun", "Ruggell"]);
    }

    #[test]
    fn a_name_nobody_knows_says_how_to_find_one() {
        let slots = [
            named("plan.from", "Xyzzy", Vec::new()),
            Slot::At { lat: 1.0, lon: 1.0 },
        ];
        let errors = choose(&slots, &Coverage::default()).expect_err("unknown");
        assert!(
            errors[0].message.contains("no place is called \"Xyzzy\""),
            "{}",
            errors[0].message
        );
    }
}
