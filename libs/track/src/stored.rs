//! The stored form of a generation's full-resolution track. Analysis jobs and exports read it
//! back instead of fetching the source again, so re-analysis sees exactly the same route.
//!
//! Two layouts, told apart by the first eight bytes:
//! - plain (detours, and tracks stored before gaps were kept): 20 bytes a point (latitude and
//!   longitude as f64, elevation as f32 with NaN for none), little-endian;
//! - with facts ([`encode_stored`]): [`MAGIC`], a u32 point count, the points as above, then
//!   JSON holding the gaps between the source's pieces and the source's waypoints. The magic
//!   read as a plain point's latitude is a NaN, which no stored point has, so an old reader's
//!   data can never be mistaken for the new layout (and [`decode`] reads both).
//!
//! Keeping gaps and waypoints here, beside the points they index, needs no change to the
//! trip's events: the route's `track_key` already names this blob.

use etappe_route::gpx::{TrackPoint, Waypoint};
use etappe_route::pieces::{Gap, JoinedRoute};
use serde::{Deserialize, Serialize};

const POINT_BYTES: usize = 20;

/// Opens the layout with facts; as a little-endian f64 it is a NaN.
const MAGIC: [u8; 8] = *b"ETPK\x02\xff\xff\xff";

/// A stored track with what the source said beyond its points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredTrack {
    pub points: Vec<TrackPoint>,
    /// Gaps between the source's pieces, sorted by index (see `etappe_route::pieces`).
    pub gaps: Vec<Gap>,
    /// The source's waypoints.
    pub waypoints: Vec<Waypoint>,
}

impl StoredTrack {
    /// The points after a break (steps that are not ridden), sorted.
    pub fn breaks(&self) -> Vec<usize> {
        etappe_route::pieces::break_indices(&self.gaps)
    }

    /// The breaks inside points `first..=last`, as indices into that slice.
    pub fn breaks_within(&self, first: usize, last: usize) -> Vec<usize> {
        self.gaps
            .iter()
            .filter(|g| !g.bridged && g.index > first && g.index <= last)
            .map(|g| g.index - first)
            .collect()
    }

    /// The gaps (bridged or not) inside points `first..=last`.
    pub fn gaps_within(&self, first: usize, last: usize) -> impl Iterator<Item = &Gap> {
        self.gaps
            .iter()
            .filter(move |g| g.index > first && g.index <= last)
    }

    /// The waypoints whose nearest track point lies in `first..=last` (a waypoint belongs
    /// to the day that passes closest to it).
    pub fn waypoints_within(&self, first: usize, last: usize) -> Vec<&Waypoint> {
        self.waypoints
            .iter()
            .filter(|w| {
                nearest_index(&self.points, w.lat, w.lon).is_some_and(|i| i >= first && i <= last)
            })
            .collect()
    }
}

impl From<JoinedRoute> for StoredTrack {
    fn from(route: JoinedRoute) -> Self {
        Self {
            points: route.points,
            gaps: route.gaps,
            waypoints: Vec::new(),
        }
    }
}

/// Index of the point nearest to (lat, lon), by an equirectangular approximation that ranks
/// neighbours as the great circle does at a route's scale.
fn nearest_index(points: &[TrackPoint], lat: f64, lon: f64) -> Option<usize> {
    let cos_lat = lat.to_radians().cos();
    let mut best: Option<(usize, f64)> = None;
    for (i, p) in points.iter().enumerate() {
        let mut dlon = (p.lon - lon).abs();
        if dlon > 180.0 {
            dlon = 360.0 - dlon;
        }
        let (dx, dy) = (dlon * cos_lat, p.lat - lat);
        let d2 = dx * dx + dy * dy;
        if best.is_none_or(|(_, b)| d2 < b) {
            best = Some((i, d2));
        }
    }
    best.map(|(i, _)| i)
}

#[derive(Serialize, Deserialize)]
struct Facts {
    gaps: Vec<StoredGap>,
    waypoints: Vec<StoredWaypoint>,
}

#[derive(Serialize, Deserialize)]
struct StoredGap {
    index: usize,
    length_m: f64,
    bridged: bool,
}

#[derive(Serialize, Deserialize)]
struct StoredWaypoint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    lat: f64,
    lon: f64,
}

/// Encodes points in the plain layout.
pub fn encode(points: &[TrackPoint]) -> Vec<u8> {
    let mut out = Vec::with_capacity(points.len() * POINT_BYTES);
    push_points(&mut out, points);
    out
}

fn push_points(out: &mut Vec<u8>, points: &[TrackPoint]) {
    for p in points {
        out.extend_from_slice(&p.lat.to_le_bytes());
        out.extend_from_slice(&p.lon.to_le_bytes());
        out.extend_from_slice(&(p.ele.map_or(f32::NAN, |e| e as f32)).to_le_bytes());
    }
}

