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
