//! How the identity tables are read and written on either backend, so every query is written
//! once: the SQL text uses `$n` placeholders, which SQLite reads as `?n` once the `$` is
//! swapped (a `$n` used twice is one value on both); values are bound through [`Val`] and
//! rows read through [`AnyRow`], which know each backend's column types (a UUID is a `uuid`
//! on PostgreSQL and text on SQLite; a time is a `timestamptz` on PostgreSQL and, on SQLite,
//! fixed-width RFC 3339 text, so that text comparison in SQL is time order).

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

use super::{IdentityDb, IdentityError, parse_sqlite_time, sqlite_time};

/// A bound value.
#[derive(Clone, Debug)]
pub enum Val {
    Text(String),
    OptText(Option<String>),
    Uuid(Uuid),
    Time(DateTime<Utc>),
    OptTime(Option<DateTime<Utc>>),
    Int(i64),
}

impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Self::Text(v.to_owned())
    }
}
impl From<String> for Val {
    fn from(v: String) -> Self {
        Self::Text(v)
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Self {
        Self::Text(v.clone())
    }
}
impl From<Uuid> for Val {
    fn from(v: Uuid) -> Self {
        Self::Uuid(v)
    }
}
impl From<etappe_domain::ids::UserId> for Val {
    fn from(v: etappe_domain::ids::UserId) -> Self {
        Self::Uuid(v.0)
    }
}
impl From<DateTime<Utc>> for Val {
    fn from(v: DateTime<Utc>) -> Self {
        Self::Time(v)
    }
}
impl From<Option<DateTime<Utc>>> for Val {
    fn from(v: Option<DateTime<Utc>>) -> Self {
        Self::OptTime(v)
    }
}
impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}
impl From<Option<String>> for Val {
    fn from(v: Option<String>) -> Self {
        Self::OptText(v)
    }
}

/// A row of either backend.
pub enum AnyRow {
    Pg(PgRow),
    Lite(SqliteRow),
}

impl std::fmt::Debug for AnyRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Pg(_) => "AnyRow::Pg",
            Self::Lite(_) => "AnyRow::Lite",
        })
    }
}

fn invalid(e: impl std::fmt::Display) -> IdentityError {
    IdentityError::Invalid(e.to_string())
}

impl AnyRow {
    pub fn text(&self, column: &str) -> Result<String, IdentityError> {
        Ok(match self {
            Self::Pg(r) => r.try_get(column)?,
            Self::Lite(r) => r.try_get(column)?,
        })
    }
    pub fn opt_text(&self, column: &str) -> Result<Option<String>, IdentityError> {
        Ok(match self {
            Self::Pg(r) => r.try_get(column)?,
            Self::Lite(r) => r.try_get(column)?,
        })
    }
    pub fn uuid(&self, column: &str) -> Result<Uuid, IdentityError> {
        match self {
            Self::Pg(r) => Ok(r.try_get(column)?),
            Self::Lite(r) => Uuid::parse_str(&r.try_get::<String, _>(column)?).map_err(invalid),
        }
    }
    pub fn time(&self, column: &str) -> Result<DateTime<Utc>, IdentityError> {
        self.opt_time(column)?
            .ok_or_else(|| invalid(format!("{column} is empty")))
    }
    /// On SQLite a time written by this module ([`sqlite_time`]) or, before it bound every
    /// time that way, by sqlx's own encoding (the OAuth tables' older rows): either reads.
    pub fn opt_time(&self, column: &str) -> Result<Option<DateTime<Utc>>, IdentityError> {
        match self {
            Self::Pg(r) => Ok(r.try_get(column)?),
            Self::Lite(r) => match r.try_get::<Option<DateTime<Utc>>, _>(column) {
                Ok(time) => Ok(time),
                Err(_) => r
                    .try_get::<Option<String>, _>(column)?
                    .as_deref()
                    .map(parse_sqlite_time)
                    .transpose(),
            },
        }
    }
    /// A boolean expression's value (`used_at IS NOT NULL AS used`).
    pub fn flag(&self, column: &str) -> Result<bool, IdentityError> {
        Ok(match self {
            Self::Pg(r) => r.try_get(column)?,
            Self::Lite(r) => r.try_get(column)?,
        })
    }
    /// A count.
    pub fn count(&self, column: &str) -> Result<i64, IdentityError> {
        Ok(match self {
            Self::Pg(r) => r.try_get(column)?,
            Self::Lite(r) => r.try_get(column)?,
        })
    }
}

/// The SQL text for SQLite: `$n` → `?n` (the statements never hold a `$` otherwise).
fn lite(sql: &str) -> String {
    sql.replace('$', "?")
}

fn pg_query<'q>(
    sql: &'q str,
    vals: &[Val],
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
    for v in vals {
        q = match v.clone() {
            Val::Text(s) => q.bind(s),
            Val::OptText(s) => q.bind(s),
            Val::Uuid(u) => q.bind(u),
            Val::Time(t) => q.bind(t),
            Val::OptTime(t) => q.bind(t),
            Val::Int(n) => q.bind(n),
        };
    }
    q
}

