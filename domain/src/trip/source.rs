//! Where a trip's route comes from: a link a rider or an agent pasted. Only the link is judged
//! here (shape, scheme, which service it names); fetching it safely is the workers' job.

use serde::{Deserialize, Serialize};
use url::Url;

use super::FieldError;
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
}

/// A checked source link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceUrl {
    pub url: String,
    pub source_type: SourceType,
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
            source_type: classify(&url),
            url: url.to_string(),
        })
    }
}

fn classify(url: &Url) -> SourceType {
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
    match host {
        "komoot.com" | "komoot.de" if after_locale("tour") => SourceType::KomootTour,
        "komoot.com" | "komoot.de" if after_locale("collection") => SourceType::KomootCollection,
        "strava.com" if segments.first() == Some(&"routes") && segments.len() >= 2 => {
            SourceType::StravaRoute
        }
        "ridewithgps.com" if segments.first() == Some(&"routes") && segments.len() >= 2 => {
            SourceType::RideWithGps
        }
        _ => SourceType::GpxLink,
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
