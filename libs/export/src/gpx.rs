//! GPX 1.1 writer, built with plain string formatting.
//!
//! The document follows the element order the GPX 1.1 schema requires
//! (`metadata`, `wpt*`, `rte*`, `trk*`), so it validates against topografix's `gpx.xsd`.

use std::fmt::Write as _;

use crate::geo::{sanitize, sanitize_point};
use crate::{ExportDay, ExportWaypoint, WaypointKind};
use etappe_route::xml::push_escaped;

/// The `creator` attribute, which the GPX schema makes mandatory.
const CREATOR: &str = "Etappe";

/// Rough bytes per `<trkpt>` line, used to reserve the output buffer once instead of
/// letting a 200k-point trip grow it through a dozen reallocations.
const BYTES_PER_TRKPT: usize = 90;

/// Writes a trip as a GPX 1.1 document.
///
/// GPX 1.1: metadata name, one `<trk>` per day (name = day name, one `<trkseg>` per
/// recorded piece: a new one after each of the day's breaks), one
/// `<wpt>` per waypoint (with `<sym>Lodging</sym>` for lodging), elevation when known.
/// Text is XML-escaped and stripped of control characters.
///
/// Coordinates are written with 7 decimals (about 1 cm), elevations with 2. Points and
/// waypoints without a finite position are left out (see the crate docs); a day without
/// points still gets its `<trk>` with an empty `<trkseg>` so the day count is preserved.
pub fn to_gpx(trip_name: &str, days: &[ExportDay], waypoints: &[ExportWaypoint]) -> String {
    let n_points: usize = days.iter().map(|d| d.points.len()).sum();
    let mut out = String::with_capacity(512 + n_points * BYTES_PER_TRKPT + waypoints.len() * 128);

    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str("<gpx version=\"1.1\" creator=\"");
    out.push_str(CREATOR);
    out.push_str(
        "\" xmlns=\"http://www.topografix.com/GPX/1/1\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 \
         http://www.topografix.com/GPX/1/1/gpx.xsd\">\n",
    );

    out.push_str("  <metadata>\n");
    push_name(&mut out, "    ", trip_name);
    out.push_str("  </metadata>\n");

    for w in waypoints {
        let Some((lat, lon)) = sanitize(w.lat, w.lon) else {
            continue;
        };
        // Writing into a String cannot fail; the fmt::Result only exists for other sinks.
        let _ = writeln!(out, "  <wpt lat=\"{lat:.7}\" lon=\"{lon:.7}\">");
        push_name(&mut out, "    ", &w.name);
        match w.kind {
            // "Lodging" is the symbol name Garmin devices and BaseCamp use for hotels.
            WaypointKind::Lodging => out.push_str("    <sym>Lodging</sym>\n"),
            // Garmin's symbol names, which most apps read too.
            WaypointKind::Water => out.push_str("    <sym>Drinking Water</sym>\n"),
            WaypointKind::Food => out.push_str("    <sym>Restaurant</sym>\n"),
            WaypointKind::BikeShop => out.push_str("    <sym>Bike Trail</sym>\n"),
            WaypointKind::Station => out.push_str("    <sym>Ground Transportation</sym>\n"),
            WaypointKind::Generic => {}
        }
        out.push_str("  </wpt>\n");
    }

    for day in days {
        out.push_str("  <trk>\n");
        push_name(&mut out, "    ", &day.name);
        out.push_str("    <trkseg>\n");
        let mut breaks = day.breaks.iter().copied().peekable();
        for (i, p) in day.points.iter().enumerate() {
            // A break is never drawn: the next recorded piece gets its own segment.
            if breaks.next_if(|&b| b <= i).is_some() && i > 0 {
                out.push_str("    </trkseg>\n    <trkseg>\n");
            }
            let Some(p) = sanitize_point(p) else {
                continue;
            };
            match p.ele {
                Some(ele) => {
                    let _ = writeln!(
                        out,
                        "      <trkpt lat=\"{:.7}\" lon=\"{:.7}\"><ele>{:.2}</ele></trkpt>",
                        p.lat, p.lon, ele
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "      <trkpt lat=\"{:.7}\" lon=\"{:.7}\"/>",
                        p.lat, p.lon
                    );
                }
            }
        }
        out.push_str("    </trkseg>\n");
        out.push_str("  </trk>\n");
    }

    out.push_str("</gpx>\n");
    out
}

/// Writes `<name>…</name>` on its own line, or nothing for an empty name: an empty
/// element is valid but shows up as a blank label in some apps.
fn push_name(out: &mut String, indent: &str, name: &str) {
    if name.is_empty() {
        return;
    }
    out.push_str(indent);
    out.push_str("<name>");
    push_escaped(out, name);
    out.push_str("</name>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ExportPoint;

    #[test]
    fn minimal_document_shape() {
        let days = vec![ExportDay {
            name: "Tag 1".into(),
            points: vec![
                ExportPoint {
                    lat: 48.0,
                    lon: 11.0,
                    ele: Some(520.0),
                },
                ExportPoint {
                    lat: 48.1,
                    lon: 11.1,
                    ele: None,
                },
                ExportPoint {
                    lat: f64::NAN,
                    lon: 11.1,
                    ele: None,
                },
                ExportPoint {
                    lat: 49.0,
                    lon: 12.0,
                    ele: None,
                },
            ],
            breaks: vec![3],
        }];
        let wpts = vec![
            ExportWaypoint {
                name: "Hotel".into(),
                lat: 48.1,
                lon: 11.1,
                kind: WaypointKind::Lodging,
            },
            ExportWaypoint {
                name: "Water (day 1 km 3.5)".into(),
                lat: 48.05,
                lon: 11.05,
                kind: WaypointKind::Water,
            },
        ];
        let gpx = to_gpx("Trip", &days, &wpts);
        assert!(gpx.contains("<metadata>\n    <name>Trip</name>\n  </metadata>"));
        assert!(gpx.contains("<ele>520.00</ele>"));
        assert!(gpx.contains("<sym>Lodging</sym>"));
        assert!(gpx.contains("<sym>Drinking Water</sym>"));
        assert_eq!(gpx.matches("<trkpt ").count(), 3);
        // The break starts a second segment: the jump to 49°N is not drawn.
        assert_eq!(gpx.matches("<trkseg>").count(), 2);
        assert!(gpx.find("<wpt").unwrap_or(usize::MAX) < gpx.find("<trk>").unwrap_or(0));
    }
}
