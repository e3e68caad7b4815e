//! Where a trip's route comes from: a link a rider or an agent pasted. Only the link is judged
//! here (shape, scheme, which service it names); fetching it safely is the workers' job.

use serde::{Deserialize, Serialize};
use url::Url;

use super::FieldError;
use super::plan::RoutePlan;
use crate::text::quote;

/// The longest source link accepted.
pub const SOURCE_URL_MAX_CHARS: usize = 2048;

/// Which service a source link points to, which decides how the route is fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceType {
    KomootTour,
    KomootCollection,
    StravaRoute,
    RideWithGps,
    GpxLink,
    GpxUpload,
    /// Planned from places by the routing engine (see [`RoutePlan`]).
    Plan,
}

impl SourceType {
    /// Every source type.
    pub const ALL: [SourceType; 7] = [
        Self::KomootTour,
        Self::KomootCollection,
        Self::StravaRoute,
        Self::RideWithGps,
        Self::GpxLink,
        Self::GpxUpload,
        Self::Plan,
    ];
}

/// A checked source link, or for a planned trip the plan (with `url` a readable
/// `plan:` line, so every trip has one text saying where its route comes from).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceUrl {
    pub url: String,
    pub source_type: SourceType,
    /// Boxed: a plan is large, and every event carrying a source would carry its size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Box<RoutePlan>>,
}

impl SourceUrl {
    /// The source of a trip planned from places.
    pub fn planned(plan: RoutePlan) -> Self {
        Self {
            url: format!("plan:{}", plan.describe()),
            source_type: SourceType::Plan,
            plan: Some(Box::new(plan)),
        }
    }

    /// An uploaded file's source.
    pub fn uploaded(file_name: &str) -> Self {
        Self {
            url: format!("upload:{file_name}"),
            source_type: SourceType::GpxUpload,
            plan: None,
        }
    }
}

