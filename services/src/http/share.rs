//! Share links: the owner opens, reads and revokes a trip's public link; anyone with the code
//! reads the trip, its days and its GPX/FIT files without a token. A revoked code answers 404
//! to everyone, exactly like one that never existed.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use etappe_domain::trip::ShareLink;
use serde_json::json;

use super::AppState;
use super::extract::{Caller, PeerAddress, Segments, TripPath};
use super::trips::file_response;
use crate::app::trips::ExportFormat;
use crate::app::views::PublicTrip;
use crate::app::{AppError, RequestContext};

/// The base of public links: `ETAPPE_PUBLIC_URL`, else the Host the request came to, if it
/// is one the server admits (loopback, or a host listed for `/mcp`). Any other Host is
/// refused: a link built on a Host an attacker chose would send its readers elsewhere.
pub(crate) fn base_url(state: &AppState, headers: &HeaderMap) -> Result<String, AppError> {
    if let Some(url) = &state.public_url {
        return Ok(url.trim_end_matches('/').to_owned());
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    if admitted_host(&state.mcp.allowed_hosts, host) {
        Ok(format!("http://{host}"))
    } else {
        Err(AppError::BadHeader(format!(
            "share links are built on the host the server answers to, and Host {} is not one: set ETAPPE_PUBLIC_URL (or list the host in ETAPPE_MCP_ALLOWED_HOSTS)",
            etappe_domain::text::quote(host)
        )))
    }
}

/// Whether `host` (with or without a port) is loopback or listed.
fn admitted_host(listed: &[String], host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                name
            } else {
                host
            }
        }),
    };
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "localhost" | "127.0.0.1" | "::1")
        || listed.iter().any(|l| {
            let l = l.to_ascii_lowercase();
            l == name || l == host.to_ascii_lowercase()
        })
}

fn link_body(
    state: &AppState,
    headers: &HeaderMap,
    link: &ShareLink,
) -> Result<serde_json::Value, AppError> {
    Ok(json!({
        "url": format!("{}/s/{}", base_url(state, headers)?, link.code),
        "shortCode": link.code,
        "createdAt": link.created_at,
    }))
}

/// `GET /trips/{id}/share`: the active link, or 404 when there is none.
pub(super) async fn get(
    State(state): State<AppState>,
    Caller(principal): Caller,
    headers: HeaderMap,
    TripPath(trip_id): TripPath,
) -> Result<Response, AppError> {
    let link = state
        .trips
        .share_link(&principal, trip_id)
        .await?
        .ok_or(AppError::NotFound)?;
    Ok(Json(link_body(&state, &headers, &link)?).into_response())
}

/// `POST /trips/{id}/share`: 201 with a new link, 200 with the one already open.
pub(super) async fn create(
    State(state): State<AppState>,
    Caller(principal): Caller,
    context: RequestContext,
    headers: HeaderMap,
    TripPath(trip_id): TripPath,
) -> Result<Response, AppError> {
    let (link, created) = state.trips.share(&principal, trip_id, &context).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(link_body(&state, &headers, &link)?)).into_response())
}

/// `DELETE /trips/{id}/share`: 204; the code stops resolving for everyone.
pub(super) async fn revoke(
    State(state): State<AppState>,
    Caller(principal): Caller,
    context: RequestContext,
    TripPath(trip_id): TripPath,
) -> Result<StatusCode, AppError> {
    state.trips.unshare(&principal, trip_id, &context).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Counts an anonymous read of `code` from `visitor`: per address, so one client cannot
/// flood, and per code, so a link passed around cannot either.
async fn admit_visitor(state: &AppState, visitor: PeerAddress, code: &str) -> Result<(), AppError> {
    let settings = &state.budgets.settings;
    let address = crate::budgets::key_of(&["visitor", &visitor.0.to_string()]);
    state
        .budgets
        .admit(&address, &[settings.share_per_address()])
        .await
        .map_err(AppError::RateLimited)?;
    let code = crate::budgets::key_of(&["code", code]);
    state
        .budgets
        .admit(&code, &[settings.share_per_code()])
        .await
        .map_err(AppError::RateLimited)
}

/// `GET /s/{code}` (the trip), `/s/{code}.gpx`, `/s/{code}.fit`: anonymous.
pub(super) async fn public(
    State(state): State<AppState>,
    visitor: PeerAddress,
    headers: HeaderMap,
    Segments(raw): Segments<String>,
) -> Result<Response, AppError> {
    let (code, format) = match raw.rsplit_once('.') {
        Some((code, "gpx")) => (code, Some(ExportFormat::Gpx)),
        Some((code, "fit")) => (code, Some(ExportFormat::Fit)),
        _ => (raw.as_str(), None),
    };
    admit_visitor(&state, visitor, code).await?;
    let view = state.trips.shared_view(code).await?;
    match format {
        Some(format) => Ok(file_response(
            state.trips.cached_export(&view, None, format).await?,
            &headers,
        )),
        None => Ok(Json(PublicTrip::of(&view)).into_response()),
    }
}

/// `GET /s/{code}/stages/{stageId}`: one day of a shared trip.
pub(super) async fn public_stage(
    State(state): State<AppState>,
    visitor: PeerAddress,
    Segments((code, stage)): Segments<(String, String)>,
) -> Result<Response, AppError> {
    admit_visitor(&state, visitor, &code).await?;
    let view = state.trips.shared_view(&code).await?;
    let stage_id = uuid::Uuid::parse_str(&stage).map_err(|_| AppError::NotFound)?;
    let stage = PublicTrip::stage(&view, stage_id).ok_or(AppError::NotFound)?;
    Ok(Json(stage).into_response())
}

/// `GET /s/{code}/route`: the shared trip's lines, anonymous; 304 when unchanged.
pub(super) async fn public_route(
    State(state): State<AppState>,
    visitor: PeerAddress,
    Segments(code): Segments<String>,
    headers: axum::http::HeaderMap,
) -> Result<Response, AppError> {
    admit_visitor(&state, visitor, &code).await?;
    let view = state.trips.shared_view(&code).await?;
    let lines = state.trips.route_lines_of(&view).await?;
    Ok(super::stages::route_response(&lines, &headers))
}

#[cfg(test)]
mod tests {
    use super::admitted_host;

    #[test]
    fn only_loopback_and_listed_hosts_make_share_links() {
        let listed = vec!["trips.example.test".to_owned()];
        for ok in [
            "localhost",
            "127.0.0.1:8080",
            "[::1]:8080",
            "trips.example.test",
            "TRIPS.example.test:443",
        ] {
            assert!(admitted_host(&listed, ok), "{ok}");
        }
        for refused in [
            "evil.test",
            "evil.test:8080",
            "127.0.0.1.evil.test",
            "localhost.evil.test",
        ] {
            assert!(!admitted_host(&listed, refused), "{refused}");
        }
    }
}
