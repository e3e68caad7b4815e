//! Benchmark of the embedded gazetteer: start-up, memory, forward search and
//! reverse lookup latency. Run with `cargo run --release --bin
//! gazetteer-bench`.
//!
//! Queries and points come from a fixed-seed xorshift generator so runs are
//! comparable; every query is timed individually so that percentiles reflect
//! single-call latency, not throughput.

use std::hint::black_box;
use std::time::{Duration, Instant};

use etappe_gazetteer::{Gazetteer, Place};

/// xorshift64*: tiny, deterministic, good enough to pick samples.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum QueryKind {
    FullName,
    Prefix,
    Typo,
    WithCountry,
}

struct Query {
    text: String,
    kind: QueryKind,
    /// Index of the place the query was made from.
    target: usize,
}

/// One random edit (substitution, deletion, insertion or transposition) at
/// a position after the first character, on ASCII names only.
fn typo(name: &str, rng: &mut Rng, edits: usize) -> String {
    let mut b: Vec<u8> = name.bytes().collect();
    for _ in 0..edits {
        if b.len() < 3 {
            break;
        }
        let pos = 1 + rng.below(b.len() - 2);
        let letter = b'a' + rng.below(26) as u8;
        match rng.below(4) {
            0 => b[pos] = letter,
            1 => {
                b.remove(pos);
            }
            2 => b.insert(pos, letter),
            _ => b.swap(pos, pos + 1),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn make_queries(places: &[Place<'_>], n: usize) -> Vec<Query> {
    let mut rng = Rng(0x5EED_0001_D00D_F00D);
    let mut out = Vec::with_capacity(n);
    // Half the picks favour bigger places (what people type most), half are
    // uniform over all places (villages at the end of a stage).
    let mut big: Vec<usize> = (0..places.len())
        .filter(|&i| places[i].population >= 50_000)
        .collect();
    if big.is_empty() {
        big = (0..places.len()).collect();
    }
    while out.len() < n && !places.is_empty() {
        let target = if rng.below(2) == 0 {
            big[rng.below(big.len())]
        } else {
            rng.below(places.len())
        };
        let p = &places[target];
        let ascii = p.ascii_name;
        let kind = match out.len() % 4 {
            0 => QueryKind::FullName,
            1 => QueryKind::Prefix,
            2 => QueryKind::Typo,
            _ => QueryKind::WithCountry,
        };
        let text = match kind {
            // Alternate between the local and the ASCII spelling.
            QueryKind::FullName => {
                if rng.below(2) == 0 {
                    p.name.to_owned()
                } else {
                    ascii.to_owned()
                }
            }
            QueryKind::Prefix => {
                let chars: Vec<char> = p.name.chars().collect();
                let len = (1 + rng.below(6)).min(chars.len());
                chars[..len].iter().collect()
            }
            QueryKind::Typo => {
                if !ascii.is_ascii() || ascii.len() < 5 {
                    continue;
                }
                let edits = if ascii.len() >= 8 {
                    1 + rng.below(2)
                } else {
                    1
                };
                typo(ascii, &mut rng, edits)
            }
            QueryKind::WithCountry => format!("{}, {}", p.name, p.country_code),
        };
        out.push(Query { text, kind, target });
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn report(label: &str, mut samples: Vec<Duration>) {
    samples.sort_unstable();
    let mean = samples.iter().sum::<Duration>() / samples.len().max(1) as u32;
    println!(
        "{label:<34} n={:<7} mean={:>9.2?} p50={:>9.2?} p90={:>9.2?} p99={:>9.2?} max={:>9.2?}",
        samples.len(),
        mean,
        percentile(&samples, 0.50),
        percentile(&samples, 0.90),
        percentile(&samples, 0.99),
        samples.last().copied().unwrap_or_default(),
    );
}

/// (on-CPU ns, run-queue wait ns) of this thread, from schedstat. The wait
/// shows how much other load on the machine delayed the measurements.
fn sched() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut it = s.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((it.next()??, it.next()??))
}

fn contention(label: &str, before: Option<(u64, u64)>, wall: Duration) {
    if let (Some((c0, w0)), Some((c1, w1))) = (before, sched()) {
        println!(
            "  [{label}] wall {:.2?}, on-CPU {:.2?}, waiting for a CPU {:.2?}; load average {}",
            wall,
            Duration::from_nanos(c1.saturating_sub(c0)),
            Duration::from_nanos(w1.saturating_sub(w0)),
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}

fn max_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn bench_search(g: &Gazetteer<'_>, queries: &[Query], rounds: usize) {
    let kinds = [
        ("all", None),
        ("full name", Some(QueryKind::FullName)),
        ("prefix (1-6 chars)", Some(QueryKind::Prefix)),
        ("typo (1-2 edits)", Some(QueryKind::Typo)),
        ("name + \", CC\"", Some(QueryKind::WithCountry)),
    ];
    // Warm caches and the lazily built index before timing.
    for q in queries {
        black_box(g.search(&q.text, 10));
    }
    let mut per_query: Vec<(QueryKind, Duration)> = Vec::new();
    for _ in 0..rounds {
        for q in queries {
            let t = Instant::now();
            let hits = g.search(black_box(&q.text), 10);
            let el = t.elapsed();
            black_box(&hits);
            per_query.push((q.kind, el));
        }
    }
    for (label, kind) in kinds {
        let samples: Vec<Duration> = per_query
            .iter()
            .filter(|(k, _)| kind.is_none_or(|want| want == *k))
            .map(|&(_, d)| d)
            .collect();
        report(&format!("search limit=10 [{label}]"), samples);
    }
    // Quality: is the place the query was made from among the results?
    for (label, kind) in &kinds[1..] {
        let Some(kind) = kind else { continue };
        let (mut top1, mut top10, mut n) = (0usize, 0usize, 0usize);
        for q in queries.iter().filter(|q| q.kind == *kind) {
            n += 1;
            let hits = g.search(&q.text, 10);
            let target = &g.places()[q.target];
            let pos = hits.iter().position(|m| std::ptr::eq(m.place, target));
            top1 += usize::from(pos == Some(0));
            top10 += usize::from(pos.is_some());
        }
        println!(
            "  recall [{label:<20}] top-1 {:5.1}%  top-10 {:5.1}%  (n={n})",
            100.0 * top1 as f64 / n.max(1) as f64,
            100.0 * top10 as f64 / n.max(1) as f64
        );
    }
}

fn bench_reverse(g: &Gazetteer<'_>, label: &str, points: &[(f64, f64)]) {
    for &(la, lo) in points.iter().take(1000) {
        black_box(g.reverse(la, lo));
    }
    let mut samples = Vec::with_capacity(points.len());
    let mut total_dist = 0.0;
    for &(la, lo) in points {
        let t = Instant::now();
        let r = g.reverse(black_box(la), black_box(lo));
        let el = t.elapsed();
        total_dist += r.map_or(0.0, |n| n.distance_m);
        samples.push(el);
    }
    report(&format!("reverse [{label}]"), samples);
    println!(
        "  mean distance to nearest place: {:.1} km",
        total_dist / points.len().max(1) as f64 / 1000.0
    );
}

fn main() {
    let t0 = Instant::now();
    let g = match Gazetteer::try_embedded() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("cannot load embedded data: {e}");
            std::process::exit(1);
        }
    };
    let t_parse = t0.elapsed();
    let t1 = Instant::now();
    black_box(g.search("warm", 1));
    let t_names = t1.elapsed();
    let t2 = Instant::now();
    black_box(g.reverse(0.0, 0.0));
    let t_tree = t2.elapsed();
    println!("places: {}", g.len());
    println!(
        "start-up: decompress+parse {t_parse:.2?}, name index {t_names:.2?}, k-d tree {t_tree:.2?}, total {:.2?}",
        t0.elapsed()
    );
    let m = g.memory_usage();
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    println!(
        "memory (estimated from sizes): text {:.1} MiB, places {:.1} MiB ({} B/place), name index {:.1} MiB ({} keys), k-d tree {:.1} MiB, total {:.1} MiB",
        mib(m.text_bytes),
        mib(m.places_bytes),
        std::mem::size_of::<Place<'_>>(),
        mib(m.name_index_bytes),
        m.name_keys,
        mib(m.spatial_index_bytes),
        mib(m.text_bytes + m.places_bytes + m.name_index_bytes + m.spatial_index_bytes)
    );
    if let Some(kib) = max_rss_kib() {
        println!("max RSS after load (VmHWM): {:.1} MiB", kib as f64 / 1024.0);
    }

    let queries = make_queries(g.places(), 2000);
    println!("\nforward search: {} queries x 5 rounds", queries.len());
    for q in queries.iter().step_by(250) {
        println!("  sample query {:?} ({:?})", q.text, q.kind);
    }
    let (s0, t0) = (sched(), Instant::now());
    bench_search(g, &queries, 5);
    contention("search", s0, t0.elapsed());

    let mut rng = Rng(0xC0FF_EE00_1234_5678);
    let europe: Vec<(f64, f64)> = (0..100_000)
        .map(|_| (35.0 + rng.unit() * 36.0, -11.0 + rng.unit() * 51.0))
        .collect();
    // Uniform on the sphere (not in lat/lon), so oceans and poles get their
    // real share of the samples.
    let world: Vec<(f64, f64)> = (0..100_000)
        .map(|_| {
            let lat = (2.0 * rng.unit() - 1.0).asin().to_degrees();
            (lat, -180.0 + rng.unit() * 360.0)
        })
        .collect();
    println!("\nreverse lookup: 100000 points each");
    let (s0, t0) = (sched(), Instant::now());
    bench_reverse(g, "Europe 35-71N 11W-40E", &europe);
    bench_reverse(g, "world, uniform on sphere", &world);
    contention("reverse", s0, t0.elapsed());

    if let Some(kib) = max_rss_kib() {
        println!("\nmax RSS at exit (VmHWM): {:.1} MiB", kib as f64 / 1024.0);
    }
}