/// Encodes a track with its gaps and waypoints.
pub fn encode_stored(track: &StoredTrack) -> Vec<u8> {
    let facts = Facts {
        gaps: track
            .gaps
            .iter()
            .map(|g| StoredGap {
                index: g.index,
                length_m: g.length_m,
                bridged: g.bridged,
            })
            .collect(),
        waypoints: track
            .waypoints
            .iter()
            .map(|w| StoredWaypoint {
                name: w.name.clone(),
                lat: w.lat,
                lon: w.lon,
            })
            .collect(),
    };
    // Plain structs of numbers and strings always serialise.
    let json = serde_json::to_vec(&facts).unwrap_or_default();
    let mut out = Vec::with_capacity(12 + track.points.len() * POINT_BYTES + json.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(
        &u32::try_from(track.points.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes(),
    );
    push_points(&mut out, &track.points);
    out.extend_from_slice(&json);
    out
}

/// Decodes the points of either layout; `None` when the bytes are neither.
pub fn decode(bytes: &[u8]) -> Option<Vec<TrackPoint>> {
    decode_stored(bytes).map(|t| t.points)
}

/// Decodes either layout with its facts (none for the plain layout).
pub fn decode_stored(bytes: &[u8]) -> Option<StoredTrack> {
    let Some(rest) = bytes.strip_prefix(&MAGIC) else {
        return Some(StoredTrack {
            points: decode_points(bytes)?,
            ..StoredTrack::default()
        });
    };
    let count = usize::try_from(u32::from_le_bytes(rest.get(..4)?.try_into().ok()?)).ok()?;
    let end = 4usize.checked_add(count.checked_mul(POINT_BYTES)?)?;
    let points = decode_points(rest.get(4..end)?)?;
    let facts: Facts = serde_json::from_slice(rest.get(end..)?).ok()?;
    let gaps = facts
        .gaps
        .into_iter()
        .filter(|g| g.index < points.len())
        .map(|g| Gap {
            index: g.index,
            length_m: g.length_m,
            bridged: g.bridged,
        })
        .collect();
    let waypoints = facts
        .waypoints
        .into_iter()
        .map(|w| Waypoint {
            name: w.name,
            lat: w.lat,
            lon: w.lon,
        })
        .collect();
    Some(StoredTrack {
        points,
        gaps,
        waypoints,
    })
}

fn decode_points(bytes: &[u8]) -> Option<Vec<TrackPoint>> {
    if !bytes.len().is_multiple_of(POINT_BYTES) {
        return None;
    }
    bytes
        .chunks_exact(POINT_BYTES)
        .map(|c| {
            let lat = f64::from_le_bytes(c.get(0..8)?.try_into().ok()?);
            let lon = f64::from_le_bytes(c.get(8..16)?.try_into().ok()?);
            let ele = f32::from_le_bytes(c.get(16..20)?.try_into().ok()?);
            Some(TrackPoint {
                lat,
                lon,
                ele: (!ele.is_nan()).then_some(f64::from(ele)),
            })
        })
        .collect()
}

/// The blob key of a generation's track.
pub fn key(trip_id: etappe_domain::ids::TripId, generation: u64) -> String {
    format!("track:{trip_id}:{generation}")
}

/// The blob key of the places to sleep found along the track stored at `track_key` (with
/// nights at accommodation): beside the track, so it is copied and deleted with it.
pub fn beds_key(track_key: &str) -> String {
    format!("{track_key}:beds")
}

/// The beds along a route, as stored.
pub fn encode_beds(beds: &[etappe_domain::trip::nights::BedOnRoute]) -> Vec<u8> {
    serde_json::to_vec(beds).unwrap_or_default()
}

/// The beds stored by [`encode_beds`]; `None` when they do not decode.
pub fn decode_beds(bytes: &[u8]) -> Option<Vec<etappe_domain::trip::nights::BedOnRoute>> {
    serde_json::from_slice(bytes).ok()
}

/// The blob key of an uploaded GPX file.
pub fn upload_key(trip_id: etappe_domain::ids::TripId) -> String {
    format!("upload:{trip_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points() -> Vec<TrackPoint> {
        vec![
            TrackPoint {
                lat: 45.123456789,
                lon: 6.987654321,
                ele: Some(1234.5),
            },
            TrackPoint {
                lat: -12.5,
                lon: 179.9,
                ele: None,
            },
            TrackPoint {
                lat: -12.6,
                lon: 179.95,
                ele: None,
            },
        ]
    }

    #[test]
    fn points_round_trip() {
        let points = points();
        assert_eq!(decode(&encode(&points)), Some(points));
        assert_eq!(decode(&[1, 2, 3]), None);
    }

    #[test]
    fn gaps_and_waypoints_round_trip_and_old_readers_still_get_points() {
        let track = StoredTrack {
            points: points(),
            gaps: vec![Gap {
                index: 1,
                length_m: 4_000_000.0,
                bridged: false,
            }],
            waypoints: vec![Waypoint {
                name: Some("Spring".into()),
                lat: -12.61,
                lon: 179.95,
            }],
        };
        let bytes = encode_stored(&track);
        assert_eq!(decode_stored(&bytes), Some(track.clone()));
        assert_eq!(decode(&bytes), Some(track.points.clone()));
        // A plain blob decodes with no facts.
        let plain = decode_stored(&encode(&track.points)).expect("plain");
        assert!(plain.gaps.is_empty() && plain.waypoints.is_empty());
        // Truncated or corrupt: refused, not misread.
        assert_eq!(decode_stored(&bytes[..bytes.len() - 3]), None);
        assert_eq!(decode_stored(&bytes[..20]), None);
        assert_eq!(track.breaks_within(0, 2), vec![1]);
        assert_eq!(track.breaks_within(1, 2), Vec::<usize>::new());
        assert_eq!(track.waypoints_within(2, 2).len(), 1);
        assert!(track.waypoints_within(0, 1).is_empty());
    }
}
