//! FIT course export.
//!
//! A course file is what Garmin and Wahoo computers navigate with. It holds, in this order:
//! `file_id` (type course, with a serial number and creation time that make each file's
//! identity unique, see [`FitIdentity`]), `course` (name, sport), one `lap` summarising the
//! route, an `event` timer start, one `record` per route point with the `course_point`s
//! interleaved where they fall (so timestamps never go back), and an `event` timer stop.
//! Devices use the records' cumulative distance for "distance to go" and the course points'
//! distance to announce them, so both are computed here.
//!
//! A break in a day (`ExportDay::breaks`: a gap between the source's recorded pieces) is
//! not ridden: the records on either side of it carry the same distance and time, so the
//! gap adds nothing to the course's distance, its lap or its ETA.

mod crc;
mod encoder;

use encoder::{Encoder, Field, UINT16_INVALID, base};

use crate::geo::{haversine_m, sanitize, sanitize_point, to_semicircles};
use crate::{ExportDay, ExportError, ExportPoint, ExportWaypoint, WaypointKind};

mod identity;

pub use identity::{FitIdentity, course_point_name, day_course_name, fit_serial};

/// Most records one course may have.
///
/// The FIT format itself would allow ~200 million records (4 GiB data size), but no bike
/// computer loads anything near that: a million records is 10,000 km at 10 m spacing, more
/// than any trip the planner makes, and keeps the file (~20 MB) and the exporter's memory
/// (a few tens of MB) bounded even when a caller passes runaway input.
pub const MAX_RECORDS: usize = 1_000_000;

/// Most course points one course may have: `course_point.message_index` is a `uint16`
/// whose value 0xFFFF means "invalid".
pub const MAX_COURSE_POINTS: usize = 65_534;

/// Bytes in the `course.name` and `course_point.name` string fields: 16 as in the FIT
/// SDK's own profile (`FIT_COURSE_MESG_NAME_COUNT`, `FIT_COURSE_POINT_MESG_NAME_COUNT`),
/// i.e. at most 15 bytes of UTF-8 text plus the terminating NUL. Devices show about that
/// much anyway.
const NAME_SIZE: u8 = 16;

/// Start of the synthetic timeline: 2024-01-01T00:00:00Z in FIT time (seconds since
/// 1989-12-31T00:00:00Z, i.e. Unix 1704067200 - 631065600). Fixed rather than "now" so
/// that the same trip always exports to the same bytes.
const START_TIME: u32 = 1_073_001_600;

/// Pace of the synthetic timeline: 240 s per km is 15 km/h, a touring-bike pace, so a
/// device's "virtual partner" and ETA are plausible. Courses need timestamps; the planner
/// has none. Kept as seconds per km because metres * 240 / 1000 is exact for whole
/// metres, where dividing by 4.1666… m/s would land a hair below whole seconds.
const SECONDS_PER_KM: f64 = 240.0;

/// Two consecutive days share a boundary point when their positions agree this closely
/// (degrees, about 1 cm): tight enough never to merge two real points.
const SAME_POINT_DEG: f64 = 1e-7;

// Global message numbers from the FIT profile.
const MESG_FILE_ID: u16 = 0;
const MESG_LAP: u16 = 19;
const MESG_RECORD: u16 = 20;
const MESG_EVENT: u16 = 21;
const MESG_COURSE: u16 = 31;
const MESG_COURSE_POINT: u16 = 32;

// Local message types: one per global message, so each is defined exactly once.
const LOCAL_FILE_ID: u8 = 0;
const LOCAL_COURSE: u8 = 1;
const LOCAL_LAP: u8 = 2;
const LOCAL_EVENT: u8 = 3;
const LOCAL_RECORD: u8 = 4;
const LOCAL_COURSE_POINT: u8 = 5;

// Enum values from the FIT profile.
const FILE_COURSE: u8 = 6;
const MANUFACTURER_DEVELOPMENT: u16 = 255;
const SPORT_CYCLING: u8 = 2;
const EVENT_TIMER: u8 = 0;
const EVENT_TYPE_START: u8 = 0;
/// What Garmin's course files end with: stop the timer and disable it.
const EVENT_TYPE_STOP_DISABLE_ALL: u8 = 9;
const COURSE_POINT_GENERIC: u8 = 0;

