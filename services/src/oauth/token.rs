//! The token endpoint (code exchange with PKCE, refresh with rotation), dynamic client
//! registration (RFC 7591, public clients only) and revocation (RFC 7009). Token answers
//! are never cached (`Cache-Control: no-store`).

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::{error_response, peer};
use etappe_app::App;
use etappe_app::authorization::{OAuthError, TokenParams};
use etappe_app::links::issuer;

/// The largest form or JSON body read.
const MAX_BODY: usize = 16 * 1024;

async fn body_of(request: Request) -> Result<(axum::http::request::Parts, Vec<u8>), OAuthError> {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY).await.map_err(|_| {
        OAuthError::InvalidRequest(format!("the body is larger than {MAX_BODY} bytes"))
    })?;
    Ok((parts, bytes.to_vec()))
}

fn form<T: serde::de::DeserializeOwned>(
    parts: &axum::http::request::Parts,
    body: &[u8],
) -> Result<T, OAuthError> {
    let form = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .starts_with("application/x-www-form-urlencoded")
        });
    if !form {
        return Err(OAuthError::InvalidRequest(
            "Content-Type: send application/x-www-form-urlencoded".into(),
        ));
    }
    serde_urlencoded::from_bytes(body).map_err(|e| {
        OAuthError::InvalidRequest(format!(
            "the form cannot be read: {}",
            etappe_domain::text::quote(&e.to_string())
        ))
    })
}

/// The scheme of the request's `Authorization` header, when the client tried to
/// authenticate with one (`Basic` with a secret it should not have).
fn auth_scheme(request: &Request) -> Option<String> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let scheme = value.split_whitespace().next()?;
    Some(
        if scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            scheme.to_owned()
        } else {
            "Basic".to_owned()
        },
    )
}

/// `POST /oauth/token`. An unknown client is `invalid_client`: 400 for a public client
/// (which authenticates with nothing), 401 with `WWW-Authenticate` naming the scheme when
/// it tried the `Authorization` header (RFC 6749 §5.2).
pub(super) async fn token(State(app): State<App>, request: Request) -> Response {
    let tried = auth_scheme(&request);
    let answer = async {
        app.authorization()
            .admit_token_request(&peer(request.extensions()))
            .await?;
        let public = issuer(&app);
        let (parts, body) = body_of(request).await?;
        let params: TokenParams = form(&parts, &body)?;
        app.authorization().token(&params, &public).await
    }
    .await;
    match answer {
        Ok(tokens) => (
            [
                (header::CACHE_CONTROL, "no-store"),
                (header::PRAGMA, "no-cache"),
            ],
            axum::Json(tokens),
        )
            .into_response(),
        Err(e @ OAuthError::InvalidClient(_)) if tried.is_some() => {
            let mut response = error_response(&e);
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            let challenge = format!(
                "{} realm=\"etappe\", error=\"invalid_client\"",
                tried.unwrap_or_default()
            );
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            response
        }
        Err(e) => error_response(&e),
    }
}

/// `POST /oauth/register` (JSON client metadata).
pub(super) async fn register(State(app): State<App>, request: Request) -> Response {
    let answer = async {
        app.authorization()
            .admit_registration(&peer(request.extensions()))
            .await?;
        let (_, body) = body_of(request).await?;
        let metadata: Value = serde_json::from_slice(&body).map_err(|_| {
            OAuthError::InvalidClientMetadata("the body is not JSON client metadata".into())
        })?;
        app.authorization().register(&metadata).await
    }
    .await;
    match answer {
        Ok(client) => (
            StatusCode::CREATED,
            [(header::CACHE_CONTROL, "no-store")],
            axum::Json(client),
        )
            .into_response(),
        Err(e) => error_response(&e),
    }
}

#[derive(serde::Deserialize)]
struct RevokeParams {
    token: Option<String>,
    client_id: Option<String>,
    #[allow(dead_code)]
    token_type_hint: Option<String>,
}

/// `POST /oauth/revoke`: 200 whether or not the token was known (RFC 7009 §2.2).
pub(super) async fn revoke(State(app): State<App>, request: Request) -> Response {
    let answer = async {
        app.authorization()
            .admit_token_request(&peer(request.extensions()))
            .await?;
        let (parts, body) = body_of(request).await?;
        let params: RevokeParams = form(&parts, &body)?;
        let token = params
            .token
            .filter(|t| !t.is_empty())
            .ok_or_else(|| OAuthError::InvalidRequest("token: missing".into()))?;
        app.authorization()
            .revoke(&token, params.client_id.as_deref())
            .await
    }
    .await;
    match answer {
        Ok(()) => (StatusCode::OK, [(header::CACHE_CONTROL, "no-store")]).into_response(),
        Err(e) => error_response(&e),
    }
}
