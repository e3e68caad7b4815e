//! What a search keeps: each candidate with its ranking, the bounded best-first set of them
//! (one per place), and the caller's filter.

use super::{Key, MatchKind};

/// A candidate result: `place` index with its ranking tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    pub place: u32,
    pub kind: MatchKind,
    pub distance: u8,
    rank: (MatchKind, u8, bool, u32, u32),
}

impl Hit {
    pub(super) fn new(kind: MatchKind, distance: u8, key: &Key) -> Hit {
        let (place, weight) = (key.place, key.weight);
        // Lower is better: kind, then edit distance, then (fuzzy only, the
        // other kinds encode it) start-of-name before later word, then
        // larger weighted population, then index for a deterministic order.
        let later_word = kind == MatchKind::Fuzzy && key.token();
        Hit {
            place,
            kind,
            distance,
            rank: (kind, distance, later_word, u32::MAX - weight, place),
        }
    }
}

/// Bounded set of the best hits, one per place, sorted best first.
pub(super) struct TopK {
    limit: usize,
    pub(super) items: Vec<Hit>,
}

impl TopK {
    pub(super) fn new(limit: usize) -> TopK {
        TopK {
            limit,
            items: Vec::with_capacity(limit.min(64) + 1),
        }
    }

    pub(super) fn is_full(&self) -> bool {
        self.items.len() >= self.limit
    }

    pub(super) fn offer(&mut self, hit: Hit) {
        if self.limit == 0 {
            return;
        }
        if self.is_full() && self.items.last().is_some_and(|w| hit.rank >= w.rank) {
            return;
        }
        // A place is listed once, with its best way of matching.
        if let Some(pos) = self.items.iter().position(|h| h.place == hit.place) {
            if hit.rank >= self.items[pos].rank {
                return;
            }
            self.items.remove(pos);
        }
        let at = self.items.partition_point(|h| h.rank < hit.rank);
        self.items.insert(at, hit);
        self.items.truncate(self.limit);
    }
}

/// Query-time restriction on which places may be returned.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Filter<'q> {
    pub country: Option<&'q str>,
}

impl Filter<'_> {
    pub(super) fn accepts(&self, key: &Key) -> bool {
        self.country
            .is_none_or(|cc| cc.as_bytes().eq_ignore_ascii_case(&key.country))
    }
}