const FILE_ID_FIELDS: [Field; 5] = [
    Field::new(0, 1, base::ENUM),    // type
    Field::new(1, 2, base::UINT16),  // manufacturer
    Field::new(2, 2, base::UINT16),  // product
    Field::new(3, 4, base::UINT32Z), // serial_number
    Field::new(4, 4, base::UINT32),  // time_created
];

const COURSE_FIELDS: [Field; 2] = [
    Field::new(5, NAME_SIZE, base::STRING), // name
    Field::new(4, 1, base::ENUM),           // sport
];

const LAP_FIELDS: [Field; 11] = [
    Field::new(253, 4, base::UINT32), // timestamp
    Field::new(2, 4, base::UINT32),   // start_time
    Field::new(3, 4, base::SINT32),   // start_position_lat
    Field::new(4, 4, base::SINT32),   // start_position_long
    Field::new(5, 4, base::SINT32),   // end_position_lat
    Field::new(6, 4, base::SINT32),   // end_position_long
    Field::new(7, 4, base::UINT32),   // total_elapsed_time, ms
    Field::new(8, 4, base::UINT32),   // total_timer_time, ms
    Field::new(9, 4, base::UINT32),   // total_distance, cm
    Field::new(21, 2, base::UINT16),  // total_ascent, m
    Field::new(22, 2, base::UINT16),  // total_descent, m
];

const EVENT_FIELDS: [Field; 4] = [
    Field::new(253, 4, base::UINT32), // timestamp
    Field::new(0, 1, base::ENUM),     // event
    Field::new(1, 1, base::ENUM),     // event_type
    Field::new(4, 1, base::UINT8),    // event_group
];

const RECORD_FIELDS: [Field; 5] = [
    Field::new(253, 4, base::UINT32), // timestamp
    Field::new(0, 4, base::SINT32),   // position_lat, semicircles
    Field::new(1, 4, base::SINT32),   // position_long, semicircles
    Field::new(5, 4, base::UINT32),   // distance, cm
    Field::new(2, 2, base::UINT16),   // altitude, (m + 500) * 5
];
/// Header byte plus the fields above, for buffer sizing.
const RECORD_BYTES: usize = 1 + 4 + 4 + 4 + 4 + 2;

const COURSE_POINT_FIELDS: [Field; 7] = [
    Field::new(254, 2, base::UINT16),       // message_index
    Field::new(1, 4, base::UINT32),         // timestamp
    Field::new(2, 4, base::SINT32),         // position_lat
    Field::new(3, 4, base::SINT32),         // position_long
    Field::new(4, 4, base::UINT32),         // distance, cm
    Field::new(5, 1, base::ENUM),           // type
    Field::new(6, NAME_SIZE, base::STRING), // name
];
const COURSE_POINT_BYTES: usize = 1 + 2 + 4 + 4 + 4 + 4 + 1 + NAME_SIZE as usize;

/// A FIT course file for one route.
///
/// A FIT course file (file_id type=course, course with name and sport=cycling, lap with
/// total distance and start/end positions, event timer start, one record per point with
/// position (semicircles), altitude and cumulative distance, course_point for each waypoint
/// (lodging type where the FIT profile has it, else generic) placed at the nearest
/// record's distance, event timer stop). Timestamps: a synthetic monotone timeline
/// (15 km/h from 2024-01-01T00:00:00Z) since courses need timestamps.
///
/// Names are cut to 15 bytes on a UTF-8 boundary (the field holds 16 bytes with the NUL).
/// Points without a finite position are skipped; if none remain the result is
/// [`ExportError::NoPoints`]. More than [`MAX_RECORDS`] points or [`MAX_COURSE_POINTS`]
/// waypoints give [`ExportError::TooManyPoints`].
pub fn to_fit_course(
    name: &str,
    points: &[ExportPoint],
    waypoints: &[ExportWaypoint],
) -> Result<Vec<u8>, ExportError> {
    if points.len() > MAX_RECORDS {
        return Err(ExportError::TooManyPoints(points.len()));
    }
    let points: Vec<ExportPoint> = points.iter().filter_map(sanitize_point).collect();
    encode_course(name, &points, &[], waypoints, &FitIdentity::default())
}