fn lite_query(
    sql: String,
    vals: &[Val],
) -> sqlx::query::Query<'static, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
    for v in vals {
        q = match v.clone() {
            Val::Text(s) => q.bind(s),
            Val::OptText(s) => q.bind(s),
            Val::Uuid(u) => q.bind(u.to_string()),
            Val::Time(t) => q.bind(sqlite_time(t)),
            Val::OptTime(t) => q.bind(t.map(sqlite_time)),
            Val::Int(n) => q.bind(n),
        };
    }
    q
}

impl IdentityDb {
    /// Runs one statement; answers the rows it touched.
    pub(crate) async fn execute(&self, sql: &str, vals: &[Val]) -> Result<u64, IdentityError> {
        Ok(match self {
            Self::Postgres(pool) => pg_query(sql, vals).execute(pool).await?.rows_affected(),
            Self::Sqlite(pool) => lite_query(lite(sql), vals)
                .execute(pool)
                .await?
                .rows_affected(),
        })
    }

    /// Runs the statements in one transaction, in order; answers the rows each touched.
    pub(crate) async fn execute_together(
        &self,
        statements: &[(&str, &[Val])],
    ) -> Result<Vec<u64>, IdentityError> {
        let mut touched = Vec::with_capacity(statements.len());
        match self {
            Self::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                for (sql, vals) in statements {
                    touched.push(pg_query(sql, vals).execute(&mut *tx).await?.rows_affected());
                }
                tx.commit().await?;
            }
            Self::Sqlite(pool) => {
                let mut tx = pool.begin().await?;
                for (sql, vals) in statements {
                    touched.push(
                        lite_query(lite(sql), vals)
                            .execute(&mut *tx)
                            .await?
                            .rows_affected(),
                    );
                }
                tx.commit().await?;
            }
        }
        Ok(touched)
    }

    /// The rows a query answers.
    pub(crate) async fn fetch_all(
        &self,
        sql: &str,
        vals: &[Val],
    ) -> Result<Vec<AnyRow>, IdentityError> {
        Ok(match self {
            Self::Postgres(pool) => pg_query(sql, vals)
                .fetch_all(pool)
                .await?
                .into_iter()
                .map(AnyRow::Pg)
                .collect(),
            Self::Sqlite(pool) => lite_query(lite(sql), vals)
                .fetch_all(pool)
                .await?
                .into_iter()
                .map(AnyRow::Lite)
                .collect(),
        })
    }

    /// The first row a query answers, if any.
    pub(crate) async fn fetch_optional(
        &self,
        sql: &str,
        vals: &[Val],
    ) -> Result<Option<AnyRow>, IdentityError> {
        Ok(match self {
            Self::Postgres(pool) => pg_query(sql, vals)
                .fetch_optional(pool)
                .await?
                .map(AnyRow::Pg),
            Self::Sqlite(pool) => lite_query(lite(sql), vals)
                .fetch_optional(pool)
                .await?
                .map(AnyRow::Lite),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_time_reads_back_whichever_way_sqlite_stored_it() {
        // Bound by this module (fixed-width RFC 3339), and as sqlx's own encoding stored the
        // OAuth tables' times before: both read back as the same instant, and a missing one
        // as none.
        let pool = sqlx::SqlitePool::connect("sqlite::memory:")
            .await
            .expect("sqlite");
        sqlx::query("CREATE TABLE t (n INTEGER, at TEXT)")
            .execute(&pool)
            .await
            .expect("table");
        let db = IdentityDb::Sqlite(pool.clone());
        let at = DateTime::parse_from_rfc3339("2026-12-07T05:43:59.123456Z")
            .expect("time")
            .with_timezone(&Utc);
        db.execute("INSERT INTO t (n, at) VALUES (1, $1)", &[at.into()])
            .await
            .expect("bound here");
        sqlx::query("INSERT INTO t (n, at) VALUES (2, ?1)")
            .bind(at)
            .execute(&pool)
            .await
            .expect("bound by sqlx");
        db.execute(
            "INSERT INTO t (n, at) VALUES (3, $1)",
            &[Val::OptTime(None)],
        )
        .await
        .expect("none");
        let rows = db
            .fetch_all("SELECT at FROM t ORDER BY n", &[])
            .await
            .expect("rows");
        assert_eq!(rows[0].time("at").expect("ours"), at);
        assert_eq!(rows[1].time("at").expect("sqlx's"), at);
        assert_eq!(rows[2].opt_time("at").expect("none"), None);
        // Ours compares as time in SQL: a later instant is a larger text.
        let later = db
            .fetch_all(
                "SELECT n FROM t WHERE at > $1",
                &[(at - chrono::Duration::seconds(1)).into()],
            )
            .await
            .expect("compared");
        assert!(!later.is_empty());
    }
}
