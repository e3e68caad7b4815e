//! Application services: the one place a command is authorized, parsed, decided and
//! appended, and a read is assembled. Transports call these and only translate.

mod error;
pub mod exports;
pub mod places;
pub mod schema;
pub mod stages;
pub mod trips;
pub mod views;

pub use self::error::AppError;

use uuid::Uuid;

/// What a transport knows about the request that reaches a service.
#[derive(Clone, Debug, Default)]
pub struct RequestContext {
    /// The request id (`X-Request-Id`), carried into event metadata as the correlation id.
    pub correlation_id: Option<Uuid>,
    /// The W3C `traceparent` of the request's span.
    pub traceparent: Option<String>,
}
