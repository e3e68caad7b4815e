//! Everything along a route through Overpass: the [`OsmFeatures`] port for
//! [`OverpassClient`]. The plan becomes a handful of queries ([`corridor_query`]), sent one
//! at a time through the client's gate, each answer cached for a day under the hash of its
//! query, then merged with duplicates removed ([`corridor_parse`]).
//!
//! Any failed query fails the whole answer: a missing chunk would read as "no water for
//! 150 km". The chunks answered before the failure stay cached, so a retry costs only the
//! rest.
//!
//! [`corridor_query`]: super::corridor_query
//! [`corridor_parse`]: super::corridor_parse

use async_trait::async_trait;

use super::corridor_parse::{ChunkFound, Merged, parse_chunk};
use super::corridor_query::{CorridorQuery, plan_queries};
use super::{Accommodation, BedSearch, CACHE_TTL, OverpassClient};
use crate::cache;
use crate::error::{Upstream, UpstreamError};
use crate::features::{OsmFeatures, RouteFeatures, SearchPlan};

const UPSTREAM: Upstream = Upstream::Overpass;

impl OverpassClient {
    /// Every point family, road way and ferry line the plan asks for (see
    /// [`OsmFeatures::along`]); `requests` counts the queries actually sent (cached
    /// chunks cost none). Overpass covers the world, so no day is uncovered.
    pub async fn along(&self, plan: &SearchPlan) -> Result<RouteFeatures, UpstreamError> {
        let queries =
            plan_queries(plan).map_err(|bad| UpstreamError::invalid_request(UPSTREAM, bad))?;
        let mut merged = Merged::default();
        let mut requests = 0;
        for query in &queries {
            let (chunk, sent) = self.corridor_chunk(query).await.map_err(|error| {
                UpstreamError::new(
                    UPSTREAM,
                    format!("{} ({})", error.failure, query.label),
                    error.retryable,
                )
            })?;
            requests += u32::from(sent);
            merged.add(&chunk);
        }
        Ok(merged.finish(requests))
    }

    /// One query's answer, from the cache or from Overpass; `true` when it was sent.
    async fn corridor_chunk(
        &self,
        query: &CorridorQuery,
    ) -> Result<(ChunkFound, bool), UpstreamError> {
        if let Some(found) = cache::get_json(self.http.cache.as_ref(), &query.cache_key).await {
            return Ok((found, false));
        }
        let Ok(_slot) = self.one_at_a_time.acquire().await else {
            return Err(UpstreamError::new(
                UPSTREAM,
                "client is shutting down",
                true,
            ));
        };
        // Another caller may have fetched the same chunk while we queued.
        if let Some(found) = cache::get_json(self.http.cache.as_ref(), &query.cache_key).await {
            return Ok((found, false));
        }
        tracing::debug!(label = %query.label, bytes = query.ql.len(), "overpass corridor query");
        let body = self.interpret(UPSTREAM, &query.ql).await?;
        let found = parse_chunk(&body)?;
        cache::put_json(
            self.http.cache.as_ref(),
            &query.cache_key,
            &found,
            CACHE_TTL,
        )
        .await;
        Ok((found, true))
    }
}

#[async_trait]
impl OsmFeatures for OverpassClient {
    fn source(&self) -> &'static str {
        "overpass"
    }

    async fn along(&self, plan: &SearchPlan) -> Result<RouteFeatures, UpstreamError> {
        OverpassClient::along(self, plan).await
    }

    async fn probe(&self) -> Result<(), UpstreamError> {
        OverpassClient::probe(self).await
    }

    async fn accommodations_near(
        &self,
        search: BedSearch<'_>,
    ) -> Result<Vec<Accommodation>, UpstreamError> {
        OverpassClient::accommodations_near(self, search).await
    }
}