/// A whole trip as one FIT course (all days' points concatenated; consecutive days share a
/// boundary point, drop the duplicate).
///
/// The duplicate is recognised by position (within about 1 cm), so a day that starts
/// where the previous one ended contributes its first point only once. Everything else
/// is as in [`to_fit_course`].
pub fn trip_to_fit(
    name: &str,
    days: &[ExportDay],
    waypoints: &[ExportWaypoint],
) -> Result<Vec<u8>, ExportError> {
    trip_to_fit_with(name, days, waypoints, &FitIdentity::default())
}

/// [`trip_to_fit`] with the file's identity (serial number and creation time): what the
/// server uses, so that every exported file is a distinct course on a device.
pub fn trip_to_fit_with(
    name: &str,
    days: &[ExportDay],
    waypoints: &[ExportWaypoint],
    identity: &FitIdentity,
) -> Result<Vec<u8>, ExportError> {
    let total: usize = days.iter().map(|d| d.points.len()).sum();
    // At most one point per day boundary can be dropped, so past this bound the cap is
    // exceeded for sure and there is no point in copying anything.
    if total > MAX_RECORDS.saturating_add(days.len()) {
        return Err(ExportError::TooManyPoints(total));
    }
    let mut points: Vec<ExportPoint> = Vec::with_capacity(total);
    let mut breaks: Vec<usize> = Vec::new();
    for day in days {
        let mut day_breaks = day.breaks.iter().copied().peekable();
        let mut shared = false;
        for (i, p) in day.points.iter().enumerate() {
            // A break is kept on the next point written when its own point is skipped.
            let is_break = day_breaks.next_if(|&b| b <= i).is_some();
            let Some(p) = sanitize_point(p) else {
                continue;
            };
            if !shared {
                shared = true;
                if let Some(last) = points.last()
                    && (last.lat - p.lat).abs() <= SAME_POINT_DEG
                    && (last.lon - p.lon).abs() <= SAME_POINT_DEG
                {
                    continue;
                }
            }
            if is_break && !points.is_empty() {
                breaks.push(points.len());
            }
            points.push(p);
        }
    }
    if points.len() > MAX_RECORDS {
        return Err(ExportError::TooManyPoints(points.len()));
    }
    encode_course(name, &points, &breaks, waypoints, identity)
}

/// A course point ready to write: where it is and where along the route it sits.
struct CoursePoint<'a> {
    name: &'a str,
    lat: f64,
    lon: f64,
    /// Index of the nearest record, whose distance and timestamp the point takes.
    record: usize,
    kind: WaypointKind,
}

