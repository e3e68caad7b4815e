//! The shapes and problems of the agents routes, for the OpenAPI document: the handlers
//! (`agents`) name them in their annotations and the document (`openapi`) lists them, so
//! neither of those two imports the other.

crate::problem::documented::problems! {
    [pub(super)]
    AgentsUnauthorized = 401, "No valid personal access token or session (an agent's OAuth token is refused here)";
    AgentsForbidden = 403, "A cookie write without our Origin and the X-CSRF-Token (csrf_refused)";
    AgentsNotFound = 404, "No live grant of yours with this id";
    AgentsRateLimited = 429, "Over a budget: reads and changes per credential a minute";
}

crate::openapi::shape!(pub(super) AgentListSchema = "AgentList", {
    use crate::openapi::build::{component, list, object, req};
    object(
        "The agents a person authorized.",
        vec![req("items", list(component("AgentGrant")))],
    )
});
