//! Parsers for route-service payloads, as publicly documented: the JSON a
//! Komoot tour or collection page embeds, and RideWithGPS's route JSON.
//! Strava routes are exported as GPX and go through [`crate::parse_gpx`].
//!
//! Fetching is the caller's job; these functions only read what was fetched
//! and report [`RouteError::UnexpectedPayload`] when the shape differs from
//! the documented one (a login wall, a private tour, a changed page layout).
//! Points with invalid coordinates are skipped exactly as in GPX files.

use serde::Deserialize;
use serde_json::Value;

use crate::gpx::{clean_name, plausible_elevation, valid_coordinates};
use crate::{ParsedRoute, RouteError, TrackPoint};

/// The JavaScript call whose string argument is the page's JSON state.
const KOMOOT_MARKER: &str = "kmtBoot.setProps(";

/// Parses a public Komoot tour page: its JSON at `page._embedded.tour` has a
/// `name` and `_embedded.coordinates.items[]` of `{lat, lng, alt}`.
pub fn parse_komoot_tour_html(html: &str) -> Result<ParsedRoute, RouteError> {
    let state = komoot_state(html)?;
    let tour = state
        .pointer("/page/_embedded/tour")
        .ok_or_else(|| unexpected("no page._embedded.tour in Komoot page"))?;
    let items = tour
        .pointer("/_embedded/coordinates/items")
        .and_then(Value::as_array)
        .ok_or_else(|| unexpected("no tour._embedded.coordinates.items in Komoot page"))?;
    let mut points = Vec::with_capacity(items.len());
    let mut rejected = 0;
    for item in items {
        let lat = item.get("lat").and_then(Value::as_f64);
        let lon = item.get("lng").and_then(Value::as_f64);
        let ele = item.get("alt").and_then(Value::as_f64);
        push_point(&mut points, &mut rejected, lat, lon, ele);
    }
    let name = tour
        .get("name")
        .and_then(Value::as_str)
        .and_then(clean_name);
    finish(name, points, rejected)
}

