//! The parts of the published OpenAPI document that come from transports other than REST:
//! a neutral module, so that the REST transport, which serves the document, does not import
//! them (the composition of the document is the only thing they share).

/// Every other transport's part of the document.
pub fn parts() -> Vec<utoipa::openapi::OpenApi> {
    vec![
        crate::web::openapi::document(),
        crate::oauth::openapi::document(),
    ]
}
