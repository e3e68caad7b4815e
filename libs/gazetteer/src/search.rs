//! Forward search: folded-name index with exact, prefix and fuzzy matching.
//!
//! Every place contributes *keys*: the folded name, ASCII name and Latin
//! alternate names ("full" keys), plus every word-boundary suffix of those
//! ("token" keys, so "etienne" reaches "saint etienne"). Token keys are
//! slices of the full key in the arena, so they cost an entry but no bytes.
//! All keys sit in one array sorted by bytes, which gives:
//!
//! * exact and prefix matches with two binary searches;
//! * a bounded fuzzy search that walks the sorted array as an implicit trie,
//!   sharing Damerau–Levenshtein (optimal string alignment) rows between keys
//!   with a common prefix and skipping whole subtrees as soon as no key below
//!   can be within the allowed distance. Subtree ends come from a
//!   longest-common-prefix array (with block minima and a precomputed
//!   "next sibling" per key), so the walk reads small sequential arrays and
//!   touches key bytes only for subtrees that stay alive.
//!
//! Keys carry their place's ranking weight and country, and results are kept
//! in a small bounded top-k set, so even a one-letter query scanning tens of
//! thousands of keys reads only the key array and allocates nothing per key.

use crate::Place;

mod edit_distance;
mod hits;

use edit_distance::{allowed_at, band_row, next_not_greater, prefix_u64};
use hits::TopK;
pub(crate) use hits::{Filter, Hit};

/// Largest number of results a caller can get; bounds the top-k work.
pub const MAX_LIMIT: usize = 1000;

/// Fuzzy matching is skipped for longer folded queries: no name needs it and
/// the DP row cost grows with the query length.
const MAX_FUZZY_QUERY_BYTES: usize = 64;

/// Hard cap on DP rows per fuzzy query: keeps the worst case bounded even for
/// adversarial queries (results may then be incomplete, never wrong).
const FUZZY_ROW_BUDGET: usize = 60_000;

/// Budget of the one-edit walk over every key (first letter wrong).
const FALLBACK_ROW_BUDGET: usize = 40_000;

/// Keys longer than this are not indexed: a query is cut at 200 characters,
/// so such a key could never be matched anyway.
const MAX_KEY_BYTES: usize = 512;

/// How a result matched the query; the order is the ranking order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatchKind {
    /// The folded query equals a folded name (or ASCII or alternate name).
    Exact,
    /// The folded query is a prefix of a folded name.
    Prefix,
    /// The folded query is a prefix of a later word of a name
    /// ("etienne" in "Saint-Étienne").
    Token,
    /// Within the allowed edit distance of a name's prefix or word.
    Fuzzy,
}

#[derive(Clone, Copy, Debug)]
struct Key {
    off: u32,
    place: u32,
    /// Ranking weight: the place's population, divided by
    /// `ALT_NAME_PENALTY` for alternate-name keys. Kept here (with the
    /// country) so that scanning thousands of keys for a short prefix never
    /// touches the places themselves.
    weight: u32,
    /// Byte length in the low bits, plus the `TOKEN` and `ALT` flags; packed
    /// so that a key is 16 bytes.
    len_flags: u16,
    country: [u8; 2],
}

/// `Key::len_flags`: the key is a word suffix, not the start of a name.
const TOKEN: u16 = 0x4000;
/// `Key::len_flags`: the key comes from an alternate name.
const ALT: u16 = 0x8000;
const LEN_MASK: u16 = 0x3FFF;

impl Key {
    fn new(off: u32, len: usize, token: bool, alt: bool, place_id: u32, place: &Place<'_>) -> Key {
        let mut len_flags = (len as u16) & LEN_MASK;
        if token {
            len_flags |= TOKEN;
        }
        if alt {
            len_flags |= ALT;
        }
        let cc = place.country_code.as_bytes();
        Key {
            off,
            place: place_id,
            weight: if alt {
                place.population / ALT_NAME_PENALTY
            } else {
                place.population
            },
            len_flags,
            country: [
                cc.first().copied().unwrap_or(0),
                cc.get(1).copied().unwrap_or(0),
            ],
        }
    }

