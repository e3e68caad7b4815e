//! FIT course output decoded back with the independent `fitparser` crate, which also
//! verifies the header and file CRCs (it rejects a file whose CRC does not match).

use crate::common::{flatten, haversine, path_length, synthetic_trip, trip_waypoints};
use etappe_export::{
    ExportDay, ExportError, ExportPoint, ExportWaypoint, FitIdentity, WaypointKind, to_fit_course,
    trip_to_fit, trip_to_fit_with,
};
use fitparser::profile::MesgNum;
use fitparser::{FitDataRecord, Value};

const SEMI_TO_DEG: f64 = 180.0 / 2_147_483_648.0;

fn decode(bytes: &[u8]) -> Vec<FitDataRecord> {
    match fitparser::from_bytes(bytes) {
        Ok(records) => records,
        Err(e) => panic!("fitparser rejected our file: {e}"),
    }
}

fn of_kind(records: &[FitDataRecord], kind: MesgNum) -> Vec<&FitDataRecord> {
    records.iter().filter(|r| r.kind() == kind).collect()
}

fn field<'a>(rec: &'a FitDataRecord, name: &str) -> Option<&'a Value> {
    rec.fields()
        .iter()
        .find(|f| f.name() == name)
        .map(|f| f.value())
}

fn num(rec: &FitDataRecord, name: &str) -> f64 {
    match field(rec, name) {
        Some(Value::SInt32(v)) => f64::from(*v),
        Some(Value::UInt32(v) | Value::UInt32z(v)) => f64::from(*v),
        Some(Value::UInt16(v)) => f64::from(*v),
        Some(Value::UInt8(v)) => f64::from(*v),
        Some(Value::Float64(v)) => *v,
        Some(Value::SInt64(v)) => *v as f64,
        Some(Value::Float32(v)) => f64::from(*v),
        other => panic!("field {name} of {:?} is {other:?}", rec.kind()),
    }
}

fn text(rec: &FitDataRecord, name: &str) -> String {
    match field(rec, name) {
        Some(Value::String(s)) => s.clone(),
        other => panic!("field {name} of {:?} is {other:?}", rec.kind()),
    }
}

fn deg(rec: &FitDataRecord, name: &str) -> f64 {
    num(rec, name) * SEMI_TO_DEG
}

/// Checks everything the brief asks of a course against the points it was made from.
fn check_course(bytes: &[u8], points: &[ExportPoint], expected_name: &str) -> Vec<FitDataRecord> {
    let records = decode(bytes);

    let file_ids = of_kind(&records, MesgNum::FileId);
    assert_eq!(file_ids.len(), 1);
    assert_eq!(text(file_ids[0], "type"), "course");

    let courses = of_kind(&records, MesgNum::Course);
    assert_eq!(courses.len(), 1);
    assert_eq!(text(courses[0], "name"), expected_name);
    assert_eq!(text(courses[0], "sport"), "cycling");

    let recs = of_kind(&records, MesgNum::Record);
    assert_eq!(recs.len(), points.len(), "one record per point");

    let (first, last) = (points[0], points[points.len() - 1]);
    for (rec, p) in [(recs[0], first), (recs[recs.len() - 1], last)] {
        assert!((deg(rec, "position_lat") - p.lat).abs() < 1e-6);
        assert!((deg(rec, "position_long") - p.lon).abs() < 1e-6);
    }

    let distances: Vec<f64> = recs.iter().map(|r| num(r, "distance")).collect();
    assert_eq!(distances[0], 0.0);
    assert!(
        distances.windows(2).all(|w| w[1] >= w[0]),
        "distance must not decrease"
    );
    let expected = path_length(points);
    let got = distances[distances.len() - 1];
    if expected > 0.0 {
        assert!(
            ((got - expected) / expected).abs() < 0.005,
            "{got} vs {expected}"
        );
    }

    let mut last_ts = None;
    for r in &recs {
        let Some(Value::Timestamp(ts)) = field(r, "timestamp") else {
            panic!("record without timestamp");
        };
        assert!(
            last_ts.is_none_or(|l| l <= *ts),
            "timestamps must not go back"
        );
        last_ts = Some(*ts);
    }

    for (rec, p) in recs.iter().zip(points).step_by(97) {
        match p.ele {
            // fitparser expands `altitude` into its `enhanced_altitude` component.
            Some(e) => assert!((num(rec, "enhanced_altitude") - e).abs() <= 0.1 + 1e-9),
            None => {
                assert!(field(rec, "enhanced_altitude").is_none());
                assert!(field(rec, "altitude").is_none());
            }
        }
    }

    let laps = of_kind(&records, MesgNum::Lap);
    assert_eq!(laps.len(), 1);
    assert!((num(laps[0], "total_distance") - got).abs() < 0.02);
    assert!((deg(laps[0], "start_position_lat") - first.lat).abs() < 1e-6);
    assert!((deg(laps[0], "end_position_long") - last.lon).abs() < 1e-6);

    let events = of_kind(&records, MesgNum::Event);
    assert_eq!(events.len(), 2);
    assert_eq!(text(events[0], "event"), "timer");
    assert_eq!(text(events[0], "event_type"), "start");
    assert_eq!(text(events[1], "event_type"), "stop_disable_all");

    // Every timestamped message in file order (records and the course points interleaved
    // with them): time never goes back, as devices replay the file.
    let mut last_ts = None;
    for r in &records {
        if !matches!(r.kind(), MesgNum::Record | MesgNum::CoursePoint) {
            continue;
        }
        let Some(Value::Timestamp(ts)) = field(r, "timestamp") else {
            panic!("{:?} without timestamp", r.kind());
        };
        assert!(
            last_ts.is_none_or(|l| l <= *ts),
            "{:?} goes back in time",
            r.kind()
        );
        last_ts = Some(*ts);
    }

    // Message order a device expects: file_id, course, lap, event, records with the
    // course points where they fall, event.
    assert_eq!(records[0].kind(), MesgNum::FileId);
    assert_eq!(records[1].kind(), MesgNum::Course);
    assert_eq!(records[2].kind(), MesgNum::Lap);
    assert_eq!(records[3].kind(), MesgNum::Event);
    assert_eq!(records[records.len() - 1].kind(), MesgNum::Event);
    records
}

