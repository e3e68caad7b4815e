//! Users: an id and an e-mail address (lower-cased, unique), created on first login.

use chrono::{DateTime, Utc};
use etappe_domain::ids::UserId;
use sqlx::Row;
use uuid::Uuid;

use super::{
    Identity, IdentityDb, IdentityError, parse_sqlite_time, parse_sqlite_uuid, sqlite_time,
};

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
        let new_id = UserId::new();
        let id = match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query(
                    "INSERT INTO users (user_id, email, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (email) DO NOTHING",
                )
                .bind(new_id.to_string())
                .bind(&email)
                .bind(sqlite_time(Utc::now()))
                .execute(pool)
                .await?;
                let id: String = sqlx::query_scalar("SELECT user_id FROM users WHERE email = ?1")
                    .bind(&email)
                    .fetch_one(pool)
                    .await?;
                parse_sqlite_uuid(&id)?
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query("INSERT INTO users (user_id, email) VALUES ($1, $2) ON CONFLICT (email) DO NOTHING")
                    .bind(new_id.0)
                    .bind(&email)
                    .execute(pool)
                    .await?;
                sqlx::query_scalar("SELECT user_id FROM users WHERE email = $1")
                    .bind(&email)
                    .fetch_one(pool)
                    .await?
            }
        };
        Ok(UserId(id))
    }

    /// The user with this id, if it exists.
    pub async fn user(&self, user: UserId) -> Result<Option<UserRow>, IdentityError> {
        match &self.db {
            IdentityDb::Sqlite(pool) => {
                let row = sqlx::query("SELECT email, created_at FROM users WHERE user_id = ?1")
                    .bind(user.to_string())
                    .fetch_optional(pool)
                    .await?;
                row.map(|r| {
                    Ok(UserRow {
                        user_id: user,
                        email: r.try_get("email")?,
                        created_at: parse_sqlite_time(&r.try_get::<String, _>("created_at")?)?,
                    })
                })
                .transpose()
            }
            IdentityDb::Postgres(pool) => {
                let row = sqlx::query("SELECT email, created_at FROM users WHERE user_id = $1")
                    .bind(user.0)
                    .fetch_optional(pool)
                    .await?;
                row.map(|r| {
                    Ok(UserRow {
                        user_id: user,
                        email: r.try_get("email")?,
                        created_at: r.try_get("created_at")?,
                    })
                })
                .transpose()
            }
        }
    }

    /// The id of the user with this address, if there is one.
    pub async fn user_by_email(&self, email: &str) -> Result<Option<UserId>, IdentityError> {
        let email = normalize_email(email)?;
        Ok(match &self.db {
            IdentityDb::Sqlite(pool) => {
                let id: Option<String> =
                    sqlx::query_scalar("SELECT user_id FROM users WHERE email = ?1")
                        .bind(&email)
                        .fetch_optional(pool)
                        .await?;
                id.as_deref()
                    .map(parse_sqlite_uuid)
                    .transpose()?
                    .map(UserId)
            }
            IdentityDb::Postgres(pool) => {
                let id: Option<Uuid> =
                    sqlx::query_scalar("SELECT user_id FROM users WHERE email = $1")
                        .bind(&email)
                        .fetch_optional(pool)
                        .await?;
                id.map(UserId)
            }
        })
    }

    /// Deletes the user row; its tokens and sessions go with it (foreign keys cascade), and
    /// every login link issued to its address (used, unused or expired: each row holds the
    /// address), in one transaction, so neither a credential nor the address outlives it.
    /// Audit rows stay (PII-free).
    pub async fn delete_user(&self, user: UserId) -> Result<bool, IdentityError> {
        let deleted = match &self.db {
            IdentityDb::Sqlite(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query(
                    "DELETE FROM magic_links WHERE email = (SELECT email FROM users WHERE user_id = ?1)",
                )
                .bind(user.to_string())
                .execute(&mut *tx)
                .await?;
                let deleted = sqlx::query("DELETE FROM users WHERE user_id = ?1")
                    .bind(user.to_string())
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                tx.commit().await?;
                deleted
            }
            IdentityDb::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query(
                    "DELETE FROM magic_links WHERE email = (SELECT email FROM users WHERE user_id = $1)",
                )
                .bind(user.0)
                .execute(&mut *tx)
                .await?;
                let deleted = sqlx::query("DELETE FROM users WHERE user_id = $1")
                    .bind(user.0)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                tx.commit().await?;
                deleted
            }
        };
        Ok(deleted > 0)
    }

    /// How many users exist (zero on a first start).
    pub async fn user_count(&self) -> Result<i64, IdentityError> {
        Ok(match &self.db {
            IdentityDb::Sqlite(pool) => {
                sqlx::query_scalar("SELECT count(*) FROM users")
                    .fetch_one(pool)
                    .await?
            }
            IdentityDb::Postgres(pool) => {
                sqlx::query_scalar("SELECT count(*) FROM users")
                    .fetch_one(pool)
                    .await?
            }
        })
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
