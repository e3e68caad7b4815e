//! The application's settings: every one a flag and an environment variable with its
//! default, declared here once beside the services that apply them. The composition root
//! (`etappe`'s configuration) flattens them into its own.

mod limits;
mod login;

pub use self::limits::{BudgetSettings, HostSettings, OAuthSettings, ServerLimits};
pub use self::login::PeopleSettings;
