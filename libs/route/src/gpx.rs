//! Streaming GPX parser: reads GPX 1.0/1.1 bytes with quick-xml's pull
//! reader (no DOM, no copies of point data) and returns one point list per
//! track.
//!
//! Decisions, all chosen so that uploads from any device or planner work and
//! hostile uploads cannot hurt the server:
//! - Elements are matched by local name, so `<gpx:trkpt>` and `<trkpt>` are
//!   the same and both GPX 1.0 and 1.1 namespaces work.
//! - Every `<trkseg>` gives one piece, and so does every `<rte>`: pieces are
//!   kept apart (in file order, with the time of their first point when they
//!   have one), so the caller can tell a recorded break from a ridden line
//!   (see [`crate::pieces`]).
//! - Tracks or routes: a file with both uses the set that makes a route (two
//!   distinct points); when both do, the longer one (within its pieces); when
//!   neither does, the tracks. So a GPX 1.0 file with a one-point track and
//!   a five-point route is read as its route.
//! - `<wpt>` waypoints are kept (position and name, at most
//!   [`MAX_WAYPOINTS`]); a point's `<time>` is read to order pieces.
//! - Any element outside that grammar (`<extensions>`, vendor elements) is
//!   skipped as a whole subtree without inspection.
//! - A point with a missing, unparsable, NaN or out-of-range `lat`/`lon` is
//!   skipped; only when no valid point remains does the parse fail, with
//!   [`RouteError::InvalidCoordinate`] (or [`RouteError::Empty`] when there
//!   were no points at all).
//! - `<ele>` that is absent, unparsable or outside ±12,000 m gives
//!   `ele: None`: those values are device glitches and would poison climbing
//!   totals.
//! - `<!DOCTYPE` is refused ([`RouteError::DoctypeRefused`]); quick-xml never
//!   expands entities anyway, so billion-laughs input cannot grow.
//! - Anything after the closing `</gpx>` is ignored (some exporters pad files
//!   with NULs).
//! - Names are trimmed, whitespace runs collapsed, control and bidi/zero-width
//!   characters dropped, and cut to 255 characters, because they end up in
//!   page titles and file names.

use quick_xml::Reader;
use quick_xml::events::attributes::AttrError;
use quick_xml::events::{BytesRef, BytesStart, Event};
use serde::Serialize;

use crate::RouteError;

/// One position of a route. `ele` is metres above sea level when known.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TrackPoint {
    pub lat: f64,
    pub lon: f64,
    pub ele: Option<f64>,
}

/// A named place of the source file (`<wpt>`): a spring, a pass, a shop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Waypoint {
    pub name: Option<String>,
    pub lat: f64,
    pub lon: f64,
}

/// What any route source yields: an optional display name and one or more
/// point lists (never empty, and no list is empty).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ParsedRoute {
    pub name: Option<String>,
    /// The pieces in file order (GPX: one per `<trkseg>` or `<rte>`).
    pub tracks: Vec<Vec<TrackPoint>>,
    /// Time of each piece's first timed point, Unix seconds; empty when the
    /// source has no times, else as long as `tracks`.
    pub starts: Vec<Option<i64>>,
    /// The source's waypoints, in file order.
    pub waypoints: Vec<Waypoint>,
}

/// Most waypoints kept from one file; the rest are dropped (a route needs
/// tens, and each one costs a nearest-point search on export).
pub const MAX_WAYPOINTS: usize = 2_000;

/// Longest name kept, in characters; longer names are cut.
pub const MAX_NAME_CHARS: usize = 255;

/// Raw name bytes collected before cleaning. A hostile multi-megabyte
/// `<name>` is not worth copying when only 255 characters survive.
const MAX_RAW_NAME_BYTES: usize = 4096;

/// Elevations beyond this magnitude (metres) are treated as missing: nothing
/// on Earth's surface is outside ±12 km, so such a value is a glitch.
const MAX_ABS_ELEVATION_M: f64 = 12_000.0;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Elements of the GPX grammar the parser follows; everything else is skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Elem {
    Gpx,
    Metadata,
    Trk,
    Trkseg,
    Rte,
    Point,
    Ele,
    Time,
    Wpt,
    Name,
}

/// What to do after a start tag has been seen.
enum Action {
    Continue,
    SkipSubtree,
}

#[derive(Default)]
struct Parser {
    stack: Vec<Elem>,
    root_seen: bool,
    root_done: bool,
    trk_tracks: Vec<Vec<TrackPoint>>,
    trk_starts: Vec<Option<i64>>,
    rte_tracks: Vec<Vec<TrackPoint>>,
    rte_starts: Vec<Option<i64>>,
    current: Vec<TrackPoint>,
    /// Time of the current piece's first timed point.
    current_start: Option<i64>,
    time_buf: String,
    waypoints: Vec<Waypoint>,
    /// Position of the `<wpt>` being read (`None`: rejected coordinates).
    pending_wpt: Option<(f64, f64)>,
    wpt_name: Option<String>,
    /// Coordinates of the point being read; `None` inside a point whose
    /// coordinates were rejected.
    pending: Option<(f64, f64)>,
    pending_ele: Option<f64>,
    ele_buf: String,
    name_buf: String,
    meta_name: Option<String>,
    trk_name: Option<String>,
    rte_name: Option<String>,
    rejected: usize,
}

