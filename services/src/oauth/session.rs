//! Who is signed in, for the consent page: the person's session (the people transport's
//! cookie) and its synchronizer token. The one place this transport reads a session.

use axum::http::HeaderMap;
use etappe_domain::ids::UserId;

use crate::app::App;

/// A signed-in person.
#[derive(Clone, Debug)]
pub(super) struct SignedIn {
    pub user_id: UserId,
    /// The session's CSRF token, echoed in the consent form.
    pub csrf: String,
}

/// The person the request's session cookie stands for, if any.
pub(super) async fn signed_in(_app: &App, _headers: &HeaderMap) -> Option<SignedIn> {
    None
}

/// Whether a form post carries the session's CSRF token and comes from this origin.
pub(super) fn csrf_holds(
    _app: &App,
    _headers: &HeaderMap,
    _session: &SignedIn,
    _token: &str,
) -> bool {
    false
}

/// Where a person without a session goes to sign in, coming back to `next`.
pub(super) fn login_url(next: &str) -> String {
    let mut url = url::Url::parse("http://x/auth/login").expect("a constant URL");
    url.query_pairs_mut().append_pair("next", next);
    format!("/auth/login?{}", url.query().unwrap_or_default())
}
