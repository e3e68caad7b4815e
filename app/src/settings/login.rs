//! The settings of people's login: mail, link and session lifetimes, login rate limits.

/// How people log in (flags and environment variables).
#[derive(clap::Args, Clone)]
pub struct PeopleSettings {
    /// SMTP server for login mail: `smtp://[user:password@]host[:port][?tls=required]` or
    /// `smtps://…`. Unset: mail is written to `<data dir>/mailbox/` (`etappe mail last`).
    #[arg(long, env = "ETAPPE_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// The sender of login mail.
    #[arg(
        long,
        env = "ETAPPE_MAIL_FROM",
        default_value = "Etappe <etappe@localhost>"
    )]
    pub mail_from: String,
    /// Seconds a login link stays valid.
    #[arg(long, env = "ETAPPE_LOGIN_LINK_TTL_SECS", default_value_t = 900)]
    pub login_link_ttl_secs: u64,
    /// Days a session lives without being used (each use slides it).
    #[arg(long, env = "ETAPPE_SESSION_DAYS", default_value_t = 30)]
    pub session_days: u64,
    /// Login requests per e-mail address per 15 minutes (over it: answered alike, not sent).
    #[arg(long, env = "ETAPPE_LOGINS_PER_EMAIL", default_value_t = 3)]
    pub logins_per_email: usize,
    /// Login requests per client address per 15 minutes (over it: 429).
    #[arg(long, env = "ETAPPE_LOGINS_PER_ADDRESS", default_value_t = 10)]
    pub logins_per_address: usize,
    /// Map tiles of the rider's page (`{z}/{x}/{y}` placeholders). Empty: no tiles, the
    /// route draws on a plain background. The default is OpenStreetMap's public server,
    /// whose usage policy asks for its attribution, which the page shows.
    #[arg(
        long,
        env = "ETAPPE_TILE_URL",
        default_value = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    )]
    pub tile_url: String,
}

impl Default for PeopleSettings {
    fn default() -> Self {
        Self {
            smtp_url: None,
            mail_from: "Etappe <etappe@localhost>".into(),
            login_link_ttl_secs: 900,
            session_days: 30,
            logins_per_email: 3,
            logins_per_address: 10,
            tile_url: "https://tile.openstreetmap.org/{z}/{x}/{y}.png".into(),
        }
    }
}

impl std::fmt::Debug for PeopleSettings {
    // The SMTP URL may carry a password: only whether it is set is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeopleSettings")
            .field("smtp_url", &self.smtp_url.as_ref().map(|_| "<set>"))
            .field("mail_from", &self.mail_from)
            .field("login_link_ttl_secs", &self.login_link_ttl_secs)
            .field("session_days", &self.session_days)
            .field("logins_per_email", &self.logins_per_email)
            .field("logins_per_address", &self.logins_per_address)
            .field("tile_url", &self.tile_url)
            .finish()
    }
}