/// Writes the course for already sanitised points.
fn encode_course(
    name: &str,
    points: &[ExportPoint],
    breaks: &[usize],
    waypoints: &[ExportWaypoint],
    identity: &FitIdentity,
) -> Result<Vec<u8>, ExportError> {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return Err(ExportError::NoPoints);
    };
    if waypoints.len() > MAX_COURSE_POINTS {
        return Err(ExportError::TooManyPoints(waypoints.len()));
    }

    let distances = cumulative_distances(points, breaks);
    let total_m = distances.last().copied().unwrap_or(0.0);
    let (ascent, descent) = ascent_descent(points, breaks);

    let mut course_points: Vec<CoursePoint<'_>> = waypoints
        .iter()
        .filter_map(|w| {
            let (lat, lon) = sanitize(w.lat, w.lon)?;
            Some(CoursePoint {
                name: &w.name,
                lat,
                lon,
                record: nearest_point(points, lat, lon),
                kind: w.kind,
            })
        })
        .collect();
    // Devices announce course points in file order, so they must follow the route;
    // the sort is stable, keeping the caller's order for points at the same place.
    course_points.sort_by_key(|cp| cp.record);

    let mut enc = Encoder::with_capacity(
        256 + points.len() * RECORD_BYTES + course_points.len() * COURSE_POINT_BYTES,
    );

    enc.define(LOCAL_FILE_ID, MESG_FILE_ID, &FILE_ID_FIELDS);
    enc.begin(LOCAL_FILE_ID);
    enc.u8(FILE_COURSE);
    enc.u16(MANUFACTURER_DEVELOPMENT);
    enc.u16(0);
    enc.u32(identity.serial_number());
    enc.u32(identity.fit_time_created());

    let course_name = clean_name(name);
    enc.define(LOCAL_COURSE, MESG_COURSE, &COURSE_FIELDS);
    enc.begin(LOCAL_COURSE);
    enc.string(&course_name, NAME_SIZE);
    enc.u8(SPORT_CYCLING);

    let end_time = timestamp_at(total_m);
    let elapsed_ms = ms_at(total_m);
    enc.define(LOCAL_LAP, MESG_LAP, &LAP_FIELDS);
    enc.begin(LOCAL_LAP);
    enc.u32(end_time);
    enc.u32(START_TIME);
    enc.i32(to_semicircles(first.lat));
    enc.i32(to_semicircles(first.lon));
    enc.i32(to_semicircles(last.lat));
    enc.i32(to_semicircles(last.lon));
    enc.u32(elapsed_ms);
    enc.u32(elapsed_ms);
    enc.u32(centimetres(total_m));
    enc.u16(ascent);
    enc.u16(descent);

    enc.define(LOCAL_EVENT, MESG_EVENT, &EVENT_FIELDS);
    write_event(&mut enc, START_TIME, EVENT_TYPE_START);

    enc.define(LOCAL_RECORD, MESG_RECORD, &RECORD_FIELDS);
    if !course_points.is_empty() {
        enc.define(LOCAL_COURSE_POINT, MESG_COURSE_POINT, &COURSE_POINT_FIELDS);
    }
    // Course points follow the record they sit on, so the file stays in time order.
    let mut pending = course_points.iter().enumerate().peekable();
    for (i, (p, &d)) in points.iter().zip(&distances).enumerate() {
        enc.begin(LOCAL_RECORD);
        enc.u32(timestamp_at(d));
        enc.i32(to_semicircles(p.lat));
        enc.i32(to_semicircles(p.lon));
        enc.u32(centimetres(d));
        enc.u16(p.ele.map_or(UINT16_INVALID, altitude_raw));
        while let Some((index, cp)) = pending.next_if(|(_, cp)| cp.record <= i) {
            enc.begin(LOCAL_COURSE_POINT);
            // Bounded by MAX_COURSE_POINTS (< 0xFFFF) above, so the conversion cannot fail.
            enc.u16(u16::try_from(index).unwrap_or(UINT16_INVALID));
            enc.u32(timestamp_at(d));
            enc.i32(to_semicircles(cp.lat));
            enc.i32(to_semicircles(cp.lon));
            enc.u32(centimetres(d));
            enc.u8(course_point_type(cp.kind));
            enc.string(&clean_name(cp.name), NAME_SIZE);
        }
    }

    write_event(&mut enc, end_time, EVENT_TYPE_STOP_DISABLE_ALL);

    enc.finish(points.len())
}

fn write_event(enc: &mut Encoder, timestamp: u32, event_type: u8) {
    enc.begin(LOCAL_EVENT);
    enc.u32(timestamp);
    enc.u8(EVENT_TIMER);
    enc.u8(event_type);
    enc.u8(0);
}

/// The FIT course point type for a waypoint kind.
///
/// The FIT profile (checked up to 21.202) has no lodging type: the nearest entries,
/// `campsite` and `shelter`, would put a tent or hut icon on a hotel, so lodging falls
/// back to `generic` and keeps its name as the label.
/// The FIT profile's `course_point` types (water 3, food 4, service 31, transport 51), so a
/// device draws each with its own icon.
const fn course_point_type(kind: WaypointKind) -> u8 {
    match kind {
        WaypointKind::Water => 3,
        WaypointKind::Food => 4,
        WaypointKind::BikeShop => 31,
        WaypointKind::Station => 51,
        WaypointKind::Lodging | WaypointKind::Generic => COURSE_POINT_GENERIC,
    }
}

