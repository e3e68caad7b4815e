//! What the published OpenAPI document says about the account routes (`/users/me*`): their
//! operations (on the handlers in `account`) and the shapes they answer. The REST document
//! takes this part in through the neutral `docs` module, so neither transport imports the
//! other. The login routes (`/auth/*`, `/login`, `/`) are pages and form posts for browsers,
//! not an API, and stay out of it.

use utoipa::OpenApi;

use super::schemas::{
    AccountSchema, AuditEntrySchema, AuditPageSchema, CreateTokenSchema, CreatedTokenSchema,
    DeleteAccountSchema, DeletedSchema, SessionListSchema, SessionSchema, TokenListSchema,
    TokenSchema,
};

#[derive(OpenApi)]
#[openapi(
    paths(
        super::account::me,
        super::account::delete,
        super::account::sessions,
        super::account::revoke_session,
        super::account::tokens,
        super::account::create_token,
        super::account::revoke_token,
        super::account::export,
        super::account::audit,
    ),
    components(schemas(
        AccountSchema,
        SessionSchema,
        TokenSchema,
        SessionListSchema,
        TokenListSchema,
        CreateTokenSchema,
        CreatedTokenSchema,
        DeleteAccountSchema,
        DeletedSchema,
        AuditEntrySchema,
        AuditPageSchema,
    ))
)]
struct AccountDoc;

/// This transport's part of the document.
pub fn document() -> utoipa::openapi::OpenApi {
    AccountDoc::openapi()
}
