//! The named places an import keeps, so the names a rider types resolve where the extract
//! is: every named `place=*` from city to locality (and squares), stations, huts,
//! campsites, hotels, peaks and passes. Each is stored once per distinct folded name it
//! carries (`name`, every `name:xx`, `alt_name`, `official_name`, `short_name`, `loc_name`,
//! `int_name`), folded as the embedded gazetteer folds queries, so "Wien" and "Vienna"
//! both find Vienna and accents or case never matter.

use crate::tags::Tags;

/// The name keys read besides `name:xx`. `old_name` is left out: a name a place no longer
/// carries would resolve a rider's word to it.
const NAME_KEYS: &[&str] = &[
    "name",
    "alt_name",
    "official_name",
    "short_name",
    "loc_name",
    "int_name",
];
/// The most names kept of one place (an extract's big cities carry a hundred `name:xx`).
const MAX_NAMES: usize = 24;
/// A name longer than this is not a name a person types.
const MAX_NAME_CHARS: usize = 120;

/// What a named place is and how much it weighs among places of the same name (0–1): a
/// town beats a hamlet, a station or a hut, of its name at the same distance.
pub(crate) fn kind_of(tags: &Tags<'_>) -> Option<(&'static str, f32)> {
    let place = tags.get("place").and_then(|p| {
        Some(match p {
            "city" => ("city", 1.0),
            "town" => ("town", 0.6),
            "village" => ("village", 0.35),
            "suburb" | "borough" => ("suburb", 0.3),
            "hamlet" => ("hamlet", 0.15),
            "quarter" => ("quarter", 0.15),
            "neighbourhood" => ("neighbourhood", 0.1),
            "square" => ("square", 0.1),
            "locality" => ("locality", 0.05),
            "isolated_dwelling" => ("isolated_dwelling", 0.04),
            "farm" => ("farm", 0.02),
            _ => return None,
        })
    });
    let station = || {
        let railway = tags.get("railway");
        if matches!(railway, Some("station")) || tags.get("public_transport") == Some("station") {
            Some(("station", 0.25))
        } else if railway == Some("halt") {
            Some(("station", 0.1))
        } else {
            None
        }
    };
    let tourism = || {
        Some(match tags.get("tourism")? {
            "alpine_hut" => ("alpine_hut", 0.2),
            "wilderness_hut" => ("wilderness_hut", 0.1),
            "camp_site" => ("camp_site", 0.15),
            "hotel" => ("hotel", 0.08),
            "hostel" => ("hostel", 0.08),
            "guest_house" => ("guest_house", 0.05),
            "chalet" => ("chalet", 0.05),
            _ => return None,
        })
    };
    let natural = || {
        Some(match tags.get("natural")? {
            "peak" => ("peak", 0.1),
            "saddle" => ("pass", 0.08),
            _ => return None,
        })
    };
    let pass = || (tags.get("mountain_pass") == Some("yes")).then_some(("pass", 0.1));
    place
        .or_else(station)
        .or_else(tourism)
        .or_else(natural)
        .or_else(pass)
}

/// The place's own name (`name`, else the first other name) and every distinct folded name
/// it carries, at most [`MAX_NAMES`].
pub(crate) fn names_of(tags: &Tags<'_>) -> Option<(String, Vec<String>)> {
    let mut written: Vec<&str> = Vec::new();
    for key in NAME_KEYS {
        if let Some(value) = tags.get(key) {
            written.extend(value.split(';').map(str::trim));
        }
    }
    written.extend(
        tags.iter()
            .filter(|(k, _)| k.starts_with("name:") && !k.contains("pronunciation"))
            .map(|(_, v)| v.trim()),
    );
    let own = written
        .iter()
        .find(|n| !n.is_empty() && n.chars().count() <= MAX_NAME_CHARS)?;
    let own = (*own).to_owned();
    let mut keys: Vec<String> = Vec::new();
    for name in written {
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
            continue;
        }
        let key = etappe_gazetteer::fold(name);
        if !key.is_empty() && !keys.contains(&key) {
            keys.push(key);
            if keys.len() == MAX_NAMES {
                break;
            }
        }
    }
    (!keys.is_empty()).then_some((own, keys))
}

/// A named place as the importer writes it: one row per folded name.
#[derive(Debug, Clone)]
pub(crate) struct PlaceRow {
    pub key: String,
    pub name: String,
    pub kind: &'static str,
    pub osm_type: &'static str,
    pub osm_id: i64,
    pub lat: f64,
    pub lon: f64,
    pub weight: f32,
}

/// The rows of one OSM object, when it is a named place.
pub(crate) fn place_rows(
    osm_type: &'static str,
    osm_id: i64,
    (lat, lon): (f64, f64),
    tags: &Tags<'_>,
    out: &mut Vec<PlaceRow>,
) {
    let Some((kind, weight)) = kind_of(tags) else {
        return;
    };
    let Some((name, keys)) = names_of(tags) else {
        return;
    };
    out.extend(keys.into_iter().map(|key| PlaceRow {
        key,
        name: name.clone(),
        kind,
        osm_type,
        osm_id,
        lat,
        lon,
        weight,
    }));
}

/// The first key after every key that begins with `prefix` (the end of a prefix's range
/// scan): its last character moved one up.
pub(crate) fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(next) = char::from_u32(u32::from(last) + 1) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags<'a>(pairs: &'a [(&'a str, &'a str)]) -> Tags<'a> {
        Tags::collect(pairs.iter().copied())
    }

    #[test]
    fn villages_stations_huts_and_peaks_are_places_and_a_bench_is_not() {
        assert_eq!(
            kind_of(&tags(&[("place", "village"), ("name", "Malbun")])),
            Some(("village", 0.35))
        );
        assert_eq!(
            kind_of(&tags(&[("railway", "station"), ("name", "Schaan-Vaduz")])).map(|k| k.0),
            Some("station")
        );
        assert_eq!(
            kind_of(&tags(&[("tourism", "alpine_hut")])).map(|k| k.0),
            Some("alpine_hut")
        );
        assert_eq!(
            kind_of(&tags(&[("natural", "peak")])).map(|k| k.0),
            Some("peak")
        );
        assert_eq!(kind_of(&tags(&[("amenity", "bench")])), None);
    }

    #[test]
    fn every_name_of_a_place_is_a_key_once_folded_and_a_nameless_place_is_none() {
        let (own, keys) = names_of(&tags(&[
            ("place", "city"),
            ("name", "Wien"),
            ("name:en", "Vienna"),
            ("name:de", "Wien"),
            ("name:fr", "Vienne"),
            ("alt_name", "Vindobona;WIEN"),
            ("name:en:pronunciation", "ignored"),
        ]))
        .expect("named");
        assert_eq!(own, "Wien");
        assert_eq!(keys, ["wien", "vindobona", "vienna", "vienne"]);
        assert_eq!(names_of(&tags(&[("place", "hamlet")])), None);
        let (_, keys) = names_of(&tags(&[("name", "Zürich HB")])).expect("named");
        assert_eq!(keys, ["zurich hb"]);
    }

    #[test]
    fn a_prefix_range_ends_after_its_last_key() {
        assert_eq!(prefix_end("ste").as_deref(), Some("stf"));
        assert_eq!(prefix_end("").as_deref(), None);
        let end = prefix_end("steg").expect("end");
        assert!("steglitz" < end.as_str() && "steg" < end.as_str() && "stei" >= end.as_str());
    }
}