#[test]
fn three_day_trip_round_trips() {
    let days = synthetic_trip(3, 1500);
    let waypoints = trip_waypoints(&days);
    let points = flatten(&days);
    assert_eq!(points.len(), 3 * 1500 - 2);

    let bytes = match trip_to_fit("Bodensee-Tour", &days, &waypoints) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let records = check_course(&bytes, &points, "Bodensee-Tour");

    // Course points: all present, in route order, each at its nearest record's distance.
    let cps = of_kind(&records, MesgNum::CoursePoint);
    let names: Vec<String> = cps.iter().map(|r| text(r, "name")).collect();
    assert_eq!(names, ["Café am See", "Hotel Nacht 1", "Hotel Nacht 2"]);
    let recs = of_kind(&records, MesgNum::Record);
    for (cp, name) in cps.iter().zip(&names) {
        let w = waypoints.iter().find(|w| &w.name == name);
        let Some(w) = w else {
            panic!("unknown course point {name}")
        };
        let target = ExportPoint {
            lat: w.lat,
            lon: w.lon,
            ele: None,
        };
        let nearest = points
            .iter()
            .enumerate()
            .min_by(|a, b| haversine(a.1, &target).total_cmp(&haversine(b.1, &target)))
            .map(|(i, _)| i);
        let Some(nearest) = nearest else {
            panic!("no points")
        };
        assert!((num(cp, "distance") - num(recs[nearest], "distance")).abs() < 0.02);
        assert!((deg(cp, "position_lat") - w.lat).abs() < 1e-6);
        // Food is the profile's food; the profile has no lodging type, so a night is generic.
        let expected = if name.starts_with("Café") {
            "food"
        } else {
            "generic"
        };
        assert_eq!(text(cp, "type"), expected);
        assert_eq!(
            num(cp, "message_index") as usize,
            names.iter().position(|n| n == name).unwrap_or(99)
        );
    }
    assert!(num(cps[0], "distance") < num(cps[1], "distance"));
}

#[test]
fn two_point_route() {
    let points = [
        ExportPoint {
            lat: 52.520_008,
            lon: 13.404_954,
            ele: Some(34.0),
        },
        ExportPoint {
            lat: 52.516_275,
            lon: 13.377_704,
            ele: None,
        },
    ];
    let wpt = [ExportWaypoint {
        name: "Brandenburger Tor".into(),
        lat: 52.516_3,
        lon: 13.377_7,
        kind: WaypointKind::Lodging,
    }];
    let bytes = match to_fit_course("Berlin", &points, &wpt) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let records = check_course(&bytes, &points, "Berlin");
    let cps = of_kind(&records, MesgNum::CoursePoint);
    assert_eq!(cps.len(), 1);
    // 17 bytes of name cut to the 15 the field holds.
    assert_eq!(text(cps[0], "name"), "Brandenburger T");
    let recs = of_kind(&records, MesgNum::Record);
    assert_eq!(num(cps[0], "distance"), num(recs[1], "distance"));
}

#[test]
fn single_point_and_no_waypoints() {
    let p = [ExportPoint {
        lat: -33.9,
        lon: 151.2,
        ele: None,
    }];
    let bytes = match to_fit_course("S", &p, &[]) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let records = check_course(&bytes, &p, "S");
    assert!(of_kind(&records, MesgNum::CoursePoint).is_empty());
}

