//! Typed identifiers. A trip id and a user id are both UUIDs; giving each its own type keeps
//! one from being passed where the other is meant.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A new, time-ordered (UUIDv7) identifier.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map(Self)
            }
        }
    };
}

uuid_id!(
    /// Identifies a trip, and with it the event stream `trip-{id}`.
    TripId
);
uuid_id!(
    /// Identifies a user (a rider, or the owner of an agent's token).
    UserId
);

impl TripId {
    /// The name of this trip's event stream.
    pub fn stream_id(&self) -> String {
        format!("{}{}", TRIP_STREAM_PREFIX, self.0.hyphenated())
    }

    /// The trip a stream belongs to, if it is a trip stream.
    pub fn from_stream_id(stream_id: &str) -> Option<Self> {
        stream_id.strip_prefix(TRIP_STREAM_PREFIX)?.parse().ok()
    }
}

/// Streams of trips are named `trip-{uuid}`.
pub const TRIP_STREAM_PREFIX: &str = "trip-";

/// The namespace of deterministic (UUIDv5) ids derived from idempotency keys.
pub const ETAPPE_NAMESPACE: Uuid = Uuid::from_u128(0x5f1c_7b1e_6a52_4c0e_9d3e_1b7a_e7a9_0c11);

/// A deterministic id for a name within Etappe's namespace: the same name always gives the
/// same id, which is what makes a retried creation land on the same trip and the same event.
pub fn derived_id(name: &str) -> Uuid {
    Uuid::new_v5(&ETAPPE_NAMESPACE, name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trip_stream_id_round_trips() {
        let id = TripId::new();
        assert_eq!(TripId::from_stream_id(&id.stream_id()), Some(id));
        assert_eq!(TripId::from_stream_id("bench-1"), None);
    }

    #[test]
    fn derived_ids_are_stable_and_distinct() {
        assert_eq!(derived_id("a"), derived_id("a"));
        assert_ne!(derived_id("a"), derived_id("b"));
    }
}