/// Tour ids of a Komoot collection page, in page order without duplicates,
/// from `page._embedded.collectionHal._embedded.compilation._embedded.items[].id`.
/// Ids may be JSON numbers or strings; both come back as strings. Items whose
/// `type` starts with `highlight` (collections can mix in highlights, which
/// are places, not tours) are left out. An empty collection is `Ok(vec![])`.
pub fn komoot_collection_tour_ids(html: &str) -> Result<Vec<String>, RouteError> {
    let state = komoot_state(html)?;
    let items = state
        .pointer("/page/_embedded/collectionHal/_embedded/compilation/_embedded/items")
        .and_then(Value::as_array)
        .ok_or_else(|| unexpected("no compilation items in Komoot collection page"))?;
    let mut ids: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let is_highlight = item
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("highlight"));
        if is_highlight {
            continue;
        }
        let id = match item.get("id") {
            Some(Value::String(s)) => s.trim().to_owned(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        if !id.is_empty() && !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Extracts and decodes the JSON passed to `kmtBoot.setProps("…")`.
fn komoot_state(html: &str) -> Result<Value, RouteError> {
    let at = html
        .find(KOMOOT_MARKER)
        .ok_or_else(|| unexpected("no kmtBoot.setProps in Komoot page"))?;
    let rest = html
        .get(at + KOMOOT_MARKER.len()..)
        .unwrap_or_default()
        .trim_start();
    let json = unescape_js_string(rest)?;
    serde_json::from_str(&json).map_err(|e| unexpected(&format!("Komoot JSON: {e}")))
}

/// Decodes the JavaScript string literal that `src` starts with (single or
/// double quoted), following ECMAScript escapes: `\n \r \t \b \f \v \0`,
/// `\xHH`, `\uHHHH` (surrogate pairs joined, lone surrogates → U+FFFD),
/// `\u{H…}`, line continuations, and `\` before any other character meaning
/// that character (`\" \' \\ \/`).
fn unescape_js_string(src: &str) -> Result<String, RouteError> {
    let mut chars = src.chars();
    let Some(quote @ ('"' | '\'')) = chars.next() else {
        return Err(unexpected("kmtBoot.setProps argument is not a string"));
    };
    let mut out = String::with_capacity(src.len().min(1 << 20));
    loop {
        let Some(c) = chars.next() else {
            return Err(unexpected("unterminated kmtBoot.setProps string"));
        };
        if c == quote {
            return Ok(out);
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            return Err(unexpected("unterminated kmtBoot.setProps string"));
        };
        match e {
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '0' => out.push('\0'),
            'x' => {
                let code = hex_digits(&mut chars, 2)?;
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
            }
            'u' => {
                let code = unicode_escape(&mut chars)?;
                out.push(code);
            }
            // Line continuation: backslash-newline disappears.
            '\n' | '\u{2028}' | '\u{2029}' => {}
            '\r' => {
                if chars.as_str().starts_with('\n') {
                    chars.next();
                }
            }
            other => out.push(other),
        }
    }
}

/// Reads the part of a `\u` escape after the `u`, including a following
/// `\uDC00`-style low surrogate when the first one is a high surrogate.
fn unicode_escape(chars: &mut std::str::Chars<'_>) -> Result<char, RouteError> {
    if chars.as_str().starts_with('{') {
        chars.next();
        let mut code: u32 = 0;
        let mut digits = 0;
        loop {
            match chars.next() {
                Some('}') if digits > 0 => break,
                Some(c) => {
                    let d = c
                        .to_digit(16)
                        .ok_or_else(|| unexpected("bad \\u{} escape"))?;
                    code = code.saturating_mul(16).saturating_add(d);
                    digits += 1;
                }
                None => return Err(unexpected("bad \\u{} escape")),
            }
        }
        return Ok(char::from_u32(code).unwrap_or('\u{FFFD}'));
    }
    let first = hex_digits(chars, 4)?;
    if (0xD800..0xDC00).contains(&first) && chars.as_str().starts_with("\\u") {
        let mut lookahead = chars.clone();
        lookahead.next();
        lookahead.next();
        if let Ok(second) = hex_digits(&mut lookahead, 4)
            && (0xDC00..0xE000).contains(&second)
        {
            *chars = lookahead;
            let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            return Ok(char::from_u32(code).unwrap_or('\u{FFFD}'));
        }
    }
    Ok(char::from_u32(first).unwrap_or('\u{FFFD}'))
}

fn hex_digits(chars: &mut std::str::Chars<'_>, count: usize) -> Result<u32, RouteError> {
    let mut code = 0u32;
    for _ in 0..count {
        let d = chars
            .next()
            .and_then(|c| c.to_digit(16))
            .ok_or_else(|| unexpected("bad hexadecimal escape"))?;
        code = code * 16 + d;
    }
    Ok(code)
}

/// RideWithGPS route JSON: `{"route": {"name", "track_points": [...]}}`.
/// Some API versions answer with the route object at the top level, so its
/// fields are accepted there too (declared, not `flatten`ed: flattening
/// would buffer the whole point list before decoding it).
#[derive(Deserialize)]
struct RwgpsEnvelope {
    route: Option<RwgpsRoute>,
    name: Option<String>,
    track_points: Option<Vec<RwgpsPoint>>,
}

#[derive(Deserialize)]
struct RwgpsRoute {
    name: Option<String>,
    track_points: Option<Vec<RwgpsPoint>>,
}

/// A track point: `x`/`y` in the documented API, `lng`/`lat` as some
/// clients see it; `e` is elevation in metres (`d`, distance, is ignored:
/// distances are recomputed so every source is measured alike).
#[derive(Deserialize)]
struct RwgpsPoint {
    x: Option<f64>,
    y: Option<f64>,
    lng: Option<f64>,
    lat: Option<f64>,
    e: Option<f64>,
}

/// Parses `https://ridewithgps.com/routes/{id}.json`.
pub fn parse_ridewithgps_json(bytes: &[u8]) -> Result<ParsedRoute, RouteError> {
    let envelope: RwgpsEnvelope =
        serde_json::from_slice(bytes).map_err(|e| unexpected(&format!("RideWithGPS JSON: {e}")))?;
    let route = match envelope.route {
        Some(route) => route,
        None if envelope.track_points.is_some() => RwgpsRoute {
            name: envelope.name,
            track_points: envelope.track_points,
        },
        None => return Err(unexpected("no route object in RideWithGPS JSON")),
    };
    let track_points = route
        .track_points
        .ok_or_else(|| unexpected("no route.track_points in RideWithGPS JSON"))?;
    let mut points = Vec::with_capacity(track_points.len());
    let mut rejected = 0;
    for p in track_points {
        push_point(
            &mut points,
            &mut rejected,
            p.y.or(p.lat),
            p.x.or(p.lng),
            p.e,
        );
    }
    let name = route.name.as_deref().and_then(clean_name);
    finish(name, points, rejected)
}

fn push_point(
    points: &mut Vec<TrackPoint>,
    rejected: &mut usize,
    lat: Option<f64>,
    lon: Option<f64>,
    ele: Option<f64>,
) {
    match (lat, lon) {
        (Some(lat), Some(lon)) if valid_coordinates(lat, lon) => points.push(TrackPoint {
            lat,
            lon,
            ele: ele.and_then(plausible_elevation),
        }),
        _ => *rejected += 1,
    }
}

fn finish(
    name: Option<String>,
    points: Vec<TrackPoint>,
    rejected: usize,
) -> Result<ParsedRoute, RouteError> {
    if points.is_empty() {
        return Err(if rejected > 0 {
            RouteError::InvalidCoordinate { rejected }
        } else {
            RouteError::Empty
        });
    }
    Ok(ParsedRoute {
        name,
        tracks: vec![points],
        ..ParsedRoute::default()
    })
}

fn unexpected(what: &str) -> RouteError {
    RouteError::UnexpectedPayload(what.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    // All fixtures below are hand-made, small, in the publicly documented
    // shape of each service's payload; none is copied from a real page.

    /// A Komoot-like tour page: the JSON state is a JS string literal, so
    /// its quotes are `\"`, its own escapes doubled (`\\u00e9`), and `/` may
    /// appear as `\/`.
    const KOMOOT_TOUR: &str = r#"<!DOCTYPE html><html><head><title>Tour</title></head><body>
<div id="pageMountNode"></div>
<script>
  window.kmtBoot.setProps("{\"page\":{\"_embedded\":{\"tour\":{\"id\":\"123\",\"name\":\"Col de la Croix \\u00e9t\\u00e9 \\ud83d\\udeb2 \\\"TdF\\\"\",\"sport\":\"touringbicycle\",\"_links\":{\"self\":{\"href\":\"https:\/\/example.invalid\/tours\/123\"}},\"_embedded\":{\"coordinates\":{\"items\":[{\"lat\":45.1,\"lng\":6.1,\"alt\":300.5,\"t\":0},{\"lat\":45.2,\"lng\":6.2,\"alt\":310,\"t\":1000},{\"lat\":45.3,\"lng\":6.3,\"t\":2000},{\"lat\":95,\"lng\":6.3,\"alt\":1}]}}}}}}");
</script></body></html>"#;

    const KOMOOT_COLLECTION: &str = r#"<html><script>kmtBoot.setProps( '{"page":{"_embedded":{"collectionHal":{"name":"Alps","_embedded":{"compilation":{"_embedded":{"items":[{"id":111,"type":"tour_planned"},{"id":"222","type":"tour_recorded"},{"id":333,"type":"highlight_point"},{"id":111,"type":"tour_planned"},{"name":"no id"}]}}}}}}}' );</script></html>"#;

    #[test]
    fn komoot_tour_page() {
        let r = parse_komoot_tour_html(KOMOOT_TOUR).expect("tour");
        assert_eq!(r.name.as_deref(), Some("Col de la Croix été 🚲 \"TdF\""));
        assert_eq!(
            r.tracks,
            vec![vec![
                TrackPoint {
                    lat: 45.1,
                    lon: 6.1,
                    ele: Some(300.5)
                },
                TrackPoint {
                    lat: 45.2,
                    lon: 6.2,
                    ele: Some(310.0)
                },
                TrackPoint {
                    lat: 45.3,
                    lon: 6.3,
                    ele: None
                },
            ]]
        );
    }

    /// Encodes `s` as a JS string literal the way a server-side template
    /// would, escaping non-ASCII as `\uXXXX`.
    fn js_literal(s: &str) -> String {
        let mut out = String::from("\"");
        for unit in s.encode_utf16() {
            match unit {
                0x22 => out.push_str("\\\""),
                0x5C => out.push_str("\\\\"),
                0x2F => out.push_str("\\/"),
                0x0A => out.push_str("\\n"),
                0x20..=0x7E => out.push(char::from(unit as u8)),
                _ => out.push_str(&format!("\\u{unit:04x}")),
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn komoot_round_trip_through_a_js_literal() {
        let items: Vec<Value> = (0..500)
            .map(|i| {
                let f = f64::from(i);
                serde_json::json!({"lat": 46.0 + f * 1e-4, "lng": 7.0 + f * 1e-4, "alt": 500.0 + f})
            })
            .collect();
        let state = serde_json::json!({"page": {"_embedded": {"tour": {
            "name": "Zürich → Genève\n<b>/</b> \\ \"x\" 😀",
            "_embedded": {"coordinates": {"items": items}}
        }}}});
        let html = format!(
            "<script>window.kmtBoot.setProps({});</script>",
            js_literal(&state.to_string())
        );
        let r = parse_komoot_tour_html(&html).expect("round trip");
        assert_eq!(
            r.name.as_deref(),
            Some("Zürich → Genève <b>/</b> \\ \"x\" 😀")
        );
        assert_eq!(r.tracks[0].len(), 500);
        assert_eq!(r.tracks[0][499].ele, Some(999.0));
    }

    #[test]
    fn komoot_collection_ids() {
        let ids = komoot_collection_tour_ids(KOMOOT_COLLECTION).expect("collection");
        assert_eq!(ids, vec!["111".to_owned(), "222".to_owned()]);
        let empty = r#"kmtBoot.setProps("{\"page\":{\"_embedded\":{\"collectionHal\":{\"_embedded\":{\"compilation\":{\"_embedded\":{\"items\":[]}}}}}}}")"#;
        assert_eq!(komoot_collection_tour_ids(empty), Ok(vec![]));
    }

    #[test]
    fn komoot_unexpected_pages() {
        let cases = [
            "<html>Please log in</html>",
            "kmtBoot.setProps(window.state)",
            "kmtBoot.setProps(\"{\\\"page\\\":",
            "kmtBoot.setProps(\"not json\")",
            "kmtBoot.setProps(\"{\\\"page\\\":{}}\")",
            "kmtBoot.setProps(\"\\u12\")",
            "kmtBoot.setProps(\"\\x4\")",
            "kmtBoot.setProps(\"\\u{110000\")",
        ];
        for html in cases {
            assert!(
                matches!(
                    parse_komoot_tour_html(html),
                    Err(RouteError::UnexpectedPayload(_))
                ),
                "{html}"
            );
        }
        assert!(matches!(
            komoot_collection_tour_ids(KOMOOT_TOUR),
            Err(RouteError::UnexpectedPayload(_))
        ));
        let no_points = r#"kmtBoot.setProps("{\"page\":{\"_embedded\":{\"tour\":{\"_embedded\":{\"coordinates\":{\"items\":[]}}}}}}")"#;
        assert_eq!(parse_komoot_tour_html(no_points), Err(RouteError::Empty));
        let bad_points = r#"kmtBoot.setProps("{\"page\":{\"_embedded\":{\"tour\":{\"_embedded\":{\"coordinates\":{\"items\":[{\"lat\":1},{\"lat\":91,\"lng\":1}]}}}}}}")"#;
        assert_eq!(
            parse_komoot_tour_html(bad_points),
            Err(RouteError::InvalidCoordinate { rejected: 2 })
        );
    }

    #[test]
    fn js_unescaping() {
        let decode = |s: &str| unescape_js_string(s).expect("decodes");
        assert_eq!(
            decode(r#""a\"b\\c\/d\n\t\x41\u0042\u{1F600}""#),
            "a\"b\\c/d\n\tAB😀"
        );
        assert_eq!(decode(r#"'it\'s "fine"'"#), "it's \"fine\"");
        assert_eq!(
            decode("\"line\\\ncontinued\\\r\nhere\""),
            "linecontinuedhere"
        );
        assert_eq!(
            decode(r#""\ud83d\ude00 \ud83d x \ude00""#),
            "😀 \u{FFFD} x \u{FFFD}"
        );
        assert_eq!(decode(r#""\q""#), "q");
    }

    #[test]
    fn mutated_payloads_never_panic() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as usize
        };
        let alphabet = [
            '\\', '"', '\'', 'u', 'x', '{', '}', '[', ']', ':', ',', '0', 'D', '8', 'é', '\n',
        ];
        for base in [KOMOOT_TOUR, KOMOOT_COLLECTION, RWGPS] {
            for _ in 0..300 {
                let mut doc: Vec<char> = base.chars().collect();
                for _ in 0..1 + next() % 4 {
                    let at = next() % (doc.len() + 1);
                    match next() % 3 {
                        0 => doc.truncate(at),
                        1 => doc.insert(at, alphabet[next() % alphabet.len()]),
                        _ if at < doc.len() => {
                            doc.remove(at);
                        }
                        _ => {}
                    }
                }
                let doc: String = doc.into_iter().collect();
                let _ = parse_komoot_tour_html(&doc);
                let _ = komoot_collection_tour_ids(&doc);
                let _ = parse_ridewithgps_json(doc.as_bytes());
            }
        }
    }

    /// RideWithGPS: hand-made in the documented `{"route": {...}}` shape.
    const RWGPS: &str = r#"{"type":"route","route":{"id":42,"name":"  Loire à vélo ","distance":2500.0,
"track_points":[{"x":1.1,"y":47.1,"e":50.2,"d":0.0},{"x":1.2,"y":47.2,"d":1200.5},
{"lng":1.3,"lat":47.3,"e":52},{"x":1.4,"y":null},{"x":200,"y":47.5,"e":1}]}}"#;

    #[test]
    fn ridewithgps_route() {
        let r = parse_ridewithgps_json(RWGPS.as_bytes()).expect("route");
        assert_eq!(r.name.as_deref(), Some("Loire à vélo"));
        assert_eq!(
            r.tracks,
            vec![vec![
                TrackPoint {
                    lat: 47.1,
                    lon: 1.1,
                    ele: Some(50.2)
                },
                TrackPoint {
                    lat: 47.2,
                    lon: 1.2,
                    ele: None
                },
                TrackPoint {
                    lat: 47.3,
                    lon: 1.3,
                    ele: Some(52.0)
                },
            ]]
        );
        let top_level = r#"{"name":"T","track_points":[{"x":1,"y":2}]}"#;
        let r = parse_ridewithgps_json(top_level.as_bytes()).expect("top level");
        assert_eq!(r.tracks[0].len(), 1);
    }

    #[test]
    fn ridewithgps_unexpected() {
        for body in [
            &b"<html>login</html>"[..],
            b"{}",
            b"{\"route\":{\"name\":\"x\"}}",
            b"{\"route\":{\"track_points\":[{\"x\":\"1\",\"y\":2}]}}",
            b"[1,2,3]",
            b"",
        ] {
            assert!(
                matches!(
                    parse_ridewithgps_json(body),
                    Err(RouteError::UnexpectedPayload(_))
                ),
                "{body:?}"
            );
        }
        assert_eq!(
            parse_ridewithgps_json(b"{\"route\":{\"track_points\":[]}}"),
            Err(RouteError::Empty)
        );
        assert_eq!(
            parse_ridewithgps_json(b"{\"route\":{\"track_points\":[{\"x\":0}]}}"),
            Err(RouteError::InvalidCoordinate { rejected: 1 })
        );
    }
}