/// Cumulative haversine distance in metres at each point (the first is 0); the step onto a
/// point listed in `breaks` (sorted) counts nothing.
fn cumulative_distances(points: &[ExportPoint], breaks: &[usize]) -> Vec<f64> {
    let mut out = Vec::with_capacity(points.len());
    let mut total = 0.0;
    let mut prev: Option<&ExportPoint> = None;
    let mut pending = breaks.iter().copied().peekable();
    for (i, p) in points.iter().enumerate() {
        while pending.next_if(|&b| b < i).is_some() {}
        let is_break = pending.next_if_eq(&i).is_some();
        if let Some(q) = prev
            && !is_break
        {
            total += haversine_m(q.lat, q.lon, p.lat, p.lon);
        }
        out.push(total);
        prev = Some(p);
    }
    out
}

/// Ascent and descent in whole metres, or the invalid marker ("unknown") when any point lacks
/// a height, as the planner says "climb unknown" then: the app's own figure for a day, from
/// the same function (`etappe_route::geometry::day_climb`: smoothed over distance, with
/// hysteresis, each piece between breaks on its own), so a device shows what the planner
/// shows, never a partial sum passed off as the climb.
fn ascent_descent(points: &[ExportPoint], breaks: &[usize]) -> (u16, u16) {
    if points.iter().any(|p| p.ele.is_none()) {
        return (UINT16_INVALID, UINT16_INVALID);
    }
    let track: Vec<etappe_route::TrackPoint> = points
        .iter()
        .map(|p| etappe_route::TrackPoint {
            lat: p.lat,
            lon: p.lon,
            ele: p.ele,
        })
        .collect();
    let (up, down) = etappe_route::geometry::day_climb(&track, breaks);
    (saturate_u16(up), saturate_u16(down))
}

/// Index of the route point nearest to (lat, lon).
///
/// Uses an equirectangular approximation, which ranks neighbours the same as a great-circle
/// distance at the scale of a route and is several times cheaper than haversine; the
/// search is linear, O(points × waypoints), fine for the tens of waypoints a trip has.
fn nearest_point(points: &[ExportPoint], lat: f64, lon: f64) -> usize {
    let cos_lat = lat.to_radians().cos();
    let mut best = (0, f64::INFINITY);
    for (i, p) in points.iter().enumerate() {
        let mut dlon = (p.lon - lon).abs();
        // Across the antimeridian the short way round is the other way.
        if dlon > 180.0 {
            dlon = 360.0 - dlon;
        }
        let dx = dlon * cos_lat;
        let dy = p.lat - lat;
        let d2 = dx * dx + dy * dy;
        if d2 < best.1 {
            best = (i, d2);
        }
    }
    best.0
}

