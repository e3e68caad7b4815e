//! The event store's integration tests as one binary: the conformance suite on SQLite and,
//! when `DATABASE_URL` names one, on PostgreSQL, one module each.

mod store_postgres;
mod store_sqlite;
