//! Users: an id and an e-mail address (lower-cased, unique), created on first login.

use chrono::{DateTime, Utc};
use etappe_domain::ids::UserId;

use super::sql::Val;
use super::{Identity, IdentityError};

/// A user as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRow {
    pub user_id: UserId,
    pub email: String,
    pub created_at: DateTime<Utc>,
}

/// The address as kept: trimmed and lower-cased, or why it is no address. The check is
/// deliberately loose (one `@`, something either side, no spaces, at most 180 characters):
/// the link sent to it is the real test. An address with a character that draws nothing
/// (a zero-width space, a variation selector…) is refused rather than cleaned: shown, it
/// would read as another account's address (`a\u{200b}@example.org` as `a@example.org`).
pub fn normalize_email(email: &str) -> Result<String, IdentityError> {
    let email = email.trim().to_ascii_lowercase();
    if email.chars().any(etappe_domain::text::is_format) {
        return Err(IdentityError::Invalid(
            "not an e-mail address: it holds invisible characters (zero-width, joiners, variation selectors or other format characters); type the address again".into(),
        ));
    }
    let valid = email.len() <= 180
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && !domain.is_empty() && !domain.contains('@')
        });
    if valid {
        Ok(email)
    } else {
        Err(IdentityError::Invalid(format!(
            "not an e-mail address: {email:?}"
        )))
    }
}

impl Identity {
    /// The user with this e-mail address, created if it does not exist.
    pub async fn ensure_user(&self, email: &str) -> Result<UserId, IdentityError> {
        let email = normalize_email(email)?;
        self.db
            .execute(
                "INSERT INTO users (user_id, email, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (email) DO NOTHING",
                &[UserId::new().into(), (&email).into(), Utc::now().into()],
            )
            .await?;
        let row = self
            .db
            .fetch_optional(
                "SELECT user_id FROM users WHERE email = $1",
                &[email.into()],
            )
            .await?
            .ok_or_else(|| IdentityError::Invalid("the user was not stored".into()))?;
        Ok(UserId(row.uuid("user_id")?))
    }

    /// The user with this id, if it exists.
    pub async fn user(&self, user: UserId) -> Result<Option<UserRow>, IdentityError> {
        self.db
            .fetch_optional(
                "SELECT email, created_at FROM users WHERE user_id = $1",
                &[user.into()],
            )
            .await?
            .map(|r| {
                Ok(UserRow {
                    user_id: user,
                    email: r.text("email")?,
                    created_at: r.time("created_at")?,
                })
            })
            .transpose()
    }

    /// The id of the user with this address, if there is one.
    pub async fn user_by_email(&self, email: &str) -> Result<Option<UserId>, IdentityError> {
        let email = normalize_email(email)?;
        self.db
            .fetch_optional(
                "SELECT user_id FROM users WHERE email = $1",
                &[email.into()],
            )
            .await?
            .map(|r| r.uuid("user_id").map(UserId))
            .transpose()
    }

    /// Deletes the user row; its tokens and sessions go with it (foreign keys cascade), and
    /// every login link issued to its address (used, unused or expired: each row holds the
    /// address), in one transaction, so neither a credential nor the address outlives it.
    /// Audit rows stay (PII-free).
    pub async fn delete_user(&self, user: UserId) -> Result<bool, IdentityError> {
        let id = [Val::from(user)];
        let touched = self
            .db
            .execute_together(&[
                (
                    "DELETE FROM magic_links WHERE email = (SELECT email FROM users WHERE user_id = $1)",
                    &id,
                ),
                ("DELETE FROM users WHERE user_id = $1", &id),
            ])
            .await?;
        Ok(touched.last().is_some_and(|&deleted| deleted > 0))
    }

    /// How many users exist (zero on a first start).
    pub async fn user_count(&self) -> Result<i64, IdentityError> {
        match self
            .db
            .fetch_optional("SELECT count(*) AS n FROM users", &[])
            .await?
        {
            Some(row) => row.count("n"),
            None => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_lower_cased_and_loosely_checked() {
        assert_eq!(
            normalize_email(" Rider@Example.ORG ").ok().as_deref(),
            Some("rider@example.org")
        );
        for bad in ["", "rider", "@example.org", "rider@", "a b@c.d", "a@b@c"] {
            assert!(normalize_email(bad).is_err(), "{bad:?}");
        }
        assert!(normalize_email(&format!("{}@x.y", "a".repeat(200))).is_err());
    }

    #[test]
    fn no_address_hides_a_character_that_draws_nothing() {
        let invisible: Vec<char> = (0..=0x10FFFF_u32)
            .filter_map(char::from_u32)
            .filter(|&c| etappe_domain::text::is_format(c))
            .collect();
        assert!(invisible.len() > 4000, "{}", invisible.len());
        for c in invisible {
            for address in [format!("a{c}@example.org"), format!("a@exa{c}mple.org")] {
                assert!(normalize_email(&address).is_err(), "U+{:04X}", c as u32);
            }
        }
        assert!(normalize_email("a@example.org").is_ok());
    }
}
