//! Heights for routes that have none, or gaps: the route's points are sampled every 90 m
//! where heights are missing and looked up in the configured elevation source (imported
//! SRTM tiles first, then Open-Meteo), the points between samples interpolated; short gaps
//! with no source are bridged between the heights either side. What is still missing stays
//! missing, and the days it touches have unknown climbing: a route without elevation is not
//! flat. A detour's spur gets its heights here too ([`Pipeline::fill_heights_or_retry`]), so
//! a day's climbing is read the same way before and after it.

use etappe_domain::trip::stage::ElevationInfo;
use etappe_route::elevation::{
    SAMPLE_SPACING_M, SHORT_GAP_M, fill, interpolate_short_gaps, sample_plan,
};
use etappe_route::gpx::TrackPoint;
use etappe_upstream::UpstreamError;

use super::{JobError, Pipeline};

/// Points asked of the source in one call (the Open-Meteo client cuts them into its own
/// batches of 100).
const LOOKUP_CHUNK: usize = 2_000;

/// What to do without heights, said once for every message.
pub(crate) const HOW_TO_GET_HEIGHTS: &str = "configure an elevation source: ETAPPE_ELEVATION_URL (Open-Meteo), SRTM tiles imported with `etappe elevation import N47E009.hgt …`, or start with ETAPPE_ONLINE=1";

impl Pipeline {
    /// Fills the missing heights of `points` in place and says where they came from.
    pub(crate) async fn fill_heights(&self, points: &mut [TrackPoint]) -> ElevationInfo {
        self.look_up_heights(points).await.0
    }

    /// [`Pipeline::fill_heights`] for work that can wait for its source (a detour): when the
    /// source failed in a way worth retrying and left points without a height, the job is
    /// tried again rather than record as unknown a climbing the source will give. What no
    /// source can give (none configured, none covering the points) stays unknown at once.
    pub(crate) async fn fill_heights_or_retry(
        &self,
        points: &mut [TrackPoint],
    ) -> Result<ElevationInfo, JobError> {
        match self.look_up_heights(points).await {
            (info, Some(failure)) if failure.retryable && info.missing_points > 0 => Err(
                JobError::Transient(format!("the elevation source failed: {failure}")),
            ),
            (info, _) => Ok(info),
        }
    }

    /// The look-up behind both: the report, and the source's failure when it failed.
    async fn look_up_heights(
        &self,
        points: &mut [TrackPoint],
    ) -> (ElevationInfo, Option<UpstreamError>) {
        let known = |points: &[TrackPoint]| {
            points
                .iter()
                .filter(|p| p.ele.is_some_and(f64::is_finite))
                .count()
        };
        let recorded = known(points);
        let mut sources = Vec::new();
        if recorded > 0 {
            sources.push("recorded".to_owned());
        }
        let mut failure = None;
        let plan = sample_plan(points, SAMPLE_SPACING_M);
        let source = self.upstreams.elevation_source().await;
        if !plan.is_empty()
            && let Some(source) = &source
        {
            let mut sampled: Vec<(usize, Option<f64>)> = Vec::with_capacity(plan.len());
            let mut answered: Vec<&'static str> = Vec::new();
            for chunk in plan.chunks(LOOKUP_CHUNK) {
                let asked: Vec<(f64, f64)> = chunk
                    .iter()
                    .filter_map(|&i| points.get(i).map(|p| (p.lat, p.lon)))
                    .collect();
                match source.heights_with_providers(&asked).await {
                    Ok(heights) => {
                        for provider in source.providers_used(&heights) {
                            if !answered.contains(&provider) {
                                answered.push(provider);
                            }
                        }
                        sampled.extend(
                            chunk
                                .iter()
                                .copied()
                                .zip(heights.into_iter().map(|h| h.map(|(height, _)| height))),
                        );
                    }
                    Err(error) => {
                        tracing::warn!(%error, "elevation lookup failed; climbing stays unknown where heights are missing");
                        failure = Some(error);
                        break;
                    }
                }
            }
            let report = fill(points, &sampled);
            if report.filled > 0 {
                sources.extend(answered.iter().map(|p| (*p).to_owned()));
            }
        }
        interpolate_short_gaps(points, SHORT_GAP_M);
        let missing_points = points.len() - known(points);
        let missing_reason = (missing_points > 0).then(|| match (&source, &failure) {
            (_, Some(failure)) => format!(
                "{missing_points} of {} points have no height: the elevation source failed ({failure}); the climbing of the days they touch is unknown",
                points.len()
            ),
            (Some(source), None) => format!(
                "{missing_points} of {} points have no height: the elevation sources ({}) do not cover them; the climbing of the days they touch is unknown; {HOW_TO_GET_HEIGHTS}",
                points.len(),
                source.providers().join(", ")
            ),
            (None, None) => format!(
                "the route has no elevation for {missing_points} of its {} points and no elevation source is configured, so its climbing is unknown; {HOW_TO_GET_HEIGHTS}",
                points.len()
            ),
        });
        let info = ElevationInfo {
            sources,
            missing_points,
            points: points.len(),
            missing_reason,
            paced_without_climbing: false,
        };
        (info, failure)
    }
}

impl Pipeline {
    /// [`Pipeline::fill_heights`] for each piece of a route (pieces are separate lines: no
    /// height is interpolated across the gap between two), the reports added up.
    pub(crate) async fn fill_track_heights(&self, tracks: &mut [Vec<TrackPoint>]) -> ElevationInfo {
        let mut total = ElevationInfo {
            sources: Vec::new(),
            missing_points: 0,
            points: 0,
            missing_reason: None,
            paced_without_climbing: false,
        };
        for track in tracks.iter_mut() {
            let info = self.fill_heights(track).await;
            for source in info.sources {
                if !total.sources.contains(&source) {
                    total.sources.push(source);
                }
            }
            total.missing_points += info.missing_points;
            total.points += info.points;
            total.missing_reason = total.missing_reason.or(info.missing_reason);
        }
        total
    }
}

/// Whether every point of `points` has a height (the climbing of a day over them is known).
pub(crate) fn heights_known(points: &[TrackPoint]) -> bool {
    points.iter().all(|p| p.ele.is_some_and(f64::is_finite))
}
