//! What the published OpenAPI document says about the agents routes (`/users/me/agents*`),
//! taken in by the REST document through the neutral `docs` module. The OAuth endpoints
//! themselves (`/oauth/*`, `/.well-known/*`) speak OAuth's wire format and are described by
//! the RFC 8414 metadata, not here.

use utoipa::OpenApi;

use super::schemas::AgentListSchema;

#[derive(OpenApi)]
#[openapi(
    paths(super::agents::list, super::agents::revoke),
    components(schemas(AgentListSchema, crate::openapi::views::AgentGrantSchema))
)]
struct AgentsDoc;

/// This transport's part of the document.
pub fn document() -> utoipa::openapi::OpenApi {
    AgentsDoc::openapi()
}
