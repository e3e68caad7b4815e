//! The route as stage edits see it: the stored track of a generation with its cumulative
//! distances, and the labeller for new day ends. Implements the core's `RouteGeometry`, so
//! the aggregate decides edits over the real route without doing any I/O itself.

use etappe_domain::trip::RouteGeometry;
use etappe_domain::trip::edits::Measure;
use etappe_domain::trip::stage::Point;
use etappe_route::geometry::{cumulative_distances, known_climb};
use etappe_route::gpx::TrackPoint;

use crate::labels::Labeller;

/// A generation's track, ready to be measured.
#[derive(Debug)]
pub struct TrackGeometry<'a> {
    points: Vec<TrackPoint>,
    cumulative_m: Vec<f64>,
    labeller: &'a dyn Labeller,
}

impl<'a> TrackGeometry<'a> {
    /// Measures `points` once.
    pub fn new(points: Vec<TrackPoint>, labeller: &'a dyn Labeller) -> Self {
        let cumulative_m = cumulative_distances(&points);
        Self {
            points,
            cumulative_m,
            labeller,
        }
    }

    /// The points `first..=last` (clamped to the track).
    pub fn slice(&self, first: usize, last: usize) -> &[TrackPoint] {
        let last = last.min(self.points.len().saturating_sub(1));
        self.points.get(first..=last).unwrap_or(&[])
    }

    fn distance_m(&self, index: usize) -> f64 {
        self.cumulative_m.get(index).copied().unwrap_or(0.0)
    }
}

impl RouteGeometry for TrackGeometry<'_> {
    fn point_count(&self) -> usize {
        self.points.len()
    }

    fn point(&self, index: usize) -> Option<Point> {
        self.points.get(index).map(|p| Point {
            lat: p.lat,
            lon: p.lon,
            ele: p.ele,
        })
    }

    fn measure(&self, first: usize, last: usize) -> Measure {
        let slice = self.slice(first, last);
        let climb = known_climb(slice, &[]);
        let (ascent_m, descent_m) = (climb.map(|c| c.0), climb.map(|c| c.1));
        Measure {
            distance_km: (self.distance_m(last.min(self.points.len().saturating_sub(1)))
                - self.distance_m(first))
            .max(0.0)
                / 1000.0,
            ascent_m,
            descent_m,
        }
    }

    fn nearest(&self, target: Point, first: usize, last: usize) -> usize {
        // An equirectangular distance is enough to rank points a few km apart.
        let cos = target.lat.to_radians().cos();
        let mut best = (first, f64::INFINITY);
        for (offset, p) in self.slice(first, last).iter().enumerate() {
            let dx = (p.lon - target.lon) * cos;
            let dy = p.lat - target.lat;
            let d = dx * dx + dy * dy;
            if d < best.1 {
                best = (first + offset, d);
            }
        }
        best.0
    }

    fn index_at_km(&self, first: usize, last: usize, km: f64) -> usize {
        let last = last.min(self.points.len().saturating_sub(1));
        let target = self.distance_m(first) + km * 1000.0;
        let window = self.cumulative_m.get(first..=last).unwrap_or(&[]);
        (first + window.partition_point(|d| *d < target)).min(last)
    }

    fn along_km(&self, index: usize) -> f64 {
        self.distance_m(index.min(self.points.len().saturating_sub(1))) / 1000.0
    }

    fn place(&self, point: Point) -> (Option<String>, Option<String>) {
        match self.labeller.label(point.lat, point.lon) {
            Some(place) => (Some(place.name), Some(place.country_code)),
            None => (None, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::NoLabels;

    fn line(n: usize) -> Vec<TrackPoint> {
        (0..n)
            .map(|i| TrackPoint {
                lat: 45.0 + i as f64 * 0.009,
                lon: 6.0,
                ele: Some(100.0 + i as f64 * 10.0),
            })
            .collect()
    }

    #[test]
    fn a_slice_with_a_point_without_height_has_unknown_climbing() {
        let mut points = line(11);
        points[5].ele = None;
        let geometry = TrackGeometry::new(points, &NoLabels);
        assert_eq!(geometry.measure(0, 10).ascent_m, None);
        assert!(geometry.measure(6, 10).ascent_m.is_some());
    }

    #[test]
    fn measures_and_finds_points_along_the_track() {
        let geometry = TrackGeometry::new(line(101), &NoLabels);
        let m = geometry.measure(0, 100);
        assert!((m.distance_km - 100.08).abs() < 0.1, "{m:?}");
        let ascent = m.ascent_m.expect("the heights are known");
        assert!((ascent - 1000.0).abs() < 20.0, "{m:?}");
        let at = geometry.index_at_km(10, 100, 5.0);
        assert_eq!(at, 15);
        assert_eq!(geometry.index_at_km(10, 20, 500.0), 20);
        let near = geometry.nearest(
            Point {
                lat: 45.0 + 42.2 * 0.009,
                lon: 6.05,
                ele: None,
            },
            0,
            100,
        );
        assert_eq!(near, 42);
        assert_eq!(
            geometry.nearest(
                Point {
                    lat: 45.0,
                    lon: 6.0,
                    ele: None
                },
                30,
                40
            ),
            30
        );
    }
}
