//! Public links: made, read and revoked; a code is 64 random bits.

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use etappe_domain::trip::{ShareLink, TripCommand};

use crate::access::require;
use crate::confirmation::{Asks, Confirm};
use crate::identity::{Principal, Scope};

use super::{AppError, Caller, TripService};

impl TripService {
    /// Opens the trip's public link, or answers the one already open (`true` when new).
    /// Allowed on a locked trip.
    pub async fn share(
        &self,
        caller: &Caller,
        trip_id: TripId,
    ) -> Result<(ShareLink, bool), AppError> {
        require(&caller.principal, Scope::TripsWrite)?;
        let current = self.owned_view(&caller.principal, trip_id).await?;
        if let Some(link) = current.trip.share.clone() {
            return Ok((link, false));
        }
        let code = new_share_code();
        let at = chrono::Utc::now();
        let after = self
            .execute(caller, trip_id, current, |_| TripCommand::Share {
                code: code.clone(),
                at,
            })
            .await?;
        after
            .trip
            .share
            .map(|link| (link, true))
            .ok_or_else(|| AppError::Internal("share link not recorded".into()))
    }

    /// The trip's active public link, if any.
    pub async fn share_link(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<Option<ShareLink>, AppError> {
        Ok(self.readable(principal, trip_id).await?.trip.share)
    }

    /// Revokes the public link; the code answers 404 to everyone afterwards.
    pub async fn unshare(
        &self,
        caller: &Caller,
        trip_id: TripId,
        confirm: &dyn Confirm,
    ) -> Result<(), AppError> {
        self.confirmed_change(caller, trip_id, confirm, Asks::Always, TripCommand::Unshare)
            .await
    }

    /// The trip behind an active public code. A malformed, unknown or revoked code is a 404.
    pub async fn shared_view(&self, code: &str) -> Result<TripView, AppError> {
        let well_formed = code.len() == SHARE_CODE_CHARS
            && code
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !well_formed {
            return Err(AppError::NotFound);
        }
        self.store
            .trip_view_by_share(code)
            .await?
            .ok_or(AppError::NotFound)
    }
}

/// Characters of a share code: 64 random bits in URL-safe base64 (11 characters), far beyond
/// what enumeration can reach.
pub const SHARE_CODE_CHARS: usize = 11;

fn new_share_code() -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = u128::from(rand::random::<u64>());
    (0..SHARE_CODE_CHARS)
        .map(|_| {
            let c = ALPHABET[(bits & 63) as usize] as char;
            bits >>= 6;
            c
        })
        .collect()
}
