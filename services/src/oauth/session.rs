//! Who is signed in, for the consent page: the person's session (the people transport's
//! cookie, read through `crate::auth`) and its synchronizer token. The one place this
//! transport reads a session.

use axum::http::HeaderMap;
use etappe_domain::ids::UserId;

use etappe_app::App;
use etappe_app::identity::SessionInfo;

/// A signed-in person.
#[derive(Clone, Debug)]
pub(super) struct SignedIn {
    pub user_id: UserId,
    /// The session's CSRF token, echoed in the consent form.
    pub csrf: String,
    session: SessionInfo,
}

/// The person the request's session cookie stands for, if any.
pub(super) async fn signed_in(app: &App, headers: &HeaderMap) -> Option<SignedIn> {
    let (session, _) = crate::auth::session_of(app.accounts(), headers)
        .await
        .ok()
        .flatten()?;
    Some(SignedIn {
        user_id: session.user_id,
        csrf: session.csrf_token.clone(),
        session,
    })
}

/// Whether a form post comes from this origin and carries the session's CSRF token.
pub(super) fn csrf_holds(app: &App, headers: &HeaderMap, session: &SignedIn, token: &str) -> bool {
    crate::auth::check_cookie_write(headers, &app.accounts().web, &session.session, Some(token))
        .is_ok()
}

/// Where a person without a session goes to sign in, coming back to `next`.
pub(super) fn login_url(next: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("next", next)
        .finish();
    format!("/login?{query}")
}