/// Parses a GPX document. See the module documentation for the rules.
pub fn parse_gpx(bytes: &[u8]) -> Result<ParsedRoute, RouteError> {
    let (body, offset) = match bytes.strip_prefix(UTF8_BOM) {
        Some(rest) => (rest, UTF8_BOM.len() as u64),
        None => (bytes, 0),
    };
    match std::str::from_utf8(body) {
        Ok(text) => parse_text(text, offset, bytes.len() as u64),
        Err(_) => {
            // quick-xml only reads UTF-8. Files that are not UTF-8 are in
            // practice ISO-8859-1 (older desktop tools), where every byte is
            // the code point of the same value; decoding that way cannot fail.
            let text: String = body.iter().map(|&b| char::from(b)).collect();
            parse_text(&text, offset, bytes.len() as u64).map_err(|e| match e {
                RouteError::Malformed { position } => RouteError::Malformed {
                    position: latin1_position(&text, position, offset),
                },
                other => other,
            })
        }
    }
}

/// Maps a byte offset in the UTF-8 re-encoding back to the original bytes
/// (one original byte per character).
fn latin1_position(text: &str, position: u64, offset: u64) -> u64 {
    let at = usize::try_from(position.saturating_sub(offset)).unwrap_or(usize::MAX);
    match text.get(..at) {
        Some(prefix) => (prefix.chars().count() as u64).saturating_add(offset),
        None => position,
    }
}

fn parse_text(body: &str, offset: u64, total_len: u64) -> Result<ParsedRoute, RouteError> {
    let mut reader = Reader::from_str(body);
    let mut p = Parser::default();

    loop {
        let Ok(event) = reader.read_event() else {
            return Err(if p.root_seen {
                RouteError::Malformed {
                    position: reader.error_position().saturating_add(offset),
                }
            } else {
                RouteError::NotGpx
            });
        };
        match event {
            Event::Start(e) => {
                let position = reader.buffer_position().saturating_add(offset);
                if let Action::SkipSubtree = p.start(&e, false, position)?
                    && reader.read_to_end(e.name()).is_err()
                {
                    return Err(RouteError::Malformed {
                        position: reader.error_position().saturating_add(offset),
                    });
                }
            }
            Event::Empty(e) => {
                let position = reader.buffer_position().saturating_add(offset);
                p.start(&e, true, position)?;
            }
            Event::End(_) => p.end(),
            Event::Text(t) => p.text(&t)?,
            Event::CData(c) => p.text(&c)?,
            Event::GeneralRef(r) => p.general_ref(&r),
            Event::DocType(_) => return Err(RouteError::DoctypeRefused),
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
        }
        if p.root_done {
            break;
        }
    }
    p.finish(total_len)
}

impl Parser {
    fn start(
        &mut self,
        e: &BytesStart<'_>,
        empty: bool,
        position: u64,
    ) -> Result<Action, RouteError> {
        let local = e.local_name();
        let name: &str = local.as_ref();
        if !self.root_seen {
            if name != "gpx" {
                return Err(RouteError::NotGpx);
            }
            self.root_seen = true;
            if empty {
                self.root_done = true;
            } else {
                self.stack.push(Elem::Gpx);
            }
            return Ok(Action::Continue);
        }
        let Some(&parent) = self.stack.last() else {
            // Unreachable in practice: the loop stops as soon as the root closes.
            return Ok(Action::SkipSubtree);
        };
        let elem = match (parent, name) {
            (Elem::Gpx, "metadata") => Elem::Metadata,
            (Elem::Gpx, "trk") => Elem::Trk,
            (Elem::Gpx, "rte") => Elem::Rte,
            (Elem::Gpx, "wpt") => Elem::Wpt,
            (Elem::Gpx | Elem::Metadata | Elem::Trk | Elem::Rte | Elem::Wpt, "name") => Elem::Name,
            (Elem::Trk, "trkseg") => Elem::Trkseg,
            (Elem::Trkseg, "trkpt") | (Elem::Rte, "rtept") => Elem::Point,
            (Elem::Point, "ele") => Elem::Ele,
            (Elem::Point, "time") => Elem::Time,
            _ => {
                return Ok(if empty {
                    Action::Continue
                } else {
                    Action::SkipSubtree
                });
            }
        };
        match elem {
            Elem::Trkseg | Elem::Rte => {
                self.current.clear();
                self.current_start = None;
            }
            Elem::Wpt => {
                let coords = read_coords(e).map_err(|_| RouteError::Malformed { position })?;
                self.wpt_name = None;
                if empty {
                    self.push_waypoint(coords);
                    return Ok(Action::Continue);
                }
                self.pending_wpt = coords;
            }
            Elem::Point => {
                let coords = read_coords(e).map_err(|_| RouteError::Malformed { position })?;
                if empty {
                    self.push_point(coords, None);
                    return Ok(Action::Continue);
                }
                self.pending = coords;
                self.pending_ele = None;
            }
            Elem::Ele => self.ele_buf.clear(),
            Elem::Time => self.time_buf.clear(),
            Elem::Name => self.name_buf.clear(),
            Elem::Gpx | Elem::Metadata | Elem::Trk => {}
        }
        if !empty {
            self.stack.push(elem);
        }
        Ok(Action::Continue)
    }

