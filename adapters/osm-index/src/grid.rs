//! The spatial grid both backends index on: 0.02° cells (about 2.2 km north–south) numbered
//! `row * COLUMNS + col`, and the flat-earth distances used to filter what the cells return.
//!
//! A line is mapped to the cells it really crosses (row by row, exact for a straight segment
//! in latitude/longitude), and a search radius grows that set by whole cells, so every point
//! within the radius lies in a returned cell. Distances are equirectangular around the point
//! measured from: within a few metres at the radii the rules use (≤ 15 km).

/// Cell size, degrees.
pub(crate) const CELL_DEG: f64 = 0.02;
/// Cells per row (360° / [`CELL_DEG`]).
pub(crate) const COLUMNS: i64 = 18_000;
const ROWS: i64 = 9_000;
/// Metres per degree of latitude (and of longitude on the equator).
pub(crate) const METRES_PER_DEGREE: f64 = 111_320.0;
/// A segment spanning more cells than this is bad data (or crosses the antimeridian), not a
/// road; it is indexed by its ends only rather than filling the grid.
const MAX_SEGMENT_CELLS: i64 = 250_000;

/// The row of a latitude.
pub(crate) fn row(lat: f64) -> i64 {
    (((lat + 90.0) / CELL_DEG).floor() as i64).clamp(0, ROWS - 1)
}

/// The column of a longitude.
pub(crate) fn col(lon: f64) -> i64 {
    (((lon + 180.0) / CELL_DEG).floor() as i64).clamp(0, COLUMNS - 1)
}

/// The cell of a point.
pub(crate) fn cell(lat: f64, lon: f64) -> i64 {
    row(lat) * COLUMNS + col(lon)
}

/// Calls `each` with every cell the segment `a`–`b` ((lat, lon)) crosses, once per row it
/// crosses and column range in that row (cells may repeat across calls of a polyline).
pub(crate) fn segment_cells(a: (f64, f64), b: (f64, f64), mut each: impl FnMut(i64)) {
    if !(a.0.is_finite() && a.1.is_finite() && b.0.is_finite() && b.1.is_finite()) {
        return;
    }
    let (r0, r1) = (row(a.0.min(b.0)), row(a.0.max(b.0)));
    let span = (r1 - r0 + 1) * ((col(a.1) - col(b.1)).abs() + 1);
    if span > MAX_SEGMENT_CELLS {
        each(cell(a.0, a.1));
        each(cell(b.0, b.1));
        return;
    }
    let (lo_lat, hi_lat) = (a.0.min(b.0), a.0.max(b.0));
    let lon_at = |lat: f64| {
        if b.0 == a.0 {
            a.1
        } else {
            a.1 + (b.1 - a.1) * ((lat - a.0) / (b.0 - a.0))
        }
    };
    for r in r0..=r1 {
        let band_lo = (r as f64 * CELL_DEG - 90.0).max(lo_lat);
        let band_hi = ((r + 1) as f64 * CELL_DEG - 90.0).min(hi_lat);
        let (c0, c1) = if b.0 == a.0 {
            (col(a.1.min(b.1)), col(a.1.max(b.1)))
        } else {
            let (x, y) = (lon_at(band_lo), lon_at(band_hi));
            (col(x.min(y)), col(x.max(y)))
        };
        for c in c0..=c1 {
            each(r * COLUMNS + c);
        }
    }
}

/// How many rows and columns a radius spans at latitude `lat`: growing a cell set by these
/// reaches every point within `radius_m` of it.
pub(crate) fn reach(radius_m: f64, lat: f64) -> (i64, i64) {
    let radius_m = radius_m.max(0.0);
    let rows = (radius_m / (CELL_DEG * METRES_PER_DEGREE)).ceil() as i64;
    // The pole-ward edge of the cell is where a degree of longitude is shortest.
    let worst_lat = (lat.abs() + CELL_DEG).min(89.0);
    let cols =
        (radius_m / (CELL_DEG * METRES_PER_DEGREE * worst_lat.to_radians().cos())).ceil() as i64;
    (rows, cols)
}

