//! The Overpass stand-in's answers, in Overpass's JSON format, made up from the query itself
//! so that any route gets the same world around it:
//!
//! - a corridor query (`… out tags geom;`, a polyline in `around:`) gets, measured along its
//!   polyline from the chunk's start: a drinking-water tap at km 0.5 (and no other water, so
//!   a long day has a water gap), a bakery open every day 06:00–20:00 at km 10, a
//!   `highway=primary` without cycle lane from km 20 to km 21 on the route, a gravel
//!   `highway=track` from km 30 to km 31, a museum 100 m off the route at km 40 and a ford on
//!   the route at km 50, on an unclassified road from km 49.8 to 50.2 (each only when the
//!   chunk is that long);
//! - a place query gets one feature per `around:R,lat,lon`: a railway station 1 km north
//!   of the point for a station search, a pharmacy 2 km north for a health search, and for a
//!   search of places to sleep the hotel "Hôtel du Relais" 200 m north (the accommodation
//!   scan's answer).

use serde_json::{Value, json};

/// The elements answering `query`.
pub(super) fn elements(query: &str) -> Vec<Value> {
    let arounds: Vec<Vec<f64>> = query
        .split("(around:")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|inside| {
            inside
                .split(',')
                .filter_map(|n| n.trim().parse::<f64>().ok())
                .collect()
        })
        .collect();
    if query.contains("out tags geom") {
        return arounds
            .first()
            .map(|first| corridor(&pairs(first.get(1..).unwrap_or_default())))
            .unwrap_or_default();
    }
    let mut out = Vec::new();
    for (i, around) in arounds.iter().enumerate() {
        let [_, lat, lon] = around.as_slice() else {
            continue;
        };
        // One id range per class: Overpass ids are unique, and the client keeps one element
        // per id.
        let id = 4_242_424_242_u64 + i as u64;
        let (station, pharmacy) = (id + 1_000_000, id + 2_000_000);
        if query.contains(r#""railway"="station""#) {
            out.push(node(
                station,
                lat + 0.009,
                *lon,
                json!({"railway": "station", "name": "Gare"}),
            ));
        } else if query.contains("pharmacy") {
            out.push(node(
                pharmacy,
                lat + 0.018,
                *lon,
                json!({"amenity": "pharmacy", "name": "Pharmacie"}),
            ));
        } else if query.contains("tourism") {
            out.push(node(
                id,
                lat + 0.0018,
                *lon,
                json!({"tourism": "hotel", "name": "Hôtel du Relais", "stars": "2",
                       "website": "https://relais.example"}),
            ));
        }
    }
    out
}

fn pairs(numbers: &[f64]) -> Vec<(f64, f64)> {
    numbers.chunks_exact(2).map(|c| (c[0], c[1])).collect()
}

fn node(id: u64, lat: f64, lon: f64, tags: Value) -> Value {
    let mut node = json!({"type": "node", "id": id, "lat": lat, "lon": lon});
    node["tags"] = tags;
    node
}

fn way(id: u64, points: &[(f64, f64)], tags: Value) -> Value {
    let geometry: Vec<Value> = points
        .iter()
        .map(|(lat, lon)| json!({"lat": lat, "lon": lon}))
        .collect();
    let mut way = json!({"type": "way", "id": id, "geometry": geometry});
    way["tags"] = tags;
    way
}

fn corridor(line: &[(f64, f64)]) -> Vec<Value> {
    let length = length_km(line);
    // Ids from the chunk's first point, so two chunks never share one.
    let base = line.first().map_or(0, |(lat, lon)| {
        ((lat * 1e4).abs() as u64 * 7 + (lon * 1e4).abs() as u64) * 100
    });
    let mut out = Vec::new();
    let mut add = |km: f64, element: &dyn Fn(u64) -> Value| {
        if km < length {
            out.push(element(base + out.len() as u64));
        }
    };
    add(0.5, &|id| {
        let (lat, lon) = at(line, 0.5);
        node(
            id,
            lat,
            lon,
            json!({"amenity": "drinking_water", "name": "Fontaine"}),
        )
    });
    add(10.0, &|id| {
        let (lat, lon) = at(line, 10.0);
        node(
            id,
            lat + 0.0005,
            lon,
            json!({"shop": "bakery", "name": "Boulangerie",
                                           "opening_hours": "Mo-Su 06:00-20:00"}),
        )
    });
    add(21.0, &|id| {
        way(
            id,
            &stretch(line, 20.0, 21.0),
            json!({"highway": "primary", "ref": "N7"}),
        )
    });
    add(31.0, &|id| {
        way(
            id,
            &stretch(line, 30.0, 31.0),
            json!({"highway": "track", "surface": "gravel"}),
        )
    });
    add(40.0, &|id| {
        let (lat, lon) = at(line, 40.0);
        node(
            id,
            lat + 0.0009,
            lon,
            json!({"tourism": "museum", "name": "Musée",
                                           "website": "https://musee.example"}),
        )
    });
    add(50.0, &|id| {
        let (lat, lon) = at(line, 50.0);
        node(id, lat, lon, json!({"ford": "yes"}))
    });
    // The way the ford is a node of: a ford counts for a day only on a way it rides.
    add(50.2, &|id| {
        way(
            id,
            &stretch(line, 49.8, 50.2),
            json!({"highway": "unclassified", "surface": "asphalt"}),
        )
    });
    out
}

fn haversine_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la1, la2) = (a.0.to_radians(), b.0.to_radians());
    let dla = la2 - la1;
    let dlo = (b.1 - a.1).to_radians();
    let h = (dla / 2.0).sin().powi(2) + la1.cos() * la2.cos() * (dlo / 2.0).sin().powi(2);
    2.0 * 6_371.008_8 * h.sqrt().asin()
}

fn length_km(line: &[(f64, f64)]) -> f64 {
    line.windows(2).map(|w| haversine_km(w[0], w[1])).sum()
}

/// The point `km` along the line (its end beyond).
fn at(line: &[(f64, f64)], km: f64) -> (f64, f64) {
    let mut left = km;
    for w in line.windows(2) {
        let d = haversine_km(w[0], w[1]);
        if d > 0.0 && left <= d {
            let t = left / d;
            return (
                w[0].0 + (w[1].0 - w[0].0) * t,
                w[0].1 + (w[1].1 - w[0].1) * t,
            );
        }
        left -= d;
    }
    line.last().copied().unwrap_or_default()
}

/// Points every 100 m along the line from `from` to `to` km.
fn stretch(line: &[(f64, f64)], from: f64, to: f64) -> Vec<(f64, f64)> {
    let steps = ((to - from) * 10.0).round() as usize;
    (0..=steps)
        .map(|i| at(line, from + i as f64 * (to - from) / steps as f64))
        .collect()
}