    fn len(&self) -> usize {
        usize::from(self.len_flags & LEN_MASK)
    }

    fn token(&self) -> bool {
        self.len_flags & TOKEN != 0
    }
}

/// Entries per block of the LCP skip structure (and blocks per superblock).
const BLOCK: usize = 64;

/// Sorted index of folded keys.
#[derive(Debug, Default)]
pub(crate) struct NameIndex {
    /// Key bytes laid out in sorted key order, so that walking the keys in
    /// order (the fuzzy search does) reads memory forwards.
    arena: Vec<u8>,
    keys: Vec<Key>,
    /// `lcp[i]`: length of the common prefix of keys `i - 1` and `i`
    /// (saturated at 255). The keys below a prefix of length `d` that key
    /// `i` starts end at the first `j > i` with `lcp[j] < d`.
    lcp: Vec<u8>,
    /// Minimum of `lcp` over each block of `BLOCK` entries, and over each
    /// superblock of `BLOCK` blocks: lets that scan skip big subtrees in a
    /// few hundred byte comparisons at most, instead of a binary search
    /// over the strings (which costs cache misses).
    block_min: Vec<u8>,
    super_min: Vec<u8>,
    /// `next_byte[i]`: byte of key `i` at position `lcp[i]`, i.e. the first
    /// byte where it differs from key `i - 1`; 0 when key `i` ends there
    /// (a duplicate). Folded keys never contain a 0 byte.
    next_byte: Vec<u8>,
    /// `sibling[i]`: end of the subtree that key `i` opens at depth
    /// `lcp[i] + 1`, i.e. the first `j > i` with `lcp[j] <= lcp[i]`. The
    /// fuzzy walk skips most subtrees right where they open, so this turns
    /// its most frequent step into a single load.
    sibling: Vec<u32>,
}

/// Alternate-name matches count as if the place were this many times
/// smaller. GeoNames alternate names carry no language tag and include
/// historical and foreign spellings ("Paris" is listed for Parys, South
/// Africa; "Port-Étienne" for Nouadhibou), so a place matched by its own
/// name should usually win; a big city still wins through its exonym
/// ("Cologne" → Köln rather than Cologne, Italy, pop. 7,000).
const ALT_NAME_PENALTY: u32 = 8;

