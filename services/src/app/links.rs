//! Where public links point: the one rule for the base URL a share link is built on, used by
//! REST and MCP alike.

use super::{App, AppError};

/// The base of public links: `ETAPPE_PUBLIC_URL`, else the `host` the request came to, if it
/// is one the server admits (loopback, or a host listed for `/mcp`). Any other Host is
/// refused: a link built on a Host an attacker chose would send its readers elsewhere.
pub fn base_url(app: &App, host: Option<&str>) -> Result<String, AppError> {
    if let Some(url) = &app.public_url {
        return Ok(url.trim_end_matches('/').to_owned());
    }
    let host = host.unwrap_or("localhost");
    if admitted_host(&app.hosts.allowed_hosts, host) {
        Ok(format!("http://{host}"))
    } else {
        Err(AppError::BadHeader(format!(
            "share links are built on the host the server answers to, and Host {} is not one: set ETAPPE_PUBLIC_URL (or list the host in ETAPPE_MCP_ALLOWED_HOSTS)",
            etappe_domain::text::quote(host)
        )))
    }
}

/// The server's own base URL for OAuth (issuer, resource, metadata addresses): the public
/// base (`ETAPPE_PUBLIC_URL`, or the bound loopback address), never the request's Host, so
/// that the issuer and the audience of every token are one string on every replica.
pub fn issuer(app: &App) -> String {
    app.accounts.web.base.trim_end_matches('/').to_owned()
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
