//! Export of an Etappe trip to the file formats bike computers and map apps load.
//!
//! Two formats are produced, both written by hand so that the crate has no runtime
//! dependency besides `thiserror`:
//!
//! * [`to_gpx`]: a GPX 1.1 document (one `<trk>` per day, a `<trkseg>` per recorded piece,
//!   one `<wpt>` per waypoint) for
//!   map apps, Komoot-like planners and devices that import GPX.
//! * [`to_fit_course`] / [`trip_to_fit`]: a FIT *course* file, the native format Garmin
//!   and Wahoo computers navigate with.
//!
//! Coordinates are WGS84 degrees. Points whose latitude or longitude is not finite are
//! skipped by every exporter (a NaN cannot be written to either format and would make the
//! whole file invalid); latitudes are clamped to ±90° and longitudes wrapped into
//! [-180°, 180°), the range both GPX's schema and FIT's semicircles accept.
//!
//! FIT decisions, all tested against the `fitparser` decoder:
//!
//! - Names are cut to 15 bytes of UTF-8 on a character boundary (plus NUL):
//!   the FIT SDK's own profile declares course and course-point names 16
//!   bytes long.
//! - FIT has no lodging course-point type, so lodging is written as
//!   `generic`; GPX gets `<sym>Lodging</sym>`.
//! - Timestamps are synthetic (15 km/h from a fixed epoch), so the same
//!   input gives the same bytes; they are not a schedule.
//! - Course points are sorted by route position, because devices announce
//!   them in file order; on an out-and-back route the first closest pass wins.
//! - Total ascent and descent are raw sums of elevation deltas, meant for
//!   DEM elevations.
//!
//! The GPX test validates against the official GPX 1.1 schema with
//! `xmllint` (`libxml2-utils`) when it is installed and says SKIPPED
//! otherwise, falling back to a well-formedness check.
//!
//! ```
//! use etappe_export::{ExportDay, ExportPoint, ExportWaypoint, WaypointKind, to_gpx, trip_to_fit};
//!
//! let day = ExportDay {
//!     name: "Day 1".into(),
//!     points: vec![
//!         ExportPoint { lat: 47.66, lon: 9.17, ele: Some(400.0) },
//!         ExportPoint { lat: 47.70, lon: 9.30, ele: None },
//!     ],
//!     breaks: Vec::new(),
//! };
//! let hotel = ExportWaypoint {
//!     name: "Hotel".into(),
//!     lat: 47.70,
//!     lon: 9.30,
//!     kind: WaypointKind::Lodging,
//! };
//! let gpx: String = to_gpx("Lake Constance", &[day.clone()], &[hotel.clone()]);
//! assert!(gpx.contains("<sym>Lodging</sym>"));
//! let fit: Vec<u8> = trip_to_fit("Lake Constance", &[day], &[hotel])?;
//! assert_eq!(&fit[8..12], b".FIT");
//! # Ok::<(), etappe_export::ExportError>(())
//! ```

mod fit;
mod geo;
mod gpx;

pub use fit::{
    FitIdentity, MAX_COURSE_POINTS, MAX_RECORDS, course_point_name, day_course_name, fit_serial,
    to_fit_course, trip_to_fit, trip_to_fit_with,
};
pub use gpx::to_gpx;

/// One point of a route: WGS84 degrees and an optional elevation in metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExportPoint {
    /// Latitude in degrees, north positive.
    pub lat: f64,
    /// Longitude in degrees, east positive.
    pub lon: f64,
    /// Elevation above sea level in metres, when known.
    pub ele: Option<f64>,
}

/// One day (stage) of a trip: its display name and its route geometry in travel order.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportDay {
    /// Display name, e.g. "Day 3: Passau – Linz".
    pub name: String,
    /// The day's route in travel order.
    pub points: Vec<ExportPoint>,
    /// Indices into `points` (sorted) where a recorded piece starts after a break: the
    /// step onto such a point is not ridden, so GPX starts a new `<trkseg>` there and FIT
    /// does not count it.
    pub breaks: Vec<usize>,
}

/// A named point of interest along the trip (a night's lodging, a café, a shop...).
#[derive(Clone, Debug, PartialEq)]
pub struct ExportWaypoint {
    /// Display name.
    pub name: String,
    /// Latitude in degrees.
    pub lat: f64,
    /// Longitude in degrees.
    pub lon: f64,
    /// What the waypoint is, which decides its symbol / course point type.
    pub kind: WaypointKind,
}

/// The kind of a waypoint, mapped to a GPX symbol and a FIT course point type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaypointKind {
    /// Where the rider sleeps (hotel, hostel, campsite...).
    Lodging,
    /// Drinking water along the way.
    Water,
    /// Food along the way (a shop, a bakery, a restaurant).
    Food,
    /// A bike shop or repair station.
    BikeShop,
    /// A railway station.
    Station,
    /// Anything else.
    Generic,
}

/// Why a FIT export could not be produced.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ExportError {
    /// The route has no point with a finite position, so there is nothing to navigate.
    #[error("the route has no points with a valid position")]
    NoPoints,
    /// More records (or course points) than the exporter accepts; the value is the count
    /// that was asked for. See [`MAX_RECORDS`] and [`MAX_COURSE_POINTS`] for why the caps exist.
    #[error("too many points for one FIT course: {0}")]
    TooManyPoints(usize),
}