    fn end(&mut self) {
        let Some(elem) = self.stack.pop() else {
            return;
        };
        match elem {
            Elem::Gpx => self.root_done = true,
            Elem::Trkseg => {
                if !self.current.is_empty() {
                    self.trk_tracks.push(std::mem::take(&mut self.current));
                    self.trk_starts.push(self.current_start.take());
                }
            }
            Elem::Rte => {
                if !self.current.is_empty() {
                    self.rte_tracks.push(std::mem::take(&mut self.current));
                    self.rte_starts.push(self.current_start.take());
                }
            }
            Elem::Wpt => {
                let coords = self.pending_wpt.take();
                self.push_waypoint(coords);
            }
            Elem::Time => {
                if self.current_start.is_none() && self.pending.is_some() {
                    self.current_start = parse_time(&self.time_buf);
                }
            }
            Elem::Point => {
                let coords = self.pending.take();
                let ele = self.pending_ele.take();
                self.push_point(coords, ele);
            }
            Elem::Ele => self.pending_ele = parse_elevation(&self.ele_buf),
            Elem::Name => {
                let slot = match self.stack.last() {
                    Some(Elem::Gpx | Elem::Metadata) => &mut self.meta_name,
                    Some(Elem::Trk) => &mut self.trk_name,
                    Some(Elem::Rte) => &mut self.rte_name,
                    Some(Elem::Wpt) => &mut self.wpt_name,
                    _ => return,
                };
                if slot.is_none() {
                    *slot = clean_name(&self.name_buf);
                }
            }
            Elem::Metadata | Elem::Trk => {}
        }
    }

    fn push_waypoint(&mut self, coords: Option<(f64, f64)>) {
        if let Some((lat, lon)) = coords
            && self.waypoints.len() < MAX_WAYPOINTS
        {
            self.waypoints.push(Waypoint {
                name: self.wpt_name.take(),
                lat,
                lon,
            });
        }
    }

    fn push_point(&mut self, coords: Option<(f64, f64)>, ele: Option<f64>) {
        match coords {
            Some((lat, lon)) => self.current.push(TrackPoint { lat, lon, ele }),
            None => self.rejected += 1,
        }
    }

    fn text(&mut self, content: &str) -> Result<(), RouteError> {
        match self.stack.last() {
            Some(Elem::Ele) => self.ele_buf.push_str(content),
            // A timestamp is 20-35 bytes; anything longer is not one.
            Some(Elem::Time) if self.time_buf.len() < 64 => self.time_buf.push_str(content),
            Some(Elem::Name) => {
                let mut room = MAX_RAW_NAME_BYTES
                    .saturating_sub(self.name_buf.len())
                    .min(content.len());
                while !content.is_char_boundary(room) {
                    room -= 1;
                }
                self.name_buf
                    .push_str(content.get(..room).unwrap_or(content));
            }
            Some(_) => {}
            None => {
                // Text before the root element: an HTML page or a plain-text
                // error message served instead of a file.
                if !self.root_seen && !content.trim().is_empty() {
                    return Err(RouteError::NotGpx);
                }
            }
        }
        Ok(())
    }

