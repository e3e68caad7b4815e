//! The single error type shared by every parser of the crate, so the web
//! layer maps one enum to user-facing messages whatever the route's origin.

use thiserror::Error;

/// Why a route payload could not be turned into points.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RouteError {
    /// The input is not XML at all, or its root element is not `gpx`.
    #[error("not a GPX document")]
    NotGpx,
    /// The document started as GPX but is truncated or not well-formed XML.
    /// `position` is a byte offset into the original input (BOM included).
    #[error("malformed XML near byte {position}")]
    Malformed { position: u64 },
    /// The document contains no point at all.
    #[error("the route contains no point")]
    Empty,
    /// Points were present but every one of them had an unusable latitude or
    /// longitude (missing, NaN, |lat| > 90 or |lon| > 180). Points with bad
    /// coordinates are skipped silently as long as at least one good point
    /// remains; this error is only raised when none remains.
    #[error("all {rejected} points have invalid coordinates")]
    InvalidCoordinate { rejected: usize },
    /// The document carries a `<!DOCTYPE`. GPX never needs one, and refusing
    /// it outright removes any entity-expansion attack surface.
    #[error("DOCTYPE declarations are not accepted")]
    DoctypeRefused,
    /// The route has no length: a single point, or all its points at one
    /// place. It would only make a 0 km day.
    #[error("the route has no length: its {points} points are all at one place")]
    NoDistance { points: usize },
    /// A route-service payload (Komoot page, RideWithGPS JSON) does not have
    /// the documented shape.
    #[error("unexpected payload: {0}")]
    UnexpectedPayload(String),
}

/// Where the route came from, so that its error speaks of what the rider gave: a link or a
/// file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteOrigin {
    /// A link the server fetched (a GPX link, a route service's page or export).
    Link,
    /// A file the rider uploaded.
    File,
}

impl RouteError {
    /// This error in words for the rider (a trip's failure, an upload's refusal).
    pub fn for_rider(&self, origin: RouteOrigin) -> String {
        match self {
            Self::NotGpx => match origin {
                RouteOrigin::Link => "the link does not lead to a GPX file".into(),
                RouteOrigin::File => "the file is not a GPX file".into(),
            },
            Self::Malformed { position } => {
                format!("the GPX file is truncated or malformed (near byte {position})")
            }
            Self::Empty => "the route is empty: it has no track point".into(),
            Self::InvalidCoordinate { rejected } => {
                format!("none of the route's {rejected} points has valid coordinates")
            }
            Self::DoctypeRefused => "the GPX file declares a DOCTYPE, which is refused".into(),
            Self::NoDistance { points } => format!(
                "the route has no length: its {points} points are all at one place; \
                 give a track or route that moves"
            ),
            Self::UnexpectedPayload(what) => match origin {
                RouteOrigin::Link => {
                    format!("the route service answered something unexpected: {what}")
                }
                RouteOrigin::File => format!("the file is not a route this server reads: {what}"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_never_called_a_link() {
        let all = [
            RouteError::NotGpx,
            RouteError::Malformed { position: 3 },
            RouteError::Empty,
            RouteError::InvalidCoordinate { rejected: 2 },
            RouteError::DoctypeRefused,
            RouteError::NoDistance { points: 1 },
            RouteError::UnexpectedPayload("x".into()),
        ];
        for error in &all {
            let said = error.for_rider(RouteOrigin::File);
            assert!(!said.contains("link"), "{said}");
            assert!(!said.contains("service"), "{said}");
        }
        assert!(
            RouteError::NotGpx
                .for_rider(RouteOrigin::Link)
                .contains("link")
        );
    }
}
