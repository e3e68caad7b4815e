//! The shapes the account routes answer and the problems they may answer, for the OpenAPI
//! document: the handlers (`account`) name them in their annotations, and the document
//! (`openapi`) lists them, so neither of those two imports the other.

use serde_json::Value;

use crate::openapi::build::{
    boolean, component, count, date_time, doc, list, nullable, object, opt, req, text, uuid, words,
};
use crate::openapi::shape;

crate::problem::documented::problems! {
    [pub(super)]
    AccountBadRequest = 400, "Unknown field or query parameter, malformed body";
    AccountUnauthorized = 401, "No valid token or session";
    AccountForbidden = 403, "A cookie write without our Origin and the X-CSRF-Token (csrf_refused), or an operation that needs a session (session_required)";
    AccountNotFound = 404, "No such session or token of yours";
    AccountInvalid = 422, "Invalid value (named in errors)";
    AccountRateLimited = 429, "Over a budget: reads and changes per credential a minute";
}

/// The scopes a personal access token may hold.
fn scopes() -> Value {
    list(words(["trips:read", "trips:write"]))
}

shape!(pub(super) SessionSchema = "Session", object(
    "A browser session.",
    vec![
        req("id", uuid()),
        req("createdAt", date_time()),
        req("lastSeenAt", date_time()),
        req("expiresAt", doc(date_time(), "Slides with use (30 days by default).")),
        req("userAgent", doc(text(), "The browser's User-Agent, cut to 120 characters.")),
    ],
));

shape!(pub(super) TokenSchema = "AccessToken", object(
    "A personal access token as listed (never its value).",
    vec![
        req("id", uuid()),
        req("label", text()),
        req("scopes", scopes()),
        req("createdAt", date_time()),
        opt("revokedAt", nullable(date_time())),
    ],
));

shape!(pub(super) AccountSchema = "Account", object(
    "The account.",
    vec![
        req("id", uuid()),
        req("email", text()),
        req("createdAt", date_time()),
        req("sessions", doc(list(component("Session")), "Live sessions, newest first.")),
        req(
            "tokens",
            doc(
                list(component("AccessToken")),
                "Personal access tokens, newest first, revoked ones included.",
            ),
        ),
        req(
            "agents",
            doc(
                serde_json::json!({"type": "array", "items": {}}),
                "The agents (OAuth clients) authorized.",
            ),
        ),
        opt(
            "csrfToken",
            doc(
                text(),
                "The session's synchronizer token: send it as X-CSRF-Token on cookie writes (absent with a bearer token).",
            ),
        ),
        opt(
            "currentSession",
            doc(uuid(), "The session of this request (absent with a bearer token)."),
        ),
    ],
));

shape!(pub(super) SessionListSchema = "SessionList", object(
    "The live sessions.",
    vec![
        req("items", list(component("Session"))),
        opt(
            "current",
            doc(nullable(uuid()), "The session of this request (null with a bearer token)."),
        ),
    ],
));

shape!(pub(super) TokenListSchema = "AccessTokenList", object(
    "The tokens.",
    vec![req("items", list(component("AccessToken")))],
));

shape!(pub(super) CreateTokenSchema = "CreateAccessToken", object(
    "`POST /users/me/tokens`.",
    vec![
        opt(
            "label",
            doc(
                serde_json::json!({"type": "string", "maxLength": 80}),
                "At most 80 characters.",
            ),
        ),
        opt("scopes", doc(scopes(), "Default: both.")),
    ],
));

shape!(pub(super) CreatedTokenSchema = "CreatedAccessToken", object(
    "A token just made: its value is shown this once.",
    vec![
        req("id", uuid()),
        req(
            "token",
            doc(text(), "`etp_` and 64 hex digits: send as Authorization: Bearer."),
        ),
        req("label", text()),
        req("scopes", scopes()),
    ],
));

shape!(pub(super) DeleteAccountSchema = "DeleteAccount", object(
    "`DELETE /users/me`.",
    vec![req(
        "confirm",
        doc(text(), "The account's e-mail address, as confirmation."),
    )],
));

shape!(pub(super) DeletedSchema = "AccountDeleted", object(
    "An account deleted.",
    vec![req("deleted", boolean()), req("tripsDeleted", count(0))],
));

shape!(pub(super) AuditEntrySchema = "AuditEntry", object(
    "One audit row.",
    vec![
        req("id", uuid()),
        req("at", date_time()),
        req(
            "kind",
            doc(
                text(),
                "login, logout, session_revoked, token_created, token_revoked, export, account_deleted.",
            ),
        ),
        req("detail", text()),
    ],
));

shape!(pub(super) AuditPageSchema = "AuditPage", object(
    "A page of the audit trail, newest first.",
    vec![
        req("items", list(component("AuditEntry"))),
        req("total", count(0)),
        req("limit", count(0)),
        req("offset", count(0)),
    ],
));
