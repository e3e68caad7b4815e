//! What the published OpenAPI document says about the agents routes (`/users/me/agents*`),
//! taken in by the REST document through the neutral `docs` module. The OAuth endpoints
//! themselves (`/oauth/*`, `/.well-known/*`) speak OAuth's wire format and are described by
//! the RFC 8414 metadata, not here.

use utoipa::{OpenApi, ToSchema};

crate::problem::documented::problems! {
    [pub(super)]
    AgentsUnauthorized = 401, "No valid personal access token or session (an agent's OAuth token is refused here)";
    AgentsForbidden = 403, "A cookie write without our Origin and the X-CSRF-Token (csrf_refused)";
    AgentsNotFound = 404, "No live grant of yours with this id";
    AgentsRateLimited = 429, "Over a budget: reads and changes per credential a minute";
}

/// The agents a person authorized.
#[derive(ToSchema)]
#[schema(as = AgentList)]
#[allow(dead_code)]
pub(super) struct AgentListSchema {
    items: Vec<crate::app::authorization::AgentGrant>,
}

#[derive(OpenApi)]
#[openapi(
    paths(super::agents::list, super::agents::revoke),
    components(schemas(AgentListSchema, crate::app::authorization::AgentGrant))
)]
struct AgentsDoc;

/// This transport's part of the document.
pub fn document() -> utoipa::openapi::OpenApi {
    AgentsDoc::openapi()
}
