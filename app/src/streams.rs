//! Live event streams held open per user. Each stream holds a slot for as long as it is
//! open; a user holding `limit` gets 429 for the next one. Counted per replica: a stream is a
//! connection to this process, and what it costs is this process's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use etappe_domain::ids::UserId;

/// The open streams of every user.
#[derive(Debug, Default)]
pub struct StreamSlots {
    open: Mutex<HashMap<UserId, usize>>,
}

/// A held slot, given back when dropped (the stream ended, whichever way).
#[derive(Debug)]
pub struct StreamSlot {
    slots: Arc<StreamSlots>,
    user: UserId,
}

impl StreamSlots {
    /// Takes a slot for `user`, or `None` when `limit` are held already.
    pub fn take(self: &Arc<Self>, user: UserId, limit: usize) -> Option<StreamSlot> {
        let mut open = self.open.lock().ok()?;
        let held = open.entry(user).or_default();
        if *held >= limit {
            return None;
        }
        *held += 1;
        Some(StreamSlot {
            slots: Arc::clone(self),
            user,
        })
    }

    /// Streams open now, every user's (the `etappe_live_streams` gauge).
    pub fn total(&self) -> usize {
        self.open.lock().map_or(0, |o| o.values().sum())
    }

    /// Streams `user` holds open now.
    pub fn held(&self, user: UserId) -> usize {
        self.open
            .lock()
            .ok()
            .and_then(|o| o.get(&user).copied())
            .unwrap_or(0)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.slots.open.lock()
            && let Some(held) = open.get_mut(&self.user)
        {
            *held = held.saturating_sub(1);
            if *held == 0 {
                open.remove(&self.user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_holds_at_most_the_limit_and_a_closed_stream_gives_its_slot_back() {
        let slots = Arc::new(StreamSlots::default());
        let alice = UserId(uuid::Uuid::now_v7());
        let held: Vec<_> = (0..3).filter_map(|_| slots.take(alice, 3)).collect();
        assert_eq!(held.len(), 3);
        assert!(slots.take(alice, 3).is_none());
        assert!(slots.take(UserId(uuid::Uuid::now_v7()), 3).is_some());
        drop(held);
        assert_eq!(slots.held(alice), 0);
        assert!(slots.take(alice, 3).is_some());
    }
}