impl NameIndex {
    /// Builds the index over `places` (their names are folded here).
    pub(crate) fn build(places: &[Place<'_>]) -> NameIndex {
        let mut arena = String::new();
        let mut keys = Vec::new();
        let mut folded: Vec<(String, bool)> = Vec::new();
        for (i, place) in places.iter().enumerate() {
            let Ok(place_id) = u32::try_from(i) else {
                break;
            };
            folded.clear();
            let names = [(place.name, false), (place.ascii_name, false)]
                .into_iter()
                .chain(place.alternate_names().map(|a| (a, true)));
            for (name, alt) in names {
                let f = crate::fold::fold(name);
                // The name comes first, so a spelling shared by the name and
                // an alternate keeps the (better ranked) name flag.
                if f.is_empty() || f.len() > MAX_KEY_BYTES || folded.iter().any(|(g, _)| *g == f) {
                    continue;
                }
                folded.push((f, alt));
            }
            let mut seen_tokens: Vec<&str> = Vec::new();
            for (f, alt) in &folded {
                // Offsets are u32: stop indexing rather than wrap around.
                if arena.len() + f.len() > u32::MAX as usize {
                    break;
                }
                let base = arena.len() as u32;
                arena.push_str(f);
                keys.push(Key::new(base, f.len(), false, *alt, place_id, place));
                // One token key per later word start, unless another name of
                // the same place already produced the same suffix.
                for (pos, _) in f.match_indices(' ') {
                    let start = pos + 1;
                    let suffix = &f[start..];
                    if suffix.is_empty()
                        || seen_tokens.contains(&suffix)
                        || folded.iter().any(|(g, _)| g == suffix)
                    {
                        continue;
                    }
                    seen_tokens.push(suffix);
                    let off = base + start as u32;
                    keys.push(Key::new(off, suffix.len(), true, *alt, place_id, place));
                }
            }
        }
        // Sorting by an 8-byte big-endian prefix first keeps most comparisons
        // to one integer compare; the full bytes break the remaining ties.
        let bytes = arena.as_bytes();
        let key_bytes = |k: &Key| &bytes[k.off as usize..k.off as usize + k.len()];
        let mut order: Vec<(u64, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (prefix_u64(key_bytes(k)), i as u32))
            .collect();
        order.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| {
                let (ka, kb) = (&keys[a.1 as usize], &keys[b.1 as usize]);
                key_bytes(ka)
                    .cmp(key_bytes(kb))
                    .then(ka.place.cmp(&kb.place))
                    .then(ka.len_flags.cmp(&kb.len_flags))
            })
        });
        // Re-lay the bytes in sorted order; equal neighbours share bytes.
        let mut sorted_arena: Vec<u8> = Vec::with_capacity(arena.len() + arena.len() / 2);
        let mut sorted: Vec<Key> = Vec::with_capacity(order.len());
        let mut lcp: Vec<u8> = Vec::with_capacity(order.len());
        let mut next_byte: Vec<u8> = Vec::with_capacity(order.len());
        let mut prev: &[u8] = &[];
        let mut prev_off = 0u32;
        for &(_, i) in &order {
            let mut k = keys[i as usize];
            let b = key_bytes(&k);
            if b == prev {
                k.off = prev_off;
            } else {
                if sorted_arena.len() + b.len() > u32::MAX as usize {
                    break;
                }
                prev_off = sorted_arena.len() as u32;
                k.off = prev_off;
                sorted_arena.extend_from_slice(b);
            }
            let common = b.iter().zip(prev).take_while(|(x, y)| x == y).count();
            lcp.push(common.min(255) as u8);
            next_byte.push(b.get(common.min(255)).copied().unwrap_or(0));
            prev = b;
            sorted.push(k);
        }
        if let Some(first) = lcp.first_mut() {
            *first = 0;
        }
        if let (Some(first), Some(k)) = (next_byte.first_mut(), sorted.first()) {
            *first = sorted_arena.get(k.off as usize).copied().unwrap_or(0);
        }
        let block_min: Vec<u8> = lcp
            .chunks(BLOCK)
            .map(|c| c.iter().copied().min().unwrap_or(0))
            .collect();
        let super_min: Vec<u8> = block_min
            .chunks(BLOCK)
            .map(|c| c.iter().copied().min().unwrap_or(0))
            .collect();
        sorted_arena.shrink_to_fit();
        NameIndex {
            arena: sorted_arena,
            keys: sorted,
            sibling: next_not_greater(&lcp),
            lcp,
            block_min,
            super_min,
            next_byte,
        }
    }

    /// End (exclusive) of the run of keys from `i` on that share key `i`'s
    /// first `d` bytes: the first `j > i` with `lcp[j] < d`.
    fn subtree_end(&self, i: usize, d: usize) -> usize {
        const SUPER: usize = BLOCK * BLOCK;
        let lcp = self.lcp.as_slice();
        let n = lcp.len();
        let d = d.min(255) as u8;
        let mut j = i + 1;
        // Most subtrees the fuzzy walk skips hold a handful of keys: look at
        // the next few entries one by one, up to the end of the block...
        let block_end = j.next_multiple_of(BLOCK).min(n);
        while j < block_end {
            if lcp[j] < d {
                return j;
            }
            j += 1;
        }
        // ...then skip whole superblocks and blocks whose minimum shows no
        // boundary inside, and scan the first block that has one.
        while j < n {
            if j.is_multiple_of(SUPER) && self.super_min.get(j / SUPER).is_some_and(|&m| m >= d) {
                j += SUPER;
            } else if self.block_min.get(j / BLOCK).is_some_and(|&m| m >= d) {
                j += BLOCK;
            } else {
                let end = (j + BLOCK).min(n);
                while j < end {
                    if lcp[j] < d {
                        return j;
                    }
                    j += 1;
                }
                return end;
            }
        }
        n
    }

    /// Number of keys (full plus token).
    pub(crate) fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Heap bytes held by the index.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.capacity()
            + self.keys.capacity() * std::mem::size_of::<Key>()
            + self.lcp.capacity()
            + self.block_min.capacity()
            + self.super_min.capacity()
            + self.next_byte.capacity()
            + self.sibling.capacity() * std::mem::size_of::<u32>()
    }

    fn key(&self, i: usize) -> &[u8] {
        self.keys.get(i).map_or(&[], |k| self.bytes_of(k))
    }

    /// Index range of the keys that start with `prefix` (sorted order makes
    /// them contiguous).
    fn prefix_range(&self, prefix: &[u8]) -> (usize, usize) {
        let lo = self.keys.partition_point(|k| self.bytes_of(k) < prefix);
        let tail = self.keys.get(lo..).unwrap_or(&[]);
        let hi = lo + tail.partition_point(|k| self.bytes_of(k).starts_with(prefix));
        (lo, hi)
    }

    fn bytes_of(&self, k: &Key) -> &[u8] {
        self.arena
            .get(k.off as usize..k.off as usize + k.len())
            .unwrap_or(&[])
    }

    /// Best `limit` hits for an already folded, non-empty query.
    pub(crate) fn search(&self, query: &str, filter: Filter<'_>, limit: usize) -> Vec<Hit> {
        let limit = limit.min(MAX_LIMIT);
        let q = query.as_bytes();
        if q.is_empty() || limit == 0 {
            return Vec::new();
        }
        let mut top = TopK::new(limit);
        let (lo, hi) = self.prefix_range(q);
        for k in self.keys.get(lo..hi).unwrap_or(&[]) {
            if !filter.accepts(k) {
                continue;
            }
            let kind = if k.token() {
                MatchKind::Token
            } else if k.len() == q.len() {
                MatchKind::Exact
            } else {
                MatchKind::Prefix
            };
            top.offer(Hit::new(kind, 0, k));
        }
        // Fuzzy candidates only fill the remaining slots: they always rank
        // below exact and prefix matches. Cheapest and closest first; each
        // wider step runs only while nothing at all has matched, because
        // its hits would rank below anything found so far anyway.
        let chars = query.chars().count();
        if !top.is_full() && chars >= 4 && q.len() <= MAX_FUZZY_QUERY_BYTES {
            let mut budget = FUZZY_ROW_BUDGET;
            // Names that start with the query's first or second byte: that
            // covers every edit after the first letter, a swap of the first
            // two letters and an extra leading letter, and walks ~1/20 of
            // the keys (typos in the first letter are the rarest).
            let mut firsts: Vec<u8> = q.iter().take(2).copied().collect();
            firsts.dedup();
            let ranges: Vec<(usize, usize)> =
                firsts.iter().map(|&b| self.prefix_range(&[b])).collect();
            // 1. One edit, first letters as above.
            for &range in &ranges {
                self.fuzzy(q, 1, filter, range, &mut budget, &mut top);
            }
            // 2. One edit in the first letter: all other keys (the ranges
            // above were just walked with the same distance).
            if top.items.is_empty() {
                let mut budget = FALLBACK_ROW_BUDGET;
                let mut sorted = ranges.clone();
                sorted.sort_unstable();
                let mut from = 0;
                for (lo, hi) in sorted
                    .into_iter()
                    .chain([(self.keys.len(), self.keys.len())])
                {
                    if from < lo {
                        self.fuzzy(q, 1, filter, (from, lo), &mut budget, &mut top);
                    }
                    from = from.max(hi);
                }
            }
            // 3. Two edits for queries of 8 characters or more.
            if top.items.is_empty() && chars >= 8 {
                for &range in &ranges {
                    self.fuzzy(q, 2, filter, range, &mut budget, &mut top);
                }
            }
        }
        top.items
    }

    /// Walks the sorted keys as a trie, computing optimal-string-alignment
    /// distance rows between the query and each key prefix. A key matches
    /// when the query is within `max_dist` of one of its prefixes.
    ///
    /// Most visited subtrees die on their first byte. That byte is read
    /// from `next_byte` and the depth from `lcp` (both small, sequential
    /// arrays), so a dead subtree costs no access to the key bytes at all.
    fn fuzzy(
        &self,
        q: &[u8],
        max_dist: u8,
        filter: Filter<'_>,
        (lo, hi): (usize, usize),
        budget: &mut usize,
        top: &mut TopK,
    ) {
        let m = q.len();
        let k = max_dist as usize;
        let far = max_dist + 1;
        let cols = m + 1;
        // Rows beyond depth m+k cannot bring the last column to <= k.
        let max_depth = m + k;
        let mut rows = vec![far; (max_depth + 1) * cols];
        let mut scratch = vec![far; cols];
        let mut row_min = vec![0u8; max_depth + 1];
        let mut path_min = vec![far; max_depth + 1];
        // Bytes of the current trie path: path[d - 1] is the byte at depth d.
        let mut path = vec![0u8; max_depth + 1];
        for (j, cell) in rows.iter_mut().take(cols).enumerate() {
            *cell = (j as u8).min(far);
        }
        path_min[0] = (m as u8).min(far);
        // relevant[d]: query bytes that the band of row d compares with
        // (including the transposition look-back). A byte outside that set
        // yields the same row as any other outsider: the "generic" row.
        // When the generic row is hopeless, every child whose byte is not
        // relevant is dead without computing anything; most children are.
        let mut relevant = vec![[0u64; 4]; max_depth + 1];
        for (d, set) in relevant.iter_mut().enumerate().skip(1) {
            let jlo = d.saturating_sub(k).max(1);
            let jhi = (d + k).min(m);
            for j in jlo..=jhi {
                for &b in [q.get(j - 1), j.checked_sub(2).and_then(|x| q.get(x))]
                    .into_iter()
                    .flatten()
                {
                    set[usize::from(b >> 6)] |= 1u64 << (b & 63);
                }
            }
        }
        // generic_dead[d]: None = not computed for the current row d - 1.
        let mut generic_dead: Vec<Option<bool>> = vec![None; max_depth + 1];
        // Depth up to which `rows` and `path` describe the current key.
        let mut valid = 0usize;
        let mut i = lo;
        let n = hi.min(self.keys.len()).min(self.lcp.len());
        'keys: while i < n {
            let lcp_i = usize::from(self.lcp[i]);
            let shared = if i == lo { 0 } else { lcp_i.min(valid) };
            let mut d = shared;
            let mut key: Option<&[u8]> = None;
            loop {
                // The byte at depth d + 1, or None where the key ends.
                let next = if key.is_none() && i != lo && d == lcp_i {
                    match self.next_byte[i] {
                        0 => None,
                        b => Some(b),
                    }
                } else {
                    let bytes = *key.get_or_insert_with(|| self.key(i));
                    bytes.get(d).copied()
                };
                let Some(c) = next else {
                    break;
                };
                if *budget == 0 {
                    return;
                }
                *budget -= 1;
                d += 1;
                let (done, rest) = rows.split_at_mut(d * cols);
                let Some(prev) = done.get((d - 1) * cols..) else {
                    return;
                };
                let is_relevant = relevant[d][usize::from(c >> 6)] & (1u64 << (c & 63)) != 0;
                if !is_relevant && d < max_depth {
                    let dead = *generic_dead[d].get_or_insert_with(|| {
                        // Byte 0 never occurs in a folded query.
                        let rmin = band_row(prev, None, &mut scratch, q, 0, 0, d, k, far);
                        let last = if (d + k).min(m) == m { scratch[m] } else { far };
                        let bound = rmin.min(row_min[d - 1] + 1);
                        let allowed = allowed_at(d, max_dist);
                        path_min[d - 1].min(last) > allowed && bound > allowed
                    });
                    if dead {
                        i = if i != lo && d == lcp_i + 1 {
                            self.sibling.get(i).map_or(n, |&e| e as usize)
                        } else {
                            self.subtree_end(i, d)
                        }
                        .max(i + 1);
                        valid = d - 1;
                        continue 'keys;
                    }
                }
                path[d - 1] = c;
                let Some(cur) = rest.get_mut(..cols) else {
                    return;
                };
                let before = if d >= 2 {
                    done.get((d - 2) * cols..(d - 1) * cols)
                } else {
                    None
                };
                let back = path[d.saturating_sub(2)];
                let rmin = band_row(prev, before, cur, q, c, back, d, k, far);
                let last = if (d + k).min(m) == m { cur[m] } else { far };
                if let Some(g) = generic_dead.get_mut(d + 1) {
                    *g = None;
                }
                row_min[d] = rmin;
                path_min[d] = path_min[d - 1].min(last);
                // No row below can go under this bound (a transposition can
                // reach back one extra row, hence the second term).
                let bound = rmin.min(row_min[d - 1] + 1);
                let pm = path_min[d];
                let settled = pm <= max_dist && bound >= pm;
                let allowed = allowed_at(d, max_dist);
                let hopeless = pm > allowed && bound > allowed;
                if settled || hopeless || d == max_depth {
                    let end = if i != lo && d == lcp_i + 1 {
                        self.sibling.get(i).map_or(n, |&e| e as usize)
                    } else {
                        self.subtree_end(i, d)
                    }
                    .max(i + 1);
                    // pm == 0 means key[..d] == query: those keys were already
                    // reported as exact/prefix/token matches.
                    if pm <= max_dist && pm > 0 {
                        self.offer_range(i, end, pm, filter, top);
                    }
                    valid = d - 1;
                    i = end;
                    continue 'keys;
                }
            }
            // Reached the end of this key without settling its subtree.
            let pm = path_min[d];
            if pm <= max_dist && pm > 0 {
                self.offer_range(i, i + 1, pm, filter, top);
            }
            valid = d;
            i += 1;
        }
    }

    fn offer_range(&self, lo: usize, hi: usize, dist: u8, filter: Filter<'_>, top: &mut TopK) {
        for k in self.keys.get(lo..hi).unwrap_or(&[]) {
            if filter.accepts(k) {
                top.offer(Hit::new(MatchKind::Fuzzy, dist, k));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn osa(a: &[u8], b: &[u8]) -> usize {
        let (n, m) = (a.len(), b.len());
        let mut d = vec![vec![0usize; m + 1]; n + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=n {
            for j in 1..=m {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1)
                    .min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
                }
            }
        }
        d[n][m]
    }

    fn place(name: &'static str, population: u32) -> Place<'static> {
        Place {
            name,
            ascii_name: name,
            lat: 0.0,
            lon: 0.0,
            country_code: "XX",
            admin1: "",
            population,
            timezone: "UTC",
            alternate_names_raw: "",
        }
    }

    #[test]
    fn fuzzy_walk_agrees_with_brute_force_prefix_distance() {
        let words = [
            "grenoble",
            "grenade",
            "greenville",
            "paris",
            "parma",
            "pari",
            "aparis",
            "berlin",
            "bern",
            "bernau",
            "zurich",
            "munchen",
            "munich",
            "muenchen",
            "saint etienne",
            "st etienne",
            "etienne",
            "lyon",
            "lyons",
            "leon",
        ];
        let places: Vec<Place<'static>> = words.iter().map(|w| place(w, 100)).collect();
        let index = NameIndex::build(&places);
        for query in [
            "grenoblle",
            "pariss",
            "brelin",
            "zuirch",
            "munchn",
            "etiene",
            "lyno",
            "xxxx",
        ] {
            let q = query.as_bytes();
            let k = if q.len() <= 7 { 1 } else { 2 };
            let mut top = TopK::new(MAX_LIMIT);
            let mut budget = usize::MAX;
            let all = (0, index.keys.len());
            index.fuzzy(q, k as u8, Filter::default(), all, &mut budget, &mut top);
            // Brute force over every key: min distance to any prefix.
            let mut want: Vec<(u32, u8)> = Vec::new();
            for (i, _) in index.keys.iter().enumerate() {
                let key = index.key(i);
                let best = (0..=key.len())
                    .map(|l| osa(&key[..l], q))
                    .min()
                    .unwrap_or(usize::MAX);
                if best <= k && best > 0 {
                    let p = index.keys[i].place;
                    match want.iter_mut().find(|(wp, _)| *wp == p) {
                        Some(w) => w.1 = w.1.min(best as u8),
                        None => want.push((p, best as u8)),
                    }
                }
            }
            let mut got: Vec<(u32, u8)> = top.items.iter().map(|h| (h.place, h.distance)).collect();
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "query {query}");
        }
    }

    #[test]
    fn sibling_and_subtree_end_agree_with_prefix_ranges() {
        // Enough keys to cross several blocks of the skip structure.
        let mut names = Vec::new();
        for a in b'a'..=b'p' {
            for b in b'a'..=b'z' {
                for c in b'a'..=b'z' {
                    if !(a as usize * 7 + b as usize * 3 + c as usize).is_multiple_of(5) {
                        names.push(String::from_utf8(vec![a, b, c, b'x']).unwrap_or_default());
                    }
                }
            }
        }
        let leaked: Vec<&'static str> = names.into_iter().map(|s| &*s.leak()).collect();
        let places: Vec<Place<'static>> = leaked.iter().map(|w| place(w, 1)).collect();
        let index = NameIndex::build(&places);
        let n = index.keys.len();
        assert!(n > 3 * BLOCK * BLOCK / 2, "{n}");
        for i in (0..n).step_by(7) {
            let key = index.key(i).to_vec();
            for d in 1..=key.len() {
                let (_, want) = index.prefix_range(&key[..d]);
                assert_eq!(
                    index.subtree_end(i, d).max(i + 1),
                    want.max(i + 1),
                    "i={i} d={d}"
                );
            }
            let d = usize::from(index.lcp[i]) + 1;
            if i > 0 && d <= key.len() {
                let (_, want) = index.prefix_range(&key[..d]);
                assert_eq!(index.sibling[i] as usize, want, "sibling i={i}");
            }
        }
    }

    #[test]
    fn key_stays_compact() {
        // 16 bytes x ~560k keys: growing it costs memory directly.
        assert_eq!(std::mem::size_of::<Key>(), 16);
    }

    #[test]
    fn top_k_keeps_best_hit_per_place() {
        let key = |place: u32, population: u32| Key {
            off: 0,
            place,
            weight: population,
            len_flags: 1,
            country: *b"XX",
        };
        let mut top = TopK::new(2);
        top.offer(Hit::new(MatchKind::Fuzzy, 1, &key(1, 10)));
        top.offer(Hit::new(MatchKind::Exact, 0, &key(1, 10)));
        top.offer(Hit::new(MatchKind::Prefix, 0, &key(2, 5)));
        top.offer(Hit::new(MatchKind::Prefix, 0, &key(3, 50)));
        top.offer(Hit::new(MatchKind::Exact, 0, &key(2, 5)));
        let got: Vec<(u32, MatchKind)> = top.items.iter().map(|h| (h.place, h.kind)).collect();
        assert_eq!(got, vec![(1, MatchKind::Exact), (2, MatchKind::Exact)]);
    }
}
