//! The stored form of a generation's full-resolution track: 20 bytes a point (latitude and
//! longitude as f64, elevation as f32 with NaN for none), little-endian. Analysis jobs read it
//! back instead of fetching the source again, so re-analysis sees exactly the same route.

use etappe_route::gpx::TrackPoint;

const POINT_BYTES: usize = 20;

/// Encodes points.
pub fn encode(points: &[TrackPoint]) -> Vec<u8> {
    let mut out = Vec::with_capacity(points.len() * POINT_BYTES);
    for p in points {
        out.extend_from_slice(&p.lat.to_le_bytes());
        out.extend_from_slice(&p.lon.to_le_bytes());
        out.extend_from_slice(&(p.ele.map_or(f32::NAN, |e| e as f32)).to_le_bytes());
    }
    out
}

/// Decodes points; `None` when the length is not a whole number of points.
pub fn decode(bytes: &[u8]) -> Option<Vec<TrackPoint>> {
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
pub fn key(trip_id: etappe_events::ids::TripId, generation: u64) -> String {
    format!("track:{trip_id}:{generation}")
}

/// The blob key of an uploaded GPX file.
pub fn upload_key(trip_id: etappe_events::ids::TripId) -> String {
    format!("upload:{trip_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_round_trip() {
        let points = vec![
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
        ];
        assert_eq!(decode(&encode(&points)), Some(points));
        assert_eq!(decode(&[1, 2, 3]), None);
    }
}