#[test]
fn long_utf8_name_is_cut_on_a_char_boundary() {
    let p = [
        ExportPoint {
            lat: 0.0,
            lon: 0.0,
            ele: None,
        },
        ExportPoint {
            lat: 0.0,
            lon: 0.001,
            ele: None,
        },
    ];
    // "Größe" repeated: multi-byte chars straddle the 15-byte limit.
    let bytes = match to_fit_course("Größe Größe Größe", &p, &[]) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    check_course(&bytes, &p, "Größe Größe");
}

#[test]
fn no_points_is_an_error() {
    assert_eq!(to_fit_course("x", &[], &[]), Err(ExportError::NoPoints));
    assert_eq!(trip_to_fit("x", &[], &[]), Err(ExportError::NoPoints));
    let empty_days = synthetic_trip(2, 0);
    assert_eq!(
        trip_to_fit("x", &empty_days, &[]),
        Err(ExportError::NoPoints)
    );
}

#[test]
fn corrupted_bytes_fail_the_crc() {
    let days = synthetic_trip(1, 50);
    let good = match trip_to_fit("crc", &days, &[]) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    assert!(fitparser::from_bytes(&good).is_ok());
    // Flip a bit inside a record's longitude: only the file CRC can notice.
    let mut bad = good.clone();
    let i = bad.len() - 40;
    bad[i] ^= 0x01;
    assert!(fitparser::from_bytes(&bad).is_err(), "data CRC not checked");
    // And a header byte: the header CRC must catch it.
    let mut bad = good;
    bad[2] ^= 0x01;
    assert!(
        fitparser::from_bytes(&bad).is_err(),
        "header CRC not checked"
    );
}

#[test]
fn each_file_has_its_own_identity_and_the_apps_climb() {
    let days = synthetic_trip(2, 800);
    let identity = FitIdentity {
        serial_number: 0xDEAD_BEEF,
        time_created_unix: 1_796_083_200,
    };
    let bytes = match trip_to_fit_with("Id", &days, &[], &identity) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let records = decode(&bytes);
    let file_id = of_kind(&records, MesgNum::FileId)[0];
    assert_eq!(num(file_id, "serial_number"), f64::from(0xDEAD_BEEF_u32));
    let Some(Value::Timestamp(created)) = field(file_id, "time_created") else {
        panic!("no time_created");
    };
    assert_eq!(created.timestamp(), 1_796_083_200);

    // A point without a height makes the climb unknown, as the planner says: no figure.
    let lap = of_kind(&records, MesgNum::Lap)[0];
    assert!(
        !matches!(field(lap, "total_ascent"), Some(Value::UInt16(_))),
        "{:?}",
        field(lap, "total_ascent")
    );

    // With every height known, the lap's ascent is the planner's smoothed figure.
    let mut days = days;
    for day in &mut days {
        for (i, p) in day.points.iter_mut().enumerate() {
            p.ele = p.ele.or(Some(400.0 + i as f64 * 0.01));
        }
    }
    let bytes = match trip_to_fit_with("Id", &days, &[], &identity) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let records = decode(&bytes);
    let points: Vec<etappe_route::TrackPoint> = flatten(&days)
        .iter()
        .map(|p| etappe_route::TrackPoint {
            lat: p.lat,
            lon: p.lon,
            ele: p.ele,
        })
        .collect();
    let (app_ascent, _) = etappe_route::geometry::day_climb(&points, &[]);
    let lap = of_kind(&records, MesgNum::Lap)[0];
    assert_eq!(num(lap, "total_ascent"), app_ascent.round());
}

#[test]
fn course_points_are_interleaved_with_the_records() {
    let days = synthetic_trip(3, 300);
    let waypoints = trip_waypoints(&days);
    let bytes = match trip_to_fit("Order", &days, &waypoints) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let records = decode(&bytes);
    let kinds: Vec<MesgNum> = records.iter().map(FitDataRecord::kind).collect();
    let first_cp = kinds.iter().position(|k| *k == MesgNum::CoursePoint);
    let last_record = kinds.iter().rposition(|k| *k == MesgNum::Record);
    assert!(
        first_cp < last_record,
        "course points sit among the records, not after them"
    );
}

#[test]
fn a_break_is_not_counted_in_the_course() {
    let a = |lat: f64, lon: f64| ExportPoint {
        lat,
        lon,
        ele: None,
    };
    let day = ExportDay {
        name: "Gap".into(),
        points: vec![a(45.0, 6.0), a(45.01, 6.0), a(45.5, 6.5), a(45.51, 6.5)],
        breaks: vec![2],
    };
    let bytes = match trip_to_fit("Gap", &[day], &[]) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let records = decode(&bytes);
    let recs = of_kind(&records, MesgNum::Record);
    assert_eq!(num(recs[1], "distance"), num(recs[2], "distance"));
    let lap = of_kind(&records, MesgNum::Lap)[0];
    let ridden = 2.0 * haversine(&a(45.0, 6.0), &a(45.01, 6.0));
    assert!(
        (num(lap, "total_distance") - ridden).abs() < 5.0,
        "{}",
        num(lap, "total_distance")
    );
}