    fn general_ref(&mut self, r: &BytesRef<'_>) {
        match self.stack.last() {
            Some(Elem::Name) if self.name_buf.len() < MAX_RAW_NAME_BYTES => {
                let c = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c),
                    Ok(None) => predefined_entity(r),
                    Err(_) => None,
                };
                if let Some(c) = c {
                    self.name_buf.push(c);
                }
            }
            // `&#46;` inside an elevation: rare enough that treating the
            // value as unparsable (ele = None) is acceptable.
            Some(Elem::Ele) => self.ele_buf.push('&'),
            _ => {}
        }
    }

    fn finish(self, total_len: u64) -> Result<ParsedRoute, RouteError> {
        if !self.root_seen {
            return Err(RouteError::NotGpx);
        }
        if !self.root_done {
            return Err(RouteError::Malformed {
                position: total_len,
            });
        }
        let use_routes = match (makes_route(&self.trk_tracks), makes_route(&self.rte_tracks)) {
            (true, true) => within_length_m(&self.rte_tracks) > within_length_m(&self.trk_tracks),
            (false, true) => true,
            (true, false) => false,
            (false, false) => self.trk_tracks.is_empty(),
        };
        let (tracks, starts) = if use_routes {
            (self.rte_tracks, self.rte_starts)
        } else {
            (self.trk_tracks, self.trk_starts)
        };
        // Times are only worth keeping when there is one (see `ParsedRoute::starts`).
        let starts = if starts.iter().any(Option::is_some) {
            starts
        } else {
            Vec::new()
        };
        if tracks.is_empty() {
            return Err(if self.rejected > 0 {
                RouteError::InvalidCoordinate {
                    rejected: self.rejected,
                }
            } else {
                RouteError::Empty
            });
        }
        let name = self.meta_name.or(self.trk_name).or(self.rte_name);
        Ok(ParsedRoute {
            name,
            tracks,
            starts,
            waypoints: self.waypoints,
        })
    }
}

/// True when some piece has two points at different places.
fn makes_route(pieces: &[Vec<TrackPoint>]) -> bool {
    pieces.iter().any(|piece| {
        piece
            .first()
            .is_some_and(|a| piece.iter().any(|b| a.lat != b.lat || a.lon != b.lon))
    })
}

/// Length of the pieces without the jumps between them, metres.
fn within_length_m(pieces: &[Vec<TrackPoint>]) -> f64 {
    pieces
        .iter()
        .map(|piece| {
            piece
                .windows(2)
                .filter_map(|w| match w {
                    [a, b] => Some(crate::geometry::haversine_m(a, b)),
                    _ => None,
                })
                .sum::<f64>()
        })
        .sum()
}

/// Reads an ISO 8601 / RFC 3339 timestamp (`2024-06-01T08:00:00Z`,
/// fractions and `±hh:mm` offsets allowed; no zone means UTC) as Unix
/// seconds. `None` for anything else: a piece without a readable time just
/// keeps its file position.
pub(crate) fn parse_time(raw: &str) -> Option<i64> {
    let raw = raw.trim();
    let bytes = raw.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = raw.get(from..from + len)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let sep = |at: usize, c: u8| bytes.get(at).is_some_and(|&b| b == c);
    if !(sep(4, b'-') && sep(7, b'-') && (sep(10, b'T') || sep(10, b' ')) && sep(13, b':')) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute) = (num(11, 2)?, num(14, 2)?);
    let (second, mut rest) = if sep(16, b':') {
        (num(17, 2)?, raw.get(19..)?)
    } else {
        (0, raw.get(16..)?)
    };
    if !((1..=12).contains(&month) && (1..=31).contains(&day) && hour < 24 && minute < 60)
        || second > 60
    {
        return None;
    }
    if let Some(fraction) = rest.strip_prefix(['.', ',']) {
        rest = fraction.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let offset_s = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return None,
            };
            let zone = rest.get(1..)?.replace(':', "");
            if zone.len() != 4 || !zone.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let (h, m): (i64, i64) = (zone.get(..2)?.parse().ok()?, zone.get(2..)?.parse().ok()?);
            sign * (h * 3600 + m * 60)
        }
    };
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm), valid for every year a GPX file can name.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Reads `lat`/`lon` of a point element. `Ok(None)` means the point must be
/// skipped; `Err` means the tag itself is not well-formed.
fn read_coords(e: &BytesStart<'_>) -> Result<Option<(f64, f64)>, AttrError> {
    let mut lat = None;
    let mut lon = None;
    let mut attrs = e.attributes();
    // Duplicate-attribute checking allocates per tag; a duplicated `lat` is
    // harmless here (the first parsable one wins).
    attrs.with_checks(false);
    for attr in attrs {
        let attr = attr?;
        match attr.key.local_name().as_ref() {
            "lat" if lat.is_none() => lat = parse_f64(&attr.value),
            "lon" if lon.is_none() => lon = parse_f64(&attr.value),
            _ => {}
        }
    }
    Ok(match (lat, lon) {
        (Some(lat), Some(lon)) if valid_coordinates(lat, lon) => Some((lat, lon)),
        _ => None,
    })
}

/// True for a finite latitude in ±90 and a finite longitude in ±180.
pub(crate) fn valid_coordinates(lat: f64, lon: f64) -> bool {
    lat.is_finite() && lon.is_finite() && lat.abs() <= 90.0 && lon.abs() <= 180.0
}

/// Accepts an elevation only if finite and physically plausible.
pub(crate) fn plausible_elevation(ele: f64) -> Option<f64> {
    (ele.is_finite() && ele.abs() <= MAX_ABS_ELEVATION_M).then_some(ele)
}

