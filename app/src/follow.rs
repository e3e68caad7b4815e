//! Following a trip live: the rules of a stream of its changes, whichever transport carries
//! it (REST's server-sent events today). The first update is the current state; then each
//! job's progress once and in order (by its sequence), a new state whenever the trip's stream
//! moves (a notice on the progress channel, or a slow look in case a notice was lost, or every
//! 2 s while the channel is down), "deleted" when the trip goes, and "unauthorized" when the
//! credential that opened the stream no longer holds (checked every 10 s). The stream holds
//! one of the user's stream slots for as long as it is fed.

use std::collections::HashMap;
use std::time::Duration;

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use etappe_workers::progress::Progress;
use futures::StreamExt;
use tokio::sync::mpsc;

use super::{App, AppError};
use crate::identity::Principal;

/// How often a stream with live notices looks at the trip anyway (a notice lost meanwhile).
const SAFETY_POLL: Duration = Duration::from_secs(10);
/// How often a stream without live notices (the channel is down) looks at the trip.
const FALLBACK_POLL: Duration = Duration::from_secs(2);
/// How often a stream checks that its credential still holds.
const CREDENTIAL_CHECK: Duration = Duration::from_secs(10);

/// The credential that opened a stream, checked again while it runs.
#[derive(Clone, Debug)]
pub enum FollowCredential {
    /// A bearer token.
    Token(String),
    /// The session cookie's value: a browser's `EventSource` sends it by itself.
    Session(String),
}

/// One update of a followed trip.
#[derive(Debug)]
pub enum Update {
    /// The trip's state (first, and after each change of its stream).
    Trip(Box<TripView>),
    /// A job's progress, each sequence number once.
    Progress(Progress),
    /// The trip was deleted: the last update.
    Deleted,
    /// The credential no longer holds: the last update.
    Unauthorized,
}

impl App {
    /// Follows `trip_id` for `principal`: its updates, until the receiver is dropped or a last
    /// update (deleted, unauthorized) is sent. Refused like a read of the trip, and when the
    /// user's streams are all open.
    pub async fn follow(
        &self,
        principal: &Principal,
        credential: FollowCredential,
        trip_id: TripId,
    ) -> Result<mpsc::Receiver<Update>, AppError> {
        let view = self.trips.watch(principal, trip_id).await?;
        let limit = self.budgets.settings.streams_per_user;
        let slot = self
            .streams
            .take(principal.user_id, limit)
            .ok_or(AppError::TooManyStreams(limit))?;
        let (sender, receiver) = mpsc::channel::<Update>(64);
        let app = self.clone();
        tokio::spawn(async move {
            // The slot is held for as long as this task feeds the stream.
            let _slot = slot;
            app.feed(view, credential, trip_id, sender).await;
        });
        Ok(receiver)
    }

    async fn feed(
        &self,
        view: TripView,
        credential: FollowCredential,
        trip_id: TripId,
        sender: mpsc::Sender<Update>,
    ) {
        let progress = &self.work.progress;
        // Subscribe before reading the current state, so nothing falls between the two.
        let live = progress.subscribe(trip_id).await;
        let mut stream_version = view.stream_version;
        if sender.send(Update::Trip(Box::new(view))).await.is_err() {
            return;
        }
        let mut last_seq: HashMap<uuid::Uuid, u64> = HashMap::new();
        let mut fresh = |p: &Progress| -> bool {
            let seen = last_seq.entry(p.job_id).or_default();
            let new = p.seq > *seen;
            *seen = (*seen).max(p.seq);
            new
        };
        if let Ok(current) = progress.current(trip_id).await {
            for p in current.into_iter().filter(|p| !p.is_change_notice()) {
                if fresh(&p) && sender.send(Update::Progress(p)).await.is_err() {
                    return;
                }
            }
        }
        let mut live = match live {
            Ok(stream) => Some(stream),
            Err(error) => {
                tracing::warn!(%error, "live progress unavailable; the trip is polled every 2 s");
                None
            }
        };
        // Changes arrive as notices on the progress channel; the slow tick only covers a
        // notice lost while the channel was down, and re-checks the credential.
        let every = if live.is_some() {
            SAFETY_POLL
        } else {
            FALLBACK_POLL
        };
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let mut credential_checked = tokio::time::Instant::now();
        loop {
            let reload = tokio::select! {
                item = async { match live.as_mut() { Some(s) => s.next().await, None => std::future::pending().await } } => {
                    match item {
                        Some(p) if p.is_change_notice() => true,
                        Some(p) => {
                            if fresh(&p) && sender.send(Update::Progress(p)).await.is_err() { return; }
                            false
                        }
                        None => {
                            live = None;
                            tick = tokio::time::interval(FALLBACK_POLL);
                            false
                        }
                    }
                }
                _ = tick.tick() => {
                    if sender.is_closed() { return; }
                    if credential_checked.elapsed() >= CREDENTIAL_CHECK {
                        credential_checked = tokio::time::Instant::now();
                        if !self.still_holds(&credential).await {
                            let _ = sender.send(Update::Unauthorized).await;
                            return;
                        }
                    }
                    true
                }
                () = sender.closed() => return,
            };
            if !reload {
                continue;
            }
            match self.trips.current_view(trip_id).await {
                Ok(Some(v)) if v.stream_version != stream_version => {
                    stream_version = v.stream_version;
                    if sender.send(Update::Trip(Box::new(v))).await.is_err() {
                        return;
                    }
                }
                Ok(None) => {
                    let _ = sender.send(Update::Deleted).await;
                    return;
                }
                _ => {}
            }
        }
    }

    /// Whether the credential that opened a stream still holds (a revoked token or session
    /// ends the stream at the next check).
    async fn still_holds(&self, credential: &FollowCredential) -> bool {
        match credential {
            FollowCredential::Token(token) => {
                matches!(self.identity.authenticate(token).await, Ok(Some(_)))
            }
            FollowCredential::Session(cookie) => {
                matches!(self.accounts.session(cookie).await, Ok(Some(_)))
            }
        }
    }
}
