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