impl SourceUrl {
    /// Checks a link. `https` is required, except for hosts the operator allowed
    /// (`ETAPPE_ALLOWED_SOURCE_HOSTS`), which may also use `http` (local fixtures in tests).
    pub fn parse(raw: &str, allowed_hosts: &[String]) -> Result<Self, FieldError> {
        let field = "sourceUrl";
        if raw.chars().count() > SOURCE_URL_MAX_CHARS {
            return Err(FieldError::new(
                field,
                format!("sourceUrl must be at most {SOURCE_URL_MAX_CHARS} characters long"),
            ));
        }
        let url = Url::parse(raw.trim()).map_err(|_| {
            FieldError::new(
                field,
                format!(
                    "sourceUrl must be an https link to a Komoot tour or collection, a Strava route, a RideWithGPS route or a GPX file; got {}",
                    quote(raw)
                ),
            )
        })?;
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let allowed = allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(&host));
        let scheme_ok = url.scheme() == "https" || (url.scheme() == "http" && allowed);
        if !scheme_ok || host.is_empty() {
            return Err(FieldError::new(
                field,
                format!("sourceUrl must use https; got {}", quote(raw)),
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(FieldError::new(
                field,
                "sourceUrl must not carry a user name or password",
            ));
        }
        Ok(Self {
            source_type: classify(&url).map_err(|why| FieldError::new(field, why))?,
            url: url.to_string(),
            plan: None,
        })
    }
}

/// What to say of a map link that carries no track: plan from its places instead.
const PLAN_INSTEAD: &str = "plan the route from places instead (REST: \"plan\": {\"from\": \"Basel\", \"to\": \"Wien\"}; MCP: create_trip with from and to), or export the route as GPX and upload it";

/// Which service a link names, or why it is not a route Etappe can read: a link is judged at
/// the door, so a map page or a Komoot profile is refused at once rather than failing a
/// trip later.
fn classify(url: &Url) -> Result<SourceType, String> {
    let host = url
        .host_str()
        .unwrap_or_default()
        .trim_start_matches("www.");
    let segments: Vec<&str> = url
        .path_segments()
        .map(|s| s.filter(|p| !p.is_empty()).collect())
        .unwrap_or_default();
    // Komoot paths may carry a locale first: /de-de/tour/123.
    let after_locale = |kind: &str| {
        segments
            .windows(2)
            .any(|w| w[0] == kind && w[1].chars().all(|c| c.is_ascii_digit()))
    };
    let shown = quote(url.as_str());
    let is_google = host.split('.').any(|label| label == "google")
        && (host.starts_with("maps.") || segments.first() == Some(&"maps"));
    let is_map_page = is_google
        || host == "maps.app.goo.gl"
        || (host == "goo.gl" && segments.first() == Some(&"maps"))
        || host == "maps.apple.com"
        || (host == "bing.com" && segments.first() == Some(&"maps"))
        || (host.ends_with("openstreetmap.org") && segments.first() == Some(&"directions"));
    match host {
        "komoot.com" | "komoot.de" if after_locale("tour") => Ok(SourceType::KomootTour),
        "komoot.com" | "komoot.de" if after_locale("collection") => {
            Ok(SourceType::KomootCollection)
        }
        "komoot.com" | "komoot.de" => Err(format!(
            "sourceUrl names Komoot but not a tour (…/tour/123456) or a collection (…/collection/123456); got {shown}"
        )),
        "strava.com" if segments.first() == Some(&"routes") && segments.len() >= 2 => {
            Ok(SourceType::StravaRoute)
        }
        "strava.com" => Err(format!(
            "sourceUrl names Strava but not a route (…/routes/123456; activities and segments are not read); got {shown}"
        )),
        "ridewithgps.com" if segments.first() == Some(&"routes") && segments.len() >= 2 => {
            Ok(SourceType::RideWithGps)
        }
        "ridewithgps.com" => Err(format!(
            "sourceUrl names RideWithGPS but not a route (…/routes/123456); got {shown}"
        )),
        _ if is_map_page => Err(format!(
            "sourceUrl is a map page, not a route file: it carries no track Etappe can read; {PLAN_INSTEAD}; got {shown}"
        )),
        _ => Ok(SourceType::GpxLink),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(url: &str) -> SourceType {
        SourceUrl::parse(url, &[]).expect("valid link").source_type
    }

    #[test]
    fn known_services_are_recognised() {
        assert_eq!(
            kind("https://www.komoot.com/de-de/tour/123456"),
            SourceType::KomootTour
        );
        assert_eq!(
            kind("https://www.komoot.com/collection/987"),
            SourceType::KomootCollection
        );
        assert_eq!(
            kind("https://www.strava.com/routes/42"),
            SourceType::StravaRoute
        );
        assert_eq!(
            kind("https://ridewithgps.com/routes/77"),
            SourceType::RideWithGps
        );
        assert_eq!(
            kind("https://example.org/files/alps.gpx"),
            SourceType::GpxLink
        );
    }

    #[test]
    fn links_that_are_not_routes_are_refused_naming_what_is_accepted() {
        for (link, says) in [
            ("https://www.google.com/maps/dir/Basel/Wien", "map page"),
            (
                "https://maps.google.de/maps?saddr=Basel&daddr=Wien",
                "map page",
            ),
            ("https://maps.app.goo.gl/abc123", "map page"),
            (
                "https://www.openstreetmap.org/directions?route=47.5%2C7.5%3B48.2%2C16.3",
                "map page",
            ),
            ("https://www.komoot.com/user/12345", "not a tour"),
            ("https://www.komoot.com/de-de/smarttour/123", "not a tour"),
            ("https://www.strava.com/activities/42", "not a route"),
            ("https://ridewithgps.com/users/7", "not a route"),
        ] {
            let error = SourceUrl::parse(link, &[]).expect_err(link);
            assert_eq!(error.field, "sourceUrl");
            assert!(error.message.contains(says), "{link}: {}", error.message);
        }
        let map = SourceUrl::parse("https://www.google.com/maps/dir/Basel/Wien", &[])
            .expect_err("map page");
        assert!(map.message.contains("plan"), "{}", map.message);
        // A GPX file that happens to live on Google's storage is a file, not a map page.
        assert_eq!(
            kind("https://storage.googleapis.com/bucket/alps.gpx"),
            SourceType::GpxLink
        );
    }

    #[test]
    fn plain_http_is_refused_unless_the_host_is_allowed() {
        assert!(SourceUrl::parse("http://127.0.0.1:8000/a.gpx", &[]).is_err());
        assert!(SourceUrl::parse("http://127.0.0.1:8000/a.gpx", &["127.0.0.1".into()]).is_ok());
    }

    #[test]
    fn other_schemes_credentials_and_garbage_are_refused() {
        assert!(SourceUrl::parse("file:///etc/passwd", &[]).is_err());
        assert!(SourceUrl::parse("https://user:pw@example.org/a.gpx", &[]).is_err());
        let err = SourceUrl::parse("not a url at all", &[]).expect_err("garbage");
        assert_eq!(err.field, "sourceUrl");
        assert!(SourceUrl::parse(&format!("https://e.org/{}", "a".repeat(3000)), &[]).is_err());
    }
}