/// Course and course point names as devices can show them: control characters removed
/// (a NUL would end the string early), whitespace controls turned into spaces. The cut to
/// the field size happens when writing.
fn clean_name(name: &str) -> String {
    name.chars()
        .filter_map(|c| match c {
            '\t' | '\n' | '\r' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

/// FIT timestamp of the point reached after `metres` on the synthetic timeline.
fn timestamp_at(metres: f64) -> u32 {
    // Stay below 0xFFFFFFFF, the invalid date_time; only absurd distances get near it.
    let max_offset = f64::from(u32::MAX - 1 - START_TIME);
    // Rounding is monotone, so the timeline never goes backwards.
    START_TIME
        + (metres * SECONDS_PER_KM / 1000.0)
            .round()
            .clamp(0.0, max_offset) as u32
}

/// Milliseconds to ride `metres` on the synthetic timeline (lap times are in ms).
fn ms_at(metres: f64) -> u32 {
    saturate_u32(metres * SECONDS_PER_KM)
}

/// A distance in the FIT unit (uint32, scale 100 = centimetres).
fn centimetres(metres: f64) -> u32 {
    saturate_u32(metres * 100.0)
}

/// Altitude in the FIT record encoding: uint16 with scale 5 and offset 500, which covers
/// -500 m to 12,606 m; anything outside is clamped, not wrapped.
fn altitude_raw(ele: f64) -> u16 {
    saturate_u16((ele + 500.0) * 5.0)
}

/// Rounds into 0..=0xFFFE, keeping clear of the invalid marker 0xFFFF.
fn saturate_u16(v: f64) -> u16 {
    v.round().clamp(0.0, f64::from(u16::MAX - 1)) as u16
}

/// Rounds into 0..=0xFFFFFFFE, keeping clear of the invalid marker 0xFFFFFFFF.
fn saturate_u32(v: f64) -> u32 {
    v.round().clamp(0.0, f64::from(u32::MAX - 1)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(lat: f64, lon: f64) -> ExportPoint {
        ExportPoint {
            lat,
            lon,
            ele: None,
        }
    }

    #[test]
    fn encodings_saturate_away_from_invalid() {
        assert_eq!(altitude_raw(0.0), 2500);
        assert_eq!(altitude_raw(-1000.0), 0);
        assert_eq!(altitude_raw(50_000.0), 0xFFFE);
        assert_eq!(centimetres(1.234), 123);
        assert_eq!(centimetres(1e12), 0xFFFF_FFFE);
        assert_eq!(timestamp_at(0.0), START_TIME);
        assert_eq!(timestamp_at(15_000.0), START_TIME + 3600);
        assert_eq!(timestamp_at(1e15), u32::MAX - 1);
    }

    #[test]
    fn nearest_point_handles_antimeridian() {
        let pts = [pt(0.0, 179.9), pt(0.0, 0.0), pt(0.0, -179.95)];
        assert_eq!(nearest_point(&pts, 0.0, -179.99), 2);
        assert_eq!(nearest_point(&pts, 0.0, 179.99), 2);
    }

    #[test]
    fn ascent_is_the_apps_smoothed_figure_not_the_raw_sum() {
        // 2 km north with ±4 m of jitter on a 100 m climb: the raw sum counts the jitter.
        let pts: Vec<ExportPoint> = (0..=200)
            .map(|i| ExportPoint {
                lat: f64::from(i) * 0.01 / 111.195,
                lon: 0.0,
                ele: Some(f64::from(i) * 0.5 + if i % 2 == 0 { 4.0 } else { -4.0 }),
            })
            .collect();
        let raw: f64 = pts
            .windows(2)
            .filter_map(|w| Some((w[1].ele? - w[0].ele?).max(0.0)))
            .sum();
        let (up, _) = ascent_descent(&pts, &[]);
        assert!(raw > 800.0, "{raw}");
        assert!((f64::from(up) - 100.0).abs() <= 8.0, "{up}");
        assert_eq!(
            ascent_descent(&[pt(0.0, 0.0)], &[]),
            (UINT16_INVALID, UINT16_INVALID)
        );
    }

    #[test]
    fn a_break_counts_no_distance() {
        let pts = [pt(0.0, 0.0), pt(0.0, 0.01), pt(1.0, 0.01), pt(1.0, 0.02)];
        let d = cumulative_distances(&pts, &[2]);
        assert_eq!(d[1], d[2]);
        assert!((d[3] - 2.0 * d[1]).abs() < 1.0, "{d:?}");
    }

    #[test]
    fn trip_drops_shared_boundary_points_only() {
        let day = |name: &str, points| ExportDay {
            name: name.into(),
            points,
            breaks: Vec::new(),
        };
        let days = vec![
            day("a", vec![pt(0.0, 0.0), pt(0.0, 0.01)]),
            day("b", vec![pt(0.0, 0.01), pt(0.0, 0.02)]),
            day("c", vec![pt(0.0, 0.03), pt(0.0, 0.04)]),
        ];
        let trip = trip_to_fit("t", &days, &[]);
        let flat = [
            pt(0.0, 0.0),
            pt(0.0, 0.01),
            pt(0.0, 0.02),
            pt(0.0, 0.03),
            pt(0.0, 0.04),
        ];
        assert_eq!(trip, to_fit_course("t", &flat, &[]));
    }

    #[test]
    fn errors() {
        assert_eq!(to_fit_course("x", &[], &[]), Err(ExportError::NoPoints));
        assert_eq!(
            to_fit_course("x", &[pt(f64::NAN, 0.0)], &[]),
            Err(ExportError::NoPoints)
        );
        assert_eq!(trip_to_fit("x", &[], &[]), Err(ExportError::NoPoints));
        let many = vec![pt(0.0, 0.0); MAX_RECORDS + 1];
        assert_eq!(
            to_fit_course("x", &many, &[]),
            Err(ExportError::TooManyPoints(MAX_RECORDS + 1))
        );
    }
}
