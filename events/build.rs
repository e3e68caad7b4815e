//! Rebuild when a migration is added: `sqlx::migrate!` embeds the migrations folders at compile
//! time, and without this a new file would not trigger a rebuild.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
