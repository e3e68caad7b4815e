//! `etappe`: the API server (the default command) and its operator commands; the command
//! line is in [`cli`].

mod cli;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    cli::run().await
}