/// Calls `each` with every cell within (`rows`, `cols`) of `center`, clamped to the grid.
pub(crate) fn around(center: i64, (rows, cols): (i64, i64), mut each: impl FnMut(i64)) {
    let (r, c) = (center / COLUMNS, center % COLUMNS);
    for rr in (r - rows).max(0)..=(r + rows).min(ROWS - 1) {
        for cc in (c - cols).max(0)..=(c + cols).min(COLUMNS - 1) {
            each(rr * COLUMNS + cc);
        }
    }
}

/// (x, y) metres of `p` east and north of `origin`.
fn flat(origin: (f64, f64), p: (f64, f64)) -> (f64, f64) {
    let cos = origin.0.to_radians().cos();
    (
        (p.1 - origin.1) * METRES_PER_DEGREE * cos,
        (p.0 - origin.0) * METRES_PER_DEGREE,
    )
}

/// Distance from `p` to the segment `a`–`b`, metres.
pub(crate) fn point_segment_m(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (ax, ay) = flat(p, a);
    let (bx, by) = flat(p, b);
    distance_to_origin(ax, ay, bx, by)
}

fn distance_to_origin(ax: f64, ay: f64, bx: f64, by: f64) -> f64 {
    let (dx, dy) = (bx - ax, by - ay);
    let length2 = dx * dx + dy * dy;
    let t = if length2 > 0.0 {
        (-(ax * dx + ay * dy) / length2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (x, y) = (ax + t * dx, ay + t * dy);
    (x * x + y * y).sqrt()
}

/// Shortest distance between the segments `a`–`b` and `c`–`d`, metres (0 when they cross).
pub(crate) fn segment_segment_m(a: (f64, f64), b: (f64, f64), c: (f64, f64), d: (f64, f64)) -> f64 {
    let (p, q, r, s) = ((0.0, 0.0), flat(a, b), flat(a, c), flat(a, d));
    let cross = |o: (f64, f64), u: (f64, f64), v: (f64, f64)| {
        (u.0 - o.0) * (v.1 - o.1) - (u.1 - o.1) * (v.0 - o.0)
    };
    let (d1, d2) = (cross(r, s, p), cross(r, s, q));
    let (d3, d4) = (cross(p, q, r), cross(p, q, s));
    if ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0))
        && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0))
    {
        return 0.0;
    }
    let to = |o: (f64, f64), u: (f64, f64), v: (f64, f64)| {
        distance_to_origin(u.0 - o.0, u.1 - o.1, v.0 - o.0, v.1 - o.1)
    };
    to(p, r, s)
        .min(to(q, r, s))
        .min(to(r, p, q))
        .min(to(s, p, q))
}

/// Shortest distance from the segment `a`–`b` to the cell `cell`, metres (0 when the
/// segment enters it).
pub(crate) fn segment_cell_m(a: (f64, f64), b: (f64, f64), cell: i64) -> f64 {
    let (r, c) = (cell / COLUMNS, cell % COLUMNS);
    let south = r as f64 * CELL_DEG - 90.0;
    let west = c as f64 * CELL_DEG - 180.0;
    segment_box_m(a, b, (south, west, south + CELL_DEG, west + CELL_DEG))
}

