//! Where the pages of the route services are fetched from. A Komoot, Strava or RideWithGPS
//! link is recognised by its host name; the pages behind it are fetched from the service's
//! real origin, or, in tests, from a local server that answers in the service's recorded
//! format (so no test reaches the outside to exercise those parsers).

use url::Url;

/// A route service whose pages the workers fetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteService {
    Komoot,
    Strava,
    RideWithGps,
}

/// Replacement origins (`http://127.0.0.1:port`) per service; `None`: the real one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceOrigins {
    pub komoot: Option<String>,
    pub strava: Option<String>,
    pub ridewithgps: Option<String>,
}

impl SourceOrigins {
    /// Every service answered from `origin` (a test's local server).
    pub fn all_at(origin: &str) -> Self {
        Self {
            komoot: Some(origin.to_owned()),
            strava: Some(origin.to_owned()),
            ridewithgps: Some(origin.to_owned()),
        }
    }

    /// `url` with its scheme, host and port replaced by the service's replacement origin, if
    /// one is set; otherwise `url` unchanged.
    pub fn rebase(&self, service: RouteService, url: &str) -> String {
        let origin = match service {
            RouteService::Komoot => self.komoot.as_deref(),
            RouteService::Strava => self.strava.as_deref(),
            RouteService::RideWithGps => self.ridewithgps.as_deref(),
        };
        let (Some(origin), Ok(link)) = (origin.and_then(|o| Url::parse(o).ok()), Url::parse(url))
        else {
            return url.to_owned();
        };
        let path_and_query = &link[url::Position::BeforePath..url::Position::AfterQuery];
        origin
            .join(path_and_query)
            .map(String::from)
            .unwrap_or_else(|_| url.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replacement_origin_keeps_path_and_query() {
        let origins = SourceOrigins {
            komoot: Some("http://127.0.0.1:4000".into()),
            ..SourceOrigins::default()
        };
        assert_eq!(
            origins.rebase(
                RouteService::Komoot,
                "https://www.komoot.com/de-de/tour/123?ref=x"
            ),
            "http://127.0.0.1:4000/de-de/tour/123?ref=x"
        );
        assert_eq!(
            origins.rebase(RouteService::Strava, "https://www.strava.com/routes/42"),
            "https://www.strava.com/routes/42"
        );
    }
}
