//! The fuzzy walk's arithmetic: one band of the optimal-string-alignment matrix per key
//! byte, how many edits a prefix may hold, and the sorted keys' sibling and prefix tables.

/// Key prefixes up to this depth may hold at most one edit, even when two
/// are allowed overall. Two typos within the first three letters are rare,
/// and allowing them keeps most three-letter prefixes of the alphabet alive,
/// which is what makes a two-edit trie walk slow.
const STRICT_PREFIX: usize = 3;

/// Edits a key prefix of length `d` may hold and still be explored.
pub(super) fn allowed_at(d: usize, max_dist: u8) -> u8 {
    if d <= STRICT_PREFIX {
        max_dist.min(1)
    } else {
        max_dist
    }
}

/// Computes row `d` (key byte `c` at depth `d`, `back` the byte before it)
/// of the optimal-string-alignment matrix from row `d - 1` (`prev`) and row
/// `d - 2` (`before`, None at depth 1), into `cur`; returns the row minimum.
///
/// Only the band |d - j| <= k can hold values <= k; values are clamped to
/// k + 1 (`far`, "too far"), which keeps every cell in the band exact up to
/// k and lets the band skip the rest. All slices are `q.len() + 1` long.
#[allow(clippy::too_many_arguments)] // hot inner helper; a struct would only rename them
pub(super) fn band_row(
    prev: &[u8],
    before: Option<&[u8]>,
    cur: &mut [u8],
    q: &[u8],
    c: u8,
    back: u8,
    d: usize,
    k: usize,
    far: u8,
) -> u8 {
    let m = q.len();
    let jlo = d.saturating_sub(k);
    let jhi = (d + k).min(m);
    let mut rmin = far;
    let mut left = far;
    let mut j = jlo;
    if j == 0 {
        let v = (d as u8).min(far);
        if let Some(cell) = cur.get_mut(0) {
            *cell = v;
        }
        left = v;
        rmin = v;
        j = 1;
    }
    while j <= jhi {
        let (Some(&qj), Some(&up), Some(&diag)) = (q.get(j - 1), prev.get(j), prev.get(j - 1))
        else {
            break;
        };
        let mut v = (up + 1).min(left + 1).min(diag + u8::from(c != qj));
        if let Some(before) = before
            && j > 1
            && q.get(j - 2) == Some(&c)
            && back == qj
            && let Some(&t) = before.get(j - 2)
        {
            v = v.min(t + 1);
        }
        let v = v.min(far);
        if let Some(cell) = cur.get_mut(j) {
            *cell = v;
        }
        left = v;
        rmin = rmin.min(v);
        j += 1;
    }
    // Sentinel read by the next row's last band cell.
    if jhi < m
        && let Some(cell) = cur.get_mut(jhi + 1)
    {
        *cell = far;
    }
    rmin
}

/// For each `i`, the first `j > i` with `v[j] <= v[i]` (or `v.len()`),
/// with the usual monotonic stack in O(n).
pub(super) fn next_not_greater(v: &[u8]) -> Vec<u32> {
    let n = v.len();
    let mut out = vec![n as u32; n];
    let mut stack: Vec<usize> = Vec::new();
    for i in (0..n).rev() {
        while stack.last().is_some_and(|&t| v[t] > v[i]) {
            stack.pop();
        }
        if let Some(&t) = stack.last() {
            out[i] = t as u32;
        }
        stack.push(i);
    }
    out
}

pub(super) fn prefix_u64(b: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    let n = b.len().min(8);
    buf[..n].copy_from_slice(&b[..n]);
    u64::from_be_bytes(buf)
}