fn parse_elevation(raw: &str) -> Option<f64> {
    parse_f64(raw).and_then(plausible_elevation)
}

fn parse_f64(raw: &str) -> Option<f64> {
    raw.trim().parse().ok()
}

fn predefined_entity(r: &BytesRef<'_>) -> Option<char> {
    match &**r {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        // Unknown entities cannot be defined without a DTD; drop them.
        _ => None,
    }
}

/// Normalises a user-visible name: trims, collapses whitespace runs (so a
/// name split across lines keeps its word breaks), drops control and
/// invisible format characters, and cuts to [`MAX_NAME_CHARS`] characters.
/// Returns `None` when nothing visible is left.
pub(crate) fn clean_name(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len().min(MAX_NAME_CHARS * 4));
    let mut chars = 0;
    let mut pending_space = false;
    for c in raw.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if c.is_control() || etappe_text::is_invisible(c) {
            continue;
        }
        let needed = if pending_space && !out.is_empty() {
            2
        } else {
            1
        };
        if chars + needed > MAX_NAME_CHARS {
            break;
        }
        if needed == 2 {
            out.push(' ');
        }
        out.push(c);
        chars += needed;
        pending_space = false;
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIMPLE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"
     xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
  <metadata><name>  Tour du
    Mont Blanc </name><time>2024-06-01T08:00:00Z</time></metadata>
  <wpt lat="45.5" lon="6.5"><name>Water</name></wpt>
  <trk>
    <name>Track name</name>
    <trkseg>
      <trkpt lat="45.0" lon="6.0"><ele>1000.5</ele><time>2024-06-01T08:00:00Z</time>
        <extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>120</gpxtpx:hr><ele>9999</ele></gpxtpx:TrackPointExtension></extensions>
      </trkpt>
      <trkpt lat="45.001" lon="6.001"/>
    </trkseg>
    <trkseg>
      <trkpt lat="45.002" lon="6.002"><ele> 1002 </ele></trkpt>
    </trkseg>
  </trk>
  <trk><trkseg><trkpt lat="46" lon="7"><ele>1</ele></trkpt></trkseg></trk>