/// Shortest distance from the segment `a`–`b` to the box (south, west, north, east),
/// metres (0 when the segment enters it).
pub(crate) fn segment_box_m(
    a: (f64, f64),
    b: (f64, f64),
    (south, west, north, east): (f64, f64, f64, f64),
) -> f64 {
    let inside = |p: (f64, f64)| (south..=north).contains(&p.0) && (west..=east).contains(&p.1);
    if inside(a) || inside(b) {
        return 0.0;
    }
    let corners = [(south, west), (south, east), (north, east), (north, west)];
    (0..4)
        .map(|i| segment_segment_m(a, b, corners[i], corners[(i + 1) % 4]))
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_number_rows_then_columns() {
        assert_eq!(cell(-90.0, -180.0), 0);
        assert_eq!(cell(-90.0, -179.99), 0);
        assert_eq!(cell(-90.0, -179.97), 1);
        assert_eq!(cell(-89.97, -180.0), COLUMNS);
        assert_eq!(cell(45.01, 5.01) + 1, cell(45.01, 5.03));
        // Out-of-range input lands on the edge rather than on a neighbour's number.
        assert_eq!(cell(95.0, 200.0), (ROWS - 1) * COLUMNS + COLUMNS - 1);
    }

    #[test]
    fn a_diagonal_segment_crosses_only_the_cells_it_touches() {
        let mut cells = Vec::new();
        // From the middle of one cell to the middle of its north-east neighbour's neighbour.
        segment_cells((45.01, 5.01), (45.05, 5.05), |c| cells.push(c));
        cells.sort_unstable();
        cells.dedup();
        let expected: Vec<i64> = {
            let mut v = vec![
                cell(45.01, 5.01),
                cell(45.03, 5.03),
                cell(45.05, 5.05),
                cell(45.01, 5.03),
                cell(45.03, 5.01),
                cell(45.03, 5.05),
                cell(45.05, 5.03),
            ];
            v.sort_unstable();
            v.dedup();
            v
        };
        // The exact diagonal passes through the corners; what it crosses is a subset of
        // the 3×3 block and always includes the ends and the middle.
        for must in [cell(45.01, 5.01), cell(45.03, 5.03), cell(45.05, 5.05)] {
            assert!(cells.contains(&must));
        }
        assert!(cells.iter().all(|c| expected.contains(c)), "{cells:?}");
        assert!(!cells.contains(&cell(45.01, 5.05)));
    }

    #[test]
    fn a_segment_is_as_far_from_a_cell_as_from_its_nearest_edge() {
        // A meridian segment 100 m west of the edge between two columns.
        let edge_lon = 5.0 - 0.0;
        let offset = 100.0 / (METRES_PER_DEGREE * 45.01f64.to_radians().cos());
        let (a, b) = ((45.005, edge_lon - offset), (45.015, edge_lon - offset));
        let east_cell = cell(45.01, edge_lon + 0.01);
        let d = segment_cell_m(a, b, east_cell);
        assert!((d - 100.0).abs() < 1.0, "{d}");
        assert_eq!(segment_cell_m(a, b, cell(45.01, edge_lon - 0.01)), 0.0);
    }

    #[test]
    fn reach_covers_the_radius_at_the_latitude() {
        assert_eq!(reach(2_000.0, 0.0), (1, 1));
        assert_eq!(reach(2_300.0, 0.0), (2, 2));
        // At 60° a degree of longitude is half as long: twice the columns.
        let (rows, cols) = reach(10_000.0, 60.0);
        assert_eq!(rows, 5);
        assert!(cols >= 9, "{cols}");
    }

    #[test]
    fn distances_match_the_metres_they_stand_for() {
        let a = (45.0, 5.0);
        let b = (45.01, 5.0);
        let east_100m = (
            45.005,
            5.0 + 100.0 / (METRES_PER_DEGREE * 45f64.to_radians().cos()),
        );
        let d = point_segment_m(east_100m, a, b);
        assert!((d - 100.0).abs() < 0.5, "{d}");
        // Beyond the end: the distance to the end point.
        let north = (45.02, 5.0);
        assert!((point_segment_m(north, a, b) - 1113.2).abs() < 1.0);
        // Two crossing segments touch; parallel ones 100 m apart are 100 m apart.
        let west = (45.005, 4.99);
        let east = (45.005, 5.01);
        assert_eq!(segment_segment_m(a, b, west, east), 0.0);
        let shifted = segment_segment_m(a, b, (45.0, east_100m.1), (45.01, east_100m.1));
        assert!((shifted - 100.0).abs() < 0.5, "{shifted}");
    }
}
