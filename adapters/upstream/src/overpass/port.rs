//! Overpass as an [`OsmFeatures`] source (placeholder until the corridor queries land).

use async_trait::async_trait;

use super::{Accommodation, AccommodationType, OverpassClient};
use crate::error::{Upstream, UpstreamError};
use crate::features::{OsmFeatures, RouteFeatures, SearchPlan};

#[async_trait]
impl OsmFeatures for OverpassClient {
    fn source(&self) -> &'static str {
        "overpass"
    }

    async fn along(&self, _plan: &SearchPlan) -> Result<RouteFeatures, UpstreamError> {
        Err(UpstreamError::new(
            Upstream::Overpass,
            "corridor queries are not built yet",
            false,
        ))
    }

    async fn accommodations_near(
        &self,
        lat: f64,
        lon: f64,
        radius_m: u32,
        types: &[AccommodationType],
    ) -> Result<Vec<Accommodation>, UpstreamError> {
        OverpassClient::accommodations_near(self, lat, lon, radius_m, types).await
    }
}
