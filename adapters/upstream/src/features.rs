//! The port the OpenStreetMap analysis reads through: everything along a route that a
//! [`SearchPlan`] asks for, and the places to sleep around a point. Two adapters fill it —
//! Overpass ([`crate::OverpassClient`]) and the local index built by `etappe osm import`
//! (crate `etappe-osm-index`) — and both classify tags with the same
//! [`etappe_analysis::osm::FeatureKind::classify`], so the rules cannot tell them apart.
//!
//! A failure is an [`UpstreamError`], never an empty answer: "found nothing" would raise
//! false "no water for 80 km" alerts.

use std::fmt;

use async_trait::async_trait;
pub use etappe_analysis::osm::{RouteFeatures, SearchPlan};

use crate::error::UpstreamError;
use crate::overpass::{Accommodation, BedSearch};

/// A named place a source holds (a village, a station, a hut…), as a name lookup finds it.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedPlace {
    /// Its own name (third-party text: cleaned where it is shown).
    pub name: String,
    /// What it is: "village", "station", "alpine_hut", "peak"…
    pub kind: String,
    pub lat: f64,
    pub lon: f64,
    /// How much it weighs among places of one name, 0–1 (a town above a hamlet).
    pub weight: f64,
    /// Whether one of its names folds to the query (else one begins with it).
    pub exact: bool,
}

/// A source of OpenStreetMap features along a route.
#[async_trait]
pub trait OsmFeatures: Send + Sync + fmt::Debug {
    /// Short name for statuses and logs ("overpass", "local index").
    fn source(&self) -> &'static str;

    /// Whether the source can answer now: a local index with no extract imported cannot.
    async fn is_loaded(&self) -> bool {
        true
    }

    /// A cheap check that the source answers, for readiness reports (by default: it is
    /// in this process, so it does).
    async fn probe(&self) -> Result<(), UpstreamError> {
        Ok(())
    }

    /// Named places whose name, or one of their other names, folds to `query` (exact) or
    /// begins like it; exact ones first, heaviest first, at most `limit`. A source that
    /// holds no names (Overpass, asked per route) answers none.
    async fn places_named(
        &self,
        _query: &str,
        _limit: usize,
    ) -> Result<Vec<NamedPlace>, UpstreamError> {
        Ok(Vec::new())
    }

    /// The areas it holds, as (south, west, north, east) boxes; none when it is not bound
    /// to an area (Overpass: the whole planet).
    async fn coverage(&self) -> Vec<[f64; 4]> {
        Vec::new()
    }

    /// Everything the plan asks for; days the source does not cover are listed in
    /// [`RouteFeatures::uncovered_days`].
    async fn along(&self, plan: &SearchPlan) -> Result<RouteFeatures, UpstreamError>;

    /// Places to sleep of the given types within `radius_m` of a point, best described and
    /// nearest first, priced by type (see [`crate::overpass`]).
    async fn accommodations_near(
        &self,
        search: BedSearch<'_>,
    ) -> Result<Vec<Accommodation>, UpstreamError>;
}