</gpx>
"#;

    fn pt(lat: f64, lon: f64, ele: Option<f64>) -> TrackPoint {
        TrackPoint { lat, lon, ele }
    }

    #[test]
    fn parses_tracks_segments_names_and_skips_extensions() {
        let r = parse_gpx(SIMPLE.as_bytes()).expect("valid gpx");
        assert_eq!(r.name.as_deref(), Some("Tour du Mont Blanc"));
        // One piece per segment: the caller decides whether they join.
        assert_eq!(r.tracks.len(), 3);
        assert_eq!(
            r.tracks[0],
            vec![pt(45.0, 6.0, Some(1000.5)), pt(45.001, 6.001, None)]
        );
        assert_eq!(r.tracks[1], vec![pt(45.002, 6.002, Some(1002.0))]);
        assert_eq!(r.tracks[2], vec![pt(46.0, 7.0, Some(1.0))]);
        // Only the first segment has a time: 2024-06-01T08:00:00Z.
        assert_eq!(r.starts, vec![Some(1_717_228_800), None, None]);
        assert_eq!(
            r.waypoints,
            vec![Waypoint {
                name: Some("Water".into()),
                lat: 45.5,
                lon: 6.5
            }]
        );
    }

    #[test]
    fn times_are_read_as_unix_seconds() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_time(" 2024-06-01T08:00:00.250Z "),
            Some(1_717_228_800)
        );
        assert_eq!(parse_time("2024-06-01T10:00:00+02:00"), Some(1_717_228_800));
        assert_eq!(parse_time("2024-06-01T07:30:00-0030"), Some(1_717_228_800));
        assert_eq!(parse_time("2024-06-01T08:00"), Some(1_717_228_800));
        assert_eq!(parse_time("2000-03-01T00:00:00Z"), Some(951_868_800));
        for bad in [
            "",
            "yesterday",
            "2024-13-01T00:00:00Z",
            "2024-06-01",
            "2024-06-01T08:00:00Q",
            "２０２４-06-01T08:00:00Z",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn waypoints_are_kept_with_or_without_a_name_and_capped() {
        let doc = r#"<gpx><wpt lat="1" lon="2"/><wpt lat="99" lon="2"><name>bad</name></wpt>
<wpt lat="3" lon="4"><ele>5</ele><name> Pass &amp; hut </name><sym>x</sym></wpt>
<trk><trkseg><trkpt lat="1" lon="1"/><trkpt lat="1.1" lon="1"/></trkseg></trk></gpx>"#;
        let r = parse_gpx(doc.as_bytes()).expect("parses");
        assert_eq!(
            r.waypoints,
            vec![
                Waypoint {
                    name: None,
                    lat: 1.0,
                    lon: 2.0
                },
                Waypoint {
                    name: Some("Pass & hut".into()),
                    lat: 3.0,
                    lon: 4.0
                },
            ]
        );
        let many = format!(
            "<gpx>{}<trk><trkseg><trkpt lat='1' lon='1'/></trkseg></trk></gpx>",
            "<wpt lat='1' lon='1'><name>w</name></wpt>".repeat(MAX_WAYPOINTS + 5)
        );
        assert_eq!(
            parse_gpx(many.as_bytes()).expect("parses").waypoints.len(),
            MAX_WAYPOINTS
        );
    }

    #[test]
    fn the_set_that_makes_a_route_wins() {
        // A one-point track beside a two-point route: the route.
        let doc = r#"<gpx><trk><trkseg><trkpt lat="5" lon="5"/></trkseg></trk>
<rte><rtept lat="1" lon="1"/><rtept lat="1.01" lon="1"/></rte></gpx>"#;
        let r = parse_gpx(doc.as_bytes()).expect("parses");
        assert_eq!(
            r.tracks,
            vec![vec![pt(1.0, 1.0, None), pt(1.01, 1.0, None)]]
        );
        // Both make a route: the longer one.
        let doc = r#"<gpx><trk><trkseg><trkpt lat="5" lon="5"/><trkpt lat="5.001" lon="5"/></trkseg></trk>
<rte><rtept lat="1" lon="1"/><rtept lat="1.01" lon="1"/></rte></gpx>"#;
        assert_eq!(parse_gpx(doc.as_bytes()).expect("parses").tracks.len(), 1);
        assert_eq!(
            parse_gpx(doc.as_bytes()).expect("parses").tracks[0][0],
            pt(1.0, 1.0, None)
        );
        // A track of repeated points does not make a route either.
        let doc = r#"<gpx><trk><trkseg><trkpt lat="5" lon="5"/><trkpt lat="5" lon="5"/></trkseg></trk>
<rte><rtept lat="1" lon="1"/><rtept lat="1.01" lon="1"/></rte></gpx>"#;
        assert_eq!(
            parse_gpx(doc.as_bytes()).expect("parses").tracks[0][0],
            pt(1.0, 1.0, None)
        );
    }

    #[test]
    fn bom_is_accepted_and_positions_count_it() {
        let mut bytes = UTF8_BOM.to_vec();
        bytes.extend_from_slice(SIMPLE.as_bytes());
        assert!(parse_gpx(&bytes).is_ok());
        let truncated = &bytes[..bytes.len() / 2];
        assert!(matches!(
            parse_gpx(truncated),
            Err(RouteError::Malformed { .. })
        ));
    }

    #[test]
    fn gpx_1_0_without_metadata_uses_root_name() {
        let doc = r#"<?xml version="1.0"?>
<gpx version="1.0" creator="old" xmlns="http://www.topografix.com/GPX/1/0">
<name>Old &amp; Gold &#233;t&#xE9;</name>
<trk><name>ignored</name><trkseg>
<trkpt lat="10" lon="20"><ele>5</ele><time>2004-01-01T00:00:00Z</time><speed>3.2</speed><course>90</course></trkpt>
<trkpt lat="10.1" lon="20.1"></trkpt>
</trkseg></trk></gpx>"#;
        let r = parse_gpx(doc.as_bytes()).expect("gpx 1.0");
        assert_eq!(r.name.as_deref(), Some("Old & Gold été"));
        assert_eq!(
            r.tracks,
            vec![vec![pt(10.0, 20.0, Some(5.0)), pt(10.1, 20.1, None)]]
        );
    }

    #[test]
    fn prefixed_namespace_elements_are_matched_by_local_name() {
        let doc = r#"<g:gpx xmlns:g="http://www.topografix.com/GPX/1/1" version="1.1">
<g:trk><g:name><![CDATA[Cdata <name>]]></g:name><g:trkseg>
<g:trkpt g:lat="1.5" lon="2.5"><g:ele>7</g:ele></g:trkpt>
</g:trkseg></g:trk></g:gpx>"#;
        let r = parse_gpx(doc.as_bytes()).expect("prefixed");
        assert_eq!(r.name.as_deref(), Some("Cdata <name>"));
        assert_eq!(r.tracks, vec![vec![pt(1.5, 2.5, Some(7.0))]]);
    }

    #[test]
    fn routes_are_used_only_without_tracks() {
        let routes_only = r#"<gpx><rte><name>R1</name><rtept lat="1" lon="1"/><rtept lat="2" lon="2"><ele>3</ele></rtept></rte>
<rte><rtept lat="3" lon="3"/></rte><rte/></gpx>"#;
        let r = parse_gpx(routes_only.as_bytes()).expect("routes");
        assert_eq!(r.name.as_deref(), Some("R1"));
        assert_eq!(
            r.tracks,
            vec![
                vec![pt(1.0, 1.0, None), pt(2.0, 2.0, Some(3.0))],
                vec![pt(3.0, 3.0, None)],
            ]
        );
        let both = r#"<gpx><rte><rtept lat="1" lon="1"/></rte><trk><trkseg><trkpt lat="5" lon="5"/></trkseg></trk></gpx>"#;
        let r = parse_gpx(both.as_bytes()).expect("both");
        assert_eq!(r.tracks, vec![vec![pt(5.0, 5.0, None)]]);
    }

    #[test]
    fn invalid_points_are_skipped_then_reported() {
        let mixed = r#"<gpx><trk><trkseg>
<trkpt lat="91" lon="0"/><trkpt lat="NaN" lon="0"/><trkpt lat="0" lon="-180.5"/>
<trkpt lat="x" lon="1"/><trkpt lon="1"/><trkpt lat="inf" lon="1"/>
<trkpt lat=" -90 " lon="180"><ele>NaN</ele></trkpt><trkpt lat="1" lon="1"><ele>1e9</ele></trkpt>
</trkseg></trk></gpx>"#;
        let r = parse_gpx(mixed.as_bytes()).expect("some valid");
        assert_eq!(
            r.tracks,
            vec![vec![pt(-90.0, 180.0, None), pt(1.0, 1.0, None)]]
        );
        let all_bad = r#"<gpx><trk><trkseg><trkpt lat="100" lon="0"/><trkpt lat="0" lon="200"/></trkseg></trk></gpx>"#;
        assert_eq!(
            parse_gpx(all_bad.as_bytes()),
            Err(RouteError::InvalidCoordinate { rejected: 2 })
        );
    }

    #[test]
    fn documents_without_points_are_empty() {
        for doc in [
            "<gpx/>",
            "<gpx></gpx>",
            "<gpx><trk><trkseg/></trk><wpt lat='1' lon='1'/></gpx>",
            "<?xml version='1.0'?><gpx version='1.1'><metadata><name>x</name></metadata></gpx>",
        ] {
            assert_eq!(parse_gpx(doc.as_bytes()), Err(RouteError::Empty), "{doc}");
        }
    }

    #[test]
    fn non_gpx_inputs_are_rejected() {
        for doc in [
            &b""[..],
            b"   ",
            b"hello world",
            b"{\"route\": 1}",
            b"<html><body>Not found</body></html>",
            b"<?xml version='1.0'?><kml><Document/></kml>",
            b"\x89PNG\r\n\x1a\n\0\0\0",
            b"<<<>>>",
        ] {
            assert_eq!(parse_gpx(doc), Err(RouteError::NotGpx), "{doc:?}");
        }
    }

    #[test]
    fn truncated_and_broken_xml_is_malformed() {
        // Cut between two elements: XML ends with elements still open.
        let cut = "<gpx><trk><trkseg><trkpt lat='1' lon='1'/>";
        assert_eq!(
            parse_gpx(cut.as_bytes()),
            Err(RouteError::Malformed {
                position: cut.len() as u64
            })
        );
        // Cut inside a tag: the error points at or before the cut.
        let mid = &SIMPLE.as_bytes()[..SIMPLE.len() - 30];
        assert!(matches!(
            parse_gpx(mid),
            Err(RouteError::Malformed { position }) if position <= mid.len() as u64
        ));
        let broken = "<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"1\"></trk></gpx>";
        assert!(matches!(
            parse_gpx(broken.as_bytes()),
            Err(RouteError::Malformed { .. })
        ));
        let bad_attr = "<gpx><trk><trkseg><trkpt lat=1 lon=\"1\"/></trkseg></trk></gpx>";
        assert!(matches!(
            parse_gpx(bad_attr.as_bytes()),
            Err(RouteError::Malformed { .. })
        ));
        let unclosed_extension = "<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"1\"><extensions><a>";
        assert!(matches!(
            parse_gpx(unclosed_extension.as_bytes()),
            Err(RouteError::Malformed { .. })
        ));
    }

    #[test]
    fn doctype_and_billion_laughs_are_refused() {
        let lol = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<gpx><metadata><name>&lol3;</name></metadata><trk><trkseg><trkpt lat="1" lon="1"/></trkseg></trk></gpx>"#;
        assert_eq!(parse_gpx(lol.as_bytes()), Err(RouteError::DoctypeRefused));
        let xxe = r#"<!DOCTYPE gpx [<!ENTITY x SYSTEM "file:///etc/passwd">]><gpx><name>&x;</name></gpx>"#;
        assert_eq!(parse_gpx(xxe.as_bytes()), Err(RouteError::DoctypeRefused));
    }

    #[test]
    fn undeclared_entities_are_dropped_not_expanded() {
        let doc = "<gpx><metadata><name>a&lol;b</name></metadata><trk><trkseg><trkpt lat='1' lon='1'/></trkseg></trk></gpx>";
        let r = parse_gpx(doc.as_bytes()).expect("parses");
        assert_eq!(r.name.as_deref(), Some("ab"));
    }

    #[test]
    fn names_are_cleaned_and_capped() {
        assert_eq!(
            clean_name("  a\u{0}b\u{7}\tc\r\n d\u{202E}e  ").as_deref(),
            Some("ab c de")
        );
        assert_eq!(clean_name(" \n\t\u{1} "), None);
        let long: String = "é".repeat(1000);
        let cleaned = clean_name(&long).expect("non-empty");
        assert_eq!(cleaned.chars().count(), MAX_NAME_CHARS);
        let doc = format!(
            "<gpx><metadata><name>{}</name></metadata><trk><name>t</name><trkseg><trkpt lat='1' lon='1'/></trkseg></trk></gpx>",
            "x".repeat(100_000)
        );
        let r = parse_gpx(doc.as_bytes()).expect("parses");
        assert_eq!(r.name.map(|n| n.len()), Some(MAX_NAME_CHARS));
    }

    #[test]
    fn blank_metadata_name_falls_back_to_track_name() {
        let doc = "<gpx><metadata><name> \u{1} </name></metadata><trk><name>T</name><trkseg><trkpt lat='1' lon='1'/></trkseg></trk></gpx>";
        let r = parse_gpx(doc.as_bytes()).expect("parses");
        assert_eq!(r.name.as_deref(), Some("T"));
    }

    #[test]
    fn latin1_files_are_read_as_latin1() {
        let doc = b"<?xml version='1.0' encoding='ISO-8859-1'?><gpx><metadata><name>Caf\xe9 cr\xe8me</name></metadata><trk><trkseg><trkpt lat='1' lon='1'/></trkseg></trk></gpx>";
        let r = parse_gpx(doc).expect("latin-1");
        assert_eq!(r.name.as_deref(), Some("Caf\u{e9} cr\u{e8}me"));
        // Positions still count original bytes.
        let broken = b"<gpx><name>\xe9\xe9\xe9</name><trk></gpx>";
        let ascii = b"<gpx><name>eee</name><trk></gpx>";
        assert!(matches!(
            parse_gpx(broken),
            Err(RouteError::Malformed { .. })
        ));
        assert_eq!(parse_gpx(broken), parse_gpx(ascii));
    }

    #[test]
    fn trailing_garbage_after_root_is_ignored() {
        let mut doc = SIMPLE.as_bytes().to_vec();
        doc.extend_from_slice(b"\0\0\0<junk");
        assert!(parse_gpx(&doc).is_ok());
    }

    /// Tiny xorshift64* so the mutation test needs no crate.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % (n.max(1) as u64)) as usize
        }
    }

    #[test]
    fn two_thousand_mutations_never_panic() {
        let base = SIMPLE.as_bytes();
        let alphabet: &[u8] =
            b"<>/=\"' &;#!?[]-:0123456789.eE+abcdegilnoprtxyzDOCTYPE\0\xEF\xBB\xBF\xFF\n";
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let (mut ok, mut err) = (0, 0);
        for round in 0..2_000 {
            let mut doc = base.to_vec();
            let edits = 1 + rng.below(8);
            for _ in 0..edits {
                match rng.below(4) {
                    0 => {
                        let at = rng.below(doc.len() + 1);
                        doc.truncate(at);
                    }
                    1 if !doc.is_empty() => {
                        let at = rng.below(doc.len());
                        doc[at] ^= 1 << rng.below(8);
                    }
                    2 => {
                        let at = rng.below(doc.len() + 1);
                        let len = 1 + rng.below(6);
                        for _ in 0..len {
                            let b = alphabet[rng.below(alphabet.len())];
                            doc.insert(at, b);
                        }
                    }
                    _ if !doc.is_empty() => {
                        let at = rng.below(doc.len());
                        let len = 1 + rng.below(20);
                        doc.drain(at..(at + len).min(doc.len()));
                    }
                    _ => {}
                }
            }
            match parse_gpx(&doc) {
                Ok(r) => {
                    ok += 1;
                    assert!(!r.tracks.is_empty(), "round {round}");
                    for p in r.tracks.iter().flatten() {
                        assert!(valid_coordinates(p.lat, p.lon), "round {round}");
                    }
                }
                Err(RouteError::Malformed { position }) => {
                    err += 1;
                    assert!(position <= doc.len() as u64, "round {round}");
                }
                Err(_) => err += 1,
            }
        }
        assert_eq!(ok + err, 2_000);
        eprintln!("mutations: {ok} parsed, {err} rejected");
        // Both outcomes must actually be exercised for the test to mean much.
        assert!(ok > 50 && err > 50, "ok={ok} err={err}");
    }
}
