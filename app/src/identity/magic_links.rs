//! Magic login links: a 256-bit token mailed to an address, stored as its digest. Spent by
//! one conditional UPDATE (`used_at IS NULL AND expires_at > now`), so of two replicas
//! redeeming the same link at once exactly one wins.

use chrono::{Duration, Utc};

use super::{Identity, IdentityError, random_secret, token_digest};

/// How long a spent or expired link row is kept (to tell "used" from "unknown" on a late
/// click) before it is swept.
const KEEP_SPENT: Duration = Duration::days(1);

/// What redeeming a link found (or, from [`Identity::peek_magic_link`], would find).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redeemed {
    /// The link was live and is now spent (peeked: is live): the address it was sent to.
    Email(String),
    /// It was used before.
    Used,
    /// It expired unused.
    Expired,
    /// No such link (or one swept long ago).
    Unknown,
}

impl Identity {
    /// Records a new link for `email` valid for `ttl`; answers the clear token, for the mail.
    pub async fn create_magic_link(
        &self,
        email: &str,
        ttl: Duration,
    ) -> Result<String, IdentityError> {
        let token = random_secret();
        let now = Utc::now();
        self.db
            .execute(
                "DELETE FROM magic_links WHERE expires_at < $1",
                &[(now - KEEP_SPENT).into()],
            )
            .await?;
        self.db
            .execute(
                "INSERT INTO magic_links (token_sha256, email, created_at, expires_at) VALUES ($1, $2, $3, $4)",
                &[
                    token_digest(&token).into(),
                    email.into(),
                    now.into(),
                    (now + ttl).into(),
                ],
            )
            .await?;
        Ok(token)
    }

    /// What redeeming `token` would find, spending nothing: the address a live link logs
    /// into (the page a link opens names it), or why it would be refused.
    pub async fn peek_magic_link(&self, token: &str) -> Result<Redeemed, IdentityError> {
        let token = token.trim();
        if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Redeemed::Unknown);
        }
        let digest = token_digest(token);
        let row = self
            .db
            .fetch_optional(
                "SELECT email, used_at IS NOT NULL AS used, expires_at > $1 AS live \
                 FROM magic_links WHERE token_sha256 = $2",
                &[Utc::now().into(), digest.into()],
            )
            .await?
            .map(|r| Ok::<_, IdentityError>((r.text("email")?, r.flag("used")?, r.flag("live")?)))
            .transpose()?;
        Ok(match row {
            Some((_, true, _)) => Redeemed::Used,
            Some((_, false, false)) => Redeemed::Expired,
            Some((email, false, true)) => Redeemed::Email(email),
            None => Redeemed::Unknown,
        })
    }

    /// Spends the link `token` if it is live; else says why not.
    pub async fn redeem_magic_link(&self, token: &str) -> Result<Redeemed, IdentityError> {
        let token = token.trim();
        if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Redeemed::Unknown);
        }
        let digest = token_digest(token);
        let spent = self
            .db
            .fetch_optional(
                "UPDATE magic_links SET used_at = $1 WHERE token_sha256 = $2 AND used_at IS NULL \
                 AND expires_at > $1 RETURNING email",
                &[Utc::now().into(), (&digest).into()],
            )
            .await?
            .map(|r| r.text("email"))
            .transpose()?;
        let row = match spent {
            Some(_) => None,
            None => self
                .db
                .fetch_optional(
                    "SELECT used_at IS NOT NULL AS used FROM magic_links WHERE token_sha256 = $1",
                    &[digest.into()],
                )
                .await?
                .map(|r| r.flag("used"))
                .transpose()?,
        };
        Ok(match (spent, row) {
            (Some(email), _) => Redeemed::Email(email),
            (None, Some(true)) => Redeemed::Used,
            (None, Some(false)) => Redeemed::Expired,
            (None, None) => Redeemed::Unknown,
        })
    }
}
