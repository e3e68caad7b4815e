//! Decoder for Google's encoded polyline format, which Valhalla uses with
//! six decimals ("polyline6"). Written to reject, never panic on, any input.

/// Why an encoded polyline could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PolylineError {
    #[error("invalid character at byte {0}")]
    InvalidCharacter(usize),
    #[error("polyline ends in the middle of a value")]
    Truncated,
    #[error("value too large at byte {0}")]
    Overflow(usize),
    #[error("coordinate out of range")]
    OutOfRange,
    #[error("unsupported precision {0}")]
    UnsupportedPrecision(u32),
}

/// Decodes to `(lat, lon)` pairs; `precision` is 5 for Google, 6 for Valhalla.
pub fn decode_polyline(encoded: &str, precision: u32) -> Result<Vec<(f64, f64)>, PolylineError> {
    if precision > 10 {
        return Err(PolylineError::UnsupportedPrecision(precision));
    }
    let factor = 10_f64.powi(i32::try_from(precision).unwrap_or(10));
    let bytes = encoded.as_bytes();
    let mut position = 0;
    let (mut lat, mut lon) = (0_i64, 0_i64);
    let mut points = Vec::with_capacity(bytes.len() / 4);
    while position < bytes.len() {
        let delta_lat = read_value(bytes, &mut position)?;
        let delta_lon = read_value(bytes, &mut position)?;
        lat = lat
            .checked_add(delta_lat)
            .ok_or(PolylineError::Overflow(position))?;
        lon = lon
            .checked_add(delta_lon)
            .ok_or(PolylineError::Overflow(position))?;
        // i64 -> f64 may round for huge values, but those fail the range check.
        #[allow(clippy::cast_precision_loss)]
        let (lat_deg, lon_deg) = (lat as f64 / factor, lon as f64 / factor);
        if !crate::geo::is_valid_position(lat_deg, lon_deg) {
            return Err(PolylineError::OutOfRange);
        }
        points.push((lat_deg, lon_deg));
    }
    Ok(points)
}

/// One zigzag-encoded varint: 5-bit chunks offset by 63, low chunk first,
/// 0x20 set on every chunk but the last.
fn read_value(bytes: &[u8], position: &mut usize) -> Result<i64, PolylineError> {
    let mut result: i64 = 0;
    let mut shift = 0_u32;
    loop {
        let Some(&byte) = bytes.get(*position) else {
            return Err(PolylineError::Truncated);
        };
        if !(63..=126).contains(&byte) {
            return Err(PolylineError::InvalidCharacter(*position));
        }
        // 12 chunks of 5 bits already exceed any real coordinate.
        if shift > 55 {
            return Err(PolylineError::Overflow(*position));
        }
        *position += 1;
        let chunk = i64::from(byte - 63);
        result |= (chunk & 0x1f) << shift;
        shift += 5;
        if chunk < 0x20 {
            break;
        }
    }
    Ok(if result & 1 == 1 {
        !(result >> 1)
    } else {
        result >> 1
    })
}

#[cfg(test)]
pub(crate) fn encode_polyline(points: &[(f64, f64)], precision: u32) -> String {
    fn push_value(out: &mut String, value: i64) {
        let mut bits = if value < 0 { !(value << 1) } else { value << 1 };
        while bits >= 0x20 {
            out.push(char::from(
                u8::try_from((bits & 0x1f) | 0x20).unwrap_or(0) + 63,
            ));
            bits >>= 5;
        }
        out.push(char::from(u8::try_from(bits).unwrap_or(0) + 63));
    }
    let factor = 10_f64.powi(i32::try_from(precision).unwrap_or(6));
    let mut out = String::new();
    let (mut previous_lat, mut previous_lon) = (0_i64, 0_i64);
    for &(lat, lon) in points {
        #[allow(clippy::cast_possible_truncation)]
        let (lat, lon) = ((lat * factor).round() as i64, (lon * factor).round() as i64);
        push_value(&mut out, lat - previous_lat);
        push_value(&mut out, lon - previous_lon);
        (previous_lat, previous_lon) = (lat, lon);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOGLE_EXAMPLE: [(f64, f64); 3] = [(38.5, -120.2), (40.7, -120.95), (43.252, -126.453)];

    #[test]
    fn decodes_the_documented_examples() {
        // Google's documented example, and the same points at precision 6
        // as produced by the reference `polyline` Python package.
        assert_eq!(
            decode_polyline("_p~iF~ps|U_ulLnnqC_mqNvxq`@", 5),
            Ok(GOOGLE_EXAMPLE.to_vec())
        );
        assert_eq!(
            decode_polyline("_izlhA~rlgdF_{geC~ywl@_kwzCn`{nI", 6),
            Ok(GOOGLE_EXAMPLE.to_vec())
        );
        assert_eq!(decode_polyline("", 6), Ok(Vec::new()));
    }

    #[test]
    fn round_trips_through_the_encoder() {
        let route = [
            (47.999_008, 7.842_104),
            (48.000_1, 7.85),
            (-33.868_82, 151.209_296),
            (0.0, -0.000_001),
        ];
        assert_eq!(
            encode_polyline(&GOOGLE_EXAMPLE, 6),
            "_izlhA~rlgdF_{geC~ywl@_kwzCn`{nI"
        );
        let decoded = decode_polyline(&encode_polyline(&route, 6), 6).expect("decode");
        assert_eq!(decoded.len(), route.len());
        for (got, want) in decoded.iter().zip(route) {
            assert!(
                (got.0 - want.0).abs() < 1e-9 && (got.1 - want.1).abs() < 1e-9,
                "{got:?} {want:?}"
            );
        }
    }

    #[test]
    fn rejects_broken_input() {
        assert_eq!(decode_polyline("_p~iF", 5), Err(PolylineError::Truncated));
        assert_eq!(
            decode_polyline("_p~iF~ps|", 5),
            Err(PolylineError::Truncated)
        );
        assert_eq!(
            decode_polyline("ab cd", 5),
            Err(PolylineError::InvalidCharacter(2))
        );
        assert_eq!(
            decode_polyline(&"~".repeat(40), 6),
            Err(PolylineError::Overflow(12))
        );
        assert_eq!(
            decode_polyline("_izlhA~rlgdF", 4),
            Err(PolylineError::OutOfRange)
        );
        assert_eq!(
            decode_polyline("??", 11),
            Err(PolylineError::UnsupportedPrecision(11))
        );
    }

    #[test]
    fn never_panics_on_arbitrary_strings() {
        // A fixed-seed xorshift keeps the test deterministic and dependency-free.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet: Vec<char> = (0_u32..200)
            .filter_map(char::from_u32)
            .chain(['é', '€', '😀'])
            .collect();
        let mut decoded_some = 0;
        for _ in 0..20_000 {
            let length = usize::try_from(next() % 40).unwrap_or(0);
            let text: String = (0..length)
                .map(|_| {
                    let index = usize::try_from(next() % alphabet.len() as u64).unwrap_or(0);
                    // Bias towards the valid range so deep paths get exercised too.
                    if next() % 4 == 0 {
                        alphabet[index]
                    } else {
                        char::from(63 + (next() % 64) as u8)
                    }
                })
                .collect();
            for precision in [5, 6] {
                if decode_polyline(&text, precision).is_ok() {
                    decoded_some += 1;
                }
            }
        }
        assert!(
            decoded_some > 0,
            "the generator should also produce valid polylines"
        );
    }
}
