//! The public-Nominatim pacing under load: twenty concurrent searches must
//! reach the server at least a second apart. Takes about 19 seconds.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{Canned, http_client, serve};
use etappe_upstream::{MemoryCache, NominatimClient, RateLimiter};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_searches_arrive_at_least_a_second_apart() {
    let (base, recorder) = serve(Canned::json("[]")).await;
    let client = NominatimClient::new(
        http_client(),
        &base,
        "Etappe/0.1 (limiter test)",
        RateLimiter::nominatim_public(),
        Arc::new(MemoryCache::new(100)),
        Duration::from_secs(30),
    )
    .expect("valid configuration");

    let searches: Vec<_> = (0..20)
        .map(|n| {
            let client = client.clone();
            // Distinct queries, so the cache cannot spare a request.
            tokio::spawn(async move { client.search(&format!("village {n}"), 1).await })
        })
        .collect();
    for search in searches {
        search.await.expect("task").expect("search succeeds");
    }

    let mut arrivals: Vec<_> = recorder.requests().iter().map(|r| r.arrived).collect();
    assert_eq!(arrivals.len(), 20);
    arrivals.sort();
    for (n, pair) in arrivals.windows(2).enumerate() {
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(950), "gap {n} was {gap:?}");
    }
}
