//! Reverse geocoding: nearest place to a coordinate.
//!
//! Places are mapped to unit vectors on the sphere and stored in an implicit
//! 3-d k-d tree. The straight-line (chord) distance between two unit vectors
//! grows monotonically with their great-circle distance, so the Euclidean
//! nearest neighbour in 3-d *is* the great-circle nearest neighbour. This is
//! why there is no special case for the antimeridian or the poles: in 3-d
//! they are ordinary places. The reported distance is then computed with the
//! haversine formula from the original coordinates.

/// Subtrees this small are scanned linearly: cheaper than descending further.
const LEAF_SIZE: usize = 8;

/// Unit vector of a (lat, lon) point in degrees.
pub(crate) fn unit_vector(lat: f64, lon: f64) -> [f64; 3] {
    let (p, l) = (lat.to_radians(), lon.to_radians());
    [p.cos() * l.cos(), p.cos() * l.sin(), p.sin()]
}

#[derive(Clone, Copy, Debug)]
struct Node {
    p: [f64; 3],
    id: u32,
}

/// Implicit k-d tree: the node of a range `lo..hi` is its middle element,
/// with the split axis stored alongside. No child pointers are needed.
#[derive(Debug, Default)]
pub(crate) struct KdTree {
    nodes: Vec<Node>,
    axes: Vec<u8>,
}

fn sq_dist(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    let d0 = a[0] - b[0];
    let d1 = a[1] - b[1];
    let d2 = a[2] - b[2];
    d0 * d0 + d1 * d1 + d2 * d2
}

impl KdTree {
    /// Builds the tree from (unit vector, place index) pairs.
    pub(crate) fn build(points: impl Iterator<Item = ([f64; 3], u32)>) -> KdTree {
        let mut nodes: Vec<Node> = points.map(|(p, id)| Node { p, id }).collect();
        let mut axes = vec![0u8; nodes.len()];
        // Explicit stack instead of recursion: depth is only ~log2(n), but a
        // loop keeps the code obviously free of stack-overflow concerns.
        let mut stack = vec![(0usize, nodes.len())];
        while let Some((lo, hi)) = stack.pop() {
            if hi - lo <= LEAF_SIZE {
                continue;
            }
            let axis = widest_axis(&nodes[lo..hi]);
            let mid = lo + (hi - lo) / 2;
            nodes[lo..hi].select_nth_unstable_by(mid - lo, |a, b| a.p[axis].total_cmp(&b.p[axis]));
            axes[mid] = axis as u8;
            stack.push((lo, mid));
            stack.push((mid + 1, hi));
        }
        KdTree { nodes, axes }
    }

    /// Heap bytes held by the tree.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.axes.capacity()
    }

    /// Index of the place nearest to unit vector `q`, if the tree is non-empty.
    pub(crate) fn nearest(&self, q: &[f64; 3]) -> Option<u32> {
        let mut best = (f64::INFINITY, u32::MAX);
        self.search(q, 0, self.nodes.len(), &mut best);
        (best.1 != u32::MAX).then_some(best.1)
    }

    fn search(&self, q: &[f64; 3], lo: usize, hi: usize, best: &mut (f64, u32)) {
        if hi - lo <= LEAF_SIZE {
            for n in &self.nodes[lo..hi] {
                consider(q, n, best);
            }
            return;
        }
        let mid = lo + (hi - lo) / 2;
        let node = &self.nodes[mid];
        let axis = usize::from(self.axes[mid]);
        consider(q, node, best);
        let diff = q[axis] - node.p[axis];
        let (near, far) = if diff < 0.0 {
            ((lo, mid), (mid + 1, hi))
        } else {
            ((mid + 1, hi), (lo, mid))
        };
        self.search(q, near.0, near.1, best);
        // The far side can only help if the splitting plane is closer than
        // the best candidate so far.
        if diff * diff < best.0 {
            self.search(q, far.0, far.1, best);
        }
    }
}

fn consider(q: &[f64; 3], n: &Node, best: &mut (f64, u32)) {
    let d = sq_dist(q, &n.p);
    // Tie-break on the id so results do not depend on tree layout.
    if d < best.0 || (d == best.0 && n.id < best.1) {
        *best = (d, n.id);
    }
}

fn widest_axis(nodes: &[Node]) -> usize {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for n in nodes {
        for k in 0..3 {
            lo[k] = lo[k].min(n.p[k]);
            hi[k] = hi[k].max(n.p[k]);
        }
    }
    let ext = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    if ext[0] >= ext[1] && ext[0] >= ext[2] {
        0
    } else if ext[1] >= ext[2] {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etappe_geo::haversine_m;

    #[test]
    fn kd_tree_matches_brute_force() {
        // Deterministic pseudo-random points (xorshift), no external crates.
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let pts: Vec<(f64, f64)> = (0..2000)
            .map(|_| (next() * 180.0 - 90.0, next() * 360.0 - 180.0))
            .collect();
        let tree = KdTree::build(
            pts.iter()
                .enumerate()
                .map(|(i, &(la, lo))| (unit_vector(la, lo), i as u32)),
        );
        for _ in 0..500 {
            let (la, lo) = (next() * 180.0 - 90.0, next() * 360.0 - 180.0);
            let got = tree.nearest(&unit_vector(la, lo));
            let want = pts
                .iter()
                .enumerate()
                .map(|(i, &(pla, plo))| (haversine_m(la, lo, pla, plo), i))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, i)| i as u32);
            let (Some(g), Some(w)) = (got, want) else {
                panic!("empty result");
            };
            let dg = haversine_m(la, lo, pts[g as usize].0, pts[g as usize].1);
            let dw = haversine_m(la, lo, pts[w as usize].0, pts[w as usize].1);
            assert!((dg - dw).abs() < 1e-6, "{dg} vs {dw}");
        }
    }

    #[test]
    fn empty_tree_has_no_nearest() {
        let tree = KdTree::build(std::iter::empty());
        assert_eq!(tree.nearest(&unit_vector(0.0, 0.0)), None);
    }
}
