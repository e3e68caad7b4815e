//! Who is calling: the one reading of a bearer credential, shared by REST, the event stream
//! and MCP, so the three cannot disagree on what a credential looks like (the scheme is
//! case-insensitive, RFC 9110 §11.1; the token is trimmed; an empty one is none).

use axum::http::{HeaderMap, header};

use crate::identity::{Identity, IdentityError, Principal};

/// The bearer token of `Authorization`, if the header carries one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// A caller whose credential holds.
#[derive(Clone, Debug)]
pub struct Authenticated {
    pub principal: Principal,
    /// A short digest of the credential: the key its budgets and confirmations are kept
    /// under (each agent gets its own token, so each its own budget).
    pub credential: String,
}

/// The caller `token` stands for, or `None` when it is no live credential.
pub async fn authenticate(
    identity: &Identity,
    token: &str,
) -> Result<Option<Authenticated>, IdentityError> {
    Ok(identity
        .authenticate(token)
        .await?
        .map(|principal| Authenticated {
            principal,
            credential: crate::budgets::credential_key(token),
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            value.parse().expect("a header value"),
        );
        headers
    }

    #[test]
    fn the_scheme_is_read_without_regard_to_case_and_the_token_trimmed() {
        for value in [
            "Bearer etp_x",
            "bearer etp_x",
            "BEARER  etp_x ",
            "  Bearer etp_x",
        ] {
            assert_eq!(bearer_token(&headers(value)), Some("etp_x"), "{value:?}");
        }
    }

    #[test]
    fn other_schemes_and_empty_tokens_are_no_bearer_token() {
        for value in [
            "Basic dXNlcg==",
            "Bearer",
            "Bearer   ",
            "Bearertoken",
            "etp_x",
        ] {
            assert_eq!(bearer_token(&headers(value)), None, "{value:?}");
        }
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }
}
