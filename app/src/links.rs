//! Public links: the one rule for the base URL a share link is built on, used by REST and
//! MCP alike, and the one limit on anonymous reads of a link, used by REST and the page.

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

/// Whether `host` (with or without a port) is loopback or listed. Only a plain host is
/// considered: a name of letters, digits, dots and hyphens, or a bracketed IPv6 address, and
/// at most a numeric port; anything else (`[::1]@evil.test`, a path, a user) is refused, since
/// the link is built on the whole text, not on the part that was checked.
fn admitted_host(listed: &[String], host: &str) -> bool {
    let Some(name) = plain_host_name(host) else {
        return false;
    };
    matches!(name.as_str(), "localhost" | "127.0.0.1" | "::1")
        || listed.iter().any(|l| {
            let l = l.to_ascii_lowercase();
            l == name || l == host.to_ascii_lowercase()
        })
}

/// The lower-cased name of a `Host` value that is a name or an address and an optional
/// numeric port, and nothing else.
fn plain_host_name(host: &str) -> Option<String> {
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => {
            let (address, after) = rest.split_once(']')?;
            let port = match after {
                "" => None,
                after => Some(after.strip_prefix(':')?),
            };
            let is_address = !address.is_empty()
                && address
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
            (is_address.then_some(address)?, port)
        }
        None => {
            let (name, port) = match host.rsplit_once(':') {
                Some((name, port)) => (name, Some(port)),
                None => (host, None),
            };
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
            (is_name.then_some(name)?, port)
        }
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    port_ok.then(|| name.to_ascii_lowercase())
}

/// Counts an anonymous read of the public link `code` from `visitor`, whichever way it is
/// read (the JSON, a file, the page): per address, so one client cannot flood, and per code,
/// so a link passed around cannot either.
pub async fn admit_visitor(
    app: &App,
    visitor: std::net::IpAddr,
    code: &str,
) -> Result<(), AppError> {
    let settings = &app.budgets.settings;
    let address = crate::budgets::key_of(&["visitor", &visitor.to_string()]);
    app.budgets
        .admit(&address, &[settings.share_per_address()])
        .await
        .map_err(AppError::RateLimited)?;
    let code = crate::budgets::key_of(&["code", code]);
    app.budgets
        .admit(&code, &[settings.share_per_code()])
        .await
        .map_err(AppError::RateLimited)
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
            "[::1]@evil.test",
            "[::1]:80@evil.test",
            "localhost@evil.test",
            "127.0.0.1:8080/evil",
            "[::1]evil.test",
            "[evil.test]",
            "localhost:",
            "localhost:80:80",
            "",
        ] {
            assert!(!admitted_host(&listed, refused), "{refused}");
        }
    }
}
